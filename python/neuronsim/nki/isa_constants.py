"""nki.isa.constants: the enums of nki.isa, with the members and values of the NKI API reference (nki.isa pages;
the current generation's unless said), each member also carrying the BIR name it lowers to (.bir). Kernels import
them from nki.isa or from this submodule (`from nki.isa.constants import oob_mode, dge_mode`, as the NKI Library
does). The legacy reference (neuronxcc.nki.isa) declares them IntEnum, the current one Enum: they are IntEnum here
where the values are integers (the legacy behaviour, a superset: ordered, comparable with ints), so that
`nisa.get_nc_version() >= nc_version.gen3` holds as kernels write it."""
import enum

__neuronsim__ = True


class engine(enum.IntEnum):
    """The engines (nki.isa.engine); .bir is the BIR engine name (isa/tables/enums.def Engine), None for unknown (the
    simulator's rule for the instruction type picks it)."""
    unknown = 0
    tensor = 1
    scalar = 2
    gpsimd = 3
    dma = 4
    vector = 5
    sync = 6

    @property
    def bir(self):
        return _ENGINE_BIR[self.name]


_ENGINE_BIR = {"unknown": None, "tensor": "PE", "scalar": "Activation", "gpsimd": "Pool", "dma": "DMA",
               "vector": "DVE", "sync": "SP"}


class reduce_cmd(enum.IntEnum):
    """The accumulator-register command of an instruction (reference neuron-arch.md 3.2); .bir is BIR's
    EngineAccumulationType (engines/ops/accumulator.cpp)."""
    idle = 0
    reset = 1
    reduce = 2
    reset_reduce = 3
    load_reduce = 4

    @property
    def bir(self):
        return _REDUCE_BIR[self.name]


_REDUCE_BIR = {"idle": "Idle", "reset": "Zero", "reduce": "Accumulate", "reset_reduce": "ZeroAccumulate",
               "load_reduce": "LoadAccumulate"}


class dge_mode(enum.IntEnum):
    """How a DMA's descriptors are generated (current reference: unknown 0, swdge 1, hwdge 2, none 3)."""
    unknown = 0
    swdge = 1
    hwdge = 2
    none = 3


class legacy_dge_mode(enum.IntEnum):
    """dge_mode as the legacy reference numbers it (neuronxcc.nki.isa.dge_mode: none 0, swdge 1, hwdge 2,
    unknown 3); served as neuronxcc.nki.isa.dge_mode (isa_legacy.py)."""
    none = 0
    swdge = 1
    hwdge = 2
    unknown = 3


legacy_dge_mode.__name__ = legacy_dge_mode.__qualname__ = "dge_mode"


class oob_mode(enum.IntEnum):
    """What an out-of-bounds DMA access does: error 0, skip 1."""
    error = 0
    skip = 1


class matmul_perf_mode(str, enum.Enum):
    """nc_matmul's performance mode: 'none', 'double_row' (string values, as the reference gives them)."""
    none = "none"
    double_row = "double_row"


class nc_version(enum.IntEnum):
    """The NeuronCore generation: gen2 = trn1 / inf2, gen3 = trn2, gen4 = trn3 (nisa.get_nc_version() gives the one
    of the architecture the kernel is traced for)."""
    gen2 = 2
    gen3 = 3
    gen4 = 4


class dma_engine(enum.IntEnum):
    """The DMA engine of nisa.sendrecv: dma 1 (the shared DMA), gpsimd_dma 2 (GpSimd's own)."""
    dma = 1
    gpsimd_dma = 2


ENUMS = {"engine": engine, "reduce_cmd": reduce_cmd, "dge_mode": dge_mode, "oob_mode": oob_mode,
         "matmul_perf_mode": matmul_perf_mode, "nc_version": nc_version, "dma_engine": dma_engine}


def bir_of(x):
    """The BIR value of an enum member that has one (engine, reduce_cmd), else x."""
    return getattr(x, "bir", x) if isinstance(x, enum.Enum) else x

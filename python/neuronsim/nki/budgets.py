"""The on-chip budgets a kernel is allocated in, by the arch it is traced for (allocate.py, docs/nki-lowering.md 2
"Budgets"): the usable SBUF bytes per partition of the compiler's passes (reference neuron-arch.md 1.4 [NKIPY-HW]:
trn1 180224 -- the Direct Allocation guide's 192 KiB less the 16 KiB the compiler keeps --, trn2 212984, trn3
245752)."""
from .. import _core

SBUF_BYTES = _core.lowering.USABLE_SBUF_BYTES  # trn1's
USABLE_SBUF = {"trn1": SBUF_BYTES, "trn2": 212984, "trn3": 245752}


def usable_sbuf(trace):
    """(bytes, arch): the SBUF budget of a trace's arch."""
    arch = getattr(trace, "arch", None) or "trn1"
    return USABLE_SBUF.get(arch, SBUF_BYTES), arch


def later_arch(cap, need):
    """The end of an SBUF overflow's message when `need` bytes per partition would fit a later arch's usable SBUF:
    a kernel written for trn2 (the NKI Library's are; its tests compile for it) traced for the default trn1 is
    refused by trn1's budget alone, and tracing for the arch it is written for is the change. Else ""."""
    for other, size in USABLE_SBUF.items():
        if size > cap and need <= size:
            return (f". {other}'s usable SBUF ({size} bytes) is large enough: trace for {other} if the kernel is "
                    f"written for it (arch='{other}', @nki.jit(platform_target='{other}') or "
                    f"NEURON_PLATFORM_TARGET_OVERRIDE={other})")
    return ""

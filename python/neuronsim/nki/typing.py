"""nki.typing (nt): the annotations NKI kernels write on their parameters (nt.tensor[shape, dtype], nt.mutable_tensor).
On a parameter they carry no meaning for the tracer. nt.tensor[shape, dtype] is also a placeholder argument: given
to a kernel in place of an array (to_bir, a timing-only benchmark), it is a tensor of that shape and dtype, as NKI's
benchmark takes it (the legacy API: `nt.tensor[[128, 512], nl.bfloat16]`)."""
from . import dtypes, registry

__neuronsim__ = True


class Placeholder:
    """A tensor argument given by shape and dtype only: nt.tensor[[128, 512], nl.float32]."""

    def __init__(self, shape, dtype):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = dtype

    def __repr__(self):
        return f"nt.tensor[{list(self.shape)}, {self.dtype}]"


class _Annotation:
    """nt.tensor / nt.mutable_tensor: subscripted with (shape, dtype) a Placeholder, with anything else itself."""

    def __init__(self, name):
        self.name = name

    def __getitem__(self, key):
        if isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], (list, tuple)) and \
                dtypes.is_dtype(key[1]) and all(isinstance(s, int) for s in key[0]):
            return Placeholder(key[0], key[1])
        if isinstance(key, (list, tuple)) and key and all(isinstance(s, int) for s in key):
            return Placeholder(key, dtypes.float32)
        return self

    def __call__(self, *a, **k):
        return self

    def __repr__(self):
        return f"nt.{self.name}"


tensor = registry.value("nki.typing", "tensor", _Annotation("tensor"))
mutable_tensor = registry.value("nki.typing", "mutable_tensor", _Annotation("mutable_tensor"))
scalar = _Annotation("scalar")

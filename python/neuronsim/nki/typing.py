"""nki.typing (nt): the annotations NKI kernels write on their parameters (nt.tensor[shape, dtype], nt.mutable_tensor);
they carry no meaning for the tracer."""
__neuronsim__ = True


class _Annotation:
    def __getitem__(self, key):
        return self

    def __call__(self, *a, **k):
        return self


tensor = _Annotation()
mutable_tensor = _Annotation()
scalar = _Annotation()

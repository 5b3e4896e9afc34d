"""Test helpers: fake device arrays, generic kernels, source-line lookup."""

import numpy as np
import graphtrace as gt  # noqa: F401  (imported first: numba then builds simulator kernels)
from graphtrace.ops.kernel import Adapter


class FakeDeviceArray:
    """A device array as far as tracing can tell: only ``__cuda_array_interface__``.

    Each new allocation gets a fresh page-aligned address range, so fakes never
    alias unless built as views of one another with ``view``.
    """

    _next = 1 << 40

    def __init__(self, shape, dtype="float32", ptr=None, strides=None):
        dt = np.dtype(dtype)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if ptr is None:
            nbytes = int(np.prod(shape)) * dt.itemsize
            ptr = FakeDeviceArray._next
            FakeDeviceArray._next += (nbytes // 4096 + 2) * 4096
        self.ptr, self.dtype, self.shape = ptr, dt, shape
        self.__cuda_array_interface__ = {
            "shape": shape, "typestr": dt.str, "data": (ptr, False),
            "strides": strides, "version": 3}

    def __repr__(self):
        cai = self.__cuda_array_interface__
        return (f"FakeDeviceArray({cai['shape']}, {cai['typestr']!r}, ptr={self.ptr:#x}, "
                f"strides={cai['strides']})")

    def __getitem__(self, key):
        """1-D basic slicing, as a device array library would do it."""
        (n,) = self.shape
        cai = self.__cuda_array_interface__
        stride = (cai["strides"] or (self.dtype.itemsize,))[0]
        start, stop, step = key.indices(n)
        count = len(range(start, stop, step))
        return self.view(start * stride, (count,), (stride * step,))

    def view(self, offset_bytes, shape, strides=None, dtype=None):
        """A view at ``ptr + offset_bytes`` with its own shape and byte strides."""
        return FakeDeviceArray(shape, dtype or self.dtype, self.ptr + offset_bytes, strides)


def any_kernel(name="k"):
    """A kernel of any arity whose arguments are read and written unless wrapped."""
    return Adapter(None, name)


def line_of(path, marker):
    """Line number of the line in ``path`` that carries ``# <marker>``."""
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if line.rstrip().endswith(f"# {marker}"):
                return i
    raise AssertionError(f"no line marked {marker!r} in {path}")

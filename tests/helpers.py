"""Test helpers: fake device arrays, generic kernels, source-line lookup, a structured op."""
import contextlib
import sys

import numpy as np
import graphtrace as gt  # noqa: F401  (imported first: numba then builds simulator kernels)
from graphtrace.ops.base import Op
from graphtrace.ops.kernel import Adapter
from graphtrace.stream import Stream


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


class Handle:
    """A handle of the program's own answering the interface of the buffer it points
    at now (another at the next call, pointed elsewhere)."""

    def __init__(self, target):
        self.target = target

    @property
    def __cuda_array_interface__(self):
        return self.target.__cuda_array_interface__


class RepeatOp(Op):
    """A structured op built only from the recording API and the two contexts,
    as a loop or child-graph op would be: ``repeat(s, times, body)`` records
    ``body(s2)`` into a region and runs it ``times`` times (on the GPU: once,
    as a child graph). Its accesses are those of its region."""

    kind = "repeat"

    def emit(self, gpu, node, parent):
        from cuda.core.graph import GraphDefinition
        assert node.attrs["times"] == 1, "the GPU form runs the body once"
        body = GraphDefinition()
        gpu.emit_region(node.regions[0], body)
        return parent.embed(body)

    def simulate(self, sim, node):
        for _ in range(node.attrs["times"]):
            sim.run(node.regions[0])


REPEAT = RepeatOp()


def repeat(s, times, body):
    t = s.tracer()
    scope = t.open_region("body", s.scope)
    body(Stream(t, s.index, scope))
    region = t.close_region(scope)
    accesses = [(b, m) for n in region.walk() for b, m in n.accesses]
    caller = sys._getframe(1)
    return t.record(REPEAT, body, (), accesses, stream=s.index, scope=s.scope,
                    attrs={"times": times}, regions=(region,),
                    opaque=any(n.opaque for n in region.walk()),
                    source=(caller.f_code.co_filename, caller.f_lineno))


@contextlib.contextmanager
def launch_path(name):
    """Record launches by the "compiled" path (``_speedups.c``) or by "pure
    Python", whichever this process uses (skipped where it was not built)."""
    from graphtrace import stream
    from graphtrace.ops import kernel
    if name == "compiled" and kernel.speedups_module is None:
        import pytest
        pytest.skip("graphtrace._speedups is not built (no C compiler at install; "
                    "tools/build_speedups.py builds it in a checkout) or "
                    "GRAPHTRACE_PURE_PYTHON is set")
    was = stream.use_speedups(name == "compiled")
    try:
        yield name
    finally:
        stream.use_speedups(was)


@contextlib.contextmanager
def compiled_buffers(on):
    """New arrays taken in, and containers walked, by ``_buffers.c`` (on) or by
    the Python path."""
    from graphtrace import deps
    was = deps.use_compiled_buffers(on)
    try:
        yield
    finally:
        deps.use_compiled_buffers(was)

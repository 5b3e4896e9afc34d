"""cupy arrays are known by their attributes while tracing (``buffers.interface_of``).

A view of a ``cupy.ndarray`` made again at a later launch is looked up by its
address, shape, strides and dtype, read as attributes (half the cost of making
its ``__cuda_array_interface__``), and its interface is read only for a view
not seen before. These tests stand a fake ``cupy`` module in for cupy, so they
need no GPU: its ``ndarray`` counts how often its interface is made.
"""
import sys
import types

import numpy as np
import pytest

import graphtrace as gt
from graphtrace import buffers
from graphtrace.ops.kernel import Adapter
from helpers import FakeDeviceArray

# launches recorded by the compiled path (_speedups.c) and by pure Python
pytestmark = pytest.mark.usefixtures("both_launch_paths")

RW = Adapter(None, "rw", ["x", "y"], ["r", "w"])


class _Memory:
    def __init__(self, ptr):
        self.ptr = ptr


class ndarray:   # noqa: N801  (cupy's name: the type graphtrace looks for)
    """A cupy array as tracing sees it: ``data.ptr``, ``shape``, ``strides`` (always a
    tuple) and ``dtype``, and an interface made anew at every read (as cupy does)."""

    interfaces = 0   # interfaces made, all arrays together

    def __init__(self, shape, dtype="float32", ptr=None, strides=None):
        like = FakeDeviceArray(shape, dtype, ptr, strides)   # a fresh address if no ptr
        self.dtype, self.shape = like.dtype, like.shape
        self.data = _Memory(like.ptr)
        contiguous = tuple(np.empty(0, self.dtype).itemsize * int(np.prod(self.shape[i + 1:]))
                           for i in range(len(self.shape)))
        self.strides = tuple(strides) if strides is not None else contiguous
        self._contiguous = self.strides == contiguous

    @property
    def __cuda_array_interface__(self):
        ndarray.interfaces += 1
        return {"shape": self.shape, "typestr": self.dtype.str,
                "data": (self.data.ptr, False),
                "strides": None if self._contiguous else self.strides, "version": 3}

    def view(self, offset_bytes, shape, strides=None, dtype=None):
        return ndarray(shape, dtype or self.dtype, self.data.ptr + offset_bytes, strides)


@pytest.fixture(autouse=True)
def fake_cupy(monkeypatch):
    module = types.ModuleType("cupy")
    module.ndarray = ndarray
    monkeypatch.setitem(sys.modules, "cupy", module)
    monkeypatch.delitem(buffers._kinds, ndarray, raising=False)   # classified afresh
    ndarray.interfaces = 0
    yield


def _trace(program, x):
    seen = []

    @gt.graph
    def f(s, x):
        program(s, x, lambda v: seen.append((v, s.tracer().buffer(v))))
    return f.trace(x), seen


def test_a_view_made_again_is_found_without_its_interface():
    def program(s, x, note):
        for i in range(40):
            v = x.view(i % 4 * 64, (16,))
            s.launch(RW, 1, 32, v, x)
    x = ndarray(256)
    g, _ = _trace(program, x)
    assert len(g.nodes) == 40
    # x once, and each of the 4 places once: views made again read no interface
    assert ndarray.interfaces == 5


def test_views_differing_in_any_of_address_shape_strides_or_dtype_are_apart():
    def program(s, x, note):
        views = [x.view(0, (16,)), x.view(0, (16,), dtype="int32"),
                 x.view(0, (8,)), x.view(0, (8,), strides=(8,)), x.view(4, (16,)),
                 x.view(0, (4, 4)), x.view(0, (4, 4), strides=(4, 16))]
        for _ in range(2):
            for v in views:
                s.launch(RW, 1, 32, x, v)
                note(v)
    x = ndarray(256)
    _, seen = _trace(program, x)
    for v, buf in seen:   # each launch's Buffer is its own view's, made again or not
        assert (buf.ptr, buf.shape, buf.strides, buf.dtype) == \
            (v.data.ptr, v.shape, v.strides, v.dtype), v.__dict__
    assert len({id(b) for _, b in seen}) == 7


def test_cupy_views_give_the_graph_of_arrays_known_by_their_interface():
    """The same program on cupy arrays and on arrays with only the interface."""
    def program(s, x, note):
        for i in range(24):
            a = x.view(i % 3 * 128, (32,))
            b = x.view(i % 5 * 64 + 32, (16,), strides=(8,))
            s.launch(RW, 1, 32, a, b)
            s.launch(RW, 1, 32, b, x.view(i % 2 * 512, (64,)))

    class Plain(FakeDeviceArray):
        def view(self, offset_bytes, shape, strides=None, dtype=None):
            return Plain(shape, dtype or self.dtype, self.ptr + offset_bytes, strides)

    cupy_graph, _ = _trace(program, ndarray(1024))
    plain_graph, _ = _trace(program, Plain(1024))
    assert len(cupy_graph.nodes) == 48 and sum(len(n.deps) for n in cupy_graph.nodes) > 24
    assert str(cupy_graph) == str(plain_graph)   # the listing: views, accesses and deps

"""cupy's and numba's arrays are known by their attributes while tracing
(``arrays.interface_of``).

A view of a ``cupy.ndarray`` or of numba's ``DeviceNDArray`` made again at a
later launch is looked up by its address, shape, strides and dtype, read as
attributes (half the cost of making cupy's ``__cuda_array_interface__``, a fifth
of numba's), and its interface is read only for a view not seen before. These
tests stand fake modules in for cupy's and numba's, so they need no GPU: their
arrays count how often their interface is made.
"""
import ctypes
import sys
import types

import numpy as np
import pytest

import graphtrace as gt
from graphtrace import arrays, regions, roots
from graphtrace.ops.kernel import Adapter
from helpers import FakeDeviceArray

# launches recorded by the compiled path (_speedups.c) and by pure Python
pytestmark = pytest.mark.usefixtures("both_launch_paths")

RW = Adapter(None, "rw", ["x", "y"], ["r", "w"])


class _Memory:
    def __init__(self, ptr):
        self.ptr = ptr


class _Array:
    """A cupy or numba array as tracing sees it: its address (see the subclasses),
    ``shape``, ``strides`` (always a tuple) and ``dtype``, and an interface made
    anew at every read (as both do)."""

    interfaces = 0   # interfaces made, all arrays together

    def __init__(self, shape, dtype="float32", ptr=None, strides=None):
        like = FakeDeviceArray(shape, dtype, ptr, strides)   # a fresh address if no ptr
        self.dtype, self.shape, self.ptr = like.dtype, like.shape, like.ptr
        contiguous = tuple(np.empty(0, self.dtype).itemsize * int(np.prod(self.shape[i + 1:]))
                           for i in range(len(self.shape)))
        self.strides = tuple(strides) if strides is not None else contiguous
        self._contiguous = self.strides == contiguous

    @property
    def __cuda_array_interface__(self):
        _Array.interfaces += 1
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False),
                "strides": None if self._contiguous else self.strides, "version": 3}

    def view(self, offset_bytes, shape, strides=None, dtype=None):
        return type(self)(shape, dtype or self.dtype, self.ptr + offset_bytes, strides)


class ndarray(_Array):   # noqa: N801  (cupy's name: the type graphtrace looks for)
    @property
    def data(self):   # cupy's MemoryPointer
        return _Memory(self.ptr)


class DeviceNDArray(_Array):   # numba's
    __module__ = "numba.cuda.cudadrv.devicearray"   # (the simulator's is elsewhere)

    @property
    def device_ctypes_pointer(self):
        return ctypes.c_void_p(self.ptr)


@pytest.fixture(params=["cupy", "numba"])
def array(request, monkeypatch):
    """The array type of a fake cupy, or numba's (told by its class alone)."""
    if request.param == "cupy":
        module = types.ModuleType("cupy")
        module.ndarray = ndarray
        monkeypatch.setitem(sys.modules, "cupy", module)
    for t in (ndarray, DeviceNDArray):   # classified afresh
        monkeypatch.delitem(arrays._kinds, t, raising=False)
    _Array.interfaces = 0
    cls = ndarray if request.param == "cupy" else DeviceNDArray
    yield cls
    assert arrays._kinds.get(cls) == request.param


def test_numba_arrays_are_told_by_their_class_whatever_sys_modules_holds(monkeypatch):
    """A subclass with an interface of its own is read by that interface; numba's
    class is numba's even where its module's name means the simulator's module."""
    class Own(DeviceNDArray):
        @property
        def __cuda_array_interface__(self):
            return super().__cuda_array_interface__
    monkeypatch.setitem(sys.modules, DeviceNDArray.__module__, types.ModuleType("sim"))
    for t in (Own, DeviceNDArray):
        monkeypatch.delitem(arrays._kinds, t, raising=False)
    assert arrays._kind(Own(4)) == "cai" and arrays._kind(DeviceNDArray(4)) == "numba"


def _trace(program, x):
    seen = []

    @gt.graph
    def f(s, x):
        program(s, x, lambda v: seen.append((v, s.tracer().buffer(v))))
    return f.trace(x), seen


def test_a_view_made_again_is_found_without_its_interface(array):
    def program(s, x, note):
        for i in range(40):
            v = x.view(i % 4 * 64, (16,))
            s.launch(RW, 1, 32, v, x)
    x = array(256)
    g, _ = _trace(program, x)
    assert len(g.nodes) == 40
    # x once, and for cupy each of the 4 places once: views made again read no
    # interface; numba's new places none either (made from their keys: key_interface)
    assert _Array.interfaces == (5 if array is ndarray else 1)


@pytest.mark.skipif(regions.TAKE[0] is None, reason="the compiled buffers are not built")
def test_a_view_of_a_new_geometry_is_made_by_the_compiled_path(array, monkeypatch):
    """Its interface is read once and handed to ``_buffers.c``'s ``view``, which
    makes its Buffer; only where that is not built does Python make it."""
    # (arrays tagged with simulated devices, which other tests may leave alive, turn
    # the compiled path off: none here)
    monkeypatch.setattr(arrays, "_sim_devices", {})
    made = []

    def program(s, x, note):   # (the argument x taken in, the Python path is watched)
        monkeypatch.setattr(roots, "as_buffer", lambda obj: made.append(obj))
        monkeypatch.setattr(roots, "device_buffer", lambda obj, cai: made.append(obj))
        for i in range(8):
            s.launch(RW, 1, 32, x.view(i * 64, (16,)), x)
            note(x.view(i * 64, (16,)))
    x = array(1024)
    g, seen = _trace(program, x)
    assert len(g.nodes) == 8 and made == []
    assert [(b.ptr, b.shape) for _, b in seen] == [(x.ptr + i * 64, (16,)) for i in range(8)]


def test_views_differing_in_any_of_address_shape_strides_or_dtype_are_apart(array):
    def program(s, x, note):
        views = [x.view(0, (16,)), x.view(0, (16,), dtype="int32"),
                 x.view(0, (8,)), x.view(0, (8,), strides=(8,)), x.view(4, (16,)),
                 x.view(0, (4, 4)), x.view(0, (4, 4), strides=(4, 16))]
        for _ in range(2):
            for v in views:
                s.launch(RW, 1, 32, x, v)
                note(v)
    x = array(256)
    _, seen = _trace(program, x)
    for v, buf in seen:   # each launch's Buffer is its own view's, made again or not
        assert (buf.ptr, buf.shape, buf.strides, buf.dtype) == \
            (v.ptr, v.shape, v.strides, v.dtype), vars(v)
    assert len({id(b) for _, b in seen}) == 7


def test_views_give_the_graph_of_arrays_known_by_their_interface(array):
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

    graph, _ = _trace(program, array(1024))
    plain_graph, _ = _trace(program, Plain(1024))
    assert len(graph.nodes) == 48 and sum(len(n.deps) for n in graph.nodes) > 24
    assert str(graph) == str(plain_graph)   # the listing: views, accesses and deps

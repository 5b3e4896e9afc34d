"""Arrays -> Buffer views: pointers, byte hulls, layouts, host and pinned memory."""
import gc
import warnings

import numpy as np
import pytest

import graphtrace as gt
from graphtrace.arrays import as_buffer, is_pinned
from graphtrace.buffers import EXACT_RUNS, HOST, unwrap_intent
from graphtrace.ops.memory import memset_pattern
from helpers import FakeDeviceArray as A, any_kernel

K = any_kernel()


def test_cuda_array_interface_contiguous():
    x = A((4, 8), "float32")
    b = as_buffer(x)
    assert (b.ptr, b.shape, b.strides, b.dtype) == (x.ptr, (4, 8), (32, 4), np.float32)
    assert (b.lo, b.hi, b.nbytes) == (x.ptr, x.ptr + 128, 128)
    assert b.contiguous and b.c_contiguous and not b.is_host


def test_negative_strides_hull():
    x = A(8, "float64")
    rev = x.view(56, (8,), (-8,))
    b = as_buffer(rev)
    assert (b.lo, b.hi) == (x.ptr, x.ptr + 64)
    assert b.contiguous and not b.c_contiguous


def test_column_view_layout():
    m = A((4, 8), "float32")
    col = as_buffer(m.view(4, (4,), (32,)))
    assert (col.run, col.step) == (4, 32)
    assert not col.contiguous


def test_empty_view_touches_nothing():
    b = as_buffer(A(8).view(0, (0,), (4,)))
    assert b.lo == b.hi and not b.overlaps(as_buffer(A(8)))


def test_numpy_array_is_pageable_host_memory():
    b = as_buffer(np.zeros((3, 4)))
    assert b.device == HOST and b.is_host and not b.pinned


def test_pinned_empty_is_pinned_host_memory():
    h = gt.pinned_empty((3, 4), "int16")
    assert h.shape == (3, 4) and h.dtype == np.int16
    b = as_buffer(h)
    assert b.is_host and b.pinned
    assert as_buffer(h[1:]).pinned  # views of it too


class OnlyDLPack:
    """An array seen through DLPack alone, on the device the producer says."""

    def __init__(self, a, device=None):
        self.a, self.device = a, device

    def __dlpack__(self, **kw):
        if self.device:   # a consumer passes a stream for a device; numpy takes none
            kw.pop("stream", None)
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.device or self.a.__dlpack_device__()


def test_dlpack_only_object():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)[:, 1:3]
    wrapped = OnlyDLPack(a)
    b = as_buffer(wrapped)
    assert b.is_host and not b.pinned and not b.readonly and b.obj is wrapped
    assert (b.shape, b.strides, b.dtype) == ((3, 2), (16, 4), np.float32)
    assert b.ptr == a.__array_interface__["data"][0]


@pytest.mark.parametrize("device, expect", [((2, 3), (3, False)),    # kDLCUDA
                                            ((13, 1), (1, False)),   # kDLCUDAManaged
                                            ((3, 0), (HOST, True))])  # kDLCUDAHost: pinned
def test_dlpack_device_types(device, expect):
    b = as_buffer(OnlyDLPack(np.zeros(4, np.int16), device))
    assert (b.device, b.pinned) == expect and b.dtype == np.int16


def test_dlpack_read_only_array():
    a = np.zeros(4)
    a.flags.writeable = False
    assert as_buffer(OnlyDLPack(a)).readonly


def test_host_array_is_the_view_itself():
    a = np.arange(24.0).reshape(4, 6)
    for view in (a[1:, ::2], a[::-1, 3:], a[2:3, 1:2]):
        got = as_buffer(view).host_array()
        assert np.array_equal(got, view)
        got[...] = -1                      # the same bytes, not a copy
        assert (view == -1).all()


def test_buffer_repr_names_label_shape_device_and_bytes():
    b = as_buffer(A(4, "float32"))
    assert repr(b) == f"Buffer({b.ptr:#x}, float32[4], cuda:{b.device}, " \
                      f"bytes [{b.lo:#x}, {b.hi:#x}))"
    h = as_buffer(np.zeros((2, 2), np.int8))
    h.label = "h"
    assert repr(h).startswith("Buffer(h, int8[2, 2], host, bytes [")


def test_pinned_range_ends_with_the_array_and_with_its_life():
    h = gt.pinned_empty(16, "uint8")
    lo = h.__array_interface__["data"][0]
    assert is_pinned(lo) and is_pinned(lo + 15) and not is_pinned(lo + 16)
    del h
    gc.collect()
    assert not is_pinned(lo)           # freed memory may come back as pageable


def test_contains_is_unknown_past_the_exact_run_limit():
    x = A(4 * EXACT_RUNS + 64, "float32")
    # too many runs in two outer dimensions that interleave: 4-byte runs at steps
    # 16 (16384 of them) and 192 (8), which falls inside the extent of the first
    crossed = as_buffer(x.view(0, (8, EXACT_RUNS // 4), (24 * 8, 16)))
    one = as_buffer(x.view(16, (1,)))
    few = as_buffer(x.view(0, (4,), (8,)))
    assert crossed.contains(one) is None and few.contains(crossed) is False
    assert one.contains(as_buffer(x.view(0, (0,)))) is True           # an empty view


def test_contains_past_the_exact_run_limit_where_the_dimensions_nest():
    """A root of two or more outer dimensions that nest (a component of an
    interleaved field, ``V[..., 0]``; every slice of one array) names one place for
    each offset: a view of more runs than are listed lies in it or not, exactly.
    It was unknown, and ``Tracer._root`` took any array within the hull of the one
    argument that held it for one of its views (moved with it on rebinding), and
    refused a view lying in one of two interleaved arguments as no argument's."""
    n = 300   # V of (n, n, 2) float64: 8-byte runs at steps 16 and 16 * n
    x = A(n * n * 2 + 8, "float64")

    def part(c, rows=range(n), cols=range(n)):   # V[rows, cols, c]
        return as_buffer(x.view(8 * (2 * n * rows.start + 2 * cols.start + c),
                                (len(rows), len(cols)),
                                (16 * n * rows.step, 16 * cols.step)))
    u, v = part(0), part(1)
    assert u.contains(part(0, range(1, n - 1), range(1, n - 1))) is True   # u[1:-1, 1:-1]
    assert u.contains(part(0, range(0, n, 3), range(5, n, 2))) is True     # u[::3, 5::2]
    assert u.contains(part(1, range(0, n - 1))) is False                   # v[:-1]: v's bytes
    assert v.contains(part(1, range(1, n - 1), range(1, n - 1))) is True
    assert v.contains(part(0, range(1, n - 1), range(1, n - 1))) is False
    whole = as_buffer(x.view(0, (n, 2 * n), (16 * n, 8)))                  # V itself
    assert u.contains(whole) is False and whole.contains(u) is True
    # every other element of u as one dimension (its steps cross the rows' ends)
    flat = as_buffer(x.view(0, (n * n // 2, 1), (32, 8)))                  # u.ravel()[::2]
    assert u.contains(flat) is True
    crossed = as_buffer(x.view(8, (n * n // 2, 1), (32, 8)))               # v.ravel()[::2]
    assert u.contains(crossed) is False


def test_contains_past_the_exact_run_limit_in_rows_of_a_matrix():
    """A root of one outer dimension (a block of columns of a tall matrix) holds
    ``lo + k*step + [0, run)``: a view whose runs repeat at multiples of the step
    lies in it or not wherever it has too many runs to list. (``Tracer._root``
    asked it of two overlapping blocks of columns, found neither, and refused a
    view of both as no argument's.)"""
    rows = EXACT_RUNS + 8
    m = A(rows * 8, "float32")

    def block(first, last, rows=rows, every=1):   # m[::every, first:last] of (rows, 8)
        return as_buffer(m.view(4 * first, (rows // every, last - first), (32 * every, 4)))
    left, every_other = block(0, 4), as_buffer(m.view(0, (4 * rows,), (8,)))
    assert left.contains(block(2, 4)) is True and left.contains(block(1, 3, every=2)) is True
    assert left.contains(as_buffer(m.view(36, (3,)))) is True         # one run in a row
    assert left.contains(block(3, 6)) is False and left.contains(block(4, 6)) is False
    assert left.contains(as_buffer(m.view(12, (2,)))) is False        # across a row's end
    assert every_other.contains(as_buffer(m.view(8, (1,)))) is True
    assert every_other.contains(as_buffer(m.view(4, (1,)))) is False
    # two runs a period (columns 0 and 2 of every other row): listed run by run
    assert left.contains(as_buffer(m.view(0, (rows // 2, 2), (64, 8)))) is True
    assert left.contains(as_buffer(m.view(4, (rows // 2, 2), (64, 12)))) is False


def test_numba_simulator_device_arrays_are_device_memory():
    from numba import cuda
    d = cuda.to_device(np.arange(4.0))
    b = as_buffer(d)
    assert not b.is_host and b.shape == (4,)


def test_not_an_array():
    with pytest.raises(gt.ArgumentError, match="cannot use str as an array"):
        as_buffer("x")


@pytest.mark.parametrize("dtype, value, expected", [
    ("uint8", 7, (1, 7)),
    ("int16", -1, (2, 0xFFFF)),
    ("float32", 1.0, (4, 0x3F800000)),
    ("float16", 1.0, (2, 0x3C00)),
    ("int32", 5, (4, 5)),
    ("float64", 0.0, (4, 0)),
    ("int64", -1, (4, 0xFFFFFFFF)),
    ("complex64", 1 + 1j, (4, 0x3F800000)),
    ("float32", 1 + 0j, (4, 0x3F800000)),        # a complex of no imaginary part: its real
    ([("a", "<i2"), ("b", "<i4")], 0, (2, 0)),   # records of 6 and 5 bytes: the largest
    ([("a", "<i4"), ("b", "i1")], 0, (1, 0)),    # word that divides their size
    ([("a", "<i2"), ("b", "<i2"), ("c", "<i2")], -1, (2, 0xFFFF)),
    ("int8", np.float32(-3.0), (1, 0xFD)),      # numpy floats of whole numbers that fit
    ("bool", np.float64(1.0), (1, 1)),
])
def test_memset_patterns(dtype, value, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # numpy's ComplexWarning would escape at our line
        assert memset_pattern(np.dtype(dtype), value) == expected


@pytest.mark.parametrize("dtype, value", [
    ("float64", 1.0), ("int64", 1), ("uint8", 300),
    ("float32", 2 + 3j), ("float32", np.complex64(1 - 1j)),   # the imaginary part would go
    ("uint8", np.int64(300)), ("uint8", np.int32(-1)),         # numpy integers would wrap
    ("int32", np.uint32(2**31)),
    ("uint16", np.float64(-3.0)), ("int8", np.float32(200.0)),   # numpy floats would wrap
    ("uint8", np.float16(256.0)), ("int32", np.float32(1.5)), ("bool", np.float64(0.5)),
    ("bool", np.float32(2.0)),
])
def test_memset_values_without_a_pattern(dtype, value):
    """Refused as the first call's memset refuses them (a later call's value is
    checked here alone)."""
    with pytest.raises(gt.ArgumentError):
        memset_pattern(np.dtype(dtype), value)


def test_overlaps_says_yes_past_the_exact_run_limit():
    """Views of more runs than are compared one by one may share bytes: never a 'no'."""
    x = A(1 << 18, "uint8")
    huge = as_buffer(x.view(0, (EXACT_RUNS + 1,), (2,)))   # every other byte
    small = as_buffer(x.view(0, (4,), (2,)))
    assert huge.overlaps(huge) and huge.overlaps(small) and small.overlaps(huge)


def test_an_intent_of_an_intent_wraps_the_array_with_the_outer_mode():
    x = np.zeros(4)
    assert unwrap_intent(gt.In(gt.Out(x)), "rw") == (x, "r")
    assert repr(gt.Out(gt.In(x))).startswith("Out(array(")


class Sliced:
    """A device array type with the interface on its class (as cupy and numba
    have it), sliced into new objects."""

    __slots__ = ("__cuda_array_interface__",)

    def __init__(self, ptr, n, readonly=False, shape_type=tuple):
        self.__cuda_array_interface__ = {"shape": shape_type((n,)), "typestr": "<f4",
                                         "data": (ptr, readonly), "version": 3}

    def __getitem__(self, key):
        ptr = self.__cuda_array_interface__["data"][0]
        return Sliced(ptr + 4 * key.start, key.stop - key.start)


def test_a_view_made_again_is_the_buffer_made_the_first_time():
    """Fresh views of one window, launch after launch, share one Buffer (and are
    ordered as the same bytes); another window, a read-only view, another type of
    array at the same place, or an interface holding a list are Buffers of their own."""
    x = Sliced(A(256).ptr, 256)
    ptr = x.__cuda_array_interface__["data"][0]

    @gt.graph
    def f(s):
        for _ in range(2):
            s.launch(K, 1, 1, gt.Out(x[0:4]))                      # 0, 2
            s.launch(K, 1, 1, gt.In(x[4:8]))                       # 1, 3
        s.launch(K, 1, 1, gt.In(Sliced(ptr, 4, readonly=True)))    # 4
        s.launch(K, 1, 1, gt.In(A(4, ptr=ptr)))                    # 5
        for _ in range(2):
            s.launch(K, 1, 1, gt.Out(Sliced(ptr, 4, shape_type=list)))   # 6, 7

    g = f.trace()
    bufs = [n.args[0] for n in g.nodes]
    assert bufs[0] is bufs[2] and bufs[1] is bufs[3]
    assert len({id(b) for b in bufs}) == 6 and bufs[6] is not bufs[7]
    assert [b.label for b in bufs[:2]] == ["x[0B:16B]", "x[16B:32B]"]
    assert bufs[4].label == bufs[5].label == bufs[6].label == "x[0B:16B]"
    assert sorted(g.edges()) == [(0, 2), (2, 4), (2, 5), (4, 6), (5, 6), (6, 7)]


def test_a_simulator_view_made_again_is_the_buffer_made_the_first_time():
    from numba import cuda
    x = cuda.device_array(16, np.float32)

    @gt.graph
    def f(s):
        for _ in range(2):
            s.launch(K, 1, 1, gt.Out(x[0:4]), gt.In(x[4:8]))

    g = f.trace()
    (a, b), (c, d) = (n.args for n in g.nodes)
    assert a is c and b is d and a is not b
    assert (a.label, b.label, a.device) == ("x[0B:16B]", "x[16B:32B]", 0)
    assert g.edges() == [(0, 1)]


def test_an_error_an_object_raises_for_its_interface_is_its_own():
    """An error an array's own interface raises (torch's "requires grad", from the
    property its class defines) is raised as it is; an object that answers (or
    refuses) every attribute through ``__getattr__`` (an attribute dict, a
    logger stub answering every name with a function) is no array."""
    from graphtrace.arrays import as_buffer, is_array

    class Grad:
        @property
        def __cuda_array_interface__(self):
            raise RuntimeError("use detach()")

    class Refuses:
        def __getattr__(self, name):
            raise RuntimeError("not here")

    class Items(dict):
        __getattr__ = dict.__getitem__

    class Stub:   # logging off: every method a no-op
        def __getattr__(self, name):
            return lambda *a, **k: None
    assert is_array(Grad())
    with pytest.raises(RuntimeError, match="detach"):
        as_buffer(Grad())
    for obj in (Refuses(), Items(lr=1.0), Stub()):
        assert not is_array(obj)
        with pytest.raises(gt.ArgumentError, match="cannot use"):
            as_buffer(obj)

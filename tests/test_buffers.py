"""Arrays -> Buffer views: pointers, byte hulls, layouts, host and pinned memory."""
import numpy as np
import pytest

import graphtrace as gt
from graphtrace.buffers import HOST, as_buffer
from graphtrace.ops.memory import memset_pattern
from helpers import FakeDeviceArray as A


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


def test_dlpack_only_object():
    class OnlyDLPack:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kw):
            return self.a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    a = np.arange(12, dtype=np.float32).reshape(3, 4)[:, 1:3]
    b = as_buffer(OnlyDLPack(a))
    assert b.is_host and b.shape == (3, 2) and b.strides == (16, 4)
    assert b.ptr == a.__array_interface__["data"][0]


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
])
def test_memset_patterns(dtype, value, expected):
    assert memset_pattern(np.dtype(dtype), value) == expected


@pytest.mark.parametrize("dtype, value", [("float64", 1.0), ("int64", 1), ("uint8", 300)])
def test_memset_values_without_a_pattern(dtype, value):
    with pytest.raises(gt.ArgumentError):
        memset_pattern(np.dtype(dtype), value)

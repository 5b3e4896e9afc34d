"""The argument block kernel nodes are added with: each value's bytes at its
natural alignment, and the void* array pointing at them."""
import ctypes

import numpy as np
from hypothesis import given, strategies as st

from graphtrace.ops._driver_nodes import ArgumentBlock

# (value strategy, ctypes type to read it back with)
SCALARS = [
    (st.integers(-2**63, 2**63 - 1), ctypes.c_int64),
    (st.floats(allow_nan=False), ctypes.c_double),
    (st.booleans(), ctypes.c_bool),
    (st.integers(-128, 127).map(np.int8), ctypes.c_int8),
    (st.integers(0, 65535).map(np.uint16), ctypes.c_uint16),
    (st.integers(-2**31, 2**31 - 1).map(np.int32), ctypes.c_int32),
    (st.integers(0, 2**32 - 1).map(np.uint32), ctypes.c_uint32),
    (st.integers(-2**63, 2**63 - 1).map(np.int64), ctypes.c_int64),
    (st.integers(0, 2**64 - 1).map(np.uint64), ctypes.c_uint64),
    (st.floats(width=32, allow_nan=False).map(np.float32), ctypes.c_float),
    (st.floats(allow_nan=False).map(np.float64), ctypes.c_double),
    (st.integers(0, 2**64 - 1).map(ctypes.c_void_p), ctypes.c_uint64),
    (st.integers(-2**63, 2**63 - 1).map(ctypes.c_int64), ctypes.c_int64),
    (st.integers(-2**63, 2**63 - 1).map(ctypes.c_longlong), ctypes.c_int64),
    (st.floats(width=32, allow_nan=False).map(ctypes.c_float), ctypes.c_float),
    (st.integers(-2**31, 2**31 - 1).map(ctypes.c_int32), ctypes.c_int32),
    (st.integers(0, 255).map(np.uint8), ctypes.c_uint8),
    (st.just(np.complex64(1.5 - 2j)), None),          # no struct code: bytes as they are
]


def plain(v):
    v = getattr(v, "value", v)
    return 0 if v is None else v.item() if isinstance(v, np.generic) else v


def read_back(block, address, kinds, n):
    ptrs = (ctypes.c_uint64 * n).from_address(address)
    out = []
    for p, kind in zip(ptrs, kinds):
        assert p % ctypes.sizeof(kind or ctypes.c_uint64) == 0   # natural alignment
        out.append(ctypes.string_at(p, 8) if kind is None else kind.from_address(p).value)
    return out


CASES = st.lists(st.sampled_from(range(len(SCALARS))), min_size=1, max_size=12).flatmap(
    lambda picks: st.tuples(*[SCALARS[i][0] for i in picks]).map(
        lambda vals: (vals, [SCALARS[i][1] for i in picks])))


def check_fill(block, values, kinds):
    got = read_back(block, block.fill(values), kinds, len(values))
    for v, kind, g in zip(values, kinds, got):
        if kind is None:
            assert g == bytes(memoryview(np.asarray(v)))[:8]
        elif kind in (ctypes.c_float,):
            assert g == np.float32(plain(v)).item()
        else:
            assert g == plain(v)


@given(CASES)
def test_each_value_is_where_its_pointer_says_with_its_own_bytes(case):
    values, kinds = case
    block = ArgumentBlock(nbytes=64)   # small: grows when a call needs more
    for again in (values, list(values)):   # the second time through the cached layout
        check_fill(block, again, kinds)


@given(CASES, CASES)
def test_values_filled_again_after_others_are_written_again(a, b):
    """The very list filled twice in a row is not written again (nodes of one
    packing); after another fill it must be."""
    block = ArgumentBlock(nbytes=64)
    for values, kinds in (a, b, a, a, b, b, a):
        check_fill(block, values, kinds)


def test_python_numbers_take_cuda_cores_types():
    block = ArgumentBlock()
    i, f, b = read_back(block, block.fill([7, 2.5, True]),
                        [ctypes.c_int64, ctypes.c_double, ctypes.c_bool], 3)
    assert (i, f, b) == (7, 2.5, True)

"""A Python int rebinding a numba kernel's parameter keeps the numba type the traced
int gave it (1: int64, 2**63: uint64); a later int out of that type's range is
refused at the call, naming the launch's line, on every backend before the graph
changes, as the GPU's packing refuses it."""
import os

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of


@cuda.jit
def store(a, out):
    out[0] = a


def make():
    @gt.graph(backend="sim")
    def g(s, a, out):
        store[1, 1, s](a, out)   # launch
    return g


@pytest.mark.parametrize("traced, later, numba_type", [
    (1, 2**63, "int64"), (2**63, -1, "uint64"), (0, 2**64 - 1, "int64")])
def test_an_int_out_of_the_traced_numba_type_is_refused_at_the_call(traced, later, numba_type):
    g = make()
    out = cuda.to_device(np.zeros(1, np.uint64 if traced >= 0 else np.int64))
    g(traced, out)
    with pytest.raises(gt.KernelArgumentError, match=f"does not fit numba type {numba_type}") \
            as info:
        g(later, out)
    assert info.value.source == (os.path.abspath(__file__), line_of(__file__, "launch"))
    assert g.cache_info().misses == 1   # no retrace: the same signature
    g(traced, out)   # the cached graph still takes the traced kind of value
    assert int(out.copy_to_host()[0]) == np.array(traced).astype(out.dtype)
    assert g.cache_info().misses == 1


def test_an_int_in_the_traced_numba_type_rebinds():
    g = make()
    out = cuda.to_device(np.zeros(1, np.int64))
    g(1, out)
    g(2**63 - 1, out)
    g(-2**63, out)
    assert int(out.copy_to_host()[0]) == -2**63
    assert g.cache_info().misses == 1


def test_launches_alike_are_asked_once_and_an_unlike_node_still_is():
    """refuse_numbers asks one of the nodes alike in what a check reads: a memset of
    int8 after many launches taking the same number still refuses 300."""
    @gt.graph(backend="sim")
    def g(s, a, out, small):
        for _ in range(20):
            store[1, 1, s](a, out)
        s.memset(small, a)   # fill
    out = cuda.to_device(np.zeros(1, np.int64))
    small = cuda.to_device(np.zeros(2, np.int8))
    g(1, out, small)
    with pytest.raises(gt.ArgumentError, match="300") as info:
        g(300, out, small)
    assert info.value.source == (os.path.abspath(__file__), line_of(__file__, "fill"))
    with pytest.raises(gt.KernelArgumentError, match="does not fit numba type int64"):
        g(2 ** 63, out, small)
    g(5, out, small)
    assert int(out.copy_to_host()[0]) == 5 and small.copy_to_host().tolist() == [5, 5]

"""Kernel launches the eager libraries accept: *args kernels, numpy sizes, tuples."""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import FakeDeviceArray as A


@cuda.jit
def add_all(out, *xs):
    i = cuda.grid(1)
    if i < out.size:
        for x in xs:
            out[i] += x[i]


@cuda.jit
def weighted(out, *terms):          # (array, weight) pairs
    i = cuda.grid(1)
    if i < out.size:
        out[i] = terms[0][i] * terms[1] + terms[2][i] * terms[3]


def dev(values):
    return cuda.to_device(np.asarray(values, dtype=np.float64))


def test_varargs_kernel_takes_any_number_of_extra_arguments():
    @gt.graph(backend="sim")
    def f(s, out, xs):
        add_all[1, 8, s](out, *xs)
    for n in (0, 1, 3):
        out, xs = dev(np.zeros(8)), [dev(np.arange(8) * (k + 1)) for k in range(n)]
        f(out, xs)
        assert out.copy_to_host().tolist() == [i * n * (n + 1) / 2 for i in range(8)]


@cuda.jit
def clear_all(n, *xs):
    i = cuda.grid(1)
    for x in xs:
        if i < n:
            x[i] = 0


def test_varargs_elements_get_the_intent_inferred_for_star_args():
    @gt.graph
    def f(s, out, x, y):
        s.launch(add_all, 1, 8, out, x, y)
        s.launch(clear_all, 1, 8, 8, x, y)
        s.launch(gt.kernel(add_all, "inout, inout, in"), 1, 8, out, x, y)
    g = f.trace(A(8), A(8), A(8))
    assert [m for _, m in g.nodes[0].accesses] == ["rw", "r", "r"]
    assert [m for _, m in g.nodes[1].accesses] == ["w", "w"]
    assert [m for _, m in g.nodes[2].accesses] == ["rw", "rw", "r"]
    assert "add_all[1, 8](out, x, y)" in str(g)


def test_varargs_of_mixed_types_on_the_simulator():
    @gt.graph(backend="sim")
    def f(s, out, a, x, b, y):
        weighted[1, 8, s](out, x, a, y, b)
    out = dev(np.zeros(8))
    f(out, 2.0, dev(np.ones(8)), 3.0, dev(np.arange(8)))
    assert out.copy_to_host().tolist() == [2.0 + 3.0 * i for i in range(8)]


def test_declared_intents_of_a_varargs_kernel_are_checked_on_the_simulator():
    @gt.graph(backend="sim")
    def f(s, out, x):
        s.launch(gt.kernel(add_all, "in, in"), 1, 8, out, x)
    with pytest.raises(gt.SimulationError, match="kernel add_all wrote to out"):
        f(dev(np.zeros(8)), dev(np.ones(8)))
    with pytest.raises(gt.ArgumentError, match=r"0 intents for kernel add_all, which has 1 "
                                                r"parameters \(out\) and \*xs"):
        gt.kernel(add_all, [])


@cuda.jit
def fill(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v


@pytest.mark.parametrize("grid, block", [
    (np.int64(2), np.int32(4)), ((np.int64(2),), (np.uint8(4), 1)),
    ((np.int32(2), np.int64(1)), np.int16(4)), ([np.intp(2)], [4, np.int64(1), 1])])
def test_numpy_integers_size_grids_and_blocks(grid, block):
    @gt.graph(backend="sim", static=("g", "b"))
    def f(s, out, g, b):
        fill[g, b, s](out, 5.0)
        s.launch(fill, g, b, out[:4], 6.0, shared_mem=np.int64(16))
    out = dev(np.zeros(8))
    f(out, grid, block)
    assert out.copy_to_host().tolist() == [6.0] * 4 + [5.0] * 4
    a = f.trace(out, grid, block).nodes[0].attrs
    assert a["grid"] == (2, 1, 1) and a["block"] == (4, 1, 1)
    assert all(type(d) is int for d in a["grid"] + a["block"])


@cuda.jit
def poly(out, coeffs, parts):       # a tuple of numbers, a tuple of arrays
    i = cuda.grid(1)
    if i < out.size:
        out[i] = coeffs[0] + coeffs[1] * parts[0][i] + parts[1][i]


def test_tuples_of_numbers_and_of_arrays_are_valid_numba_arguments():
    @gt.graph(backend="sim")
    def f(s, out, x, y):
        poly[1, 8, s](out, (1.0, 2.0), (x, y))
    out = dev(np.zeros(8))
    f(out, dev(np.arange(8)), dev(np.ones(8)))
    assert out.copy_to_host().tolist() == [2.0 + 2.0 * i for i in range(8)]


@pytest.mark.parametrize("seen, bad", [(4, 4.0), (4, True), ((4, 2), (4.0, 2)),
                                       ((1, 4), (True, 4))])
def test_a_configuration_equal_to_one_seen_is_checked_all_the_same(seen, bad):
    """Launches with the same configuration share their checks; a float or a bool
    that compares equal to an int seen before is refused as ever."""
    x = A(64)

    @gt.graph
    def f(s):
        s.launch(fill, seen, 8, x, 1.0)
        s.launch(fill, bad, 8, x, 1.0)

    with pytest.raises(gt.ArgumentError, match="grid must be a positive int"):
        f.trace()

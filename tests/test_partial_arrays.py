"""A functools.partial passed as a graph argument that binds device arrays: its
arrays are reached as the arguments' are, and a later call's partial binding other
arrays runs on those."""
import functools

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt


@cuda.jit
def axpy(y, a, x):
    i = cuda.grid(1)
    if i < y.size:
        y[i] += a * x[i]


@gt.graph
def addk(s, x, y, c):
    axpy[1, 4, s](x, c, y)


def plain(s, x, y, c):
    axpy[1, 4, s](x, c, y)


@gt.graph
def inline(s, x, g):
    g(s, x)


@gt.graph
def child(s, x, g):
    s.child(g, x)


def dev(*v):
    return cuda.to_device(np.array(v, np.float32))


@pytest.mark.parametrize("outer, fn", [(inline, addk), (inline, plain), (child, addk)],
                         ids=["inline graph", "inline function", "child"])
def test_a_partial_argument_binding_arrays_reaches_them_and_rebinds(outer, fn):
    """Bug: partial(addk, y=y, c=1.0) as an argument was refused inside the callee: an
    array used here ... is not an argument of inline (one binding numbers worked)."""
    for c, y0 in ((1.0, 2.0), (2.0, 5.0), (0.5, 3.0)):   # a new partial, array, number
        x, y = dev(1, 1, 1, 1), dev(y0, y0, y0, y0)
        eager_x = x.copy_to_host() + c * y.copy_to_host()   # what the kernel does
        outer(x, functools.partial(fn, y=y, c=c), backend="sim")
        np.testing.assert_allclose(x.copy_to_host(), eager_x)
        np.testing.assert_allclose(y.copy_to_host(), [y0] * 4)


def _x_first(x, s, y, c):
    axpy[1, 4, s](x, c, y)


@gt.graph
def swapped(s, y, g):
    g(s=s, y=y)


def test_a_positional_array_of_a_partial_is_reached_and_rebound_too():
    y = dev(1, 2, 3, 4)
    for x0 in ((0, 0, 0, 0), (5, 5, 5, 5)):   # a new partial holding another array
        x = dev(*x0)
        want = x.copy_to_host() + 2.0 * y.copy_to_host()
        swapped(y, functools.partial(_x_first, x, c=2.0), backend="sim")
        np.testing.assert_allclose(x.copy_to_host(), want)

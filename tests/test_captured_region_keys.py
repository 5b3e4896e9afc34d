"""The places a captured region reaches arrays through (a module or class it is
handed, ``sys.modules[__name__]``, a numpy object array) are keyed as names are:
a call passing the very array such a place holds, where the trace saw another,
traces anew (the region is then ordered with the kernels writing it), and so
does a call after a new array was put there (``region_places.py``)."""
import sys

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
import region_reach_module as rmod

N = 4
X0 = np.arange(1.0, N + 1)
OBJ = np.empty(1, dtype=object)
W = None


class Params:   # a class used as a namespace
    w = None


@cuda.jit
def scale(x, a, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i]


def from_module(m, y):
    y[...] = m.W * 2


def from_module_global(y):
    y[...] = rmod.W * 2


def from_class(c, y):
    y[...] = c.w * 2


def by_sys_modules(y):
    y[...] = sys.modules[__name__].W * 2


def by_object_array(y):
    y[...] = OBJ[0] * 2


def _put(a):
    global W
    W = rmod.W = Params.w = OBJ[0] = a


def _between(region, *given):
    @gt.graph
    def f(s, x, w, y):
        scale[1, 32, s](x, 3.0, w)          # w = 3x
        s.captured(region, *given, y, writes=[y])
        scale[1, 32, s](x, 5.0, w)          # w = 5x
    return f


CASES = [(from_module, (rmod,)), (from_module_global, ()), (from_class, (Params,)),
         (by_sys_modules, ()), (by_object_array, ())]
IDS = ["module handed", "module by name", "class handed", "sys.modules", "object array"]


@pytest.mark.parametrize("region, given", CASES, ids=IDS)
def test_a_call_passing_the_array_a_region_reaches_through_a_place_traces_anew(region, given):
    """Call 1 passes another w than rmod.W: the region reads rmod.W unordered, rightly.
    Call 2 passes w = rmod.W: it was a cache hit replaying call 1's edges, so the
    region ran beside the kernels writing w (2 w, 6 x or 10 x by the order)."""
    f = _between(region, *given)
    _put(cuda.to_device(np.ones(N)))
    y = cuda.to_device(np.zeros(N))
    f(cuda.to_device(X0), cuda.to_device(np.ones(N)), y)
    assert y.copy_to_host().tolist() == [2.0] * N
    for _ in range(8):
        y = cuda.to_device(np.zeros(N))
        f(cuda.to_device(X0), W, y)
        assert y.copy_to_host().tolist() == (6 * X0).tolist()
    assert f.cache_info().misses == 2


@pytest.mark.parametrize("region, given", CASES, ids=IDS)
def test_a_new_array_where_a_region_reached_one_is_a_new_signature(region, given):
    f = _between(region, *given)
    _put(cuda.to_device(np.ones(N)))
    w = cuda.to_device(np.ones(N))
    f(cuda.to_device(X0), w, cuda.to_device(np.zeros(N)))
    f(cuda.to_device(X0), w, cuda.to_device(np.zeros(N)))
    assert f.cache_info().misses == 1
    _put(cuda.to_device(np.ones(N)))
    y = cuda.to_device(np.zeros(N))
    f(cuda.to_device(X0), w, y)
    assert f.cache_info().misses == 2
    assert y.copy_to_host().tolist() == [2.0] * N


def test_the_first_call_keys_the_places_its_trace_found():
    """The places are found by the trace: the key the first call stores its graph
    under holds them already, so the second call finds it."""
    f = _between(from_module, rmod)
    _put(cuda.to_device(np.ones(N)))
    w, y = cuda.to_device(np.ones(N)), cuda.to_device(np.zeros(N))
    for _ in range(3):
        f(cuda.to_device(X0), w, y)
    assert f.cache_info().misses == 1 and f.cache_info().hits == 2


def test_a_retrace_warning_names_the_place_a_region_reached():
    f = _between(from_module, rmod)
    with pytest.warns(gt.RetraceWarning, match=r"captured regions reach .*region_reach_module\.W"):
        for _ in range(12):
            _put(cuda.to_device(np.ones(N)))
            f(cuda.to_device(X0), W, cuda.to_device(np.zeros(N)))


@pytest.mark.parametrize("call", ["inline", "child"])
@pytest.mark.parametrize("helper_called_first", [False, True], ids=["", "helper called first"])
def test_a_region_inside_a_helper_graph_function_keys_the_calling_function(
        call, helper_called_first):
    """The region lies in another @gt.graph function ``g``, called inline (``g(s, y)``)
    or as a child graph (``s.child(g, y)``): its places key the function being
    called, whose trace records the region (g's own calls, made first or not, keep
    their own), so a call passing w = rmod.W there traces anew and is ordered."""
    @gt.graph
    def g(s, y):
        s.captured(from_module, rmod, y, writes=[y])

    @gt.graph
    def f(s, x, w, y):
        scale[1, 32, s](x, 3.0, w)          # w = 3x
        if call == "inline":
            g(s, y)
        else:
            s.child(g, y)
        scale[1, 32, s](x, 5.0, w)          # w = 5x

    _put(cuda.to_device(np.ones(N)))
    if helper_called_first:
        g(cuda.to_device(np.zeros(N)))
    y = cuda.to_device(np.zeros(N))
    f(cuda.to_device(X0), cuda.to_device(np.ones(N)), y)
    assert y.copy_to_host().tolist() == [2.0] * N
    for _ in range(8):
        y = cuda.to_device(np.zeros(N))
        W.copy_to_device(np.ones(N))
        f(cuda.to_device(X0), W, y)
        assert y.copy_to_host().tolist() == (6 * X0).tolist()
    assert f.cache_info().misses == 2
    _put(cuda.to_device(np.ones(N)))   # a new array there: a new signature of f
    f(cuda.to_device(X0), W, cuda.to_device(np.zeros(N)))
    assert f.cache_info().misses == 3

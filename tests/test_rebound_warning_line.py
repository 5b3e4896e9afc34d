"""A trace that swaps ping-pong buffers held by ``self``, a global or a closure name
does it once, when traced: the StateWarning saying so names the line of the swap in
the traced code (a method it calls included), not the caller's line."""
import types
import warnings

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of

pytestmark = pytest.mark.usefixtures("both_launch_paths")

F = __file__


@cuda.jit
def _double(src, dst):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = 2.0 * src[i]


def dev(*values):
    return cuda.to_device(np.array(values, dtype=np.float64))


class _Heat:
    def __init__(self):
        self.a, self.b = dev(1.0, 1.0), dev(0.0, 0.0)
        self.bufs = [dev(1.0, 1.0), dev(0.0, 0.0)]
        self.stats = types.SimpleNamespace(a=0)

    @gt.graph(backend="sim")
    def step(self, s):
        _double[1, 2, s](self.a, self.b)
        self.a, self.b = self.b, self.a   # method-swap

    @gt.graph(backend="sim")
    def step_items(self, s):
        _double[1, 2, s](self.bufs[0], self.bufs[1])
        self.bufs[0], self.bufs[1] = self.bufs[1], self.bufs[0]   # items-swap

    @gt.graph(backend="sim")
    def step_helper(self, s):
        _double[1, 2, s](self.a, self.b)
        self._swap()

    def _swap(self):
        self.a, self.b = self.b, self.a   # helper-swap

    @gt.graph(backend="sim")
    def step_stats(self, s):
        self.stats.a = 1   # an attribute of the same name on another object
        _double[1, 2, s](self.a, self.b)
        self.a, self.b = self.b, self.a   # swap-after-stats

    @gt.graph(backend="sim")
    def step_other_self(self, s):
        _double[1, 2, s](self.a, self.b)
        _Heat._swap_as(self)

    def _swap_as(heat):
        heat.stats.a = 1
        heat.a, heat.b = heat.b, heat.a   # swap-as


A, B = dev(1.0, 1.0), dev(0.0, 0.0)
BUFS = [dev(1.0, 1.0), dev(0.0, 0.0)]


def _global_step():
    @gt.graph(backend="sim")
    def step(s):
        global A, B
        _double[1, 2, s](A, B)
        A, B = B, A   # global-swap
    return step


def _global_list_step():
    @gt.graph(backend="sim")
    def step(s):
        _double[1, 2, s](BUFS[0], BUFS[1])
        BUFS.reverse()   # reverse-swap
    return step


def _closure_step():
    a, b = dev(1.0, 1.0), dev(0.0, 0.0)

    @gt.graph(backend="sim")
    def step(s):
        nonlocal a, b
        _double[1, 2, s](a, b)
        a, b = b, a   # closure-swap
    return step


def _rebound_warnings(f, calls=4):
    """The rebound warnings of ``calls`` calls of ``f``, and how many traces they made."""
    before = f.cache_info().misses
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        for _ in range(calls):
            f()   # the-call
    return [w for w in got if issubclass(w.category, gt.StateWarning)
            and "to other arrays" in str(w.message)], f.cache_info().misses - before


@pytest.mark.parametrize("name, marker", [
    ("step", "method-swap"), ("step_items", "items-swap"), ("step_helper", "helper-swap"),
    ("step_stats", "swap-after-stats"), ("step_other_self", "swap-as")])
def test_a_swap_on_self_is_warned_at_the_swap_line(name, marker):
    got, traces = _rebound_warnings(getattr(_Heat(), name))
    assert got, "no warning"
    for w in got:
        assert (w.filename, w.lineno) == (F, line_of(F, marker)), (w.filename, w.lineno)
        assert "between calls" in str(w.message) and "f(a, b), then f(b, a)" in str(w.message)
    assert len(got) == traces < 4   # once per trace, not once per call


@pytest.mark.parametrize("f, marker", [
    (_global_step, "global-swap"), (_global_list_step, "reverse-swap"),
    (_closure_step, "closure-swap")])
def test_a_swap_of_global_or_closure_names_is_warned_at_the_swap_line(f, marker):
    got, traces = _rebound_warnings(f())
    assert got, "no warning"
    for w in got:
        assert (w.filename, w.lineno) == (F, line_of(F, marker)), (w.filename, w.lineno)
    assert len(got) == traces < 4

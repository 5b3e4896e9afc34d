"""A ``collections.deque`` of arrays held by a global, a closure or ``self`` (a
ring of buffers) is reached as a list of them is: its items by index, the
graph using the arrays it holds at each call, whether the program rotates it
(``RING.rotate(1)``), takes and puts items (``appendleft``, ``pop``) or
appends to a ring with a ``maxlen``; each call computes what eager code does.
"""
import warnings
from collections import deque

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import compiled_buffers

from watch_common import IDS, WALKS


@cuda.jit
def add(x, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] += x[i]


def _filled(v):
    return cuda.to_device(np.full(4, v, np.float32))


A, B, C = _filled(1.0), _filled(2.0), _filled(4.0)
RING = deque([A, B])


@gt.graph(backend="sim")
def by_global(s, y):
    add[1, 4, s](RING[0], y)


def _closure(ring):
    @gt.graph(backend="sim")
    def f(s, y):
        add[1, 4, s](ring[0], y)
        add[1, 4, s](ring[-1], y)
    return f


class Model:
    def __init__(self, ring):
        self.ring = ring

    @gt.graph(backend="sim")
    def step(self, s, y):
        add[1, 4, s](self.ring[0], y)


def _run(f, ring, changes, first):
    """What ``f(y)`` leaves in ``y`` after each change of ``ring`` (in place), and
    what eager code leaves: ``first(ring)`` the values one call adds."""
    y, got, want, total = cuda.to_device(np.zeros(4, np.float32)), [], [], 0.0
    for change in changes:
        change(ring)
        f(y)
        total += first(ring)
        got.append(float(y.copy_to_host()[0]))
        want.append(total)
    return got, want


def _value(a):
    return float(a.copy_to_host()[0])


def _rotate(r):
    r.rotate(1)


def _same(r):
    pass


def _cycle(r):   # appendleft what pop takes: a rotation by hand
    r.appendleft(r.pop())


@pytest.mark.parametrize("on", WALKS, ids=IDS.get)
@pytest.mark.parametrize("change", [_rotate, _cycle], ids=["rotate", "appendleft(pop())"])
def test_a_global_deque_of_arrays_changed_between_calls_gives_eager_results(on, change):
    RING.clear()
    RING.extend([A, B])
    by_global.clear_cache()
    with compiled_buffers(on), warnings.catch_warnings():
        warnings.simplefilter("error", gt.StateWarning)
        got, want = _run(by_global, RING, (_same, _same, change, _same, change),
                         lambda r: _value(r[0]))
    assert got == want == [1.0, 2.0, 4.0, 6.0, 7.0]
    assert by_global.cache_info().hits >= 2   # an unchanged ring replays its graph


@pytest.mark.parametrize("on", WALKS, ids=IDS.get)
def test_a_closure_deque_ring_with_a_maxlen_uses_the_arrays_it_holds_now(on):
    """``ring.append(C)`` on ``deque([A, B], maxlen=2)`` drops A: the next call
    reads B and C, as eager code does."""
    ring = deque([A, B], maxlen=2)
    f = _closure(ring)
    with compiled_buffers(on):
        got, want = _run(f, ring, (_same, lambda r: r.append(C), _same,
                                   lambda r: r.append(A)),
                         lambda r: _value(r[0]) + _value(r[-1]))
    assert got == want == [3.0, 9.0, 15.0, 20.0]


@pytest.mark.parametrize("on", WALKS, ids=IDS.get)
def test_a_deque_self_holds_is_reached_as_a_list_is(on):
    m = Model(deque([A, B]))
    with compiled_buffers(on):
        got, want = _run(m.step, m.ring, (_same, _rotate, _rotate, _same),
                         lambda r: _value(r[0]))
    assert got == want == [1.0, 3.0, 4.0, 5.0]

"""A graph hands to ``s.host`` the method of an object of a list, tuple or dict
subclass of the program's own (``class Sink(list)`` whose ``read`` reads
``self[0]``), held by ``self`` or a global name: the callback reads the arrays
the object holds as its items.

Before, what the callback reaches was looked for in the object's attributes
alone, not its items: traced while the sink held ``a`` and called with ``b`` as
``h`` after ``m.sink = Sink([b])``, the graph had no edge from the copy into
``h`` to the callback, and on the simulator about half the calls ran the
callback first, reading what ``b`` held before the call. The items are now
read as the attributes are: the callback runs after the copy.
"""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt

SEEN = []


class _ListSink(list):
    def read(self, _tick):
        SEEN.append(float(self[0][0]))


class _TupleSink(tuple):
    def read(self, _tick):
        SEEN.append(float(self[0][0]))


class _DictSink(dict):
    def read(self, _tick):
        SEEN.append(float(self["buf"][0]))


_MADE = {"list": lambda buf: _ListSink([buf]), "tuple": lambda buf: _TupleSink((buf,)),
         "dict": lambda buf: _DictSink(buf=buf)}


class _Model:
    def __init__(self, sink):
        self.sink = sink

    @gt.graph(backend="sim")
    def step(self, s, x, h, tick):
        s.copy(h, x)
        s.host(self.sink.read, tick)


SINK = None


@gt.graph(backend="sim")
def _global_step(s, x, h, tick):
    s.copy(h, x)
    s.host(SINK.read, tick)


def _set_global(sink):
    global SINK
    SINK = sink


def _stale(step, a, b, tick):
    bad = 0
    for i in range(20):
        a[:], b[:] = -2.0, -1.0
        SEEN.clear()
        step(cuda.to_device(np.full(4, float(i))), b, tick)
        bad += SEEN != [float(i)]
    return bad


@pytest.mark.parametrize("kind", ["list", "tuple", "dict"])
@pytest.mark.parametrize("held", ["self", "global"])
def test_a_container_subclass_callback_runs_after_the_writer_of_its_items(kind, held):
    tick, a, b = gt.pinned_empty(1), gt.pinned_empty(4), gt.pinned_empty(4)
    if held == "self":
        m = _Model(_MADE[kind](a))
        step, swap = m.step, lambda sink: setattr(m, "sink", sink)
    else:
        _set_global(_MADE[kind](a))
        step, swap = _global_step, _set_global
    x = cuda.to_device(np.full(4, 7.0))
    step(x, a, tick)   # h the sink's own array: the callback after the copy
    assert step.trace(x, a, tick).edges() == [(0, 1)]
    swap(_MADE[kind](b))
    assert step.trace(x, b, tick).edges() == [(0, 1)]
    assert _stale(step, a, b, tick) == 0


def test_an_item_put_in_place_is_read_after_the_writer():
    tick, a, b = gt.pinned_empty(1), gt.pinned_empty(4), gt.pinned_empty(4)
    m = _Model(_ListSink([a]))
    x = cuda.to_device(np.full(4, 7.0))
    m.step(x, b, tick)   # apart: no edge
    m.sink[0] = b
    assert m.step.trace(x, b, tick).edges() == [(0, 1)]
    assert _stale(m.step, a, b, tick) == 0

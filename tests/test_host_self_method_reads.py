"""A graph method hands one of its object's methods to ``s.host``
(``s.host(self.read, t)``) that calls a method of an object ``self`` holds
(``self.sink.read(t)``), reading that object's array when it runs.

Before, the other class's method of the same name (``Sink.read``) was taken as
one the graph calls itself, not as a callback's: the key held neither how its
array shares memory with the call's nor which object ``self.sink`` is. After
``m.sink = Sink(b)``, calls handing ``b`` as ``h`` reused the graph traced when
the sink held another array: no edge from the copy into ``h`` to the callback,
which about half the simulated calls ran first, reading stale data.
"""
import numpy as np
from numba import cuda

import graphtrace as gt

SEEN = []


class _Sink:
    def __init__(self, buf):
        self.buf = buf

    def read(self, _tick):
        SEEN.append(float(self.buf[0]))


class _Model:
    def __init__(self, buf):
        self.sink = _Sink(buf)

    def read(self, tick):
        self.sink.read(tick)

    @gt.graph(backend="sim")
    def step(self, s, x, h, tick):
        s.copy(h, x)
        s.host(self.read, tick)


def test_a_method_of_self_reading_a_held_object_runs_after_the_writer_of_its_array():
    tick, a, b = gt.pinned_empty(1), gt.pinned_empty(4), gt.pinned_empty(4)
    m = _Model(a)
    x = cuda.to_device(np.full(4, 7.0))
    assert m.step.trace(x, b, tick).edges() == []   # apart: no edge
    m.step(x, b, tick)
    m.sink = _Sink(b)
    assert m.step.trace(x, b, tick).edges() == [(0, 1)]
    for i in range(20):
        a[:], b[:] = -2.0, -1.0
        SEEN.clear()
        m.step(cuda.to_device(np.full(4, float(i))), b, tick)
        assert SEEN == [float(i)]

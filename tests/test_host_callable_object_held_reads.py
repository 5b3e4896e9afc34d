"""A graph method hands a callable object its ``self`` holds to ``s.host``
(``s.host(self.sink, t)``, a dataclass or a plain class with a ``__call__``),
whose call reads the array the object holds (``self.buf``), and that array is
the one the call hands as ``h`` and the graph's copy writes.

Before, this was refused ("host callback DSink.__call__ holds h of this graph
by attribute 'buf'") where ``s.host(self.sink.read, t)`` runs after the copy:
once the copy wrote the array, the trace had put a guarded view of it in the
object's attribute (``written_hosts.py``), and the callback's view was taken
for the argument ``h``. It is now taken as the array it views, which the graph
reaches through ``self``: the callback runs after the copy, as the bound
method's form does.
"""
import dataclasses

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt

SEEN = []


@dataclasses.dataclass
class _DataSink:
    buf: object

    def read(self, _tick):
        SEEN.append(float(self.buf[0]))

    def __call__(self, tick):
        self.read(tick)


class _Sink:
    def __init__(self, buf):
        self.buf = buf

    def read(self, _tick):
        SEEN.append(float(self.buf[0]))

    def __call__(self, tick):
        self.read(tick)


class _Model:
    def __init__(self, sink):
        self.sink = sink

    @gt.graph(backend="sim")
    def whole(self, s, x, h, tick):
        s.copy(h, x)
        s.host(self.sink, tick)

    @gt.graph(backend="sim")
    def method(self, s, x, h, tick):
        s.copy(h, x)
        s.host(self.sink.read, tick)


@pytest.mark.parametrize("made", [_DataSink, _Sink])
@pytest.mark.parametrize("form", ["whole", "method"])
def test_a_callable_object_reading_the_array_handed_as_h_runs_after_its_writer(made, form):
    tick, a, b = gt.pinned_empty(1), gt.pinned_empty(4), gt.pinned_empty(4)
    m = _Model(made(a))
    step = getattr(m, form)
    x = cuda.to_device(np.full(4, 7.0))
    SEEN.clear()
    step(x, a, tick)
    assert SEEN == [7.0]
    assert step.trace(x, a, tick).edges() == [(0, 1)]
    m.sink = made(b)
    for i in range(20):
        a[:], b[:] = -2.0, -1.0
        SEEN.clear()
        step(cuda.to_device(np.full(4, float(i))), b, tick)
        assert SEEN == [float(i)]

"""A host callback that is a method calling another method of its own object
(``s.host(SINK.read_through, t)`` where ``read_through`` calls ``self.read``),
ordered and keyed as the direct ``s.host(SINK.read, t)`` is.

Before, the inner method was taken as one the graph calls itself: what it
reads was keyed by value and no callback's arrays were noted, so a graph
handing ``h``, the array the object holds, was refused with "holds h of this
graph by attribute 'buf'", where ``s.host(SINK.read, t)`` runs after the copy.
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

    def read_through(self, tick):
        self.read(tick)


_SINK = _Sink(gt.pinned_empty(4))


@gt.graph(backend="sim")
def _copy_then_read_through(s, x, h, tick):
    s.copy(h, x)
    s.host(_SINK.read_through, tick)


def test_a_method_calling_another_of_its_object_runs_after_the_writer_of_what_it_reads():
    tick, other = gt.pinned_empty(1), gt.pinned_empty(4)
    x = cuda.to_device(np.full(4, 7.0))
    assert _copy_then_read_through.trace(x, _SINK.buf, tick).edges() == [(0, 1)]
    assert _copy_then_read_through.trace(x, other, tick).edges() == []
    for i in range(20):
        _SINK.buf[:] = -1.0
        x = cuda.to_device(np.full(4, float(i)))
        SEEN.clear()
        _copy_then_read_through(x, other, tick)
        _copy_then_read_through(x, _SINK.buf, tick)
        assert SEEN == [-1.0, float(i)]

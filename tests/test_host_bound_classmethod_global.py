"""A class method bound to its class, held by a global name (``CB = Sink.read``)
and handed to ``s.host``, reading an array off its ``cls`` (``cls.BUF``) that the
graph writes.

Before, it was refused ("holds h of this graph by attribute 'BUF'") while
``s.host(Sink.read, t)`` worked: the arrays it reads off ``cls`` were no place
a host callback reads. They are now, as for the direct form: the callback runs
after the copy writing the array, and the graph traces once.
"""
import numpy as np
from numba import cuda

import graphtrace as gt

SEEN = []


class _Sink:
    BUF = gt.pinned_empty(4, np.float32)

    @classmethod
    def read(cls, _tick):
        SEEN.append(float(cls.BUF[0]))


CB = _Sink.read


@gt.graph(backend="sim")
def _step(s, x, h, tick):
    s.copy(h, x)
    s.host(CB, tick)


def test_bound_classmethod_by_global_runs_after_the_copy():
    tick = gt.pinned_empty(1, np.float32)
    SEEN.clear()
    for i in range(4):
        _Sink.BUF[:] = -1
        _step(cuda.to_device(np.full(4, float(i), np.float32)), _Sink.BUF, tick)
    assert SEEN == [0.0, 1.0, 2.0, 3.0]
    assert _step.cache_info().misses == 1

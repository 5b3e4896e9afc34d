"""A graph method handing a callable object its ``self`` holds whole to
``s.host`` (``s.host(self.count, h)``), whose ``__call__`` keeps a count on the
object (``self.n += 1``).

Before, the cache key held ``self.count.n``: every call traced the graph
anew, with a RetraceWarning naming it. The object is only handed whole, so
what its ``__call__`` reads and changes when it runs is left out of the key,
as for ``s.host(COUNT, h)`` and ``s.host(self.count.rec, h)``; what the traced
code itself reads off it still keys the graph, and the arrays the callback
reads keep it ordered after the copy writing them.
"""
import dataclasses
import warnings

import numpy as np
from numba import cuda

import graphtrace as gt


class _Counter:
    def __init__(self):
        self.n = 0

    def __call__(self, _h):
        self.n += 1


@dataclasses.dataclass
class _DataCounter:
    n: int = 0

    def __call__(self, _h):
        self.n += 1


class _Model:
    def __init__(self, count):
        self.count = count

    @gt.graph(backend="sim")
    def step(self, s, x, h):
        s.copy(h, x)
        s.host(self.count, h)


def _run(model, calls=5):
    """The traces ``calls`` calls of ``model.step`` made (the cache is the class's)."""
    before = model.step.cache_info().misses
    x = cuda.to_device(np.ones(4, np.float32))
    h = gt.pinned_empty(4, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(calls):
            model.step(x, h)
    return model.step.cache_info().misses - before


def test_counter_on_self_traces_once():
    m = _Model(_Counter())
    assert _run(m) == 1
    assert m.count.n == 5


def test_dataclass_counter_on_self_traces_once():
    m = _Model(_DataCounter())
    assert _run(m) == 1
    assert m.count.n == 5


class _Scaled:
    def __init__(self):
        self.n = 0
        self.reps = 1

    def __call__(self, _h):
        self.n += 1


class _Repeating:
    def __init__(self):
        self.count = _Scaled()

    @gt.graph(backend="sim")
    def step(self, s, x, h):
        for _ in range(self.count.reps):   # a setting the traced code reads
            s.copy(h, x)
        s.host(self.count, h)


def test_setting_read_by_traced_code_still_keys():
    m = _Repeating()
    assert _run(m, 3) == 1
    m.count.reps = 2
    assert _run(m, 2) == 1
    assert m.count.n == 5


SEEN = []


class _Reader:
    def __init__(self, buf):
        self.buf = buf
        self.n = 0

    def __call__(self, _t):
        self.n += 1
        SEEN.append(float(self.buf[0]))


class _ReaderModel:
    def __init__(self, reader):
        self.reader = reader

    @gt.graph(backend="sim")
    def step(self, s, x, h, t):
        s.copy(h, x)
        s.host(self.reader, t)


def test_pinned_array_the_callback_reads_is_ordered():
    h = gt.pinned_empty(4, np.float32)
    t = gt.pinned_empty(1, np.float32)
    m = _ReaderModel(_Reader(h))
    SEEN.clear()
    for i in range(4):
        h[:] = -1
        m.step(cuda.to_device(np.full(4, float(i), np.float32)), h, t)
    assert SEEN == [0.0, 1.0, 2.0, 3.0]
    assert m.step.cache_info().misses == 1
    other = gt.pinned_empty(4, np.float32)   # now the callback reads no argument
    other[:] = 7
    m.reader.buf = other
    SEEN.clear()
    m.step(cuda.to_device(np.full(4, 9.0, np.float32)), h, t)
    assert SEEN == [7.0]

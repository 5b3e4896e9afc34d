"""A host callback that is a method of a namedtuple's subclass a class holds
(``s.host(Cfg.SINK.read, t)``) reads the fields of the one the class holds at
each call, as an eager run does.

Before, a graph traced while ``Cfg.SINK`` held ``Sink(a)`` was reused after
``Cfg.SINK = Sink(b)``: its callback still read ``a``, and, called with ``h``
being ``b``, no edge ordered it after the copy writing ``b``.
"""
import collections

import numpy as np
from numba import cuda

import graphtrace as gt

SEEN = []


class _Sink(collections.namedtuple("_Sink", "buf")):
    __slots__ = ()

    def read(self, _tick):
        SEEN.append(float(self.buf[0]))


class _Cfg:
    SINK = None


@gt.graph(backend="sim")
def _copy_then_read(s, x, h, tick):
    s.copy(h, x)
    s.host(_Cfg.SINK.read, tick)


def test_a_namedtuple_a_class_holds_put_anew_is_the_one_its_callback_reads():
    a, b, tick = gt.pinned_empty(4), gt.pinned_empty(4), gt.pinned_empty(1)
    _Cfg.SINK = _Sink(a)
    _copy_then_read(cuda.to_device(np.full(4, 7.0)), b, tick)   # apart: no edge
    _Cfg.SINK = _Sink(b)
    for i in range(20):
        a[:], b[:] = -2.0, -1.0
        x = cuda.to_device(np.full(4, float(i)))
        SEEN.clear()
        _copy_then_read(x, b, tick)
        got = list(SEEN)
        a[:], b[:] = -2.0, -1.0
        SEEN.clear()
        b[:] = x.copy_to_host()   # eager: the copy, then the callback
        _Cfg.SINK.read(tick)
        assert got == SEEN == [float(i)]

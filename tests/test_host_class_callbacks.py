"""A host callback that is a class method reads what it reads off ``cls`` when it
runs, as a bound method reads ``self``'s attributes.

Before, ``s.copy(h, x)`` then ``s.host(Sink.read, tick)``, where ``read`` is a
class method reading ``cls.BUF`` and ``h`` is ``Sink.BUF``, gave a graph with no
edge from the copy to the callback: it could run first and read the previous
contents. A class method reading a device array off ``cls`` was not refused,
while the same read off ``self`` was.
"""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of

SEEN = []


class _Sink:
    BUF = gt.pinned_empty(4)

    @classmethod
    def read(cls, _tick):
        SEEN.append(float(cls.BUF[0]))

    @classmethod
    def read_through(cls, _tick):
        cls.read(_tick)


class _SubSink(_Sink):
    pass


@gt.graph(backend="sim")
def _copy_then_read(s, x, h, tick):
    s.copy(h, x)
    s.host(_Sink.read, tick)


@gt.graph(backend="sim")
def _copy_then_read_through(s, x, h, tick):
    s.copy(h, x)
    s.host(_SubSink.read_through, tick)


@pytest.mark.parametrize("f", [_copy_then_read, _copy_then_read_through])
def test_a_class_method_callback_runs_after_the_writer_of_what_it_reads_off_cls(f):
    f.clear_cache()
    tick, other = gt.pinned_empty(1), gt.pinned_empty(4)
    x = cuda.to_device(np.full(4, 7.0))
    assert f.trace(x, _Sink.BUF, tick).edges() == [(0, 1)]
    assert f.trace(x, other, tick).edges() == []
    for i in range(8):
        _Sink.BUF[:] = -1.0
        x = cuda.to_device(np.full(4, float(i)))
        SEEN.clear()
        f(x, other, tick)        # apart: the callback sees what the class holds
        f(x, _Sink.BUF, tick)    # the array it reads: after the copy writing it
        assert SEEN == [-1.0, float(i)]


class _DeviceSink:
    D = cuda.to_device(np.arange(4.0))

    @classmethod
    def read(cls, h):
        h[:] = cls.D.copy_to_host()


def test_a_class_method_callback_reading_a_device_array_off_cls_is_refused_at_its_line():
    @gt.graph(backend="sim")
    def f(s, h):
        s.host(_DeviceSink.read, h)                          # class-device
    with pytest.raises(gt.ArgumentError) as e:
        f(gt.pinned_empty(4))
    assert e.value.source[1] == line_of(__file__, "class-device"), str(e.value)
    assert "device memory" in str(e.value) and "attribute 'D'" in str(e.value), str(e.value)
    assert "cannot touch the GPU" in str(e.value), str(e.value)

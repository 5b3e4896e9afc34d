"""A host callback that is an instance's method reads what the instance's class
holds as its own attribute (``self.BUF`` of ``class Sink: BUF = h``) when it
runs, as it reads the instance's own attributes.

Before, ``s.copy(h, x)`` then ``s.host(sink.read, tick)``, where ``read`` reads
``self.BUF`` and ``h`` is ``Sink.BUF``, gave a graph with no edge from the copy
to the callback: it could run first and read the previous contents. A device
array the class holds, read the same way, was not refused.
"""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of

SEEN = []


class _Sink:
    BUF = gt.pinned_empty(4)

    def read(self, _tick):
        SEEN.append(float(self.BUF[0]))


class _SubSink(_Sink):
    pass


class _Callable(_Sink):
    def __call__(self, tick):
        self.read(tick)


_SINK, _SUB, _CALLABLE = _Sink(), _SubSink(), _Callable()


@gt.graph(backend="sim")
def _copy_then_read(s, x, h, tick):
    s.copy(h, x)
    s.host(_SINK.read, tick)


@gt.graph(backend="sim")
def _copy_then_read_of_a_subclass(s, x, h, tick):
    s.copy(h, x)
    s.host(_SUB.read, tick)   # what a base holds


@gt.graph(backend="sim")
def _copy_then_call(s, x, h, tick):
    s.copy(h, x)
    s.host(_CALLABLE, tick)


_ALL = [_copy_then_read, _copy_then_read_of_a_subclass, _copy_then_call]


def _eager(x, h, tick):
    h[:] = x.copy_to_host()
    SEEN.append(float(_Sink.BUF[0]))   # what each callback reads, in program order


@pytest.mark.parametrize("f", _ALL)
def test_an_instance_method_runs_after_the_writer_of_what_it_reads_off_its_class(f):
    f.clear_cache()
    tick, other = gt.pinned_empty(1), gt.pinned_empty(4)
    x = cuda.to_device(np.full(4, 7.0))
    assert f.trace(x, _Sink.BUF, tick).edges() == [(0, 1)]
    assert f.trace(x, other, tick).edges() == []
    for i in range(20):
        _Sink.BUF[:] = -1.0
        x = cuda.to_device(np.full(4, float(i)))
        SEEN.clear()
        f(x, other, tick)        # apart: the callback sees what the class holds
        f(x, _Sink.BUF, tick)    # the array it reads: after the copy writing it
        assert SEEN == [-1.0, float(i)]


@pytest.mark.parametrize("f", _ALL)
def test_the_class_attribute_put_anew_is_the_one_ordered_after_its_writer(f):
    """Traced while the class held another array, a call after ``Sink.BUF = b``
    with ``h`` being ``b`` is ordered as an eager run is."""
    f.clear_cache()
    kept = _Sink.BUF
    a, b, tick = gt.pinned_empty(4), gt.pinned_empty(4), gt.pinned_empty(1)
    try:
        _Sink.BUF = a
        f(cuda.to_device(np.full(4, 7.0)), b, tick)   # apart: no edge
        _Sink.BUF = b
        for i in range(20):
            b[:] = -1.0
            x = cuda.to_device(np.full(4, float(i)))
            SEEN.clear()
            f(x, b, tick)
            got = list(SEEN)
            b[:] = -1.0
            SEEN.clear()
            _eager(x, b, tick)
            assert got == SEEN == [float(i)]
    finally:
        _Sink.BUF = kept


class _Shadowed(_Sink):
    def __init__(self, buf):
        self.BUF = buf   # its own, hiding the class's


def test_an_attribute_the_instance_holds_itself_hides_the_class_one():
    own, tick = gt.pinned_empty(4), gt.pinned_empty(1)
    sink = _Shadowed(own)

    @gt.graph(backend="sim")
    def f(s, x, h, t):
        s.copy(h, x)
        s.host(sink.read, t)
    x = cuda.to_device(np.full(4, 3.0))
    assert f.trace(x, _Sink.BUF, tick).edges() == []
    assert f.trace(x, own, tick).edges() == [(0, 1)]


class _DeviceSink:
    D = cuda.to_device(np.arange(4.0))

    def read(self, h):
        h[:] = self.D.copy_to_host()


def test_a_device_array_an_instance_method_reads_off_its_class_is_refused_at_its_line():
    dev = _DeviceSink()

    @gt.graph(backend="sim")
    def f(s, h):
        s.host(dev.read, h)                                  # instance-class-device
    with pytest.raises(gt.ArgumentError) as e:
        f(gt.pinned_empty(4))
    assert e.value.source[1] == line_of(__file__, "instance-class-device"), str(e.value)
    assert "device memory" in str(e.value) and "attribute 'D'" in str(e.value), str(e.value)
    assert "cannot touch the GPU" in str(e.value), str(e.value)


class _Model:
    BUF = gt.pinned_empty(4)

    def read(self, _tick):
        SEEN.append(float(self.BUF[0]))

    @gt.graph(backend="sim")
    def step(self, s, x, h, tick):
        s.copy(h, x)
        s.host(self.read, tick)                              # self-class-array


def test_a_graph_methods_callback_reading_its_class_array_handed_as_an_argument_is_refused():
    """As one reading an array of the instance's own handed so is: not run unordered."""
    with pytest.raises(gt.ArgumentError) as e:
        _Model().step(cuda.to_device(np.ones(4)), _Model.BUF, gt.pinned_empty(1))
    assert e.value.source[1] == line_of(__file__, "self-class-array"), str(e.value)
    assert "attribute 'BUF'" in str(e.value) and "s.host(fn, h)" in str(e.value), str(e.value)

"""A host callback that is a method of an object without a ``__dict__`` (its
class has ``__slots__``, a ``@dataclass(slots=True)``, a namedtuple's subclass)
reads the object's attributes when it runs, as one of an ordinary object does.

Before, ``s.copy(h, x)`` then ``s.host(sink.read, tick)``, where ``sink`` is
slotted and ``read`` reads ``self.buf``, that is ``h``, gave a graph with no edge
from the copy to the callback: it could run first and read the previous
contents. A slotted object's device array the callback reads was not refused.
"""
import collections
import dataclasses

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of

SEEN = []


class _Slotted:
    __slots__ = ("buf",)

    def __init__(self, buf):
        self.buf = buf

    def read(self, _tick):
        SEEN.append(float(self.buf[0]))


class _SlottedChild(_Slotted):
    __slots__ = ("other",)

    def __init__(self, buf):
        super().__init__(buf)
        self.other = None


@dataclasses.dataclass(slots=True)
class _Data:
    buf: object

    def read(self, _tick):
        SEEN.append(float(self.buf[0]))


class _CallableSlotted:
    __slots__ = ("buf",)

    def __init__(self, buf):
        self.buf = buf

    def __call__(self, _tick):
        SEEN.append(float(self.buf[0]))


class _Outer:
    __slots__ = ("inner",)

    def __init__(self, buf):
        self.inner = _Slotted(buf)

    def read(self, tick):
        self.inner.read(tick)


@pytest.mark.parametrize("make", [
    lambda b: _Slotted(b).read, lambda b: _SlottedChild(b).read, lambda b: _Data(b).read,
    lambda b: _CallableSlotted(b), lambda b: _Outer(b).read])
def test_a_slotted_objects_method_runs_after_the_writer_of_what_it_reads(make):
    target, other, tick = gt.pinned_empty(4), gt.pinned_empty(4), gt.pinned_empty(1)
    cb = make(target)

    @gt.graph(backend="sim")
    def f(s, x, h, t):
        s.copy(h, x)
        s.host(cb, t)
    x = cuda.to_device(np.full(4, 7.0))
    assert f.trace(x, target, tick).edges() == [(0, 1)]
    assert f.trace(x, other, tick).edges() == []
    for i in range(8):
        target[:] = -1.0
        x = cuda.to_device(np.full(4, float(i)))
        SEEN.clear()
        f(x, other, tick)    # apart: the callback sees what the object holds
        f(x, target, tick)   # the array it reads: after the copy writing it
        assert SEEN == [-1.0, float(i)]


class _DeviceSlot:
    __slots__ = ("d",)

    def __init__(self):
        self.d = cuda.to_device(np.arange(4.0))

    def read(self, h):
        h[:] = self.d.copy_to_host()


class _NamedDevice(collections.namedtuple("_NamedDevice", "d")):
    __slots__ = ()

    def read(self, h):
        h[:] = self.d.copy_to_host()


@pytest.mark.parametrize("make", [_DeviceSlot, lambda: _NamedDevice(cuda.to_device(np.ones(4)))])
def test_a_slotted_objects_device_array_its_method_reads_is_refused_at_its_line(make):
    dev = make()

    @gt.graph(backend="sim")
    def f(s, h):
        s.host(dev.read, h)                                  # slot-device
    with pytest.raises(gt.ArgumentError) as e:
        f(gt.pinned_empty(4))
    assert e.value.source[1] == line_of(__file__, "slot-device"), str(e.value)
    assert "device memory" in str(e.value) and "attribute 'd'" in str(e.value), str(e.value)


def _copy_out(o, h):
    h[:] = o.d.copy_to_host()


def test_a_slotted_object_handed_to_a_callback_holding_a_device_array_is_refused():
    """As an ordinary object's is: the callback would read device memory."""
    @gt.graph(backend="sim")
    def f(s, o, h):
        s.host(_copy_out, o, h)                              # slot-argument
    with pytest.raises(gt.ArgumentError) as e:
        f(_DeviceSlot(), gt.pinned_empty(4))
    assert e.value.source[1] == line_of(__file__, "slot-argument"), str(e.value)
    assert "argument 0's attribute 'd'" in str(e.value), str(e.value)

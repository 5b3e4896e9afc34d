"""A bound method handed to s.host by a closure name, or held in a closure's or
global's list or dict, whose object holds a pinned array of which the graph
function is passed a view.

``s.host(SINK.read)`` written out was ordered after the copy writing the view;
the same method held by a closure name (``make(SINK.read)``), a list or dict was
refused, saying the object held the view: the object was left out of the held
objects whose arrays the key follows, so its buffer was taken for an array it
kept of the first call. It is such an object as ``SINK`` is.
"""
import dataclasses

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of

SEEN = []
BIG = gt.pinned_empty(8)
OTHER = gt.pinned_empty(8)


class _Sink:
    def __init__(self, h):
        self.h = h

    def read(self):
        SEEN.append(self.h[:4].copy())

    @property
    def head(self):
        return self.h[:4]

    def read_head(self):   # reads the buffer through a property
        SEEN.append(self.head.copy())


@dataclasses.dataclass
class _DataSink:
    h: object

    def read(self):
        SEEN.append(self.h[:4].copy())


SINK = _Sink(BIG)
LIST, DICT = [SINK.read], {"cb": SINK.read}


def _closing(cb):
    @gt.graph(backend="sim")
    def f(s, d, hv):
        s.copy(hv, d)
        s.host(cb)
    return f


def _closing_list(box):
    @gt.graph(backend="sim")
    def f(s, d, hv):
        s.copy(hv, d)
        s.host(box[0])
    return f


def _closing_dict(box):
    @gt.graph(backend="sim")
    def f(s, d, hv):
        s.copy(hv, d)
        s.host(box["cb"])
    return f


@gt.graph(backend="sim")
def _global_list(s, d, hv):
    s.copy(hv, d)
    s.host(LIST[0])


@gt.graph(backend="sim")
def _global_dict(s, d, hv):
    s.copy(hv, d)
    s.host(DICT["cb"])


_SPELLINGS = {
    "closure, global object": lambda: (_closing(SINK.read), SINK),
    "closure, object of its own": lambda: (_closing((o := _Sink(BIG)).read), o),
    "closure, dataclass": lambda: (_closing((o := _DataSink(BIG)).read), o),
    "closure, property": lambda: (_closing(SINK.read_head), SINK),
    "closure's list": lambda: (_closing_list([SINK.read]), SINK),
    "closure's dict": lambda: (_closing_dict({"cb": SINK.read}), SINK),
    "global list": lambda: (_global_list, SINK),
    "global dict": lambda: (_global_dict, SINK),
}


def _call(f, hv, value):
    SEEN.clear()
    d = np.full(4, float(value))
    f(cuda.to_device(d), hv)
    return d


@pytest.mark.parametrize("spelling", list(_SPELLINGS))
def test_a_held_bound_method_runs_after_the_copy_into_a_view_of_its_objects_buffer(spelling):
    """The callback reads BIG[:4] by itself; the graph copies into hv: it is ordered
    after that copy where hv is BIG[:4], whatever view or array hv is at each call."""
    f, _ = _SPELLINGS[spelling]()
    f.clear_cache()
    listing = str(f.trace(cuda.to_device(np.ones(4)), BIG[:4]))
    host = next(line for line in listing.splitlines() if "= host" in line)
    assert "after(%0)" in host and "inout(hv" in host, listing
    _call(f, OTHER[:4], 0)   # traced where hv is not what it reads
    misses = f.cache_info().misses
    _call(f, BIG[:4], 0)
    assert f.cache_info().misses == misses + 1   # traced anew: hv is in BIG now
    for i, hv in enumerate([BIG[:4], BIG[4:], OTHER[:4], BIG[:4], gt.pinned_empty(4),
                            BIG[:4]]):
        d = _call(f, hv, i + 1)
        if hv.ctypes.data == BIG.ctypes.data:
            assert np.array_equal(SEEN[-1], d), (i, SEEN)


@pytest.mark.parametrize("spelling", ["closure, global object", "closure's list"])
def test_a_held_bound_method_follows_its_objects_buffer_replaced_between_calls(spelling):
    """sink.h replaced by another pinned array: the callback reads the new one, and is
    ordered after the copy into a view of that one (the graph traces anew)."""
    f, sink = _SPELLINGS[spelling]()
    f.clear_cache()
    try:
        for i in range(3):
            sink.h = BIG
            d = _call(f, BIG[:4], 10 + i)
            assert np.array_equal(SEEN[-1], d)
            sink.h = OTHER
            d = _call(f, OTHER[:4], 20 + i)
            assert np.array_equal(SEEN[-1], d)
            _call(f, BIG[:4], 30 + i)   # not what it reads now: no matter
            assert np.array_equal(SEEN[-1], d)
    finally:
        sink.h = BIG


def _made():
    return SINK.read


def test_a_callback_made_by_a_call_holding_the_array_an_argument_lies_in_is_refused_naming_it():
    """A bound method a helper returns is no name the graph follows: refused, naming
    the array its object holds (BIG) and that hv lies in it, and what to do."""
    @gt.graph(backend="sim")
    def f(s, d, hv):
        s.copy(hv, d)
        s.host(_made())                                      # made-callback
    with pytest.raises(gt.ArgumentError) as e:
        f(cuda.to_device(np.ones(4)), BIG[:4])
    msg = str(e.value)
    assert e.value.source[1] == line_of(__file__, "made-callback"), msg
    assert "holds BIG by attribute 'h', in which hv of this graph lies" in msg, msg
    assert "s.host(SINK.read)" in msg and "s.host(fn, BIG)" in msg, msg
    assert "holds hv of this graph" not in msg, msg

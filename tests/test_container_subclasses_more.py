"""Container arguments beyond exact dicts, lists and tuples, each compared with
eager code over several calls: what a defaultdict's ``default_factory`` gives
for a missing key and a container subclass's ``__slots__`` key the graph.

On the simulator, where results can be read back: a graph replayed with another
call's factory or slot values computes what eager code would not.
"""
import collections
import logging

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt

pytestmark = pytest.mark.filterwarnings("ignore::graphtrace.StateWarning")


@cuda.jit
def _add(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += a


def _zeros():
    return cuda.to_device(np.zeros(4))


def _value(x) -> float:
    got = x.copy_to_host()
    assert (got == got[0]).all()
    return float(got[0])


def _agrees(f, eager, make, calls):
    """Run graph function ``f`` and ``eager`` on ``make(c)`` for each call ``c``:
    the same sum each time."""
    for c in calls:
        x, want = _zeros(), np.zeros(1)
        f(x, make(c))
        eager(want, make(c))
        assert _value(x) == want[0], c


def _read_missing(s, x, d):
    _add[1, 32, s](x, d["missing"])


def _read_missing_eagerly(x, d):
    x += d["missing"]


_ONE, _TWO = (lambda: 1.0), (lambda: 2.0)


def test_a_defaultdict_of_another_factory_traces_anew():
    f = gt.graph(_read_missing)
    _agrees(f, _read_missing_eagerly, lambda k: collections.defaultdict(k),
            [_ONE, _TWO, _ONE, float, _TWO])
    assert f.cache_info().misses == 3


_SCALE = 1.0


def _scale():
    return _SCALE


def test_a_factory_reading_a_global_is_keyed_by_what_it_reads():
    global _SCALE
    f = gt.graph(_read_missing)
    d = collections.defaultdict(_scale)
    try:
        for scale in (1.0, 3.0, 3.0, 1.0):
            _SCALE = scale
            _agrees(f, _read_missing_eagerly, lambda _: collections.defaultdict(_scale), [0])
            x = _zeros()
            f(x, d)   # the same object: the call shortcut must not replay the old value
            assert _value(x) == scale
    finally:
        _SCALE = 1.0


def test_a_factory_rebound_on_the_same_defaultdict_traces_anew():
    f = gt.graph(_read_missing)
    d = collections.defaultdict(_ONE)
    for factory, want in ((_ONE, 1.0), (_ONE, 1.0), (_TWO, 2.0), (_ONE, 1.0)):
        d.default_factory = factory
        x = _zeros()
        f(x, d)
        assert _value(x) == want


class _Defaults:
    def __init__(self, v):
        self.v = v

    def default(self):
        return self.v


def test_a_bound_method_factory_is_keyed_by_its_object_and_what_it_reads():
    f = gt.graph(_read_missing)
    c = _Defaults(7.0)
    _agrees(f, _read_missing_eagerly, lambda _: collections.defaultdict(c.default), [0, 1])
    assert f.cache_info().misses == 1   # c.default is made anew at each read: one graph
    c.v = 8.0
    _agrees(f, _read_missing_eagerly, lambda _: collections.defaultdict(c.default), [0, 1])


def test_the_log_says_the_factory_changed(caplog):
    caplog.set_level(logging.DEBUG, logger="graphtrace")
    f = gt.graph(_read_missing)
    f(_zeros(), collections.defaultdict(_ONE))
    f(_zeros(), collections.defaultdict(_TWO))
    why = [r.getMessage() for r in caplog.records if r.getMessage().startswith("trace ")]
    assert why[1] == "trace _read_missing: the signature differs from the closest cached " \
        "one: d: its default_factory changed"


class _SlottedRing(list):
    __slots__ = ("i",)


class _SlottedOpts(dict):
    __slots__ = ("key",)


def _ring(i, cls=_SlottedRing, items=(1.0, 2.0)):
    ring = cls(items)
    ring.i = i
    return ring


def _read_current(s, x, ring):
    _add[1, 32, s](x, ring[ring.i])


def _read_current_eagerly(x, ring):
    x += ring[ring.i]


def test_a_list_subclass_s_slot_keys_the_graph():
    f = gt.graph(_read_current)
    _agrees(f, _read_current_eagerly, _ring, [0, 1, 0, 1])
    assert f.cache_info().misses == 2


def test_a_slot_set_anew_on_the_same_list_traces_anew():
    f = gt.graph(_read_current)
    ring = _ring(0)
    for i in (0, 0, 1, 0):
        ring.i = i   # the same object: the call shortcut must not replay the old slot
        _agrees(f, _read_current_eagerly, lambda _: ring, [i])


def test_a_dict_subclass_s_slot_keys_the_graph():
    def opts(key):
        d = _SlottedOpts(a=1.0, b=2.0)
        d.key = key
        return d

    def eager(x, d):
        x += d[d.key]

    @gt.graph
    def f(s, x, d):
        _add[1, 32, s](x, d[d.key])

    _agrees(f, eager, opts, ["a", "b", "a"])


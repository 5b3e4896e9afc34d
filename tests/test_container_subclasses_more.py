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



# --- deques, UserDicts, UserLists and ChainMaps: containers as a list or dict is


def _sum_items(s, x, q):
    for v in q:
        _add[1, 32, s](x, v)


def _sum_items_eagerly(x, q):
    for v in q:
        x += v


@pytest.mark.parametrize("make", [collections.deque, collections.UserList,
                                  lambda items: collections.deque(items, maxlen=4)],
                         ids=["deque", "UserList", "deque with maxlen"])
def test_a_sequence_s_numbers_are_dynamic_and_its_length_keys_the_graph(make):
    seen = []

    @gt.graph
    def f(s, x, q):
        seen.append(type(q))
        _sum_items(s, x, q)

    _agrees(f, _sum_items_eagerly, make, [[1.0, 2.0], [3.0, 4.0], [1.0, 2.0, 5.0], [6.0, 7.0]])
    assert seen == [type(make([]))] * 2   # numbers rebound; another length traces anew


def test_a_deque_changed_in_place_is_read_again():
    f = gt.graph(_sum_items)
    q = collections.deque([1.0, 2.0])
    for _ in range(3):
        _agrees(f, _sum_items_eagerly, lambda _: q, [0])
        q.append(1.0)   # the same object: the call shortcut must not replay the old items


def test_a_deque_s_maxlen_keeps_its_behaviour_and_keys_the_graph():
    def push(q):
        q.append(10.0)   # drops the first item where the deque is full
        return q

    @gt.graph
    def f(s, x, q):
        _sum_items(s, x, push(q))

    def eager(x, q):
        _sum_items_eagerly(x, push(collections.deque(q, q.maxlen)))

    _agrees(f, eager, lambda n: collections.deque([1.0, 2.0], maxlen=n), [2, 3, 2, None])


def test_arrays_in_a_deque_rebind():
    a, b = _zeros(), _zeros()

    @gt.graph
    def f(s, q, v):
        _add[1, 32, s](q[0], v)

    q = collections.deque([a, b])
    for _ in range(4):
        f(q, 1.0)
        q.rotate(1)
    assert (_value(a), _value(b)) == (2.0, 2.0)
    assert f.cache_info().misses == 1


def _read_options(s, x, d):
    _add[1, 32, s](x, d["a"])
    _add[1, 32, s](x, d.get("b", 10.0))


def _read_options_eagerly(x, d):
    x += d["a"]
    x += d.get("b", 10.0)


@pytest.mark.parametrize("make", [
    lambda a, b: collections.UserDict(a=a) if b is None else collections.UserDict(a=a, b=b),
    lambda a, b: collections.ChainMap({"a": a}, {} if b is None else {"b": b}),
    lambda a, b: collections.ChainMap({"a": a} if b is None else {"a": a, "b": 0.5},
                                      {"b": 3.0})],
    ids=["UserDict", "ChainMap", "ChainMap overriding"])
def test_a_mapping_s_numbers_are_dynamic_and_its_keys_key_the_graph(make):
    seen = []

    @gt.graph
    def f(s, x, d):
        seen.append(type(d))
        _read_options(s, x, d)

    _agrees(f, _read_options_eagerly, lambda ab: make(*ab),
            [(1.0, None), (2.0, None), (1.0, 4.0), (3.0, 5.0)])
    assert len(seen) == 2 and f.cache_info().misses == 2


def test_a_chain_map_writes_to_its_first_map_and_keeps_its_layers():
    @gt.graph
    def f(s, x, cm):
        cm["b"] = 1.0   # hides the parent's b in this call's copy
        _add[1, 32, s](x, cm.maps[1]["b"])
        _add[1, 32, s](x, cm.parents["b"])

    for b in (2.0, 3.0):
        x = _zeros()
        cm = collections.ChainMap({}, {"b": b})
        f(x, cm)
        assert _value(x) == 2 * b
        assert "b" not in cm.maps[0]   # the caller's is not changed


class _Settings(collections.UserDict):
    """A UserDict of the program's own supplying a default."""

    def __missing__(self, key):
        return self.fallback


def test_a_user_dict_subclass_keeps_its_methods_and_keys_its_attributes():
    def settings(fallback):
        d = _Settings(a=1.0)
        d.fallback = fallback
        return d

    @gt.graph
    def f(s, x, d):
        _add[1, 32, s](x, d["a"])
        _add[1, 32, s](x, d["missing"])

    def eager(x, d):
        x += d["a"] + d["missing"]

    _agrees(f, eager, settings, [2.0, 3.0, 2.0])


def test_a_user_list_s_attributes_key_the_graph():
    def ring(i):
        r = collections.UserList([1.0, 2.0])
        r.i = i
        return r

    _agrees(gt.graph(_read_current), _read_current_eagerly, ring, [0, 1, 0])


def test_a_deque_of_a_subclass_that_cannot_be_copied_is_refused_naming_it():
    class Pair(collections.deque):
        def __init__(self, a, b):
            super().__init__([a, b])

    with pytest.raises(gt.ArgumentError) as e:
        gt.graph(_sum_items)(_zeros(), {"k": Pair(1.0, 2.0)})
    assert "argument q['k'] is a Pair (a subclass of deque), which cannot be copied" \
        in str(e.value)


def test_a_chain_map_holding_what_cannot_be_traced_is_named_by_its_maps():
    with pytest.raises(gt.ArgumentError) as e:
        gt.graph(_read_options)(_zeros(), collections.ChainMap({"a": 1.0, "b": bytearray(2)}))
    assert "argument d.maps[0]['b'] of type bytearray cannot be traced" in str(e.value)


def test_a_host_callback_receives_a_deque_argument_s_values():
    got = []

    def cb(q):
        got.append((type(q), list(q)))

    @gt.graph
    def f(s, x, q):
        _add[1, 32, s](x, 1.0)
        s.host(cb, q)

    for items in ([1.0, 2.0], [3.0, 4.0]):
        f(_zeros(), collections.deque(items))
    assert got == [(collections.deque, [1.0, 2.0]), (collections.deque, [3.0, 4.0])]


_LOG = collections.deque()


def test_a_global_deque_handed_to_a_host_callback_is_itself():
    def cb(log):
        log.append(1)

    @gt.graph
    def f(s, x):
        _add[1, 32, s](x, 1.0)
        s.host(cb, _LOG)

    _LOG.clear()
    for _ in range(3):
        f(_zeros())
    assert list(_LOG) == [1, 1, 1]


def test_the_log_names_what_changed_of_a_deque_or_a_user_dict(caplog):
    caplog.set_level(logging.DEBUG, logger="graphtrace")
    f, g = gt.graph(_sum_items), gt.graph(_read_options)
    f(_zeros(), collections.deque([1.0], maxlen=2))
    f(_zeros(), collections.deque([1.0], maxlen=3))
    g(_zeros(), collections.UserDict(a=1.0))
    g(_zeros(), collections.UserDict(a=1))
    why = [r.getMessage().split(": ", 1)[1] for r in caplog.records
           if r.getMessage().startswith("trace ")]
    assert why == ["first call", "the signature differs from the closest cached one: q: "
                   "its maxlen changed", "first call", "the signature differs from the "
                   "closest cached one: d.data['a']: a number of type float -> int"]

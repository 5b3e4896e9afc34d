"""Arguments that are objects of a subclass of dict, list or tuple (a config
with defaults, an attribute dict, a defaultdict, a Counter, an OrderedDict, a
list carrying attributes) reach the traced function as their own type, with
their attributes and behaviour; the cache key tells the types apart.

On the simulator, where results can be read back: a graph traced with a plain
container in their place computes what eager code would not.
"""
import collections
import logging
import os

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace.errors import ArgumentError


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


class _Config(dict):
    """A dict supplying defaults for the keys not set."""
    DEFAULTS = {"scale": 2.0}

    def get(self, k, default=None):
        return super().get(k, self.DEFAULTS.get(k, default))


class _AttrDict(dict):
    __getattr__ = dict.__getitem__


class _Ring(list):
    """A list of buffers with the index of the current one as an attribute."""


class _Pair(list):
    def __init__(self, a, b):
        super().__init__([a, b])


class _Two(tuple):
    def __new__(cls, a, b):
        return tuple.__new__(cls, (a, b))


def test_a_dict_subclass_overriding_get_keeps_its_method():
    @gt.graph
    def f(s, x, cfg):
        _add[1, 32, s](x, cfg.get("scale", 1.0))

    for _ in range(3):
        x = _zeros()
        f(x, _Config())
        assert _value(x) == 2.0   # a plain dict's get gave 1.0


def test_an_attribute_dict_is_read_by_attribute_and_its_numbers_stay_dynamic():
    seen = []

    @gt.graph
    def f(s, x, cfg):
        seen.append(type(cfg))
        _add[1, 32, s](x, cfg.lr)

    for lr in (0.5, 1.5):
        x = _zeros()
        f(x, _AttrDict(lr=lr))
        assert _value(x) == lr
    assert seen == [_AttrDict]   # one trace: lr is a graph parameter


@pytest.mark.filterwarnings("ignore::graphtrace.StateWarning")
@pytest.mark.parametrize("make", [lambda a: collections.defaultdict(float, a=a),
                                  lambda a: collections.Counter(a=a)])
def test_a_defaultdict_and_a_counter_answer_a_missing_key(make):
    @gt.graph
    def f(s, x, opts):
        _add[1, 32, s](x, opts["a"])
        _add[1, 32, s](x, opts["missing"])

    for a in (1, 2):
        x = _zeros()
        f(x, make(a))
        assert _value(x) == a


def test_an_ordered_dict_and_a_dict_trace_apart():
    seen = []

    @gt.graph
    def f(s, x, opts):
        seen.append(type(opts))
        for v in opts.values():
            _add[1, 32, s](x, v)

    for opts in (collections.OrderedDict(a=1.0, b=2.0), {"a": 1.0, "b": 2.0},
                 _Config(a=1.0, b=2.0), collections.OrderedDict(a=3.0, b=4.0)):
        x = _zeros()
        f(x, opts)
        assert _value(x) == sum(opts.values())
    assert seen == [collections.OrderedDict, dict, _Config]
    assert f.cache_info().misses == 3


def test_a_plain_dict_and_list_are_handed_as_plain_ones():
    seen = []

    @gt.graph
    def f(s, x, opts, vals):
        seen.append((type(opts), type(vals)))
        _add[1, 32, s](x, opts["a"])

    f(_zeros(), {"a": 1.0}, [1.0])
    assert seen == [(dict, list)]


def test_a_list_subclass_keeps_its_attributes_and_keys_their_values():
    @gt.graph
    def f(s, bufs, a):
        _add[1, 32, s](bufs[bufs.i], a)

    x, y = _zeros(), _zeros()
    ring = _Ring([x, y])
    ring.i = 1
    f(ring, 1.0)
    f(ring, 1.0)
    ring.i = 0   # the same object: the call shortcut must not replay the graph of i=1
    f(ring, 1.0)
    assert (_value(x), _value(y)) == (1.0, 2.0)


def test_a_list_subclass_whose_init_takes_other_parameters():
    @gt.graph
    def f(s, bufs, a):
        assert type(bufs) is _Pair
        _add[1, 32, s](bufs[0], a)
        _add[1, 32, s](bufs[1], a)
        _add[1, 32, s](bufs[1], a)

    x, y = _zeros(), _zeros()
    f(_Pair(x, y), 1.0)
    assert (_value(x), _value(y)) == (1.0, 2.0)


def test_a_tuple_subclass_whose_new_takes_other_parameters_keeps_its_attributes():
    @gt.graph
    def f(s, bufs, a):
        _add[1, 32, s](bufs[bufs.k], a)

    x, y = _zeros(), _zeros()
    pair = _Two(x, y)
    pair.k = 1
    f(pair, 1.0)
    assert (_value(x), _value(y)) == (0.0, 1.0)


def test_a_static_attribute_dict():
    @gt.graph(static=("cfg",))
    def f(s, x, cfg):
        _add[1, 32, s](x, cfg.lr)

    for lr in (0.5, 0.5, 1.5):
        x = _zeros()
        f(x, _AttrDict(lr=lr))
        assert _value(x) == lr
    assert f.cache_info().misses == 2


def test_a_host_callback_receives_the_subclasses():
    got = []

    def cb(cfg, bag):
        got.append((type(cfg), cfg.a, type(bag), bag.tag))

    @gt.graph
    def f(s, x, cfg, bag):
        _add[1, 32, s](x, 1.0)
        s.host(cb, cfg, bag)

    bag = _Ring([1.0])
    bag.tag = "T"
    f(_zeros(), _AttrDict(a=1.0), bag)
    assert got == [(_AttrDict, 1.0, _Ring, "T")]


class _Uncopyable(dict):
    def __reduce_ex__(self, protocol):
        raise RuntimeError("no copies")


def test_a_subclass_that_cannot_be_copied_is_refused_at_the_call():
    @gt.graph
    def f(s, x, cfg):
        _add[1, 32, s](x, cfg["opts"]["a"])

    with pytest.raises(ArgumentError) as e:
        f(_zeros(), {"opts": _Uncopyable(a=1.0)})
    assert "argument cfg['opts'] is a _Uncopyable (a subclass of dict)" in str(e.value)
    assert e.value.source[0] == os.path.abspath(__file__) or \
        os.path.basename(e.value.source[0]) == os.path.basename(__file__)


def test_the_log_says_which_type_or_attributes_changed(caplog):
    caplog.set_level(logging.DEBUG, logger="graphtrace")

    @gt.graph
    def f(s, x, opts, ring):
        _add[1, 32, s](x, opts["a"])
        _add[1, 32, s](x, ring[ring.i])

    x, ring = _zeros(), _Ring([1.0, 2.0])
    ring.i = 0
    f(x, {"a": 1.0}, ring)
    f(x, collections.OrderedDict(a=1.0), ring)
    ring.i = 1
    f(x, collections.OrderedDict(a=1.0), ring)
    why = [r.getMessage() for r in caplog.records if r.getMessage().startswith("trace f:")]
    assert why[1:] == [
        "trace f: the signature differs from the closest cached one: "
        "opts: a dict -> a OrderedDict",
        "trace f: the signature differs from the closest cached one: ring: its attributes changed"]

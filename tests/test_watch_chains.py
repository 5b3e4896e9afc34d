"""Settings read off a global, closure or module name by forms other than a
plain chain of constant keys and attributes: ``getattr`` with a default,
``hasattr``. Each is baked into the graph when traced, so a changed value
(an attribute set later, one changed in place) traces anew.
"""
import collections
import types

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import compiled_buffers

from watch_common import IDS, WALKS, put


def dev():
    return cuda.to_device(np.zeros(2, np.float32))


def calls(f, out, settings) -> list:
    """What ``f(out)`` writes after each change of ``settings`` (callables)."""
    got = []
    for change in settings:
        change()
        f(out)
        got.append(out.copy_to_host()[0])
    return got


class Cfg:
    pass


BY_DEFAULT = Cfg()                  # no lr yet: the default is read
SETTINGS = types.ModuleType("graphtrace_test_settings")


@gt.graph(backend="sim")
def lr_by_default(s, out):
    put[1, 2, s](out, getattr(BY_DEFAULT, "lr", 1.0))


@gt.graph(backend="sim")
def module_lr_by_default(s, out):
    put[1, 2, s](out, getattr(SETTINGS, "LR", 1.0))


@gt.graph(backend="sim")
def boost_if_there(s, out):
    put[1, 2, s](out, BY_DEFAULT.boost if hasattr(BY_DEFAULT, "boost") else 1.0)


def closure_lr_by_default():
    cfg = Cfg()

    @gt.graph(backend="sim")
    def f(s, out):
        put[1, 2, s](out, getattr(cfg, "lr", 1.0))
    return cfg, f


@pytest.mark.parametrize("on", WALKS, ids=IDS.get)
def test_a_setting_read_by_getattr_with_a_default_is_watched(on):
    """``getattr(CFG, "lr", 1.0)``: the attribute absent when traced and set later,
    or changed, traces anew, off a global object, a module and a closure cell."""
    cfg, by_closure = closure_lr_by_default()
    with compiled_buffers(on):
        for f, obj, name in ((lr_by_default, BY_DEFAULT, "lr"),
                             (module_lr_by_default, SETTINGS, "LR"), (by_closure, cfg, "lr")):
            f.clear_cache()
            misses = f.cache_info().misses
            try:
                got = calls(f, dev(), (lambda: None, lambda: setattr(obj, name, 3.0),
                                       lambda: setattr(obj, name, 4.0),
                                       lambda: delattr(obj, name)))
            finally:
                obj.__dict__.pop(name, None)
            assert got == [1.0, 3.0, 4.0, 1.0]
            assert f.cache_info().misses - misses == 3   # the default's graph found again


@pytest.mark.parametrize("on", WALKS, ids=IDS.get)
def test_an_attribute_absent_behind_hasattr_and_set_later_traces_anew(on):
    """``CFG.boost if hasattr(CFG, "boost") else 1.0``: traced without it, the graph
    kept the default after ``CFG.boost = 3.0``."""
    with compiled_buffers(on):
        boost_if_there.clear_cache()
        misses = boost_if_there.cache_info().misses
        try:
            got = calls(boost_if_there, dev(),
                        (lambda: None, lambda: None, lambda: setattr(BY_DEFAULT, "boost", 3.0),
                         lambda: setattr(BY_DEFAULT, "boost", 5.0)))
        finally:
            BY_DEFAULT.__dict__.pop("boost", None)
        assert got == [1.0, 1.0, 3.0, 5.0]
        assert boost_if_there.cache_info().misses - misses == 3


class _Model:
    def __init__(self):
        self.cfg = Cfg()

    @gt.graph(backend="sim")
    def run(self, s, out):
        put[1, 2, s](out, getattr(self.cfg, "lr", 1.0))


def test_a_setting_read_off_self_by_getattr_with_a_default_is_watched():
    m, out = _Model(), dev()
    assert calls(m.run, out, (lambda: None, lambda: setattr(m.cfg, "lr", 3.0))) == [1.0, 3.0]


CHAINED = {"opt": {"lr": 1.0}, "ns": types.SimpleNamespace(lr=1.0)}
MODEL = {"layers": [cuda.to_device(np.zeros(2, np.float32))], "opt": {"lr": 1.0}}


@gt.graph(backend="sim")
def get_then_get(s, out):
    put[1, 2, s](out, CHAINED.get("opt", {}).get("lr", 0.5))


@gt.graph(backend="sim")
def get_then_item(s, out):
    put[1, 2, s](out, CHAINED.get("opt")["lr"])


@gt.graph(backend="sim")
def get_then_attr(s, out):
    put[1, 2, s](out, CHAINED.get("ns").lr)


@gt.graph(backend="sim")
def get_beside_arrays(s, out):
    put[1, 2, s](out, MODEL.get("opt").get("lr"))
    put[1, 2, s](MODEL["layers"][0], 0.0)


def _set(d, key, v):
    return lambda: d.__setitem__(key, v)


@pytest.mark.parametrize("on", WALKS, ids=IDS.get)
def test_reads_chained_after_dict_get_are_watched(on):
    """``CFG.get("opt", {}).get("lr", 0.5)``, ``CFG.get("opt")["lr"]``,
    ``CFG.get("opt").lr``, ``MODEL.get("opt").get("lr")`` beside arrays: changed in
    place or held by a new object, they trace anew, as ``CFG["opt"]["lr"]`` does."""
    keep = CHAINED["opt"], CHAINED["ns"], MODEL["opt"]
    nothing = lambda: None  # noqa: E731
    try:
        with compiled_buffers(on):
            for f, d, key, first, second, third in (
                    (get_then_get, CHAINED, "opt", {"lr": 1.0}, {"lr": 5.0}, {}),
                    (get_then_item, CHAINED, "opt", {"lr": 1.0}, {"lr": 5.0}, {"lr": 6.0}),
                    (get_then_attr, CHAINED, "ns", types.SimpleNamespace(lr=1.0),
                     types.SimpleNamespace(lr=5.0), types.SimpleNamespace(lr=6.0)),
                    (get_beside_arrays, MODEL, "opt", {"lr": 1.0}, {"lr": 5.0}, {"lr": 6.0})):
                f.clear_cache()
                d[key] = first
                obj = first

                def in_place():
                    if isinstance(obj, dict):
                        obj["lr"] = 3.0
                    else:
                        obj.lr = 3.0
                got = calls(f, dev(), (nothing, in_place, _set(d, key, second),
                                       _set(d, key, third)))
                want = [1.0, 3.0, 5.0, 0.5 if f is get_then_get else 6.0]
                assert got == want, f.__name__
    finally:
        CHAINED["opt"], CHAINED["ns"], MODEL["opt"] = keep


@gt.graph(backend="sim")
def get_absent_then_get(s, out):
    put[1, 2, s](out, CHAINED.get("sched", {}).get("lr", 0.5))


def test_a_dict_put_later_under_a_key_read_by_get_then_get_traces_anew():
    """``CFG.get("sched", {}).get("lr", 0.5)`` traced without ``"sched"``: one put
    there later traces anew, and its value is watched from then on."""
    try:
        got = calls(get_absent_then_get, dev(),
                    (lambda: None, _set(CHAINED, "sched", {"lr": 2.0}),
                     lambda: CHAINED["sched"].__setitem__("lr", 4.0)))
    finally:
        CHAINED.pop("sched", None)
    assert got == [0.5, 2.0, 4.0]


UNPACKED = {"opt": {"lr": 1.0}, "sched": {"warmup": 0.0}, "a": {"x": 0.0}, "b": {"x": 0.0}}


@gt.graph(backend="sim")
def unpacks_two(s, out):
    opt, sched = UNPACKED["opt"], UNPACKED["sched"]   # each local assigned once
    put[1, 2, s](out, opt["lr"] + sched["warmup"])


@gt.graph(backend="sim")
def unpacks_four(s, out):
    a, opt, b, sched = UNPACKED["a"], UNPACKED["opt"], UNPACKED["b"], UNPACKED["sched"]
    put[1, 2, s](out, opt["lr"] + sched["warmup"] + a["x"] + b["x"])


@pytest.mark.parametrize("on", WALKS, ids=IDS.get)
def test_a_local_assigned_once_by_tuple_unpacking_from_chains_is_read_through(on):
    """``opt, sched = CFG["opt"], CFG["sched"]`` then ``opt["lr"]`` reads
    ``CFG["opt"]["lr"]``, as ``opt = CFG["opt"]`` does: a change in place traces
    anew (two names are stored in reverse, four through a tuple)."""
    with compiled_buffers(on):
        for f in (unpacks_two, unpacks_four):
            f.clear_cache()
            try:
                got = calls(f, dev(), (lambda: None, _set(UNPACKED["opt"], "lr", 3.0),
                                       _set(UNPACKED["sched"], "warmup", 1.0)))
            finally:
                UNPACKED["opt"]["lr"], UNPACKED["sched"]["warmup"] = 1.0, 0.0
            assert got == [1.0, 3.0, 4.0], f.__name__


class _Schedule:
    LR = 1.0

    @classmethod
    def lr(cls):
        return cls.LR


@pytest.mark.parametrize("on", WALKS, ids=IDS.get)
def test_a_setting_a_class_method_reads_off_its_class_is_watched(on):
    """``Model.lr()`` reading ``cls.LR``: the class method's reads off ``cls`` were
    not watched (``cls`` is its parameter), so a new ``LR`` replayed the first."""
    @gt.graph(backend="sim")
    def f(s, x):
        put[1, 2, s](x, _Schedule.lr())
    with compiled_buffers(on):
        x = dev()
        try:
            for lr in (1.0, 5.0, 2.5):
                _Schedule.LR = lr
                f(x)
                assert x.copy_to_host().tolist() == [lr, lr]
        finally:
            _Schedule.LR = 1.0


COEF_SET, COEF_DEQUE, COEF_CFG = {1.0}, collections.deque([1.0]), {"coefs": {1.0}}


@pytest.mark.parametrize("on", WALKS, ids=IDS.get)
@pytest.mark.parametrize("which", ["set", "deque", "set off a dict"])
def test_a_set_or_deque_read_whole_and_changed_in_place_is_seen_by_a_repeated_call(on, which):
    """The call with the very arguments of the last one compared what names
    hold by identity: a set or deque changed in place is the same object, and
    the first graph replayed."""
    held = {"set": COEF_SET, "deque": COEF_DEQUE, "set off a dict": COEF_CFG["coefs"]}[which]

    @gt.graph(backend="sim")
    def f(s, out):
        put[1, 2, s](out, sum(COEF_SET) if which == "set" else sum(COEF_DEQUE)
                     if which == "deque" else sum(COEF_CFG["coefs"]))
    with compiled_buffers(on):
        out = dev()
        try:
            for more in (10.0, 100.0):
                f(out)
                held.add(more) if isinstance(held, set) else held.append(more)
                f(out)   # the same argument object
                assert out.copy_to_host().tolist() == [sum(held)] * 2
        finally:
            held.clear()
            held.add(1.0) if isinstance(held, set) else held.append(1.0)


class _Tags:
    def __init__(self):
        self.tags = {1.0}
        self.queue = collections.deque([1.0])


class _Tagged:
    def __init__(self):
        self.opt = _Tags()

    @gt.graph(backend="sim")
    def step(self, s, out):
        put[1, 2, s](out, sum(self.opt.tags) + sum(self.opt.queue))


@pytest.mark.parametrize("on", WALKS, ids=IDS.get)
def test_a_set_or_deque_an_object_holds_read_whole_by_a_method_is_keyed(on):
    """``sum(self.opt.tags)``: a set or deque held one object down was left out of
    the cache key (lists and dicts were in), so a change in place replayed the
    first graph, new arguments or not."""
    with compiled_buffers(on):
        m = _Tagged()
        for more in (10.0, 100.0):
            f_out = dev()
            m.step(f_out)
            m.opt.tags.add(more)
            m.opt.queue.append(more)
            m.step(dev())
            m.step(f_out)
            assert f_out.copy_to_host().tolist() == [sum(m.opt.tags) + sum(m.opt.queue)] * 2


DEFAULTS = {"a": 1.0}


def _helper_with_default(s, out, cfg=DEFAULTS):
    put[1, 2, s](out, cfg["a"])


@gt.graph(backend="sim")
def _inner_with_default(s, out, cfg=DEFAULTS):
    put[1, 2, s](out, cfg["a"])


def _read_default(cfg=DEFAULTS):
    return cfg["a"]


@pytest.mark.parametrize("on", WALKS, ids=IDS.get)
@pytest.mark.parametrize("how", ["helper", "nested graph", "function argument"])
def test_a_setting_read_off_a_callees_mutable_default_is_watched(on, how):
    """``def helper(s, out, cfg=CFG)`` reading ``cfg["a"]``: the default is the
    global's object, changed in place; only the graph function's own defaults
    were watched, so the first value replayed."""
    @gt.graph(backend="sim")
    def f(s, out, get):
        if how == "helper":
            _helper_with_default(s, out)
        elif how == "nested graph":
            _inner_with_default(s, out)
        else:
            put[1, 2, s](out, get())
    with compiled_buffers(on):
        out = dev()
        try:
            for a in (1.0, 2.0, 3.0):
                DEFAULTS["a"] = a
                f(out, _read_default)
                f(out, _read_default)
                assert out.copy_to_host().tolist() == [a, a]
        finally:
            DEFAULTS["a"] = 1.0


PAIR_CFG = {"lr": 2.0, "scale": (3.0, 4.0)}


@gt.graph(backend="sim")
def _indexes_a_tuple_of_chains(s, out):
    pair = (PAIR_CFG["scale"], out)   # a tuple built of a chain and more, named once
    put[1, 2, s](pair[1], PAIR_CFG["lr"] * pair[0][1])


def test_a_tuple_built_of_chains_and_indexed_twice_is_read():
    """The local named a tuple of chains, taken for a chain: pair[1][1] crashed the
    walk of the code (TypeError in chains.value_chains)."""
    out = dev()
    _indexes_a_tuple_of_chains(out)
    assert out.copy_to_host().tolist() == [8.0, 8.0]
    PAIR_CFG["lr"] = 1.0
    _indexes_a_tuple_of_chains(out)
    assert out.copy_to_host().tolist() == [4.0, 4.0]

"""Objects of the program's own classes that the graph function makes while
traced (``Init().lr``, ``Sched().rate()``, ``factory().m()``, ``o = Opts();
o.lr``). What their ``__init__``, methods, properties and ``__call__`` read of
global names, and the class values read off them, is baked into the graph: it
is watched, as what a helper called by name reads is, so a change between calls
traces anew. The graph replayed the first trace's value, with no warning."""
import dataclasses
import sys
import types

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt

_MOD = sys.modules[__name__]
_LR = 0.5


@cuda.jit
def add(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += a


class _Init:
    def __init__(self):
        self.lr = _LR


class _Sched:
    def rate(self):
        return _LR * 2


class _K:
    def m(self):
        return _LR * 3


def _factory():
    return _K()


class _Prop:
    @property
    def lr(self):
        return _LR + 1


class _Base:
    def __init__(self):
        self.lr = _LR * 4


class _Derived(_Base):
    def __init__(self):
        super().__init__()


class _Over(_Sched):
    def rate(self):
        return super().rate() * 4   # the base's reads the global


class _Callable:
    def __call__(self):
        return _LR * 5


@dataclasses.dataclass
class _Post:
    lr: float = 0.0

    def __post_init__(self):
        self.lr = _LR * 6


class _Opts:
    lr = 0.5   # a class value read through an instance the graph function makes


def _closure_class():
    class Local:
        def __init__(self):
            self.lr = _LR * 7
    return Local


_Local = _closure_class()
_NS = types.SimpleNamespace(Init=_Init)   # a class behind a holder's attribute


def _graphs():
    local = _Local

    @gt.graph(backend="sim")
    def init(s, x):
        add[1, 2, s](x, _Init().lr)

    @gt.graph(backend="sim")
    def method(s, x):
        add[1, 2, s](x, _Sched().rate())

    @gt.graph(backend="sim")
    def factory(s, x):
        add[1, 2, s](x, _factory().m())

    @gt.graph(backend="sim")
    def over(s, x):
        add[1, 2, s](x, _Over().rate())

    @gt.graph(backend="sim")
    def prop(s, x):
        add[1, 2, s](x, _Prop().lr)

    @gt.graph(backend="sim")
    def base(s, x):
        add[1, 2, s](x, _Derived().lr)

    @gt.graph(backend="sim")
    def call(s, x):
        add[1, 2, s](x, _Callable()())

    @gt.graph(backend="sim")
    def post(s, x):
        add[1, 2, s](x, _Post().lr)

    @gt.graph(backend="sim")
    def closure(s, x):
        add[1, 2, s](x, local().lr)

    @gt.graph(backend="sim")
    def dotted(s, x):
        add[1, 2, s](x, _NS.Init().lr)

    return {"dotted": (dotted, 1), "init": (init, 1), "method": (method, 2), "super() method": (over, 8), "factory": (factory, 3),
            "property": (prop, None), "base __init__": (base, 4), "__call__": (call, 5),
            "__post_init__": (post, 6), "closure class": (closure, 7)}


@pytest.mark.parametrize("form", list(_graphs()))
def test_a_global_read_by_code_an_object_made_in_the_graph_runs_is_watched(form, monkeypatch):
    """The global's first value was baked in and replayed by every later call."""
    fn, times = _graphs()[form]
    for lr in (0.5, 2.0, 3.0):
        monkeypatch.setattr(_MOD, "_LR", lr)
        x = cuda.to_device(np.zeros(2))
        fn(x)
        want = lr + 1 if times is None else lr * times
        assert float(x.copy_to_host()[0]) == want, (form, lr)


@gt.graph(backend="sim")
def _through_instance(s, x):
    o = _Opts()   # default options
    add[1, 2, s](x, o.lr)


def test_a_class_value_read_through_an_instance_made_in_the_graph_is_watched(monkeypatch):
    """``_Opts.lr`` read off the class was watched; read off an instance, it was not."""
    for lr in (0.5, 2.0, 3.0):
        monkeypatch.setattr(_Opts, "lr", lr)
        x = cuda.to_device(np.zeros(2))
        _through_instance(x)
        assert float(x.copy_to_host()[0]) == lr


class _Shadowed:
    lr = 0.5

    def __init__(self, lr):
        self.lr = lr   # the instance's own: the class value is hidden


@gt.graph(backend="sim")
def _shadowed(s, x, lr):
    add[1, 2, s](x, _Shadowed(lr).lr)


def test_a_class_value_an_instance_hides_keys_nothing():
    """Set on each instance, the class's value is never read: changing it traces
    nothing anew."""
    x = cuda.to_device(np.zeros(2))
    _shadowed(x, 1.0)
    _Shadowed.lr = 9.0
    try:
        _shadowed(x, 1.0)
        assert _shadowed.cache_info().misses == 1
    finally:
        _Shadowed.lr = 0.5
    assert float(x.copy_to_host()[0]) == 2.0

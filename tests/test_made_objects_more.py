"""Classes the graph function's code reaches other than by a name of their own,
and class values and methods that change after the first trace
(``test_made_objects.py`` has the plain forms). What the code of the objects it
makes reads is baked into the graph: each change between calls must trace anew,
where the graph replayed the first trace's value, with no warning."""
import sys

import numpy as np
from numba import cuda

import graphtrace as gt

_MOD = sys.modules[__name__]
_LR = 0.5


@cuda.jit
def add(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += a


def _run(fn, *args) -> float:
    x = cuda.to_device(np.zeros(2))
    fn(x, *args)
    return float(x.copy_to_host()[0])


# --- a class value that holds None at the first trace, a number later

class _Unset:
    lr = None   # not set yet: the code falls back on a default


@gt.graph(backend="sim")
def _unset_made(s, x):
    o = _Unset()
    add[1, 2, s](x, o.lr if o.lr is not None else 0.5)


@gt.graph(backend="sim")
def _unset_passed(s, x, o):
    add[1, 2, s](x, o.lr if o.lr is not None else 0.5)


def test_a_class_value_set_from_none_after_the_first_trace_traces_anew(monkeypatch):
    """None was not watched: the fallback the first trace took was replayed."""
    o = _Unset()
    assert _run(_unset_made) == _run(_unset_passed, o) == 0.5
    monkeypatch.setattr(_Unset, "lr", 2.0)
    assert _run(_unset_made) == _run(_unset_passed, o) == 2.0
    monkeypatch.setattr(_Unset, "lr", None)
    assert _run(_unset_made) == _run(_unset_passed, o) == 0.5


# --- a method put on the class after the first trace

class _Rate:
    def __init__(self):
        self.lr = 0.5

    def rate(self):
        return 0.5


class _SubRate(_Rate):   # runs its base's rate until it is given its own
    pass


@gt.graph(backend="sim")
def _rate_made(s, x):
    add[1, 2, s](x, _Rate().rate())


@gt.graph(backend="sim")
def _sub_rate_made(s, x):
    add[1, 2, s](x, _SubRate().rate())


@gt.graph(backend="sim")
def _init_made(s, x):
    add[1, 2, s](x, _SubRate().lr)


def _init_lr(lr):
    def __init__(self):
        self.lr = lr
    return __init__


def test_a_method_put_on_the_class_after_the_first_trace_runs(monkeypatch):
    """The first trace's method was replayed: the class was watched by the name
    holding it, not what it holds by its methods' names."""
    assert _run(_rate_made) == _run(_sub_rate_made) == _run(_init_made) == 0.5
    monkeypatch.setattr(_Rate, "rate", lambda self: 2.0)
    assert _run(_rate_made) == _run(_sub_rate_made) == 2.0
    monkeypatch.setattr(_SubRate, "rate", lambda self: 3.0, raising=False)   # an override
    assert (_run(_rate_made), _run(_sub_rate_made)) == (2.0, 3.0)
    monkeypatch.setattr(_Rate, "__init__", _init_lr(4.0))
    assert _run(_init_made) == 4.0
    monkeypatch.undo()
    assert _run(_rate_made) == _run(_sub_rate_made) == _run(_init_made) == 0.5
    assert _rate_made.cache_info().misses == 2   # the first method back: its graph is cached


# --- a class reached through a container

class _A:
    def __init__(self):
        self.lr = _LR


class _B:
    def rate(self):
        return _LR * 2


class _C:
    def __init__(self):
        self.lr = _LR * 3


class _Valued:
    scale = 0.5   # (a name no code stores: _A's lr is its objects' own)


_CLASSES = {"a": _A, "b": _B, "valued": _Valued}
_PAIR = (_A, _C)


@gt.graph(backend="sim")
def _by_key(s, x):
    add[1, 2, s](x, _CLASSES["a"]().lr + _CLASSES["b"]().rate())


@gt.graph(backend="sim")
def _by_loop(s, x):
    for cls in _PAIR:
        add[1, 2, s](x, cls().lr)


@gt.graph(backend="sim")
def _by_name(s, x, name):
    add[1, 2, s](x, _CLASSES[name]().lr)


@gt.graph(backend="sim")
def _scale_by_name(s, x, name):
    add[1, 2, s](x, _CLASSES[name]().scale)


def test_a_global_read_by_a_class_a_container_holds_is_watched(monkeypatch):
    """The class's code was not walked: the global's first value was replayed."""
    for lr in (0.5, 2.0):
        monkeypatch.setattr(_MOD, "_LR", lr)
        assert (_run(_by_key), _run(_by_loop), _run(_by_name, "a")) == (lr * 3, lr * 4, lr)


def test_a_class_value_read_through_a_container_of_classes_is_watched(monkeypatch):
    for scale in (0.5, 2.0, 3.0):
        monkeypatch.setattr(_Valued, "scale", scale)
        assert _run(_scale_by_name, "valued") == scale


def test_a_class_put_in_the_container_later_is_walked(monkeypatch):
    """One put there after a trace traces anew, and what its code reads is watched."""
    assert _run(_by_key) == _LR * 3
    monkeypatch.setitem(_CLASSES, "a", _C)
    assert _run(_by_key) == _LR * 5
    monkeypatch.setattr(_MOD, "_LR", 2.0)
    assert _run(_by_key) == 10.0


# --- a class reached through an argument

class _Made:
    def __init__(self):
        self.lr = _LR


class _HoldsClass:
    def __init__(self):
        self.cls = _Made


@gt.graph(backend="sim")
def _class_passed(s, x, cls):
    add[1, 2, s](x, cls().lr)


@gt.graph(backend="sim")
def _class_held_by_argument(s, x, cfg):
    add[1, 2, s](x, cfg.cls().lr)


@gt.graph(backend="sim")
def _type_of_argument(s, x, o):
    add[1, 2, s](x, type(o)().lr)


def test_a_global_read_by_a_class_an_argument_gives_is_watched(monkeypatch):
    """The class was keyed by identity alone: what its __init__ read was replayed."""
    cfg, o = _HoldsClass(), _Made()
    for lr in (0.5, 2.0):
        monkeypatch.setattr(_MOD, "_LR", lr)
        assert (_run(_class_passed, _Made), _run(_class_held_by_argument, cfg),
                _run(_type_of_argument, o)) == (lr, lr, lr)
    assert _class_passed.cache_info().misses == 2

"""What the objects a graph function makes read, where it reaches them by ways
``test_made_objects_more.py`` leaves out: a class put in a container after the
first trace, a defaultdict's factory, a constant ``getattr`` name, a class value
absent at the first trace or changed in place, a metaclass's ``__call__``. Each
change between calls must trace anew (or be warned of), where the graph replayed
the first trace's value with no warning."""
import collections
import functools
import sys

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


def _run(fn, *args) -> float:
    x = cuda.to_device(np.zeros(2))
    fn(x, *args)
    return float(x.copy_to_host()[0])


# --- a class put in a container after the first trace

class _One:
    def rate(self):
        return 1.0


class _Later:
    def rate(self):
        return _LR * 10


_LIST = [_One]
_REGISTRY = {"one": _One}


@gt.graph(backend="sim")
def _each_listed(s, x):
    for cls in _LIST:
        add[1, 2, s](x, cls().rate())


@gt.graph(backend="sim")
def _registered(s, x, name):
    add[1, 2, s](x, _REGISTRY[name]().rate())


def test_a_class_appended_to_a_list_after_the_first_trace_is_walked(monkeypatch):
    """The retrace the new item causes did not walk its code: _LR was baked in."""
    monkeypatch.setattr(_MOD, "_LIST", [_One])
    assert _run(_each_listed) == 1.0
    _LIST.append(_Later)
    assert _run(_each_listed) == 1.0 + _LR * 10
    monkeypatch.setattr(_MOD, "_LR", 1.0)
    assert _run(_each_listed) == 11.0


def test_a_class_put_under_a_new_key_after_the_first_trace_is_walked(monkeypatch):
    monkeypatch.setattr(_MOD, "_REGISTRY", {"one": _One})
    assert _run(_registered, "one") == 1.0
    _REGISTRY["later"] = _Later
    assert _run(_registered, "later") == _LR * 10
    monkeypatch.setattr(_MOD, "_LR", 1.0)
    assert _run(_registered, "later") == 10.0
    assert _run(_registered, "one") == 1.0


# --- what a defaultdict's default_factory reads, keyed as a function argument's

_SCALE = 1.0


class _Factory:
    def __init__(self, v):
        self.v = v

    def make(self):
        return self.v

    def __call__(self):
        return self.v


class _Num(float):
    def __new__(cls):
        return float.__new__(cls, _SCALE)


def _plain():
    return _SCALE


@gt.graph(backend="sim")
def _missing_key(s, x, d):
    add[1, 2, s](x, float(d["lr"]))


@gt.graph(backend="sim")
def _called(s, x, fn):
    add[1, 2, s](x, float(fn()))


def _factories(fa, co):
    return {"partial of a bound method": functools.partial(fa.make),
            "callable object": co, "class": _Num,
            "partial of a function": functools.partial(_plain)}


@pytest.mark.filterwarnings("ignore::graphtrace.StateWarning")
def test_a_defaultdict_factory_is_keyed_by_what_it_reads(monkeypatch):
    """Keyed by identity and the globals a plain function reads: a partial's
    function, a callable object's __call__ and a class's __new__ were not read."""
    fa, co = _Factory(1.0), _Factory(1.0)
    made = {name: collections.defaultdict(f) for name, f in _factories(fa, co).items()}
    for v in (1.0, 2.0):
        fa.v = co.v = v
        monkeypatch.setattr(_MOD, "_SCALE", v)
        for name, d in made.items():
            assert _run(_missing_key, d.copy()) == v, name


def test_a_function_argument_is_keyed_by_what_it_reads(monkeypatch):
    """A class making itself from a global (class Num(float) with a __new__) was
    keyed by identity alone."""
    fa, co = _Factory(1.0), _Factory(1.0)
    for v in (1.0, 2.0):
        fa.v = co.v = v
        monkeypatch.setattr(_MOD, "_SCALE", v)
        for name, f in _factories(fa, co).items():
            assert _run(_called, f) == v, name


# --- class values read off a made object: by getattr, absent, changed in place

class _Valued:
    lr = 1.0


class _Unset:
    lr = None


class _Opts:
    pass


class _Scales:
    s = [1.0]


@gt.graph(backend="sim")
def _valued_getattr(s, x):
    add[1, 2, s](x, getattr(_Valued(), "lr"))


@gt.graph(backend="sim")
def _unset_getattr(s, x):
    add[1, 2, s](x, getattr(_Unset(), "lr") or 1.0)


@gt.graph(backend="sim")
def _absent(s, x):
    add[1, 2, s](x, getattr(_Opts(), "lr", 1.0))


@gt.graph(backend="sim")
def _first_scale(s, x):
    add[1, 2, s](x, _Scales().s[0])


def test_a_class_value_read_by_getattr_with_a_constant_name_is_watched(monkeypatch):
    """getattr(o, "lr") named no attribute the walk of the made objects saw."""
    assert (_run(_valued_getattr), _run(_unset_getattr)) == (1.0, 1.0)
    monkeypatch.setattr(_Valued, "lr", 2.0)
    monkeypatch.setattr(_Unset, "lr", 5.0)
    assert (_run(_valued_getattr), _run(_unset_getattr)) == (2.0, 5.0)


def test_a_class_value_absent_at_the_first_trace_is_watched(monkeypatch):
    assert _run(_absent) == 1.0
    monkeypatch.setattr(_Opts, "lr", 3.0, raising=False)
    assert _run(_absent) == 3.0
    monkeypatch.undo()
    assert _run(_absent) == 1.0


def test_a_class_value_list_changed_in_place_is_read_again(monkeypatch):
    monkeypatch.setattr(_Scales, "s", [1.0])
    assert _run(_first_scale) == 1.0
    _Scales.s[0] = 4.0
    assert _run(_first_scale) == 4.0


# --- a metaclass's __call__

class _Meta(type):
    def __call__(cls, *args, **kwargs):
        obj = super().__call__(*args, **kwargs)
        obj.lr = _LR
        return obj


class _WithMeta(metaclass=_Meta):
    pass


@gt.graph(backend="sim")
def _meta_made(s, x):
    add[1, 2, s](x, _WithMeta().lr)


def test_a_global_a_metaclass_call_reads_is_watched(monkeypatch):
    assert _run(_meta_made) == _LR
    monkeypatch.setattr(_MOD, "_LR", 2.0)
    assert _run(_meta_made) == 2.0

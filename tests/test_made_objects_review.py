"""What the objects a graph function makes read, where it reaches them by ways
``test_made_objects_more.py`` leaves out: a class put in a container after the
first trace, a defaultdict's factory, a constant ``getattr`` name, a class value
absent at the first trace or changed in place, a metaclass's ``__call__``. Each
change between calls must trace anew (or be warned of), where the graph replayed
the first trace's value with no warning."""
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

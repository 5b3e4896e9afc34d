"""Host Python state a plain decorated function reads, found by a differential
fuzzer of the host Python state: a class value read through a global object's
class (``type(OBJ).N``) changed between calls was replayed as the first trace
had it; a flag that the function and a helper both test and raise was said to
be state no change of which traces anew (it does), as a counter is."""
import warnings
from types import SimpleNamespace

import numpy as np
from numba import cuda

import graphtrace as gt


@cuda.jit
def add(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += a


class _Cls:
    N = 3


class _Holder:
    pass


_OBJ = _Cls()
_H = _Holder()
_H.sub = _Cls()


@gt.graph
def _by_type(s, x):
    add[1, 2, s](x, float(type(_OBJ).N))


@gt.graph
def _by_dunder(s, x):
    add[1, 2, s](x, float(_OBJ.__class__.N))


@gt.graph
def _by_alias(s, x):
    o = _OBJ
    add[1, 2, s](x, float(type(o).N))


@gt.graph
def _by_held(s, x):
    add[1, 2, s](x, float(type(_H.sub).N))


def _sums(fn, shadow: bool) -> list:
    _Cls.N = 3
    for o in (_OBJ, _H.sub):
        o.__dict__.pop("N", None)
    got = []
    for step in range(4):
        if step == 1 and shadow:
            _OBJ.N = _H.sub.N = 1   # the object's own N hides the class's from o.N only
        if step == 2:
            _Cls.N = 0
        if step == 3:
            _Cls.N = 2
        x = cuda.to_device(np.zeros(2))
        fn(x)
        got.append(float(x.copy_to_host()[0]))
    return got


def test_type_of_global_object_reads_the_class_value():
    try:
        for fn in (_by_type, _by_dunder, _by_alias, _by_held):
            for shadow in (False, True):
                assert _sums(fn, shadow) == [3.0, 3.0, 0.0, 2.0], (fn, shadow)
    finally:
        _Cls.N = 3


# --- a global flag, counter or unkeyed value the function and a helper both change

_FO = SimpleNamespace(started=False)
_CO = SimpleNamespace(n=0)
_SO = SimpleNamespace(flag=False)
_NAME = "flag"


def _start_helper(s, x):
    if not _FO.started:
        add[1, 2, s](x, 100.0)
        _FO.started = True


def _start_twice(s, x):
    if not _FO.started:
        add[1, 2, s](x, 3.0)
        _FO.started = True
    _start_helper(s, x)
    add[1, 2, s](x, 1.0)


def _count_helper(s, x):
    _CO.n += 1


def _count_twice(s, x):
    _CO.n += 1
    _count_helper(s, x)
    add[1, 2, s](x, 1.0)


def _set_helper(s, x):
    setattr(_SO, _NAME, True)


def _set_twice(s, x):
    setattr(_SO, _NAME, True)
    _set_helper(s, x)
    add[1, 2, s](x, 1.0)


def _calls(fn, reset=None) -> tuple:
    x = cuda.to_device(np.zeros(2))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn(x)
        fn(x)
        if reset is not None:
            reset()
        fn(x)
    return float(x.copy_to_host()[0]), [str(m.message) for m in w
                                         if issubclass(m.category, gt.StateWarning)]


def test_flag_raised_in_function_and_helper_is_no_state():
    _FO.started = False
    got, said = _calls(gt.graph(_start_twice), lambda: setattr(_FO, "started", False))
    assert got == 9.0   # 3 + 1, then 1, then (reset) 3 + 1
    assert said == []


def test_counter_or_unkeyed_value_changed_twice_still_warns_once():
    _CO.n = 0
    got, said = _calls(gt.graph(_count_twice))
    assert got == 3.0
    assert len(said) == 1 and "changed _CO.n:" in said[0], said
    _SO.flag = False
    got, said = _calls(gt.graph(_set_twice))
    assert got == 3.0
    assert len(said) == 1 and "changed _SO.flag:" in said[0] and "cannot tell" in said[0], said

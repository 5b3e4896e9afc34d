"""Host Python state a plain decorated function reads, found by a differential
fuzzer of the host Python state: a class value read through a global object's
class (``type(OBJ).N``) changed between calls was replayed as the first trace
had it."""
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

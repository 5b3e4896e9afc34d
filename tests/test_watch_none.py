"""A global's item or attribute that holds None when traced, set later.

A value read off a global dict or list by constant keys is watched by value;
one holding None was not watched at all, so a graph traced while
``CFG["schedule"]`` was None kept replaying after a schedule was put there.
"""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt


@cuda.jit
def _scale(x, a, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i]


class Schedule:
    def __init__(self, lr):
        self.lr = lr


CFG = {"schedule": None, "inner": {"lr": None}}
LST = [None]


def _lr(v):
    if v is None:
        return 1.0
    return v.lr if isinstance(v, Schedule) else float(sum(v))


@gt.graph(backend="sim")
def by_key(s, x, y):
    _scale[1, 4, s](x, _lr(CFG["schedule"]), y)


@gt.graph(backend="sim")
def by_get(s, x, y):
    _scale[1, 4, s](x, _lr(CFG.get("schedule")), y)


@gt.graph(backend="sim")
def by_index(s, x, y):
    _scale[1, 4, s](x, _lr(LST[0]), y)


@gt.graph(backend="sim")
def nested(s, x, y):
    v = CFG["inner"]["lr"]
    _scale[1, 4, s](x, 1.0 if v is None else v, y)


def _set(where, v):
    if where == "inner":
        CFG["inner"]["lr"] = v
    elif where == "list":
        LST[0] = v
    else:
        CFG["schedule"] = v


@pytest.mark.parametrize("f, where", [(by_key, "dict"), (by_get, "dict"), (by_index, "list"),
                                      (nested, "inner")])
def test_a_value_set_where_none_was_traces_anew(f, where):
    x, y = cuda.to_device(np.ones(4)), cuda.to_device(np.zeros(4))
    try:
        f(x, y)
        assert y.copy_to_host()[0] == 1.0
        values = [3.0, 4.0] if where == "inner" else [Schedule(5.0), Schedule(7.0)]
        for v in values:
            _set(where, v)
            f(x, y)
            expect = v if where == "inner" else _lr(v)
            assert y.copy_to_host()[0] == expect, (where, v)
        if where != "inner":
            v.lr = 9.0                           # changed in place
            f(x, y)
            assert y.copy_to_host()[0] == 9.0
        _set(where, None)                        # and back to None
        f(x, y)
        assert y.copy_to_host()[0] == 1.0
    finally:
        _set(where, None)

"""A list or dict subclass whose method the graph hands to ``s.host`` (``s.host(M.bump,
h)``) and that the graph's own code also reads some other way than by the handed
method: passed to a helper (``pick(M)``), ``dict.get(M, "scale")``,
``operator.itemgetter("scale")(M)``, ``"fast" in M``, ``scale_of(HIST)`` reading
``HIST.scale``. Those reads make a setting of what it holds, so a change to it
traces anew; before, the object was taken for one only handed to ``s.host`` and the
stale graph replayed the old value.
"""
import operator

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt


@cuda.jit
def _add(x, v):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += v


class _Metrics(dict):
    def bump(self, h):
        self["calls"] = self.get("calls", 0) + 1


class _History(list):
    scale = 1.0

    def record(self, h):
        self.append(float(h[0]))


M = _Metrics(scale=1.0)
HIST = _History()
PH = gt.pinned_empty(4)


def _pick(m):
    return m["scale"]


def _scale_of(hh):
    return hh.scale


def _helper_arg(s, x):
    _add[1, 4, s](x, _pick(M))
    s.copy(PH, x)
    s.host(M.bump, gt.In(PH))


def _dict_get(s, x):
    _add[1, 4, s](x, dict.get(M, "scale"))
    s.copy(PH, x)
    s.host(M.bump, gt.In(PH))


def _itemgetter(s, x):
    _add[1, 4, s](x, operator.itemgetter("scale")(M))
    s.copy(PH, x)
    s.host(M.bump, gt.In(PH))


def _in_test(s, x):
    _add[1, 4, s](x, 2.0 if "fast" in M else 1.0)
    s.copy(PH, x)
    s.host(M.bump, gt.In(PH))


def _get_method(s, x):
    _add[1, 4, s](x, M.get("scale"))
    s.copy(PH, x)
    s.host(M.bump, gt.In(PH))


def _subscript(s, x):
    _add[1, 4, s](x, M["scale"])
    s.copy(PH, x)
    s.host(M.bump, gt.In(PH))


def _local_alias(s, x):
    m = M
    _add[1, 4, s](x, m["scale"])
    s.copy(PH, x)
    s.host(m.bump, gt.In(PH))


def _bound_then(s, x):
    b = M.bump
    _add[1, 4, s](x, b.__self__["scale"])
    s.copy(PH, x)
    s.host(b, gt.In(PH))


def _list_attr_helper(s, x):
    _add[1, 4, s](x, _scale_of(HIST))
    s.copy(PH, x)
    s.host(HIST.record, gt.In(PH))


def _list_getattr(s, x):
    _add[1, 4, s](x, getattr(HIST, "scale"))
    s.copy(PH, x)
    s.host(HIST.record, gt.In(PH))


def _list_attr(s, x):
    _add[1, 4, s](x, HIST.scale)
    s.copy(PH, x)
    s.host(HIST.record, gt.In(PH))


def _current(fn):
    if fn.__name__.startswith("_list"):
        return HIST.scale
    if fn is _in_test:
        return 2.0 if "fast" in M else 1.0
    return M["scale"]


def _change(fn, k):
    if fn.__name__.startswith("_list"):
        HIST.scale = float(k + 1)
    elif fn is _in_test:
        if k % 2:
            M["fast"] = 1
        else:
            M.pop("fast", None)
    else:
        M["scale"] = float(k + 1)


@pytest.mark.parametrize("fn", [
    _helper_arg, _dict_get, _itemgetter, _in_test, _get_method, _subscript,
    _local_alias, _bound_then, _list_attr_helper, _list_getattr, _list_attr,
], ids=lambda f: f.__name__.lstrip("_"))
def test_a_setting_read_off_a_hosted_history_otherwise_retraces_on_change(fn):
    M.clear()
    M["scale"] = 1.0
    HIST.clear()
    HIST.scale = 1.0
    g = gt.graph(fn, backend="sim")
    got, want = [], []
    for k in range(4):
        _change(fn, k)
        x = cuda.to_device(np.zeros(4))
        g(x)
        got.append(x.copy_to_host()[0])
        want.append(_current(fn))
    assert got == want

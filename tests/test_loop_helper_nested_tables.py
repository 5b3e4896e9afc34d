"""A loop or branch body's helpers reached through a table in a table, a list of
``(name, fn)`` pairs, a table an object's attribute holds, or ``getattr`` with a
constant name.

``NESTED["g"]["a"](body, x)``, ``NESTED[k]["a"](body, x)``, ``for name, g in
PAIRS: g(body, x)``, ``H.table["a"](body, x)`` and ``getattr(NS, "a")(body,
x)``: the function such a form reaches was not watched (its globals, closure
cells and mutable defaults), so a helper bumping a global counter it launches
with ran every iteration on the first iteration's number, in silence (3.0
where Python runs 6.0). The functions a table holds are now watched three
tables deep (tuples and namespaces in it too), a table an attribute a body
names holds as one a name holds, and the attribute ``getattr`` names by a
constant as ``NS.a`` is; a call through ``getattr`` is a call graphtrace
cannot tell, refused where the body changes state. Tables of helpers changing
nothing still run.
"""
import functools
import math
import types

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host
from helpers import line_of

K = 0


def _bump(s, x):
    global K
    K += 1
    add[1, 4, s](x, float(K))


def _one(s, x):
    add[1, 4, s](x, 1.0)


@functools.lru_cache(maxsize=None)
def _twice(n):
    return 2 * n


class _Steps:
    @staticmethod
    def a(s, x):
        _bump(s, x)


class _Holder:
    pass


NESTED = {"g": {"a": _bump}}
PAIRS = [("a", _bump)]
DEEP = {"p": [("a", _bump)]}
HELD = _Holder()
HELD.table = {"a": _bump}
NS = types.SimpleNamespace(a=_bump)
PURE = {"t": {"one": _one, "twice": _twice, "part": functools.partial(_one),
              "lam": lambda s, x: _one(s, x), "sqrt": np.sqrt, "print": print,
              "cls": _Steps, "floor": math.floor},
        "pairs": [("one", _one)]}
PURE_NS = types.SimpleNamespace(one=_one, twice=_twice)
PURE_HELD = _Holder()
PURE_HELD.table = {"one": _one}


def _nested_helper(s, x):
    NESTED["g"]["a"](s, x)


def _refused(mark, f, *args):
    global K
    K = 0
    with pytest.raises(gt.ArgumentError) as info:
        f(*args)
    assert info.value.source[1] == line_of(__file__, mark), str(info.value)
    return str(info.value)


def _x():
    return dev(0, 0, 0, 0)


def _c():
    return dev(0, dtype=np.int32)


def _nested_key(s, x, c, k):
    with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:   # nested key
        NESTED["g"]["a"](body, x)
        count[1, 1, body](c)


def _nested_computed_key(s, x, c, k):
    with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:   # nested computed key
        NESTED[k]["a"](body, x)
        count[1, 1, body](c)


def _pairs(s, x, c, k):
    with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:   # pairs
        for name, g in PAIRS:
            g(body, x)
        count[1, 1, body](c)


def _deep_index(s, x, c, k):
    with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:   # deep index
        DEEP["p"][0][1](body, x)
        count[1, 1, body](c)


def _attribute_table(s, x, c, k):
    with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:   # attribute's table
        HELD.table["a"](body, x)
        count[1, 1, body](c)


def _namespace(s, x, c, k):
    with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:   # namespace
        NS.a(body, x)
        count[1, 1, body](c)


def _helper_nested(s, x, c, k):
    with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:   # helper's nested table
        _nested_helper(body, x)
        count[1, 1, body](c)


@pytest.mark.parametrize("body", [_nested_key, _nested_computed_key, _pairs, _deep_index,
                                  _attribute_table, _namespace, _helper_nested])
def test_a_helper_bumping_a_global_reached_through_a_nested_table_is_refused(body):
    mark = body.__name__[1:].replace("_", " ").replace("attribute table", "attribute's table") \
        .replace("helper nested", "helper's nested table")
    f = gt.graph(backend="sim")(body)
    assert "changes `K`, which it reads again" in _refused(mark, f, _x(), _c(), "g")


def _getattr_namespace(s, x, c):
    with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:
        getattr(NS, "a")(body, x)   # getattr namespace
        count[1, 1, body](c)


def _getattr_class(s, x, c):
    with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:
        getattr(_Steps, "a")(body, x)   # getattr class
        count[1, 1, body](c)


@pytest.mark.parametrize("body", [_getattr_namespace, _getattr_class])
def test_a_helper_reached_by_getattr_with_a_constant_name_is_refused(body):
    f = gt.graph(backend="sim")(body)
    message = _refused(body.__name__[1:].replace("_", " "), f, _x(), _c())
    assert "changes `K`" in message and "cannot tell" in message


def test_a_nested_table_in_a_branch_body_is_refused():
    @gt.graph(backend="sim")
    def f(s, x, c):
        for _ in range(3):
            with s.if_then(gt.cond(c) < 5) as body:   # nested branch
                NESTED["g"]["a"](body, x)

    assert "changes `K`" in _refused("nested branch", f, _x(), _c())


def test_nested_tables_of_helpers_changing_nothing_run_as_eagerly():
    @gt.graph(backend="sim")
    def f(s, x, c, k):
        with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:
            t = PURE["t"]
            PURE["t"]["one"](body, x)
            PURE[k]["part"](body, x)
            PURE["t"]["lam"](body, x)
            add[1, 4, body](x, float(t["twice"](1) + t["sqrt"](4.0) + t["floor"](0.5) - 4))
            PURE["t"]["print"]("", end="")
            for name, g in PURE["pairs"]:
                g(body, x)
            PURE_NS.one(body, x)
            getattr(PURE_NS, "one")(body, x)
            PURE_HELD.table["one"](body, x)
            add[1, 4, body](x, float(PURE_NS.twice(1) - 2))
            count[1, 1, body](c)

    x = _x()
    f(x, _c(), "t")
    assert host(x) == [21.0] * 4

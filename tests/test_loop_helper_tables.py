"""A loop body's helpers called through a table of functions a name holds.

``TABLE["step"](body, x)``, ``TABLE[name](body, x)``, ``STEPS[0](body, x)``,
``for g in STEPS: g(body, x)`` and ``body.child(TABLE["step"], x)``: the
functions the table holds were not watched (their globals, closure cells and
mutable defaults), so a helper bumping a counter it launches with ran every
iteration on the first iteration's number, in silence. Each function such a
table holds is now watched and walked as one called by its name is; a table
too long to read (over 256 items) picked by a key computed is a call
graphtrace cannot tell.
"""
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


_gbump = gt.graph(backend="sim")(_bump)


def _default_counter(s, x, _st={"k": 0}):
    _st["k"] += 1
    add[1, 4, s](x, float(_st["k"]))


def _closure_counter():
    k = 0

    def step(s, x):
        nonlocal k
        k += 1
        add[1, 4, s](x, float(k))
    return step


def _one(s, x):
    add[1, 4, s](x, 1.0)


@gt.graph(backend="sim")
def _two(s, x):
    add[1, 4, s](x, 2.0)


PLAIN = {"a": _bump, "b": _one}
GRAPH = {"a": _gbump}
PLIST = [_bump]
GLIST = [_gbump]
DEFAULTS = {"step": _default_counter}
CLOSURES = {"c": _closure_counter()}
PURE = {"one": _one, "two": _two}
PURE_LIST = [_one, _two]


def _sweep(s, x, name):
    PLAIN[name](s, x)


BIG = {f"n{i}": _one for i in range(300)}
BIG["a"] = _bump


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


@pytest.mark.parametrize("form", ["plain key", "graph key", "computed key", "list index",
                                  "for loop", "graph for loop", "child key", "child index",
                                  "helper's table"])
def test_a_helper_bumping_a_global_reached_through_a_table_is_refused(form):
    @gt.graph(backend="sim")
    def f(s, x, c, name):
        with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:   # loop 1
            if form == "plain key":
                PLAIN["a"](body, x)
            elif form == "graph key":
                GRAPH["a"](body, x)
            elif form == "computed key":
                PLAIN[name](body, x)
            elif form == "list index":
                PLIST[0](body, x)
            elif form == "for loop":
                for g in PLIST:
                    g(body, x)
            elif form == "graph for loop":
                for g in GLIST:
                    g(body, x)
            elif form == "child key":
                body.child(GRAPH["a"], x)
            elif form == "helper's table":
                _sweep(body, x, name)
            else:
                body.child(GLIST[0], x)
            count[1, 1, body](c)

    assert "changes `K`, which it reads again" in _refused("loop 1", f, _x(), _c(), "a")


@pytest.mark.parametrize("computed", [False, True])
def test_a_tables_helper_keeping_a_counter_in_a_default_or_a_cell_is_refused(computed):
    @gt.graph(backend="sim")
    def f(s, x, c, name):
        with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:   # loop 2
            if computed:
                DEFAULTS[name](body, x)
            else:
                DEFAULTS["step"](body, x)
            count[1, 1, body](c)

    @gt.graph(backend="sim")
    def g(s, x, c, name):
        with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:   # loop 3
            if computed:
                CLOSURES[name](body, x)
            else:
                CLOSURES["c"](body, x)
            count[1, 1, body](c)

    assert "__defaults__[0]['k']" in _refused("loop 2", f, _x(), _c(), "step")
    assert "<k>" in _refused("loop 3", g, _x(), _c(), "c")


def test_a_table_too_long_to_read_picked_by_a_computed_key_is_a_call_it_cannot_tell():
    @gt.graph(backend="sim")
    def f(s, x, c, name):
        with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:
            BIG[name](body, x)   # the big call
            count[1, 1, body](c)

    message = _refused("the big call", f, _x(), _c(), "a")
    assert "changes `K`" in message and "table of over 256 items" in message
    x = _x()
    f(x, _c(), "n1")   # (a helper changing nothing: fine)
    assert host(x) == [3.0] * 4


def test_helpers_of_a_table_changing_nothing_run_as_eagerly():
    @gt.graph(backend="sim")
    def f(s, x, c, name):
        with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:
            PURE[name](body, x)
            PURE["one"](body, x)
            body.child(PURE["two"], x)
            for g in PURE_LIST:
                g(body, x)
            count[1, 1, body](c)

    x = _x()
    f(x, _c(), "two")
    assert host(x) == [24.0] * 4

"""A loop or branch body's helpers decorated ``@gt.graph``, walked as plain ones.

A body calling a plain helper that changes Python state it reads again (``global
K; K += 1`` then a launch with ``K``) is refused at the block's line. The same
helper decorated ``@gt.graph``, called inline (``step(body, x)``) or recorded
as a child graph (``body.child(step, x)``), or a ``@gt.graph`` method bound to
its instance (``st.advance(body, x)``), was not walked (its code is the
decorated function's ``fn``), and every iteration replayed the first
iteration's number. Each is now walked as the plain function or method is.
"""
import logging

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host
from helpers import line_of

K = 0
BUFI = 0


@gt.graph(backend="sim")
def _bump(s, x):
    global K
    K += 1
    add[1, 4, s](x, float(K))


def _plain_wrap(s, x):
    _bump(s, x)


@gt.graph(backend="sim")
def _default_counter(s, x, _st={"k": 0}):
    _st["k"] += 1
    add[1, 4, s](x, float(_st["k"]))


def _closure_counter():
    k = 0

    @gt.graph(backend="sim")
    def step(s, x):
        nonlocal k
        k += 1
        add[1, 4, s](x, float(k))
    return step


_STEPC = _closure_counter()


@gt.graph(backend="sim")
def _pick(s, a, b):
    global BUFI
    add[1, 4, s]((a, b)[BUFI], 1.0)
    BUFI = 1 - BUFI


@gt.graph(backend="sim")
def _pure(s, x, v):
    add[1, 4, s](x, v)


class _Sched:
    def __init__(self):
        self.t = 0.0
        self.v = 2.0

    @gt.graph(backend="sim")
    def advance(self, s, x):
        self.t += 0.5
        add[1, 4, s](x, self.t)

    @gt.graph(backend="sim")
    def apply(self, s, x):
        add[1, 4, s](x, self.v)


def _refused(mark, f, *args):
    with pytest.raises(gt.ArgumentError) as info:
        f(*args)
    assert info.value.source[1] == line_of(__file__, mark), str(info.value)
    return str(info.value)


def _x():
    return dev(0, 0, 0, 0)


def _c():
    return dev(0, dtype=np.int32)


def test_a_graph_helper_bumping_a_global_inline_is_refused():
    global K
    K = 0

    @gt.graph(backend="sim")
    def f(s, x, c):
        with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:   # loop 1
            _bump(body, x)
            count[1, 1, body](c)

    assert "changes `K`, which it reads again" in _refused("loop 1", f, _x(), _c())


def test_a_graph_helper_bumping_a_global_as_a_child_is_refused():
    global K
    K = 0

    @gt.graph(backend="sim")
    def f(s, x, c):
        with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:   # loop 2
            body.child(_bump, x)
            count[1, 1, body](c)

    assert "changes `K`, which it reads again" in _refused("loop 2", f, _x(), _c())


def test_a_plain_helper_calling_a_graph_helper_that_bumps_is_refused():
    @gt.graph(backend="sim")
    def f(s, x, c):
        with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:   # loop 3
            _plain_wrap(body, x)
            count[1, 1, body](c)

    assert "changes `K`" in _refused("loop 3", f, _x(), _c())


@pytest.mark.parametrize("child", [False, True])
def test_a_graph_helpers_mutable_default_and_closure_counters_are_refused(child):
    @gt.graph(backend="sim")
    def f(s, x, c):
        with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:   # loop 4
            if child:
                body.child(_default_counter, x)
            else:
                _default_counter(body, x)
            count[1, 1, body](c)

    @gt.graph(backend="sim")
    def g(s, x, c):
        with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:   # loop 5
            if child:
                body.child(_STEPC, x)
            else:
                _STEPC(body, x)
            count[1, 1, body](c)

    _refused("loop 4", f, _x(), _c())
    _refused("loop 5", g, _x(), _c())


@pytest.mark.parametrize("child", [False, True])
def test_a_graph_method_advancing_its_object_in_a_body_is_refused(child):
    sched = _Sched()

    @gt.graph(backend="sim")
    def f(s, x, c):
        with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:   # loop 6
            if child:
                body.child(sched.advance, x)
            else:
                sched.advance(body, x)
            count[1, 1, body](c)

    assert "changes `sched.t`" in _refused("loop 6", f, _x(), _c())


def test_a_child_graph_picking_its_buffer_by_a_global_toggle_is_refused():
    @gt.graph(backend="sim")
    def f(s, a, b, c):
        with s.while_loop(gt.cond(c) < 4, max_iterations=10) as body:   # loop 7
            body.child(_pick, a, b)
            count[1, 1, body](c)

    assert "changes `BUFI`" in _refused("loop 7", f, _x(), _x(), _c())


def test_graph_helpers_changing_nothing_run_as_eagerly():
    """A graph helper and a graph method that change no Python state, inline
    and as child graphs, are accepted and run each iteration."""
    sched = _Sched()

    @gt.graph(backend="sim")
    def f(s, x, c):
        with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:
            _pure(body, x, 1.0)
            body.child(_pure, x, 1.0)
            sched.apply(body, x)
            body.child(sched.apply, x)
            count[1, 1, body](c)

    x = _x()
    f(x, _c())
    assert host(x) == [18.0] * 4


class _Warm:
    def __init__(self):
        self.started = False

    @gt.graph(backend="sim")
    def warm(self, s, x):
        if not self.started:
            add[1, 4, s](x, 100.0)
            self.started = True
        add[1, 4, s](x, 1.0)

    def plain(self, s, x):
        add[1, 4, s](x, 1.0)

    @gt.graph(backend="sim")
    def step(self, s, x, flag):
        with s.if_then(gt.cond(flag)) as then:
            self.warm(then, x)   # the warm call

    @gt.graph(backend="sim")
    def picked(self, s, x, flag, use):
        with s.if_then(gt.cond(flag)) as then:
            (self.plain if not use else self.warm)(then, x)   # the picked call


def test_a_graph_method_storing_a_flag_in_a_branch_is_refused():
    """``if not self.started: <work>; self.started = True`` in a graph method a
    branch's body calls: refused at the call, as in a plain method."""
    with pytest.raises(gt.ArgumentError) as info:
        _Warm().step(_x(), dev(0, dtype=np.int32))
    assert info.value.source[1] == line_of(__file__, "the warm call"), str(info.value)
    assert "self.started" in str(info.value)


def test_a_method_picked_by_a_conditional_expression_is_walked_in_each_arm():
    """``(self.plain if not use else self.warm)(then, x)``: the arm the
    expression ends with was the only one walked."""
    with pytest.raises(gt.ArgumentError) as info:
        _Warm().picked(_x(), dev(0, dtype=np.int32), True)
    assert info.value.source[1] == line_of(__file__, "the picked call"), str(info.value)


@gt.graph(backend="sim")
def _flip(s, a, b):
    add[1, 4, s]((a, b)[_flip.i], 1.0)
    _flip.i = 1 - _flip.i


_flip.i = 0


def test_a_graph_helper_flipping_its_own_attribute_is_refused():
    """``_flip.i = 1 - _flip.i`` on the decorated function, as ``step.i`` on a
    plain one: the attributes graphtrace keeps there are left out."""
    @gt.graph(backend="sim")
    def f(s, a, b, c):
        with s.while_loop(gt.cond(c) < 4, max_iterations=10) as body:   # loop 8
            _flip(body, a, b)
            count[1, 1, body](c)

    assert "changes `_flip.i`" in _refused("loop 8", f, _x(), _x(), _c())


def test_a_graph_helper_recorded_as_a_child_by_keyword_is_walked():
    """``body.child(step, x=x)``: the keyword fills the parameter Python binds it
    to, as ``body.child(step, x)`` does; its keywords were read as unknown (3.11's
    ``dis`` leaves a ``KW_NAMES`` unnamed), the helper was not walked, and each
    iteration replayed the first iteration's number."""
    global K
    K = 0

    @gt.graph(backend="sim")
    def f(s, x, c):
        with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:   # loop 9
            body.child(_bump, x=x)
            count[1, 1, body](c)

    @gt.graph(backend="sim")
    def g(s, x, c):
        with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:   # loop 10
            body.child(_default_counter, x=x)
            count[1, 1, body](c)

    assert "changes `K`, which it reads again" in _refused("loop 9", f, _x(), _c())
    assert "_default_counter.__defaults__" in _refused("loop 10", g, _x(), _c())


def test_a_child_taking_keywords_that_change_nothing_runs():
    @gt.graph(backend="sim")
    def f(s, x, c):
        with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:
            body.child(_pure, x, v=1.0)
            body.child(_pure, x=x, v=2.0)
            count[1, 1, body](c)

    x = _x()
    f(x, _c())
    assert host(x) == [9.0] * 4


_log = logging.getLogger("graphtrace.tests.helpers")


@gt.graph(backend="sim")
def _counted(s, x):
    _counted.calls += 1
    _log.debug("step calls: %d", _counted.calls)   # reported only
    add[1, 4, s](x, 1.0)


_counted.calls = 0


@gt.graph(backend="sim")
def _attr_bump(s, x):
    _attr_bump.k += 1
    add[1, 4, s](x, float(_attr_bump.k))


_attr_bump.k = 0


@pytest.mark.parametrize("child", [False, True])
def test_a_graph_helper_counting_its_calls_only_to_report_them_runs(child):
    """``step.calls += 1; log.debug(..., step.calls)`` in a graph helper: fine
    inline and as a child; a child's function was taken for an argument its
    work took whole, as if the child read ``step.calls``."""
    @gt.graph(backend="sim")
    def f(s, x, c):
        with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:
            if child:
                body.child(_counted, x)
            else:
                _counted(body, x)
            count[1, 1, body](c)

    x = _x()
    f(x, _c())
    assert host(x) == [3.0] * 4


@pytest.mark.parametrize("child", [False, True])
def test_a_graph_helper_launching_with_its_own_attribute_counter_is_refused(child):
    @gt.graph(backend="sim")
    def f(s, x, c):
        with s.while_loop(gt.cond(c) < 3, max_iterations=10) as body:   # loop 11
            if child:
                body.child(_attr_bump, x)
            else:
                _attr_bump(body, x)
            count[1, 1, body](c)

    assert "changes `_attr_bump.k`" in _refused("loop 11", f, _x(), _c())

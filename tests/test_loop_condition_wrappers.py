"""A while loop's condition built in a function of the program's that a caller
hands its parts to, or hands the whole condition through.

A wrapper testing its own parameter (``def loop(s, c, lim, fn):
s.while_loop(gt.cond(c) > lim, body=fn)``) holds what the caller handed: a
body raising the caller's ``lim`` leaves the wrapper's bound as it was, eagerly
too, yet was refused. A bound read through an attribute of a parameter
(``gt.cond(c) > st.lim``) is the caller's object's, which the body may change:
still refused.
"""
import types

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host
from helpers import line_of


def _loop_on(s, c, lim, fn):
    s.while_loop(gt.cond(c) > lim, max_iterations=10, body=fn)


def _loop_on_state(s, c, st, fn):
    s.while_loop(gt.cond(c) > st.lim, max_iterations=10, body=fn)   # loop on state


def test_a_wrapper_testing_its_own_parameter_runs_as_eagerly():
    """The body counts its recorded passes in the caller's ``lim``; the
    wrapper's ``lim`` stays 0, so eagerly and in the graph c runs down to 0."""
    @gt.graph(backend="sim")
    def f(s, c, n):
        lim = 0

        def step(body):
            nonlocal lim
            add[1, 1, body](c, -1)
            count[1, 1, body](n)
            lim += 1
        _loop_on(s, c, lim, step)

    c, n = dev(6, dtype=np.int32), dev(0, dtype=np.int32)
    f(c, n)
    assert host(c) == [0] and host(n) == [6]


def _state_bound_raised(s, c, n):
    st = types.SimpleNamespace(lim=0)

    def step(body):
        add[1, 1, body](c, -1)
        count[1, 1, body](n)
        st.lim += 1
    _loop_on_state(s, c, st, step)


def test_a_wrapper_testing_an_attribute_of_its_parameter_the_body_raises_is_refused():
    """``st.lim`` is the caller's object's: eagerly the loop stops at c = 3."""
    f = gt.graph(_state_bound_raised, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(6, dtype=np.int32), dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, "loop on state"), e
    assert "changes `st.lim`," in e and "its condition reads" in e, e


def _looping(s, cond):
    return s.while_loop(cond, max_iterations=30)   # looping helper


LIMIT = 0


def _looping_global(s, c):
    return s.while_loop(gt.cond(c) > LIMIT, max_iterations=30)   # looping global


def _with_helper_bound_raised(s, c, n):
    lim = 0
    with _looping(s, gt.cond(c) > lim) as body:
        add[1, 1, body](c, -1)
        count[1, 1, body](n)
        lim += 1


def _with_helper_global_raised(s, c, n):
    global LIMIT
    with _looping_global(s, c) as body:
        add[1, 1, body](c, -1)
        count[1, 1, body](n)
        LIMIT += 1


@pytest.mark.parametrize("program, marker, named", [
    (_with_helper_bound_raised, "looping helper", "`lim`"),
    (_with_helper_global_raised, "looping global", "`LIMIT`"),
])
def test_a_with_block_a_helper_makes_of_a_condition_the_body_changes_is_refused(
        program, marker, named):
    """``with looping(s, gt.cond(c) > lim) as body: ... lim += 1``: eagerly the
    condition is tested again with the bound raised and the loop stops at
    c = 3; the graph ran c down to 0 in silence (the direct ``with
    s.while_loop(...)`` form was refused)."""
    f = gt.graph(program, backend="sim")
    try:
        with pytest.raises(gt.ArgumentError) as info:
            f(dev(6, dtype=np.int32), dev(0, dtype=np.int32))
    finally:
        globals()["LIMIT"] = 0
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert f"changes {named}," in e and "its condition reads" in e, e


def test_a_with_block_a_helper_makes_of_a_condition_the_body_leaves_runs_as_eagerly():
    """The body counts its passes in a name the condition does not read."""
    @gt.graph(backend="sim")
    def f(s, c, n):
        lim, passes = 0, 0
        with _looping(s, gt.cond(c) > lim) as body:
            add[1, 1, body](c, -1)
            count[1, 1, body](n)
            passes += 1

    c, n = dev(6, dtype=np.int32), dev(0, dtype=np.int32)
    f(c, n)
    assert host(c) == [0] and host(n) == [6]

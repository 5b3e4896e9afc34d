"""A while loop's condition is read off the call that made the block, never
off another ``s.while_loop`` of the same function.

The ``with`` form took the condition of the last ``s.while_loop(...)`` written
before the block's line: a loop made through another name (``loop =
s.while_loop``) or through a ``@contextmanager`` helper was checked against an
earlier loop's condition, refusing a body that changes only what that other
loop tests, and letting one through that changes what its own condition tests.
"""
import contextlib

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host
from helpers import line_of


def _through_a_name(s, c, c2, n):
    lim, lim2 = 0, 0
    with s.while_loop(gt.cond(c) > lim, max_iterations=30) as body:
        add[1, 1, body](c, -1)
    loop = s.while_loop
    with loop(gt.cond(c2) > lim2, max_iterations=30) as body:   # through a name
        add[1, 1, body](c2, -1)
        count[1, 1, body](n)
        lim += 1   # the first loop's bound: tested no more


def _through_a_name_raised(s, c, c2, n):
    lim, lim2 = 0, 0
    with s.while_loop(gt.cond(c) > lim, max_iterations=30) as body:
        add[1, 1, body](c, -1)
    loop = s.while_loop
    with loop(gt.cond(c2) > lim2, max_iterations=30) as body:   # raised through a name
        add[1, 1, body](c2, -1)
        count[1, 1, body](n)
        lim2 += 1


@contextlib.contextmanager
def _looping(s, cond):
    with s.while_loop(cond, max_iterations=30) as body:   # looping manager
        yield body


def _managed(s, c, c2, n):
    lim, lim2 = 0, 0
    with s.while_loop(gt.cond(c) > lim, max_iterations=30) as body:
        add[1, 1, body](c, -1)
    with _looping(s, gt.cond(c2) > lim2) as body:
        add[1, 1, body](c2, -1)
        count[1, 1, body](n)
        lim += 1   # the first loop's bound: tested no more


def _managed_raised(s, c, c2, n):
    lim = 0
    with _looping(s, gt.cond(c2) > lim) as body:
        add[1, 1, body](c2, -1)
        count[1, 1, body](n)
        lim += 1


def _run(program):
    c, c2, n = dev(6, dtype=np.int32), dev(6, dtype=np.int32), dev(0, dtype=np.int32)
    gt.graph(program, backend="sim")(c, c2, n)
    return host(c), host(c2), host(n)


@pytest.mark.parametrize("program", [_through_a_name, _managed])
def test_a_body_changing_only_an_earlier_loops_bound_runs_as_eagerly(program):
    """The second loop's body raises ``lim``, which only the first loop, already
    run, tests: eagerly both counters run down to 0 and the second loop runs 6
    times; this was refused naming ``lim``."""
    assert _run(program) == ([0], [0], [6])


@pytest.mark.parametrize("program, marker, named", [
    (_through_a_name_raised, "raised through a name", "`lim2`"),
    (_managed_raised, "looping manager", "`lim`"),
])
def test_a_body_changing_its_own_loops_bound_is_refused(program, marker, named):
    """Eagerly the condition is tested again with the bound raised each pass and
    the loop stops at c2 = 3; the graph ran c2 down to 0 in silence."""
    with pytest.raises(gt.ArgumentError) as info:
        _run(program)
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert f"changes {named}," in e and "its condition reads" in e, e


def test_a_managed_loop_whose_body_leaves_its_bound_runs_as_eagerly():
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

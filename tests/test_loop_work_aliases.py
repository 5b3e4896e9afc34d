"""A kernel or function a loop or branch body swaps, reached through a name.

A while body that launched ``k`` by a value computed from it on a line that
records no work (``go = k[1, 4, body]`` then ``go(x)``; ``use = k`` then
``use[1, 4, body](x)``) and then set ``k = mul`` ran the first iteration's
kernel every iteration in silence, as did code after a branch launching the
kernel the branch picked so (``go = kern[1, 4, s]``, ``go(x)``). The value is
now followed from the slot to the call that launches it, as a number is
followed to the work taking it. A while loop whose condition is passed by
keyword (``condition=gt.cond(n) < lim``) is checked as one passed by position
is. The programs beside them, launching through names what the body leaves
alone, run as eagerly.
"""
import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host, mul
from helpers import line_of


def _add_step(s, x):
    add[1, 4, s](x, 2.0)


def _mul_step(s, x):
    mul[1, 4, s](x, 2.0)


def _launcher_swapped(s, x, n):
    k = add
    with s.while_loop(gt.cond(n) < 3) as body:   # launcher swapped
        go = k[1, 4, body]
        go(x, 2.0)
        count[1, 1, body](n)
        k = mul


def _alias_swapped(s, x, n):
    k = add
    with s.while_loop(gt.cond(n) < 3) as body:   # alias swapped
        use = k
        use[1, 4, body](x, 2.0)
        count[1, 1, body](n)
        k = mul


def _packed_swapped(s, x, n):
    k = add
    with s.while_loop(gt.cond(n) < 3) as body:   # packed swapped
        pair = (k, mul)
        pair[0][1, 4, body](x, 2.0)
        count[1, 1, body](n)
        k = mul


def _helper_alias_swapped(s, x, n):
    step = _add_step
    with s.while_loop(gt.cond(n) < 3) as body:   # helper alias swapped
        run = step
        run(body, x)
        count[1, 1, body](n)
        step = _mul_step


@pytest.mark.parametrize("program, marker, named", [
    (_launcher_swapped, "launcher swapped", "changes `k`,"),
    (_alias_swapped, "alias swapped", "changes `k`,"),
    (_packed_swapped, "packed swapped", "changes `k`,"),
    (_helper_alias_swapped, "helper alias swapped", "changes `step`,"),
])
def test_a_kernel_a_body_launches_through_a_name_then_swaps_is_refused(
        program, marker, named):
    """Run eagerly, x = 1 + 2 = 3, then * 2 twice: 12; the graph added three
    times (7) in silence."""
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(1, 1, 1, 1), dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert named in e and "next iteration" in e and "s.switch" in e, e


def _launcher_picked(s, x, flag):
    kern = add
    with s.if_then(gt.cond(flag) > 0) as then:   # launcher picked
        count[1, 1, then](flag)
        kern = mul
    go = kern[1, 4, s]   # launcher picked read
    go(x, 2.0)


def _alias_picked(s, x, flag):
    kern = add
    with s.if_then(gt.cond(flag) > 0) as then:   # alias picked
        count[1, 1, then](flag)
        kern = mul
    use = kern   # alias picked read
    use[1, 4, s](x, 2.0)


def _first_set_picked(s, x, flag):
    with s.if_then(gt.cond(flag) > 0) as then:   # first set picked
        kern = mul
        kern[1, 4, then](x, 1.0)
    go = kern[1, 4, s]   # first set picked read
    go(x, 2.0)


@pytest.mark.parametrize("program, marker, named", [
    (_launcher_picked, "launcher picked", "changes `kern`,"),
    (_alias_picked, "alias picked", "changes `kern`,"),
    (_first_set_picked, "first set picked", "sets `kern` (unset before the block)"),
])
def test_a_kernel_a_branch_picks_launched_after_it_through_a_name_is_refused(
        program, marker, named):
    """With the branch not taken, eager code after it adds (x = 3); the graph
    multiplied (x = 2), the kernel the recorded pass picked, in silence."""
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(1, 1, 1, 1), dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert named in e and "after the block" in e and "s.if_else" in e, e
    assert f"line {line_of(__file__, marker + ' read')} reads" in e, e


def test_kernels_launched_through_names_the_body_leaves_alone_run_as_eagerly():
    """A launcher made of a kernel the body never changes, kernels of a Python
    for loop in the body, a name set and launched twice in one pass, and a
    helper handed the kernel: each iteration runs the same kernels."""
    def run(body, k, x):
        k[1, 4, body](x, 1.0)

    @gt.graph(backend="sim")
    def f(s, x, n):
        k = add
        with s.while_loop(gt.cond(n) < 2) as body:
            go = k[1, 4, body]
            go(x, 1.0)
            for kk in (add, mul):
                use = kk
                use[1, 4, body](x, 2.0)
            j = add
            j[1, 4, body](x, 1.0)
            j = mul
            j[1, 4, body](x, 1.0)
            run(body, k, x)
            count[1, 1, body](n)

    x, n = dev(1, 1, 1, 1), dev(0, dtype=np.int32)
    f(x, n)   # each pass: ((x + 1 + 2) * 2 + 1) * 1 + 1: 1 -> 10 -> 28
    assert host(x) == [28, 28, 28, 28] and host(n) == [2]


def test_a_kernel_a_branch_picks_set_again_before_its_launcher_runs_as_eagerly():
    """The name the branch set is set again after the block before the launcher
    is made of it: the code after runs the same kernel whatever the branch does."""
    @gt.graph(backend="sim")
    def f(s, x, flag):
        kern = add
        with s.if_then(gt.cond(flag) > 0) as then:
            count[1, 1, then](flag)
            kern = mul
        kern = add
        go = kern[1, 4, s]
        go(x, 2.0)

    x, flag = dev(1, 1, 1, 1), dev(0, dtype=np.int32)
    f(x, flag)
    assert host(x) == [3, 3, 3, 3] and host(flag) == [0]


def _keyword_bound_raised(s, c, n):
    lim = 0
    with s.while_loop(condition=gt.cond(c) > lim,   # keyword bound raised
                      max_iterations=10) as body:
        count[1, 1, body](n)
        add[1, 1, body](c, -1)
        lim += 1


def _keyword_after_bound_raised(s, c, n):
    lim = 0
    with s.while_loop(max_iterations=10,   # keyword after bound raised
                      condition=gt.cond(c) > lim) as body:
        count[1, 1, body](n)
        add[1, 1, body](c, -1)
        lim += 1


@pytest.mark.parametrize("program, marker", [
    (_keyword_bound_raised, "keyword bound raised"),
    (_keyword_after_bound_raised, "keyword after bound raised"),
])
def test_a_condition_passed_by_keyword_its_body_changes_is_refused(program, marker):
    """As with the condition passed by position: eagerly the loop tests the
    raised bound (c = 3 of 6), the graph tested 0 every time (c = 0)."""
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(6, dtype=np.int32), dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert "changes `lim`," in e and "its condition reads again" in e, e


def test_a_condition_passed_by_keyword_its_body_leaves_alone_runs_as_eagerly():
    """The body changes a name the condition does not read."""
    @gt.graph(backend="sim")
    def f(s, c, n):
        lim, trips = 2, 0
        with s.while_loop(condition=gt.cond(c) > lim, max_iterations=10) as body:
            add[1, 1, body](c, -1)
            count[1, 1, body](n)
            trips += 1

    c, n = dev(6, dtype=np.int32), dev(0, dtype=np.int32)
    f(c, n)
    assert host(c) == [2] and host(n) == [4]

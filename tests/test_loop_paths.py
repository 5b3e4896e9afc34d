"""State a body changes on one path through its Python code and reads on another.

Python runs a loop's or a branch's body once, when it is recorded; each
iteration of the same loop run eagerly may take another path through the
body's code, and the code after a branch may read what the body left. What a
name holds at a read is what any of its stores that may reach the read
computed it from, and a slot counts as stored before a read only where every
path to the read stores it. Each program here ran silently on the numbers or
arrays of its first iteration (the last store in code order taken for the one
read, a store in a branch not taken counted as stored first); now it is
refused at the block's line. The programs beside them, storing on every path
before reading or computing only from what the loop leaves alone, run as
eagerly.
"""
import contextlib

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host, shift
from helpers import line_of

FLAG, OFF = True, False


def _branch_local(s, a, b, n):
    t = 0.0
    with s.while_loop(gt.cond(n) < 3) as body:   # branch local
        t += 1.0
        if FLAG:
            v = t
        else:
            v = 1.0
        add[1, 4, body](a, v)
        count[1, 1, body](n)


def _override_not_taken(s, a, b, n):
    t = 0.0
    with s.while_loop(gt.cond(n) < 3) as body:   # override not taken
        t += 1.0
        v = t
        if OFF:
            v = 1.0
        add[1, 4, body](a, v)
        count[1, 1, body](n)


def _try_except(s, a, b, n):
    t = 0.0
    with s.while_loop(gt.cond(n) < 3) as body:   # try except
        t += 1.0
        try:
            v = t
        except ValueError:
            v = 1.0
        add[1, 4, body](a, v)
        count[1, 1, body](n)


class _Box:
    pass


def _attribute_in_branch(s, a, b, n):
    st = _Box()
    st.t = 0.0
    with s.while_loop(gt.cond(n) < 3) as body:   # attribute in branch
        st.t += 1.0
        if FLAG:
            st.w = st.t
        else:
            st.w = 1.0
        add[1, 4, body](a, st.w)
        count[1, 1, body](n)


def _tuple_in_branch(s, a, b, n):
    t = 0.0
    with s.while_loop(gt.cond(n) < 3) as body:   # tuple in branch
        t += 1.0
        if FLAG:
            v, w = t, 2.0
        else:
            v, w = 1.0, 2.0
        add[1, 4, body](a, v * w)
        count[1, 1, body](n)


def _mixed_targets(s, a, b, n):
    st, t = _Box(), 0.0
    with s.while_loop(gt.cond(n) < 3) as body:   # mixed targets
        t += 1.0
        st.v, st.w = t, 2.0   # (swapped onto the stack, then stored)
        add[1, 4, body](a, st.v)
        count[1, 1, body](n)


def _match_case(s, a, b, n):
    t, mode = 0.0, "a"
    with s.while_loop(gt.cond(n) < 3) as body:   # match case
        t += 1.0
        match mode:
            case "a":
                v = t
            case _:
                v = 1.0
        add[1, 4, body](a, v)
        count[1, 1, body](n)


def _or_default(s, a, b, n):
    t = 0.0
    with s.while_loop(gt.cond(n) < 3) as body:   # or default
        t += 1.0
        v = t or 1.0
        add[1, 4, body](a, v)
        count[1, 1, body](n)


def _pingpong_in_branch(s, a, b, n):
    bufs, k = [a, b], 0
    with s.while_loop(gt.cond(n) < 4) as body:   # pingpong in branch
        if FLAG:
            j = k % 2
        else:
            j = 0
        shift[1, 4, body](bufs[j], bufs[1 - j])
        k += 1
        count[1, 1, body](n)


def _reset_not_taken(s, a, b, n):
    t = 0.0
    with s.while_loop(gt.cond(n) < 3) as body:   # reset not taken
        if OFF:
            t = 0.0
        add[1, 4, body](a, t)
        t += 1.0
        count[1, 1, body](n)


def _flag_the_body_toggles(s, a, b, n):
    t, flip = 0.0, True
    with s.while_loop(gt.cond(n) < 3) as body:   # flag the body toggles
        t += 1.0
        if flip:
            v = 1.0
        else:
            v = t
        flip = not flip
        add[1, 4, body](a, v)
        count[1, 1, body](n)


def _store_in_inner_loop(s, a, b, n):
    t = 0.0
    with s.while_loop(gt.cond(n) < 3) as body:   # store in inner loop
        for j in range(2):
            if j:
                t = 0.5
            add[1, 4, body](a, t)   # (j == 0: what the iteration before left)
        t += 1.0
        count[1, 1, body](n)


class _Adam:
    def __init__(self, w, bias_correction=True):
        self.w, self.bias_correction, self.t = w, bias_correction, 0

    def step(self, s):
        self.t += 1
        if self.bias_correction:
            bc = 1 - 0.5 ** self.t
        else:
            bc = 1.0
        add[1, 4, s](self.w, bc)


def _optimizer_in_branch(s, a, b, n):
    opt = _Adam(a)
    with s.while_loop(gt.cond(n) < 3) as body:   # optimizer in branch
        opt.step(body)
        count[1, 1, body](n)


def _body_function_branch(s, a, b, n):
    t = 0.0

    def sweep(body):
        nonlocal t
        t += 1.0
        if FLAG:
            v = t
        else:
            v = 1.0
        add[1, 4, body](a, v)
        count[1, 1, body](n)
    s.while_loop(gt.cond(n) < 3, body=sweep)   # body function branch


@pytest.mark.parametrize("program, marker, named", [
    (_branch_local, "branch local", "changes `t`,"),
    (_override_not_taken, "override not taken", "changes `t`,"),
    (_try_except, "try except", "changes `t`,"),
    (_attribute_in_branch, "attribute in branch", "changes `st.t`,"),
    (_tuple_in_branch, "tuple in branch", "changes `t`,"),
    (_mixed_targets, "mixed targets", "changes `t`,"),
    (_match_case, "match case", "changes `t`,"),
    (_or_default, "or default", "changes `t`,"),
    (_pingpong_in_branch, "pingpong in branch", "changes `k`,"),
    (_reset_not_taken, "reset not taken", "changes `t`,"),
    (_flag_the_body_toggles, "flag the body toggles", "changes `flip` and `t`,"),
    (_store_in_inner_loop, "store in inner loop", "changes `t`,"),
    (_optimizer_in_branch, "optimizer in branch", "changes `opt.t`,"),
    (_body_function_branch, "body function branch", "changes `t`,"),
])
def test_a_number_a_body_changes_and_reads_again_on_another_path_is_refused(
        program, marker, named):
    f = gt.graph(program, backend="sim")
    a, b, n = dev(0, 0, 0, 0), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    with pytest.raises(gt.ArgumentError) as info:
        f(a, b, n)
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert named in e and "reads again in the next iteration" in e, e


def test_bodies_storing_on_every_path_before_reading_run_as_eagerly():
    """A name stored in each branch, in a try and its except clause, or at each
    trip of an inner loop before it is read, and a counter nothing reads: each
    eager iteration does the same."""
    @gt.graph(backend="sim")
    def f(s, a, n):
        trips, t, v, w = 0, 9.0, 9.0, 9.0
        with s.while_loop(gt.cond(n) < 3) as body:
            trips += 1                   # read by nothing
            if FLAG:
                t = 1.0
            else:
                t = 2.0
            try:
                v = 0.5
            except ValueError:
                v = 0.25
            for j in range(2):
                w = 0.125 if j else 0.0
                add[1, 4, body](a, w)
            add[1, 4, body](a, t + v)
            count[1, 1, body](n)

    a, n = dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [4.875] * 4 and host(n) == [3]


@contextlib.contextmanager
def _annotate(name):
    yield   # (a profiler's range: lets an exception on)


def test_a_temporary_made_in_a_with_statement_of_the_body_runs_as_eagerly():
    """``tmp``, made again at each iteration inside a context manager's block and
    read after it, is stored before that read: only an exception the context
    manager swallowed would skip the store."""
    @gt.graph(backend="sim")
    def f(s, a, b, n):
        tmp = s.empty(4, np.float32)
        with s.while_loop(gt.cond(n) < 3) as body:
            with _annotate("step"):
                tmp = body.empty(4, np.float32)
                shift[1, 4, body](a, tmp)
            shift[1, 4, body](tmp, b)
            count[1, 1, body](n)

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(b) == [2.0, 3.0, 4.0, 5.0] and host(n) == [3]


def test_a_branch_a_flag_fixed_for_the_loop_decides_runs_as_eagerly():
    """``if FLAG: v = 1.0 else: v = t``: the flag, which the body leaves alone,
    takes the first arm at each iteration, as when the body was recorded, so
    the counter ``t`` reaches no work (a test of a number the body changes is
    not followed so)."""
    @gt.graph(backend="sim")
    def f(s, a, n):
        t, mode = 0.0, "a"
        with s.while_loop(gt.cond(n) < 3) as body:
            t += 1.0
            if FLAG:
                v = 1.0
            else:
                v = t
            if mode != "a" or OFF:
                v = t
            add[1, 4, body](a, v)
            count[1, 1, body](n)

    a, n = dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [3.0] * 4 and host(n) == [3]


def _after_branch_local(s, a, b, c, n):
    hit = 0.0
    with s.if_then(gt.cond(n) > 0) as then:   # after branch local
        add[1, 4, then](b, 1.0)
        hit = 5.0
    if FLAG:
        v = hit   # after branch local read
    else:
        v = 0.0
    add[1, 4, s](a, v)


def _after_read_first(s, a, b, c, n):
    hit = 0.0
    with s.if_then(gt.cond(n) > 0) as then:   # after read first
        add[1, 4, then](b, 1.0)
        hit = 5.0
    if FLAG:
        add[1, 4, s](a, 2.0 * hit)   # after read first read
    else:
        v = hit
        add[1, 4, s](a, v)


@pytest.mark.parametrize("program, marker", [
    (_after_branch_local, "after branch local"),
    (_after_read_first, "after read first"),
])
def test_a_number_a_branch_sets_and_code_after_it_reads_on_some_path_is_refused(
        program, marker):
    """The refusal names the first line after the block, in reading order, that
    reads the number."""
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(0, 0, 0, 0), dev(0, 0, 0, 0), dev(0, 0, 0, 0), dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert f"changes `hit`, which line {line_of(__file__, marker + ' read')} reads" in e, e


def test_code_after_a_branch_storing_on_every_path_runs_as_eagerly():
    """``hit`` stored again in both arms after the block before it is read: the
    code after reads nothing the body set."""
    @gt.graph(backend="sim")
    def f(s, a, b, n):
        hit = 0.0
        with s.if_then(gt.cond(n) > 0) as then:
            add[1, 4, then](b, 1.0)
            hit = 5.0
        if FLAG:
            hit = 2.0
        else:
            hit = 3.0
        add[1, 4, s](a, hit)

    a, b = dev(0, 0, 0, 0), dev(0, 0, 0, 0)
    f(a, b, dev(0, dtype=np.int32))
    assert host(a) == [2.0] * 4 and host(b) == [0.0] * 4

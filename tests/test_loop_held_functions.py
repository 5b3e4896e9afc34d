"""State a loop's or a branch's body changes or reads through functions held in
names: a closure, a bound method, a ``functools.partial`` or a global function,
called by the body, handed to a helper that calls it, or called after the block.

Python runs a body once and the device repeats that recording (or skips it), so
a body that flips a counter through one such function and picks its arrays by
another (``step(body, bufs, cur, bump)`` with ``cur`` reading what ``bump``
changes) ran every iteration on the first one's arrays, and the code after an
``if_then`` reading through ``get()`` what the body set through ``set_()``
always saw the recorded pass's value. Each is refused at the block's line, as
the same reads written out in the body are. The programs beside them, whose
functions reach only what stays fixed, or only report what changes, run as
eagerly.
"""
import functools

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host, shift
from helpers import line_of


def _counter():
    box = [0]

    def cur():
        return box[0]

    def bump():
        box[0] += 1
    return cur, bump


class _Ctr:
    def __init__(self):
        self.k = 0

    def cur(self):
        return self.k

    def bump(self):
        self.k += 1


def _flip(st):
    st["i"] = 1 - st["i"]


def _pick(st, bufs):
    return bufs[st["i"]], bufs[1 - st["i"]]


# --- a loop's body calling functions it holds


def _refused_in_the_loop(program, marker, named):
    f = gt.graph(program, backend="sim")
    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    with pytest.raises(gt.ArgumentError) as info:
        f(a, b, n)
    e = info.value
    assert e.source[1] == line_of(__file__, marker), str(e)
    assert named in str(e) and "Python runs the body once" in str(e), str(e)


def _bound_called(s, a, b, n):
    bufs, c = [a, b], _Ctr()
    cur, bump = c.cur, c.bump
    with s.while_loop(gt.cond(n) < 3) as body:   # bound called
        shift[1, 4, body](bufs[cur() % 2], bufs[(cur() + 1) % 2])
        bump()
        count[1, 1, body](n)


def _closure_deciding(s, a, b, n):
    cur, bump = _counter()
    with s.while_loop(gt.cond(n) < 3) as body:   # closure deciding
        if cur() % 2 == 0:
            shift[1, 4, body](a, b)
        else:
            shift[1, 4, body](b, a)
        bump()
        count[1, 1, body](n)


def _partial_called(s, a, b, n):
    st = {"i": 0}
    fl = functools.partial(_flip, st)
    pk = functools.partial(_pick, st, [a, b])
    with s.while_loop(gt.cond(n) < 3) as body:   # partial called
        src, dst = pk()
        shift[1, 4, body](src, dst)
        fl()
        count[1, 1, body](n)


def _partial_of_unnamed_state_called(s, a, b, n):
    st = {"i": 0}
    fl = functools.partial(_flip, st)
    pk = functools.partial(_pick, st, [a, b])
    del st
    with s.while_loop(gt.cond(n) < 3) as body:   # partial of unnamed state called
        src, dst = pk()
        shift[1, 4, body](src, dst)
        fl()
        count[1, 1, body](n)


def _partial_of_bound_called(s, a, b, n):
    c = _Ctr()
    cur, bump = functools.partial(c.cur), c.bump
    bufs = [a, b]
    with s.while_loop(gt.cond(n) < 3) as body:   # partial of bound called
        shift[1, 4, body](bufs[cur() % 2], bufs[(cur() + 1) % 2])
        bump()
        count[1, 1, body](n)


@pytest.mark.parametrize("program, marker, named", [
    (_bound_called, "bound called", "changes c.k,"),
    (_closure_deciding, "closure deciding", "cur.<box>[0]"),
    (_partial_called, "partial called", "st['i']"),
    (_partial_of_unnamed_state_called, "partial of unnamed state called", "['i']"),
    (_partial_of_bound_called, "partial of bound called", "c.k"),
])
def test_a_counter_read_through_a_function_the_body_holds_and_calls_is_refused(
        program, marker, named):
    """A bound method, a closure, a partial held in a name, called by the body:
    eagerly each iteration reads the counter anew and works on the other array;
    the graph would repeat the first iteration's."""
    _refused_in_the_loop(program, marker, named)


# --- the code after a branch reading through a held function what the body set


class _Mode:
    def __init__(self):
        self.m = "a"

    def get(self):
        return self.m

    def set_(self, m):
        self.m = m


def _getm(st):
    return st["m"]


def _setm(st, m):
    st["m"] = m


def _accessors(kind):
    if kind == "closure":
        box = ["a"]

        def get():
            return box[0]

        def set_(m):
            box[0] = m
        return get, set_
    if kind == "bound":
        md = _Mode()
        return md.get, md.set_
    st = {"m": "a"}
    return functools.partial(_getm, st), functools.partial(_setm, st)


def _refused_after(program, marker):
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(0, 0, 0, 0), dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert "after the block" in e, e
    assert f"line {line_of(__file__, marker + ' read')} reads" in e, e


def _after_closure(s, a, n):
    get, set_ = _accessors("closure")
    with s.if_then(gt.cond(n) > 0) as then:   # after closure
        add[1, 4, then](a, 1.0)
        set_("b")
    add[1, 4, s](a, 100.0 if get() == "b" else 10.0)   # after closure read


def _after_bound(s, a, n):
    get, set_ = _accessors("bound")
    with s.if_then(gt.cond(n) > 0) as then:   # after bound
        add[1, 4, then](a, 1.0)
        set_("b")
    add[1, 4, s](a, 100.0 if get() == "b" else 10.0)   # after bound read


def _after_partial(s, a, n):
    get, set_ = _accessors("partial")
    with s.if_then(gt.cond(n) > 0) as then:   # after partial
        add[1, 4, then](a, 1.0)
        set_("b")
    add[1, 4, s](a, 100.0 if get() == "b" else 10.0)   # after partial read


class _Result:
    def __init__(self, x):
        self.res = x

    def get(self):
        return self.res

    def keep(self, y):
        self.res = y


def _after_array(s, a, n):
    b = s.zeros(4, np.float32)
    r = _Result(a)
    get, keep = r.get, r.keep
    with s.if_then(gt.cond(n) > 0) as then:   # after array
        shift[1, 4, then](a, b)
        keep(b)
    add[1, 4, s](get(), 1.0)   # after array read


@pytest.mark.parametrize("program, marker", [
    (_after_closure, "after closure"),
    (_after_bound, "after bound"),
    (_after_partial, "after partial"),
    (_after_array, "after array"),
])
def test_a_setting_the_branch_changes_through_a_held_function_read_after_is_refused(
        program, marker):
    """Eagerly a branch not taken leaves the setting "a" and the code after the
    block adds 10 (or reads the first array); the graph would always see what
    the recorded pass left."""
    _refused_after(program, marker)


def test_a_setting_changed_through_a_held_function_only_reported_after_runs_as_eagerly():
    """The code after the branch reads the setting only to report it."""
    reported = []

    @gt.graph(backend="sim")
    def f(s, a, n):
        get, set_ = _accessors("bound")
        with s.if_then(gt.cond(n) > 0) as then:
            add[1, 4, then](a, 1.0)
            set_("b")
        reported.append(get())
        add[1, 4, s](a, 10.0)

    a, n = dev(0, 0, 0, 0), dev(1, dtype=np.int32)
    f(a, n)
    assert host(a) == [11, 11, 11, 11] and reported == ["b"]

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
    (_bound_called, "bound called", "changes `c.k`,"),
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


# --- a loop's body handing functions it holds to a helper


def _nonlocal_counter():
    k = 0

    def cur():
        return k

    def bump():
        nonlocal k
        k += 1
    return cur, bump


K = 0


def _global_cur():
    return K


def _global_bump():
    global K
    K += 1


def _cur_of(st):
    return st["i"]


def _step(body, bufs, cur, bump):
    shift[1, 4, body](bufs[cur() % 2], bufs[(cur() + 1) % 2])
    bump()


def _step_deciding(body, a, b, cur, bump):
    if cur() % 2 == 0:
        shift[1, 4, body](a, b)
    else:
        shift[1, 4, body](b, a)
    bump()


def _step_picked(body, pick, flip):
    src, dst = pick()
    shift[1, 4, body](src, dst)
    flip()


class _Holder:
    pass


class _Picker:
    """Which array is read, picked by its own counter when called."""

    def __init__(self, bufs):
        self.bufs, self.k = bufs, 0

    def __call__(self):
        return self.bufs[self.k % 2], self.bufs[(self.k + 1) % 2]

    def flip(self):
        self.k += 1


def _closure_handed(s, a, b, n):
    cur, bump = _counter()
    with s.while_loop(gt.cond(n) < 3) as body:   # closure handed
        _step(body, [a, b], cur, bump)
        count[1, 1, body](n)


def _nonlocal_handed(s, a, b, n):
    cur, bump = _nonlocal_counter()
    with s.while_loop(gt.cond(n) < 3) as body:   # nonlocal handed
        _step(body, [a, b], cur, bump)
        count[1, 1, body](n)


def _bound_handed(s, a, b, n):
    c = _Ctr()
    cur, bump = c.cur, c.bump
    with s.while_loop(gt.cond(n) < 3) as body:   # bound handed
        _step(body, [a, b], cur, bump)
        count[1, 1, body](n)


def _bound_of_unnamed_object_handed(s, a, b, n):
    c = _Ctr()
    cur, bump = c.cur, c.bump
    del c
    with s.while_loop(gt.cond(n) < 3) as body:   # bound of unnamed object handed
        _step(body, [a, b], cur, bump)
        count[1, 1, body](n)


def _global_handed(s, a, b, n):
    global K
    K = 0
    with s.while_loop(gt.cond(n) < 3) as body:   # global handed
        _step(body, [a, b], _global_cur, _global_bump)
        count[1, 1, body](n)


def _closure_handed_by_keyword(s, a, b, n):
    cur, bump = _counter()
    with s.while_loop(gt.cond(n) < 3) as body:   # closure handed by keyword
        _step(body, [a, b], bump=bump, cur=cur)
        count[1, 1, body](n)


def _bound_handed_deciding(s, a, b, n):
    c = _Ctr()
    cur, bump = c.cur, c.bump
    with s.while_loop(gt.cond(n) < 3) as body:   # bound handed deciding
        _step_deciding(body, a, b, cur, bump)
        count[1, 1, body](n)


def _partial_handed(s, a, b, n):
    st = {"i": 0}
    with s.while_loop(gt.cond(n) < 3) as body:   # partial handed
        _step_picked(body, functools.partial(_pick, st, [a, b]), functools.partial(_flip, st))
        count[1, 1, body](n)


def _partial_getter_handed(s, a, b, n):
    st = {"i": 0}
    cur, fl = functools.partial(_cur_of, st), functools.partial(_flip, st)
    with s.while_loop(gt.cond(n) < 3) as body:   # partial getter handed
        _step(body, [a, b], cur, fl)
        count[1, 1, body](n)


def _step_from_list(body, bufs, fns):
    shift[1, 4, body](bufs[fns[0]() % 2], bufs[(fns[0]() + 1) % 2])
    fns[1]()


def _step_handing_on(body, bufs, cur, bump):
    _step(body, bufs, cur, bump)


def _read(cur):
    return cur()


def _bound_of_a_held_object_handed(s, a, b, n):
    m = _Holder()
    m.c = _Ctr()
    cur, bump = m.c.cur, m.c.bump
    with s.while_loop(gt.cond(n) < 3) as body:   # bound of a held object handed
        _step(body, [a, b], cur, bump)
        count[1, 1, body](n)


def _list_of_bound_handed(s, a, b, n):
    c = _Ctr()
    fns = [c.cur, c.bump]
    with s.while_loop(gt.cond(n) < 3) as body:   # list of bound handed
        _step_from_list(body, [a, b], fns)
        count[1, 1, body](n)


def _handed_on_by_the_helper(s, a, b, n):
    c = _Ctr()
    cur, bump = c.cur, c.bump
    with s.while_loop(gt.cond(n) < 3) as body:   # handed on by the helper
        _step_handing_on(body, [a, b], cur, bump)
        count[1, 1, body](n)


def _returned_by_the_helper(s, a, b, n):
    bufs, c = [a, b], _Ctr()
    cur, bump = c.cur, c.bump
    with s.while_loop(gt.cond(n) < 3) as body:   # returned by the helper
        k = _read(cur)
        shift[1, 4, body](bufs[k % 2], bufs[(k + 1) % 2])
        bump()
        count[1, 1, body](n)


def _callable_object_handed(s, a, b, n):
    pk = _Picker([a, b])
    with s.while_loop(gt.cond(n) < 3) as body:   # callable object handed
        _step_picked(body, pk, pk.flip)
        count[1, 1, body](n)


def _sweep_with(bufs, cur, bump, n, body):
    _step(body, bufs, cur, bump)
    count[1, 1, body](n)


def _body_partial_of_bound(s, a, b, n):
    c = _Ctr()
    s.while_loop(gt.cond(n) < 3, body=functools.partial(   # body partial of bound
        _sweep_with, [a, b], c.cur, c.bump, n))


def _launch_picked(st, body, bufs):
    shift[1, 4, body](bufs[st["i"]], bufs[1 - st["i"]])


def _step_launching(body, bufs, go, flip):
    go(body, bufs)
    flip()


def _handed_launching(s, a, b, n):
    st = {"i": 0}
    go, fl = functools.partial(_launch_picked, st), functools.partial(_flip, st)
    del st
    with s.while_loop(gt.cond(n) < 3) as body:   # handed launching
        _step_launching(body, [a, b], go, fl)
        count[1, 1, body](n)


@pytest.mark.parametrize("program, marker, named", [
    (_closure_handed, "closure handed", "cur.<box>[0]"),
    (_nonlocal_handed, "nonlocal handed", ".<k>"),
    (_bound_handed, "bound handed", "c.k"),
    (_bound_of_unnamed_object_handed, "bound of unnamed object handed", ".k"),
    (_global_handed, "global handed", "changes `K`,"),
    (_closure_handed_by_keyword, "closure handed by keyword", "[0]"),
    (_bound_handed_deciding, "bound handed deciding", "c.k"),
    (_partial_handed, "partial handed", "st['i']"),
    (_partial_getter_handed, "partial getter handed", "st['i']"),
    (_bound_of_a_held_object_handed, "bound of a held object handed", "changes `m.c.k`,"),
    (_list_of_bound_handed, "list of bound handed", "c.k"),
    (_handed_on_by_the_helper, "handed on by the helper", "c.k"),
    (_returned_by_the_helper, "returned by the helper", "c.k"),
    (_callable_object_handed, "callable object handed", "pk.k"),
    (_body_partial_of_bound, "body partial of bound", "__self__.k"),
    (_handed_launching, "handed launching", "go.args[0]['i']"),
])
def test_a_counter_read_through_a_function_handed_to_a_helper_is_refused(
        program, marker, named):
    """A closure, a bound method, a global function, a partial or a callable
    object handed to a helper that calls it (also in a list, by a keyword, or
    handed on to another helper), deciding the helper's work or launching its
    own by the counter: the same as the body calling it."""
    _refused_in_the_loop(program, marker, named)


def _logger():
    lines = []

    def log(msg):
        lines.append(msg)
        return len(lines)
    return log, lines


def _step_logged(body, x, log):
    log(f"step of {x.size}")
    add[1, 4, body](x, 1.0)


class _Settings:
    def __init__(self):
        self.dt, self.trips = 0.5, 0

    def get_dt(self):
        return self.dt

    def tick(self):
        self.trips += 1

    def trip(self):
        return self.trips


def _step_dt(body, x, get_dt, tick, trip, log):
    add[1, 4, body](x, get_dt())
    tick()
    log.append(f"trip {trip()}")


class _Restarting(_Ctr):
    def cur(self):
        self.k = 0
        return self.k


def test_a_held_function_setting_what_it_reads_first_runs_as_eagerly():
    """A getter handed to the helper that sets the counter before reading it
    gives the same number at each iteration, whatever the body's bump did."""
    @gt.graph(backend="sim")
    def f(s, a, b, n):
        c = _Restarting()
        cur, bump = c.cur, c.bump
        with s.while_loop(gt.cond(n) < 3) as body:
            _step(body, [a, b], cur, bump)
            count[1, 1, body](n)

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(a) == [0, 1, 2, 3] and host(b) == [1, 2, 3, 4] and host(n) == [3]


def test_held_functions_reaching_only_what_stays_fixed_run_as_eagerly():
    """A closure logging (its count grows, only reported), a bound getter of a
    setting the body leaves alone beside a bound counter only counted, and a
    partial getter of a fixed setting: each iteration records the same work."""
    log, lines = _logger()
    trips = []

    @gt.graph(backend="sim")
    def f(s, a, b, n):
        st = _Settings()
        get_dt, tick, trip = st.get_dt, st.tick, st.trip
        scale = functools.partial(_cur_of, {"i": 2})
        with s.while_loop(gt.cond(n) < 3) as body:
            _step_logged(body, a, log)
            _step_dt(body, b, get_dt, tick, trip, trips)
            add[1, 4, body](a, float(scale()))
            count[1, 1, body](n)

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(a) == [9, 10, 11, 12] and host(b) == [1.5, 1.5, 1.5, 1.5]
    assert host(n) == [3] and lines == ["step of 4"] and trips == ["trip 1"]


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


# --- the code after a branch handing the getter to a helper


def _post(s, x, get):
    add[1, 4, s](x, 100.0 if get() == "b" else 10.0)


def _after_handed(s, a, n):
    get, set_ = _accessors("bound")
    with s.if_then(gt.cond(n) > 0) as then:   # after handed
        add[1, 4, then](a, 1.0)
        set_("b")
    _post(s, a, get)   # after handed read


def _after_closure_handed(s, a, n):
    get, set_ = _accessors("closure")
    with s.if_then(gt.cond(n) > 0) as then:   # after closure handed
        add[1, 4, then](a, 1.0)
        set_("b")
    _post(s, a, get)   # after closure handed read


def _after_if_else_handed(s, a, n):
    get, set_ = _accessors("partial")
    with s.if_else(gt.cond(n) > 0) as (then, otherwise):   # after if_else handed
        set_("b")
        add[1, 4, then](a, 1.0)
        add[1, 4, otherwise](a, 2.0)
    _post(s, a, get)   # after if_else handed read


def _launch_by_mode(st, s, x):
    add[1, 4, s](x, 100.0 if st["m"] == "b" else 10.0)


def _post_by(s, x, go):
    go(s, x)


def _after_handed_launching(s, a, n):
    st = {"m": "a"}
    go, set_ = functools.partial(_launch_by_mode, st), functools.partial(_setm, st)
    with s.if_then(gt.cond(n) > 0) as then:   # after handed launching
        add[1, 4, then](a, 1.0)
        set_("b")
    _post_by(s, a, go)   # after handed launching read


@pytest.mark.parametrize("program, marker", [
    (_after_handed, "after handed"),
    (_after_closure_handed, "after closure handed"),
    (_after_if_else_handed, "after if_else handed"),
    (_after_handed_launching, "after handed launching"),
])
def test_a_setting_the_branch_changes_read_by_a_helper_handed_the_getter_is_refused(
        program, marker):
    """The code after the block hands the getter to a helper deciding by it, or a
    function launching by the setting to a helper calling it."""
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

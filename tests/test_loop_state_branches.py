"""A value a loop body picks by a test of state the body changes.

``if ST.mode == 0: v = 1.0`` else ``v = 5.0``, then ``add(a, v)`` and
``ST.flip()``: run eagerly, each iteration takes the other arm; Python runs
the body once, when it is recorded, and the device repeats the first
iteration's arm. The test decides no launch itself, only the number the
launch takes, so each program here ran silently (the method forms: a global
object's, self's, an object self or a global holds, a bound method kept in a
container, a classmethod, a staticmethod, one reached through ``super()``;
and the direct form too). Now each is refused at the block's line. The
programs beside them, whose bodies change nothing their tests read, run as
eagerly.

The same holds of which kernel or function the body launches (``kern = mul``
after ``kern[1, 4, body](x)``; a helper, ``body.launch(k, ...)``,
``body.child(g, x)``, an attribute, a list reversed, a global a helper sets)
and of what the loop's own condition reads (``gt.cond(c) > lim`` with ``lim
+= 1`` in the body): each ran the first iteration's in silence and is refused.
"""
import types

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host, mul
from helpers import line_of


class _State:
    def __init__(self):
        self.mode, self.n = 0, 1

    def flip(self):
        self.mode = 1 - self.mode

    def tick(self):
        self.n += 1


class _Sub(_State):
    def flip(self):
        super().flip()


class _Modes:
    """A mode kept on a class, and its classmethod and staticmethod changing it."""
    mode = 0

    @classmethod
    def flip(cls):
        cls.mode = 1 - cls.mode

    @staticmethod
    def toggle():
        _Modes.mode = 1 - _Modes.mode


class _Holder:
    def __init__(self):
        self.st = _State()


ST, SUB, HOLD = _State(), _Sub(), _Holder()
FLIPS = [ST.flip]
ACTIONS = {"flip": ST.flip}


@pytest.fixture(autouse=True)
def _fresh_state():
    for st in (ST, SUB, HOLD.st):
        st.mode, st.n = 0, 1
    _Modes.mode = 0


def _flip_global():
    ST.mode = 1 - ST.mode


def _global_method(s, a, b, n):
    with s.while_loop(gt.cond(n) < 3) as body:   # global method
        if ST.mode == 0:
            v = 1.0
        else:
            v = 5.0
        add[1, 4, body](a, v)
        ST.flip()
        count[1, 1, body](n)


def _direct(s, a, b, n):
    with s.while_loop(gt.cond(n) < 3) as body:   # direct
        if ST.mode == 0:
            v = 1.0
        else:
            v = 5.0
        add[1, 4, body](a, v)
        ST.mode = 1 - ST.mode
        count[1, 1, body](n)


def _global_helper(s, a, b, n):
    with s.while_loop(gt.cond(n) < 3) as body:   # global helper
        if ST.mode == 0:
            v = 1.0
        else:
            v = 5.0
        add[1, 4, body](a, v)
        _flip_global()
        count[1, 1, body](n)


def _held_by_a_global(s, a, b, n):
    with s.while_loop(gt.cond(n) < 3) as body:   # held by a global
        if HOLD.st.mode == 0:
            v = 1.0
        else:
            v = 5.0
        add[1, 4, body](a, v)
        HOLD.st.flip()
        count[1, 1, body](n)


def _bound_method_in_a_list(s, a, b, n):
    with s.while_loop(gt.cond(n) < 3) as body:   # bound method in a list
        if ST.mode == 0:
            v = 1.0
        else:
            v = 5.0
        add[1, 4, body](a, v)
        FLIPS[0]()
        count[1, 1, body](n)


def _bound_method_in_a_dict(s, a, b, n):
    with s.while_loop(gt.cond(n) < 3) as body:   # bound method in a dict
        v = 1.0 if ST.mode == 0 else 5.0
        add[1, 4, body](a, v)
        ACTIONS["flip"]()
        count[1, 1, body](n)


def _classmethod(s, a, b, n):
    with s.while_loop(gt.cond(n) < 3) as body:   # classmethod
        if _Modes.mode == 0:
            v = 1.0
        else:
            v = 5.0
        add[1, 4, body](a, v)
        _Modes.flip()
        count[1, 1, body](n)


def _staticmethod(s, a, b, n):
    with s.while_loop(gt.cond(n) < 3) as body:   # staticmethod
        if _Modes.mode == 0:
            v = 1.0
        else:
            v = 5.0
        add[1, 4, body](a, v)
        _Modes.toggle()
        count[1, 1, body](n)


def _through_super(s, a, b, n):
    with s.while_loop(gt.cond(n) < 3) as body:   # through super
        if SUB.mode == 0:
            v = 1.0
        else:
            v = 5.0
        add[1, 4, body](a, v)
        SUB.flip()
        count[1, 1, body](n)


def _match_statement(s, a, b, n):
    with s.while_loop(gt.cond(n) < 3) as body:   # match statement
        match ST.mode:
            case 0:
                v = 1.0
            case _:
                v = 5.0
        add[1, 4, body](a, v)
        ST.flip()
        count[1, 1, body](n)


def _trips_of_a_for_loop(s, a, b, n):
    with s.while_loop(gt.cond(n) < 3) as body:   # trips of a for loop
        total = 0.0
        for _ in range(ST.n):
            total += 1.0
        add[1, 4, body](a, total)
        ST.tick()
        count[1, 1, body](n)


def _step(body, a):
    if ST.mode == 0:
        v = 1.0
    else:
        v = 5.0
    add[1, 4, body](a, v)


def _branch_in_a_helper(s, a, b, n):
    with s.while_loop(gt.cond(n) < 3) as body:   # branch in a helper
        _step(body, a)
        ST.flip()
        count[1, 1, body](n)


def _body_function(s, a, b, n):
    st = _State()

    def sweep(body):
        if st.mode == 0:
            v = 1.0
        else:
            v = 5.0
        add[1, 4, body](a, v)
        st.flip()
        count[1, 1, body](n)
    s.while_loop(gt.cond(n) < 3, body=sweep)   # body function


@pytest.mark.parametrize("program, marker, named", [
    (_global_method, "global method", "changes `ST.mode`,"),
    (_direct, "direct", "changes `ST.mode`,"),
    (_global_helper, "global helper", "changes `ST.mode`,"),
    (_held_by_a_global, "held by a global", "changes `HOLD.st.mode`,"),
    (_bound_method_in_a_list, "bound method in a list", "changes `ST.mode`,"),
    (_bound_method_in_a_dict, "bound method in a dict", "changes `ST.mode`,"),
    (_classmethod, "classmethod", "changes `_Modes.mode`,"),
    (_staticmethod, "staticmethod", "changes `_Modes.mode`,"),
    (_through_super, "through super", "changes `SUB.mode`,"),
    (_match_statement, "match statement", "changes `ST.mode`,"),
    (_trips_of_a_for_loop, "trips of a for loop", "changes `ST.n`,"),
    (_branch_in_a_helper, "branch in a helper", "changes `ST.mode`,"),
    (_body_function, "body function", "changes `st.mode`,"),
])
def test_a_number_picked_by_a_test_of_state_a_method_of_the_body_changes_is_refused(
        program, marker, named):
    f = gt.graph(program, backend="sim")
    a, b, n = dev(0, 0, 0, 0), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    with pytest.raises(gt.ArgumentError) as info:
        f(a, b, n)
    e = info.value
    assert e.source[1] == line_of(__file__, marker), str(e)
    assert named in str(e) and "Python runs the body once" in str(e), str(e)


class _Solver:
    def __init__(self):
        self.mode, self.st = 0, _State()

    def flip(self):
        self.mode = 1 - self.mode

    @gt.graph(backend="sim")
    def by_self(self, s, a, n):
        with s.while_loop(gt.cond(n) < 3) as body:   # self's method
            if self.mode == 0:
                v = 1.0
            else:
                v = 5.0
            add[1, 4, body](a, v)
            self.flip()
            count[1, 1, body](n)

    @gt.graph(backend="sim")
    def by_held(self, s, a, n):
        with s.while_loop(gt.cond(n) < 3) as body:   # held by self
            if self.st.mode == 0:
                v = 1.0
            else:
                v = 5.0
            add[1, 4, body](a, v)
            self.st.flip()
            count[1, 1, body](n)


@pytest.mark.parametrize("method, marker, named", [
    ("by_self", "self's method", "changes `self.mode`,"),
    ("by_held", "held by self", "changes `self.st.mode`,"),
])
def test_a_number_picked_by_a_test_of_self_that_its_method_changes_is_refused(
        method, marker, named):
    a, n = dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    with pytest.raises(gt.ArgumentError) as info:
        getattr(_Solver(), method)(a, n)
    assert info.value.source[1] == line_of(__file__, marker), str(info.value)
    assert named in str(info.value), str(info.value)


def test_methods_changing_what_no_test_of_the_body_reads_run_as_eagerly():
    """``ST.tick()`` beside a test of ``ST.mode``; a test of a mode fixed for the
    loop picking the number; a counter kept by a method and only counted:
    each eager iteration takes the same arm."""
    @gt.graph(backend="sim")
    def f(s, a, n):
        with s.while_loop(gt.cond(n) < 3) as body:
            if ST.mode == 0:
                v = 1.0
            else:
                v = 5.0
            add[1, 4, body](a, v)
            ST.tick()
            if HOLD.st.n > 100:
                w = 2.0
            else:
                w = 0.5
            add[1, 4, body](a, w)
            SUB.flip()
            count[1, 1, body](n)

    a, n = dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [4.5] * 4 and host(n) == [3]
    assert ST.n == 2   # (the body's Python ran once, when it was recorded)


def _add_step(s, x):
    add[1, 4, s](x, 3.0)


def _mul_step(s, x):
    mul[1, 4, s](x, 3.0)


@gt.graph
def _add_child(s, x):
    add[1, 4, s](x, 3.0)


@gt.graph
def _mul_child(s, x):
    mul[1, 4, s](x, 3.0)


KERN = add


def _use_mul():
    global KERN
    KERN = mul


def _kernel_swapped(s, x, n):
    kern = add
    with s.while_loop(gt.cond(n) < 2) as body:   # kernel swapped
        kern[1, 4, body](x, 3.0)
        kern = mul
        count[1, 1, body](n)


def _helper_swapped(s, x, n):
    step = _add_step
    with s.while_loop(gt.cond(n) < 2) as body:   # helper swapped
        step(body, x)
        step = _mul_step
        count[1, 1, body](n)


def _launch_swapped(s, x, n):
    k = add
    with s.while_loop(gt.cond(n) < 2) as body:   # launch swapped
        body.launch(k, 1, 4, x, 3.0)
        k = mul
        count[1, 1, body](n)


def _child_swapped(s, x, n):
    g = _add_child
    with s.while_loop(gt.cond(n) < 2) as body:   # child swapped
        body.child(g, x)
        g = _mul_child
        count[1, 1, body](n)


def _attribute_swapped(s, x, n):
    m = types.SimpleNamespace(k=add)
    with s.while_loop(gt.cond(n) < 2) as body:   # attribute swapped
        m.k[1, 4, body](x, 3.0)
        m.k = mul
        count[1, 1, body](n)


def _list_reversed(s, x, n):
    ops = [add, mul]
    with s.while_loop(gt.cond(n) < 2) as body:   # list reversed
        ops[0][1, 4, body](x, 3.0)
        ops.reverse()
        count[1, 1, body](n)


def _global_swapped(s, x, n):
    with s.while_loop(gt.cond(n) < 2) as body:   # global swapped
        KERN[1, 4, body](x, 3.0)
        _use_mul()
        count[1, 1, body](n)


@pytest.mark.parametrize("program, marker, named", [
    (_kernel_swapped, "kernel swapped", "changes `kern`,"),
    (_helper_swapped, "helper swapped", "changes `step`,"),
    (_launch_swapped, "launch swapped", "changes `k`,"),
    (_child_swapped, "child swapped", "changes `g`,"),
    (_attribute_swapped, "attribute swapped", "changes `m.k`,"),
    (_list_reversed, "list reversed", "changes `ops[0]`"),
    (_global_swapped, "global swapped", "changes `KERN`,"),
])
def test_a_kernel_or_function_a_body_launches_then_swaps_is_refused(program, marker, named):
    """Run eagerly, the second iteration multiplies where the first added; the
    graph repeated the first iteration's kernel in silence."""
    global KERN
    KERN = add
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(1, 1, 1, 1), dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert named in e and "next iteration" in e and "s.switch" in e, e


def test_kernels_and_functions_a_body_leaves_as_they_were_run_as_eagerly():
    """A name set again to the kernel it held, one the body sets before it
    launches it, and one set after its last launch that no iteration reads:
    each iteration runs the same kernels."""
    @gt.graph(backend="sim")
    def f(s, x, n):
        kern, step, last = add, _add_step, add
        with s.while_loop(gt.cond(n) < 2) as body:
            kern[1, 4, body](x, 3.0)
            kern = add
            step(body, x)
            last = mul
            last[1, 4, body](x, 1.0)
            count[1, 1, body](n)

    x, n = dev(1, 1, 1, 1), dev(0, dtype=np.int32)
    f(x, n)
    assert host(x) == [13, 13, 13, 13] and host(n) == [2]


def _bound_raised(s, c, n):
    lim = 0
    with s.while_loop(gt.cond(c) > lim, max_iterations=10) as body:   # bound raised
        count[1, 1, body](n)
        add[1, 1, body](c, -1)
        lim += 1


def _array_rebound(s, c, n):
    dec = c
    with s.while_loop(gt.cond(c) > 0, max_iterations=10) as body:   # array rebound
        add[1, 1, body](dec, -1)
        count[1, 1, body](n)
        c = n   # (the body's code reads c nowhere: only its condition does)


def _bound_raised_by_function(s, c, n):
    lim = 0

    def step(body):
        nonlocal lim
        count[1, 1, body](n)
        add[1, 1, body](c, -1)
        lim += 1
    s.while_loop(gt.cond(c) > lim, max_iterations=10, body=step)   # bound raised by function


@pytest.mark.parametrize("program, marker, named", [
    (_bound_raised, "bound raised", "changes `lim`,"),
    (_array_rebound, "array rebound", "changes `c`,"),
    (_bound_raised_by_function, "bound raised by function", "changes `lim`,"),
])
def test_what_a_while_loops_condition_reads_changed_by_its_body_is_refused(
        program, marker, named):
    """Eager ``while c > lim: ...; lim += 1`` tests the new bound each iteration
    (c = 3 of 6); the graph tested 0 every time (c = 0), in silence."""
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(6, dtype=np.int32), dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert named in e and "its condition reads again" in e, e


def test_a_condition_whose_reads_the_body_leaves_alone_runs_as_eagerly():
    """The body changes a name the condition does not read (``trips``, and
    ``steps``, which sets ``max_iterations`` once), and sets ``lim`` to what it
    held."""
    @gt.graph(backend="sim")
    def f(s, c, n):
        lim, trips, steps = 2, 0, 10
        with s.while_loop(gt.cond(c) > lim, max_iterations=steps) as body:
            add[1, 1, body](c, -1)
            count[1, 1, body](n)
            trips += 1
            steps += 1
            lim = 2

    c, n = dev(6, dtype=np.int32), dev(0, dtype=np.int32)
    f(c, n)
    assert host(c) == [2] and host(n) == [4]


def test_a_condition_built_before_the_block_keeps_its_bound_as_eagerly():
    """``cnd = gt.cond(c) > lim`` holds the bound it was built with: the body's
    ``lim += 1`` rebinds the name, not the condition, so eagerly too the loop
    runs until c is 0."""
    @gt.graph(backend="sim")
    def f(s, c, n):
        lim = 0
        cnd = gt.cond(c) > lim
        with s.while_loop(cnd, max_iterations=10) as body:
            add[1, 1, body](c, -1)
            count[1, 1, body](n)
            lim += 1

    c, n = dev(6, dtype=np.int32), dev(0, dtype=np.int32)
    f(c, n)
    assert host(c) == [0] and host(n) == [6]


def _loop_through(s, cond, fn):
    s.while_loop(cond, max_iterations=10, body=fn)   # loop through wrapper


def _bound_raised_through_wrapper(s, c, n):
    lim = 0

    def step(body):
        nonlocal lim
        count[1, 1, body](n)
        add[1, 1, body](c, -1)
        lim += 1
    _loop_through(s, gt.cond(c) > lim, step)


def _bound_raised_through_wrapper_by_keyword(s, c, n):
    lim = 0

    def step(body):
        nonlocal lim
        count[1, 1, body](n)
        add[1, 1, body](c, -1)
        lim += 1
    _loop_through(s, fn=step, cond=gt.cond(c) > lim)


@pytest.mark.parametrize("program", [_bound_raised_through_wrapper,
                                     _bound_raised_through_wrapper_by_keyword])
def test_a_condition_handed_through_a_wrapper_to_a_body_fn_loop_is_checked(program):
    """``def loop(s, cond, fn): s.while_loop(cond, body=fn)`` called with
    ``gt.cond(c) > lim`` and a ``step`` raising ``lim``: eagerly the loop stops at
    c = 3 after 3 iterations; the graph tested the recorded bound and ran c down
    to 0 in silence."""
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(6, dtype=np.int32), dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, "loop through wrapper"), e
    assert "changes `lim`," in e and "its condition reads" in e, e


def test_a_condition_handed_through_a_wrapper_whose_reads_stay_runs_as_eagerly():
    """The wrapper's condition reads nothing the body changes: c runs down to 0."""
    @gt.graph(backend="sim")
    def f(s, c, n):
        lim, seen = 0, []

        def step(body):
            add[1, 1, body](c, -1)
            count[1, 1, body](n)
            seen.append(1)
        _loop_through(s, gt.cond(c) > lim, step)

    c, n = dev(6, dtype=np.int32), dev(0, dtype=np.int32)
    f(c, n)
    assert host(c) == [0] and host(n) == [6]

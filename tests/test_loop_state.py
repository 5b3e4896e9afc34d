"""Python state a while loop's body changes and reads again in its next iteration.

Python runs a body once, when it is recorded, and the device repeats that
recording; the same loop run eagerly would read the changed state in its next
iteration. Each program here ran silently on the arrays and numbers of its
first iteration; now it is refused at the block's line. The programs beside
them, whose bodies change nothing they read again, still run as eagerly.
"""
import collections
import contextlib
import enum
import functools
import types

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host, shift
from helpers import line_of

U = V = None


def _list_swap(s, a, b, n):
    bufs = [a, b]
    with s.while_loop(gt.cond(n) < 3) as body:   # list swap
        shift[1, 4, body](bufs[0], bufs[1])
        count[1, 1, body](n)
        bufs[0], bufs[1] = bufs[1], bufs[0]


def _list_reversed(s, a, b, n):
    bufs = (a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # tuple reversed
        shift[1, 4, body](*bufs)
        count[1, 1, body](n)
        bufs = bufs[::-1]


def _attribute_swap(s, a, b, n):
    st = types.SimpleNamespace(u=a, v=b)
    with s.while_loop(gt.cond(n) < 3) as body:   # attribute swap
        shift[1, 4, body](st.u, st.v)
        count[1, 1, body](n)
        st.u, st.v = st.v, st.u


def _helper_swap(s, a, b, n):
    st = types.SimpleNamespace(u=a, v=b)

    def flip(state):
        state.u, state.v = state.v, state.u
    with s.while_loop(gt.cond(n) < 3) as body:   # helper swap
        shift[1, 4, body](st.u, st.v)
        count[1, 1, body](n)
        flip(st)


def _peek_result(st):
    return st.result


def _record_result(st):
    st.result = st.v


def _helper_reads_recorded_result(s, a, b, n):
    st = types.SimpleNamespace(u=a, v=b, result=a)
    with s.while_loop(gt.cond(n) < 3) as body:   # helper reads recorded result
        shift[1, 4, body](_peek_result(st), st.v)
        count[1, 1, body](n)
        _record_result(st)


def _counter_pick(s, a, b, n):
    bufs, k = (a, b), 0
    with s.while_loop(gt.cond(n) < 3) as body:   # counter pick
        shift[1, 4, body](bufs[k % 2], bufs[(k + 1) % 2])
        count[1, 1, body](n)
        k += 1


def _number_to_kernel(s, a, b, n):
    step = 1.0
    with s.while_loop(gt.cond(n) < 3) as body:   # number to kernel
        add[1, 4, body](a, step)
        count[1, 1, body](n)
        step *= 2


def _dict_in_body_function(s, a, b, n):
    d = {"u": a, "v": b}

    def sweep(body):
        shift[1, 4, body](d["u"], d["v"])
        count[1, 1, body](n)
        d["u"], d["v"] = d["v"], d["u"]
    s.while_loop(gt.cond(n) < 3, body=sweep)   # dict in body function


def _global_swap(s, a, b, n):
    global U, V
    U, V = a, b
    with s.while_loop(gt.cond(n) < 3) as body:   # global swap
        shift[1, 4, body](U, V)
        count[1, 1, body](n)
        U, V = V, U


class _Stepper:
    def __init__(self, a, b):
        self.u, self.v, self.t = a, b, 1.0

    def sweep(self, body, n):
        shift[1, 4, body](self.u, self.v)
        count[1, 1, body](n)
        self.u, self.v = self.v, self.u


def _method_body(s, a, b, n):
    stepper = _Stepper(a, b)
    s.while_loop(gt.cond(n) < 3, body=lambda body: stepper.sweep(body, n))   # method body


def _bound_method_body(s, a, b, n):
    stepper = _Stepper(a, b)
    s.while_loop(gt.cond(n) < 3, body=stepper.sweep_n(n))   # bound method body


def _sweep_n(self, n):
    def sweep(body):
        shift[1, 4, body](self.u, self.v)
        count[1, 1, body](n)
        self.u, self.v = self.v, self.u
    return sweep


_Stepper.sweep_n = _sweep_n


def _time_attribute(s, a, b, n):
    clock = _Stepper(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # time attribute
        add[1, 4, body](a, clock.t)
        count[1, 1, body](n)
        clock.t += 0.5


@pytest.mark.parametrize("program, marker, named", [
    (_list_swap, "list swap", "`bufs[0]` and `bufs[1]`"),
    (_list_reversed, "tuple reversed", "`bufs[0]` and `bufs[1]`"),
    (_attribute_swap, "attribute swap", "`st.u` and `st.v`"),
    (_helper_swap, "helper swap", "`st.u` and `st.v`"),
    (_helper_reads_recorded_result, "helper reads recorded result", "st.result"),
    (_counter_pick, "counter pick", "changes `k`,"),
    (_number_to_kernel, "number to kernel", "changes `step`,"),
    (_dict_in_body_function, "dict in body function", "`d['u']` and `d['v']`"),
    (_global_swap, "global swap", "`U` and `V`"),
    (_method_body, "method body", "`stepper.u` and `stepper.v`"),
    (_bound_method_body, "bound method body", "`self.u` and `self.v`"),
    (_time_attribute, "time attribute", "clock.t"),
])
def test_state_a_body_changes_and_reads_again_is_refused_at_its_line(program, marker, named):
    _refused_at(program, marker, named)


def _refused_at(program, marker, named):
    f = gt.graph(program, backend="sim")
    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    with pytest.raises(gt.ArgumentError) as info:
        f(a, b, n)
    e = info.value
    assert e.source[1] == line_of(__file__, marker), str(e)
    assert named in str(e) and "Python runs the body once" in str(e), str(e)


def test_a_method_whose_loop_body_swaps_its_attributes_is_refused():
    class Solver:
        def __init__(self, a, b):
            self.u, self.v = a, b

        @gt.graph(backend="sim")
        def solve(self, s, n):
            with s.while_loop(gt.cond(n) < 3) as body:   # swaps self's arrays
                shift[1, 4, body](self.u, self.v)
                count[1, 1, body](n)
                self.u, self.v = self.v, self.u

    solver = Solver(dev(0, 1, 2, 3), dev(0, 0, 0, 0))
    with pytest.raises(gt.ArgumentError, match=r"changes `self\.u` and `self\.v`") as e:
        solver.solve(dev(0, dtype=np.int32))
    assert e.value.source[1] == line_of(__file__, "swaps self's arrays")


def test_bodies_that_change_nothing_they_read_again_run_as_eagerly():
    """A counter nothing else reads, a for loop's variable handed to a kernel,
    a temporary made in the body, a list the body appends to, settings it only
    reads: each iteration of the eager loop does the same, so the graph's
    results are the eager loop's."""
    cfg = types.SimpleNamespace(inc=1.0, calls=0)
    log = []

    @gt.graph(backend="sim")
    def f(s, a, b, n):
        trips, i = 0, 9
        t = s.empty(4, np.float32)
        with s.while_loop(gt.cond(n) < 3) as body:
            for i in range(2):                 # i was bound before: stored first
                add[1, 4, body](a, float(i) + cfg.inc)
            t = body.empty(4, np.float32)      # bound before it is read
            shift[1, 4, body](a, t)
            shift[1, 4, body](t, b)
            count[1, 1, body](n)
            log.append("trip")
            trips += 1                         # read by nothing else
            cfg.calls += 1

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(a) == [9, 10, 11, 12]          # three trips of + 1.0 + 2.0
    assert host(b) == [11, 12, 13, 14] and host(n) == [3]


def test_a_helper_recording_the_result_array_that_nothing_reads_runs_as_eagerly():
    """``_record_result(st)`` at the end of the body sets ``st.result = st.v``,
    another array than before, but neither the body nor a helper it hands ``st``
    reads ``st.result`` before that: each eager iteration does the same."""
    @gt.graph(backend="sim")
    def f(s, a, b, n):
        st = types.SimpleNamespace(u=a, v=b, result=a)
        with s.while_loop(gt.cond(n) < 3) as body:
            shift[1, 4, body](st.u, st.v)
            count[1, 1, body](n)
            _record_result(st)

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(b) == [1, 2, 3, 4] and host(n) == [3]


def test_what_a_body_swaps_on_its_way_back_leaves_the_state_as_it_was():
    """Two swaps in one body leave every name on its array: nothing is carried."""
    @gt.graph(backend="sim")
    def f(s, u, v, n):
        with s.while_loop(gt.cond(n) < 2) as body:
            shift[1, 4, body](u, v)
            u, v = v, u
            shift[1, 4, body](u, v)
            u, v = v, u
            count[1, 1, body](n)

    u, v, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(u, v, n)
    assert host(u) == [4, 5, 6, 7] and host(v) == [3, 4, 5, 6]


# --- state reached otherwise: deques, index arrays, deeper objects, helpers, wrappers

def _deque_rotated(s, a, b, n):
    d = collections.deque([a, b])
    with s.while_loop(gt.cond(n) < 3) as body:   # deque rotated
        shift[1, 4, body](d[0], d[1])
        count[1, 1, body](n)
        d.rotate()


def _indices_flipped(s, a, b, n):
    bufs, idx = [a, b], np.array([0, 1])
    with s.while_loop(gt.cond(n) < 3) as body:   # indices flipped
        shift[1, 4, body](bufs[idx[0]], bufs[idx[1]])
        count[1, 1, body](n)
        idx[:] = idx[::-1]


def _deep_reversed(s, a, b, n):
    model = types.SimpleNamespace(grid=types.SimpleNamespace(bufs=[a, b]))
    with s.while_loop(gt.cond(n) < 3) as body:   # deep reversed
        shift[1, 4, body](model.grid.bufs[0], model.grid.bufs[1])
        count[1, 1, body](n)
        model.grid.bufs.reverse()


BIG = {f"layer{i}": [float(j) for j in range(30)] for i in range(200)}   # 6000 numbers


def _swap_beside_a_big_global(s, a, b, n):
    scale = BIG["layer0"][1]
    with s.while_loop(gt.cond(n) < 3) as body:   # beside a big global
        add[1, 4, body](a, scale)
        shift[1, 4, body](a, b)
        count[1, 1, body](n)
        a, b = b, a


def _advance(body, x, t):
    add[1, 4, body](x, t)
    return t + 1.0


def _number_on_its_line(s, a, b, n):
    t = 1.0
    with s.while_loop(gt.cond(n) < 3) as body:   # number on its line
        t = _advance(body, a, t)
        count[1, 1, body](n)


def _pick_on_its_line(s, a, b, n):
    bufs, k = [a, b], 0
    with s.while_loop(gt.cond(n) < 3) as body:   # pick on its line
        src, dst, k = bufs[k], bufs[1 - k], 1 - k
        shift[1, 4, body](src, dst)
        count[1, 1, body](n)


def _helper_nonlocal(s, a, b, n):
    t = 1.0

    def advance(body):
        nonlocal t
        add[1, 4, body](a, t)
        t += 1.0
    with s.while_loop(gt.cond(n) < 3) as body:   # helper nonlocal
        advance(body)
        count[1, 1, body](n)


def _helper_closure_reversed(s, a, b, n):
    bufs = [a, b]

    def sweep(body):
        shift[1, 4, body](bufs[0], bufs[1])
        bufs.reverse()
    with s.while_loop(gt.cond(n) < 3) as body:   # helper closure reversed
        sweep(body)
        count[1, 1, body](n)


def _sweep_list(bufs, n, body):
    shift[1, 4, body](bufs[0], bufs[1])
    count[1, 1, body](n)
    bufs.reverse()


def _partial_body(s, a, b, n):
    s.while_loop(gt.cond(n) < 3, body=functools.partial(_sweep_list, [a, b], n))   # partial body


class _Sweep:
    def __init__(self, a, b, n):
        self.u, self.v, self.n = a, b, n

    def __call__(self, body):
        shift[1, 4, body](self.u, self.v)
        count[1, 1, body](self.n)
        self.u, self.v = self.v, self.u


def _object_body(s, a, b, n):
    s.while_loop(gt.cond(n) < 3, body=_Sweep(a, b, n))   # object body


def _default_body(s, a, b, n):
    def sweep(body, bufs=[a, b]):
        _sweep_list(bufs, n, body)
    s.while_loop(gt.cond(n) < 3, body=sweep)   # default body


def _exit_stack(s, a, b, n):
    with contextlib.ExitStack() as stack:
        body = stack.enter_context(s.while_loop(gt.cond(n) < 3))   # exit stack
        shift[1, 4, body](a, b)
        count[1, 1, body](n)
        a, b = b, a


@contextlib.contextmanager
def _repeat(s, n):
    with s.while_loop(gt.cond(n) < 3) as body:   # context manager
        yield body
        count[1, 1, body](n)


def _context_manager(s, a, b, n):
    with _repeat(s, n) as body:
        shift[1, 4, body](a, b)
        a, b = b, a


@pytest.mark.parametrize("program, marker, named", [
    (_deque_rotated, "deque rotated", "`d[0]` and `d[1]`"),
    (_indices_flipped, "indices flipped", "idx"),
    (_deep_reversed, "deep reversed", "`model.grid.bufs[0]` and `model.grid.bufs[1]`"),
    (_swap_beside_a_big_global, "beside a big global", "`a` and `b`"),
    (_number_on_its_line, "number on its line", "changes `t`,"),
    (_pick_on_its_line, "pick on its line", "k"),
    (_helper_nonlocal, "helper nonlocal", "t"),
    (_helper_closure_reversed, "helper closure reversed", "`bufs[0]` and `bufs[1]`"),
    (_partial_body, "partial body", "`bufs[0]` and `bufs[1]`"),
    (_object_body, "object body", "`self.u` and `self.v`"),
    (_default_body, "default body", "`bufs[0]` and `bufs[1]`"),
    (_exit_stack, "exit stack", "`a` and `b`"),
    (_context_manager, "context manager", "`a` and `b`"),
])
def test_state_reached_otherwise_and_changed_by_a_body_is_refused(program, marker, named):
    _refused_at(program, marker, named)


class _Field:
    def __init__(self, u):
        self.u = u
        self.refresh()

    def refresh(self):
        self.inner = self.u[1:3]


def test_bodies_that_report_or_make_again_what_they_read_run_as_eagerly():
    """A counter read only to report it, the same view made again, a number set
    to what it already becomes, a temporary put in a dict before it is read, and a
    counter in a dict beside its arrays: each iteration of the eager loop does
    the same work."""
    import logging
    log = logging.getLogger("graphtrace.tests.loop")
    state = {"u": dev(0, 0, 0, 0), "launches": 0}
    field = _Field(dev(0, 0, 0, 0))

    @gt.graph(backend="sim")
    def f(s, a, n):
        launches, blocks = 0, 4
        ws = {"t": s.empty(4, np.float32)}
        with s.while_loop(gt.cond(n) < 3) as body:
            launches += 1
            log.debug("recorded launch %d", launches)
            field.refresh()
            add[1, 4, body](field.inner, 1.0)
            a = a.reshape(4)
            blocks = min(blocks, 1)
            ws["t"] = body.empty(4, np.float32)
            shift[blocks, 4, body](a, ws["t"])
            shift[blocks, 4, body](ws["t"], a)
            add[1, 4, body](state["u"], 1.0)
            state["launches"] += 1
            count[1, 1, body](n)

    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [6, 7, 8, 9] and host(field.u) == [0, 3, 3, 0]
    assert host(state["u"]) == [3, 3, 3, 3] and host(n) == [3]


# --- round two: names reaching one slot, launches sized by a number, host arrays

def _grid_grows(s, a, b, n):
    level = 1
    with s.while_loop(gt.cond(n) < 3) as body:   # grid grows
        shift[level, 4, body](a, b)
        count[1, 1, body](n)
        level += 1


def _host_time(s, a, b, n):
    t = np.zeros(1)
    with s.while_loop(gt.cond(n) < 3) as body:   # host time
        add[1, 4, body](a, t[0])
        count[1, 1, body](n)
        t[0] += 0.5


class _Tables:
    def __init__(self, a, b):
        self.tables = [[float(j) for j in range(200)] for _ in range(6)]
        self.bufs, self.k = [a, b], 0


def _counter_past_big_tables(s, a, b, n):
    m = _Tables(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # past big tables
        shift[1, 4, body](m.bufs[m.k % 2], m.bufs[(m.k + 1) % 2])
        count[1, 1, body](n)
        m.k += 1


@gt.graph(backend="sim")
def _swapping_graph(s, n):
    global U, V
    shift[1, 4, s](U, V)
    count[1, 1, s](n)
    U, V = V, U


def _graph_function_body(s, a, b, n):
    global U, V
    U, V = a, b
    s.while_loop(gt.cond(n) < 3, body=lambda body: _swapping_graph(body, n))   # graph body


@pytest.mark.parametrize("program, marker, named", [
    (_grid_grows, "grid grows", "level"),
    (_host_time, "host time", "changes `t`,"),
    (_counter_past_big_tables, "past big tables", "m.k"),
    (_graph_function_body, "graph body", "`U` and `V`"),
])
def test_numbers_sizing_launches_host_arrays_and_far_slots_are_watched(program, marker, named):
    _refused_at(program, marker, named)


def test_a_slot_a_body_stores_through_one_name_is_not_read_through_another():
    """``st = self.state; st.result = st.u``: stored before it is read, through
    ``st``; ``self.state.result``, the same slot, is no swap."""
    class Solver:
        def __init__(self, a, b):
            self.state = types.SimpleNamespace(u=a, v=b, result=b)

        @gt.graph(backend="sim")
        def run(self, s, n):
            st = self.state
            with s.while_loop(gt.cond(n) < 3) as body:
                st.result = st.u
                add[1, 4, body](st.result, 1.0)
                count[1, 1, body](n)

    solver = Solver(dev(0, 1, 2, 3), dev(0, 0, 0, 0))
    solver.run(dev(0, dtype=np.int32))
    assert host(solver.state.u) == [3, 4, 5, 6]


class _Target:
    pass


class _RaisingInterface:
    @property
    def __cuda_array_interface__(self):
        raise RuntimeError("no interface here")


def test_a_dead_weak_proxy_or_an_object_raising_for_its_interface_leaves_the_trace_alone():
    """A closure holding a weak proxy whose object is gone crashed the trace with a
    ReferenceError (is_array, the walk of what the function reaches); a local
    whose array interface raises failed the loop check."""
    import weakref
    gone = weakref.proxy(_Target())   # its object freed at once

    @gt.graph(backend="sim")
    def f(s, a, n):
        if how == "proxy":
            _ = gone
        with s.while_loop(gt.cond(n) < 3) as body:
            add[1, 4, body](a, 1.0)
            count[1, 1, body](n)

    for how in ("proxy", "odd"):
        def g(s, a, n):
            held = _RaisingInterface()   # a local the loop check looks at
            with s.while_loop(gt.cond(n) < 3) as body:
                add[1, 4, body](a, 1.0)
                count[1, 1, body](n)
            del held
        a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
        (f if how == "proxy" else gt.graph(g, backend="sim"))(a, n)
        assert host(a) == [3, 4, 5, 6], how


# --- subscripts computed by arithmetic: every name the subscript loads indexes

def _window_by_arithmetic(s, a, b, n):
    k = 0
    with s.while_loop(gt.cond(n) < 2) as body:   # window by arithmetic
        add[1, 4, body](a[k * 2:(k + 1) * 2], 1.0)
        count[1, 1, body](n)
        k += 1


def _window_by_attribute(s, a, b, n):
    st = types.SimpleNamespace(k=0)
    with s.while_loop(gt.cond(n) < 2) as body:   # window by attribute
        add[1, 4, body](a[st.k:st.k + 2], 1.0)
        count[1, 1, body](n)
        st.k += 2


def _window_through_a_name(s, a, b, n):
    k = 0
    with s.while_loop(gt.cond(n) < 2) as body:   # window through a name
        lo = k * 2
        add[1, 4, body](a[lo:lo + 2], 1.0)
        count[1, 1, body](n)
        k += 1


@pytest.mark.parametrize("program, marker, named", [
    (_window_by_arithmetic, "window by arithmetic", "changes `k`,"),
    (_window_by_attribute, "window by attribute", "changes `st.k`,"),
    (_window_through_a_name, "window through a name", "changes `k`,"),
])
def test_a_number_a_body_changes_and_slices_by_through_arithmetic_is_refused(
        program, marker, named):
    """``a[k * 2:(k + 1) * 2]`` then ``k += 1``: the eager loop works on the next
    window in each iteration, the device on the first one every time."""
    _refused_at(program, marker, named)


def test_windows_computed_from_numbers_fixed_for_the_loop_run_as_eagerly():
    """Slice bounds computed from numbers the body never changes, also through a
    name it sets first, beside a counter it changes but slices nothing by."""
    @gt.graph(backend="sim")
    def f(s, a, n):
        k, width, trips = 1, 2, 0
        with s.while_loop(gt.cond(n) < 3) as body:
            lo = k * width
            add[1, 4, body](a[lo:lo + width], 1.0)
            add[1, 4, body](a[(k - 1) * width:k * width - 1], 1.0)
            count[1, 1, body](n)
            trips += 1

    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [3, 1, 5, 6] and host(n) == [3]


# --- list and dict items picking, slicing by or sizing the work

def _pick_by_list_item(s, a, b, n):
    bufs, idx = [a, b], [0]
    with s.while_loop(gt.cond(n) < 3) as body:   # pick by list item
        shift[1, 4, body](bufs[idx[0]], bufs[1 - idx[0]])
        count[1, 1, body](n)
        idx[0] = 1 - idx[0]


def _pick_by_dict_item(s, a, b, n):
    pick, d = [a, b], {"k": 0}
    with s.while_loop(gt.cond(n) < 3) as body:   # pick by dict item
        src = pick[d["k"]]
        shift[1, 4, body](src, pick[1 - d["k"]])
        count[1, 1, body](n)
        d["k"] = 1 - d["k"]


def _window_by_dict_item(s, a, b, n):
    st = {"k": 0}
    with s.while_loop(gt.cond(n) < 2) as body:   # window by dict item
        add[1, 4, body](a[st["k"]:st["k"] + 2], 1.0)
        count[1, 1, body](n)
        st["k"] += 2


def _grid_by_list_item(s, a, b, n):
    cfg = [1]
    with s.while_loop(gt.cond(n) < 3) as body:   # grid by list item
        add[cfg[0], 2, body](a, 1.0)
        count[1, 1, body](n)
        cfg[0] += 1


@pytest.mark.parametrize("program, marker, named", [
    (_pick_by_list_item, "pick by list item", "changes `idx[0]`,"),
    (_pick_by_dict_item, "pick by dict item", "changes `d['k']`,"),
    (_window_by_dict_item, "window by dict item", "changes `st['k']`,"),
    (_grid_by_list_item, "grid by list item", "changes `cfg[0]`,"),
])
def test_an_item_a_body_changes_and_picks_slices_or_sizes_by_is_refused(
        program, marker, named):
    """``bufs[idx[0]]`` then ``idx[0] = 1 - idx[0]``: refused as ``bufs[k]`` with
    ``k = 1 - k`` is; the device ran every iteration on the first pick."""
    _refused_at(program, marker, named)


def test_items_changed_beside_those_picked_by_or_set_first_run_as_eagerly():
    """An item beside the one a body picks by (``d["trips"]`` next to ``d["k"]``),
    a list item beside the launch's size (``cfg[1]`` next to ``cfg[0]``), and an
    item the body sets before it slices by it: each iteration of the eager loop
    does the same work."""
    @gt.graph(backend="sim")
    def f(s, a, b, n):
        bufs, d, cfg, pos = [a, b], {"k": 0, "trips": 0}, [1, 0], {"lo": 3}
        with s.while_loop(gt.cond(n) < 3) as body:
            pos["lo"] = 2
            add[1, 4, body](bufs[d["k"]][pos["lo"]:pos["lo"] + 2], 1.0)
            add[cfg[0], 4, body](bufs[1 - d["k"]], 1.0)
            count[1, 1, body](n)
            d["trips"] += 1
            cfg[1] = cfg[1] + 1

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(a) == [0, 1, 5, 6] and host(b) == [3, 3, 3, 3] and host(n) == [3]


# --- temporaries sized by a number the body changes

def _temporary_grows(s, a, b, n):
    m = 2
    with s.while_loop(gt.cond(n) < 3) as body:   # temporary grows
        t = body.zeros(m, np.float32)
        add[1, 4, body](t, 1.0)
        shift[1, 2, body](t, a)
        count[1, 1, body](n)
        m += 1


def _temporary_by_attribute(s, a, b, n):
    st = types.SimpleNamespace(rows=1)
    with s.while_loop(gt.cond(n) < 3) as body:   # temporary by attribute
        t = body.empty((st.rows, 2), dtype=np.float32)
        shift[1, 2, body](a, t[0])
        count[1, 1, body](n)
        st.rows += 1


@pytest.mark.parametrize("program, marker, named", [
    (_temporary_grows, "temporary grows", "changes `m`,"),
    (_temporary_by_attribute, "temporary by attribute", "changes `st.rows`,"),
])
def test_a_number_a_body_changes_and_sizes_a_temporary_by_is_refused(program, marker, named):
    """``t = body.zeros(m)`` then ``m += 1``: every device iteration used the first
    iteration's size; the message says to size it by a number fixed for the loop."""
    _refused_at(program, marker, named)
    with pytest.raises(gt.ArgumentError, match="numbers fixed for the loop") as e:
        gt.graph(program, backend="sim")(dev(0, 1, 2, 3), dev(0, 0, 0, 0),
                                         dev(0, dtype=np.int32))
    assert "or run the loop on the host" in str(e.value)


def test_temporaries_sized_by_numbers_fixed_for_the_loop_run_as_eagerly():
    """A temporary sized by a number the body does not change, beside a counter of
    the same value it does change, and one sized by a name the body sets first."""
    @gt.graph(backend="sim")
    def f(s, a, n):
        m, trips, rows = 4, 4, 7
        with s.while_loop(gt.cond(n) < 3) as body:
            t = body.zeros(m, np.float32)
            rows = 2
            u = body.zeros((rows, 4), np.float32)
            add[1, 4, body](t, 1.0)
            add[1, 4, body](u[1], 1.0)
            shift[1, 4, body](t, u[0])
            shift[1, 4, body](u[1], t)
            shift[1, 4, body](t, a)
            count[1, 1, body](n)
            trips += 1
            rows += 1

    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [3, 3, 3, 3] and host(n) == [3]


# --- sizes, grids and windows held in a list or tuple the body reads whole

def _shape_list_grows(s, a, b, n):
    shape = [2]
    with s.while_loop(gt.cond(n) < 3) as body:   # shape list grows
        t = body.zeros(shape, np.float32)
        add[1, 4, body](t, 1.0)
        shift[1, 2, body](t, a)
        count[1, 1, body](n)
        shape[0] += 1


def _shape_tuple_rebound(s, a, b, n):
    shape = (2, 1)
    with s.while_loop(gt.cond(n) < 3) as body:   # shape tuple rebound
        t = body.zeros(shape, np.float32)
        shift[1, 2, body](a, t[:, 0])
        count[1, 1, body](n)
        shape = (shape[0] + 1, 1)


def _shape_rebuilt(s, a, b, n):
    shape = [2]
    with s.while_loop(gt.cond(n) < 3) as body:   # shape rebuilt
        t = body.zeros(shape, np.float32)
        shift[1, 2, body](a, t)
        count[1, 1, body](n)
        shape = [m + 1 for m in shape]


def _grid_tuple(s, a, b, n):
    grid = (1,)
    with s.while_loop(gt.cond(n) < 3) as body:   # grid tuple
        add[grid, 2, body](a, 1.0)
        count[1, 1, body](n)
        grid = (grid[0] + 1,)


def _starred_launch(s, a, b, n):
    cfg = [1, 2]
    with s.while_loop(gt.cond(n) < 3) as body:   # starred launch
        body.launch(add, *cfg, a, 1.0)
        count[1, 1, body](n)
        cfg[1] += 2


def _launch_by_dict_values(s, a, b, n):
    cfg = {"grid": 1, "block": 2}
    with s.while_loop(gt.cond(n) < 3) as body:   # launch by dict values
        body.launch(add, *cfg.values(), a, 1.0)
        count[1, 1, body](n)
        cfg["block"] += 1


def _window_by_starred_slice(s, a, b, n):
    lims = [0, 2]
    with s.while_loop(gt.cond(n) < 2) as body:   # window by starred slice
        add[1, 4, body](a[slice(*lims)], 1.0)
        count[1, 1, body](n)
        lims[1] += 2


def _starred_time_changed_first(s, a, b, n):
    ts = [0.5]
    with s.while_loop(gt.cond(n) < 3) as body:   # starred time changed first
        ts[0] += 0.25
        add[1, 4, body](a, *ts)
        count[1, 1, body](n)


@pytest.mark.parametrize("program, marker, named", [
    (_shape_list_grows, "shape list grows", "changes `shape[0]`,"),
    (_shape_tuple_rebound, "shape tuple rebound", "changes `shape[0]`,"),
    (_shape_rebuilt, "shape rebuilt", "changes `shape[0]`,"),
    (_grid_tuple, "grid tuple", "changes `grid[0]`,"),
    (_starred_launch, "starred launch", "changes `cfg[1]`,"),
    (_launch_by_dict_values, "launch by dict values", "changes `cfg['block']`,"),
    (_window_by_starred_slice, "window by starred slice", "changes `lims[1]`,"),
    (_starred_time_changed_first, "starred time changed first", "changes `ts[0]`,"),
])
def test_an_item_of_a_container_a_body_reads_whole_and_changes_is_refused(
        program, marker, named):
    """``body.zeros(shape)`` then ``shape[0] += 1``, ``k[grid, 2, body]`` then
    ``grid = (grid[0] + 1,)``, ``body.launch(k, *cfg, x)`` then ``cfg[1] += 2``:
    the container, read whole, carries the item into the size, the launch or
    the window, as ``m`` does in ``body.zeros(m)``; each ran silently with the
    first iteration's values."""
    _refused_at(program, marker, named)


def test_containers_read_whole_beside_items_that_reach_no_work_run_as_eagerly():
    """A counter in a list beside the launch's ``*cfg``, an attribute beside the
    one picked by (``st.count`` next to ``bufs[st.k]``), a host object's own
    ``launch(*cfg)``, and a shape list set before the temporary it sizes."""
    class Rocket:
        def launch(self, *cfg):
            pass

    @gt.graph(backend="sim")
    def f(s, a, b, n):
        cfg, stats, bufs = [1, 4], [0], [a, b]
        st, rocket, shape = types.SimpleNamespace(k=0, count=0), Rocket(), [4]
        with s.while_loop(gt.cond(n) < 3) as body:
            body.launch(add, *cfg, bufs[st.k], 1.0)
            rocket.launch(*stats)
            shape = [2]
            t = body.zeros(shape, np.float32)
            add[1, 2, body](t, 1.0)
            shift[1, 2, body](t, b)
            count[1, 1, body](n)
            stats[0] += 1
            st.count += 1
            shape[0] += 1

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(a) == [3, 4, 5, 6] and host(b) == [2, 2, 0, 0] and host(n) == [3]


# --- slots told apart by their whole path, not by an attribute's name or a key

def _other_object_stored_first(s, a, b, n):
    bufs, st, rec = [a, b], types.SimpleNamespace(k=0), types.SimpleNamespace()
    with s.while_loop(gt.cond(n) < 3) as body:   # other object stored first
        rec.k = 5
        shift[1, 4, body](bufs[st.k % 2], bufs[(st.k + 1) % 2])
        count[1, 1, body](n)
        st.k += 1


def _other_dict_stored_first(s, a, b, n):
    bufs = [a, b]
    st, log = types.SimpleNamespace(d={"k": 0}), types.SimpleNamespace(d={})
    with s.while_loop(gt.cond(n) < 3) as body:   # other dict stored first
        log.d["k"] = 5
        shift[1, 4, body](bufs[st.d["k"]], bufs[1 - st.d["k"]])
        count[1, 1, body](n)
        st.d["k"] = 1 - st.d["k"]


@pytest.mark.parametrize("program, marker, named", [
    (_other_object_stored_first, "other object stored first", "changes `st.k`,"),
    (_other_dict_stored_first, "other dict stored first", "changes `st.d['k']`,"),
])
def test_a_slot_is_not_taken_for_stored_first_by_another_objects_of_its_name(
        program, marker, named):
    """``rec.k = 5`` stores another object's ``k`` (``log.d["k"] = 5`` another
    dict's item): ``st.k``, which picks the arrays and which the body changes,
    is still read first."""
    _refused_at(program, marker, named)


def test_a_slot_set_from_another_of_its_name_each_iteration_runs_as_eagerly():
    """``cur.pos = cfg.pos`` and ``o2.d["k"] = o1.d["k"]`` set the cursor anew at
    the start of each iteration: every iteration moves the same windows."""
    @gt.graph(backend="sim")
    def f(s, a, n):
        cfg, cur = types.SimpleNamespace(pos=0), types.SimpleNamespace(pos=0)
        o1, o2 = types.SimpleNamespace(d={"k": 1}), types.SimpleNamespace(d={"k": 0})
        with s.while_loop(gt.cond(n) < 3) as body:
            cur.pos = cfg.pos
            o2.d["k"] = o1.d["k"]
            for _ in range(2):
                add[1, 4, body](a[cur.pos:cur.pos + 2], 1.0)
                cur.pos += 2
            add[1, 4, body](a[o2.d["k"]:o2.d["k"] + 1], 1.0)
            o2.d["k"] += 1
            count[1, 1, body](n)

    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [3, 7, 5, 6] and host(n) == [3]


# --- dynamic numbers of the call (stand-ins) swapped or rebound in a body

def _stand_ins_swapped(s, a, b, n, p, q):
    with s.while_loop(gt.cond(n) < 3) as body:   # stand-ins swapped
        add[1, 4, body](a, p)
        count[1, 1, body](n)
        p, q = q, p


def _stand_in_rebound(s, a, b, n, p, q):
    cur = p
    with s.while_loop(gt.cond(n) < 3) as body:   # stand-in rebound
        add[1, 4, body](a, cur)
        count[1, 1, body](n)
        cur = q


def _stand_ins_reversed(s, a, b, n, p, q):
    ps = [p, q]
    with s.while_loop(gt.cond(n) < 3) as body:   # stand-ins reversed
        add[1, 4, body](a, ps[0])
        count[1, 1, body](n)
        ps.reverse()


@pytest.mark.parametrize("program, marker, named", [
    (_stand_ins_swapped, "stand-ins swapped", "changes `p` and `q`,"),
    (_stand_in_rebound, "stand-in rebound", "changes `cur`,"),
    (_stand_ins_reversed, "stand-ins reversed", "changes `ps[0]` and `ps[1]`,"),
])
def test_a_dynamic_number_a_body_hands_a_kernel_then_swaps_is_refused(program, marker, named):
    """``add(a, p)`` then ``p, q = q, p``: the eager loop adds p, q, p; the graph
    added p in every iteration (the number is the call's, rebound by later calls)."""
    f = gt.graph(program, backend="sim")
    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    with pytest.raises(gt.ArgumentError) as info:
        f(a, b, n, 1.0, 10.0)
    assert info.value.source[1] == line_of(__file__, marker), str(info.value)
    assert named in str(info.value) and "Python runs the body once" in str(info.value)


def test_dynamic_numbers_a_body_only_hands_kernels_run_as_eagerly():
    """A dynamic number handed to a kernel in each iteration, beside a name set to
    another before it is read: every iteration adds the same number, also for a
    later call's numbers."""
    @gt.graph(backend="sim")
    def f(s, a, n, p, q):
        last = p
        with s.while_loop(gt.cond(n) < 3) as body:
            last = q
            add[1, 4, body](a, p)
            add[1, 4, body](a, last)
            count[1, 1, body](n)

    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n, 1.0, 10.0)
    assert host(a) == [33, 34, 35, 36] and host(n) == [3]
    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n, 2.0, 20.0)
    assert host(a) == [66, 67, 68, 69]


# --- bools picking arrays

def _flag_picks(s, a, b, n):
    bufs, flip = [a, b], False
    with s.while_loop(gt.cond(n) < 3) as body:   # flag picks
        shift[1, 4, body](bufs[flip], bufs[not flip])
        count[1, 1, body](n)
        flip = not flip


def _flag_item_picks(s, a, b, n):
    bufs, st = [a, b], {"flip": True}
    with s.while_loop(gt.cond(n) < 3) as body:   # flag item picks
        shift[1, 4, body](bufs[st["flip"]], bufs[not st["flip"]])
        count[1, 1, body](n)
        st["flip"] = not st["flip"]


@pytest.mark.parametrize("program, marker, named", [
    (_flag_picks, "flag picks", "changes `flip`,"),
    (_flag_item_picks, "flag item picks", "changes `st['flip']`,"),
])
def test_a_bool_a_body_toggles_and_picks_arrays_by_is_refused(program, marker, named):
    """``bufs[flip]`` then ``flip = not flip``: a bool picks as an int does."""
    _refused_at(program, marker, named)


def test_a_flag_a_body_toggles_and_only_reports_runs_as_eagerly():
    """A bool the body toggles and only reports or tests on the host."""
    seen = []

    @gt.graph(backend="sim")
    def f(s, a, b, n):
        bufs, odd = [a, b], False
        with s.while_loop(gt.cond(n) < 3) as body:
            shift[1, 4, body](bufs[0], bufs[1])
            count[1, 1, body](n)
            seen.append(odd)
            odd = not odd

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(b) == [1, 2, 3, 4] and host(n) == [3] and seen == [False]


# --- launches sized through numba's forall

def _forall_grows(s, a, b, n):
    m = 1
    with s.while_loop(gt.cond(n) < 3) as body:   # forall grows
        add.forall(m, stream=body)(a, 1.0)
        count[1, 1, body](n)
        m += 1


def test_a_number_a_body_changes_and_sizes_a_forall_launch_by_is_refused():
    """``add.forall(m, stream=body)`` then ``m += 1``: sized as ``add[m, 4, body]``."""
    _refused_at(_forall_grows, "forall grows", "changes `m`,")


def test_a_forall_launch_sized_by_a_number_fixed_for_the_loop_runs_as_eagerly():
    @gt.graph(backend="sim")
    def f(s, a, n):
        m, trips = 4, 0
        with s.while_loop(gt.cond(n) < 3) as body:
            add.forall(m, stream=body)(a, 1.0)
            count[1, 1, body](n)
            trips += 1

    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [3, 4, 5, 6] and host(n) == [3]


# --- windows held by slice objects

def _slice_moved(s, a, b, n):
    sl = slice(0, 2)
    with s.while_loop(gt.cond(n) < 2) as body:   # slice moved
        add[1, 4, body](a[sl], 1.0)
        count[1, 1, body](n)
        sl = slice(sl.start + 2, sl.stop + 2)


def _slice_attribute_moved(s, a, b, n):
    st = types.SimpleNamespace(win=slice(0, 2))
    with s.while_loop(gt.cond(n) < 2) as body:   # slice attribute moved
        add[1, 4, body](a[st.win], 1.0)
        count[1, 1, body](n)
        st.win = slice(st.win.stop, st.win.stop + 2)


@pytest.mark.parametrize("program, marker, named", [
    (_slice_moved, "slice moved", "changes `sl`,"),
    (_slice_attribute_moved, "slice attribute moved", "changes `st.win`,"),
])
def test_a_slice_object_a_body_moves_and_slices_by_is_refused(program, marker, named):
    """``a[sl]`` then ``sl = slice(sl.start + 2, sl.stop + 2)``: the device worked on
    the first window every iteration."""
    _refused_at(program, marker, named)


def test_slice_objects_made_again_or_set_first_run_as_eagerly():
    """A slice made again with the same bounds, and one set before it is read."""
    @gt.graph(backend="sim")
    def f(s, a, n):
        win, head = slice(1, 3), slice(3, 4)
        with s.while_loop(gt.cond(n) < 3) as body:
            head = slice(0, 1)
            add[1, 4, body](a[win], 1.0)
            add[1, 4, body](a[head], 1.0)
            win = slice(win.start, win.stop)
            count[1, 1, body](n)

    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [3, 4, 5, 3] and host(n) == [3]


# --- picks and windows through conditional expressions

def _pick_by_condition(s, a, b, n):
    bufs, k = [a, b], 0
    with s.while_loop(gt.cond(n) < 3) as body:   # pick by condition
        shift[1, 4, body](bufs[1 if k else 0], bufs[0 if k else 1])
        count[1, 1, body](n)
        k = 1 - k


def _window_by_condition(s, a, b, n):
    k = 0
    with s.while_loop(gt.cond(n) < 2) as body:   # window by condition
        add[1, 4, body](a[(2 if k else 0):(4 if k else 2)], 1.0)
        count[1, 1, body](n)
        k = 1 - k


@pytest.mark.parametrize("program, marker, named", [
    (_pick_by_condition, "pick by condition", "changes `k`,"),
    (_window_by_condition, "window by condition", "changes `k`,"),
])
def test_a_number_a_body_changes_and_picks_by_through_a_condition_is_refused(
        program, marker, named):
    """``bufs[1 if k else 0]`` then ``k = 1 - k``: the subscript reads ``k``."""
    _refused_at(program, marker, named)


def test_picks_through_conditions_on_numbers_fixed_for_the_loop_run_as_eagerly():
    @gt.graph(backend="sim")
    def f(s, a, b, n):
        bufs, first, trips = [a, b], True, 0
        with s.while_loop(gt.cond(n) < 3) as body:
            shift[1, 4, body](bufs[0 if first else 1], bufs[1 if first else 0])
            count[1, 1, body](n)
            trips = trips + 1 if trips < 10 else 0

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(b) == [1, 2, 3, 4] and host(n) == [3]


# --- counters picking only labels

PHASES = ["pre", "smooth", "post"]


def _label_and_pick(s, a, b, n):
    bufs, k = [a, b], 0
    with s.while_loop(gt.cond(n) < 3) as body:   # label and pick
        log_lines.append(PHASES[k % 3])
        shift[1, 4, body](bufs[k % 2], bufs[(k + 1) % 2])
        count[1, 1, body](n)
        k += 1


def _labels_set_to_arrays(s, a, b, n):
    names, k = ["u", "v"], 0
    with s.while_loop(gt.cond(n) < 3) as body:   # labels set to arrays
        names = [a, b]
        shift[1, 4, body](names[k % 2], names[(k + 1) % 2])
        count[1, 1, body](n)
        k += 1


log_lines: list = []


@pytest.mark.parametrize("program, marker, named", [
    (_label_and_pick, "label and pick", "changes `k`,"),
    (_labels_set_to_arrays, "labels set to arrays", "changes `k`,"),
])
def test_a_counter_picking_labels_and_arrays_is_refused(program, marker, named):
    """A counter that picks a label and an array; a list of labels the body
    sets to arrays before it picks from it."""
    _refused_at(program, marker, named)


def test_a_counter_picking_only_labels_runs_as_eagerly():
    """``log.debug("phase %s", PHASES[k % 3])``, ``cfg.short[k % 2]``,
    ``"abc"[k]``: a counter that only picks text to report changes no work."""
    import logging
    log = logging.getLogger("graphtrace.tests.loop")
    cfg = types.SimpleNamespace(short=("e", "o"))
    seen = []

    @gt.graph(backend="sim")
    def f(s, a, n):
        k, tag = 0, "abc"
        with s.while_loop(gt.cond(n) < 3) as body:
            log.debug("phase %s", PHASES[k % 3])
            seen.append((cfg.short[k % 2], tag[k]))
            add[1, 4, body](a, 1.0)
            count[1, 1, body](n)
            k += 1

    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [3, 4, 5, 6] and host(n) == [3] and seen == [("e", "a")]


# --- small host arrays kept as logs

def _host_time_set(s, a, b, n):
    t = np.zeros(2)
    with s.while_loop(gt.cond(n) < 3) as body:   # host time set
        add[1, 4, body](a, t[1])
        count[1, 1, body](n)
        t[1] = t[1] + 0.5


def _host_index_set(s, a, b, n):
    bufs, idx = [a, b], np.array([0, 5])
    with s.while_loop(gt.cond(n) < 3) as body:   # host index set
        shift[1, 4, body](bufs[idx[0]], bufs[1 - idx[0]])
        count[1, 1, body](n)
        idx[0] = 1 - idx[0]


def _host_time_whole(s, a, b, n):
    t = np.zeros(1)
    with s.while_loop(gt.cond(n) < 3) as body:   # host time whole
        t += 0.5
        add[1, 4, body](a, float(t[0]))
        count[1, 1, body](n)


def _host_time_zero_d(s, a, b, n):
    t = np.zeros(())
    with s.while_loop(gt.cond(n) < 3) as body:   # host time zero-d
        t[()] += 1.0
        add[1, 4, body](a, float(t))
        count[1, 1, body](n)


def _host_schedule_item(s, a, b, n):
    sched = np.zeros(100)
    with s.while_loop(gt.cond(n) < 3) as body:   # host schedule item
        sched[0] += 1.0
        add[1, 4, body](a, float(sched[0]))
        count[1, 1, body](n)


def _large_host_schedule_item(s, a, b, n):
    sched = np.zeros(1000)
    with s.while_loop(gt.cond(n) < 3) as body:   # large host schedule item
        sched[0] += 1.0
        add[1, 4, body](a, float(sched[0]))
        count[1, 1, body](n)


@pytest.mark.parametrize("program, marker, named", [
    (_host_time_set, "host time set", "changes `t`,"),
    (_host_index_set, "host index set", "changes `idx`,"),
    (_host_time_whole, "host time whole", "changes `t`,"),
    (_host_time_zero_d, "host time zero-d", "changes `t`,"),
    (_host_schedule_item, "host schedule item", "changes `sched`,"),
    (_large_host_schedule_item, "large host schedule item", "changes `sched`,"),
])
def test_a_host_array_value_a_kernel_takes_or_picks_by_is_refused(program, marker, named):
    _refused_at(program, marker, named)


def test_a_small_host_array_kept_as_a_log_runs_as_eagerly():
    """``losses[1] = losses[1] + 0.5``: a host array the body only writes its log
    in (and reads to do so) reaches no kernel."""
    losses = np.zeros(4)

    @gt.graph(backend="sim")
    def f(s, a, n):
        with s.while_loop(gt.cond(n) < 3) as body:
            add[1, 4, body](a, 1.0)
            count[1, 1, body](n)
            losses[1] = losses[1] + 0.5

    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [3, 4, 5, 6] and host(n) == [3] and losses[1] == 0.5


def test_a_large_host_array_kept_as_a_log_runs_as_eagerly():
    """``hist[0] += 1`` on a host array too large to keep its values: no work
    takes it."""
    hist = np.zeros(1000)

    @gt.graph(backend="sim")
    def f(s, a, n):
        with s.while_loop(gt.cond(n) < 3) as body:
            hist[0] += 1.0
            add[1, 4, body](a, 1.0)
            count[1, 1, body](n)

    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [3, 4, 5, 6] and host(n) == [3] and hist[0] == 1.0


def test_a_host_array_sized_by_a_counter_runs_as_eagerly():
    """``np.zeros(k)`` in the body is the host's, no temporary of the graph: a
    counter sizing it (equal to a temporary's size) changes no work."""
    @gt.graph(backend="sim")
    def f(s, a, b, n):
        k = 4
        with s.while_loop(gt.cond(n) < 3) as body:
            t = body.zeros(4, np.float32)
            shift[1, 4, body](a, t)
            shift[1, 4, body](t, b)
            hist = np.zeros(k)
            count[1, 1, body](n)
            k += 1 + int(hist.sum())

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(b) == [2, 3, 4, 5] and host(n) == [3]


# --- state changed before the work of the same iteration takes it

def _time_first(s, a, b, n):
    t = 0.0
    with s.while_loop(gt.cond(n) < 3) as body:   # time first
        t += 1.0
        add[1, 4, body](a, t)
        count[1, 1, body](n)


def _time_doubled_first(s, a, b, n):
    t = 1.0
    with s.while_loop(gt.cond(n) < 3) as body:   # time doubled first
        t = t * 2.0
        add[1, 4, body](
            a,
            t)
        count[1, 1, body](n)


def _int_down_first(s, a, b, n):
    t = 2
    with s.while_loop(gt.cond(n) < 3) as body:   # int down first
        t -= 1
        add[1, 4, body](a, t)
        count[1, 1, body](n)


def _time_in_inner_for(s, a, b, n):
    t = 0.0
    with s.while_loop(gt.cond(n) < 3) as body:   # time in inner for
        for _ in range(2):
            t += 1.0
            add[1, 4, body](a, t)
        count[1, 1, body](n)


def _item_first(s, a, b, n):
    ts = [0.0]
    with s.while_loop(gt.cond(n) < 3) as body:   # item first
        ts[0] += 1.0
        add[1, 4, body](a, ts[0])
        count[1, 1, body](n)


def _attribute_first(s, a, b, n):
    st = types.SimpleNamespace(t=0.0)
    with s.while_loop(gt.cond(n) < 3) as body:   # attribute first
        st.t += 1.0
        add[1, 4, body](a, st.t)
        count[1, 1, body](n)


def _walrus(s, a, b, n):
    t = 0.0
    with s.while_loop(gt.cond(n) < 3) as body:   # walrus
        add[1, 4, body](a, (t := t + 1.0))
        count[1, 1, body](n)


T = 0.0


def _bump():
    global T
    T += 1.0
    return T


def _global_bumped_by_helper(s, a, b, n):
    with s.while_loop(gt.cond(n) < 3) as body:   # global bumped by helper
        add[1, 4, body](a, _bump())
        count[1, 1, body](n)


def _host_item_first(s, a, b, n):
    h = np.zeros(1)
    with s.while_loop(gt.cond(n) < 3) as body:   # host item first
        h[0] += 0.5
        add[1, 4, body](a, h[0])
        count[1, 1, body](n)


def _counter_first(s, a, b, n):
    bufs, k = [a, b], 0
    with s.while_loop(gt.cond(n) < 3) as body:   # counter first
        k += 1
        add[1, 4, body](bufs[k % 2], 1.0)
        count[1, 1, body](n)


def _flip_first(s, a, b, n):
    bufs, flip = [a, b], False
    with s.while_loop(gt.cond(n) < 3) as body:   # flip first
        flip = not flip
        add[1, 4, body](bufs[flip], 1.0)
        count[1, 1, body](n)


def _window_first(s, a, b, n):
    k = -1
    with s.while_loop(gt.cond(n) < 2) as body:   # window first
        k += 1
        add[1, 4, body](a[k * 2:(k + 1) * 2], 1.0)
        count[1, 1, body](n)


def _slice_first(s, a, b, n):
    sl = slice(0, 0)
    with s.while_loop(gt.cond(n) < 2) as body:   # slice first
        sl = slice(sl.stop, sl.stop + 2)
        add[1, 4, body](a[sl], 1.0)
        count[1, 1, body](n)


def _temporary_grows_first(s, a, b, n):
    m = 1
    with s.while_loop(gt.cond(n) < 3) as body:   # temporary grows first
        m += 1
        t = body.zeros(m, np.float32)
        shift[1, 2, body](t, a)
        count[1, 1, body](n)


def _step(body, x, k):
    add[1, 4, body](x, k)


def _pick(body, bufs, k):
    add[1, 4, body](bufs[k % 2], 1.0)


def _counter_to_helper_first(s, a, b, n):
    k = 0
    with s.while_loop(gt.cond(n) < 3) as body:   # counter to helper first
        k += 1
        _step(body, a, k)
        count[1, 1, body](n)


def _counter_picks_in_helper_first(s, a, b, n):
    k = 0
    with s.while_loop(gt.cond(n) < 3) as body:   # counter picks in helper first
        k += 1
        _pick(body, [a, b], k=k)
        count[1, 1, body](n)


@pytest.mark.parametrize("program, marker, named", [
    (_counter_to_helper_first, "counter to helper first", "changes `k`,"),
    (_counter_picks_in_helper_first, "counter picks in helper first", "changes `k`,"),
    (_time_first, "time first", "changes `t`,"),
    (_time_doubled_first, "time doubled first", "changes `t`,"),
    (_int_down_first, "int down first", "changes `t`,"),
    (_time_in_inner_for, "time in inner for", "changes `t`,"),
    (_item_first, "item first", "changes `ts[0]`,"),
    (_attribute_first, "attribute first", "changes `st.t`,"),
    (_walrus, "walrus", "changes `t`,"),
    (_global_bumped_by_helper, "global bumped by helper", "changes `T`,"),
    (_host_item_first, "host item first", "changes `h`,"),
    (_counter_first, "counter first", "changes `k`,"),
    (_flip_first, "flip first", "changes `flip`,"),
    (_window_first, "window first", "changes `k`,"),
    (_slice_first, "slice first", "changes `sl`,"),
    (_temporary_grows_first, "temporary grows first", "changes `m`,"),
])
def test_state_a_body_changes_before_its_work_takes_it_is_refused(program, marker, named):
    """``t += dt`` then ``add(x, t)``, ``k += 1`` then ``bufs[k % 2]``: the work of
    the first iteration took the changed value, and the device repeats it, where
    the eager loop takes the next one in each iteration."""
    _refused_at(program, marker, named)


def test_numbers_changed_first_that_reach_no_work_or_settle_run_as_eagerly():
    """A counter changed and then reported, while a kernel takes a number equal to
    it; a number clamped (``max(scale, 2.0)``) or a grid (``min(blocks, 1)``),
    which stays what it became; and a helper that sets an attribute anew each
    iteration before a kernel takes it."""
    log = []
    st = types.SimpleNamespace(scale=0.0)

    def note(k):
        log.append(k)

    def tagged(body, a, tag):
        log.append(tag)
        add[1, 4, body](a, 1.0)

    def step(body, a):
        st.scale = 0.5 * 2.0
        add[1, 4, body](a, st.scale)

    @gt.graph(backend="sim")
    def f(s, a, n):
        trips, elapsed, scale, blocks = 0, 0.0, 0.0, 4
        with s.while_loop(gt.cond(n) < 3) as body:
            trips += 1
            elapsed += 1.0
            log.append((trips, elapsed))
            scale = max(scale, 2.0)
            blocks = min(blocks, 1)
            add[blocks, 4, body](a, scale)
            add[1, 4, body](a, 1.0)
            step(body, a)
            note(f"it {trips}")
            tagged(body, a, f"it {trips}")
            count[1, 1, body](n)

    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [15, 16, 17, 18] and host(n) == [3]


def _window_in_comprehension(s, a, b, n):
    offs = [0]
    with s.while_loop(gt.cond(n) < 2) as body:   # window in comprehension
        views = [a[o:o + 2] for o in offs]
        add[1, 2, body](views[0], 1.0)
        count[1, 1, body](n)
        offs[0] += 2


def _window_in_loop(s, a, b, n):
    offs = [0]
    with s.while_loop(gt.cond(n) < 2) as body:   # window in loop
        for o in offs:
            add[1, 2, body](a[o:o + 2], 1.0)
        count[1, 1, body](n)
        offs[0] += 2


@pytest.mark.parametrize("program, marker", [
    (_window_in_comprehension, "window in comprehension"),
    (_window_in_loop, "window in loop"),
])
def test_offsets_a_body_iterates_over_to_index_by_are_refused(program, marker):
    """``[a[o:o + 2] for o in offs]`` (on 3.11 a code object of its own) and
    ``for o in offs``: the loop's target indexes by the items of ``offs``, which
    the body changes, so the eager loop takes the next window each iteration."""
    _refused_at(program, marker, "changes `offs[0]`,")


def test_a_comprehension_over_offsets_fixed_for_the_loop_runs_as_eagerly():
    @gt.graph(backend="sim")
    def f(s, a, n):
        offs, seen = [0, 2], 0
        with s.while_loop(gt.cond(n) < 2) as body:
            views = [a[o:o + 2] for o in offs]
            add[1, 2, body](views[1], 1.0)
            count[1, 1, body](n)
            seen += len([o for o in offs])

    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [0, 1, 4, 5] and host(n) == [2]


# --- numbers a helper changes, or handed on computed from

K = 0
F = 0.0


def _bump_k():
    global K, F
    K += 1
    F += 1.0


def _go(body, x):
    add[1, 4, body](x, K)


def _int_bumped_by_helper(s, a, b, n):
    global K
    K = 0
    with s.while_loop(gt.cond(n) < 3) as body:   # int bumped by helper
        _bump_k()
        add[1, 4, body](a, K)
        count[1, 1, body](n)


def _float_bumped_by_helper(s, a, b, n):
    global F
    F = 0.0
    with s.while_loop(gt.cond(n) < 3) as body:   # float bumped by helper
        _bump_k()
        add[1, 4, body](a, F)
        count[1, 1, body](n)


def _int_bumped_launched_in_helper(s, a, b, n):
    global K
    K = 0
    with s.while_loop(gt.cond(n) < 3) as body:   # int launched in helper
        _bump_k()
        _go(body, a)
        count[1, 1, body](n)


def _counter_converted_first(s, a, b, n):
    k = 0
    with s.while_loop(gt.cond(n) < 3) as body:   # counter converted first
        k += 1
        add[1, 4, body](a, float(k))
        count[1, 1, body](n)


def _counter_doubled_after(s, a, b, n):
    k = 1
    with s.while_loop(gt.cond(n) < 3) as body:   # counter doubled after
        add[1, 4, body](a, k * 2)
        count[1, 1, body](n)
        k += 1


@pytest.mark.parametrize("program, marker, named", [
    (_int_bumped_by_helper, "int bumped by helper", "changes `K`,"),
    (_float_bumped_by_helper, "float bumped by helper", "changes `F`,"),
    (_int_bumped_launched_in_helper, "int launched in helper", "changes `K`,"),
    (_counter_converted_first, "counter converted first", "changes `k`,"),
    (_counter_doubled_after, "counter doubled after", "changes `k`,"),
])
def test_a_number_a_helper_changes_or_a_kernel_takes_computed_is_refused(
        program, marker, named):
    """``bump()`` (``global K; K += 1``) then ``add(x, K)``, here or in a helper
    launching with ``K``; ``add(x, float(k))``, ``add(x, k * 2)``: the work took
    the first iteration's value (an int is a shared object, a computed one no
    number the body holds), where the eager loop takes the next one each time."""
    _refused_at(program, marker, named)


def test_a_number_a_helper_changes_that_reaches_no_work_or_is_clamped_runs_as_eagerly():
    """``K`` bumped by a helper and only reported (here and by a helper that
    launches with a constant), and a counter clamped where a kernel takes it
    (``min(k, 1.0)``: past the bound it changes nothing)."""
    global K
    seen = []

    def tagged(body, a, tag):
        seen.append(tag)
        add[1, 4, body](a, 1.0)

    @gt.graph(backend="sim")
    def f(s, a, n):
        k = 1
        with s.while_loop(gt.cond(n) < 3) as body:
            _bump_k()
            seen.append(f"it {K}")
            tagged(body, a, f"it {K}")
            k += 1
            add[1, 4, body](a, min(k, 1.0))
            count[1, 1, body](n)

    K = 0
    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [6, 7, 8, 9] and host(n) == [3] and seen == ["it 1", "it 1"]


def _counter_converted_to_helper(s, a, b, n):
    k = 0
    with s.while_loop(gt.cond(n) < 3) as body:   # counter converted to helper
        k += 1
        _step(body, a, float(k))
        count[1, 1, body](n)


def _counter_doubled_to_helper(s, a, b, n):
    k = 0
    with s.while_loop(gt.cond(n) < 3) as body:   # counter doubled to helper
        k += 1
        _step(body, a, k * 2)
        count[1, 1, body](n)


@pytest.mark.parametrize("program, marker, named", [
    (_counter_converted_to_helper, "counter converted to helper", "changes `k`,"),
    (_counter_doubled_to_helper, "counter doubled to helper", "changes `k`,"),
])
def test_a_number_a_helper_launches_with_computed_from_a_counter_is_refused(
        program, marker, named):
    """``k += 1`` then ``step(body, x, float(k))`` or ``step(body, x, k * 2)``,
    where ``step`` launches with its parameter: a number the helper's work holds
    is not ``k``'s, but it is computed from it in each eager iteration."""
    _refused_at(program, marker, named)


def test_a_helper_handed_a_clamped_counter_or_a_tag_made_from_it_runs_as_eagerly():
    """``step(body, a, min(k, 1.0))`` (past its bound it changes nothing) and
    ``tagged(body, a, f"it {k * 2}")``, a helper taking the counter only as text."""
    seen = []

    def tagged(body, a, tag):
        seen.append(tag)
        add[1, 4, body](a, 1.0)

    @gt.graph(backend="sim")
    def f(s, a, n):
        k = 1
        with s.while_loop(gt.cond(n) < 3) as body:
            k += 1
            _step(body, a, min(k, 1.0))
            tagged(body, a, f"it {k * 2}")
            count[1, 1, body](n)

    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [6, 7, 8, 9] and host(n) == [3] and seen == ["it 4"]


# --- lengths of containers a body changes

def _temporary_sized_by_a_length(s, a, b, n):
    seen = []
    with s.while_loop(gt.cond(n) < 3) as body:   # temporary sized by a length
        seen.append(0)
        t = body.zeros(len(seen), np.float32)
        shift[1, 4, body](a, t)
        count[1, 1, body](n)


def _grid_sized_by_a_length(s, a, b, n):
    seen = [0]
    with s.while_loop(gt.cond(n) < 3) as body:   # grid sized by a length
        add[len(seen), 1, body](a, 1.0)
        count[1, 1, body](n)
        seen.append(0)


def _window_by_a_length(s, a, b, n):
    seen = []
    with s.while_loop(gt.cond(n) < 3) as body:   # window by a length
        seen.append(0)
        add[1, 4, body](a[:len(seen)], 1.0)
        count[1, 1, body](n)


def _length_to_helper(s, a, b, n):
    seen = {}
    with s.while_loop(gt.cond(n) < 3) as body:   # length to helper
        seen[len(seen)] = 0
        _step(body, a, float(len(seen)))
        count[1, 1, body](n)


@pytest.mark.parametrize("program, marker, named", [
    (_temporary_sized_by_a_length, "temporary sized by a length", "changes `len(seen)`,"),
    (_grid_sized_by_a_length, "grid sized by a length", "changes `len(seen)`,"),
    (_window_by_a_length, "window by a length", "changes `len(seen)`,"),
    (_length_to_helper, "length to helper", "changes `len(seen)`,"),
])
def test_a_length_a_body_changes_and_its_work_takes_is_refused(program, marker, named):
    """``seen.append(0)`` then ``body.zeros(len(seen))``, ``k[len(seen), 1, body]``,
    ``a[:len(seen)]`` or a helper launching with ``float(len(seen))``: the eager
    loop's work grows with the list each iteration, the graph's stays the first."""
    _refused_at(program, marker, named)


def test_a_list_appended_to_whose_length_reaches_no_work_runs_as_eagerly():
    """A list the body appends to, reports the length of and reads the first item
    of: nothing the device does depends on its length."""
    items, report = [1.0], []

    @gt.graph(backend="sim")
    def f(s, a, n):
        with s.while_loop(gt.cond(n) < 3) as body:
            items.append(float(len(items)))
            report.append(f"{len(items)} items")
            add[1, 4, body](a, items[0])
            count[1, 1, body](n)

    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [3, 4, 5, 6] and host(n) == [3] and report == ["2 items"]



class _Rows(list):
    """A list of the program's own with no reading of its own."""


def _grown(factory, grow):
    def program(s, a, b, n):
        seen = factory()
        with s.while_loop(gt.cond(n) < 3) as body:   # grown container
            seen = grow(seen)
            add[len(seen), 1, body](a, 1.0)
            count[1, 1, body](n)
    return program


def _add_one(c):
    c.add(len(c))
    return c


def _set_one(c):
    c[len(c)] = 1
    return c


def _append_one(c):
    c.append(0)
    return c


@pytest.mark.parametrize("factory, grow", [
    (set, _add_one), (frozenset, lambda c: c | {len(c)}), (collections.Counter, _set_one),
    (lambda: collections.defaultdict(int), _set_one), (collections.OrderedDict, _set_one),
    (_Rows, _append_one),
])
def test_the_length_of_a_set_or_a_list_or_dict_subclass_sizing_work_is_refused(factory, grow):
    """A set, a frozenset made anew, a Counter, a defaultdict, an OrderedDict or
    a list subclass the body grows, sizing a launch by its length: the eager
    loop's launch grows with it."""
    _refused_at(_grown(factory, grow), "grown container", "len(seen)")


def test_a_set_or_counter_only_reported_runs_as_eagerly():
    """A set and a Counter the body adds to and reports: no work takes them."""
    tags, hits, report = set(), collections.Counter(), []

    @gt.graph(backend="sim")
    def f(s, a, n):
        with s.while_loop(gt.cond(n) < 3) as body:
            tags.add("trip")
            hits["trip"] += 1
            report.append(f"{len(tags)} {len(hits)}")
            add[1, 4, body](a, 1.0)
            count[1, 1, body](n)

    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [3, 4, 5, 6] and host(n) == [3] and report == ["1 1"]


def _tag_longer(c):
    return c + "x"


@pytest.mark.parametrize("factory, grow", [
    (lambda: "x", _tag_longer), (lambda: b"x", lambda c: c + b"x"),
    (lambda: bytearray(b"x"), _append_one),
])
def test_the_length_of_text_or_bytes_a_body_changes_sizing_work_is_refused(factory, grow):
    """``tag = tag + "x"`` (also bytes) or ``b.append(1)`` on a bytearray, then
    ``k[len(tag), 1, body]``: the eager loop's launch grows with it."""
    _refused_at(_grown(factory, grow), "grown container", "len(seen)")


def test_text_a_body_changes_that_sizes_no_work_runs_as_eagerly():
    """A message the body makes longer and reports: no work takes its length."""
    report = []

    @gt.graph(backend="sim")
    def f(s, a, n):
        msg = ""
        with s.while_loop(gt.cond(n) < 3) as body:
            msg = msg + "."
            report.append(f"{len(msg)} {msg}")
            add[1, 4, body](a, 1.0)
            count[1, 1, body](n)

    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [3, 4, 5, 6] and host(n) == [3] and report == ["1 ."]


# --- control flow the body's Python decides by what it changes

def _for_over_a_growing_list(s, a, b, n):
    seen = [1]
    with s.while_loop(gt.cond(n) < 3) as body:   # for over a growing list
        for _ in seen:
            add[1, 4, body](a, 1.0)
        count[1, 1, body](n)
        seen.append(1)


def _if_on_a_counter(s, a, b, n):
    k = 0
    with s.while_loop(gt.cond(n) < 3) as body:   # if on a counter
        if k == 0:
            add[1, 4, body](a, 1.0)
        else:
            shift[1, 4, body](a, b)
        count[1, 1, body](n)
        k += 1


def _range_of_a_counter(s, a, b, n):
    k = 1
    with s.while_loop(gt.cond(n) < 3) as body:   # range of a counter
        k += 1
        for _ in range(k):
            add[1, 4, body](a, 1.0)
        count[1, 1, body](n)


def _dict_items_growing(s, a, b, n):
    seen = {0: 1.0}
    with s.while_loop(gt.cond(n) < 3) as body:   # dict items growing
        for _, v in seen.items():
            add[1, 4, body](a, 1.0)
        count[1, 1, body](n)
        seen[len(seen)] = 1.0


def _deque_growing(s, a, b, n):
    seen = collections.deque([1])
    with s.while_loop(gt.cond(n) < 3) as body:   # deque growing
        _ = [add[1, 4, body](a, 1.0) for _ in seen]
        count[1, 1, body](n)
        seen.append(1)


def _inner_while(s, a, b, n):
    k = 1
    with s.while_loop(gt.cond(n) < 3) as body:   # inner while
        j = 0
        while j < k:
            add[1, 4, body](a, 1.0)
            j += 1
        count[1, 1, body](n)
        k += 1


def _if_on_a_mode(s, a, b, n):
    mode = "a"
    with s.while_loop(gt.cond(n) < 3) as body:   # if on a mode
        if mode == "a":
            add[1, 4, body](a, 1.0)
        else:
            shift[1, 4, body](a, b)
        mode = "b"
        count[1, 1, body](n)


def _dict_mode(s, a, b, n):
    cfg = {"mode": "a"}
    with s.while_loop(gt.cond(n) < 3) as body:   # dict mode
        add[1, 4, body](a, 1.0 if cfg["mode"] == "a" else 5.0)
        cfg["mode"] = "b"
        count[1, 1, body](n)


class _Phase(enum.Enum):
    WARMUP = 0
    RUN = 1


def _if_on_a_phase(s, a, b, n):
    ph = _Phase.WARMUP
    with s.while_loop(gt.cond(n) < 3) as body:   # if on a phase
        if ph is _Phase.WARMUP:
            add[1, 4, body](a, 10.0)
            ph = _Phase.RUN
        else:
            add[1, 4, body](a, 1.0)
        count[1, 1, body](n)


def _if_on_a_sentinel(s, a, b, n):
    prev = None
    with s.while_loop(gt.cond(n) < 3) as body:   # if on a sentinel
        if prev is None:
            add[1, 4, body](a, 10.0)
        else:
            shift[1, 4, body](b, prev)
        prev = a
        count[1, 1, body](n)


@pytest.mark.parametrize("program, marker, named", [
    (_for_over_a_growing_list, "for over a growing list", "changes `len(seen)`,"),
    (_if_on_a_sentinel, "if on a sentinel", "changes `prev`,"),
    (_if_on_a_phase, "if on a phase", "changes `ph`,"),
    (_if_on_a_mode, "if on a mode", "changes `mode`,"),
    (_dict_mode, "dict mode", "changes `cfg['mode']`,"),
    (_if_on_a_counter, "if on a counter", "changes `k`,"),
    (_range_of_a_counter, "range of a counter", "changes `k`,"),
    (_dict_items_growing, "dict items growing", "changes `len(seen)`,"),
    (_deque_growing, "deque growing", "changes `len(seen)`,"),
    (_inner_while, "inner while", "changes `k`,"),
])
def test_control_flow_decided_by_state_a_body_changes_is_refused(program, marker, named):
    """A for loop over a list, dict or deque the body grows (also in a
    comprehension), ``for _ in range(k)``, ``if k == 0`` or ``while j < k``
    with ``k += 1``: the eager loop records other work in each iteration, the
    graph repeats the first's."""
    _refused_at(program, marker, named)
    with pytest.raises(gt.ArgumentError, match="keep that decision on the device"):
        gt.graph(program, backend="sim")(dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32))


def test_control_flow_on_state_fixed_for_the_loop_or_only_reporting_runs_as_eagerly():
    """A for loop over a list and a range() the body does not change, and a
    counter the body changes that decides only what it reports."""
    offs, report = [0.5, 1.5], []

    @gt.graph(backend="sim", static=("m",))
    def f(s, a, n, m):
        k = 0
        with s.while_loop(gt.cond(n) < 3) as body:
            for v in offs:
                add[1, 4, body](a, v)
            for _ in range(m):
                add[1, 4, body](a, 1.0)
            if k % 10 == 0:
                report.append(f"trip {k}")
            count[1, 1, body](n)
            k += 1

    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n, 2)
    assert host(a) == [12, 13, 14, 15] and host(n) == [3] and report == ["trip 0"]


def test_a_phase_a_body_changes_and_only_reports_runs_as_eagerly():
    """An Enum member the body changes that decides only what it reports."""
    report = []

    @gt.graph(backend="sim")
    def f(s, a, n):
        ph = _Phase.WARMUP
        with s.while_loop(gt.cond(n) < 3) as body:
            if ph is _Phase.WARMUP:
                report.append(ph.name)
            ph = _Phase.RUN
            add[1, 4, body](a, 1.0)
            count[1, 1, body](n)

    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [3, 4, 5, 6] and host(n) == [3] and report == ["WARMUP"]


def test_a_sentinel_a_body_sets_and_only_reports_by_runs_as_eagerly():
    """``last = None`` set to an array by the body, deciding only what it reports."""
    report = []

    @gt.graph(backend="sim")
    def f(s, a, n):
        last = None
        with s.while_loop(gt.cond(n) < 3) as body:
            if last is None:
                report.append("first")
            add[1, 4, body](a, 1.0)
            last = a
            count[1, 1, body](n)

    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [3, 4, 5, 6] and host(n) == [3] and report == ["first"]

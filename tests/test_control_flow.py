"""Loops, branches and child graphs driven by device values, on the simulator.

Each result is compared with the same program run eagerly with the
condition read on the host (the oracle), over several random orders.
"""
import functools

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
import flow_kernels
from flow_kernels import add, copy_into, count, dev, halve, host, shift
from helpers import FakeDeviceArray as A, any_kernel, line_of


@gt.graph(backend="sim")
def halve_until(s, x, n, tol):
    with s.while_loop(gt.cond(x) > tol, max_iterations=100) as body:
        halve[1, 1, body](x)
        count[1, 1, body](n)


def test_a_loop_runs_until_the_device_says_stop():
    x, n = dev(100.0), dev(0, dtype=np.int32)
    halve_until(x, n, 1.0)
    assert host(x) == [0.78125] and host(n) == [7]      # 100 / 2**7 <= 1


def test_a_dynamic_bound_and_new_arrays_rebind_without_tracing_again():
    x, n = dev(100.0), dev(0, dtype=np.int32)
    halve_until(x, n, 1.0)
    misses = halve_until.cache_info().misses
    x2, n2 = dev(64.0), dev(0, dtype=np.int32)
    halve_until(x2, n2, 10.0)
    assert host(x2) == [8.0] and host(n2) == [3]
    assert host(x) == [0.78125]                          # the first arrays untouched
    assert halve_until.cache_info().misses == misses


def test_the_trip_bound_ends_a_loop_whose_condition_stays_true():
    @gt.graph(backend="sim")
    def forever(s, flag, n):
        with s.while_loop(gt.cond(flag), max_iterations=5) as body:
            count[1, 1, body](n)
    flag, n = dev(1, dtype=np.int32), dev(0, dtype=np.int32)
    forever(flag, n)
    assert host(n) == [5]
    assert "max_iterations=5" in str(forever.trace(flag, n))

    @gt.graph(backend="sim")
    def numpy_bound(s, flag, n):   # a numpy integer (a shape, a computed count) bounds too
        with s.while_loop(gt.cond(flag), max_iterations=np.int64(n.shape[0] * 3)) as body:
            count[1, 1, body](n)
    n = dev(0, dtype=np.int32)
    numpy_bound(flag, n)
    assert host(n) == [3]
    for bad in (np.bool_(True), np.int64(-1), 2.0):
        with pytest.raises(gt.ArgumentError, match="non-negative int"):
            gt.graph(lambda s, f: s.while_loop(gt.cond(f), max_iterations=bad)).trace(flag)


def test_a_dynamic_bound_or_number_of_cases_says_to_make_it_static():
    flag = dev(0, dtype=np.int32)

    def loop(s, f, m):
        s.while_loop(gt.cond(f), max_iterations=m, body=lambda b: None)

    def switch(s, f, m):
        s.switch(gt.cond(f), m, body=lambda *cases: None)
    for fn in (loop, switch):
        with pytest.raises(gt.ArgumentError, match=r"dynamic argument 'm'.*static=\('m',\)"):
            gt.graph(fn).trace(flag, 2)


def test_a_loop_whose_condition_is_false_at_once_runs_no_iteration():
    x, n = dev(0.5), dev(0, dtype=np.int32)
    halve_until(x, n, 1.0)
    assert host(x) == [0.5] and host(n) == [0]


def test_if_then_and_if_else_take_the_branch_the_data_choose():
    @gt.graph(backend="sim")
    def f(s, x, y, z):
        with s.if_then(gt.cond(x) < 0) as then:
            add[1, 4, then](y, 1.0)
        with s.if_else(gt.cond(x) >= z) as (yes, no):
            add[1, 4, yes](y, 10.0)
            add[1, 4, no](y, 100.0)
    y = dev(0, 0)
    f(dev(-1.0), y, dev(-5.0))
    assert host(y) == [11, 11]
    f(dev(2.0), y, dev(5.0))
    assert host(y) == [111, 111]


def test_a_switch_runs_the_case_of_the_value_and_none_out_of_range():
    @gt.graph(backend="sim")
    def f(s, k, y):
        with s.switch(gt.cond(k), 3) as cases:
            for i, case in enumerate(cases):
                add[1, 4, case](y, 10.0 ** i)
    y = dev(0, 0)
    for k in (0, 1, 2, 2, 3, -1):
        f(dev(k, dtype=np.int32), y)
    assert host(y) == [211, 211]

    @gt.graph(backend="sim")
    def past(s, k, y):
        with s.switch(gt.cond(k), 2) as cases:
            add[1, 4, cases[-2]](y, 1.0)   # from the end: as a tuple does
            add[1, 4, cases[2]](y, 1.0)   # past the cases
    with pytest.raises(gt.ArgumentError, match=r"case 2 of a switch of 2 cases.*, 3\)") as e:
        past.trace(dev(0, dtype=np.int32), y)
    assert e.value.source[1] == line_of(__file__, "past the cases")


def test_a_body_given_as_a_function_is_recorded_as_the_with_block_is():
    """body=fn records at once: fn receives the body stream (or the streams)."""
    @gt.graph(backend="sim")
    def f(s, x, n, k, y):
        s.while_loop(gt.cond(x) > 1.0, max_iterations=50,
                     body=lambda b: (halve[1, 1, b](x), count[1, 1, b](n)))
        s.if_else(gt.cond(n) > 3, body=lambda then, otherwise: (add[1, 2, then](y, 1.0),
                                                                  add[1, 2, otherwise](y, 2.0)))
        s.switch(gt.cond(k), 2, body=lambda c0, c1: add[1, 2, c1](y, 10.0))
    x, n, k, y = dev(100.0), dev(0, dtype=np.int32), dev(1, dtype=np.int32), dev(0, 0)
    f(x, n, k, y)
    assert host(x) == [0.78125] and host(n) == [7] and host(y) == [11.0, 11.0]

    @gt.graph(backend="sim")
    def both(s, x, n):
        with s.while_loop(gt.cond(x) > 1.0, max_iterations=5,   # both ways
                          body=lambda b: halve[1, 1, b](x)) as b:
            count[1, 1, b](n)
    with pytest.raises(gt.ArgumentError, match="body=fn or a with block, not both") as e:
        both.trace(dev(8.0), dev(0, dtype=np.int32))
    assert e.value.source[1] == line_of(__file__, "both ways")


@pytest.mark.parametrize("returns, thing", [
    (lambda b, x: 7, "returned int"),
    (lambda b, x: (halve[1, 1, b](x), b.empty(1)), "returned temporary tmp0"),
    (lambda b, x: x, "returned an array")])
def test_a_body_function_returning_a_value_is_refused(returns, thing):
    """A body's Python runs once, recording: a value it returns would be dropped.
    What recording returns (a lambda's tuple of launches) is no value."""
    @gt.graph(backend="sim")
    def f(s, x):
        s.while_loop(gt.cond(x) > 1.0, body=lambda b: returns(b, x))   # returns
    with pytest.raises(gt.TraceError) as e:
        f.trace(dev(8.0))
    assert e.value.source[1] == line_of(__file__, "returns")
    assert f"s.while_loop(..., body=<lambda>) {thing}" in e.value.message and \
        "returns nothing" in e.value.message


@pytest.mark.parametrize("make, phrase", [
    (lambda s, c, x: s.if_else(c > 0, body=lambda t: add[1, 2, t](x, 1.0)),
     "s.if_else(..., body=<lambda>) calls it with 2 streams, fn(then, else), but it takes (t)"),
    (lambda s, c, x: s.switch(c, 3, body=lambda cases: add[1, 2, cases](x, 1.0)),
     "s.switch(..., body=<lambda>) calls it with 3 streams, fn(case0, case1, case2)"),
    (lambda s, c, x: s.switch(c, 1, body=lambda cases: add[1, 2, cases[0]](x, 1.0)),
     "a switch's body=fn is called with one parameter per case")])
def test_a_body_function_that_cannot_take_the_body_streams_is_refused(make, phrase):
    @gt.graph(backend="sim")
    def f(s, k, x):
        make(s, gt.cond(k), x)
    with pytest.raises(gt.GraphtraceError) as e:
        f.trace(dev(1, dtype=np.int32), dev(0, 0))
    assert phrase in e.value.message
    assert e.value.source[0] == __file__   # the user's line (the lambda's, here)


def _cases_fn(cases, x, a):
    add[1, 2, cases[0]](x, a)


def test_a_body_partial_holding_a_dynamic_number_that_cannot_take_the_streams_says_so():
    """The partial's signature held the dynamic number as a default, and showing it
    raised the dynamic-number refusal instead of the arity's."""
    @gt.graph(backend="sim")
    def f(s, k, x, a):
        s.switch(gt.cond(k), 2, body=functools.partial(_cases_fn, x=x, a=a))
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(dev(1, dtype=np.int32), dev(0, 0), 2.0)
    assert "calls it with 2 streams, fn(case0, case1), but it takes (cases, *, x, a): give " \
        "it one parameter per body" in e.value.message


def test_a_number_or_a_one_element_array_on_the_left_of_a_condition_is_reflected():
    """tol < gt.cond(x) is gt.cond(x) > tol, for a number, a dynamic scalar, and a
    one-element device array alike."""
    @gt.graph(backend="sim")
    def f(s, x, n, tol, lim):
        with s.while_loop(tol < gt.cond(x), max_iterations=50) as b:
            halve[1, 1, b](x)
            count[1, 1, b](n)
        with s.while_loop(lim < gt.cond(x), max_iterations=50) as b:
            halve[1, 1, b](x)
            count[1, 1, b](n)
        with s.while_loop(0.25 < gt.cond(x), max_iterations=50) as b:
            halve[1, 1, b](x)
            count[1, 1, b](n)
    for tol, lim, want in ((4.0, 1.0, 9), (1.0, 0.5, 9), (50.0, 0.75, 9)):
        x, n = dev(100.0), dev(0, dtype=np.int32)
        f(x, n, tol, dev(lim))
        assert host(x) == [0.1953125] and host(n) == [want]
    assert f.cache_info().misses == 1


def test_a_dynamic_scalar_equal_or_not_to_a_condition_is_reflected():
    """``k != gt.cond(c)`` and ``k == gt.cond(c)`` with a dynamic scalar ``k`` are
    ``gt.cond(c) != k`` and ``gt.cond(c) == k``, as ``<`` and ``>`` are; ``k == 3``
    is still refused."""
    @gt.graph(backend="sim")
    def f(s, c, n, k):
        with s.while_loop(k != gt.cond(c), max_iterations=10) as b:
            count[1, 1, b](c)
            count[1, 1, b](n)
        with s.if_then(k == gt.cond(c)) as then:
            count[1, 1, then](n)
    for k in (3, 2):
        c, n = dev(0, dtype=np.int32), dev(0, dtype=np.int32)
        f(c, n, k)
        assert host(c) == [k] and host(n) == [k + 1]
    assert f.cache_info().misses == 1

    @gt.graph(backend="sim")
    def g(s, k):
        return k == 3
    with pytest.raises(gt.DynamicScalarError):
        g(3)


def test_a_switch_takes_a_numpy_integer_number_of_cases():
    @gt.graph(backend="sim")
    def f(s, k, y):
        with s.switch(gt.cond(k), np.int64(y.shape[0]) // 2) as cases:
            add[1, 2, cases[1]](y, 1.0)
    y = dev(0, 0, 0, 0)
    f(dev(1, dtype=np.int32), y)
    assert host(y)[:2] == [1.0, 1.0]


def test_loops_nest_and_branches_sit_inside_loops():
    @gt.graph(backend="sim")
    def f(s, outer, inner, n, odd):
        with s.while_loop(gt.cond(outer) > 1, max_iterations=50) as o:
            halve[1, 1, o](outer)
            copy_into[1, 1, o](outer, inner)
            with o.while_loop(gt.cond(inner) > 1) as i:
                halve[1, 1, i](inner)
                count[1, 1, i](n)
            with o.if_then(gt.cond(n) > 100) as big:
                count[1, 1, big](odd)
    outer, inner = dev(64.0), dev(0.0)
    n, odd = dev(0, dtype=np.int32), dev(0, dtype=np.int32)
    f(outer, inner, n, odd)
    # outer: 32, 16, 8, 4, 2, 1 -> inner loops of 5, 4, 3, 2, 1, 0 halvings
    assert host(n) == [15] and host(outer) == [1.0] and host(odd) == [0]


def test_a_child_graph_node_holds_the_nested_functions_nodes():
    @gt.graph(backend="sim")
    def inner(s, x, v):
        add[1, 4, s](x, v)
        add[1, 4, s](x, v)

    @gt.graph(backend="sim")
    def outer(s, x, y):
        s.child(inner, x, 1.0)
        inner(s, y, 2.0)                # inlined, as before
    x, y = dev(0, 0), dev(0, 0)
    outer(x, y)
    assert host(x) == [2, 2] and host(y) == [4, 4]
    g = outer.trace(x, y)
    assert [n.kind for n in g.nodes] == ["child", "kernel", "kernel"]
    assert [n.kind for n in g.nodes[0].regions[0].nodes] == ["kernel", "kernel"]
    assert [m for _, m in g.nodes[0].accesses] == ["rw"]


# --- dependencies, listing, verify, check -----------------------------------

K = any_kernel()


def test_the_loop_node_touches_what_its_body_and_condition_touch():
    x, y, z, flag = A(8), A(8), A(8), A(1, "int32")

    @gt.graph
    def f(s):
        s.launch(K, 1, 1, gt.Out(x))
        with s.while_loop(gt.cond(flag), max_iterations=3) as body:
            body.launch(K, 1, 1, gt.In(x), gt.Out(y))
        s.launch(K, 1, 1, gt.In(y))      # after the loop
        s.launch(K, 1, 1, gt.Out(z))     # independent of it
    g = f.trace()
    loop = g.nodes[1]
    assert loop.kind == "while" and len(loop.regions) == 1
    assert sorted((b.label, m) for b, m in loop.accesses) == [("flag", "r"), ("x", "r"), ("y", "w")]
    assert g.edges() == [(0, 1), (1, 3)]
    names = [n.index for n in g.walk()]
    assert len(names) == len(set(names)) == 5
    g.verify()
    text = str(g)
    assert "while cond(flag) != 0, max_iterations=3" in text and "body:" in text


def test_inside_a_body_dependencies_are_inferred_as_everywhere():
    x, y, flag = A(8), A(8), A(1, "int32")

    @gt.graph
    def f(s):
        with s.while_loop(gt.cond(flag)) as body:
            body.launch(K, 1, 1, gt.Out(x))
            body.launch(K, 1, 1, gt.Out(y))
            body.launch(K, 1, 1, gt.In(x), gt.Out(flag))
    region = f.trace().nodes[0].regions[0]
    assert sorted((a.pos, b.pos) for b in region.nodes for a in b.deps) == [(0, 2)]


def test_check_looks_inside_regions():
    x, flag = A(8), A(1, "int32")

    @gt.graph(deps="streams")
    def f(s):
        with s.while_loop(gt.cond(flag), max_iterations=4) as body:
            t = body.fork()
            body.launch(K, 1, 1, gt.Out(x))
            t.launch(K, 1, 1, gt.Out(x))
    races = gt.check(f.trace())
    assert len(races) == 1


# --- errors -------------------------------------------------------------------

def trace_error(body, kind=gt.TraceError):
    flag = dev(1, dtype=np.int32)

    @gt.graph(backend="sim")
    def f(s, flag, x):
        body(s, flag, x)
    with pytest.raises(kind) as e:
        f.trace(flag, dev(0, 0))
    return e.value


def callback_in_body(s, flag, x):
    with s.while_loop(gt.cond(flag)) as body:
        body.host(print)          # callback in body


def outer_stream_in_body(s, flag, x):
    with s.while_loop(gt.cond(flag)):
        add[1, 2, s](x, 1.0)      # outer stream


def body_after_block(s, flag, x):
    with s.while_loop(gt.cond(flag), max_iterations=1) as body:
        pass
    add[1, 2, body](x, 1.0)       # after block


def python_if(s, flag, x):
    if gt.cond(flag) > 0:         # python if
        pass


def host_condition(s, flag, x):
    with s.while_loop(gt.cond(np.ones(1, np.int32))):   # host condition
        pass


def long_condition(s, flag, x):
    with s.while_loop(gt.cond(x) > 0):   # two elements
        pass


def fraction_on_ints(s, flag, x):
    with s.while_loop(gt.cond(flag) < 2.5):   # fraction
        pass


def past_int32(s, flag, x):
    with s.if_then(gt.cond(flag) < 2 ** 31):   # past int32
        pass


def float_switch(s, flag, x):
    with s.switch(gt.cond(x[0:1]), 2):   # float switch
        pass


def chained_condition(s, flag, x):
    with s.while_loop(0 < gt.cond(flag) < 3):   # chained
        pass


def combined_condition(s, flag, x):
    with s.while_loop((gt.cond(flag) > 0) & (gt.cond(flag) < 3)):   # combined
        pass


def two_bodies_of_one(s, flag, x):
    with s.if_then(gt.cond(flag)) as (then, otherwise):   # unpacked
        pass


def test_a_host_argument_as_a_condition_is_called_a_numpy_array():
    @gt.graph(backend="sim")
    def f(s, h):
        with s.while_loop(gt.cond(h), max_iterations=2):   # host argument
            pass
    with pytest.raises(gt.ArgumentError, match=r"not a numpy array \(host memory\)") as e:
        f.trace(np.ones(1, np.int32))
    assert e.value.source[1] == line_of(__file__, "host argument")


@pytest.mark.parametrize("body, marker, words", [
    (two_bodies_of_one, "unpacked", "s.if_else(...) gives two, (then, otherwise)"),
    (chained_condition, "chained", "a condition compares once"),
    (combined_condition, "combined", "does not combine with &"),
    (callback_in_body, "callback in body", "host callbacks cannot run inside"),
    (fraction_on_ints, "fraction", "cannot compare it with 2.5"),
    (past_int32, "past int32", "from -2147483648 to 2147483647"),
    (float_switch, "float switch", "integer array, not of float32"),
    (outer_stream_in_body, "outer stream", "use the body's stream"),
    (body_after_block, "after block", "only inside its with block"),
    (python_if, "python if", "no value during the trace"),
    (host_condition, "host condition", "not a numpy array (host memory)"),
    (long_condition, "two elements", "one element"),
])
def test_misuse_is_an_error_at_the_users_line(body, marker, words):
    e = trace_error(body, gt.GraphtraceError)
    assert e.source[1] == line_of(__file__, marker), str(e)
    assert words in str(e)


def test_what_a_loop_carries_from_one_iteration_to_the_next_is_ordered():
    @gt.graph(backend="sim")
    def f(s, a, b, n):
        with s.while_loop(gt.cond(n) < 5) as body:
            shift[1, 4, body](a, b)      # reads what the last iteration wrote into a
            shift[1, 4, body](b, a)
            count[1, 1, body](n)

    def eager(a):
        for _ in range(5):
            b = a + 1
            a = b + 1
        return a, b
    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    for _ in range(3):   # random orders of the body
        a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
        f(a, b, n)
        want_a, want_b = eager(np.array([0, 1, 2, 3], np.float32))
        assert host(a) == want_a.tolist() and host(b) == want_b.tolist()


def test_a_driver_too_old_for_the_node_is_a_clear_error(monkeypatch):
    from graphtrace import _driver
    from graphtrace.ops import conditional
    monkeypatch.setattr(_driver, "driver_version", lambda: 12040)
    x, flag = A(8), A(1, "int32")

    @gt.graph
    def f(s):
        with s.if_else(gt.cond(flag)) as (yes, no):   # if-else
            yes.launch(K, 1, 1, gt.Out(x))
    node = f.trace().nodes[0]
    with pytest.raises(gt.EmitError) as e:
        conditional._require_driver(node.kind, node)
    assert "driver >= 12.8" in str(e.value) and "this one is 12.4" in str(e.value)
    assert e.value.source[1] == line_of(__file__, "if-else")


def test_counts_and_placements_read_from_the_recording_match_the_nodes(monkeypatch):
    """A build reads how many nodes a graph has and where each runs from what the
    trace recorded, without making the Nodes of its launches (``Graph.count``,
    ``ops._devices._placed``); both agree with the Nodes, regions included."""
    from graphtrace.ops._devices import _placed
    monkeypatch.setenv("GRAPHTRACE_VERIFY", "0")   # verify() makes every Node

    @gt.graph(backend="sim")
    def f(s, x, y, n):
        add[1, 4, s](y, 1.0)
        with s.while_loop(gt.cond(x) > 1.0, max_iterations=10) as body:
            halve[1, 1, body](x)
            with body.if_then(gt.cond(n) < 3) as then:
                count[1, 1, then](n)
        s.memset(y, 0)
        add[1, 4, s](y, 2.0)
    args = dev(100.0), dev(np.zeros(4)), dev(0, dtype=np.int32)
    g = f.trace(*args)
    assert g.recording() is not None
    counted, placed = g.count(), list(_placed(g))
    assert g.recording() is not None                 # still no Node for the launches
    nodes = list(g.walk())
    assert counted == len(nodes) == 7
    assert placed == [(n.device, n.kind, bool(n.regions)) for n in nodes]
    assert [k for _, k, _ in placed] == ["kernel", "while", "kernel", "if", "kernel",
                                         "memset", "kernel"]


@pytest.mark.parametrize("dtype, rhs, trips", [
    (np.int32, 3, 3), (np.int32, 3.0, 3), (np.int64, -0.0, 0), (np.uint8, 255, 100),
    (np.bool_, True, 1), (np.float32, 2.5, 3), (np.float64, 0.5, 1), (np.float32, 1e300, 100)])
def test_a_condition_compares_as_python_compares_the_numbers(dtype, rhs, trips):
    """``while c < rhs: c += 1`` from 0, at most 100 times: the number is compared as
    it is (in the array's dtype where that is exact, refused where not)."""
    @gt.graph(backend="sim")
    def f(s, c, n, rhs):
        with s.while_loop(gt.cond(c) < rhs, max_iterations=100) as body:
            count[1, 1, body](n)
            count[1, 1, body](c)
    c, n = dev(0, dtype=dtype), dev(0, dtype=np.int32)
    if dtype is np.bool_:
        c = dev(False, dtype=np.bool_)
        f(c, n, rhs)
        assert host(n) == [trips]
        return
    f(c, n, rhs)
    expected = 0
    while expected < 100 and expected < rhs:
        expected += 1
    assert host(n) == [trips] == [expected]


def test_a_number_that_no_longer_fits_is_refused_at_the_call_and_changes_nothing():
    f = gt.graph(backend="sim")(flow_kernels.loop_and_fill)
    c, n, runs = (dev(0, dtype=np.int32) for _ in range(3))
    small = dev(0, 0, dtype=np.int8)
    f(c, n, runs, 2, 7, small)
    assert host(n) == [2] and host(small) == [7, 7]
    for bad, fill, marker in ((2 ** 31, 1, "the loop"), (-2 ** 31 - 1, 1, "the loop"),
                              (2, 300, "the fill")):
        with pytest.raises(gt.ArgumentError, match=f"{bad if fill == 1 else fill}") as e:
            f(c, n, runs, bad, fill, small)
        assert e.value.source[1] == line_of(flow_kernels.__file__, marker)
        if fill == 1:   # past int32's range: the advice says how to keep the test
            assert "bring the bound into that range" in str(e.value) and \
                "x > n for an n past 2147483647 is x > 2147483647" in str(e.value)
    with pytest.raises(gt.ArgumentError, match="cannot compare it with 2.5.*x < 3 rather"):
        f(c, n, runs, 2.5, 1, small)   # another signature: refused while tracing
    assert host(n) == [2] and host(c) == [2] and host(runs) == [1] and host(small) == [7, 7]
    f(c, n, runs, 4, -1, small)   # the graph still runs with numbers that fit
    assert host(n) == [4] and host(runs) == [2] and host(small) == [-1, -1]


@pytest.mark.parametrize("kind", ["while", "if", "child", "fork in body"])
def test_stream_order_holds_for_bodies_opened_on_a_forked_stream(kind):
    """``deps="streams"``: a loop, branch or child graph on a forked stream orders
    its body as its own stream, and the join orders what follows after it."""
    @gt.graph(backend="sim")
    def twice(s, x):
        add[1, 4, s](x, 1.0)
        add[1, 4, s](x, 1.0)

    @gt.graph(backend="sim", deps="streams")
    def f(s, x, y, c):
        add[1, 4, s](y, 1.0)
        s2 = s.fork()
        if kind == "while":
            with s2.while_loop(gt.cond(c) < 3, max_iterations=10) as body:
                add[1, 4, body](x, 1.0)
                count[1, 1, body](c)
        elif kind == "if":
            with s2.if_then(gt.cond(c) < 3) as body:
                add[1, 4, body](x, 1.0)
                add[1, 4, body](x, 1.0)
        elif kind == "child":
            s2.child(twice, x)
        else:
            with s2.while_loop(gt.cond(c) < 2, max_iterations=10) as body:
                b2 = body.fork()
                add[1, 4, b2](x, 1.0)
                body.join(b2)
                count[1, 1, body](c)
        s.join(s2)
        add[1, 4, s](y, 10.0)
    x, y, c = dev(0, 0), dev(0, 0), dev(0, dtype=np.int32)
    f(x, y, c)
    assert host(x) == ([3, 3] if kind == "while" else [2, 2]) and host(y) == [11, 11]
    g = f.trace(x, y, c)
    outer = [n.index for n in g.nodes]
    # the fork orders the node after the first, the join the last after it
    assert len(outer) == 3 and [n.index for n in g.nodes[1].deps] == outer[:1]
    assert [n.index for n in g.nodes[2].deps] == outer[1:2]
    body = g.nodes[1].regions[0].nodes if kind != "child" else None
    if kind in ("if", "fork in body"):   # two ops in one body stream: a chain
        assert [n.index for n in body[-1].deps] == [body[-2].index]


def test_a_numpy_number_is_compared_as_it_is_or_refused():
    """np.float64(16777217) < a float32 array holding 16777216 is True for numpy:
    rounding it to float32 would make it False, so it is refused; np.True_ is 1."""
    @gt.graph(backend="sim")
    def f(s, c, n, rhs):
        with s.if_then(gt.cond(c) < rhs) as then:
            count[1, 1, then](n)
    n = dev(0, dtype=np.int32)
    for rhs in (np.float64(16777217.0), np.int64(16777217)):
        with pytest.raises(gt.ArgumentError, match="is compared as it is"):
            f(dev(16777216, dtype=np.float32), n, rhs)
    f(dev(0.25, dtype=np.float32), n, np.float64(0.5))   # fits float32 exactly
    f(dev(0, dtype=np.int32), n, np.True_)
    assert host(n) == [2]


@pytest.mark.parametrize("rhs", [None, "1.0", [1.0]])
def test_a_condition_compared_with_what_is_no_number_is_refused_at_its_line(rhs):
    """``gt.cond(x) > tol`` with ``tol=None`` was taken as no comparison at all (the
    GPU then compared with 0)."""
    @gt.graph(backend="sim")
    def f(s, x, tol):
        with s.while_loop(gt.cond(x) > tol, max_iterations=4) as body:   # compares here
            halve[1, 1, body](x)
    with pytest.raises(gt.ArgumentError, match="compare a device condition with a number") as e:
        f.trace(dev(8.0), rhs)
    assert e.value.source[1] == line_of(__file__, "compares here")


@cuda.jit
def _count_opaque(n):
    if cuda.grid(1) == 0:
        n[0] += 1


def test_an_unbounded_loop_whose_body_never_writes_its_condition_is_refused():
    """Once its condition holds such a loop never ends: refused at its line. A bound,
    a body writing the condition's bytes (through a view too) or an opaque node in
    the body (it may write anything) lets it through."""
    @gt.graph(backend="sim")
    def forgot(s, x, n):
        with s.while_loop(gt.cond(x) > 1.0) as body:   # never ends
            count[1, 1, body](n)
    with pytest.raises(gt.ArgumentError, match="never writes x") as e:
        forgot.trace(dev(4.0), dev(0, dtype=np.int32))
    assert e.value.source[1] == line_of(__file__, "never ends")

    @gt.graph(backend="sim")
    def against_an_array(s, x, lim, n):
        with s.while_loop(gt.cond(x) > lim) as body:
            count[1, 1, body](n)
    with pytest.raises(gt.ArgumentError, match="never writes x or lim"):
        against_an_array.trace(dev(4.0), dev(1.0), dev(0, dtype=np.int32))

    @gt.graph(backend="sim")
    def fine(s, x, n, how):
        with s.while_loop(gt.cond(x[0:1]) > 1.0,
                          max_iterations=3 if how == "bounded" else None) as body:
            count[1, 1, body](n)
            if how == "view":
                halve[1, 1, body](x[0:2])
            elif how == "opaque":
                body.launch(_count_opaque, 1, 1, n, opaque=True)
    for how in ("bounded", "view", "opaque"):
        x, n = dev(4.0, 4.0), dev(0, dtype=np.int32)
        fine.trace(x, n, how)
    x, n = dev(4.0, 4.0), dev(0, dtype=np.int32)
    fine(x, n, "view")
    assert host(x)[0] == 1.0 and host(n) == [2]


@pytest.mark.parametrize("how", ["while_loop", "if_then", "if_then and more work"])
def test_a_loop_or_branch_not_used_as_a_with_block_is_refused_at_its_line(how):
    """Called bare, a loop or branch recorded nothing and said nothing."""
    @gt.graph(backend="sim")
    def f(s, x):
        halve[1, 1, s](x)
        if how == "while_loop":
            s.while_loop(gt.cond(x) > 1.0, max_iterations=10)   # bare loop
        else:
            s.if_then(gt.cond(x))   # bare branch
            if how == "if_then and more work":
                halve[1, 1, s](x)
    with pytest.raises(gt.TraceError, match=f"with s.{how.split()[0]}") as e:
        f.trace(dev(8.0))
    marker = "bare loop" if how == "while_loop" else "bare branch"
    assert e.value.source[1] == line_of(__file__, marker)


@pytest.mark.parametrize("how", ["exit stack", "by hand", "nested"])
def test_a_loop_or_branch_entered_and_never_left_is_refused_at_its_line(how):
    """Entered and never left (an ExitStack left open, ``__enter__`` called by
    hand), a body's work was silently left out of the graph."""
    import contextlib

    @gt.graph(backend="sim")
    def f(s, x, n):
        if how == "exit stack":
            stack = contextlib.ExitStack()
            body = stack.enter_context(s.if_then(gt.cond(x) > 1.0))   # left open: stack
        elif how == "by hand":
            body = s.while_loop(gt.cond(x) > 1.0, max_iterations=4).__enter__()  # by hand
        else:
            with s.while_loop(gt.cond(x) > 1.0, max_iterations=4) as outer:
                inner = outer.if_then(gt.cond(x) > 2.0)   # left open: nested
                body = inner.__enter__()
                count[1, 1, body](n)
                return
        halve[1, 1, body](x)
        count[1, 1, body](n)
    with pytest.raises(gt.TraceError, match="entered but never left") as e:
        f.trace(dev(8.0), dev(0, dtype=np.int32))
    marker = {"exit stack": "left open: stack", "by hand": "by hand",
              "nested": "left open: nested"}[how]
    assert e.value.source[1] == line_of(__file__, marker), str(e.value)


@pytest.mark.parametrize("how", ["tuple", "block"])
def test_a_kernel_launched_on_a_tuple_of_bodies_or_on_the_block_says_so(how):
    @gt.graph(backend="sim")
    def f(s, flag, y):
        if how == "tuple":
            with s.if_else(gt.cond(flag)) as then:   # forgot (then, otherwise)
                add[1, 1, then](y, 1.0)
        else:
            block = s.while_loop(gt.cond(flag), max_iterations=2)
            add[1, 1, block](y, 1.0)
    with pytest.raises(gt.StreamError, match="tuple of streams" if how == "tuple"
                       else "not on its body"):
        f.trace(dev(1, dtype=np.int32), dev(0.0))


def test_a_number_argument_as_a_condition_or_a_bound_says_what_to_do():
    @gt.graph(backend="sim")
    def cond_on_number(s, x, m):
        with s.while_loop(gt.cond(m), max_iterations=3) as body:   # number condition
            halve[1, 1, body](x)

    @gt.graph(backend="sim")
    def dynamic_bound(s, x, m):
        with s.while_loop(gt.cond(x) > 1.0, max_iterations=m) as body:   # dynamic bound
            halve[1, 1, body](x)
    with pytest.raises(gt.ArgumentError, match="not the number argument 'm'") as e:
        cond_on_number.trace(dev(8.0), 2)
    assert e.value.source[1] == line_of(__file__, "number condition")
    with pytest.raises(gt.ArgumentError, match=r"static=\('m',\)") as e:
        dynamic_bound.trace(dev(8.0), 2)
    assert e.value.source[1] == line_of(__file__, "dynamic bound")


def test_a_block_entered_twice_is_refused_at_its_second_with():
    """Kept in a name and entered again, a loop's bodies are closed already: that
    was an obscure error about a region, hiding the one that said why."""
    @gt.graph(backend="sim")
    def f(s, n):
        loop = s.while_loop(gt.cond(n) < 2, max_iterations=5)
        with loop as body:
            count[1, 1, body](n)
        with loop as body:   # entered again
            count[1, 1, body](n)
    with pytest.raises(gt.ArgumentError, match=r"entered before.*call s.while_loop\(\.\.\.\) "
                       "again") as e:
        f.trace(dev(0, dtype=np.int32))
    assert e.value.source[1] == line_of(__file__, "entered again")


def test_a_block_an_exception_left_and_a_bare_block_before_another_are_refused():
    """A caught exception dropped the loop or branch it left; a bare block followed
    by a with block was reported at the second (its record's id was reused)."""
    @gt.graph(backend="sim")
    def caught(s, x, n):
        try:
            with s.if_then(gt.cond(x) > 0.0) as then:   # left by an exception
                count[1, 1, then](n)
                raise KeyError("stop")
        except KeyError:
            pass

    @gt.graph(backend="sim")
    def bare_then_with(s, x, n):
        s.while_loop(gt.cond(x) > 1.0, max_iterations=3)   # bare, then a with block
        with s.if_then(gt.cond(x) > 0.0) as then:
            count[1, 1, then](n)
    with pytest.raises(gt.TraceError, match="an exception left the body") as e:
        caught.trace(dev(1.0), dev(0, dtype=np.int32))
    assert e.value.source[1] == line_of(__file__, "left by an exception")

    @gt.graph(backend="sim")
    def failing(s, n):
        count[1, 1, s](n)
        raise KeyError("stop")

    @gt.graph(backend="sim")
    def caught_child(s, x, n):
        try:
            s.child(failing, n)   # a child left by an exception
        except KeyError:
            pass
    with pytest.raises(gt.TraceError, match=r"an exception left s.child\(...\)") as e:
        caught_child.trace(dev(1.0), dev(0, dtype=np.int32))
    assert e.value.source[1] == line_of(__file__, "a child left by an exception")
    with pytest.raises(gt.TraceError, match="not used as a with block") as e:
        bare_then_with.trace(dev(1.0), dev(0, dtype=np.int32))
    assert e.value.source[1] == line_of(__file__, "bare, then a with block")


def test_a_condition_compares_with_an_intent_wrapped_array_and_refuses_other_numbers():
    from fractions import Fraction

    @gt.graph(backend="sim")
    def f(s, x, lim, n, how):
        rhs = gt.In(lim) if how == "wrapped" else Fraction(1, 2)
        with s.while_loop(gt.cond(x) > rhs, max_iterations=10) as body:
            halve[1, 1, body](x)
            count[1, 1, body](n)
    x, n = dev(8.0), dev(0, dtype=np.int32)
    f(x, dev(1.0), n, "wrapped")
    assert host(x) == [1.0] and host(n) == [3]
    with pytest.raises(gt.ArgumentError, match="compare a device condition with a number"):
        f.trace(dev(8.0), dev(1.0), n, "fraction")


def test_an_unbounded_loop_that_runs_long_on_the_simulator_is_warned_about(monkeypatch):
    from graphtrace.ops import conditional
    monkeypatch.setattr(conditional, "_LONG_RUN", 5)

    @gt.graph(backend="sim")
    def f(s, x, n):
        with s.while_loop(gt.cond(x) > 1.0) as body:                 # unbounded
            halve[1, 1, body](x)
            count[1, 1, body](n)
    x, n = dev(100.0), dev(0, dtype=np.int32)
    with pytest.warns(RuntimeWarning, match="has run 5 times on the simulator") as w:
        f(x, n)
    assert host(n) == [7]                                  # it still ran to its end
    assert (w[0].filename, w[0].lineno) == (__file__, line_of(__file__, "unbounded"))
    with pytest.warns(RuntimeWarning, match="max_iterations="):
        f(dev(100.0), dev(0, dtype=np.int32))
    monkeypatch.setattr(conditional, "_LONG_RUN", 8)       # past its 7 trips: quiet
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(dev(100.0), dev(0, dtype=np.int32))


def _swap_in_loop(s, a, b, n):
    with s.while_loop(gt.cond(n) < 4) as body:   # swap loop
        shift[1, 4, body](a, b)
        count[1, 1, body](n)
        a, b = b, a


def _swap_with_aliases(s, a, b, n):
    a0, b0 = a, b   # other names for the same arrays
    with s.while_loop(gt.cond(n) < 4) as body:   # swap aliases
        shift[1, 4, body](a, b)
        count[1, 1, body](n)
        a, b = b, a
    shift[1, 4, s](a0, b0)


def _swap_in_body_function(s, a, b, n):
    def body(s):
        nonlocal a, b
        shift[1, 4, s](a, b)
        count[1, 1, s](n)
        a, b = b, a
    s.while_loop(gt.cond(n) < 4, body=body)   # swap body function


def _rotate_three(s, a, b, n):
    c = b[2:]
    with s.while_loop(gt.cond(n) < 4) as body:   # swap rotation
        shift[1, 2, body](a, c)
        count[1, 1, body](n)
        a, b, c = b, c, a


@pytest.mark.parametrize("program, marker, words", [
    (_swap_in_loop, "swap loop", "changes `a` and `b`, which it reads again"),
    (_swap_with_aliases, "swap aliases", "changes `a` and `b`, which it reads again"),
    (_swap_in_body_function, "swap body function", "changes `a` and `b`, which it reads again"),
    (_rotate_three, "swap rotation", "changes `a`, `b` and `c`, which it reads again"),
])
def test_arrays_swapped_inside_a_body_are_refused_at_its_line(program, marker, words):
    """Python runs a body once: ``a, b = b, a`` in it swapped nothing on the device
    (every iteration ran shift(a, b)), silently unlike the same loop run eagerly."""
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32))
    e = info.value
    assert e.source[1] == line_of(__file__, marker), str(e)
    assert words in str(e) and "Python runs the body once" in str(e)


def test_names_given_the_same_arrays_every_iteration_or_a_branchs_are_no_swap():
    """Names picking the same pair at every iteration (``a, b = v, u``), a for loop
    over both orders left on the second, and branches filled in a loop, run as
    eagerly: none carries a swap from one iteration to the next."""
    @gt.graph(backend="sim")
    def pick(s, u, v, n):
        a, b = u, v
        shift[1, 4, s](a, b)             # v = u + 1
        with s.while_loop(gt.cond(n) < 3) as body:
            a, b = v, u                  # the same pair every iteration
            shift[1, 4, body](a, b)      # u = v + 1
            count[1, 1, body](n)

    @gt.graph(backend="sim")
    def sweeps(s, u, v, n):
        for src, dst in ((u, v),):
            shift[1, 4, s](src, dst)
        with s.while_loop(gt.cond(n) < 2) as body:
            for src, dst in ((u, v), (v, u)):   # both sweeps, left on (v, u)
                shift[1, 4, body](src, dst)
            count[1, 1, body](n)

    @gt.graph(backend="sim")
    def cases(s, u, v, k):
        src, dst = u, v
        with s.switch(gt.cond(k), 2) as branches:
            for i, (src, dst) in enumerate(((u, v), (v, u))):
                shift[1, 4, branches[i]](src, dst)

    u, v, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    pick(u, v, n)
    assert host(u) == [2, 3, 4, 5] and host(v) == [1, 2, 3, 4]
    u, v, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    sweeps(u, v, n)   # v = u + 1, then twice: v = u + 1, u = v + 1
    assert host(u) == [4, 5, 6, 7] and host(v) == [3, 4, 5, 6]
    u, v = dev(0, 1, 2, 3), dev(0, 0, 0, 0)
    cases(u, v, dev(1, dtype=np.int32))
    assert host(u) == [1, 1, 1, 1] and host(v) == [0, 0, 0, 0]


def test_names_a_body_stores_before_reading_them_are_left_alone():
    """A name the body binds before it reads it (a for loop's variable left on
    another array, a view made in the body) carries nothing from one iteration
    to the next: the same loop run eagerly binds it anew in each."""
    @gt.graph(backend="sim")
    def f(s, a, b, n):
        for x in (b, a):
            pass
        view = a
        with s.while_loop(gt.cond(n) < 3) as body:
            view = b[0:4]       # bound before it is read
            shift[1, 4, body](a, view)
            count[1, 1, body](n)
            for x in (a, b):    # x left on b
                pass
    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(b) == [1, 2, 3, 4] and host(n) == [3]


def test_an_array_a_body_reads_and_then_rebinds_is_refused():
    """``a`` read by the body's first launch, then bound to another array: the
    same loop run eagerly reads the other array in the next iteration, where the
    device would read the first every time."""
    @gt.graph(backend="sim")
    def f(s, a, b, n):
        with s.while_loop(gt.cond(n) < 3) as body:   # rebinds a
            shift[1, 4, body](a, b)
            count[1, 1, body](n)
            a = b[0:4]
    with pytest.raises(gt.ArgumentError, match="changes `a`, which it reads again") as e:
        f(dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32))
    assert e.value.source[1] == line_of(__file__, "rebinds a")


def test_a_body_left_by_closing_its_generator_says_so():
    """A for loop over a generator yielding bodies, left by break, closes the
    generator inside the with block: no exception the user caught, as the
    message said before."""
    def steps(s, n):
        for _ in range(3):
            with s.while_loop(gt.cond(n) < 3, max_iterations=5) as body:   # generator
                yield body

    @gt.graph(backend="sim")
    def f(s, n):
        for body in steps(s, n):
            count[1, 1, body](n)
            break
    with pytest.raises(gt.TraceError, match="the generator holding the body of") as e:
        f.trace(dev(0, dtype=np.int32))
    assert e.value.source[1] == line_of(__file__, "generator")

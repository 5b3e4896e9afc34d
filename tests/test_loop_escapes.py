"""Python state a loop's or a branch's body changes, read by the code after it.

Python runs the body of a while loop, an if_then, an if_else or a switch once,
when it is recorded; the device runs it zero, one or many times. Code after
the block that reads what the body changed saw the values of that one
recorded pass whatever the device did (a branch not taken still swapped the
arrays, a loop run zero times still left its last array and a count of one);
now such a body is refused at the block's line, naming the line that reads it
after. The programs beside them, whose later code reads nothing the body
changed, or only reports it, run as eagerly.
"""
import functools

import numpy as np
import pytest

import graphtrace as gt
import loop_state_module as lsm
from flow_kernels import add, copy_into, count, dev, host, shift
from helpers import line_of


def _refused_at(program, marker, a, b) -> str:
    """The message of the refusal ``program`` meets, at the line ``marker`` marks."""
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(*a), dev(*b), dev(0, 0, 0, 0), dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    return e


def _branch_swap(s, a, b, c, n):
    u, v = a, b
    with s.if_then(gt.cond(n) > 0) as then:   # branch swap
        shift[1, 4, then](u, v)
        u, v = v, u
    copy_into[1, 4, s](u, c)   # branch swap read


def _loop_result(s, a, b, c, n):
    res = a
    with s.while_loop(gt.cond(n) < 3) as body:   # loop result
        shift[1, 4, body](a, b)
        count[1, 1, body](n)
        res = b
    copy_into[1, 4, s](res, c)   # loop result read


def _loop_counter(s, a, b, c, n):
    sweeps = 0
    with s.while_loop(gt.cond(n) < 3) as body:   # loop counter
        count[1, 1, body](n)
        sweeps += 1
    add[1, 4, s](a, float(sweeps))   # loop counter read


def _else_scale(s, a, b, c, n):
    scale = 1.0
    with s.if_else(gt.cond(n) > 0) as (then, otherwise):   # else scale
        add[1, 4, then](b, 1.0)
        add[1, 4, otherwise](b, 2.0)
        scale = 2.0
    add[1, 4, s](a, scale)   # else scale read


def _switch_pick(s, a, b, c, n):
    pick = a
    with s.switch(gt.cond(n), 2) as cases:   # switch pick
        shift[1, 4, cases[1]](a, b)
        pick = b
    copy_into[1, 4, s](pick, c)   # switch pick read


def _counter_decides(s, a, b, c, n):
    hit = 0
    with s.if_then(gt.cond(n) > 0) as then:   # counter decides
        add[1, 4, then](b, 1.0)
        hit = 1
    if hit:   # counter decides read
        add[1, 4, s](a, 1.0)


def _counter_sizes(s, a, b, c, n):
    m = 2
    with s.while_loop(gt.cond(n) < 3) as body:   # counter sizes
        count[1, 1, body](n)
        m = 4
    t = s.zeros(m, np.float32)   # counter sizes read
    shift[1, 4, s](t, c)


def _python_loop_around(s, a, b, c, n):
    k = 0
    for _ in range(2):
        with s.if_then(gt.cond(n) > 0) as then:   # python loop around
            add[1, 4, then](a, float(k))   # python loop around read
            k += 1


def _body_function_counter(s, a, b, c, n):
    trips = 0

    def sweep(body):
        nonlocal trips
        count[1, 1, body](n)
        trips += 1
    s.while_loop(gt.cond(n) < 3, body=sweep)   # body function counter
    add[1, 4, s](a, float(trips))   # body function counter read


class _Holder:
    pass


def _body_function_attribute(s, a, b, c, n):
    st = _Holder()
    st.res = a

    def branch(then):
        shift[1, 4, then](a, b)
        st.res = b
    s.if_then(gt.cond(n) > 0, body=branch)   # body function attribute
    copy_into[1, 4, s](st.res, c)   # body function attribute read


@pytest.mark.parametrize("program, marker, named", [
    (_branch_swap, "branch swap", "changes `u`,"),
    (_loop_result, "loop result", "changes `res`,"),
    (_loop_counter, "loop counter", "changes `sweeps`,"),
    (_else_scale, "else scale", "changes `scale`,"),
    (_switch_pick, "switch pick", "changes `pick`,"),
    (_counter_decides, "counter decides", "changes `hit`,"),
    (_counter_sizes, "counter sizes", "changes `m`,"),
    (_python_loop_around, "python loop around", "changes `k`,"),
    (_body_function_counter, "body function counter", "changes `trips`,"),
    (_body_function_attribute, "body function attribute", "changes `st.res`,"),
])
def test_state_a_body_changes_and_code_after_it_reads_is_refused_at_its_line(
        program, marker, named):
    e = _refused_at(program, marker, (0, 1, 2, 3), (0, 0, 0, 0))
    assert named in e and "after the block" in e, e
    assert f"line {line_of(__file__, marker + ' read')} reads" in e, e


def test_state_code_after_a_block_does_not_read_so_runs_as_eagerly():
    """Names made and used only in the body, a temporary made there, counters
    only reported after, the ``as`` names of two blocks, a name the body sets to
    what it held, and one set again after the block before it is read."""
    reported = []

    @gt.graph(backend="sim")
    def f(s, a, b, c, n):
        trips, res, same = 0, a, a
        with s.while_loop(gt.cond(n) < 3) as body:
            t = body.zeros(4, np.float32)
            local = 1.0
            add[1, 4, body](t, local)
            shift[1, 4, body](t, b)
            count[1, 1, body](n)
            trips += 1
            res = b
            same = a
        reported.append(f"{trips} sweeps")
        res = c
        shift[1, 4, s](same, res)
        with s.if_then(gt.cond(n) > 0) as body:
            add[1, 4, body](a, 1.0)
            trips = 7
        with s.if_else(gt.cond(n) > 5) as (body, other):
            add[1, 4, other](a, 1.0)
        reported.append(trips)

    a, b, c, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, c, n)
    assert host(b) == [2, 2, 2, 2] and host(n) == [3]
    assert host(c) == [1, 2, 3, 4] and host(a) == [2, 3, 4, 5]


def test_state_a_python_loop_stores_again_before_its_block_reads_runs_as_eagerly():
    """Around the block, a Python for loop whose next pass sets the names the
    body changed before the block reads them, and a body=fn counter only
    reported: nothing after the block reads what one recorded pass left."""
    reported = []

    @gt.graph(backend="sim")
    def f(s, a, b, n):
        trips = 0

        def sweep(body):
            nonlocal trips
            count[1, 1, body](n)
            trips += 1
        for level in range(2):
            src, k = a, float(level)
            with s.if_then(gt.cond(n) < 1) as then:
                add[1, 4, then](src, k)
                src, k = b, 0.0
        s.while_loop(gt.cond(n) < 3, body=sweep)
        reported.append(trips)

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(a) == [1, 2, 3, 4] and host(n) == [3]


class _Results:
    pass


RESULTS = _Results()


def _sets_global_attribute(s, a, b, n):
    RESULTS.res = a
    with s.if_then(gt.cond(n) > 0) as then:   # helper global attribute
        shift[1, 4, then](a, b)
        RESULTS.res = b


def _caller_reads_global_attribute(s, a, b, c, n):
    _sets_global_attribute(s, a, b, n)
    copy_into[1, 4, s](RESULTS.res, c)   # helper global attribute read


def _returns_pick(s, a, b, n):
    res = a
    with s.while_loop(gt.cond(n) < 0) as body:   # helper returned
        shift[1, 4, body](a, b)
        count[1, 1, body](n)
        res = b
    return res


def _caller_reads_returned(s, a, b, c, n):
    out = _returns_pick(s, a, b, n)
    copy_into[1, 4, s](out, c)   # helper returned read


def _caller_reads_nonlocal(s, a, b, c, n):
    res = a

    def pick():
        nonlocal res
        with s.if_then(gt.cond(n) > 0) as then:   # helper nonlocal
            shift[1, 4, then](a, b)
            res = b
    pick()
    copy_into[1, 4, s](res, c)   # helper nonlocal read


def _sets_argument(s, st, a, b, n):
    with s.if_then(gt.cond(n) > 0) as then:   # helper argument
        shift[1, 4, then](a, b)
        st.res = b


def _relays(s, st, a, b, n):
    _sets_argument(s, st, a, b, n)


def _caller_reads_argument(s, a, b, c, n):
    st = _Holder()
    st.res = a
    _relays(s, st, a, b, n)
    copy_into[1, 4, s](st.res, c)   # helper argument read


@pytest.mark.parametrize("program, marker, named", [
    (_caller_reads_global_attribute, "helper global attribute", "changes `RESULTS.res`,"),
    (_caller_reads_returned, "helper returned", "changes `out` and `res`,"),
    (_caller_reads_nonlocal, "helper nonlocal", "changes `res`,"),
    (_caller_reads_argument, "helper argument", "changes `st.res`,"),
])
def test_state_a_helper_body_changes_and_its_caller_reads_after_is_refused(
        program, marker, named):
    """A helper holding the block returns, and its caller (or the caller's
    caller) reads what the body changed: a global's attribute, the helper's
    result, a nonlocal name, an attribute of an object it was handed. The
    branch not taken (the loop run no time) left the first array there."""
    e = _refused_at(program, marker, (0, 1, 2, 3), (9, 9, 9, 9))
    assert named in e and "after the block" in e, e
    assert f"{line_of(__file__, marker + ' read')} reads" in e, e


def test_state_a_helper_body_changes_what_its_caller_does_not_read_runs_as_eagerly():
    """A helper's body changes a counter its caller only reports, an attribute the
    caller sets again before reading it, and a nonlocal name the caller sets
    again before using it."""
    reported = []

    @gt.graph(backend="sim")
    def f(s, a, b, c, n):
        st, res = _Holder(), a
        st.trips, st.res = 0, a

        def sweep():
            nonlocal res
            with s.while_loop(gt.cond(n) < 3) as body:
                count[1, 1, body](n)
                st.trips += 1
                st.res = res = b
        sweep()
        reported.append(f"{st.trips} sweeps")
        st.res, res = c, a
        shift[1, 4, s](res, st.res)

    a, b, c, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, c, n)
    assert host(c) == [1, 2, 3, 4] and host(n) == [3] and reported == ["1 sweeps"]


def _appended_array(s, a, b, c, n):
    picks = [a]
    with s.if_then(gt.cond(n) > 0) as then:   # appended array
        shift[1, 4, then](a, b)
        picks.append(b)
    copy_into[1, 4, s](picks[-1], c)   # appended array read


def _new_key_array(s, a, b, c, n):
    d = {"x": a}
    with s.if_then(gt.cond(n) > 0) as then:   # new key array
        shift[1, 4, then](a, b)
        d["y"] = b
    copy_into[1, 4, s](d.get("y", a), c)   # new key array read


def _popped_array(s, a, b, c, n):
    stack = [a, b]
    with s.while_loop(gt.cond(n) < 0) as body:   # popped array
        count[1, 1, body](n)
        stack.pop()
    for x in stack:   # popped array read
        copy_into[1, 4, s](x, c)


def _appends(s, picks, a, b, n):
    with s.if_then(gt.cond(n) > 0) as then:   # helper appended array
        shift[1, 4, then](a, b)
        picks.append(b)


def _caller_reads_appended(s, a, b, c, n):
    picks = [a]
    _appends(s, picks, a, b, n)
    copy_into[1, 4, s](picks[len(picks) - 1], c)   # helper appended array read


@pytest.mark.parametrize("program, marker, named", [
    (_appended_array, "appended array", "adds an item to or removes one from `picks`,"),
    (_new_key_array, "new key array", "adds an item to or removes one from `d`,"),
    (_popped_array, "popped array", "adds an item to or removes one from `stack`,"),
    (_caller_reads_appended, "helper appended array",
     "adds an item to or removes one from `picks`,"),
])
def test_state_a_body_adding_an_array_to_a_container_read_after_is_refused(
        program, marker, named):
    """A body appends an array to a list, sets a new key of a dict to one, or pops
    one off a list, and the code after the block (or the caller's) reads the
    container's items: the branch not taken (the loop run no time) left the
    container as the one recorded pass made it."""
    e = _refused_at(program, marker, (0, 1, 2, 3), (9, 9, 9, 9))
    assert named in e and "len(" not in e, e
    assert f"line {line_of(__file__, marker + ' read')} reads" in e, e


def test_state_a_container_the_code_after_does_not_read_items_of_runs_as_eagerly():
    """A list of arrays the body appends to, only measured (len) and appended to
    after the block, and a list of messages logged after it."""
    reported = []

    @gt.graph(backend="sim")
    def f(s, a, b, c, n):
        picks, log = [a], []
        with s.if_then(gt.cond(n) > 0) as then:
            shift[1, 4, then](a, b)
            picks.append(b)
            log.append("branch")
        reported.append(len(picks))
        picks.append(c)
        for msg in log:
            reported.append(msg)
        add[1, 4, s](c, 1.0)

    a, b, c, n = dev(0, 1, 2, 3), dev(9, 9, 9, 9), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, c, n)
    assert host(c) == [1, 1, 1, 1] and host(b) == [9, 9, 9, 9]
    assert reported == [2, "branch"]


TOLS = [1e-3, 1e-4, 1e-5]
UNITS = {"coarse": 1.0, "fine": 0.5}


def test_state_a_counter_or_label_only_picking_what_is_reported_runs_as_eagerly():
    """A counter and a label the body changes, used after the block only to pick
    what is printed, logged or formatted into a message
    (``print(TOLS[attempt], UNITS[grid])``, ``log.debug("%s", timing[phase])``):
    such a subscript picks no work (asserts too; pytest rewrites those here)."""
    import logging
    log, reported = logging.getLogger("graphtrace.tests"), []

    @gt.graph(backend="sim")
    def f(s, a, n):
        attempt, grid, phase = 0, "coarse", "setup"
        timing = {"setup": 0.5, "solve": 1.5}
        with s.while_loop(gt.cond(n) < 2) as body:
            count[1, 1, body](n)
            add[1, 4, body](a, 1.0)
            attempt += 1
            grid, phase = "fine", "solve"
        print("next tolerance", TOLS[attempt], "unit", UNITS[grid])
        log.debug("%s took %.1f s", phase, timing[phase])
        reported.append(f"{UNITS[grid]:.2f} {-TOLS[attempt] * 2}")
        add[1, 4, s](a, 1.0)

    a, n = dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [3, 3, 3, 3] and host(n) == [2]


def _label_picks_work(s, a, b, c, n):
    grid = "coarse"
    with s.if_then(gt.cond(n) > 0) as then:   # label picks work
        add[1, 4, then](b, 1.0)
        grid = "fine"
    unit = UNITS[grid]
    add[1, 4, s](a, unit)   # label picks work read


def test_state_a_label_picking_work_after_the_block_is_refused_as_changed():
    """A label whose pick reaches a kernel is still refused, and named as the
    string it is, not as a container the body added an item to."""
    f = gt.graph(_label_picks_work, backend="sim")
    a, b, c = dev(0, 0, 0, 0), dev(0, 0, 0, 0), dev(0, 0, 0, 0)
    with pytest.raises(gt.ArgumentError) as info:
        f(a, b, c, dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, "label picks work"), e
    assert "changes `grid`," in e and "adds an item" not in e, e


MODE = 0


def _post_by_mode(s, a):
    if MODE == 0:
        add[1, 4, s](a, 100.0)
    else:
        add[1, 4, s](a, 1.0)


def _global_read_by_helper(s, a, b, c, n):
    global MODE
    MODE = 0
    with s.if_then(gt.cond(n) > 0) as then:   # global read by helper
        add[1, 4, then](b, 1.0)
        MODE = 1
    _post_by_mode(s, a)   # global read by helper read


def _closure_read_by_helper(s, a, b, c, n):
    scale = 1.0

    def finish():
        add[1, 4, s](a, scale)
    with s.if_then(gt.cond(n) > 0) as then:   # closure read by helper
        add[1, 4, then](b, 1.0)
        scale = 50.0
    finish()   # closure read by helper read


def _post_if(s, a, k):
    if k > 0:
        add[1, 4, s](a, 1.0)


def _counter_handed_to_helper(s, a, b, c, n):
    hit = 0
    with s.if_then(gt.cond(n) > 0) as then:   # counter handed to helper
        add[1, 4, then](b, 1.0)
        hit = 1
    _post_if(s, a, hit)   # counter handed to helper read


@pytest.mark.parametrize("program, marker, named", [
    (_global_read_by_helper, "global read by helper", "changes `MODE`,"),
    (_closure_read_by_helper, "closure read by helper", "changes `scale`,"),
    (_counter_handed_to_helper, "counter handed to helper", "changes `hit`,"),
])
def test_state_a_helper_called_after_the_block_reading_what_the_body_changed_is_refused(
        program, marker, named):
    """The body sets a global or a closure's name that a function called after the
    block reads by its own name, deciding by it which kernel runs or handing it
    to one, or a counter handed to a function deciding by it: the branch not
    taken left it as the recorded pass set it."""
    e = _refused_at(program, marker, (0, 0, 0, 0), (0, 0, 0, 0))
    assert named in e and "after the block" in e, e
    assert f"line {line_of(__file__, marker + ' read')} reads" in e, e


def test_state_a_helper_called_after_the_block_reading_no_changed_name_runs_as_eagerly():
    """A helper called after the block that reads a global the body changed only to
    report it, or that sets it before testing it."""
    reported = []

    def show():
        reported.append(f"mode {MODE}")

    def reset(s, a):
        global MODE
        MODE = 0
        if MODE == 0:
            add[1, 4, s](a, 1.0)

    @gt.graph(backend="sim")
    def f(s, a, b, n):
        global MODE
        MODE = 0
        with s.if_then(gt.cond(n) > 0) as then:
            add[1, 4, then](b, 1.0)
            MODE = 1
        show()
        reset(s, a)

    a, b, n = dev(0, 0, 0, 0), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(a) == [1, 1, 1, 1] and host(b) == [0, 0, 0, 0]


class _Counted:
    k = 0   # a class's default, the object's own k made by the body's k += 1


def _class_default_counted(s, a, b, c, n):
    st = _Counted()
    with s.while_loop(gt.cond(n) < 3) as body:   # class default counted
        count[1, 1, body](n)
        st.k += 1
    add[1, 4, s](b, float(st.k))   # class default counted read


def _counts_on_argument(s, st, n):
    with s.while_loop(gt.cond(n) < 3) as body:   # helper class default
        count[1, 1, body](n)
        st.k += 1


def _caller_reads_class_default(s, a, b, c, n):
    st = _Counted()
    _counts_on_argument(s, st, n)
    add[1, 4, s](b, float(st.k))   # helper class default read


@pytest.mark.parametrize("program, marker", [
    (_class_default_counted, "class default counted"),
    (_caller_reads_class_default, "helper class default"),
])
def test_state_a_body_giving_an_object_its_own_copy_of_a_class_attribute_is_refused(
        program, marker):
    """``st.k += 1`` on an object whose class holds ``k = 0`` gives it its own
    ``k``: a slot it did not have when the block began, compared with the
    class's value; the code after the block (or the caller's) reads it."""
    e = _refused_at(program, marker, (0, 0, 0, 0), (0, 0, 0, 0))
    assert "changes `st.k`," in e and "after the block" in e, e
    assert f"line {line_of(__file__, marker + ' read')} reads" in e, e


def test_state_a_loop_counting_on_a_class_attribute_its_next_iteration_reads_is_refused():
    """The same ``st.k += 1`` over a class's ``k = 0``, read by the loop's own
    next iteration (``add(b, float(st.k))`` before it): refused as any counter."""
    @gt.graph(backend="sim")
    def f(s, b, n):
        st = _Counted()
        with s.while_loop(gt.cond(n) < 3) as body:   # class default next iteration
            count[1, 1, body](n)
            add[1, 4, body](b, float(st.k))
            st.k += 1

    with pytest.raises(gt.ArgumentError) as info:
        f(dev(0, 0, 0, 0), dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, "class default next iteration"), e
    assert "changes `st.k`," in e and "next iteration" in e, e


class _ClassResult:
    """A result and a count kept on a class, used as a namespace."""
    res, t = None, 0.0


def _class_attribute_branch(s, a, b, c, n):
    _ClassResult.res = a
    with s.if_then(gt.cond(n) > 0) as then:   # class attribute branch
        shift[1, 4, then](a, b)
        _ClassResult.res = b
    copy_into[1, 4, s](_ClassResult.res, c)   # class attribute branch read


def _module_attribute_branch(s, a, b, c, n):
    lsm.res = a
    with s.if_then(gt.cond(n) > 0) as then:   # module attribute branch
        shift[1, 4, then](a, b)
        lsm.res = b
    copy_into[1, 4, s](lsm.res, c)   # module attribute branch read


def _module_function_branch(s, a, b, c, n):
    lsm.keep(a)
    with s.if_then(gt.cond(n) > 0) as then:   # module function branch
        shift[1, 4, then](a, b)
        lsm.keep(b)
    copy_into[1, 4, s](lsm.res, c)   # module function branch read


def _class_counter_loop(s, a, b, c, n):
    _ClassResult.t = 0.0
    with s.while_loop(gt.cond(n) < 3) as body:   # class counter loop
        count[1, 1, body](n)
        _ClassResult.t += 1.0
    add[1, 4, s](a, _ClassResult.t)   # class counter loop read


def _module_counter_helper(s, a, b, c, n):
    lsm.init(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # module counter helper
        count[1, 1, body](n)
        lsm.tick()
    lsm.launch_t(s, a)   # module counter helper read


def _dict_order_branch(s, a, b, c, n):
    d = {"a": a, "b": b}
    with s.if_then(gt.cond(n) > 0) as then:   # dict order branch
        shift[1, 4, then](a, b)
        d["a"] = d.pop("a")
    src, dst = d.values()   # dict order branch read
    copy_into[1, 4, s](src, dst)


@pytest.mark.parametrize("program, marker, named", [
    (_class_attribute_branch, "class attribute branch", "changes `_ClassResult.res`,"),
    (_module_attribute_branch, "module attribute branch", "changes `lsm.res`,"),
    (_module_function_branch, "module function branch", "changes `lsm.res`,"),
    (_class_counter_loop, "class counter loop", "changes `_ClassResult.t`,"),
    (_module_counter_helper, "module counter helper", "changes `lsm.T`,"),
    (_dict_order_branch, "dict order branch", "changes the order of `d`,"),
])
def test_state_a_class_module_or_dict_order_a_body_changes_read_after_is_refused(
        program, marker, named):
    """What a class or a module of the program's own holds (set directly, or by
    the module's own functions, ``lsm.keep(b)``, ``lsm.tick()``), and the order
    of a dict's arrays (``d.values()``), changed in the body and read after."""
    e = _refused_at(program, marker, (0, 1, 2, 3), (0, 0, 0, 0))
    assert named in e and "after the block" in e, e
    assert f"line {line_of(__file__, marker + ' read')} reads" in e, e


def test_state_of_a_class_module_or_dict_the_code_after_does_not_read_runs_as_eagerly():
    """A dict the branch reorders, read after by key; a count kept on a class
    and a module's time its function advances, only reported after."""
    reported = []

    @gt.graph(backend="sim")
    def f(s, a, b, c, n):
        d = {"a": a, "b": b}
        _ClassResult.t = 0.0
        with s.if_then(gt.cond(n) > 0) as then:
            shift[1, 4, then](d["a"], d["b"])
            d["a"] = d.pop("a")
            _ClassResult.t += 1.0
            lsm.tick()
        copy_into[1, 4, s](d["b"], c)
        reported.append((_ClassResult.t, lsm.T))

    a, b, c, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, 0, 0, 0), dev(1, dtype=np.int32)
    f(a, b, c, n)
    assert host(b) == [1, 2, 3, 4] and host(c) == [1, 2, 3, 4]


def _add_step(s, x):
    add[1, 4, s](x, 3.0)


def _shift_step(s, x):
    shift[1, 4, s](x, x)


@gt.graph
def _add_child(s, x):
    add[1, 4, s](x, 3.0)


@gt.graph
def _shift_child(s, x):
    shift[1, 4, s](x, x)


def _kernel_picked(s, a, b, c, n):
    kern = add
    with s.if_then(gt.cond(n) > 0) as then:   # kernel picked
        kern = shift
        count[1, 1, then](n)
    kern[1, 4, s](a, b)   # kernel picked read


def _helper_picked(s, a, b, c, n):
    step = _add_step
    with s.if_then(gt.cond(n) > 0) as then:   # helper picked
        step = _shift_step
        count[1, 1, then](n)
    step(s, a)   # helper picked read


def _child_picked(s, a, b, c, n):
    g = _add_child
    with s.if_then(gt.cond(n) > 0) as then:   # child picked
        g = _shift_child
        count[1, 1, then](n)
    s.child(g, a)   # child picked read


def _item_picked(s, a, b, c, n):
    ops = {"k": add}
    with s.if_then(gt.cond(n) > 0) as then:   # item picked
        ops["k"] = shift
        count[1, 1, then](n)
    s.launch(ops["k"], 1, 4, a, b)   # item picked read


def _switch_picked(s, a, b, c, n):
    kern = add
    with s.switch(gt.cond(n), 2) as cases:   # switch picked
        kern = shift
        count[1, 1, cases[1]](n)
    kern[1, 4, s](a, b)   # switch picked read


def _else_picked(s, a, b, c, n):
    kern = add
    with s.if_else(gt.cond(n) > 0) as (then, other):   # else picked
        kern = shift
        count[1, 1, then](n)
        count[1, 1, other](n)
    kern[1, 4, s](a, b)   # else picked read


@pytest.mark.parametrize("program, marker, named", [
    (_kernel_picked, "kernel picked", "changes `kern`,"),
    (_helper_picked, "helper picked", "changes `step`,"),
    (_child_picked, "child picked", "changes `g`,"),
    (_item_picked, "item picked", "changes `ops['k']`,"),
    (_switch_picked, "switch picked", "changes `kern`,"),
    (_else_picked, "else picked", "changes `kern`,"),
])
def test_a_kernel_or_function_a_branch_picks_for_the_code_after_it_is_refused(
        program, marker, named):
    """With the branch not taken, eager code after it runs the kernel it held
    before; the graph ran the one the recorded pass picked, in silence."""
    e = _refused_at(program, marker, (0, 1, 2, 3), (0, 0, 0, 0))
    assert named in e and "after the block" in e and "s.if_else" in e, e
    assert f"line {line_of(__file__, marker + ' read')} reads" in e, e


def test_a_kernel_a_branch_sets_that_the_code_after_sets_again_runs_as_eagerly():
    """A kernel set in the branch and set again after it before its launch, one
    set to what it held, and one only named in a report: the code after runs
    the same kernels whatever the branch does."""
    reported = []

    @gt.graph(backend="sim")
    def f(s, a, b, n):
        kern, same, shown = add, add, add
        with s.if_then(gt.cond(n) > 0) as then:
            kern = shift
            same = add
            shown = shift
            count[1, 1, then](n)
        reported.append(shown.__name__)
        kern = add
        kern[1, 4, s](a, 1.0)
        same[1, 4, s](b, 2.0)

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(a) == [1, 2, 3, 4] and host(b) == [2, 2, 2, 2] and host(n) == [0]


def _shift_pair(s, a, b):
    shift[1, 4, s](a, b)


def _first_else_number(s, a, b, c, n):
    with s.if_else(gt.cond(n) > 0) as (then, other):   # first else number
        v = 3.0
        count[1, 1, then](n)
        v = 5.0
        count[1, 1, other](n)
    add[1, 4, s](a, v)   # first else number read


def _first_else_kernel(s, a, b, c, n):
    with s.if_else(gt.cond(n) > 0) as (then, other):   # first else kernel
        kern = copy_into
        count[1, 1, then](n)
        kern = shift
        count[1, 1, other](n)
    kern[1, 4, s](a, b)   # first else kernel read


def _first_then_number(s, a, b, c, n):
    with s.if_then(gt.cond(n) > 0) as then:   # first then number
        v = 3.0
        count[1, 1, then](n)
    add[1, 4, s](a, v)   # first then number read


def _first_then_array(s, a, b, c, n):
    with s.if_then(gt.cond(n) > 0) as then:   # first then array
        res = b
        shift[1, 4, then](a, b)
    copy_into[1, 4, s](res, c)   # first then array read


def _first_switch_number(s, a, b, c, n):
    with s.switch(gt.cond(n), 2) as cases:   # first switch number
        v = 3.0
        count[1, 1, cases[1]](n)
    add[1, 4, s](a, v)   # first switch number read


def _first_loop_number(s, a, b, c, n):
    with s.while_loop(gt.cond(n) < 0) as body:   # first loop number
        v = 3.0
        count[1, 1, body](n)
    add[1, 4, s](a, v)   # first loop number read


def _first_loop_kernel(s, a, b, c, n):
    with s.while_loop(gt.cond(n) < 0) as body:   # first loop kernel
        kern = shift
        count[1, 1, body](n)
    kern[1, 4, s](a, b)   # first loop kernel read


def _first_then_helper(s, a, b, c, n):
    with s.if_then(gt.cond(n) > 0) as then:   # first then helper
        step = _shift_pair
        count[1, 1, then](n)
    step(s, a, b)   # first then helper read


def _first_then_partial(s, a, b, c, n):
    with s.if_then(gt.cond(n) > 0) as then:   # first then partial
        step = functools.partial(_shift_pair, s)
        count[1, 1, then](n)
    step(a, b)   # first then partial read


def _first_body_function(s, a, b, c, n):
    def branch(then):
        nonlocal v
        count[1, 1, then](n)
        v = 3.0
    s.if_then(gt.cond(n) > 0, body=branch)   # first body function
    add[1, 4, s](a, v)   # first body function read
    v = 0.0


def _first_temporary_per_arm(s, a, b, c, n):
    with s.if_else(gt.cond(n) > 0) as (then, other):   # first temporary per arm
        res = then.zeros(4, np.float32)
        add[1, 4, then](res, 1.0)
        res = other.zeros(4, np.float32)
        add[1, 4, other](res, 2.0)
    copy_into[1, 4, s](res, c)   # first temporary per arm read


@pytest.mark.parametrize("program, marker", [
    (_first_temporary_per_arm, "first temporary per arm"),
    (_first_else_number, "first else number"),
    (_first_else_kernel, "first else kernel"),
    (_first_then_number, "first then number"),
    (_first_then_array, "first then array"),
    (_first_switch_number, "first switch number"),
    (_first_loop_number, "first loop number"),
    (_first_loop_kernel, "first loop kernel"),
    (_first_then_helper, "first then helper"),
    (_first_then_partial, "first then partial"),
    (_first_body_function, "first body function"),
])
def test_a_name_a_body_sets_first_and_code_after_it_reads_is_refused(program, marker):
    """The name held nothing before the block: run eagerly, a branch not taken
    (or a loop run no time) leaves it unset, and of two arms the one taken sets
    it; the graph took what the one recorded pass left last (the else arm's
    5.0, ``shift``) whatever the device decided, in silence."""
    e = _refused_at(program, marker, (0, 1, 2, 3), (0, 0, 0, 0))
    named = "`step`" if "helper" in marker or "partial" in marker else \
        "`kern`" if "kernel" in marker else "`res`" if "array" in marker or \
        "temporary" in marker else "`v`"
    assert f"sets {named} (unset before the block)" in e and "after the block" in e, e
    assert f"line {line_of(__file__, marker + ' read')} reads" in e, e


def test_names_a_body_sets_first_that_code_after_it_does_not_read_run_as_eagerly():
    """Names set first in the body and used only there (a number, a kernel, a
    partial, a for loop's variable, a temporary, a view, a helper defined
    there), the ``as`` names of nested blocks, a module imported there, a
    counter only reported after, and one set again after the block before it
    is read."""
    reported = []

    @gt.graph(backend="sim")
    def f(s, a, b, n):
        with s.if_then(gt.cond(n) < 1) as then:
            v, kern = 1.0, add
            kern[1, 4, then](a, v)
            step = functools.partial(add, )
            for j in range(2):
                add[1, 4, then](b, float(j))
            t = then.zeros(4, np.float32)
            w = a[0:2]
            add[1, 4, then](t, 1.0)
            add[1, 2, then](w, 1.0)

            def local(stream):
                add[1, 4, stream](b, 1.0)
            local(then)
            with then.if_else(gt.cond(n) < 1) as (inner, other):
                add[1, 4, inner](b, 1.0)
                add[1, 4, other](b, 100.0)
            with then.switch(gt.cond(n), 2) as cases:
                add[1, 4, cases[0]](b, 1.0)
            import math
            trips = 1
        reported.append((trips, step))
        v = 2.0
        add[1, 4, s](a, v * math.sqrt(1.0))

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(a) == [4, 5, 5, 6] and host(b) == [4, 4, 4, 4] and host(n) == [0]


def test_a_temporary_a_body_makes_in_one_place_read_after_it_runs_as_eagerly():
    """A temporary the body makes (and a view of one), set by one line of the
    body: each pass leaves the name the same temporary, holding what the last
    pass the device ran wrote, as eagerly."""
    @gt.graph(backend="sim")
    def f(s, a, b, n):
        with s.while_loop(gt.cond(n) < 2) as body:
            t = body.zeros(4, np.float32)
            add[1, 4, body](t, 2.0)
            count[1, 1, body](n)
        copy_into[1, 4, s](t, a)
        with s.if_then(gt.cond(n) > 0) as then:
            u = then.zeros(8, np.float32)
            w = u[2:6]
            add[1, 4, then](w, 3.0)
        copy_into[1, 4, s](w, b)

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(a) == [2, 2, 2, 2] and host(b) == [3, 3, 3, 3] and host(n) == [2]

"""State a while loop's body changes through helpers it calls two or three deep,
through a function it calls by another name or by an expression, or that a
helper keeps in its default arguments or in an attribute of its own.

Python runs a body once and the device repeats that recording, so a body
whose helper's helper flips the index picking two arrays (``sweep(body, st)``
calling ``step(body, st)`` with ``st.i = 1 - st.i``), or that calls that
helper through a name set to it (``smoother = step if m == "j" else other``),
ran every iteration on the first one's arrays: the helpers were followed only
where the body called them directly, by their own names. Each is refused at
the block's line, as the same flip one helper deep is; a call graphtrace
cannot follow (a lambda, a function a call returns) is refused at its own
line where the body changes Python state at all. The programs beside them,
whose helpers reach only what stays fixed, run as eagerly.
"""
import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host, shift
from helpers import line_of


class _PingPong:
    """Two arrays, which of them is read, and numbers helpers pick work by."""

    def __init__(self, a, b):
        self.bufs, self.i, self.phase, self.m, self.k, self.t = [a, b], 0, 0, 2, 0, 0.5
        self.trips = 0


def _flip_step(body, st):
    shift[1, 4, body](st.bufs[st.i], st.bufs[1 - st.i])
    st.i = 1 - st.i


def _phase_step(body, st):
    if st.phase == 0:
        add[1, 4, body](st.bufs[0], 1.0)
    else:
        add[1, 4, body](st.bufs[0], 10.0)
    st.phase = 1 - st.phase


def _size_step(body, st):
    t = body.zeros(st.m, np.float32)
    add[1, 4, body](t, 1.0)
    shift[1, 4, body](t, st.bufs[0][:st.m])
    st.m += 1


def _window_step(body, st):
    add[1, 4, body](st.bufs[0][st.k:st.k + 1], 1.0)
    st.k += 1


def _time_step(body, st):
    add[1, 4, body](st.bufs[0], st.t)
    st.t += 0.5


def _sweep(body, st):   # two deep: the body calls _sweep, which calls _flip_step
    _flip_step(body, st)


def _outer(body, st):   # three deep: _outer, _sweep, _flip_step
    _sweep(body, st)


def _through(step):
    """A helper calling ``step`` (a closure's cell), and one calling that."""
    def inner(body, st):
        step(body, st)

    def outer(body, st):
        inner(body, st)
    return inner, outer


def _two_deep_flip(s, a, b, n):
    st = _PingPong(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # two deep flip
        _sweep(body, st)
        count[1, 1, body](n)


def _three_deep_flip(s, a, b, n):
    st = _PingPong(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # three deep flip
        _outer(body, st)
        count[1, 1, body](n)


def _deep_body_fn(s, a, b, n):
    st = _PingPong(a, b)

    def run(body):
        _sweep(body, st)
        count[1, 1, body](n)
    s.while_loop(gt.cond(n) < 3, body=run)   # deep body fn


def _by_kind(step, depth):
    def program(s, a, b, n):
        st = _PingPong(a, b)
        helper = _through(step)[depth - 2]
        with s.while_loop(gt.cond(n) < 3) as body:   # deep kind
            helper(body, st)
            count[1, 1, body](n)
    return program


class _Solver:
    def run(self, body, st):   # a method delegating to a module's helper
        _flip_step(body, st)

    def run_deeper(self, body, st):
        self.run(body, st)


_SOLVER = _Solver()


def _global_method_via_helper(s, a, b, n):
    st = _PingPong(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # global method via helper
        _SOLVER.run(body, st)
        count[1, 1, body](n)


def _local_method_via_method(s, a, b, n):
    st, sol = _PingPong(a, b), _Solver()
    with s.while_loop(gt.cond(n) < 3) as body:   # local method via method
        sol.run_deeper(body, st)
        count[1, 1, body](n)


@pytest.mark.parametrize("program, marker, named", [
    (_two_deep_flip, "two deep flip", "st.i"),
    (_three_deep_flip, "three deep flip", "st.i"),
    (_deep_body_fn, "deep body fn", "st.i"),
    (_by_kind(_flip_step, 2), "deep kind", "st.i"),
    (_by_kind(_flip_step, 3), "deep kind", "st.i"),
    (_by_kind(_phase_step, 2), "deep kind", "st.phase"),
    (_by_kind(_phase_step, 3), "deep kind", "st.phase"),
    (_by_kind(_size_step, 2), "deep kind", "st.m"),
    (_by_kind(_size_step, 3), "deep kind", "st.m"),
    (_by_kind(_window_step, 2), "deep kind", "st.k"),
    (_by_kind(_window_step, 3), "deep kind", "st.k"),
    (_by_kind(_time_step, 2), "deep kind", "st.t"),
    (_by_kind(_time_step, 3), "deep kind", "st.t"),
    (_global_method_via_helper, "global method via helper", "st.i"),
    (_local_method_via_method, "local method via method", "st.i"),
])
def test_state_a_helper_two_or_three_deep_changes_and_picks_by_is_refused(
        program, marker, named):
    f = gt.graph(program, backend="sim")
    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    with pytest.raises(gt.ArgumentError) as info:
        f(a, b, n)
    e = info.value
    assert e.source[1] == line_of(__file__, marker), str(e)
    assert f"`{named}`" in str(e) and "Python runs the body once" in str(e), str(e)


def _reading(body, st):   # reads only what stays fixed for the loop
    add[1, 4, body](st.bufs[0], 1.0)
    shift[1, 4, body](st.bufs[0], st.bufs[1])


def test_helpers_three_deep_reading_what_stays_fixed_run_as_eagerly():
    """Helpers three deep, a method delegating to one, and a name set to one,
    reading only the arrays of an object whose count the body bumps for itself:
    each iteration records the same work."""
    inner, outer = _through(_reading)

    class Runner:
        def run(self, body, st):
            outer(body, st)

    @gt.graph(backend="sim")
    def f(s, a, b, n):
        st, runner = _PingPong(a, b), Runner()
        with s.while_loop(gt.cond(n) < 3) as body:
            outer(body, st)
            runner.run(body, st)
            g = inner
            g(body, st)
            count[1, 1, body](n)
            st.trips += 1

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(a) == [9, 10, 11, 12] and host(b) == [10, 11, 12, 13] and host(n) == [3]


# --- a helper called by another name, or through an expression

def _other_step(body, st):
    _sweep(body, st)


_TABLE = {"flip": _flip_step, "other": _other_step}


def _local_alias(s, a, b, n):
    st = _PingPong(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # local alias
        g = _flip_step
        g(body, st)
        count[1, 1, body](n)


def _chosen_alias(s, a, b, n):
    st, method = _PingPong(a, b), "flip"
    with s.while_loop(gt.cond(n) < 3) as body:   # chosen alias
        smoother = _flip_step if method == "flip" else _other_step
        smoother(body, st)
        count[1, 1, body](n)


def _alias_of_alias(s, a, b, n):
    st = _PingPong(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # alias of alias
        g = _sweep
        h = g
        h(body, st)
        count[1, 1, body](n)


def _table_by_name(s, a, b, n):
    st, name = _PingPong(a, b), "flip"
    with s.while_loop(gt.cond(n) < 3) as body:   # table by name
        _TABLE[name](body, st)
        count[1, 1, body](n)


def _table_by_chosen_key(s, a, b, n):
    st, name = _PingPong(a, b), "flip"
    with s.while_loop(gt.cond(n) < 3) as body:   # table by chosen key
        _TABLE["flip" if name == "flip" else "other"](body, st)
        count[1, 1, body](n)


def _table_picked_first(s, a, b, n):
    st, name = _PingPong(a, b), "other"
    with s.while_loop(gt.cond(n) < 3) as body:   # table picked first
        step = _TABLE[name]
        step(body, st)
        count[1, 1, body](n)


def _chosen_call(s, a, b, n):
    st, name = _PingPong(a, b), "flip"
    with s.while_loop(gt.cond(n) < 3) as body:   # chosen call
        (_flip_step if name == "flip" else _other_step)(body, st)
        count[1, 1, body](n)


def _idle(body, st):
    pass


def _chosen_call_of_one_not_naming_it(s, a, b, n):
    st, name = _PingPong(a, b), "flip"
    with s.while_loop(gt.cond(n) < 3) as body:   # chosen call of one not naming it
        (_flip_step if name == "flip" else _idle)(body, st)
        count[1, 1, body](n)


def _listed_call(s, a, b, n):
    st = _PingPong(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # listed call
        [_flip_step][0](body, st)
        count[1, 1, body](n)


def _looped_over(s, a, b, n):
    st = _PingPong(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # looped over
        for step in (_reading, _flip_step):
            step(body, st)
        count[1, 1, body](n)


def _alias_body_fn(s, a, b, n):
    st = _PingPong(a, b)

    def run(body):
        smoother = _sweep
        smoother(body, st)
        count[1, 1, body](n)
    s.while_loop(gt.cond(n) < 3, body=run)   # alias body fn


def _calling(body, st, step):   # a helper calling the function it is handed
    step(body, st)   # handed step


def _handed_by_name(s, a, b, n):
    st = _PingPong(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # handed by name
        _calling(body, st, _flip_step)
        count[1, 1, body](n)


def _handed_from_table(s, a, b, n):
    st, name = _PingPong(a, b), "flip"
    with s.while_loop(gt.cond(n) < 3) as body:
        step = _TABLE[name]
        _calling(body, st, step)
        count[1, 1, body](n)


@pytest.mark.parametrize("program, marker", [
    (_handed_by_name, "handed by name"),
    (_local_alias, "local alias"),
    (_chosen_alias, "chosen alias"),
    (_alias_of_alias, "alias of alias"),
    (_table_by_name, "table by name"),
    (_table_by_chosen_key, "table by chosen key"),
    (_table_picked_first, "table picked first"),
    (_chosen_call, "chosen call"),
    (_chosen_call_of_one_not_naming_it, "chosen call of one not naming it"),
    (_listed_call, "listed call"),
    (_looped_over, "looped over"),
    (_alias_body_fn, "alias body fn"),
])
def test_a_helper_called_by_another_name_that_flips_is_refused(program, marker):
    """Every function the code may have set the name to (or picked from the
    table, or the expression gives) is followed as one called by its name."""
    f = gt.graph(program, backend="sim")
    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    with pytest.raises(gt.ArgumentError) as info:
        f(a, b, n)
    e = info.value
    assert e.source[1] == line_of(__file__, marker), str(e)
    assert "`st.i`" in str(e) and "Python runs the body once" in str(e), str(e)


def _make_step():
    return _flip_step


def _lambda_call(s, a, b, n):
    st = _PingPong(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:
        (lambda: _flip_step(body, st))()   # lambda call
        count[1, 1, body](n)


def _dict_get_call(s, a, b, n):
    st = _PingPong(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:
        {"flip": _flip_step}.get("flip")(body, st)   # dict get call
        count[1, 1, body](n)


def _made_call(s, a, b, n):
    st = _PingPong(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:
        step = _make_step()
        step(body, st)   # made call
        count[1, 1, body](n)


def _made_in_helper(body, st, make):
    make()(body, st)   # made in helper


def _made_call_in_helper(s, a, b, n):
    st = _PingPong(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:
        _made_in_helper(body, st, _make_step)
        count[1, 1, body](n)


def _handed_a_lambda(s, a, b, n):
    st = _PingPong(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:
        _calling(body, st, lambda bd, x: _flip_step(bd, x))
        count[1, 1, body](n)


@pytest.mark.parametrize("program, marker", [
    (_handed_a_lambda, "handed step"),
    (_handed_from_table, "handed step"),
    (_lambda_call, "lambda call"),
    (_dict_get_call, "dict get call"),
    (_made_call, "made call"),
    (_made_call_in_helper, "made in helper"),
])
def test_a_call_through_an_expression_in_a_body_changing_state_is_refused(program, marker):
    """A function graphtrace cannot tell (a lambda made in the call, one a call
    returns) might read what the body changes: refused at the call's line,
    saying to call the function by its name."""
    f = gt.graph(program, backend="sim")
    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    with pytest.raises(gt.ArgumentError) as info:
        f(a, b, n)
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert "`st.i`" in e and "by its name" in e, e


def test_calls_through_expressions_in_a_body_changing_nothing_run_as_eagerly():
    """The same calls, of a helper reading only what stays fixed, where the body
    changes no Python state: each iteration records the same work."""
    def make():
        return _reading

    @gt.graph(backend="sim")
    def f(s, a, b, n):
        st = _PingPong(a, b)
        with s.while_loop(gt.cond(n) < 3) as body:
            (lambda: _reading(body, st))()
            {"r": _reading}.get("r")(body, st)
            make()(body, st)
            _calling(body, st, lambda bd, x: _reading(bd, x))
            count[1, 1, body](n)

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(a) == [12, 13, 14, 15] and host(b) == [13, 14, 15, 16] and host(n) == [3]


def test_a_name_set_to_a_helper_reading_what_stays_fixed_beside_a_count_runs():
    """A helper called through a name set to it in the body, by a table's
    computed key or a condition, reading only what stays fixed, beside a count
    the body only reports: each iteration records the same work."""
    table = {"r": _reading, "f": _flip_step}

    @gt.graph(backend="sim")
    def f(s, a, b, n):
        st, key, trips = _PingPong(a, b), "r", 0
        with s.while_loop(gt.cond(n) < 3) as body:
            g = _reading if key == "r" else _flip_step
            g(body, st)
            table[key](body, st)
            count[1, 1, body](n)
            trips += 1

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(a) == [6, 7, 8, 9] and host(b) == [7, 8, 9, 10] and host(n) == [3]


# --- state a helper keeps in its defaults or its own attributes

def _flip_default(body, bufs, _st={"i": 0}):
    shift[1, 4, body](bufs[_st["i"]], bufs[1 - _st["i"]])
    _st["i"] = 1 - _st["i"]


def _flip_keyword_default(body, bufs, *, _st={"i": 0}):
    shift[1, 4, body](bufs[_st["i"]], bufs[1 - _st["i"]])
    _st["i"] = 1 - _st["i"]


def _flip_attribute(body, bufs):
    shift[1, 4, body](bufs[_flip_attribute.i], bufs[1 - _flip_attribute.i])
    _flip_attribute.i = 1 - _flip_attribute.i


_flip_attribute.i = 0


def _attribute_via(body, bufs):
    _flip_attribute(body, bufs)


def _default_kept(s, a, b, n):
    with s.while_loop(gt.cond(n) < 3) as body:   # default kept
        _flip_default(body, [a, b])
        count[1, 1, body](n)


def _keyword_default_kept(s, a, b, n):
    with s.while_loop(gt.cond(n) < 3) as body:   # keyword default kept
        _flip_keyword_default(body, [a, b])
        count[1, 1, body](n)


def _default_kept_deeper(s, a, b, n):
    helper = _through(lambda body, bufs: _flip_default(body, bufs))[0]
    with s.while_loop(gt.cond(n) < 3) as body:   # default kept deeper
        helper(body, [a, b])
        count[1, 1, body](n)


def _attribute_kept(s, a, b, n):
    with s.while_loop(gt.cond(n) < 3) as body:   # attribute kept
        _flip_attribute(body, [a, b])
        count[1, 1, body](n)


def _attribute_kept_deeper(s, a, b, n):
    with s.while_loop(gt.cond(n) < 3) as body:   # attribute kept deeper
        _attribute_via(body, [a, b])
        count[1, 1, body](n)


@pytest.mark.parametrize("program, marker, named", [
    (_default_kept, "default kept", "_flip_default.__defaults__[0]['i']"),
    (_keyword_default_kept, "keyword default kept",
     "_flip_keyword_default.__kwdefaults__['_st']['i']"),
    (_default_kept_deeper, "default kept deeper", "['i']"),
    (_attribute_kept, "attribute kept", "_flip_attribute.i"),
    (_attribute_kept_deeper, "attribute kept deeper", "_flip_attribute.i"),
])
def test_state_a_helper_keeps_in_its_defaults_or_attributes_is_refused(
        program, marker, named):
    _flip_default.__defaults__[0]["i"] = _flip_keyword_default.__kwdefaults__["_st"]["i"] = 0
    _flip_attribute.i = 0
    f = gt.graph(program, backend="sim")
    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    with pytest.raises(gt.ArgumentError) as info:
        f(a, b, n)
    e = info.value
    assert e.source[1] == line_of(__file__, marker), str(e)
    assert named in str(e) and "Python runs the body once" in str(e), str(e)


def _scaled(body, x, _cfg={"scale": 2.0, "calls": 0}):
    add[1, 4, body](x, _cfg["scale"])
    _cfg["calls"] += 1


def _labelled(body, x):
    add[1, 4, body](x, 1.0)
    _labelled.calls += 1


_labelled.calls = 0


def test_defaults_and_attributes_a_helper_only_counts_in_run_as_eagerly():
    """A helper's default and its attribute that it bumps only for a count, with
    what its work takes fixed: each iteration records the same work."""
    @gt.graph(backend="sim")
    def f(s, a, n):
        with s.while_loop(gt.cond(n) < 3) as body:
            _scaled(body, a)
            _labelled(body, a)
            count[1, 1, body](n)

    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [9, 10, 11, 12] and host(n) == [3]

"""An attribute or a key new to an object, first set in a loop or branch body,
then read after the block.

A body that gave an object an attribute it did not have (``st.v = 3.0`` in one
arm of an ``if_else``, ``st.v = 5.0`` in the other, ``st`` with no ``v``
before), or a dict a key (``d["k"] = ...``), then read by the code after the
block, ran with whichever the recorded pass set last in silence: only names
first set in a body were refused. Such a slot is now refused as such a name
is; the programs beside them (a slot set again after the block before it is
read, a temporary set by one line of the body, a list item appended) run as
eagerly.
"""
import types

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from flow_kernels import add, copy_into, count, dev, host
from helpers import line_of


def _attribute_in_arms(s, x, flag):
    st = types.SimpleNamespace()
    with s.if_else(gt.cond(flag) > 0) as (then, otherwise):   # attribute in arms
        count[1, 1, then](flag)
        st.v = 3.0
        count[1, 1, otherwise](flag)
        st.v = 5.0
    add[1, 4, s](x, st.v)   # attribute in arms read


def _key_in_arms(s, x, flag):
    d = {"other": 1.0}
    with s.if_else(gt.cond(flag) > 0) as (then, otherwise):   # key in arms
        count[1, 1, then](flag)
        d["k"] = 3.0
        count[1, 1, otherwise](flag)
        d["k"] = 5.0
    add[1, 4, s](x, d["k"])   # key in arms read


def _attribute_in_branch(s, x, flag):
    st = types.SimpleNamespace(w=1.0)
    with s.if_then(gt.cond(flag) > 0) as then:   # attribute in branch
        count[1, 1, then](flag)
        st.v = 3.0
    add[1, 4, s](x, getattr(st, "v", 1.0))   # attribute in branch read


def _attribute_in_loop(s, x, flag):
    st = types.SimpleNamespace()
    with s.while_loop(gt.cond(flag) < 3) as body:   # attribute in loop
        count[1, 1, body](flag)
        st.v = 3.0
    add[1, 4, s](x, st.v)   # attribute in loop read


def _object_in_arms(s, x, flag):
    st = types.SimpleNamespace()
    with s.if_else(gt.cond(flag) > 0) as (then, otherwise):   # object in arms
        count[1, 1, then](flag)
        st.sub = types.SimpleNamespace(v=3.0)
        count[1, 1, otherwise](flag)
        st.sub = types.SimpleNamespace(v=5.0)
    add[1, 4, s](x, st.sub.v)   # object in arms read


def _array_in_branch(s, x, flag):
    st = types.SimpleNamespace()
    y = s.zeros(4, np.float32)
    with s.if_then(gt.cond(flag) > 0) as then:   # array in branch
        count[1, 1, then](flag)
        st.a = x
    add[1, 4, s](getattr(st, "a", y), 1.0)   # array in branch read


def _item_attribute_in_arms(s, x, flag):
    objs = [types.SimpleNamespace()]
    with s.if_else(gt.cond(flag) > 0) as (then, otherwise):   # item attribute in arms
        count[1, 1, then](flag)
        objs[0].v = 3.0
        count[1, 1, otherwise](flag)
        objs[0].v = 5.0
    add[1, 4, s](x, objs[0].v)   # item attribute in arms read


def _key_of_big_dict_in_arms(s, x, flag):
    d = {f"k{i}": float(i) for i in range(300)}
    with s.if_else(gt.cond(flag) > 0) as (then, otherwise):   # key of big dict in arms
        count[1, 1, then](flag)
        d["new"] = 3.0
        count[1, 1, otherwise](flag)
        d["new"] = 5.0
    add[1, 4, s](x, d["new"])   # key of big dict in arms read


@pytest.mark.parametrize("program, marker, named", [
    (_attribute_in_arms, "attribute in arms", "`st.v`"),
    (_item_attribute_in_arms, "item attribute in arms", "`objs[0].v`"),
    (_key_of_big_dict_in_arms, "key of big dict in arms", "`d['new']`"),
    (_key_in_arms, "key in arms", "`d['k']`"),
    (_attribute_in_branch, "attribute in branch", "`st.v`"),
    (_attribute_in_loop, "attribute in loop", "`st.v`"),
    (_object_in_arms, "object in arms", "`st.sub.v`"),
    (_array_in_branch, "array in branch", "`st.a`"),
])
def test_a_slot_new_to_an_object_set_in_a_body_and_read_after_is_refused(
        program, marker, named):
    """With the then arm taken, eager code adds 3 (x = 4); the graph added what
    the recorded pass set last, 5 (x = 6), in silence; with a branch not taken
    or a loop run no time, eagerly the slot stays unset (the default, 1, or
    an AttributeError)."""
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(1, 1, 1, 1), dev(1, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert f"sets {named} (unset before the block)" in e, e
    assert f"line {line_of(__file__, marker + ' read')} reads" in e, e


def test_slots_new_to_an_object_run_as_eagerly_where_the_code_after_does_not_read_them():
    """Set again after the block before it is read, only printed, a temporary
    set by one line of a loop body (which holds what the last pass wrote), and
    an item appended to a list of numbers: x = 1 + 3 + 3 + (1 + 1) = 9, and the
    temporary copied out holds 2."""
    @gt.graph(backend="sim")
    def f(s, x, n):
        st, d, seen = types.SimpleNamespace(), {}, [0.0]
        with s.while_loop(gt.cond(n) < 3) as body:
            count[1, 1, body](n)
            st.v = 3.0
            d["k"] = 1.0
            seen.append(1.0)
            add[1, 4, body](x, st.v)
        print("after", getattr(st, "v", None), end="; ")
        st.v = 1.0
        d["k"] = 1.0
        add[1, 4, s](x, st.v + d["k"] + seen[0])

    @gt.graph(backend="sim")
    def g(s, x, n):
        st = types.SimpleNamespace()
        with s.while_loop(gt.cond(n) < 3) as body:
            count[1, 1, body](n)
            st.t = body.zeros(4, np.float32)
            add[1, 4, body](st.t, 2.0)
        copy_into[1, 4, s](st.t, x)

    x, n = dev(1, 1, 1, 1), dev(1, dtype=np.int32)
    f(x, n)
    assert host(x) == [9] * 4 and host(n) == [3]
    x, n = dev(1, 1, 1, 1), dev(1, dtype=np.int32)
    g(x, n)
    assert host(x) == [2] * 4 and host(n) == [3]


def _appended_in_arms(s, x, flag):
    vals = [1.0]
    with s.if_else(gt.cond(flag) > 0) as (then, otherwise):   # appended in arms
        count[1, 1, then](flag)
        vals.append(3.0)
        count[1, 1, otherwise](flag)
        vals.append(5.0)
    add[1, 4, s](x, vals[-1])   # appended in arms read


def _appended_in_loop(s, x, flag):
    vals = [1.0]
    with s.while_loop(gt.cond(flag) < 3) as body:   # appended in loop
        count[1, 1, body](flag)
        vals.append(3.0)
    add[1, 4, s](x, vals.pop())   # appended in loop read


@pytest.mark.parametrize("program, marker", [
    (_appended_in_arms, "appended in arms"),
    (_appended_in_loop, "appended in loop"),
])
def test_an_item_a_body_appends_to_a_list_of_numbers_read_after_is_refused(program, marker):
    """``vals[-1]`` after the arms appended 3.0 and 5.0: eagerly 3.0 with the flag
    set, the graph 5.0 in silence; after a loop that may run no time, eagerly
    ``vals.pop()`` may take the 1.0 there before."""
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(1, 1, 1, 1), dev(1, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert "adds an item to or removes one from `vals`" in e, e
    assert f"line {line_of(__file__, marker + ' read')} reads" in e, e



@cuda.jit
def axpy(y, a, x):
    i = cuda.grid(1)
    if i < y.size:
        y[i] += a * x[i]


def _temporary_over_attribute(s, x, n):
    st = types.SimpleNamespace(t=None)
    with s.while_loop(gt.cond(n) < 3) as body:
        st.t = body.zeros(4, np.float32)
        add[1, 4, body](st.t, 1.0)
        count[1, 1, body](n)
    axpy[1, 4, s](x, 10.0, st.t)


def _temporary_over_name(s, x, n):
    t = None
    with s.while_loop(gt.cond(n) < 3) as body:
        t = body.zeros(4, np.float32)
        add[1, 4, body](t, 1.0)
        count[1, 1, body](n)
    axpy[1, 4, s](x, 10.0, t)


@pytest.mark.parametrize("program", [_temporary_over_attribute, _temporary_over_name])
def test_a_temporary_a_body_sets_over_a_placeholder_runs_as_a_new_one_does(program):
    """``st.t = None`` (or ``t = None``) before the loop, then ``st.t =
    body.zeros(n)`` set by one line of the body and read after: the temporary
    holds what the device's last pass wrote, as with no placeholder, where it
    was refused as a changed slot: x = 10 * 1."""
    x, n = dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    gt.graph(program, backend="sim")(x, n)
    assert host(x) == [10] * 4 and host(n) == [3]

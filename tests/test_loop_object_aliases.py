"""A slot a loop or branch body changes, read through another name of its object.

A while body that read ``h.v`` (``h = m``, in the body or before it) and then
set ``m.v = 5.0`` ran the first iteration's value every iteration in silence:
the read went through one name, the store through the other, and the store
decided. The same for an item (``d = D``; ``d["v"]``, then ``D["v"] = 5.0``)
and a kernel (``h.k[1, 4, body]``, then ``m.k = mul``). The read now counts for
the object's slot: by identity for names holding one object when the body
began, and through what the body's stores of a name picked (``h = m``,
``h = m.sub``) in the order the code runs. Code after a branch that made a
value of a slot the branch changed and then set the slot's name again (``go =
kern[1, 4, s]; kern = add; go(x)``) ran the kernel the recorded pass picked in
silence: the value is followed past the store. The programs beside them
(an attribute left alone, one set before it is read, an object made afresh in
each pass, a counter only printed) run as eagerly.
"""
import types

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host, mul
from helpers import line_of


def _alias_in_body(s, x, n):
    m = types.SimpleNamespace(v=1.0)
    with s.while_loop(gt.cond(n) < 3) as body:   # alias in body
        h = m
        add[1, 4, body](x, h.v)
        count[1, 1, body](n)
        m.v = 5.0


def _alias_before_body(s, x, n):
    m = types.SimpleNamespace(v=1.0)
    h = m
    with s.while_loop(gt.cond(n) < 3) as body:   # alias before body
        add[1, 4, body](x, h.v)
        count[1, 1, body](n)
        m.v = 5.0


def _item_alias(s, x, n):
    table = {"v": 1.0}
    with s.while_loop(gt.cond(n) < 3) as body:   # item alias
        d = table
        add[1, 4, body](x, d["v"])
        count[1, 1, body](n)
        table["v"] = 5.0


def _inner_object_alias(s, x, n):
    m = types.SimpleNamespace(sub=types.SimpleNamespace(v=1.0))
    with s.while_loop(gt.cond(n) < 3) as body:   # inner object alias
        h = m.sub
        add[1, 4, body](x, h.v)
        count[1, 1, body](n)
        m.sub.v = 5.0


def _alias_of_alias(s, x, n):
    m = types.SimpleNamespace(v=1.0)
    with s.while_loop(gt.cond(n) < 3) as body:   # alias of alias
        h = m
        g = h
        add[1, 4, body](x, g.v)
        count[1, 1, body](n)
        m.v = 5.0


def _alias_of_item(s, x, n):
    table = {"s": types.SimpleNamespace(v=1.0)}
    with s.while_loop(gt.cond(n) < 3) as body:   # alias of item
        h = table["s"]
        add[1, 4, body](x, h.v)
        count[1, 1, body](n)
        table["s"].v = 5.0


def _kernel_alias(s, x, n):
    m = types.SimpleNamespace(k=add)
    with s.while_loop(gt.cond(n) < 3) as body:   # kernel alias
        h = m
        h.k[1, 4, body](x, 2.0)
        count[1, 1, body](n)
        m.k = mul


@pytest.mark.parametrize("program, marker, named", [
    (_alias_in_body, "alias in body", "`m.v`"),
    (_alias_before_body, "alias before body", "`m.v`"),
    (_item_alias, "item alias", "`table['v']`"),
    (_inner_object_alias, "inner object alias", "`m.sub.v`"),
    (_alias_of_alias, "alias of alias", "`m.v`"),
    (_alias_of_item, "alias of item", "`table['s'].v`"),
    (_kernel_alias, "kernel alias", "`m.k`"),
])
def test_a_slot_read_through_another_name_then_changed_is_refused(program, marker, named):
    """Run eagerly, the second and third iterations read what the first set
    (x = 1 + 1 + 5 + 5 = 12; 3 * 2 * 2 = 12 for the kernel); the graph repeated
    the first (x = 4; 7) in silence."""
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(1, 1, 1, 1), dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert named in e and "next iteration" in e, e


def _launcher_kept(s, x, flag):
    kern = add
    with s.if_then(gt.cond(flag) > 0) as then:   # launcher kept
        count[1, 1, then](flag)
        kern = mul
    go = kern[1, 4, s]   # launcher kept read
    kern = add
    go(x, 2.0)


def _kernel_kept(s, x, flag):
    kern = add
    with s.if_then(gt.cond(flag) > 0) as then:   # kernel kept
        count[1, 1, then](flag)
        kern = mul
    use = kern   # kernel kept read
    kern = add
    use[1, 4, s](x, 2.0)


def _number_kept(s, x, flag):
    v = 2.0
    with s.if_then(gt.cond(flag) > 0) as then:   # number kept
        count[1, 1, then](flag)
        v = 5.0
    w = v   # number kept read
    v = 0.0
    add[1, 4, s](x, w)


@pytest.mark.parametrize("program, marker, named", [
    (_launcher_kept, "launcher kept", "changes `kern`,"),
    (_kernel_kept, "kernel kept", "changes `kern`,"),
    (_number_kept, "number kept", "changes `v`,"),
])
def test_a_value_made_of_a_changed_slot_used_after_its_name_is_set_again_is_refused(
        program, marker, named):
    """With the branch not taken, eager code after it adds 2 (x = 3); the graph
    ran what the recorded pass picked (x = 2; x = 6) in silence."""
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(1, 1, 1, 1), dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert named in e and "after the block" in e, e
    assert f"line {line_of(__file__, marker + ' read')} reads" in e, e


def test_a_slot_set_through_one_name_before_read_through_another_runs_as_eagerly():
    """``h = m; h.v = 5.0`` then ``add(x, m.v)``, and ``m.v = 5.0`` then
    ``add(x, h.v)``: each pass sets the slot before it reads it."""
    @gt.graph(backend="sim")
    def f(s, x, n):
        m = types.SimpleNamespace(v=1.0, w=1.0)
        with s.while_loop(gt.cond(n) < 3) as body:
            h = m
            h.v = 5.0
            add[1, 4, body](x, m.v)
            m.w = 2.0
            add[1, 4, body](x, h.w)
            count[1, 1, body](n)

    x, n = dev(1, 1, 1, 1), dev(0, dtype=np.int32)
    f(x, n)   # 1 + 3 * (5 + 2)
    assert host(x) == [22, 22, 22, 22] and host(n) == [3]


def test_aliases_of_slots_the_body_leaves_alone_run_as_eagerly():
    """An alias read while another attribute changes, an object made afresh in
    each pass, and a counter read through an alias only printed."""
    @gt.graph(backend="sim")
    def f(s, x, n):
        m = types.SimpleNamespace(v=1.0, w=0.0, c=0)
        with s.while_loop(gt.cond(n) < 3) as body:
            h = m
            add[1, 4, body](x, h.v)
            fresh = types.SimpleNamespace(v=2.0)
            g = fresh
            add[1, 4, body](x, g.v)
            count[1, 1, body](n)
            print("pass", h.c, end="; ")
            m.w = 5.0
            fresh.v = 7.0
            m.c += 1

    x, n = dev(1, 1, 1, 1), dev(0, dtype=np.int32)
    f(x, n)   # 1 + 3 * (1 + 2)
    assert host(x) == [10, 10, 10, 10] and host(n) == [3]


def test_a_name_set_again_after_a_branch_with_its_old_value_unused_runs_as_eagerly():
    """A value made of the slot before its name is set again but never used, and
    the slot only printed before: the code after runs the kernel it sets."""
    @gt.graph(backend="sim")
    def f(s, x, flag):
        kern, v = add, 2.0
        with s.if_then(gt.cond(flag) > 0) as then:
            count[1, 1, then](flag)
            kern, v = mul, 5.0
        unused = kern
        print("picked", unused is mul, v)
        kern, v = add, 2.0
        kern[1, 4, s](x, v)

    x, flag = dev(1, 1, 1, 1), dev(0, dtype=np.int32)
    f(x, flag)
    assert host(x) == [3, 3, 3, 3] and host(flag) == [0]

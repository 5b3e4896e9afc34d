"""A slot a loop body changes, read through a name the body set to one of
several objects.

A while body that set ``h = m if flag else q`` (or ``h = m or q``, ``h = q and
m``, ``h = (q, m)[1]``, an item of a list or a dict it built), read ``h.v`` and
then set ``m.v = 7.0`` ran the first iteration's value every iteration in
silence: only a name set to a plain path (``h = m``) was followed back to the
object it holds. Such a name is now taken to hold any of the objects its
value may be: a read through it reads each of their slots, and a store through
it may store any of them, so it stores none of them first.
"""
import types

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host
from helpers import line_of


def _conditional(s, x, n, flag=True):
    m, q = types.SimpleNamespace(v=1.0), types.SimpleNamespace(v=2.0)
    with s.while_loop(gt.cond(n) < 3) as body:   # conditional
        h = m if flag else q
        add[1, 4, body](x, h.v * 2)
        count[1, 1, body](n)
        m.v = 7.0


def _or(s, x, n):
    m, q = types.SimpleNamespace(v=1.0), types.SimpleNamespace(v=2.0)
    with s.while_loop(gt.cond(n) < 3) as body:   # or
        h = m or q
        add[1, 4, body](x, h.v * 2)
        count[1, 1, body](n)
        m.v = 7.0


def _and(s, x, n):
    m, q = types.SimpleNamespace(v=1.0), types.SimpleNamespace(v=2.0)
    with s.while_loop(gt.cond(n) < 3) as body:   # and
        h = q and m
        add[1, 4, body](x, h.v * 2)
        count[1, 1, body](n)
        m.v = 7.0


def _tuple_item(s, x, n):
    m, q = types.SimpleNamespace(v=1.0), types.SimpleNamespace(v=2.0)
    with s.while_loop(gt.cond(n) < 3) as body:   # tuple item
        h = (q, m)[1]
        add[1, 4, body](x, h.v * 2)
        count[1, 1, body](n)
        m.v = 7.0


def _list_item(s, x, n):
    m, q, i = types.SimpleNamespace(v=1.0), types.SimpleNamespace(v=2.0), 1
    with s.while_loop(gt.cond(n) < 3) as body:   # list item
        h = [q, m][i]
        add[1, 4, body](x, h.v * 2)
        count[1, 1, body](n)
        m.v = 7.0


def _dict_item(s, x, n, key="m"):
    m, q = types.SimpleNamespace(v=1.0), types.SimpleNamespace(v=2.0)
    with s.while_loop(gt.cond(n) < 3) as body:   # dict item
        h = {"q": q, "m": m}[key]
        add[1, 4, body](x, h.v * 2)
        count[1, 1, body](n)
        m.v = 7.0


def _nested(s, x, n, flag=False, other=False):
    m, q = types.SimpleNamespace(v=1.0), types.SimpleNamespace(v=2.0)
    w = types.SimpleNamespace(sub=m)
    with s.while_loop(gt.cond(n) < 3) as body:   # nested
        h = q if flag else (q if other else w.sub)
        add[1, 4, body](x, h.v * 2)
        count[1, 1, body](n)
        w.sub.v = 7.0


@pytest.mark.parametrize("program, marker, named", [
    (_conditional, "conditional", "`m.v`"),
    (_or, "or", "`m.v`"),
    (_and, "and", "`m.v`"),
    (_tuple_item, "tuple item", "`m.v`"),
    (_list_item, "list item", "`m.v`"),
    (_dict_item, "dict item", "`m.v`"),
    (_nested, "nested", "`w.sub.v`"),
])
def test_a_slot_read_through_a_name_picking_one_of_several_objects_is_refused(
        program, marker, named):
    """Run eagerly, the second and third iterations read what the first set
    (x = 1 + 2 + 14 + 14 = 31); the graph repeated the first (x = 7) in silence."""
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(1, 1, 1, 1), dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert named in e and "next iteration" in e, e


def test_a_store_through_a_name_picking_one_of_several_objects_sets_neither_first():
    """``h = m if flag else q; h.v = 7.0`` may set ``m.v``: ``q.v``, read next
    and set after, is still read before it is set (eagerly x = 1 + 4 + 18 + 18
    = 41, where the graph would repeat the first iteration's 2.0)."""
    @gt.graph(backend="sim")
    def f(s, x, n, flag=True):
        m, q = types.SimpleNamespace(v=1.0), types.SimpleNamespace(v=2.0)
        with s.while_loop(gt.cond(n) < 3) as body:   # maybe stored
            h = m if flag else q
            h.v = 7.0
            add[1, 4, body](x, q.v * 2)
            count[1, 1, body](n)
            q.v = 9.0

    with pytest.raises(gt.ArgumentError) as info:
        f(dev(1, 1, 1, 1), dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, "maybe stored"), e
    assert "`q.v`" in e and "next iteration" in e, e


def test_names_picking_one_of_several_objects_run_as_eagerly_where_nothing_read_changes():
    """Another attribute of the object changed, and each object's slot set
    before the read: x = 1 + 3 * 2 = 7, then 1 + 3 * 14 = 43, as eagerly."""
    @gt.graph(backend="sim")
    def other_attribute(s, x, n, flag=True):
        m, q = types.SimpleNamespace(v=1.0, w=0.0), types.SimpleNamespace(v=2.0, w=0.0)
        with s.while_loop(gt.cond(n) < 3) as body:
            h = m if flag else q
            add[1, 4, body](x, h.v * 2)
            count[1, 1, body](n)
            m.w = 7.0

    @gt.graph(backend="sim")
    def set_first(s, x, n, flag=True):
        m, q = types.SimpleNamespace(v=1.0), types.SimpleNamespace(v=2.0)
        with s.while_loop(gt.cond(n) < 3) as body:
            h = m or q
            m.v = 7.0
            q.v = 7.0
            add[1, 4, body](x, h.v * 2)
            count[1, 1, body](n)

    for f, want in ((other_attribute, 7), (set_first, 43)):
        x, n = dev(1, 1, 1, 1), dev(0, dtype=np.int32)
        f(x, n)
        assert host(x) == [want] * 4 and host(n) == [3]


def _before_block(s, x, n, flag=True):
    m, q = types.SimpleNamespace(v=1.0), types.SimpleNamespace(v=2.0)
    h = m if flag else q
    with s.while_loop(gt.cond(n) < 3) as body:   # before block
        add[1, 4, body](x, h.v * 2)
        count[1, 1, body](n)
        m.v = 7.0


def _before_block_reversed(s, x, n, flag=True):
    m, q = types.SimpleNamespace(v=1.0), types.SimpleNamespace(v=2.0)
    h = (q, m)[1] if flag else q
    with s.while_loop(gt.cond(n) < 3) as body:   # before block reversed
        add[1, 4, body](x, m.v * 2)
        count[1, 1, body](n)
        h.v = 7.0


@pytest.mark.parametrize("program, marker, named", [
    (_before_block, "before block", "`h.v`"),
    (_before_block_reversed, "before block reversed", "`m.v`")])
def test_a_name_picked_before_the_block_counts_for_the_object_it_holds(program, marker, named):
    """Picked before the block, the name holds one object when the body begins:
    reads and stores through it are the object's (eagerly x = 31)."""
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(1, 1, 1, 1), dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert named in e and "next iteration" in e, e


def test_a_name_picked_before_the_block_holding_another_object_runs_as_eagerly():
    """``h = m if flag else q`` with flag false holds ``q``: the body's store of
    ``m.v`` changes nothing it reads (x = 1 + 3 * 4 = 13, as eagerly)."""
    @gt.graph(backend="sim")
    def f(s, x, n, flag=False):
        m, q = types.SimpleNamespace(v=1.0), types.SimpleNamespace(v=2.0)
        h = m if flag else q
        with s.while_loop(gt.cond(n) < 3) as body:
            add[1, 4, body](x, h.v * 2)
            count[1, 1, body](n)
            m.v = 7.0

    x, n = dev(1, 1, 1, 1), dev(0, dtype=np.int32)
    f(x, n)
    assert host(x) == [13] * 4 and host(n) == [3]

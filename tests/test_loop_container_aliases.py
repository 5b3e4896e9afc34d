"""A slot a loop body changes, read through an item or an attribute of a
container or an object that held its object before the loop.

``tab = (m, q)`` before the loop; in the body ``h = tab[0]``, ``add(x, h.v *
2)``, then ``m.v = 7.0``: run eagerly the second and third iterations read
7.0 through ``h.v`` (x = 1 + 2 + 14 + 14 = 31), where the graph repeated the
first iteration's 1.0 in silence (x = 7). Names holding one object were
matched; items of containers were not. An item or attribute of what a name
held when the body began now counts as the same object as any name or other
item holding it, and an item by a key computed (``objs[i]``, ``for h in
tab``) as any item of its container.
"""
import types

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host
from helpers import line_of


def _objects():
    return types.SimpleNamespace(v=1.0), types.SimpleNamespace(v=2.0)


def _tuple_item(s, x, n):
    m, q = _objects()
    tab = (m, q)
    with s.while_loop(gt.cond(n) < 3) as body:   # tuple item
        h = tab[0]
        add[1, 4, body](x, h.v * 2)
        count[1, 1, body](n)
        m.v = 7.0


def _dict_item(s, x, n):
    m, q = _objects()
    tab = {"m": m, "q": q}
    with s.while_loop(gt.cond(n) < 3) as body:   # dict item
        h = tab["m"]
        add[1, 4, body](x, h.v * 2)
        count[1, 1, body](n)
        m.v = 7.0


def _list_item_by_name(s, x, n):
    m, q = _objects()
    objs, i = [m, q], 0
    with s.while_loop(gt.cond(n) < 3) as body:   # list item by name
        h = objs[i]
        add[1, 4, body](x, h.v * 2)
        count[1, 1, body](n)
        m.v = 7.0


def _list_item_computed(s, x, n):
    m, q = _objects()
    objs, k = [q, m], 3
    with s.while_loop(gt.cond(n) < 3) as body:   # list item computed
        h = objs[k % 2]
        add[1, 4, body](x, h.v * 2)
        count[1, 1, body](n)
        m.v = 7.0


def _for_over_tuple(s, x, n):
    m, _ = _objects()
    tab = (m,)
    with s.while_loop(gt.cond(n) < 3) as body:   # for over tuple
        for h in tab:
            add[1, 4, body](x, h.v * 2)
        count[1, 1, body](n)
        m.v = 7.0


def _getattr(s, x, n):
    m, q = _objects()
    tab = types.SimpleNamespace(m=m, q=q)
    with s.while_loop(gt.cond(n) < 3) as body:   # getattr
        h = getattr(tab, "m")
        add[1, 4, body](x, h.v * 2)
        count[1, 1, body](n)
        m.v = 7.0


def _attribute(s, x, n):
    m, q = _objects()
    tab = types.SimpleNamespace(m=m, q=q)
    with s.while_loop(gt.cond(n) < 3) as body:   # attribute
        h = tab.m
        add[1, 4, body](x, h.v * 2)
        count[1, 1, body](n)
        m.v = 7.0


def _read_directly(s, x, n):
    m, q = _objects()
    tab = (m, q)
    with s.while_loop(gt.cond(n) < 3) as body:   # read directly
        add[1, 4, body](x, tab[0].v * 2)
        count[1, 1, body](n)
        m.v = 7.0


def _read_directly_computed(s, x, n):
    m, q = _objects()
    tab, k = (q, m), 1
    with s.while_loop(gt.cond(n) < 3) as body:   # read directly computed
        add[1, 4, body](x, tab[k].v * 2)
        count[1, 1, body](n)
        m.v = 7.0


def _stored_through_item(s, x, n):
    m, q = _objects()
    tab = (m, q)
    with s.while_loop(gt.cond(n) < 3) as body:   # stored through item
        add[1, 4, body](x, m.v * 2)
        count[1, 1, body](n)
        tab[0].v = 7.0


def _body_fn(s, x, n):
    m, q = _objects()
    tab = [m, q]

    def step(body):   # body fn
        h = tab[0]
        add[1, 4, body](x, h.v * 2)
        count[1, 1, body](n)
        m.v = 7.0
    s.while_loop(gt.cond(n) < 3, body=step)


@pytest.mark.parametrize("program, marker", [
    (_tuple_item, "tuple item"),
    (_dict_item, "dict item"),
    (_list_item_by_name, "list item by name"),
    (_list_item_computed, "list item computed"),
    (_for_over_tuple, "for over tuple"),
    (_getattr, "getattr"),
    (_attribute, "attribute"),
    (_read_directly, "read directly"),
    (_read_directly_computed, "read directly computed"),
    (_stored_through_item, "stored through item"),
])
def test_a_slot_read_through_a_container_item_holding_its_object_is_refused(program, marker):
    """Run eagerly, x = 1 + 2 + 14 + 14 = 31; the graph repeated the first
    iteration (x = 7) in silence."""
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(1, 1, 1, 1), dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert ".v`" in e and "next iteration" in e, e


def test_a_body_function_reading_a_container_item_is_refused():
    f = gt.graph(_body_fn, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(1, 1, 1, 1), dev(0, dtype=np.int32))
    e = str(info.value)
    assert ".v`" in e and "next iteration" in e, e


def test_a_store_through_an_item_by_a_key_computed_sets_none_first():
    """``h = objs[i]; h.v = 7.0`` may set ``q.v`` or ``m.v``: ``q.v``, read next
    and set after, is still read before it is set (eagerly x = 1 + 4 + 18 +
    18 = 41)."""
    @gt.graph(backend="sim")
    def f(s, x, n):
        m, q = _objects()
        objs, i = [m, q], 0
        with s.while_loop(gt.cond(n) < 3) as body:   # maybe stored
            h = objs[i]
            h.v = 7.0
            add[1, 4, body](x, q.v * 2)
            count[1, 1, body](n)
            q.v = 9.0

    with pytest.raises(gt.ArgumentError) as info:
        f(dev(1, 1, 1, 1), dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, "maybe stored"), e
    assert ".v`" in e and "next iteration" in e, e


def test_container_items_run_as_eagerly_where_nothing_read_changes():
    """Another attribute of the object changed, or the slot set before the read
    through the item: x = 1 + 3 * 2 = 7, then 1 + 3 * 14 = 43, as eagerly."""
    @gt.graph(backend="sim")
    def other_attribute(s, x, n):
        m, q = types.SimpleNamespace(v=1.0, w=0.0), types.SimpleNamespace(v=2.0)
        objs, i = [m, q], 0
        with s.while_loop(gt.cond(n) < 3) as body:
            h = objs[i]
            add[1, 4, body](x, h.v * 2)
            count[1, 1, body](n)
            m.w = 7.0

    @gt.graph(backend="sim")
    def set_first(s, x, n):
        m, q = _objects()
        tab = {"m": m, "q": q}
        with s.while_loop(gt.cond(n) < 3) as body:
            m.v = 7.0
            h = tab["m"]
            add[1, 4, body](x, h.v * 2)
            count[1, 1, body](n)

    @gt.graph(backend="sim")
    def set_first_through_item(s, x, n):
        m, q = _objects()
        tab = (m, q)
        with s.while_loop(gt.cond(n) < 3) as body:
            tab[0].v = 7.0
            add[1, 4, body](x, m.v * 2)
            count[1, 1, body](n)

    for f, want in ((other_attribute, 7), (set_first, 43), (set_first_through_item, 43)):
        x, n = dev(1, 1, 1, 1), dev(0, dtype=np.int32)
        f(x, n)
        assert host(x) == [want] * 4 and host(n) == [3], f.__name__

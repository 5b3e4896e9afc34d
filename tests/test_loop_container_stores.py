"""A slot a loop body stores through an item of a container holding its object,
from a value the body changes, then reads through another name.

``objs = [m]`` before the loop; in the body ``objs[0].v = st.v + 100``, then
``add(x, m.v)``, then ``st.v += 1``: run eagerly the iterations add 101, 102
and 103 (x = 306), where the graph added the first iteration's 101 three times
in silence (x = 303). The store through the item marked ``m.v`` as set first
but not as computed from ``st.v``; it now counts as a store of ``m.v`` from
what its value reads, as a store of ``m.v`` itself does.
"""
import types

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host


def _objects():
    return types.SimpleNamespace(v=0.0), types.SimpleNamespace(v=1.0)


def _list_item(s, x, n):
    m, st = _objects()
    objs = [m]
    with s.while_loop(gt.cond(n) < 3) as body:
        objs[0].v = st.v + 100.0
        add[1, 4, body](x, m.v)
        count[1, 1, body](n)
        st.v += 1.0


def _dict_item(s, x, n):
    m, st = _objects()
    tab = {"m": m}
    with s.while_loop(gt.cond(n) < 3) as body:
        tab["m"].v = st.v + 100.0
        add[1, 4, body](x, m.v)
        count[1, 1, body](n)
        st.v += 1.0


def _attribute(s, x, n):
    m, st = _objects()
    holder = types.SimpleNamespace(m=m)
    with s.while_loop(gt.cond(n) < 3) as body:
        holder.m.v = st.v + 100.0
        add[1, 4, body](x, m.v)
        count[1, 1, body](n)
        st.v += 1.0


def _read_through_item(s, x, n):
    m, st = _objects()
    objs = [m]
    with s.while_loop(gt.cond(n) < 3) as body:
        m.v = st.v + 100.0
        add[1, 4, body](x, objs[0].v)
        count[1, 1, body](n)
        st.v += 1.0


@pytest.mark.parametrize("program", [_list_item, _dict_item, _attribute, _read_through_item])
def test_a_store_through_a_container_item_from_a_changing_value_is_refused(program):
    """Run eagerly, x = 101 + 102 + 103 = 306; the graph gave 303."""
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(0, 0, 0, 0), dev(0, dtype=np.int32))
    e = str(info.value)
    assert "`st.v`" in e and "next iteration" in e, e


def test_a_store_through_a_container_item_from_an_unchanged_value_runs():
    """Nothing the stored value reads changes: x = 3 * 101, as eagerly."""
    @gt.graph(backend="sim")
    def f(s, x, n):
        m, st = _objects()
        objs = [m]
        with s.while_loop(gt.cond(n) < 3) as body:
            objs[0].v = st.v + 100.0
            add[1, 4, body](x, m.v)
            count[1, 1, body](n)

    x, n = dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(x, n)
    assert host(x) == [303] * 4 and host(n) == [3]

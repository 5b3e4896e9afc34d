"""A name a loop body sets to one of several objects, read where the pick is
sure or the slot was just set through it.

``h = m if flag else q; h.v = 7.0; add(x, h.v)`` reads what the body set,
whichever object ``h`` holds, yet was refused naming ``m.v``; ``h = (m, q)[0]``
and ``h = m if flag else q`` with ``flag`` a static argument or a plain bool
the body leaves alone hold ``m`` only, yet ``q.v`` changed later in the body
was refused as read through ``h``.
"""
import types

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host
from helpers import line_of


def _pair():
    return types.SimpleNamespace(v=1.0), types.SimpleNamespace(v=2.0)


def _store_then_read(s, x, n, flag):
    m, q = _pair()
    with s.while_loop(gt.cond(n) < 3) as body:
        h = m if flag else q
        h.v = 7.0
        add[1, 4, body](x, h.v)
        count[1, 1, body](n)


def _by_index(s, x, n, flag):
    m, q = _pair()
    with s.while_loop(gt.cond(n) < 3) as body:
        h = (m, q)[0]
        add[1, 4, body](x, h.v)
        count[1, 1, body](n)
        q.v = 9.0


def _by_flag(s, x, n, flag):
    m, q = _pair()
    with s.while_loop(gt.cond(n) < 3) as body:
        h = m if flag else q
        add[1, 4, body](x, h.v)
        count[1, 1, body](n)
        q.v = 9.0


def _run(program, static=()):
    x, n = dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    gt.graph(program, backend="sim", static=static)(x, n, True)
    return host(x)


@pytest.mark.parametrize("program, static, want", [
    (_store_then_read, (), 21.0),
    (_by_index, (), 3.0),
    (_by_flag, ("flag",), 3.0),
    (_by_flag, (), 3.0),
])
def test_a_sure_pick_or_a_slot_just_set_through_it_runs_as_eagerly(program, static, want):
    """Eagerly and in the graph: 7 added three times, or m.v = 1 three times."""
    assert _run(program, static) == [want] * 4


def _rebound(s, x, n, flag):
    m, q = _pair()
    w = types.SimpleNamespace(v=4.0)
    with s.while_loop(gt.cond(n) < 3) as body:   # rebound
        h = m if flag else q
        h.v = 7.0
        h = w
        add[1, 4, body](x, h.v)
        count[1, 1, body](n)
        w.v = 3.0


def _flag_flipped(s, x, n, flag):
    m, q = _pair()
    with s.while_loop(gt.cond(n) < 3) as body:   # flipped
        h = m if flag else q
        add[1, 4, body](x, h.v)
        count[1, 1, body](n)
        flag = not flag


def _set_another_way(s, x, n, flag):
    m, q = _pair()
    st = types.SimpleNamespace(k=0.5)
    with s.while_loop(gt.cond(n) < 3) as body:   # another way
        h = m if flag else q
        h.v = 7.0
        m.v = st.k
        add[1, 4, body](x, h.v)
        count[1, 1, body](n)
        st.k += 1.0


@pytest.mark.parametrize("program, marker, named", [
    (_rebound, "rebound", "`w.v`"),
    (_flag_flipped, "flipped", "`flag`"),
    (_set_another_way, "another way", "`st.k`"),
])
def test_a_pick_the_body_changes_is_still_refused(program, marker, named):
    """``h = w`` after ``h.v = 7.0`` reads ``w.v``, which the body sets after;
    a flag the body flips picks the other object next time; ``m.v`` set from
    ``st.k`` after ``h.v = 7.0`` is what ``h.v`` reads where ``h`` is ``m``."""
    with pytest.raises(gt.ArgumentError) as info:
        _run(program)
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert f"changes {named}," in e, e

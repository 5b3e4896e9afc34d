"""A slot a loop body stores (``m.v = 7.0``) and that a call then stores anew
through a function it calls: a closure calling another closure over ``m``
(``def outer(v): inner(v)``, ``def inner(v): m.v = v``), a module function
calling another that stores under a global (``def relay(v): _touch(v)``). A
later read of the slot (``add(x, m.v)``) reads what the inner call left, from a
value the body changes each iteration: Python adds 101, 102 and 103 where the
graph would add 101 on each pass. It is refused. Where the inner function only
reads the slot, the store stays seen.
"""
import types

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host
from helpers import line_of


class _Obj:
    def __init__(self, v):
        self.v = v


G = _Obj(1.0)


def _touch(v):
    G.v = v


def _relay(v):
    _touch(v)


def _peek(v):
    return G.v + v


def _look(v):
    return _peek(v)


def _closures(s, x, n):
    m = _Obj(1.0)
    st = types.SimpleNamespace(v=1.0)

    def inner(v):
        m.v = v

    def outer(v):
        inner(v)
    with s.while_loop(gt.cond(n) < 3) as body:   # closures
        m.v = 7.0
        outer(st.v + 100.0)
        add[1, 4, body](x, m.v)
        count[1, 1, body](n)
        st.v += 1.0


def _globals(s, x, n):
    st = types.SimpleNamespace(v=1.0)
    with s.while_loop(gt.cond(n) < 3) as body:   # globals
        G.v = 7.0
        _relay(st.v + 100.0)
        add[1, 4, body](x, G.v)
        count[1, 1, body](n)
        st.v += 1.0


def _eager():
    """What Python does: the same loop run on the host."""
    st, m = types.SimpleNamespace(v=1.0), _Obj(1.0)
    total, n = 0.0, 0
    while n < 3:
        m.v = 7.0
        m.v = st.v + 100.0
        total += m.v
        n += 1
        st.v += 1.0
    return total


@pytest.mark.parametrize("program, marker, name", [
    (_closures, "closures", "m.v"), (_globals, "globals", "G.v")])
def test_a_slot_a_nested_call_may_store_after_the_store_is_refused(program, marker, name):
    assert _eager() == 306.0   # not 3 * 101
    G.v = 1.0
    x, n = dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    with pytest.raises(gt.ArgumentError) as info:
        gt.graph(program, backend="sim")(x, n)
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert f"changes `{name}`," in e, e


def _readers(s, x, n):
    m = _Obj(1.0)
    st = types.SimpleNamespace(v=1.0)

    def inner(v):
        return m.v + v

    def outer(v):
        return inner(v)
    with s.while_loop(gt.cond(n) < 3) as body:
        m.v = 7.0
        outer(st.v)
        _look(st.v)
        add[1, 4, body](x, m.v)
        count[1, 1, body](n)
        st.v += 1.0


def test_nested_calls_that_only_read_leave_the_store_seen():
    """Eagerly and in the graph: 7 added three times."""
    x, n = dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    gt.graph(_readers, backend="sim")(x, n)
    assert host(x) == [21.0] * 4

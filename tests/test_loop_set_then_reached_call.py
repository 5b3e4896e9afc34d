"""A slot a loop body stores (``m.v = 7.0``) and that a call then may store anew
though the call is not handed the object: a bound method held in a name before the
loop (``setter = m.set``), a partial holding it (``setter = partial(fill, m)``),
a closure reaching it through its cell (``def upd(v): m.v = v``). A later read of
the slot (``add(x, m.v)``) reads what that call left, from a value the body
changes each iteration: Python adds 101, 102 and 103 where the graph would add 101
on each pass. It is refused. A held callable that only reads what it reaches
(``partial(show, m)``, a bound ``log.debug``, a closure reading ``m.v``) leaves
the store seen.
"""
import functools
import logging
import types

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host
from helpers import line_of

_log = logging.getLogger("graphtrace.tests.reached_call")


class _Obj:
    def __init__(self, v):
        self.v = v

    def set(self, v):
        self.v = v

    def show(self, v):
        return f"{self.v} {v}"


def _fill(o, v):
    o.v = v


def _show(o, v):
    return f"{o.v} {v}"


def _bound(s, x, n):
    m = _Obj(1.0)
    st = types.SimpleNamespace(v=1.0)
    setter = m.set
    with s.while_loop(gt.cond(n) < 3) as body:   # bound
        m.v = 7.0
        setter(st.v + 100.0)
        add[1, 4, body](x, m.v)
        count[1, 1, body](n)
        st.v += 1.0


def _partial(s, x, n):
    m = _Obj(1.0)
    st = types.SimpleNamespace(v=1.0)
    setter = functools.partial(_fill, m)
    with s.while_loop(gt.cond(n) < 3) as body:   # partial
        m.v = 7.0
        setter(st.v + 100.0)
        add[1, 4, body](x, m.v)
        count[1, 1, body](n)
        st.v += 1.0


def _closure(s, x, n):
    m = _Obj(1.0)
    st = types.SimpleNamespace(v=1.0)

    def upd(v):
        m.v = v
    with s.while_loop(gt.cond(n) < 3) as body:   # closure
        m.v = 7.0
        upd(st.v + 100.0)
        add[1, 4, body](x, m.v)
        count[1, 1, body](n)
        st.v += 1.0


@pytest.mark.parametrize("program, marker", [
    (_bound, "bound"), (_partial, "partial"), (_closure, "closure")])
def test_a_slot_a_held_callable_may_store_after_the_store_is_refused(program, marker):
    x, n = dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    with pytest.raises(gt.ArgumentError) as info:
        gt.graph(program, backend="sim")(x, n)
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert "changes `m.v`," in e, e


def _readers(s, x, n):
    m = _Obj(1.0)
    st = types.SimpleNamespace(v=1.0)
    show, shown, debug = functools.partial(_show, m), m.show, _log.debug

    def peek(v):
        return m.v + v
    with s.while_loop(gt.cond(n) < 3) as body:
        m.v = 7.0
        show(st.v)
        shown(st.v)
        debug("%r", st.v)
        peek(st.v)
        add[1, 4, body](x, m.v)
        count[1, 1, body](n)
        st.v += 1.0


def test_held_callables_that_only_read_leave_the_store_seen():
    """Eagerly and in the graph: 7 added three times."""
    x, n = dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    gt.graph(_readers, backend="sim")(x, n)
    assert host(x) == [21.0] * 4

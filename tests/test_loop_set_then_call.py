"""A slot a loop body stores (``m.v = 7.0``, or ``h.v = 7.0`` through a name it
picked, ``h = m if flag else q``) and that a call then may store anew: a method
called on the object (``h.set(st.v + 100.0)``, whose code sets ``self.v``) or a
function handed it (``fill(m, st.v + 100.0)``). A later read of the slot
(``add(x, m.v)``) reads what that call left, from a value the body changes each
iteration, yet was taken for the constant just stored: the graph added 101 on each
pass (303) where Python adds 101, 102 and 103 (306). It is refused, as it is
without the store before the call.
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

    def set(self, v):
        self.v = v


def _fill(o, v):
    o.v = v


def _picked_then_method(s, x, n, flag):
    m, q = _Obj(1.0), _Obj(2.0)
    st = types.SimpleNamespace(v=1.0)
    with s.while_loop(gt.cond(n) < 3) as body:   # picked
        h = m if flag else q
        h.v = 7.0
        h.set(st.v + 100.0)
        add[1, 4, body](x, h.v)
        count[1, 1, body](n)
        st.v += 1.0


def _stored_then_method(s, x, n, flag):
    m = _Obj(1.0)
    st = types.SimpleNamespace(v=1.0)
    with s.while_loop(gt.cond(n) < 3) as body:   # direct
        m.v = 7.0
        m.set(st.v + 100.0)
        add[1, 4, body](x, m.v)
        count[1, 1, body](n)
        st.v += 1.0


def _stored_then_helper(s, x, n, flag):
    m = _Obj(1.0)
    st = types.SimpleNamespace(v=1.0)
    with s.while_loop(gt.cond(n) < 3) as body:   # helper
        m.v = 7.0
        _fill(m, st.v + 100.0)
        add[1, 4, body](x, m.v)
        count[1, 1, body](n)
        st.v += 1.0


def _picked_then_helper(s, x, n, flag):
    m, q = _Obj(1.0), _Obj(2.0)
    st = types.SimpleNamespace(v=1.0)
    with s.while_loop(gt.cond(n) < 3) as body:   # picked helper
        h = m if flag else q
        h.v = 7.0
        _fill(m, st.v + 100.0)
        add[1, 4, body](x, h.v)
        count[1, 1, body](n)
        st.v += 1.0


def _run(program):
    x, n = dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    gt.graph(program, backend="sim")(x, n, True)
    return host(x)


@pytest.mark.parametrize("program, marker", [
    (_picked_then_method, "picked"),
    (_stored_then_method, "direct"),
    (_stored_then_helper, "helper"),
    (_picked_then_helper, "picked helper"),
])
def test_a_slot_a_call_may_store_after_the_store_is_refused(program, marker):
    with pytest.raises(gt.ArgumentError) as info:
        _run(program)
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert "changes `m.v`," in e, e


def _stored_then_other_call(s, x, n, flag):
    m, other = _Obj(1.0), _Obj(0.0)
    with s.while_loop(gt.cond(n) < 3) as body:
        m.v = 7.0
        other.set(3.0)
        add[1, 4, body](x, m.v)
        count[1, 1, body](n)


def test_a_call_handed_another_object_leaves_the_store_seen():
    """Eagerly and in the graph: 7 added three times."""
    assert _run(_stored_then_other_call) == [21.0] * 4


def _stored_then_unbound_method(s, x, n, flag):
    cfg = {"lr": 1.0}
    st = types.SimpleNamespace(v=1.0)
    with s.while_loop(gt.cond(n) < 3) as body:   # unbound
        cfg["lr"] = 7.0
        dict.update(cfg, lr=st.v + 100.0)   # cfg.update(...), spelled off the type
        add[1, 4, body](x, cfg["lr"])
        count[1, 1, body](n)
        st.v += 1.0


def test_a_builtin_types_method_taken_off_the_type_stores_on_its_first_argument():
    """``dict.update(cfg, ...)`` is ``cfg.update(...)``: it was taken for a library
    function handed cfg, which stores nothing, and the graph added 101 on each pass
    (303) where Python adds 101, 102 and 103."""
    with pytest.raises(gt.ArgumentError) as info:
        _run(_stored_then_unbound_method)
    assert info.value.source[1] == line_of(__file__, "unbound")
    assert "changes `cfg['lr']`," in str(info.value)

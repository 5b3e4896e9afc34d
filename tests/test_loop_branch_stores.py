"""A slot a branch's body stores, read after the block, whatever it holds then.

``s.if_else`` and ``s.switch`` record their bodies one after the other in one
run of their Python. A slot one arm set and the last arm set back to what it
held before (``v = 5.0``, then ``v = 3.0`` in ``then`` and ``v = 5.0`` in
``otherwise``) looked unchanged, and the code after the block read 5.0 in
silence where, with the flag set, eager code reads 3.0. Such a slot is now
refused as one whose value changed; the programs beside them (a slot set in
the arms and not read after, one a loop body sets back) run as eagerly.
"""
import types

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host
from helpers import line_of


def _name_set_back(s, x, flag):
    v = 5.0
    with s.if_else(gt.cond(flag) > 0) as (then, otherwise):   # name set back
        count[1, 1, then](flag)
        v = 3.0
        count[1, 1, otherwise](flag)
        v = 5.0
    add[1, 4, s](x, v)   # name set back read


def _attribute_set_back(s, x, flag):
    st = types.SimpleNamespace(w=5.0)
    with s.if_else(gt.cond(flag) > 0) as (then, otherwise):   # attribute set back
        count[1, 1, then](flag)
        st.w = 3.0
        count[1, 1, otherwise](flag)
        st.w = 5.0
    add[1, 4, s](x, st.w)   # attribute set back read


def _key_set_back_in_switch(s, x, flag):
    d = {"w": 5.0}
    with s.switch(gt.cond(flag), 2) as (zero, one):   # key set back in switch
        count[1, 1, one](flag)
        d["w"] = 3.0
        count[1, 1, zero](flag)
        d["w"] = 5.0
    add[1, 4, s](x, d["w"])   # key set back in switch read


def _cell_set_back_by_body_fn(s, x, flag):
    v = 5.0

    def arms(then, otherwise):
        nonlocal v
        count[1, 1, then](flag)
        v = 3.0
        count[1, 1, otherwise](flag)
        v = 5.0
    s.if_else(gt.cond(flag) > 0, body=arms)   # cell set back by body fn
    add[1, 4, s](x, v)   # cell set back by body fn read


@pytest.mark.parametrize("program, marker, named", [
    (_name_set_back, "name set back", "`v`"),
    (_attribute_set_back, "attribute set back", "`st.w`"),
    (_key_set_back_in_switch, "key set back in switch", "`d['w']`"),
    (_cell_set_back_by_body_fn, "cell set back by body fn", "`v`"),
])
def test_a_slot_an_arm_sets_and_the_last_arm_sets_back_read_after_is_refused(
        program, marker, named):
    """With the flag set, eager code adds 3 (x = 4); the graph added what the
    last arm recorded set, 5 (x = 6), in silence."""
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(1, 1, 1, 1), dev(1, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert f"changes {named}, which line {line_of(__file__, marker + ' read')} reads" in e, e


def test_slots_stored_in_arms_run_as_eagerly_where_the_code_after_does_not_read_them():
    """Arms that set a slot the code after the block sets again before reading
    it, or only prints, and a loop body that sets a slot back to what it held
    (read after: the same whatever the device runs): x = 1 + 2 + 5 = 8."""
    @gt.graph(backend="sim")
    def f(s, x, flag):
        v, st = 5.0, types.SimpleNamespace(w=2.0)
        with s.if_else(gt.cond(flag) > 0) as (then, otherwise):
            count[1, 1, then](flag)
            v = 3.0
            st.w = 3.0
            count[1, 1, otherwise](flag)
            v = 5.0
            st.w = 2.0
        print("after", v, end="; ")
        st.w = 2.0
        add[1, 4, s](x, st.w)

    @gt.graph(backend="sim")
    def g(s, x, n):
        w = 5.0
        with s.while_loop(gt.cond(n) < 3) as body:
            count[1, 1, body](n)
            w = 1.0
            add[1, 4, body](x, w)
            w = 5.0
        add[1, 4, s](x, w)

    x = dev(1, 1, 1, 1)
    f(x, dev(1, dtype=np.int32))
    assert host(x) == [3] * 4
    x, n = dev(1, 1, 1, 1), dev(0, dtype=np.int32)
    g(x, n)
    assert host(x) == [9] * 4 and host(n) == [3]


class _Settings:
    pass


SETTINGS = _Settings()


def _global_in_arms(s, x, flag):
    with s.if_else(gt.cond(flag) > 0) as (then, otherwise):   # global in arms
        count[1, 1, then](flag)
        SETTINGS.v = 3.0
        count[1, 1, otherwise](flag)
        SETTINGS.v = 5.0
    add[1, 4, s](x, SETTINGS.v)   # global in arms read


def test_a_call_after_a_refused_one_is_refused_again_whatever_the_trace_left():
    """The refused trace left ``SETTINGS.v = 5.0`` behind: the second call, the
    same, took the slot as one the arms left as it was and added 5 in
    silence (eagerly 3 with the flag set). Both calls are refused."""
    f = gt.graph(_global_in_arms, backend="sim")
    line = line_of(__file__, "global in arms")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(1, 1, 1, 1), dev(1, dtype=np.int32))
    assert info.value.source[1] == line and "sets `SETTINGS.v` (unset" in str(info.value)
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(1, 1, 1, 1), dev(1, dtype=np.int32))
    assert info.value.source[1] == line and "changes `SETTINGS.v`" in str(info.value)

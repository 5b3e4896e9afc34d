"""A slot a loop body reads by a name or a key it spells to a call
(``getattr(st, "v", 5.0)``, ``d.get("k", 5.0)``), then sets.

Run eagerly, the second and third iterations read what the first set (x = 1
+ 2 + 6 + 6 = 15); such a read was not seen as a read of ``st.v`` or
``d["k"]``, so the store after it made the slot look set first and the graph
repeated the first iteration's value (x = 7) in silence.
"""
import types

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host
from helpers import line_of


def _getattr(s, x, n):
    st = types.SimpleNamespace(v=1.0)
    with s.while_loop(gt.cond(n) < 3) as body:   # getattr
        add[1, 4, body](x, getattr(st, "v", 5.0) * 2)
        count[1, 1, body](n)
        st.v = 3.0


def _dict_get(s, x, n):
    d = {"k": 1.0}
    with s.while_loop(gt.cond(n) < 3) as body:   # dict get
        add[1, 4, body](x, d.get("k", 5.0) * 2)
        count[1, 1, body](n)
        d["k"] = 3.0


def _getattr_by_name(s, x, n):
    st = types.SimpleNamespace(v=1.0)
    with s.while_loop(gt.cond(n) < 3) as body:   # getattr by name
        v = getattr(st, "v")
        add[1, 4, body](x, v * 2)
        count[1, 1, body](n)
        st.v = 3.0


@pytest.mark.parametrize("program, marker, named", [
    (_getattr, "getattr", "`st.v`"),
    (_dict_get, "dict get", "`d['k']`"),
    (_getattr_by_name, "getattr by name", "`st.v`"),
])
def test_a_slot_read_by_getattr_or_get_then_set_is_refused(program, marker, named):
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(1, 1, 1, 1), dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert named in e and "next iteration" in e, e


def test_slots_read_by_getattr_or_get_run_as_eagerly_where_set_first_or_only_printed():
    """Set before the read, or the read only printed: x = 1 + 3 * 6 = 19, and
    1 + 3 * 2 = 7, as eagerly."""
    @gt.graph(backend="sim")
    def set_first(s, x, n):
        st = types.SimpleNamespace(v=1.0)
        with s.while_loop(gt.cond(n) < 3) as body:
            st.v = 3.0
            add[1, 4, body](x, getattr(st, "v", 5.0) * 2)
            count[1, 1, body](n)

    @gt.graph(backend="sim")
    def printed(s, x, n):
        st = types.SimpleNamespace(v=1.0)
        with s.while_loop(gt.cond(n) < 3) as body:
            print("v", getattr(st, "v", 5.0))
            add[1, 4, body](x, 2.0)
            count[1, 1, body](n)
            st.v = 3.0

    for f, want in ((set_first, 19), (printed, 7)):
        x, n = dev(1, 1, 1, 1), dev(0, dtype=np.int32)
        f(x, n)
        assert host(x) == [want] * 4 and host(n) == [3], f.__name__


def _new_getattr(s, x, n):
    st = types.SimpleNamespace()
    with s.while_loop(gt.cond(n) < 3) as body:   # new getattr
        add[1, 4, body](x, getattr(st, "v", 1.0) * 2)
        count[1, 1, body](n)
        st.v = 3.0


def _new_hasattr(s, x, n):
    st = types.SimpleNamespace()
    with s.while_loop(gt.cond(n) < 3) as body:   # new hasattr
        v = st.v if hasattr(st, "v") else 1.0
        add[1, 4, body](x, v * 2)
        count[1, 1, body](n)
        st.v = 3.0


def _new_counted(s, x, n):
    st = types.SimpleNamespace()
    with s.while_loop(gt.cond(n) < 3) as body:   # new counted
        st.v = getattr(st, "v", 0.0) + 1
        add[1, 4, body](x, st.v)
        count[1, 1, body](n)


@pytest.mark.parametrize("program, marker", [
    (_new_getattr, "new getattr"),
    (_new_hasattr, "new hasattr"),
    (_new_counted, "new counted"),
])
def test_a_slot_new_to_an_object_read_before_the_body_sets_it_is_refused(program, marker):
    """Run eagerly the first iteration reads the default and the next ones what
    the body set (x = 1 + 2 + 6 + 6 = 15; counted, 1 + 1 + 2 + 3 = 7); the graph
    repeated the first (x = 7; counted, 4) in silence, as st.v was not there
    when the body began."""
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(1, 1, 1, 1), dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert "`st.v`" in e and "next iteration" in e, e


def test_a_slot_new_to_an_object_set_before_it_is_read_or_only_printed_runs_as_eagerly():
    @gt.graph(backend="sim")
    def set_first(s, x, n):
        st = types.SimpleNamespace()
        with s.while_loop(gt.cond(n) < 3) as body:
            st.v = 3.0
            add[1, 4, body](x, getattr(st, "v", 1.0) * 2)
            count[1, 1, body](n)

    @gt.graph(backend="sim")
    def printed(s, x, n):
        st = types.SimpleNamespace()
        with s.while_loop(gt.cond(n) < 3) as body:
            print("v", getattr(st, "v", 1.0))
            add[1, 4, body](x, 2.0)
            count[1, 1, body](n)
            st.v = 3.0

    for f, want in ((set_first, 19), (printed, 7)):
        x, n = dev(1, 1, 1, 1), dev(0, dtype=np.int32)
        f(x, n)
        assert host(x) == [want] * 4 and host(n) == [3], f.__name__

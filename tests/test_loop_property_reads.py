"""A loop body reading a property whose getter reads a slot the body changes.

``m.v`` a property returning ``self._v * self.k``, with a setter storing
``self._v``; the body ``m.v = 7.0``, then ``add(x, m.v)``, then ``m.k += 1``:
run eagerly the iterations add 7, 14 and 21 (x = 42), where the graph added
the first iteration's 7 three times in silence (x = 21). The store through
the setter was taken for a store of ``m.v`` the getter gives back, so the read
of ``m.v`` no longer read ``m.k``. It now sets what the setter stores
(``m._v``), and the read of ``m.v`` still reads what the getter reads.
"""
import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host


class Prop:
    def __init__(self):
        self._v, self.k, self.s = 1.0, 1.0, 1.0

    @property
    def v(self):
        return self._v * self.k

    @v.setter
    def v(self, val):
        self._v = val * self.s


def test_a_property_read_after_its_setter_reads_what_its_getter_reads():
    """Run eagerly, x = 7 + 14 + 21 = 42; the graph gave 21."""
    @gt.graph(backend="sim")
    def f(s, x, n):
        m = Prop()
        with s.while_loop(gt.cond(n) < 3) as body:
            m.v = 7.0
            add[1, 4, body](x, m.v)
            count[1, 1, body](n)
            m.k += 1.0

    with pytest.raises(gt.ArgumentError) as info:
        f(dev(0, 0, 0, 0), dev(0, dtype=np.int32))
    e = str(info.value)
    assert "`m.k`" in e and "next iteration" in e, e


def test_a_property_setter_reading_a_changed_slot_is_refused():
    """The setter computes ``_v`` from ``m.s``, which the body changes: eagerly
    x = 7 + 14 + 21 = 42."""
    @gt.graph(backend="sim")
    def f(s, x, n):
        m = Prop()
        with s.while_loop(gt.cond(n) < 3) as body:
            m.v = 7.0
            add[1, 4, body](x, m.v)
            count[1, 1, body](n)
            m.s += 1.0

    with pytest.raises(gt.ArgumentError) as info:
        f(dev(0, 0, 0, 0), dev(0, dtype=np.int32))
    e = str(info.value)
    assert "`m.s`" in e and "next iteration" in e, e


def test_a_property_set_then_read_runs_as_eagerly():
    """Nothing the getter reads changes after the setter: x = 3 * 7, as eagerly."""
    @gt.graph(backend="sim")
    def f(s, x, n):
        m = Prop()
        with s.while_loop(gt.cond(n) < 3) as body:
            m.v = 7.0
            add[1, 4, body](x, m.v)
            count[1, 1, body](n)

    x, n = dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(x, n)
    assert host(x) == [21] * 4 and host(n) == [3]

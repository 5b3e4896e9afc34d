"""The advice for a Python ``while``/``if`` on a device element rewrites the test as
a device condition only where ``gt.cond`` can compare that way (``<``, ``<=``,
``>``, ``>=``, ``==``, ``!=``). ``while c[0] in (5.0, 4.0)`` was advised as
``s.while_loop(gt.cond(c[0:1]) in (5.0, 4.0))`` and ``while c[0] is not None`` as
``s.while_loop(gt.cond(c[0:1]) is not None)``, neither a device condition; those
now get the generic condition placeholder and its shape.
"""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt


@cuda.jit
def _dec(c):
    if cuda.grid(1) == 0:
        c[0] -= 1


def _advice(which):
    @gt.graph
    def g(s, c):
        if which == "in":
            while c[0] in (5.0, 4.0):
                _dec[1, 1, s](c)
        elif which == "not in":
            while c[0] not in (1.0, 2.0):
                _dec[1, 1, s](c)
        elif which == "is not":
            while c[0] is not None:
                _dec[1, 1, s](c)
        else:
            while c[0] > 3.0:
                _dec[1, 1, s](c)
    with pytest.raises(gt.HostSyncError) as e:
        g(cuda.to_device(np.array([5.0])))
    return str(e.value)


@pytest.mark.parametrize("which", ["in", "not in", "is not"])
def test_a_membership_or_identity_test_is_not_advised_as_a_device_condition(which):
    msg = _advice(which)
    assert "To loop on device data" in msg, msg
    assert "gt.cond(c[0:1])" not in msg, msg
    assert "(the condition: a one-element view of a 1-d device array" in msg, msg


def test_an_ordering_test_is_still_advised_as_one():
    msg = _advice(">")
    assert "with s.while_loop(gt.cond(c[0:1]) > 3.0) as body:" in msg, msg

"""A namedtuple subclass as the ``self`` of a graph method whose code uses an
array field (``s.copy(self.buf, x)``) is refused naming the field and what to
do, not ``self[0]`` (which the code never wrote)."""
import collections

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt


class _Model(collections.namedtuple("_Model", "buf")):
    @gt.graph(backend="sim")
    def step(self, s, x):
        s.copy(self.buf, x)


def test_a_namedtuple_self_is_refused_by_its_field_name():
    m = _Model(gt.pinned_empty(4))
    with pytest.raises(gt.ArgumentError) as e:
        m.step(cuda.to_device(np.ones(4)))
    msg = str(e.value)
    assert "self[0]" not in msg
    assert "self.buf" in msg and "argument of its own" in msg
    assert "test_namedtuple_self.py:16" in msg

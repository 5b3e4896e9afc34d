"""What an op on the proxy stream returns (a node of ``s.copy`` or ``s.memset``) is
no value a graph function would drop: a lambda graph may return it, as it returns
the None of a launch. Other values, and temporaries, are still refused."""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt


def test_a_lambda_returning_a_copy_or_memset_is_a_graph():
    x, y = cuda.to_device(np.arange(10.0)), cuda.device_array(10)
    gt.graph(lambda s, x, y: s.copy(y, x), backend="sim")(x, y)
    assert np.array_equal(y.copy_to_host(), np.arange(10.0))
    gt.graph(lambda s, y: s.memset(y, 0), backend="sim")(y)
    assert np.array_equal(y.copy_to_host(), np.zeros(10))
    gt.graph(lambda s, x, y: (s.copy(y, x), s.memset(x, 0)), backend="sim")(x, y)
    assert np.array_equal(y.copy_to_host(), np.arange(10.0))
    assert np.array_equal(x.copy_to_host(), np.zeros(10))


def test_a_def_returning_a_copy_is_a_graph():
    @gt.graph(backend="sim")
    def f(s, x, y):
        return s.copy(y, x)
    x, y = cuda.to_device(np.arange(4.0)), cuda.device_array(4)
    f(x, y)
    assert np.array_equal(y.copy_to_host(), np.arange(4.0))


def test_other_values_and_temporaries_are_still_refused():
    y = cuda.device_array(4)
    with pytest.raises(gt.TraceError, match="returned int: a graph function returns nothing"):
        gt.graph(lambda s, y: (s.memset(y, 0), 3), backend="sim")(y)
    with pytest.raises(gt.TraceError, match="returned temporary"):
        gt.graph(lambda s, y: s.empty(4, np.float64), backend="sim")(y)

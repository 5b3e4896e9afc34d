"""A device function a kernel reaches as a module's attribute is watched as one
held by a global name is: another function put there traces anew, with the
intents of the code that now runs."""
import numpy as np
from numba import cuda

import devfn_module
import graphtrace as gt


@cuda.jit
def plus_one(src, dst):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = src[i] + 1


@cuda.jit
def through_module(a, b):
    i = cuda.grid(1)
    if i < a.size:
        devfn_module.op(a, b, i)


@gt.graph(backend="sim")
def g(s, a, b, y):
    plus_one[1, 4, s](a, y)          # reads a
    through_module[1, 4, s](a, b)    # writes b, or a once op is the other function
    plus_one[1, 4, s](b, y)


def test_a_device_function_put_in_a_module_attribute_anew_traces_anew():
    keep = devfn_module.op
    a0, b0 = np.arange(4.0), np.full(4, 10.0)
    a, b, y = cuda.to_device(a0), cuda.to_device(b0), cuda.to_device(np.zeros(4))
    try:
        g(a, b, y)
        assert b.copy_to_host().tolist() == (a0 * 2).tolist()
        devfn_module.op = devfn_module.writes_first
        a, b = cuda.to_device(a0), cuda.to_device(b0)
        g(a, b, y)   # the cached graph took through_module to only read a
        assert g.cache_info().misses == 2
        assert a.copy_to_host().tolist() == (b0 * 3).tolist()
        assert "inout(a, b)" in str(g.trace(a, b, y))
    finally:
        devfn_module.op = keep

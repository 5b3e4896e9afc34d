"""A temporary the program stored (in a global) during a trace that then raised:
a trace that ends normally refuses that at once; one that raises leaves it
there, and every later use of it (by any graph function reading that global)
says that the failed trace stored it, where, and what to do."""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace.errors import TraceError


@cuda.jit
def scale(x, a, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i]


CACHE: dict = {}


@gt.graph
def first(s, x, y):
    CACHE["scratch"] = s.empty(32)
    scale[1, 32, s](x, 2.0, y)
    raise ValueError("a bug later in the function")


@gt.graph
def other(s, x, y):
    scale[1, 32, s](x, CACHE.get("a", 2.0), y)


def test_a_temporary_kept_past_a_failed_trace_is_told_as_such():
    CACHE.clear()
    x, y = cuda.to_device(np.ones(32)), cuda.device_array(32)
    with pytest.raises(ValueError, match="a bug later") as raised:
        first(x, y)
    assert any("kept by global or closure name CACHE" in n
               for n in getattr(raised.value, "__notes__", []))
    for fn in (first, other):
        with pytest.raises(TraceError) as later:
            fn(x, y)
        message = str(later.value)
        assert "raised (ValueError: a bug later in the function)" in message
        assert "global or closure name CACHE" in message and "drop the temporary" in message
    CACHE.clear()   # dropped: the later call works
    other(x, y)
    assert y.copy_to_host()[0] == 2.0

"""numba's allocations made by the traced code (``cuda.device_array_like(x)`` in the
body) are refused at their line, saying to use the graph's own scratch memory
(``s.empty``, ``s.zeros``) or an argument; made outside, they still work."""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of

pytestmark = pytest.mark.usefixtures("both_launch_paths")

F = __file__


@cuda.jit
def axpy(a, x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] += a * x[i]


def _refused(f, *args):
    with pytest.raises(gt.ArgumentError) as e:
        f(*args)
    return e.value


def test_device_array_like_in_the_body_is_refused_at_its_line():
    @gt.graph
    def f(s, x, y):
        t = cuda.device_array_like(x)   # like
        s.memset(t, 0)
        axpy[1, 32, s](1.0, x, t)
        axpy[1, 32, s](1.0, t, y)
    err = _refused(f, cuda.to_device(np.arange(8.0)), cuda.to_device(np.zeros(8)))
    assert err.source == (F, line_of(F, "like")), str(err)
    assert "numba.cuda.device_array_like() inside a trace makes memory the graph would " \
        "keep using at every call" in str(err)
    assert "t = s.empty(x.shape, x.dtype) (s.zeros with the same arguments" in str(err)
    assert "allocate the array outside the graph function and pass it as an argument" \
        in str(err)


@pytest.mark.parametrize("marker, made", [
    ("shape", "t = s.empty(8)"), ("shape-dtype", "u = s.empty(8, np.float32)"),
    ("keyword", "s.empty((2, 4), np.float32)")])
def test_device_array_in_the_body_is_refused_at_its_line(marker, made):
    @gt.graph
    def f(s, x, which):
        if which == "shape":
            t = cuda.device_array(8)   # shape
            axpy[1, 32, s](1.0, x, t)
        elif which == "shape-dtype":
            u = cuda.device_array(8, np.float32)   # shape-dtype
            axpy[1, 32, s](1.0, x, u)
        else:
            axpy[1, 32, s](1.0, x, cuda.device_array((2, 4), dtype=np.float32))   # keyword
    err = _refused(f, cuda.to_device(np.arange(8.0)), marker)
    assert err.source == (F, line_of(F, marker)), str(err)
    assert f"make scratch memory the graph owns on the proxy stream, {made} " in str(err)


def test_pinned_array_in_the_body_says_to_pass_pinned_memory():
    @gt.graph
    def f(s, x):
        h = cuda.pinned_array(8)   # pinned
        s.copy(h, x)
    err = _refused(f, cuda.to_device(np.arange(8.0)))
    assert err.source == (F, line_of(F, "pinned")), str(err)
    assert "gt.pinned_empty(shape, dtype), and pass it as an argument" in str(err)


def _helper_alloc(x):
    return cuda.device_array_like(x)   # in-helper


def test_an_allocation_in_a_helper_of_the_program_is_refused_there():
    @gt.graph
    def f(s, x):
        axpy[1, 32, s](1.0, x, _helper_alloc(x))
    err = _refused(f, cuda.to_device(np.arange(8.0)))
    assert err.source == (F, line_of(F, "in-helper")), str(err)


def test_allocations_outside_a_trace_and_in_host_callbacks_still_work():
    seen = []

    def callback(v):
        seen.append(cuda.device_array(2).shape)   # at each launch, outside the trace

    @gt.graph
    def f(s, x, y):
        t = s.empty(x.shape, x.dtype)
        s.memset(t, 0)
        axpy[1, 32, s](1.0, x, t)
        axpy[1, 32, s](2.0, t, y)
        s.host(callback, 1)
    x = cuda.to_device(np.arange(8.0))
    y = cuda.device_array_like(x)
    s0 = cuda.device_array(8)
    s0.copy_to_device(np.zeros(8))
    y.copy_to_device(np.zeros(8))
    f(x, y)
    f(x, y)
    cuda.synchronize()
    assert y.copy_to_host().tolist() == (4 * np.arange(8.0)).tolist()
    assert seen == [(2,), (2,)]
    assert cuda.pinned_array(3).shape == (3,)

"""Reading, writing or uploading device data on the host inside a trace is an error.

On the simulator, numba's device arrays are numpy arrays in disguise, so every
such access would silently succeed and bake the first call's values into the
graph. Each test checks the error, its line, and that the function (and the
array) still work afterwards.
"""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of


@cuda.jit
def inc(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


def refused(body, marker):
    @gt.graph(backend="sim")
    def f(s, x):
        body(s, x)
        inc[1, 4, s](x)
    x = cuda.to_device(np.arange(4, dtype=np.float32))
    with pytest.raises(gt.HostSyncError) as e:
        f(x)
    assert e.value.source[1] == line_of(__file__, marker), str(e.value)
    assert "inside a trace" in str(e.value)
    return x


def branch(s, x):
    if x[0] > 0:   # element
        pass


def reduce_on_host(s, x):
    float(x.sum())   # sum


def download(s, x):
    x.copy_to_host()   # download


def upload(s, x):
    cuda.to_device(np.ones(4, np.float32))   # upload


def assign(s, x):
    x[0] = 5   # assign


def compare(s, x):
    x > 0   # compare


def numba_reduce(s, x):
    cuda.reduce(lambda a, b: a + b)(x)   # reduce


def iterate(s, x):
    for v in x:   # iterate
        pass


def to_numpy(s, x):
    np.asarray(x)   # asarray


def copy_into(s, x):
    x.copy_to_device(np.zeros(4, np.float32))   # copy into


@pytest.mark.parametrize("body, marker", [
    (branch, "element"), (reduce_on_host, "sum"), (download, "download"), (upload, "upload"),
    (assign, "assign"), (compare, "compare"), (numba_reduce, "reduce"), (iterate, "iterate"),
    (to_numpy, "asarray"), (copy_into, "copy into")])
def test_host_access_to_device_data_is_refused(body, marker):
    x = refused(body, marker)
    assert x.copy_to_host().tolist() == [0, 1, 2, 3]   # nothing ran, and reading works again
    assert x[0] == 0


def test_geometry_and_views_pass_inside_a_trace():
    @gt.graph(backend="sim")
    def f(s, x):
        assert x.shape == (4,) and x.size == 4 and len(x) == 4 and x.dtype == np.float32
        inc[1, 4, s](x[1:])
        inc[1, 4, s](x.reshape(2, 2)[0])
        inc[1, 4, s](x.T)
    x = cuda.to_device(np.zeros(4, np.float32))
    f(x)
    assert x.copy_to_host().tolist() == [2, 3, 2, 2]


def test_the_function_works_after_a_refusal():
    calls = []

    @gt.graph(backend="sim")
    def f(s, x, peek):
        if peek:
            calls.append(float(x[0]))
        inc[1, 4, s](x)
    x = cuda.to_device(np.zeros(4, np.float32))
    with pytest.raises(gt.HostSyncError):
        f(x, True)
    f(x, False)
    f(x, False)
    assert x.copy_to_host().tolist() == [2, 2, 2, 2] and calls == []


def test_a_nested_graph_function_reading_device_data_is_refused_too():
    @gt.graph(backend="sim")
    def inner(s, x):
        x.copy_to_host()   # nested read
        inc[1, 4, s](x)

    @gt.graph(backend="sim")
    def outer(s, x):
        inner(s, x)
    with pytest.raises(gt.HostSyncError) as e:
        outer(cuda.to_device(np.zeros(4, np.float32)))
    assert e.value.source[1] == line_of(__file__, "nested read")

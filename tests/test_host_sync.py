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


@cuda.jit
def _fill_with(y, a):
    i = cuda.grid(1)
    if i < y.size:
        y[i] = a


@pytest.mark.parametrize("how", ["element", "float", "arithmetic", "sum", "iterate", "item",
                                 "tolist", "compare"])
def test_reading_a_host_array_arguments_values_is_refused_at_the_line(how):
    """``params[0]`` read while tracing was baked into the graph: a later call with
    other values (another array, or this one changed) ran with the first ones."""
    @gt.graph(backend="sim")
    def f(s, y, params):
        if how == "element":
            v = params[0]                     # reads element
        elif how == "float":
            v = float(params[0:1])            # reads float
        elif how == "arithmetic":
            v = params * 2                    # reads arithmetic
        elif how == "sum":
            v = params.sum()                  # reads sum
        elif how == "iterate":
            v = [p for p in params]           # reads iterate
        elif how == "item":
            v = params[0:1].item()            # reads item
        elif how == "tolist":
            v = params.tolist()               # reads tolist
        else:
            v = params > 0                    # reads compare
        _fill_with[1, 4, s](y, v)
    with pytest.raises(gt.HostSyncError, match="host array argument") as e:
        f(cuda.to_device(np.zeros(4)), np.array([1.0, 2.0]))
    assert e.value.source[1] == line_of(__file__, f"reads {how}")


def test_a_host_array_argument_is_an_array_in_every_op_and_a_callback_reads_it():
    """Shapes, views, copies, printing and callbacks still take it; at run time the
    callback reads the values of each call's array."""
    seen = []

    @gt.graph(backend="sim")
    def f(s, y, params):
        assert params.shape == (2,) and len(params) == 2 and np.shape(params) == (2,)
        repr(params), str(params)
        s.copy(params[1:], y[:1])
        s.host(lambda p: seen.append(p.tolist()), params)
    y = cuda.to_device(np.full(4, 7.0))
    a, b = gt.pinned_empty(2), gt.pinned_empty(2)
    a[:], b[:] = [1.0, 2.0], [3.0, 4.0]
    f(y, a)
    f(y, b)
    assert seen == [[1.0, 7.0], [3.0, 7.0]]


def test_numpy_views_and_rows_of_a_host_argument_pass_and_callbacks_get_plain_arrays():
    """np.ravel / np.reshape / np.transpose make views (no value read), and so does
    iterating a 2-D array by rows; a callback gets an ordinary ndarray from the
    first call on."""
    got = []

    @gt.graph(backend="sim")
    def f(s, y, rows, p):
        s.copy(y, np.ravel(p))
        s.copy(y[2:], np.transpose(np.transpose(np.reshape(p, (2, 2))))[0])
        for r, row in zip(rows, p):
            s.copy(r, row)
        s.host(lambda q: got.append((type(q), q.tolist())), p)
    p = gt.pinned_empty((2, 2))
    p[:] = [[1.0, 2.0], [3.0, 4.0]]
    y, rows = cuda.to_device(np.zeros(4)), [cuda.to_device(np.zeros(2)) for _ in range(2)]
    f(y, rows, p)
    assert y.copy_to_host().tolist() == [1.0, 2.0, 1.0, 2.0]
    assert [r.copy_to_host().tolist() for r in rows] == [[1.0, 2.0], [3.0, 4.0]]
    assert got == [(np.ndarray, [[1.0, 2.0], [3.0, 4.0]])]

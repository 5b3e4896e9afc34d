"""Host reads, uploads and eager library work inside a trace, on a real GPU.

numba device arrays read and write element values with driver copies, and
cupy arrays through its own transfers: each must be an error at the user's
line, and the function must work afterwards.
"""
import numpy as np
import pytest

import graphtrace as gt

cuda = pytest.importorskip("numba.cuda")


@cuda.jit
def inc(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


def _line(marker):
    from helpers import line_of
    return line_of(__file__, marker)


def numba_branch(x):
    if x[0] > 0:   # numba element
        pass


def numba_download(x):
    x.copy_to_host()   # numba download


def numba_upload(x):
    cuda.to_device(np.ones(4, np.float32))   # numba upload


def numba_reduce(x):
    cuda.reduce(lambda a, b: a + b)(x)   # numba reduce


def numba_assign(x):
    x[0] = 3   # numba assign


@pytest.mark.parametrize("body, marker", [
    (numba_branch, "numba element"), (numba_download, "numba download"),
    (numba_upload, "numba upload"), (numba_reduce, "numba reduce"),
    (numba_assign, "numba assign")])
def test_numba_host_access_is_refused(body, marker):
    @gt.graph
    def f(s, x, peek):
        if peek:
            body(x)
        inc[1, 4, s](x)
    x = cuda.to_device(np.zeros(4, np.float32))
    with pytest.raises((gt.HostSyncError, gt.StreamError)) as e:
        f(x, True)
    assert e.value.source[1] == _line(marker), str(e.value)
    f(x, False)
    cuda.synchronize()
    assert x.copy_to_host().tolist() == [1, 1, 1, 1]


def cupy_get(x):
    x.get()   # cupy get


def cupy_float(x):
    float(x.sum())   # cupy float


def cupy_branch(x):
    if x[0] > 0:   # cupy branch
        pass


def cupy_upload(x):
    import cupy
    cupy.asarray(np.ones(4))   # cupy upload


@pytest.mark.parametrize("body, marker", [
    (cupy_get, "cupy get"), (cupy_float, "cupy float"), (cupy_branch, "cupy branch"),
    (cupy_upload, "cupy upload")])
def test_cupy_host_access_is_refused(cp, body, marker):
    @gt.graph
    def f(s, x, peek):
        if peek:
            body(x)
        inc[1, 4, s](x)
    x = cp.zeros(4, cp.float32)
    with pytest.raises(gt.HostSyncError) as e:
        f(x, True)
    assert e.value.source[1] == _line(marker), str(e.value)
    f(x, False)
    cp.cuda.Device().synchronize()
    assert x.get().tolist() == [1, 1, 1, 1]


def test_eager_cupy_work_inside_a_trace_is_refused(cp):
    @gt.graph
    def f(s, x, eager):
        if eager:
            x += 1          # a cupy kernel on cupy's stream, not in the graph
        inc[1, 4, s](x)
    x = cp.zeros(4, cp.float32)
    with pytest.raises(gt.HostSyncError, match="eagerly inside the trace"):
        f(x, True)
    f(x, False)
    cp.cuda.Device().synchronize()
    assert x.get().tolist() == [1, 1, 1, 1]   # the refused work never ran

"""A captured region on the simulator: numpy functions answering about device data
(np.dot, np.linalg.norm, np.allclose, np.argmax) answer with device views, as cupy
does, so turning the answer into a Python value in the region's own code is refused
as on a GPU; a selection whose size depends on the data (x[x > 0], np.nonzero,
np.unique), which cupy synchronises for, is refused too; numpy code a GPU runs on the
device keeps working."""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of

F = __file__
pytestmark = pytest.mark.filterwarnings("ignore::graphtrace.RetraceWarning")


def by_dot(A, b, y):
    if np.dot(b, b) > 1:   # dot
        y[...] = 1.0


def by_norm(A, b, y):
    if np.linalg.norm(b) > 1:   # norm
        y[...] = 1.0


def by_allclose(A, b, y):
    if np.allclose(A, A.T):   # allclose
        y[...] = 1.0


def by_det(A, b, y):
    y[...] = float(np.linalg.det(A))   # det


def by_trace(A, b, y):
    if np.trace(A) > 0:   # trace
        y[...] = 1.0


def by_count(A, b, y):
    n = np.count_nonzero(b > 0)
    y[:n] = 1.0   # count bound


def by_argmax(A, b, y):
    for i in range(np.argmax(b)):   # argmax range
        y[i] = 1.0


def by_method(A, b, y):
    if b.argmax() > 1:   # argmax method
        y[...] = 1.0


def by_mask(A, b, y):
    y[:2] = b[b > 0][:2]   # mask read


def by_nonzero(A, b, y):
    y[...] = np.nonzero(b)[0].sum()   # nonzero


def by_unique(A, b, y):
    y[...] = np.unique(b).sum()   # unique


def by_where_one(A, b, y):
    y[...] = np.where(b > 0)[0].sum()   # where one


@gt.graph
def run(s, A, b, y, region):
    s.captured(region, A, b, y, reads=[A, b], writes=[y])   # recorded


def arrays():
    return (cuda.to_device(np.eye(4) * 2 + 0.5), cuda.to_device(np.arange(4.0)),
            cuda.to_device(np.zeros(4)))


@pytest.mark.parametrize("region, marker, spelled", [
    (by_dot, "dot", "if x[0] > 0"), (by_norm, "norm", "if x[0] > 0"),
    (by_allclose, "allclose", "if x[0] > 0"), (by_det, "det", "float(...)"),
    (by_trace, "trace", "if x[0] > 0"), (by_count, "count bound", "a slice bound"),
    (by_argmax, "argmax range", "an index of a Python value"),
    (by_method, "argmax method", "if x[0] > 0")])
def test_a_numpy_functions_answer_turned_into_a_python_value_is_refused_at_its_line(
        region, marker, spelled):
    with pytest.raises(gt.CaptureError) as e:
        run(*arrays(), region, backend="sim")
    assert e.value.source == (F, line_of(F, marker))
    text = e.value.message
    assert f"reads device data on the host at test_region_sim_reads.py:" \
        f"{line_of(F, marker)} (" in text and spelled in text
    assert "Compute it on the device" in text


@pytest.mark.parametrize("region, marker, spelled", [
    (by_mask, "mask read", "a boolean mask selecting"), (by_nonzero, "nonzero", "np.nonzero"),
    (by_unique, "unique", "np.unique"), (by_where_one, "where one", "np.where")])
def test_a_selection_sized_by_the_data_is_refused_with_what_to_do(region, marker, spelled):
    with pytest.raises(gt.CaptureError) as e:
        run(*arrays(), region, backend="sim")
    assert e.value.source == (F, line_of(F, marker))
    text = e.value.message
    assert f"test_region_sim_reads.py:{line_of(F, marker)} ({spelled}" in text
    assert "the size of its result depends on the data" in text
    assert "y[x > 0] = 0" in text


def on_device(A, b, y):
    M = np.empty((4, 4))
    np.matmul(A, A, out=M)
    y[0] = np.linalg.det(A)
    y[1] = np.dot(b, b) + np.trace(M) * 0
    y[2] = np.argmax(b) + np.count_nonzero(b > 0)
    y[3] = np.where(np.allclose(A, A.T), 1.0, 0.0)
    y[...] += np.linalg.solve(A, b) - np.linalg.inv(A) @ b   # zero
    u, s, vt = np.linalg.svd(A)
    w, v = np.linalg.eigh(A)
    q, r = np.linalg.qr(A)
    y[...] += (u * s @ vt - A).sum() + (v * w @ v.T - A).sum() + (q @ r - A).sum()
    y[...] += np.linalg.lstsq(A, A @ b, rcond=None)[0] - b
    z = np.empty(4)
    np.cumsum(b, out=z)
    np.clip(z, 0, 1, out=z)
    z[b > 2] = 0
    z[np.array([3, 2])] += b[np.array([0, 1])]
    np.add.at(z, np.array([0, 0]), 1.0)
    y[...] += np.sort(-z) * 0 + np.take_along_axis(A, np.argsort(A, axis=1), axis=1)[0] * 0
    y[...] += np.sum(M, axis=0) * 0 + (np.linalg.matrix_power(A, 0) - np.eye(4)).sum(axis=1)
    y[...] += z * 10 + b[b.argmax()] * 100 + b[:A.shape[0]].sum() * 1000


def test_numpy_code_a_gpu_runs_on_the_device_keeps_working():
    A, b, y = arrays()
    run(A, b, y, on_device, backend="sim")
    A0, b0 = A.copy_to_host(), b.copy_to_host()
    want = np.array([np.linalg.det(A0), b0 @ b0, 3 + 3, 1.0])
    z = np.clip(np.cumsum(b0), 0, 1)
    z[b0 > 2] = 0
    z[[3, 2]] += b0[[0, 1]]
    z[0] += 2
    want += z * 10 + 300 + 6000
    np.testing.assert_allclose(y.copy_to_host(), want, atol=1e-9)


def scipy_region(A, b, y):
    import scipy.linalg
    y[...] = scipy.linalg.expm(A * 0).sum(axis=1)   # ones


def test_scipy_in_a_region_keeps_working():
    pytest.importorskip("scipy.linalg")
    A, b, y = arrays()
    run(A, b, y, scipy_region, backend="sim")
    np.testing.assert_allclose(y.copy_to_host(), np.ones(4))

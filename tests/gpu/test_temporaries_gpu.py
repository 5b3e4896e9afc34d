"""Graph-owned temporaries (s.empty, s.zeros) on a real GPU: numba, cupy and
cuda.core kernels, loop bodies, rebinding; each compared with an eager run."""
import numpy as np
import pytest

import graphtrace as gt
from helpers import line_of

cuda = pytest.importorskip("numba.cuda")
from temp_kernels import add, add2d, count, halve_into, scale  # noqa: E402

CUPY_SRC = r'''
extern "C" __global__ void twice(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * x[i];
}
extern "C" __global__ void add_into(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += x[i];
}
'''


def host(x):
    cuda.synchronize()
    return x.copy_to_host()


@gt.graph
def scaled_sum(s, x, y, a):
    t = s.empty(x.shape, np.float32)
    z = s.zeros(256, np.float32, name="z")
    scale[4, 256, s](x, a, t)
    add[4, 256, s](t, y)
    add[1, 256, s](t[1:257], z)
    add[1, 256, s](z, y[:256])


def eager_scaled_sum(x, y, a):
    t = np.float32(a) * x
    y += t
    y[:256] += t[1:257]


def test_numba_kernels_with_temporaries_match_eager_over_launches_and_rebinding(rng):
    xh, yh = rng.standard_normal(1000).astype(np.float32), np.zeros(1000, np.float32)
    x, y = cuda.to_device(xh), cuda.to_device(yh)
    for a in (2.0, 3.0, 0.5):               # z is zeroed in every launch
        scaled_sum(x, y, a)
        eager_scaled_sum(xh, yh, a)
    assert np.allclose(host(y), yh, rtol=1e-5)
    g = scaled_sum.compile(x, y, 1.0)
    where = [g.value_of(t).ptr for t in g.ir.temporaries]
    x2h = rng.standard_normal(1000).astype(np.float32)
    x2, y2 = cuda.to_device(x2h), cuda.to_device(np.zeros(1000, np.float32))
    scaled_sum(x2, y2, 2.0)                 # new arrays: rebound, not traced
    assert scaled_sum.cache_info().misses == 1
    assert [g.value_of(t).ptr for t in g.ir.temporaries] == where
    y2h = np.zeros(1000, np.float32)
    eager_scaled_sum(x2h, y2h, 2.0)
    assert np.allclose(host(y2), y2h, rtol=1e-5)
    assert np.allclose(host(y), yh, rtol=1e-5)   # the first arrays untouched


def test_two_dimensional_temporaries_and_views(rng):
    @gt.graph
    def f(s, x, y):
        t = s.zeros((48, 32), np.float32)
        add2d[(2, 2), (32, 32), s](x, t.T)        # t.T: an F-ordered view, x's shape
        add2d[(2, 2), (32, 32), s](t.reshape(32, 48), y)
    xh = rng.standard_normal((32, 48)).astype(np.float32)
    y = cuda.to_device(np.zeros((32, 48), np.float32))
    f(cuda.to_device(xh), y)
    f(cuda.to_device(xh), y)
    assert np.allclose(host(y), 2 * np.ascontiguousarray(xh.T).reshape(32, 48))


def test_cupy_and_cuda_core_kernels_take_temporaries(cp, rng):
    from cuda.core import Device, Program, ProgramOptions
    twice = cp.RawKernel(CUPY_SRC, "twice")
    dev = Device()
    dev.set_current()
    prog = Program(CUPY_SRC, "c++", ProgramOptions(arch=f"sm_{dev.arch}"))
    core = gt.kernel(prog.compile("cubin", name_expressions=("add_into",))
                     .get_kernel("add_into"), "in, inout, in", name="add_into")
    n = 1000

    @gt.graph
    def f(s, x, y):
        t = s.empty(n, np.float32, name="doubled")
        s.launch(twice, 4, 256, x, t, n)
        s.launch(core, 4, 256, t, y, np.int32(n))
    x = cp.asarray(rng.standard_normal(n), dtype=cp.float32)
    y0 = cp.asarray(rng.standard_normal(n), dtype=cp.float32)
    y = y0.copy()
    f(x, y)
    f(x, y)
    cp.cuda.get_current_stream().synchronize()
    cuda.synchronize()
    assert cp.allclose(y, y0 + 4 * x, rtol=1e-5)


@gt.graph
def halve_until(s, x, n, tol):
    with s.while_loop(gt.cond(x) > tol, max_iterations=1000) as body:
        t = body.zeros(1, np.float32, name="half")
        halve_into[1, 1, body](x, t)
        body.copy(x, t)
        count[1, 1, body](n)


def eager_halvings(x, tol):
    n = 0
    while x > tol:
        x, n = x / 2, n + 1
    return x, n


def test_a_temporary_in_a_while_loop_body(rng):
    for start, tol in ((100.0, 1.0), (64.0, 10.0), (0.5, 1.0)):
        x = cuda.to_device(np.array([start], np.float32))
        n = cuda.to_device(np.zeros(1, np.int32))
        halve_until(x, n, tol)
        assert (float(host(x)[0]), int(host(n)[0])) == eager_halvings(start, tol)
    assert halve_until.cache_info().misses == 1


def test_a_temporary_as_a_loop_condition():
    @gt.graph
    def f(s, x, n):
        left = s.empty(1, np.float32, name="left")
        s.copy(left, x)
        with s.while_loop(gt.cond(left) > 1, max_iterations=100) as body:
            halve_into[1, 1, body](left, left)
            count[1, 1, body](n)
    n = cuda.to_device(np.zeros(1, np.int32))
    f(cuda.to_device(np.array([16.0], np.float32)), n)
    assert int(host(n)[0]) == 4


def test_an_eager_launch_of_a_temporary_after_its_trace_is_refused_at_its_line():
    made = []

    @gt.graph
    def f(s):
        made.append(s.empty(4))
    with pytest.raises(gt.TraceError):
        f.trace()
    with pytest.raises(gt.TraceError) as e:
        scale[1, 4](cuda.to_device(np.ones(4)), 1.0, made[0])   # late-launch
    assert e.value.source[1] == line_of(__file__, "late-launch")
    assert "used after the trace" in str(e.value)


@gt.graph
def pipeline(s, x, y, a):
    """Two branches of chained temporaries: within a branch they share bytes,
    across branches they must not."""
    left, right = x, x
    for _ in range(6):
        t, u = s.empty(x.shape, np.float32), s.empty(x.shape, np.float32)
        scale[4, 256, s](left, a, t)
        scale[4, 256, s](right, 0.5, u)
        left, right = t, u
    add[4, 256, s](left, y)
    add[4, 256, s](right, y)


def test_temporaries_sharing_bytes_match_eager_over_many_launches(rng):
    xh = rng.standard_normal(1024).astype(np.float32)
    x, y = cuda.to_device(xh), cuda.to_device(np.zeros(1024, np.float32))
    g = pipeline.compile(x, y, 1.5)
    spans = {g.value_of(t).ptr for t in g.ir.temporaries}
    assert len(spans) == 4          # 12 temporaries in 4 places: 2 per branch
    for _ in range(20):             # launches back to back, no host wait between
        pipeline(x, y, 1.5)
    expected = 20 * (np.float32(1.5) ** 6 * xh + np.float32(0.5) ** 6 * xh)
    np.testing.assert_allclose(host(y), expected, rtol=1e-5)


@cuda.jit
def _inc1(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = x[i] + 1


def test_views_of_an_empty_temporary_run_on_the_gpu():
    @gt.graph
    def f(s, a, out):
        t = s.empty(4, np.float32)
        s.copy(t, a)
        e = s.empty(0, np.uint8)
        _inc1[1, 1, s](e[:])
        _inc1[1, 4, s](t)
        s.copy(out, t)
    a = cuda.to_device(np.arange(4, dtype=np.float32))
    for _ in range(2):
        out = cuda.to_device(np.zeros(4, np.float32))
        f(a, out)
        assert host(out).tolist() == [1.0, 2.0, 3.0, 4.0]

"""The intent check on a real GPU (``check_intents=True``), for kernels the
simulator cannot run: cupy RawKernels and cuda.core kernels."""
import numpy as np
import pytest

import graphtrace as gt
from graphtrace.debug import CheckedGraph
from helpers import line_of
from step_kernels import scale

cuda = pytest.importorskip("numba.cuda")

SRC = r'''
extern "C" __global__ void cast_away(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { y[i] = x[i] + 1.0f; ((float*)x)[i] = 0.0f; }
}
extern "C" __global__ void clobber(float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { y[i] = x[i]; x[i] = -1.0f; }
}
extern "C" __global__ void plus_one(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}
extern "C" __global__ void maybe_clear(const float* x, float* y, int n, int clear) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { y[i] = x[i] + 1.0f; if (clear) ((float*)x)[i] = 0.0f; }
}
'''


@cuda.jit
def sneaky(x, y):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = y[i]


@cuda.jit
def double_into(src, dst):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = 2 * src[i]


def sync(cp):
    cp.cuda.get_current_stream().synchronize()
    cuda.synchronize()


def test_cupy_kernel_writing_a_const_pointer_names_kernel_parameter_and_line(cp):
    k = cp.RawKernel(SRC, "cast_away")

    @gt.graph(check_intents=True)
    def f(s, x, y):
        s.launch(k, 4, 256, x, y, 1000)          # cast_away
    x, y = cp.arange(1000, dtype=cp.float32), cp.zeros(1000, cp.float32)
    with pytest.raises(gt.IntentError) as e:
        f(x, y)
    assert e.value.source[1] == line_of(__file__, "cast_away")
    assert "kernel cast_away wrote to x (parameter x): 999 of its 1000 elements changed, " \
           "the first at index 1" in str(e.value)      # x[0] was 0 already
    assert "gt.InOut" in str(e.value) and "gt.kernel" in str(e.value)


def test_cuda_core_kernel_declared_in_that_writes_is_named(cp):
    from cuda.core import Device, Program, ProgramOptions
    dev = Device()
    dev.set_current()
    prog = Program(SRC, "c++", ProgramOptions(arch=f"sm_{dev.arch}"))
    kern = prog.compile("cubin", name_expressions=("clobber",)).get_kernel("clobber")
    k = gt.kernel(kern, "in, out, in", name="clobber")

    @gt.graph(check_intents=True)
    def f(s, x, y):
        s.launch(k, 2, 256, x, y, np.int32(512))   # clobber
    x, y = cp.ones(512, cp.float32), cp.zeros(512, cp.float32)
    with pytest.raises(gt.IntentError) as e:
        f(x, y)
    assert e.value.source[1] == line_of(__file__, "clobber")
    assert "kernel clobber wrote to x (parameter #0): 512 of its 512 elements" in str(e.value)


def test_numba_argument_wrapped_in_gt_in_that_is_written_is_named(cp):
    @gt.graph(check_intents=True)
    def f(s, x, y):
        sneaky[4, 256, s](gt.In(x), y)          # sneaky
    with pytest.raises(gt.IntentError) as e:
        f(cp.zeros(1000), cp.ones(1000))
    assert e.value.source[1] == line_of(__file__, "sneaky")
    assert "kernel sneaky wrote to x (parameter x): 1000 of its 1000" in str(e.value)


def test_the_environment_variable_turns_the_check_on(cp, monkeypatch):
    monkeypatch.setenv("GRAPHTRACE_CHECK_INTENTS", "1")
    k = cp.RawKernel(SRC, "cast_away")

    @gt.graph
    def f(s, x, y):
        s.launch(k, 4, 256, x, y, 1000)
    with pytest.raises(gt.IntentError, match="kernel cast_away wrote to x"):
        f(cp.ones(1000, cp.float32), cp.zeros(1000, cp.float32))


def test_a_correct_graph_passes_and_gives_the_eager_result(cp, rng):
    plus_one = cp.RawKernel(SRC, "plus_one")
    x0 = rng.standard_normal(1000).astype(np.float32)
    seen = []

    @gt.graph(check_intents=True)
    def f(s, x, tmp, y, h, a):
        scale[4, 256, s](x, a, tmp)
        s.launch(plus_one, 4, 256, tmp, y, 1000)
        s.memset(x[:10], 0)
        s.copy(h, y)
        s.host(lambda h: seen.append(float(h.sum())), gt.In(h))
    x, tmp, y = cp.asarray(x0), cp.zeros(1000, cp.float32), cp.zeros(1000, cp.float32)
    h = gt.pinned_empty(1000, np.float32)
    f(x, tmp, y, h, 2.0)
    assert isinstance(f.compile(x, tmp, y, h, 2.0).compiled, CheckedGraph)

    xe, tmpe, ye = cp.asarray(x0), cp.zeros(1000, cp.float32), cp.zeros(1000, cp.float32)
    scale[4, 256](xe, 2.0, tmpe)
    cuda.synchronize()
    plus_one((4,), (256,), (tmpe, ye, np.int32(1000)))
    xe[:10] = 0
    sync(cp)
    assert cp.array_equal(x, xe) and cp.array_equal(tmp, tmpe) and cp.array_equal(y, ye)
    assert np.array_equal(h, ye.get()) and seen == [float(h.sum())]
    assert float(cp.abs(ye).sum()) > 0


def test_interleaved_views_of_one_array_are_not_a_false_alarm(cp, rng):
    x0, m0 = rng.standard_normal(2000), rng.standard_normal((300, 3))

    @gt.graph(check_intents=True)
    def f(s, x, m):
        double_into[4, 256, s](x[::2], x[1::2])      # reads evens, writes odds
        double_into[4, 256, s](x[1::2], x[::2])      # and back
        double_into[2, 256, s](m[:, 0], m[:, 2])     # columns of one matrix
    x, m = cp.asarray(x0), cp.asarray(m0)
    f(x, m)
    e, em = x0.copy(), m0.copy()
    e[1::2] = 2 * e[::2]
    e[::2] = 2 * e[1::2]
    em[:, 2] = 2 * em[:, 0]
    sync(cp)
    assert np.array_equal(x.get(), e) and np.array_equal(m.get(), em)


def test_rebinding_checks_the_new_arrays_and_scalars(cp):
    k = cp.RawKernel(SRC, "maybe_clear")

    @gt.graph(check_intents=True)
    def f(s, x, y, clear):
        s.launch(k, 4, 256, x, y, 1000, clear)   # maybe_clear
    x1, y1 = cp.arange(1, 1001, dtype=cp.float32), cp.zeros(1000, cp.float32)
    x2, y2 = x1 * 2, cp.zeros(1000, cp.float32)
    f(x1, y1, 0)
    f(x2, y2, 0)
    sync(cp)
    assert cp.array_equal(y1, x1 + 1) and cp.array_equal(y2, x2 + 1)
    with pytest.raises(gt.IntentError) as e:
        f(x2, y1, 1)
    assert e.value.source[1] == line_of(__file__, "maybe_clear")
    assert "wrote to x (parameter x): 1000 of its 1000 elements" in str(e.value)
    assert f.cache_info().misses == 1 and f.cache_info().hits == 2
    assert float(x1.sum()) == 500500          # the first binding's array is untouched


@cuda.jit
def bump(k, x):
    i = cuda.grid(1)
    if i == 0:
        k[0] += 1
    if i < x.size:
        x[i] += 1.0


def test_a_loop_after_two_nodes_runs_alone_without_them():
    """Each node runs as a one-node graph: a loop's emit must not look for the
    two nodes before it, which are not in that graph."""
    @gt.graph(check_intents=True)
    def f(s, x, k):
        double_into[1, 64, s](x, x)
        s.memset(k, 0)
        with s.while_loop(gt.cond(k) < 3, max_iterations=10) as body:
            bump[1, 64, body](k, x)
    x0 = np.arange(64.0)
    x, k = cuda.to_device(x0), cuda.to_device(np.zeros(1, np.int32))
    assert len(f.trace(x, k).nodes[2].deps) == 2
    f(x, k)
    cuda.synchronize()
    assert k.copy_to_host()[0] == 3 and np.array_equal(x.copy_to_host(), 2 * x0 + 3)

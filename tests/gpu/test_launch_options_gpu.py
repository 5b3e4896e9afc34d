"""Launch spellings and launch options on a real GPU: results equal eager launches.

cuda.core's ``launch`` spelling with each kind of kernel, thread block clusters,
100 KB of dynamic shared memory, cooperative launches with grid-wide sync,
numba's forall, signatures and compile options, cupy's templated module
functions, and the errors for library code handed a proxy stream.
"""
import numpy as np
import pytest

import graphtrace as gt
from cuda.core import Device, Kernel, LaunchConfig, Program, ProgramOptions, launch
from helpers import line_of

cuda = pytest.importorskip("numba.cuda")
from numba import float32  # noqa: E402

F = __file__


def sync():
    Device().sync()


def core_kernel(src, name):
    """A cuda.core ``Kernel`` compiled for this GPU."""
    dev = Device()
    dev.set_current()
    prog = Program(src, "c++", ProgramOptions(arch=f"sm_{dev.arch}"))
    return prog.compile("cubin", name_expressions=(name,)).get_kernel(name)


def eager_stream():
    """cuda.core's launch needs a stream: the legacy default one, which cupy's and
    numba's default streams are too."""
    return Device().default_stream


def ptr(a):
    return a.__cuda_array_interface__["data"][0]


def need_sm90():
    if tuple(Device().compute_capability) < (9, 0):
        pytest.skip("thread block clusters need compute capability 9.0")


# --- cuda.core's spelling, each kind of kernel ----------------------------------------
AXPY_SRC = r'''
extern "C" __global__ void axpy_c(const float* x, float a, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
'''


@cuda.jit
def axpy_n(x, a, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]


@pytest.mark.parametrize("spelling", ["cuda.core", "gt", "stream"])
def test_cuda_core_spelling_with_each_kernel_kind_matches_eager(cp, rng, spelling):
    n = 1000
    raw = cp.RawKernel(AXPY_SRC, "axpy_c")
    core = core_kernel(AXPY_SRC, "axpy_c")
    declared = gt.kernel(core, "in, in, inout, in", name="axpy_c")
    cfg = LaunchConfig(grid=4, block=256)

    def go(s, k, *args):
        if spelling == "cuda.core":
            return launch(s, cfg, k, *args)
        if spelling == "gt":
            return gt.launch(s, cfg, k, *args)
        return s.launch(k, cfg, *args)

    @gt.graph
    def f(s, x, a, y1, y2, y3):
        go(s, axpy_n, x, a, y1)
        go(s, raw, x, a, y2, n)
        go(s, declared, x, a, y3, np.int32(n))

    for _ in range(2):   # the second call rebinds new arrays
        x = cp.asarray(rng.standard_normal(n), dtype=cp.float32)
        ys = [cp.asarray(rng.standard_normal(n), dtype=cp.float32) for _ in range(3)]
        eager = [y.copy() for y in ys]
        a = np.float32(rng.standard_normal())
        f(x, a, *ys)
        sync()
        axpy_n[4, 256](x, a, eager[0])
        raw((4,), (256,), (x, a, eager[1], np.int32(n)))
        launch(eager_stream(), cfg, core, x.data.ptr, a, eager[2].data.ptr, np.int32(n))
        sync()
        for got, want in zip(ys, eager):
            assert cp.array_equal(got, want)
        assert not cp.array_equal(ys[0], x)   # the kernels ran
    assert f.cache_info().misses == 1


# --- thread block clusters --------------------------------------------------------------
CLUSTER_SRC = r'''
extern "C" __global__ void cluster_rank(int* rank, int* cluster) {
    unsigned r, c;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(c));
    if (threadIdx.x == 0) { rank[blockIdx.x] = r; cluster[blockIdx.x] = c; }
}
'''


def test_cluster_launches_match_eager_and_survive_rebinding(cp):
    need_sm90()
    k = cp.RawKernel(CLUSTER_SRC, "cluster_rank")

    @gt.graph
    def f(s, r2, c2, r4, c4):
        s.launch(k, 8, 64, r2, c2, cluster=(2, 1, 1))                   # blocks, by 2
        launch(s, LaunchConfig(grid=2, cluster=4, block=64), k, r4, c4)  # clusters of 4

    def arrays():
        return [cp.full(8, -1, dtype=cp.int32) for _ in range(4)]

    got = arrays()
    g = f.compile(*got)
    assert "cluster=(2,1,1)" in str(g.ir) and "cluster=(4,1,1)" in str(g.ir)
    want = arrays()
    handle = Kernel.from_handle(k.kernel.ptr)
    launch(eager_stream(), LaunchConfig(grid=4, cluster=2, block=64), handle, *(
        a.data.ptr for a in want[:2]))
    launch(eager_stream(), LaunchConfig(grid=2, cluster=4, block=64), handle, *(
        a.data.ptr for a in want[2:]))
    sync()
    assert want[0].tolist() == [0, 1] * 4 and want[1].tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    assert want[2].tolist() == [0, 1, 2, 3] * 2 and want[3].tolist() == [0] * 4 + [1] * 4
    for route in (None, "node", "whole"):
        if route is not None:     # the cluster dimensions stay with new arguments
            got = arrays()
            g.rebind(got, [ptr(a) for a in got], [], route=route)
        g.launch()
        sync()
        for a, b in zip(got, want):
            assert cp.array_equal(a, b), route


CG_CLUSTER_SRC = r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void cg_rank(int* rank) {
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0) rank[blockIdx.x] = cluster.block_rank();
}
'''


def test_cooperative_groups_cluster_block_rank(cp):
    need_sm90()
    k = cp.RawKernel(CG_CLUSTER_SRC, "cg_rank", options=("-std=c++17",))
    try:
        k.compile()
    except cp.cuda.compiler.CompileException as e:
        if "cooperative_groups" not in str(e):
            raise
        pytest.skip("NVRTC finds no cooperative_groups.h here (no CUDA headers)")

    @gt.graph
    def f(s, rank):
        s.launch(k, 12, 32, rank, cluster=3)
    rank = cp.full(12, -1, dtype=cp.int32)
    f(rank)
    sync()
    assert rank.tolist() == [0, 1, 2] * 4


# --- dynamic shared memory above 48 KB --------------------------------------------------
N_SHARED = 25_000            # floats: 100,000 bytes of dynamic shared memory per block


@cuda.jit
def reverse_in_shared(x, out):
    buf = cuda.shared.array(0, float32)
    base = cuda.blockIdx.x * N_SHARED
    for j in range(cuda.threadIdx.x, N_SHARED, cuda.blockDim.x):
        buf[j] = x[base + j]
    cuda.syncthreads()
    for j in range(cuda.threadIdx.x, N_SHARED, cuda.blockDim.x):
        out[base + j] = buf[N_SHARED - 1 - j]


SHARED_SRC = r'''
extern "C" __global__ void reverse_shared(const float* x, float* out, int n) {
    extern __shared__ float buf[];
    int base = blockIdx.x * n;
    for (int j = threadIdx.x; j < n; j += blockDim.x) buf[j] = x[base + j];
    __syncthreads();
    for (int j = threadIdx.x; j < n; j += blockDim.x) out[base + j] = buf[n - 1 - j];
}
'''


def test_100_kb_of_dynamic_shared_memory_for_each_kind_of_kernel(cp, rng):
    nbytes = N_SHARED * 4
    raw = cp.RawKernel(SHARED_SRC, "reverse_shared")
    core = gt.kernel(core_kernel(SHARED_SRC, "reverse_shared"), "in, out, in", name="core_rev")
    x = cp.asarray(rng.standard_normal(4 * N_SHARED), dtype=cp.float32)
    want = x.reshape(4, N_SHARED)[:, ::-1].ravel()

    @gt.graph
    def f(s, x, o1, o2, o3, o4):
        reverse_in_shared[4, 256, s, nbytes](x, o1)
        s.launch(reverse_in_shared, 4, 256, x, o2, shared_mem=nbytes)
        s.launch(raw, 4, 256, x, o3, N_SHARED, shared_mem=nbytes)
        s.launch(core, LaunchConfig(grid=4, block=256, shmem_size=nbytes), x, o4,
                 np.int32(N_SHARED))
    outs = [cp.zeros_like(x) for _ in range(4)]
    g = f.trace(x, *outs)
    assert all(f"shared_mem={nbytes}" in line for line in str(g).splitlines()[1:])
    f(x, *outs)
    sync()
    for o in outs:
        assert cp.array_equal(o, want)
    # eager launches of the same kernels now find their limit raised by the graph
    eager = [cp.zeros_like(x) for _ in range(3)]
    reverse_in_shared[4, 256, 0, nbytes](x, eager[0])
    raw((4,), (256,), (x, eager[1], np.int32(N_SHARED)), shared_mem=nbytes)
    launch(eager_stream(), LaunchConfig(grid=4, block=256, shmem_size=nbytes), core.kernel,
           x.data.ptr, eager[2].data.ptr, np.int32(N_SHARED))
    sync()
    for o in eager:
        assert cp.array_equal(o, want)


# --- cooperative launches ----------------------------------------------------------------
@cuda.jit
def normalize(x, partial, out):
    """out = x / sum(x): each thread sums a strided part, the grid syncs, thread 0
    adds the parts in order (so the result is deterministic), the grid syncs again."""
    grid = cuda.cg.this_grid()
    i, stride = cuda.grid(1), cuda.gridsize(1)
    acc = 0.0
    for j in range(i, x.size, stride):
        acc += x[j]
    partial[i] = acc
    grid.sync()
    if i == 0:
        total = 0.0
        for j in range(stride):
            total += partial[j]
        partial[stride] = total
    grid.sync()
    for j in range(i, x.size, stride):
        out[j] = x[j] / partial[stride]


def test_cooperative_numba_reduction_matches_eager_and_survives_rebinding(rng):
    blocks, threads = 8, 128
    n = 50_000

    @gt.graph
    def f(s, x, partial, out, partial2, out2):
        s.launch(normalize, blocks, threads, x, partial, out, cooperative=True)
        launch(s, LaunchConfig(grid=blocks, block=threads, is_cooperative=True), normalize,
               x, partial2, out2)

    def arrays():
        x = cuda.to_device(rng.random(n))
        return x, [cuda.to_device(np.zeros(m)) for m in (blocks * threads + 1, n) * 2]

    x, rest = arrays()
    g = f.compile(x, *rest)
    assert all(line.split("  ")[1].endswith("cooperative") for line in str(g.ir).splitlines()[1:])
    assert [d.index for d in g.ir.nodes[1].deps] == [0]   # one at a time: no data orders them
    for route in (None, "node", "whole"):
        if route is not None:
            x, rest = arrays()
            objs = [x, *rest]
            g.rebind(objs, [ptr(a) for a in objs], [], route=route)
        g.launch()
        cuda.synchronize()
        want_partial, want = cuda.to_device(np.zeros(blocks * threads + 1)), \
            cuda.to_device(np.zeros(n))
        normalize[blocks, threads](x, want_partial, want)    # numba launches it cooperatively
        cuda.synchronize()
        for got in (rest[1], rest[3]):
            assert np.array_equal(got.copy_to_host(), want.copy_to_host()), route
        assert np.isclose(rest[1].copy_to_host().sum(), 1.0)


def test_a_cooperative_grid_that_cannot_fit_is_refused_at_the_launch_line():
    @gt.graph
    def f(s, x, partial, out):
        s.launch(normalize, 1_000_000, 1024, x, partial, out, cooperative=True)  # toolarge
    x, partial, out = (cuda.to_device(np.zeros(16)) for _ in range(3))
    with pytest.raises(gt.EmitError) as e:
        f(x, partial, out)
    assert e.value.source[1] == line_of(F, "toolarge")
    assert "whole grid on the GPU at once" in str(e.value)


def test_a_grid_syncing_numba_kernel_without_the_option_runs_cooperatively_as_eagerly(rng):
    @gt.graph
    def f(s, x, partial, out):
        normalize[2, 32, s](x, partial, out)                 # nocoop
    x = cuda.to_device(rng.random(65))
    partial, out = cuda.to_device(np.zeros(65)), cuda.to_device(np.zeros(65))
    want_partial, want = cuda.to_device(np.zeros(65)), cuda.to_device(np.zeros(65))
    f(x, partial, out)
    cuda.synchronize()
    normalize[2, 32](x, want_partial, want)                  # numba launches it cooperatively
    cuda.synchronize()
    assert np.array_equal(out.copy_to_host(), want.copy_to_host())
    assert f.trace(x, partial, out).nodes[0].attrs["cooperative"]

    @gt.graph
    def g(s, x, partial, out):
        s.launch(normalize, 2, 32, x, partial, out, cooperative=False)   # saidnot
    with pytest.raises(gt.KernelArgumentError) as e:
        g(x, partial, out)
    assert e.value.source[1] == line_of(F, "saidnot")
    assert "cooperative=True" in str(e.value)


# --- numba's spellings and compile options -----------------------------------------------
@cuda.jit
def fill(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v + i


def typed_axpy_py(x, a, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + out[i]


def typed_axpy():
    """A kernel compiled for one signature (when the test runs, not at collection)."""
    return cuda.jit("void(float32[:], float32, float32[:])")(typed_axpy_py)


@cuda.jit(fastmath=True)
def fast_rsqrt(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = 1.0 / (x[i] ** 0.5)


def plus_one(x, out):   # compiled with lineinfo=True in the test (the simulator has none)
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] + 1


@cuda.jit(debug=True, opt=False)
def checked_copy(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i]


def test_numba_forall_signatures_and_options_match_eager(rng):
    n = 3000
    x = cuda.to_device(rng.random(n).astype(np.float32) + 0.5)
    with_lines = cuda.jit(lineinfo=True)(plus_one)
    typed = typed_axpy()

    @gt.graph
    def f(s, x, v, a, filled, axpy, rs, inc, copied):
        fill.forall(filled.size, stream=s)(filled, v)
        typed[12, 256, s](x, a, axpy)               # a Python float, the signature's float32
        fast_rsqrt[12, 256, s](x, rs)
        s.launch(with_lines, 12, 256, x, inc)
        s.launch(checked_copy, 12, 256, x, copied)  # debugcopy
    outs = [cuda.to_device(np.zeros(n, np.float32)) for _ in range(5)]
    with pytest.warns(UserWarning, match="debug=True") as record:
        f(x, 2.0, 1.5, *outs)
    assert [w.lineno for w in record if "debug=True" in str(w.message)] == \
        [line_of(F, "debugcopy")]
    want = [cuda.to_device(np.zeros(n, np.float32)) for _ in range(5)]
    fill.forall(n)(want[0], 2.0)
    typed[12, 256](x, 1.5, want[1])
    fast_rsqrt[12, 256](x, want[2])
    with_lines[12, 256](x, want[3])
    checked_copy[12, 256](x, want[4])
    cuda.synchronize()
    for got, w in zip(outs, want):
        assert np.array_equal(got.copy_to_host(), w.copy_to_host())
    assert outs[0].copy_to_host()[5] == 7.0


def test_arguments_a_signature_does_not_take_are_refused_at_the_launch_line():
    typed = typed_axpy()

    @gt.graph
    def f(s, x, out):
        typed[1, 32, s](x, 1.0, out)                         # wrongtypes
    x, out = cuda.to_device(np.zeros(32)), cuda.to_device(np.zeros(32))   # float64
    with pytest.raises(gt.EmitError) as e:
        f(x, out)
    assert e.value.source[1] == line_of(F, "wrongtypes")
    assert "fit none of them" in str(e.value)


# --- cupy's templated module functions ----------------------------------------------------
TEMPLATED = r'''
template<typename T>
__global__ void axpy_t(const T* x, T a, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}
'''


def test_templated_module_functions_by_name_expression(cp, rng):
    n = 1000
    mod = cp.RawModule(code=TEMPLATED, name_expressions=["axpy_t<float>", "axpy_t<double>"])
    kf, kd = mod.get_function("axpy_t<float>"), mod.get_function("axpy_t<double>")

    @gt.graph
    def f(s, xf, yf, xd, yd, a):
        s.launch(kf, 4, 256, xf, a, yf, n)
        launch(s, LaunchConfig(grid=4, block=256), kd, xd, a, yd, n)
    xd = cp.asarray(rng.standard_normal(n))
    xf = xd.astype(cp.float32)
    yd = cp.asarray(rng.standard_normal(n))
    yf = yd.astype(cp.float32)
    want_f, want_d = yf.copy(), yd.copy()
    listing = str(f.trace(xf, yf, xd, yd, 0.5))
    assert "axpy_t<float>[4, 256]" in listing and "axpy_t<double>[4, 256]" in listing
    f(xf, yf, xd, yd, 0.5)
    kf((4,), (256,), (xf, np.float32(0.5), want_f, np.int32(n)))
    kd((4,), (256,), (xd, np.float64(0.5), want_d, np.int32(n)))
    sync()
    assert cp.array_equal(yf, want_f) and cp.array_equal(yd, want_d)


# --- library code handed a proxy stream -------------------------------------------------
def test_cupy_calls_on_a_proxy_stream_name_the_spellings_to_use(cp):
    raw = cp.RawKernel(AXPY_SRC, "axpy_c")
    double = cp.ElementwiseKernel("float32 x", "float32 y", "y = 2 * x", "double_it")
    x, y = cp.ones(32, dtype=cp.float32), cp.zeros(32, dtype=cp.float32)

    @gt.graph
    def raw_call(s, x, y):
        raw((1,), (32,), (x, np.float32(1), y, np.int32(32)), stream=s)   # rawcall

    @gt.graph
    def elementwise(s, x, y):
        double(x, y, stream=s)                                             # elementwise

    @gt.graph
    def external(s, x, y):
        ext = cp.cuda.ExternalStream(s)                                    # external
        with ext:                                                          # externaluse
            y[...] = x

    for fn, markers in ((raw_call, ["rawcall"]), (elementwise, ["elementwise"]),
                        (external, ["external", "externaluse"])):
        with pytest.raises(gt.StreamError) as e:
            fn(x, y)
        assert e.value.source[1] in [line_of(F, m) for m in markers], str(e.value)
        assert "s.captured(fn, *args)" in str(e.value) and "s.launch(" in str(e.value)
    sync()
    assert cp.all(y == 0)   # nothing ran


def test_torch_on_a_proxy_stream_names_the_spellings_to_use():
    torch = pytest.importorskip("torch")
    x = torch.ones(8, device="cuda")

    @gt.graph
    def on_stream(s, x):
        with torch.cuda.stream(s):                                         # torchstream
            x.add_(1)

    @gt.graph
    def external(s, x):
        torch.cuda.ExternalStream(s)                                       # torchexternal

    for fn, marker in ((on_stream, "torchstream"), (external, "torchexternal")):
        with pytest.raises(gt.StreamError) as e:
            fn(x)
        assert e.value.source[1] == line_of(F, marker), str(e.value)
        assert "s.captured(fn, *args)" in str(e.value)
    torch.cuda.synchronize()
    assert x.tolist() == [1.0] * 8


def test_a_launch_configured_before_the_trace_is_refused_inside_it():
    configured, by_call = fill[1, 32], fill.configure(1, 32)

    @gt.graph
    def f(s, x):
        configured(x, 1.0)                                                 # preconfigured

    @gt.graph
    def g(s, x):
        by_call(x, 1.0)                                                    # byconfigure
    x = cuda.to_device(np.zeros(8, np.float32))
    for fn, marker in ((f, "preconfigured"), (g, "byconfigure")):
        with pytest.raises(gt.StreamError) as e:
            fn(x)
        assert e.value.source[1] == line_of(__file__, marker)
        assert "configured before the trace" in str(e.value)
    sync()
    assert x.copy_to_host().tolist() == [0.0] * 8
    configured(x, 2.0)   # outside a trace: runs as before
    sync()
    assert x.copy_to_host().tolist() == [2.0 + i for i in range(8)]

"""Kernels from numba, cupy and cuda.core in real graphs: results equal eager runs."""
import numpy as np
import pytest

import graphtrace as gt
from helpers import line_of

numba_cuda = pytest.importorskip("numba.cuda")
cuda = numba_cuda


@cuda.jit
def axpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def add2d(x, y):
    i, j = cuda.grid(2)
    if i < x.shape[0] and j < x.shape[1]:
        y[i, j] += x[i, j] * 2


@cuda.jit
def add3d(x, y):
    i, j, k = cuda.grid(3)
    if i < x.shape[0] and j < x.shape[1] and k < x.shape[2]:
        y[i, j, k] = x[i, j, k] + i - j + k


@cuda.jit
def scalars(out, i8, u8, i16, u16, i32, u32, i64, u64, f16, f32, f64, c64, c128, flag, tup):
    if cuda.grid(1) == 0:
        out[0] = i8
        out[1] = u8
        out[2] = i16
        out[3] = u16
        out[4] = i32
        out[5] = u32
        out[6] = i64
        out[7] = u64
        out[8] = f16
        out[9] = f32
        out[10] = f64
        out[11] = c64.real + c64.imag * 10
        out[12] = c128.real - c128.imag
        out[13] = 1 if flag else -1
        out[14] = tup[0] + tup[1] * 100


def dev(a):
    return cuda.to_device(np.ascontiguousarray(a))


def test_numba_1d_matches_eager(rng):
    x, y = rng.standard_normal(1000), rng.standard_normal(1000)
    out_g, out_e = dev(np.zeros(1000)), dev(np.zeros(1000))

    @gt.graph
    def f(s, a, x, y, out):
        axpy[4, 256, s](a, x, y, out)
    f(1.5, dev(x), dev(y), out_g)
    axpy[4, 256](1.5, dev(x), dev(y), out_e)
    cuda.synchronize()
    assert np.array_equal(out_g.copy_to_host(), out_e.copy_to_host())
    assert np.abs(out_e.copy_to_host()).sum() > 0


def test_numba_2d_3d_and_non_contiguous(rng):
    x2 = rng.standard_normal((40, 30)).astype(np.float32)
    y2 = rng.standard_normal((40, 30)).astype(np.float32)
    xf = np.asfortranarray(rng.standard_normal((30, 40)))
    x3 = rng.standard_normal((6, 7, 8))
    dx2, dy2g, dy2e = dev(x2), dev(y2), dev(y2)
    dxf = cuda.to_device(xf)                          # F-order
    dyfg, dyfe = cuda.to_device(np.asfortranarray(xf * 0)), cuda.to_device(np.asfortranarray(xf * 0))
    dx3, dy3g, dy3e = dev(x3), dev(np.zeros_like(x3)), dev(np.zeros_like(x3))

    @gt.graph
    def f(s, x2, y2, xf, yf, x3, y3):
        add2d[(5, 4), (8, 8), s](xf, yf)
        add2d[(5, 4), (8, 8), s](x2[::2], y2[1::2])    # strided rows
        add2d[(5, 4), (8, 8), s](x2[:, ::3], y2[:, 1::3])   # strided columns
        add3d[(1, 1, 1), (6, 7, 8), s](x3, y3)
    f(dx2, dy2g, dxf, dyfg, dx3, dy3g)
    add2d[(5, 4), (8, 8)](dxf, dyfe)
    add2d[(5, 4), (8, 8)](dx2[::2], dy2e[1::2])
    add2d[(5, 4), (8, 8)](dx2[:, ::3], dy2e[:, 1::3])
    add3d[(1, 1, 1), (6, 7, 8)](dx3, dy3e)
    cuda.synchronize()
    assert np.array_equal(dy2g.copy_to_host(), dy2e.copy_to_host())
    assert np.array_equal(dy3g.copy_to_host(), dy3e.copy_to_host())
    assert np.array_equal(dyfg.copy_to_host(), dyfe.copy_to_host())
    assert np.abs(dyfe.copy_to_host()).sum() > 0


def test_numba_every_scalar_type():
    vals = (np.int8(-7), np.uint8(200), np.int16(-3000), np.uint16(60000), np.int32(-7),
            np.uint32(4_000_000_000), -(2**40), np.uint64(2**50), np.float16(1.5),
            np.float32(2.25), 3.125, np.complex64(1 + 2j), 3 - 4j, True, (5, 6))
    out_g, out_e = dev(np.zeros(15)), dev(np.zeros(15))

    @gt.graph
    def f(s, out, *v):
        scalars[1, 32, s](out, *v)
    f(out_g, *vals)
    scalars[1, 32](out_e, *vals)
    cuda.synchronize()
    got = out_g.copy_to_host()
    assert np.array_equal(got, out_e.copy_to_host())
    assert got[5] == 4_000_000_000 and got[11] == 21.0 and got[14] == 605


def test_flattening_matches_numbas_own(rng):
    from graphtrace.ops._numba import flatten
    from graphtrace.arrays import as_buffer
    x = dev(rng.standard_normal((4, 6)))[:, 1:5]
    args = (x, dev(np.zeros((8, 4)))[::2])
    k = add2d.compile(tuple(add2d.typeof_pyval(a) for a in args))
    theirs, ours = [], []
    for ty, v in zip(k.argument_types, args):
        k._prepare_args(ty, v, 0, [], theirs)
        flatten(ty, as_buffer(v) if hasattr(v, "__cuda_array_interface__") else v,
                lambda b: b, ours)
    as_int = lambda v: v.value if hasattr(v, "value") else v  # ctypes -> number
    assert [as_int(v) for v in ours] == [as_int(v) for v in theirs]


CUPY_SRC = r'''
extern "C" __global__ void saxpy(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void scale_d(const double* __restrict__ x, double* out, double s,
                                   unsigned short k, long long n) {
    long long i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] * s + k;
}
'''


def test_cupy_raw_kernels_pack_exact_c_types(cp, rng):
    saxpy = cp.RawKernel(CUPY_SRC, "saxpy")
    mod = cp.RawModule(code=CUPY_SRC)
    scale_d = gt.kernel(mod, name="scale_d")
    x = cp.asarray(rng.standard_normal(1000), dtype=cp.float32)
    y0 = cp.asarray(rng.standard_normal(1000), dtype=cp.float32)
    xd = cp.asarray(rng.standard_normal(1000))
    y, outd = y0.copy(), cp.zeros(1000)

    @gt.graph
    def f(s, x, y, a, xd, outd):
        s.launch(saxpy, 4, 256, x, y, a, 1000)     # a Python float -> C float
        s.launch(scale_d, 4, 256, xd, outd, a, 3, 1000)
    f(x, y, 0.5, xd, outd)
    cp.cuda.get_current_stream().synchronize()
    assert cp.allclose(y, 0.5 * x + y0, rtol=1e-6)
    assert cp.array_equal(outd, xd * 0.5 + 3)


def test_cuda_core_kernel(cp, rng):
    from cuda.core import Device, Program, ProgramOptions
    dev_ = Device()
    dev_.set_current()
    prog = Program(CUPY_SRC, "c++", ProgramOptions(arch=f"sm_{dev_.arch}"))
    kern = prog.compile("cubin", name_expressions=("saxpy",)).get_kernel("saxpy")
    x = cp.asarray(rng.standard_normal(512), dtype=cp.float32)
    y0 = cp.asarray(rng.standard_normal(512), dtype=cp.float32)
    y = y0.copy()
    k = gt.kernel(kern, "in, inout, in, in", name="saxpy")

    @gt.graph
    def f(s, x, y):
        s.launch(k, 2, 256, x, y, np.float32(2.0), np.int32(512))
    f(x, y)
    cp.cuda.get_current_stream().synchronize()
    assert cp.allclose(y, 2 * x + y0, rtol=1e-6)


@cuda.jit
def add_all(out, *xs):
    i = cuda.grid(1)
    if i < out.size:
        for x in xs:
            out[i] += x[i]


@cuda.jit
def add_tuple(out, xs):             # what add_all gets: its *xs as one tuple
    i = cuda.grid(1)
    if i < out.size:
        for x in xs:
            out[i] += x[i]


@cuda.jit
def weighted(out, *terms):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = terms[0][i] * terms[1] + terms[2][i] * terms[3]


def test_varargs_kernel_in_a_graph(rng):
    xs = [dev(rng.standard_normal(1000)) for _ in range(3)]

    @gt.graph
    def f(s, out, xs, wout, a, b):
        add_all[4, 256, s](out, *xs)
        weighted[4, 256, s](wout, xs[0], a, xs[-1], b)
    for n in (1, 3):
        out_g, out_e, wout = dev(np.zeros(1000)), dev(np.zeros(1000)), dev(np.zeros(1000))
        f(out_g, xs[:n], wout, 2.0, np.float32(3.0))
        add_tuple[4, 256](out_e, tuple(xs[:n]))
        cuda.synchronize()
        assert np.array_equal(out_g.copy_to_host(), out_e.copy_to_host())
        host = [x.copy_to_host() for x in xs[:n]]
        assert np.allclose(wout.copy_to_host(), host[0] * 2.0 + host[-1] * np.float32(3.0))
    out, parts = dev(rng.standard_normal(1000)), xs[::-1]
    expected = out.copy_to_host() + sum(x.copy_to_host() for x in parts)
    f(out, parts, wout, 1.0, np.float32(1.0))        # the same signature: rebound
    cuda.synchronize()
    assert f.cache_info().currsize == 2
    assert np.allclose(out.copy_to_host(), expected)


def test_varargs_flattening_matches_numbas_own(rng):
    from numba.core import types
    from graphtrace.arrays import as_buffer
    from graphtrace.ops._numba import NumbaAdapter
    args = (dev(np.zeros(8)), dev(rng.standard_normal(8))[::2], 2.5, dev(np.ones(4)), 7)
    ad = NumbaAdapter(weighted)
    rec = tuple(as_buffer(a) if hasattr(a, "__cuda_array_interface__") else a for a in args)
    _, flat_types = ad.compile(rec)
    ours = ad.pack(flat_types, rec, lambda b: b)
    k = weighted.compile((weighted.typeof_pyval(args[0]),
                          types.StarArgTuple(tuple(weighted.typeof_pyval(a) for a in args[1:]))))
    theirs = []
    k._prepare_args(k.argument_types[0], args[0], 0, [], theirs)
    k._prepare_args(k.argument_types[1], args[1:], 0, [], theirs)
    as_int = lambda v: v.value if hasattr(v, "value") else v  # ctypes -> number
    assert [as_int(v) for v in ours] == [as_int(v) for v in theirs]


@cuda.jit
def grid_sum(x, out):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(out, 0, x[i])
    cuda.cg.this_grid().sync()
    if i < x.size:
        x[i] = out[0]


def test_grid_synchronisation_runs_cooperatively_as_eagerly_on_the_gpu():
    """numba launches a kernel that synchronises its grid cooperatively on its own;
    the same launch in a graph is a cooperative node (said not to be, refused)."""
    @gt.graph
    def f(s, x, out):
        grid_sum[2, 32, s](x, out)
    x, out = dev(np.ones(64)), dev(np.zeros(1))
    f(x, out)
    cuda.synchronize()
    assert x.copy_to_host().tolist() == [64.0] * 64
    y, out2 = dev(np.ones(64)), dev(np.zeros(1))
    grid_sum[2, 32](y, out2)                                 # eagerly
    cuda.synchronize()
    assert y.copy_to_host().tolist() == [64.0] * 64

    @gt.graph
    def g(s, x, out):
        s.launch(grid_sum, 2, 32, x, out, cooperative=False)   # gpugridsync
    with pytest.raises(gt.KernelArgumentError, match="synchronises the whole grid") as e:
        g(x, out)
    assert e.value.source[1] == line_of(__file__, "gpugridsync")


def test_numpy_integer_grid_and_block_on_the_gpu():
    out = dev(np.ones(1000))

    @gt.graph
    def f(s, out):
        add_all[np.int64(4), (np.int32(256), 1), s](out, out)
    f(out)
    cuda.synchronize()
    assert out.copy_to_host().tolist() == [2.0] * 1000


LAUNCH_BOUNDS_SRC = r'''
#define BLOCK 256
typedef float real_t;
template<typename T>
__global__ void __launch_bounds__(BLOCK, 2) scale_t(const T* __restrict__ x, T* __restrict__ y,
                                                   T a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
extern "C" __global__ void __launch_bounds__(BLOCK) scale_f(const real_t* __restrict__ x,
                                                           real_t* y, real_t a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
'''


def test_cupy_kernels_with_launch_bounds_and_qualifiers(cp, rng):
    mod = cp.RawModule(code=LAUNCH_BOUNDS_SRC, name_expressions=["scale_t<double>"])
    scale_t = gt.kernel(mod, name="scale_t<double>")
    scale_f = cp.RawKernel(LAUNCH_BOUNDS_SRC, "scale_f")
    x = cp.asarray(rng.standard_normal(1000))
    xf = x.astype(cp.float32)
    y, yf = cp.zeros(1000), cp.zeros(1000, dtype=cp.float32)

    @gt.graph
    def f(s, x, y, xf, yf, a):
        s.launch(scale_t, 4, 256, x, y, a, 1000)
        s.launch(scale_f, 4, 256, xf, yf, a, 1000)
    f(x, y, xf, yf, 1.5)
    cp.cuda.get_current_stream().synchronize()
    assert cp.array_equal(y, 1.5 * x)
    assert cp.allclose(yf, 1.5 * xf, rtol=1e-6)


def test_cupy_views_made_again_are_known_by_their_attributes(cp, rng):
    """cupy views made at every launch are found again by address, shape, strides
    and dtype (``arrays.interface_of``): each gets the Buffer its interface
    describes, and the graph computes what eager launches do."""
    from graphtrace.arrays import as_buffer
    inc = cp.RawKernel(r'''extern "C" __global__ void inc(float* x, int n, float a) {
        int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += a; }''', "inc")
    x0 = cp.asarray(rng.standard_normal(4096), dtype=cp.float32)
    x, mismatched = x0.copy(), []

    def geometry(b):
        return b.ptr, tuple(b.shape), tuple(b.strides), b.dtype

    @gt.graph
    def f(s, x):
        t = s.tracer()
        for i in range(40):
            v = x[i % 8 * 256:(i % 8 + 1) * 256]
            s.launch(inc, 1, 256, v, 256, float(i))
            others = (v[::2], v.reshape(16, 16), v.reshape(16, 16).T, v.view(cp.int32))
            for w in (v, *others):
                if geometry(t.buffer(w)) != geometry(as_buffer(w)):
                    mismatched.append((i, w.shape, w.strides, w.dtype))
    f(x)
    cp.cuda.get_current_stream().synchronize()
    assert not mismatched
    want = x0.get()
    for i in range(40):
        want[i % 8 * 256:(i % 8 + 1) * 256] += np.float32(i)
    np.testing.assert_allclose(x.get(), want, rtol=1e-6)


def test_numba_views_made_again_are_known_by_their_attributes(rng):
    """numba device array views made at every launch are found again by address,
    shape, strides and dtype read as attributes (numba's interface is Python
    code): each gets the Buffer its interface describes, and the graph computes
    what eager launches do."""
    from graphtrace.arrays import _kind, as_buffer

    @cuda.jit
    def inc(x, a):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += a
    x0 = rng.standard_normal(4096).astype(np.float32)
    x, mismatched = cuda.to_device(x0), []
    assert _kind(x) == "numba"

    def geometry(b):
        return b.ptr, tuple(b.shape), tuple(b.strides), b.dtype

    @gt.graph
    def f(s, x):
        t = s.tracer()
        for i in range(40):
            v = x[i % 8 * 256:(i % 8 + 1) * 256]
            inc[1, 256, s](v, np.float32(i))
            # (numba's .T of a 2-D device array launches a kernel: not a view)
            others = (v[::2], v.reshape(16, 16), v.reshape(16, 16)[:, ::2], v.view(np.int32))
            for w in (v, *others):
                if geometry(t.buffer(w)) != geometry(as_buffer(w)):
                    mismatched.append((i, w.shape, w.strides, w.dtype))
    f(x)
    cuda.synchronize()
    assert not mismatched
    want = x0.copy()
    for i in range(40):
        want[i % 8 * 256:(i % 8 + 1) * 256] += np.float32(i)
    np.testing.assert_allclose(x.copy_to_host(), want, rtol=1e-6)


def test_a_transpose_numba_runs_on_the_gpu_inside_a_trace_is_refused_naming_it():
    """A device array's .T launches numba's own transpose kernel: refused, naming
    the operation and what to write instead."""
    @cuda.jit
    def first_row(t, b):
        i = cuda.grid(1)
        if i < t.shape[1]:
            b[i] = t[0, i]

    @gt.graph
    def f(s, a, b):
        t = a.T   # numba launches its transpose kernel here, now
        first_row[1, 16, s](t, b)

    a, b = cuda.to_device(np.ones((4, 4))), cuda.device_array(16)
    with pytest.raises(gt.StreamError) as e:
        f(a, b)
    assert "a.T" in str(e.value) and "numba.cuda.kernels" in str(e.value)

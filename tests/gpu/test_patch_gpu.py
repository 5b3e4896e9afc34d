"""Rebinding by rewriting address words (ops/_patch.py) on the GPU: numba, cupy and
cuda.core kernels over views of the arguments, both update routes, with launches
of the graph in flight; every result against numpy."""
import numpy as np
import pytest

import graphtrace as gt

cuda = pytest.importorskip("numba.cuda")
cp = pytest.importorskip("cupy")

N = 4096


@cuda.jit
def scale_add(x, a, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] += a * x[i]


TWICE = cp.RawKernel(r'''
extern "C" __global__ void twice(const double* x, double* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0 * x[i] + y[i];
}''', "twice")


def core_kernel():
    from cuda.core import Device, Program, ProgramOptions
    dev = Device()
    dev.set_current()
    src = r'''
extern "C" __global__ void negate(double* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = -y[i];
}'''
    arch = "sm_" + "".join(map(str, dev.compute_capability))
    prog = Program(src, code_type="c++", options=ProgramOptions(arch=arch))
    return prog.compile("cubin", name_expressions=("negate",)).get_kernel("negate")


@pytest.fixture(scope="module")
def negate():
    return core_kernel()


def make_graph(negate):
    @gt.graph
    def step(s, x, y, z):
        h = N // 2
        scale_add[16, 256, s](x[:h], 0.5, y[h:])          # numba, views at offsets
        s.launch(TWICE, 8, 256, x[h:], z[1:h + 1], h)       # cupy, a view one element in
        s.launch(negate, 16, 256, z, N)                     # cuda.core
        scale_add[16, 256, s](z[::2], 1.0, y[:h])           # numba, a strided view
    return step


def numpy_step(x, y, z):
    h = N // 2
    y[h:] += 0.5 * x[:h]
    z[1:h + 1] = 2.0 * x[h:] + z[1:h + 1]
    z[:] = -z
    y[:h] += z[::2]


@pytest.mark.parametrize("route", [None, "node", "whole"])
def test_rebinds_rewrite_addresses_and_give_numpys_results(negate, route):
    step = make_graph(negate)
    rng = np.random.default_rng(3)
    sets = [[cp.asarray(rng.standard_normal(N)) for _ in range(3)] for _ in range(3)]
    want = [[a.get() for a in arrays] for arrays in sets]
    g = step.compile(*sets[0])
    for k in range(7):   # back to back: earlier launches are in flight while rebinding
        arrays = sets[k % 3]
        if k:
            g.rebind(arrays, [a.data.ptr for a in arrays], [], route=route)
        g.launch()
        numpy_step(*want[k % 3])
    cp.cuda.runtime.deviceSynchronize()
    for arrays, w in zip(sets, want):
        for a, b in zip(arrays, w):
            np.testing.assert_allclose(a.get(), b, rtol=1e-12)
    patches = g._patches()
    assert sorted(patches.planned) == [n.index for n in g.ir.nodes]   # every node rewritten


def test_calls_alternating_arrays_through_the_function(negate):
    step = make_graph(negate)
    rng = np.random.default_rng(4)
    sets = [[cp.asarray(rng.standard_normal(N)) for _ in range(3)] for _ in range(2)]
    want = [[a.get() for a in arrays] for arrays in sets]
    for k in range(10):
        step(*sets[k % 2])
        numpy_step(*want[k % 2])
    cp.cuda.runtime.deviceSynchronize()
    assert step.cache_info().misses == 1
    for arrays, w in zip(sets, want):
        for a, b in zip(arrays, w):
            np.testing.assert_allclose(a.get(), b, rtol=1e-12)


@pytest.mark.parametrize("route", [None, "node", "whole"])
def test_new_numbers_and_arrays_together(negate, route):
    @gt.graph
    def f(s, x, y, a, n):
        for _ in range(3):                   # three nodes alike: one image, packed once
            scale_add[16, 256, s](x, a, y)
        scale_add[16, 256, s](x, 1.0, y)     # only addresses: rewritten
        s.launch(negate, 16, 256, y, n)      # a number alone: y[:n] negated

    x0, y0 = cp.ones(N), cp.zeros(N)
    x1, y1 = cp.full(N, 2.0), cp.zeros(N)
    g = f.compile(x0, y0, 3.0, N)
    g.launch()
    for x, y, a, n in ((x1, y1, 5.0, N // 2), (x0, y0, 7.0, N)):
        g.rebind([x, y], [x.data.ptr, y.data.ptr], [a, n], route=route)
        g.launch()
    cp.cuda.runtime.deviceSynchronize()
    first = -(3 * 3.0 + 1.0)
    assert float(y0[0]) == -(first + 3 * 7.0 + 1.0) and float(y0[-1]) == float(y0[0])
    assert float(y1[0]) == -(3 * 2.0 * 5.0 + 2.0) and float(y1[-1]) == 3 * 2.0 * 5.0 + 2.0
    patches = g._patches()
    assert sorted(patches.planned) == [n.index for n in g.ir.nodes]
    assert len({id(im) for im in patches.planned.values()}) == 3

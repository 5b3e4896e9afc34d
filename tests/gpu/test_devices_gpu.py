"""One graph over two GPUs: kernels of numba, cupy and cuda.core on both devices, peer
copies, dependencies across devices, rebinding, temporaries, captured regions and
NCCL collectives. Skipped with fewer than two GPUs."""
import numpy as np
import pytest

import graphtrace as gt
from graphtrace import _driver
from step_kernels import add, scale

cuda = pytest.importorskip("numba.cuda")
pytestmark = pytest.mark.skipif(_driver.device_count() < 2, reason="needs two GPUs")
N = 1000

SRC = r'''
extern "C" __global__ void saxpy(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
'''


def on(device, values):
    with cuda.gpus[device]:
        return cuda.to_device(np.ascontiguousarray(values))


def sync():
    for d in range(2):
        with cuda.gpus[d]:
            cuda.synchronize()


@gt.graph
def exchange(s, x0, y0, x1, y1):
    scale[4, 256, s](x0, 2.0, y0)       # device 0
    scale[4, 256, s](x1, 3.0, y1)       # device 1, concurrent with the one above
    t = s.on(0).empty(N)
    s.copy(t, y1)                       # peer copy 1 -> 0, after the device-1 kernel
    add[4, 256, s](t, y0)               # device 0: y0 = 2 x0 + 3 x1
    s.copy(y1, y0)                      # peer copy 0 -> 1
    add[4, 256, s](x1, y1)              # device 1: y1 = 2 x0 + 4 x1


def test_numba_kernels_on_two_devices_with_peer_copies(rng):
    a, b = rng.standard_normal(N), rng.standard_normal(N)
    x0, y0, x1, y1 = on(0, a), on(0, np.zeros(N)), on(1, b), on(1, np.zeros(N))
    g = exchange.trace(x0, y0, x1, y1)
    assert [n.device for n in g.nodes] == [0, 1, 0, 0, 1, 1]
    assert "@cuda:1" in str(g)
    for _ in range(2):   # build and launch, then replay
        exchange(x0, y0, x1, y1)
        sync()
        assert np.allclose(y0.copy_to_host(), 2 * a + 3 * b)
        assert np.allclose(y1.copy_to_host(), 2 * a + 4 * b)
    assert exchange.cache_info().misses == 1


def test_the_same_graph_built_with_device_1_current(rng):
    a, b = rng.standard_normal(N), rng.standard_normal(N)
    x0, y0, x1, y1 = on(0, a), on(0, np.zeros(N)), on(1, b), on(1, np.zeros(N))
    f = gt.graph(exchange.fn)
    from cuda.core import Device
    Device(1).set_current()
    try:
        f(x0, y0, x1, y1)
        sync()
    finally:
        Device(0).set_current()
    assert np.allclose(y1.copy_to_host(), 2 * a + 4 * b)


def test_cupy_and_cuda_core_kernels_on_both_devices(cp, rng):
    from cuda.core import Device, Program, ProgramOptions
    saxpy = cp.RawKernel(SRC, "saxpy")
    dev = Device(0)
    dev.set_current()
    core = Program(SRC, "c++", ProgramOptions(arch=f"sm_{dev.arch}")) \
        .compile("cubin", name_expressions=("saxpy",)).get_kernel("saxpy")
    core = gt.kernel(core, "in, inout, in, in", name="core_saxpy")
    xs, ys, want = [], [], []
    for d in range(2):
        with cp.cuda.Device(d):
            x = cp.asarray(rng.standard_normal(N), dtype=cp.float32)
            y = cp.asarray(rng.standard_normal(N), dtype=cp.float32)
            want.append(cp.asnumpy(3 * x + y))
            xs.append(x)
            ys.append(y)

    @gt.graph
    def f(s, xs, ys):
        for x, y in zip(xs, ys):
            s.launch(saxpy, 4, 256, x, y, 1.0, N)
            s.launch(core, 4, 256, x, y, np.float32(2.0), np.int32(N))
    g = f.trace(xs, ys)
    assert [n.device for n in g.nodes] == [0, 0, 1, 1]
    f(xs, ys)
    for d in range(2):
        with cp.cuda.Device(d):
            cp.cuda.Device(d).synchronize()
            assert np.allclose(cp.asnumpy(ys[d]), want[d], rtol=1e-5)


def test_nodes_on_another_device_rebind_by_both_routes(rng):
    x0 = [rng.standard_normal(64).astype(np.float32) for _ in range(2)]
    xs = [on(1, a) for a in x0]
    expect = [a.copy() for a in x0]
    h = gt.pinned_empty(64, np.float32)

    @cuda.jit
    def inc(x, v):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += v

    @gt.graph
    def f(s, x, v):
        inc[1, 64, s](x, v)
        s.memset(x[:4], v)
        s.copy(h, x)
    g = f.compile(xs[0], np.float32(1.0))
    assert [n.device for n in g.ir.nodes] == [1, 1, 1]
    steps = [(0, 1.0, "node"), (1, 2.0, "whole"), (1, 3.0, "node"), (0, 3.0, "whole"),
             (0, 4.0, "node"), (1, 5.0, "whole")]
    for i, v, route in steps:
        x = xs[i]
        g.rebind([x], [x.__cuda_array_interface__["data"][0]], [np.float32(v)], route=route)
        g.launch()
        sync()
        expect[i] += np.float32(v)
        expect[i][:4] = v
        for j in range(2):
            assert np.array_equal(xs[j].copy_to_host(), expect[j]), (i, v, route)
        assert np.array_equal(h, expect[i]), (i, v, route)


def test_temporaries_live_on_the_device_of_their_kernels(rng):
    a = rng.standard_normal(N)
    x1, y0 = on(1, a), on(0, np.zeros(N))

    @gt.graph
    def f(s, x, y):
        t = s.zeros(N)                  # used on device 1: allocated there
        u = s.on(1).empty(N)
        add[4, 256, s](x, t)
        scale[4, 256, s](t, 2.0, u)
        s.copy(y, u)                    # to device 0
    g = f.trace(x1, y0)
    assert [t.device for t in g.temporaries] == [1, 1]
    for _ in range(2):
        f(x1, y0)
        sync()
        assert np.allclose(y0.copy_to_host(), 2 * a)


def test_a_child_graph_holds_nodes_of_another_device_and_rebinds_them(rng):
    @gt.graph
    def inner(s, x, y):
        scale[4, 256, s](x, 2.0, y)

    @gt.graph
    def f(s, x0, x1, y1):
        s.child(inner, x1, y1)          # device 1, inside a child graph
        add[4, 256, s](x0, x0)          # device 0
    a = rng.standard_normal(N)
    x0, y1 = on(0, np.ones(N)), on(1, np.zeros(N))
    for k in range(2):                  # the second call brings a new x1: rebound
        x1 = on(1, a + k)
        f(x0, x1, y1)
        sync()
        assert np.allclose(y1.copy_to_host(), 2 * (a + k))
    assert f.cache_info().misses == 1
    assert np.array_equal(x0.copy_to_host(), np.full(N, 4.0))


def test_intent_check_runs_nodes_of_another_device(rng):
    a = rng.standard_normal(N)
    x1, y1 = on(1, a), on(1, np.zeros(N))

    @gt.graph(check_intents=True)
    def f(s, x, y):
        scale[4, 256, s](x, 2.0, y)
        add[4, 256, s](x, y)
    f(x1, y1)
    assert np.allclose(y1.copy_to_host(), 3 * a)


def test_a_loop_on_another_device_than_the_graphs_is_refused_at_the_build():
    flag, x1 = on(1, np.zeros(1, np.int32)), on(1, np.zeros(N))

    @gt.graph
    def f(s, flag, x):
        with s.while_loop(gt.cond(flag), max_iterations=2) as body:
            add[4, 256, body](x, x)
    with pytest.raises(gt.EmitError, match="runs on device 1.*built on device 0"):
        f(flag, x1)


def test_a_cupy_region_over_two_devices_is_one_captured_node(cp):
    with cp.cuda.Device(0):
        a = cp.arange(N, dtype=cp.float64)
    with cp.cuda.Device(1):
        b = cp.ones(N)

    def both(a, b):
        with cp.cuda.Device(0):
            a *= 2
        with cp.cuda.Device(1):
            b += 1

    @gt.graph
    def f(s, a, b):
        s.captured(both, a, b)
    assert f.trace(a, b).nodes[0].device == (0, 1)
    f(a, b)
    f(a, b)
    sync()
    assert np.array_equal(cp.asnumpy(a), np.arange(N) * 4)
    assert np.array_equal(cp.asnumpy(b), np.full(N, 3.0))


def _nccl(cp):
    from cupy.cuda import nccl
    if not nccl.available:
        pytest.skip("cupy has no NCCL")
    return nccl


@pytest.mark.parametrize("given", [False, True])
def test_all_reduce_over_two_gpus_in_one_process(cp, rng, given):
    nccl = _nccl(cp)
    comms = nccl.NcclCommunicator.initAll([0, 1]) if given else None
    host = [rng.standard_normal(N).astype(np.float32) for _ in range(2)]
    xs = [on(d, host[d]) for d in range(2)]
    ys = [on(d, np.zeros(N, np.float32)) for d in range(2)]

    @gt.graph
    def f(s, xs, ys):
        for x in xs:
            scale[4, 256, s](x, 2.0, x)            # before the collective: it reads xs
        gt.nccl.all_reduce(s, comms, xs, ys, op="sum")
        for y in ys:
            add[4, 256, s](y, y)                   # after it: it writes ys
    for k in (1, 2):
        f(xs, ys)
        sync()
        for y in ys:
            assert np.allclose(y.copy_to_host(), 2 * (2 ** k) * (host[0] + host[1]), rtol=1e-5)
    xs2 = [on(d, np.full(N, d + 1.0, np.float32)) for d in range(2)]
    f(xs2, ys)                                     # new arrays: the region is captured anew
    sync()
    assert f.cache_info().misses == 1
    for y in ys:
        assert np.allclose(y.copy_to_host(), 2 * 2 * 3.0)


def test_broadcast_and_all_gather_over_two_gpus(cp):
    _nccl(cp)
    xs = [on(d, np.full(N, d + 1.0)) for d in range(2)]
    gathered = [on(d, np.zeros(2 * N)) for d in range(2)]

    @gt.graph
    def f(s, xs, gathered):
        gt.nccl.all_gather(s, None, xs, gathered)
        gt.nccl.broadcast(s, None, xs, root=1)
    f(xs, gathered)
    sync()
    for d in range(2):
        assert np.array_equal(gathered[d].copy_to_host(), np.repeat([1.0, 2.0], N))
        assert np.array_equal(xs[d].copy_to_host(), np.full(N, 2.0))


def test_torch_process_group_all_reduce_in_a_graph():
    torch = pytest.importorskip("torch")
    dist = pytest.importorskip("torch.distributed")
    if not dist.is_nccl_available():
        pytest.skip("torch has no NCCL")
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
    try:
        x = torch.arange(N, device="cuda:0", dtype=torch.float32)
        y = torch.zeros(N, device="cuda:0")

        @gt.graph
        def f(s, x, y):
            scale[4, 256, s](x, 2.0, x)
            gt.nccl.all_reduce(s, dist.group.WORLD, x, y)
        f(x, y)
        f(x, y)
        torch.cuda.synchronize()
        assert torch.equal(y, torch.arange(N, device="cuda:0", dtype=torch.float32) * 4)
    finally:
        dist.destroy_process_group()

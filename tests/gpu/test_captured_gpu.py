"""Captured regions (``s.captured``) on a real GPU: cupy and torch code as child nodes."""
import numpy as np
import pytest

import graphtrace as gt
from helpers import line_of

cuda = pytest.importorskip("numba.cuda")
F = __file__


@cuda.jit
def twice(a):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        a[i, j] *= 2


@cuda.jit
def plus_one(src, dst):
    i, j = cuda.grid(2)
    if i < dst.shape[0] and j < dst.shape[1]:
        dst[i, j] = src[i, j] + 1


@cuda.jit
def scale(a, k):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        a[i, j] *= k


@cuda.jit
def plus_one_1d(src, dst):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = src[i] + 1


def test_a_captured_torch_matmul_between_two_kernels():
    torch = pytest.importorskip("torch")

    def matmul(x, w, y):
        torch.matmul(x, w, out=y)

    @gt.graph
    def f(s, x, w, y, z):
        twice[(2, 2), (16, 16), s](x)
        s.captured(matmul, x, w, y, reads=[x, w], writes=[y])
        plus_one[(2, 2), (16, 16), s](y, z)

    gen = torch.Generator(device="cuda").manual_seed(0)
    x, w = (torch.randn(*shape, device="cuda", dtype=torch.float64, generator=gen)
            for shape in ((32, 24), (24, 16)))
    y, z = torch.zeros(32, 16, device="cuda", dtype=torch.float64), \
        torch.zeros(32, 16, device="cuda", dtype=torch.float64)
    x0 = x.clone()
    torch.cuda.synchronize()
    for k in (1, 2):   # the first call builds the graph, the second replays it
        f(x, w, y, z)
        torch.cuda.synchronize()
        want = (x0 * 2 ** k) @ w
        assert torch.allclose(y, want) and torch.allclose(z, want + 1)
    assert f.cache_info().misses == 1


def test_a_cupy_expression_region(cp):
    def expr(x, y):
        y[...] = cp.tanh(x) * 2 + x.sum()

    @gt.graph
    def f(s, x, y, z):
        s.captured(expr, x, y, reads=[x], writes=[y])
        plus_one_1d[4, 256, s](y, z)

    x = cp.asarray(np.linspace(-1, 1, 1000))
    y, z = cp.zeros(1000), cp.zeros(1000)
    for _ in range(2):
        f(x, y, z)
        cp.cuda.Device().synchronize()
        want = cp.tanh(x) * 2 + x.sum()
        assert cp.allclose(y, want) and cp.allclose(z, want + 1)


def test_a_region_is_captured_again_for_new_arrays_and_numbers(cp):
    captures = []

    def axpy(a, x, y):
        captures.append(a)
        y[...] = a * x + cp.sin(x)

    @gt.graph
    def f(s, x, y, z, a):
        s.captured(axpy, a, x, y, reads=[x], writes=[y])
        plus_one_1d[4, 256, s](y, z)

    sets = [[cp.asarray(np.random.default_rng(i).standard_normal(1000)), cp.zeros(1000),
             cp.zeros(1000)] for i in range(2)]
    for (x, y, z), a in ((sets[0], 2.0), (sets[1], 2.0), (sets[0], -3.0), (sets[0], -3.0)):
        f(x, y, z, a)
        cp.cuda.Device().synchronize()
        want = a * x + cp.sin(x)
        assert cp.allclose(y, want) and cp.allclose(z, want + 1)
    assert f.cache_info().misses == 1
    assert captures == [2.0, 2.0, -3.0]   # built, new arrays, new number; the same call: none


def test_memory_the_region_allocates_stays_reserved(cp):
    """The region's temporaries live in a pool of its own: freeing cupy's pool and
    allocating between replays neither hands that memory out nor corrupts results."""
    n = 1 << 20

    def expr(x, y):
        t = cp.tanh(x) * 2        # temporaries, allocated while capturing
        y[...] = t + x.sum()

    @gt.graph
    def f(s, x, y):
        s.captured(expr, x, y, reads=[x], writes=[y])

    x = cp.asarray(np.linspace(-1, 1, n, dtype=np.float32))
    y = cp.zeros(n, cp.float32)
    want = cp.tanh(x) * 2 + x.sum()
    graph = f.compile(x, y)
    pools = [st.cupy_pool for st in graph.gpu.state.values() if hasattr(st, "cupy_pool")]
    assert len(pools) == 1 and pools[0].total_bytes() >= 2 * n * 4
    kept = []
    for k in range(4):
        cp.get_default_memory_pool().free_all_blocks()
        junk = [cp.full(n, 1e30, cp.float32) for _ in range(4)]   # may get freed memory
        kept += junk
        y.fill(0)
        f(x, y)
        cp.cuda.Device().synchronize()
        assert cp.allclose(y, want), k
        assert all(bool((j == 1e30).all()) for j in kept), k


def test_torch_memory_the_region_allocates_stays_reserved():
    torch = pytest.importorskip("torch")
    if not hasattr(torch.cuda, "use_mem_pool"):
        pytest.skip("torch without torch.cuda.MemPool")
    n = 1 << 20

    def expr(x, y):
        y.copy_(torch.tanh(x) * 2 + x.sum())

    @gt.graph
    def f(s, x, y):
        s.captured(expr, x, y, reads=[x], writes=[y])

    x = torch.linspace(-1, 1, n, device="cuda")
    y = torch.zeros(n, device="cuda")
    want = torch.tanh(x) * 2 + x.sum()
    kept = []
    for k in range(4):
        torch.cuda.empty_cache()
        kept += [torch.full((n,), 1e30, device="cuda") for _ in range(4)]
        y.zero_()
        torch.cuda.synchronize()
        f(x, y)
        torch.cuda.synchronize()
        assert torch.allclose(y, want), k
        assert all(bool((j == 1e30).all()) for j in kept), k


def host_read(x, y):
    y[...] = float(x.sum().get())   # host read


def test_a_host_read_in_a_region_names_the_line(cp):
    @gt.graph
    def f(s, x, y):
        s.captured(host_read, x, y)

    with pytest.raises(gt.CaptureError) as e:
        f(cp.ones(8), cp.zeros(8))
    assert e.value.source == (F, line_of(F, "host read"))
    assert "captured region host_read" in str(e.value)


def torch_item(x, y):
    if x.sum().item() > 0:   # torch host read
        y.copy_(x)


def torch_synchronise(x, y):
    import torch
    torch.cuda.synchronize()   # torch synchronise
    y.copy_(x)


def torch_nonzero(x, y):
    import torch
    y.zero_()[: 1].copy_(torch.nonzero(x > 0).sum())   # torch data-dependent shape


def test_torch_calls_capture_forbids_name_the_line_and_leave_the_gpu_usable():
    """``.item()``, a synchronise, an op whose output shape depends on the data:
    torch raises inside the capture, which the driver has invalidated, so ending it
    fails too. The error is the region's, at its line, and the next graph builds."""
    torch = pytest.importorskip("torch")
    x, y = torch.ones(8, device="cuda"), torch.zeros(8, device="cuda")
    for fn, word in ((torch_item, "torch host read"), (torch_synchronise, "torch synchronise"),
                     (torch_nonzero, "torch data-dependent shape")):
        @gt.graph
        def f(s, x, y):
            s.captured(fn, x, y, reads=[x], writes=[y])

        with pytest.raises(gt.CaptureError) as e:
            f(x, y)
        assert e.value.source == (F, line_of(F, word)), fn.__name__
        assert f"captured region {fn.__name__}" in str(e.value)

    def copy(x, y):
        y.copy_(x * 3)

    @gt.graph
    def g(s, x, y):
        s.captured(copy, x, y, reads=[x], writes=[y])

    g(x, y)
    torch.cuda.synchronize()
    assert torch.equal(y, x * 3)


def fft_halve(x, y):
    import cupy as cp
    y[...] = cp.fft.ifft2(cp.fft.fft2(x) * 0.5)


def test_a_captured_fft_outlives_its_plan_leaving_cupys_cache(cp):
    """Eager FFTs of other sizes evict every plan from cupy's cache (of 2 here):
    the graph's FFT keeps its own, so a rebinding update and replays stay right."""
    cache = cp.fft.config.get_plan_cache()
    size = cache.get_size()
    cache.set_size(2)
    try:
        @gt.graph
        def f(s, x, y, k):
            scale[(1, 1), (16, 16), s](x, k)
            s.captured(fft_halve, x, y, reads=[x], writes=[y])

        rng = cp.random.default_rng(0)
        x = rng.standard_normal((16, 16)) + 1j * rng.standard_normal((16, 16))
        y = cp.zeros_like(x)
        f(x, y, 1.0)
        for n in (20, 24, 28, 32):   # evict the 16x16 plan
            cp.fft.fft2(cp.ones((n, n), cp.complex128))
        for k in (2.0, 3.0):   # a new number: the graph is updated, then replayed
            x0 = x.copy()
            f(x, y, k)
            cp.cuda.Device().synchronize()
            assert cp.allclose(y, x0 * k * 0.5)
    finally:
        cache.set_size(size)


def cupy_matmul(x, w, y):
    y[...] = x @ w   # cupy matmul


def test_cupy_matmul_refused_under_capture_names_the_line(cp):
    @gt.graph
    def f(s, x, w, y):
        s.captured(cupy_matmul, x, w, y, reads=[x, w], writes=[y])

    with pytest.raises(gt.CaptureError) as e:
        f(cp.ones((4, 3)), cp.ones((3, 2)), cp.zeros((4, 2)))
    assert e.value.source == (F, line_of(F, "cupy matmul"))
    assert "torch.matmul" in str(e.value)


def test_temporaries_handed_to_torch_and_cupy_regions(cp):
    torch = pytest.importorskip("torch")

    def matmul(x, w, y):
        torch.matmul(x, w, out=y)

    def tanh_into(src, dst):
        dst[...] = cp.tanh(src)

    @gt.graph
    def f(s, x, w, z):
        t = s.empty((32, 16), np.float64)       # a torch tensor in the torch region
        u = s.empty((32, 16), np.float64)       # a cupy array in the cupy region
        s.captured(matmul, x, w, t, reads=[x, w], writes=[t])
        plus_one[(2, 2), (16, 16), s](t, u)
        s.captured(tanh_into, u, z, reads=[u], writes=[z])

    gen = torch.Generator(device="cuda").manual_seed(1)
    x, w = (torch.randn(*shape, device="cuda", dtype=torch.float64, generator=gen)
            for shape in ((32, 24), (24, 16)))
    z = cp.zeros((32, 16), cp.float64)
    want = np.tanh((x @ w).cpu().numpy() + 1)
    for _ in range(2):
        f(x, w, z)
        cp.cuda.Device().synchronize()
        np.testing.assert_allclose(cp.asnumpy(z), want, rtol=1e-12)


def test_a_region_returning_its_output_runs_one_returning_a_new_array_is_refused():
    cp = pytest.importorskip("cupy")

    @gt.graph
    def f(s, x, y):
        s.captured(lambda x, y: cp.tanh(x, out=y), x, y, reads=[x], writes=[y])
    x, y = cp.arange(4, dtype=cp.float32), cp.zeros(4, cp.float32)
    f(x, y)
    cp.cuda.Device().synchronize()
    assert np.allclose(y.get(), np.tanh(np.arange(4, dtype=np.float32)))

    @gt.graph
    def g(s, x):
        s.captured(lambda x: cp.tanh(x), x, reads=[x])     # new array
    with pytest.raises(gt.CaptureError) as e:
        g(x)
    assert e.value.source == (F, line_of(F, "new array"))
    assert "returned a new array (ndarray float32[4]), which the graph drops" in e.value.message


def test_a_region_running_torch_on_cupy_arrays_is_captured(cp):
    """A region handed cupy arrays whose code runs torch on them (torch.as_tensor):
    torch's stream is switched to the capture too. It was not, so torch's work ran
    once, when the graph was built, and the region did nothing at later calls: y
    kept what the cupy region before it wrote."""
    torch = pytest.importorskip("torch")

    def first(x, y):
        y[...] = cp.exp(-x * x)

    def cumulative(z, y):
        tz, ty = torch.as_tensor(z, device="cuda"), torch.as_tensor(y, device="cuda")
        ty.copy_(torch.cumsum(tz, dim=0) / tz.shape[0])

    @gt.graph
    def f(s, x, z, y):
        s.captured(first, x, y, reads=[x], writes=[y])
        s.captured(cumulative, z, y, reads=[z], writes=[y])

    rng = np.random.default_rng(5)
    x, z, y = (cp.asarray(rng.standard_normal(1000)) for _ in range(3))
    for k in range(3):   # the same arrays, new values: the graph built once
        f(x, z, y)
        cp.cuda.runtime.deviceSynchronize()
        assert cp.allclose(y, cp.cumsum(z) / 1000), k
        z *= 2.0
    assert f.cache_info().misses == 1


def test_a_region_reaching_torch_through_an_object_it_holds_is_captured(cp):
    """A bound method handed cupy arrays whose work is a torch module it holds
    (``self.net(x)``): torch's stream is switched to the capture too. Only the
    libraries the code named and the arrays' were, so the network ran once, when
    the graph was built, and later calls kept the first call's y."""
    torch = pytest.importorskip("torch")

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(64, 64, dtype=torch.float64, device="cuda")
            self.lin.requires_grad_(False)

        def forward(self, x):
            return torch.tanh(self.lin(torch.as_tensor(x, device="cuda")))

    class Stepper:   # a solver step as a user writes it: its code names no library
        def __init__(self, net, wrap):
            self.net, self.wrap = net, wrap

        def step(self, x, y):
            self.wrap(y, device="cuda").copy_(self.net(x))

    stepper = Stepper(Net(), torch.as_tensor)

    @gt.graph
    def f(s, x, y):
        s.captured(stepper.step, x, y, reads=[x], writes=[y])

    rng = np.random.default_rng(6)
    x, y = cp.asarray(rng.standard_normal((8, 64))), cp.zeros((8, 64))
    for k in range(3):   # the same arrays, new values: the graph built once
        f(x, y)
        cp.cuda.runtime.deviceSynchronize()
        want = cp.asarray(stepper.net(x))
        assert cp.allclose(y, want), k
        x *= 2.0
    assert f.cache_info().misses == 1


def test_a_region_whose_torch_module_gets_new_parameters_is_captured_again(cp):
    """A region running a torch module it reaches by name or holds: given a new
    weight (a new Parameter, or new memory under the same one: .data =, as
    model.half() or .to() do), the next launch captures the region again. The
    graph kept reading the old weight's memory, freed and given to other tensors."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    lin = torch.nn.Linear(32, 32, dtype=torch.float64, device="cuda").requires_grad_(False)

    class Holder:
        def __init__(self, net):
            self.net = net

        def step(self, x, y):
            y.copy_(self.net(x))

    holder = Holder(torch.nn.Linear(32, 32, dtype=torch.float64, device="cuda"))
    holder.net.requires_grad_(False)

    def by_closure(x, y):
        y.copy_(torch.relu(lin(x)))

    @gt.graph
    def f(s, x, y, z):
        s.captured(by_closure, x, y, reads=[x], writes=[y])
        s.captured(holder.step, y, z, reads=[y], writes=[z])

    x = torch.randn(8, 32, dtype=torch.float64, device="cuda")
    y, z = torch.zeros_like(x), torch.zeros_like(x)

    def check(what):
        f(x, y, z)
        torch.cuda.synchronize()
        want_y = torch.relu(lin(x))
        assert torch.allclose(y, want_y), what
        assert torch.allclose(z, holder.net(want_y)), what

    check("first")
    with torch.no_grad():   # in place: the same memory
        lin.weight.mul_(-0.5)
    check("weights changed in place")
    lin.weight = torch.nn.Parameter(torch.randn(32, 32, dtype=torch.float64, device="cuda"),
                                    requires_grad=False)
    holder.net.bias.data = torch.randn(32, dtype=torch.float64, device="cuda")
    torch.cuda.empty_cache()
    junk = [torch.full((32, 32), 1e3, dtype=torch.float64, device="cuda") for _ in range(8)]
    check("new weight and bias")
    check("again")
    assert f.cache_info().misses == 1   # captured again, not traced again
    del junk


def test_a_training_step_region_follows_the_mode_and_settings_changed_between_calls(cp):
    """A region running a torch model and its optimizer: model.eval()/train() and
    a learning rate set between calls capture the region again, so each call
    computes as running the region would. The graph kept the first capture's
    mode and rate. A scheduler stepped, or momentum made, inside the region is
    refused: a replay would not do it again."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(1)

    def build():
        model = torch.nn.Sequential(torch.nn.Linear(16, 16, dtype=torch.float64, device="cuda"),
                                    torch.nn.BatchNorm1d(16, dtype=torch.float64,
                                                         device="cuda"))
        return model, torch.optim.SGD(model.parameters(), lr=0.1)

    model, opt = build()
    twin, twin_opt = build()
    twin.load_state_dict(model.state_dict())

    def step(net, optimizer, x, y):
        optimizer.zero_grad(set_to_none=True)
        loss = ((net(x) - 1.0) ** 2).mean()
        loss.backward()
        optimizer.step()
        y.copy_(net(x).detach())

    @gt.graph
    def f(s, x, y):
        s.captured(step, model, opt, x, y, reads=[x], writes=[y])

    x = torch.randn(8, 16, dtype=torch.float64, device="cuda")
    y, want = torch.zeros_like(x), torch.zeros_like(x)
    for k, change in enumerate(("first", "again", "eval", "lr", "train")):
        if change in ("eval", "train"):
            getattr(model, change)(), getattr(twin, change)()
        if change == "lr":
            for o in (opt, twin_opt):
                o.param_groups[0]["lr"] = 0.01
        f(x, y)
        step(twin, twin_opt, x, want)
        torch.cuda.synchronize()
        assert torch.allclose(y, want), change
        for p, q in zip(model.parameters(), twin.parameters()):
            assert torch.allclose(p, q), change
    assert f.cache_info().misses == 1

    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)

    def scheduled(x, y):
        step(model, opt, x, y)
        sched.step()

    @gt.graph
    def g(s, x, y):
        s.captured(scheduled, x, y, reads=[x], writes=[y])

    with pytest.raises(gt.CaptureError) as e:
        g(x, y)
    said = str(e.value)   # what the scheduler changed: its count, the rate it set
    assert ("StepLR.last_epoch" in said or "param_groups[0]['lr']" in said) and \
        "between calls" in said, said


def test_gradients_accumulated_over_calls_follow_eager_zero_grads_between_them():
    """A region running only forward and backward accumulates into the
    gradients across calls. With none at the first call, and again after an
    eager zero_grad(set_to_none=True) between calls, the call that makes them
    assigns them and the next accumulates, as eagerly; zero_grad() to zeros
    between calls leaves the same gradients, which the next call accumulates into."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(2)

    def build():
        return torch.nn.Sequential(torch.nn.Linear(8, 16, dtype=torch.float64, device="cuda"),
                                   torch.nn.Tanh(),
                                   torch.nn.Linear(16, 2, dtype=torch.float64, device="cuda"))

    model, twin = build(), build()
    twin.load_state_dict(model.state_dict())

    def backward(net, x, y):
        loss = ((net(x) - 1.0) ** 2).mean()
        loss.backward()
        y.copy_(loss.detach().reshape(1))

    @gt.graph
    def f(s, x, y):
        s.captured(backward, model, x, y, reads=[x], writes=[y])

    x = torch.randn(4, 8, dtype=torch.float64, device="cuda")
    y, want = torch.zeros(1, dtype=torch.float64, device="cuda"), \
        torch.zeros(1, dtype=torch.float64, device="cuda")
    for k, between in enumerate((None, None, None, "none", None, None, "zeros", None, "none")):
        if between is not None:
            for net in (model, twin):
                net.zero_grad(set_to_none=between == "none")
        f(x, y)
        backward(twin, x, want)
        torch.cuda.synchronize()
        for p, q in zip(model.parameters(), twin.parameters()):
            assert q.grad is not None and torch.allclose(p.grad, q.grad), (k, between)
        assert torch.allclose(y, want), k

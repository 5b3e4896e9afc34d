"""The simulator: orders, intent verification, references, and the race checker."""
import threading

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace.sim import topological_order
from helpers import FakeDeviceArray as A, any_kernel, line_of


@cuda.jit
def sneaky(x, y):          # writes x through an alias the analysis sees; declared "in" below
    i = cuda.grid(1)
    if i < x.size:
        x[i] = y[i]


@cuda.jit(device=True)
def times(a, v):
    return a * v + 0 * cuda.threadIdx.x


@cuda.jit
def scale(x, a, out):
    i = cuda.grid(1)
    if i < x.size:
        cuda.syncthreads()
        out[i] = times(a, x[i])


def test_threads_calling_graphs_of_different_signatures_at_once():
    # numba's simulator runs one kernel at a time and swaps `cuda` in the kernel's
    # module while it runs: each thread here makes arrays (cuda.to_device, this
    # module) and runs its own graph (its own shape) while the others do
    @gt.graph(backend="sim")
    def f(s, x, out, a):
        scale[(x.size + 31) // 32, 32, s](x, a, out)
    sizes = (5, 33, 64, 100, 7, 40)
    start, errors = threading.Barrier(len(sizes)), []

    def work(n):
        try:
            start.wait()
            for a in (2.0, 3.0):
                x, out = cuda.to_device(np.arange(n, dtype=np.float64)), cuda.to_device(np.zeros(n))
                f(x, out, a)
                assert out.copy_to_host().tolist() == [a * i for i in range(n)]
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)
    threads = [threading.Thread(target=work, args=(n,)) for n in sizes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_random_orders_respect_every_edge_and_vary():
    K = any_kernel()

    @gt.graph
    def f(s, xs):
        for x in xs:
            s.launch(K, 1, 1, gt.Out(x))       # 8 independent nodes
        s.launch(K, 1, 1, *[gt.In(x) for x in xs])
    g = f.trace([A(4) for _ in range(8)])
    orders = {tuple(n.index for n in topological_order(g, seed)) for seed in range(20)}
    assert len(orders) > 1
    for order in orders:
        assert order[-1] == 8


def test_kernel_writing_what_it_declared_read_only_is_reported():
    k = gt.kernel(sneaky, "in, in")

    @gt.graph(backend="sim")
    def f(s, x, y):
        s.launch(k, 1, 8, x, y)                 # launch
    x, y = cuda.to_device(np.zeros(8)), cuda.to_device(np.ones(8))
    with pytest.raises(gt.IntentError) as e:
        f(x, y)
    assert e.value.source[1] == line_of(__file__, "launch")
    assert "kernel sneaky wrote to x (parameter x)" in str(e.value) and "gt.InOut" in str(e.value)


def _clear(h):
    h[:] = 0


def test_host_callback_writing_what_it_declared_read_only_is_reported():
    """A callback given gt.In(h) that writes h would be left unordered with later
    readers of h: the simulator proves its read-only arrays stay so, as a kernel's."""
    @gt.graph(backend="sim")
    def f(s, x, h, out):
        s.copy(h, x)
        s.host(_clear, gt.In(h))                      # declared-in
        s.copy(out, h)
    x, out = cuda.to_device(np.arange(4.0)), cuda.to_device(np.zeros(4))
    h = gt.pinned_empty(4)
    with pytest.raises(gt.IntentError) as e:
        f(x, h, out)
    assert e.value.source[1] == line_of(__file__, "declared-in")
    assert "host callback _clear wrote to h, which it was declared to only read" \
        in str(e.value)

    @gt.graph(backend="sim")
    def g(s, x, h, out):
        s.copy(h, x)
        s.host(_clear, h)
        s.copy(out, h)
    g(x, h, out)
    assert out.copy_to_host().tolist() == [0.0] * 4


def test_cupy_kernel_needs_a_registered_reference():
    cp = pytest.importorskip("cupy")
    src = 'extern "C" __global__ void twice(const float* x, float* y, int n) {}'
    k = cp.RawKernel(src, "twice")

    @gt.graph(backend="sim")
    def f(s, x, y):
        s.launch(k, 1, 32, x, y, 8)
    x = cuda.to_device(np.arange(8, dtype=np.float32))
    y = cuda.to_device(np.zeros(8, dtype=np.float32))
    with pytest.raises(gt.SimulationError, match=r"@gt.reference\(twice\)"):
        f(x, y)

    @gt.reference(k)
    def twice(grid, block, x, y, n):
        y[:n] = 2 * x[:n]
    f(x, y)
    assert y.copy_to_host().tolist() == [2.0 * i for i in range(8)]


def test_cuda_core_kernel_runs_its_registered_reference():
    """As a cupy kernel does: without a stand-in the launch's line says to register
    one; with it, the stand-in runs, undeclared or declared with gt.kernel."""
    Kernel = type("Kernel", (), {"__module__": "cuda.core._module"})   # a stand-in
    k = Kernel()
    kd = gt.kernel(k, "in, out, in")

    @gt.graph(backend="sim")
    def f(s, x, y):
        s.launch(kd, 1, 32, x, y, 8)                        # core-launch
        s.launch(k, 1, 32, y, x, 8)
    x, y = cuda.to_device(np.arange(8.0)), cuda.to_device(np.zeros(8))
    with pytest.raises(gt.SimulationError) as e:
        f(x, y)
    assert str(e.value).startswith(f"test_sim.py:{line_of(__file__, 'core-launch')}: ")
    assert "no CPU reference for cuda.core kernel (unnamed)" in str(e.value)
    assert "register a Python stand-in with @gt.reference(kernel)" in str(e.value)

    @gt.reference(k)
    def twice(grid, block, x, y, n):
        y[:n] = 2 * x[:n]
    f(x, y)
    assert y.copy_to_host().tolist() == [2.0 * i for i in range(8)]
    assert x.copy_to_host().tolist() == [4.0 * i for i in range(8)]


def test_check_reports_races_in_stream_mode_with_both_lines():
    K = any_kernel()
    x = A(64)

    @gt.graph(deps="streams")
    def racy(s):
        t = s.fork()
        s.launch(K, 1, 1, gt.Out(x))           # first
        t.launch(K, 1, 1, gt.In(x))            # second
    races = gt.check(racy.trace())
    assert len(races) == 1
    text = str(races[0])
    assert f"test_sim.py:{line_of(__file__, 'first')}" in text
    assert f"test_sim.py:{line_of(__file__, 'second')}" in text
    assert "touch x / x, one writing" in text

    @gt.graph(deps="streams")
    def joined(s):
        t = s.fork()
        s.launch(K, 1, 1, gt.Out(x))
        t.join(s)
        t.launch(K, 1, 1, gt.In(x))
    assert gt.check(joined.trace()) == []


def test_check_finds_nothing_in_data_mode():
    K = any_kernel()
    x, y = A(64), A(64)

    @gt.graph
    def f(s):
        t = s.fork()
        s.launch(K, 1, 1, gt.Out(x))
        t.launch(K, 1, 1, gt.In(x), gt.Out(y))
        s.launch(K, 1, 1, opaque=True)
    assert gt.check(f.trace()) == []


@cuda.jit
def _record_sum(r, out):
    i = cuda.grid(1)
    if i < r.size:
        out[i] = r[i].a + r[i].b


@cuda.jit
def _record_bump(r, out):
    i = cuda.grid(1)
    if i < r.size:
        out[i] = r[i].a
        r[i].b = -0.0


def test_record_arrays_are_checked_byte_by_byte():
    """A kernel reading records runs; one writing a record it was declared to only
    read is caught, even where the new value equals the old (-0.0 over 0.0)."""
    rt = np.dtype([("a", np.float64), ("b", np.float64)])
    host = np.zeros(8, rt)
    host["a"], host["b"] = np.arange(8), np.nan   # NaNs stay NaNs: not a write

    @gt.graph
    def f(s, r, out):
        _record_sum[1, 32, s](r, out)
    r, out = cuda.to_device(host), cuda.to_device(np.zeros(8))
    f(r, out)
    assert np.isnan(out.copy_to_host()).all()
    host["b"] = 0.0

    @gt.graph
    def g(s, r, out):
        _record_bump[1, 32, s](gt.In(r), out)
    with pytest.raises(gt.IntentError, match="wrote to r"):
        g(cuda.to_device(host), out)


@cuda.jit
def _aligned_sum(r, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = r[i].a * 10 + r[i].b


@pytest.mark.parametrize("step", [1, 2])
def test_a_kernel_only_reading_records_with_padding_is_not_said_to_write_them(step):
    """An aligned record ([('a', i1), ('b', f8)]: 7 bytes of padding each) was copied
    field by field for the read-only check, the copy's padding left as new memory
    holds it, and every byte compared: IntentError 'wrote to r'. Also for a strided
    view of them."""
    rt = np.dtype([("a", np.int8), ("b", np.float64)], align=True)
    n = 1 << 15   # (a copy of 512 KiB: in new pages, whose padding holds zeros)
    host = np.full(n * rt.itemsize, 0xAB, np.uint8).view(rt)
    host["a"], host["b"] = np.arange(n) % 7, 0.5
    r = cuda.to_device(host.view(np.uint8)).view(rt)   # the padding copied as it is

    @gt.graph
    def f(s, r, out):
        _aligned_sum[1, 8, s](r[::step], out)
    out = cuda.to_device(np.zeros(8))
    f(r, out)
    assert out.copy_to_host().tolist() == [x * 10 + 0.5 for x in (np.arange(16) % 7)[::step][:8]]


@cuda.jit
def _square(d):
    i = cuda.grid(1)
    if i < d.size:
        d[i] = d[i] * d[i]


PINNED = gt.pinned_empty(4)
SEEN = []


def _report():   # reads PINNED by its global name
    SEEN.append(PINNED.copy().tolist())


def _report_by_helper():   # through a helper it calls by a global name
    _report()


PLACES = type("Places", (), {})()
PLACES.pinned = PINNED


def _report_by_attribute():   # an attribute of a global object
    SEEN.append(PLACES.pinned.copy().tolist())


def _report_by_default(a=PINNED):   # a default argument
    SEEN.append(a.copy().tolist())


class _Settings:   # attributes backed by a dict: a missing one raises KeyError
    def __init__(self, **values):
        self.__dict__["_values"] = values

    def __getattr__(self, name):
        return self._values[name]


class _Sink:   # what a callback is handed, or what it calls a method of
    def __init__(self, buf):
        self.inner = type("Inner", (), {})()
        self.inner.buf = buf
        self.settings = _Settings(verbose=False)   # looked at, and left alone

    def read(self):
        SEEN.append(self.inner.buf.copy().tolist())


SINK = _Sink(PINNED)


def _report_by_method_of_a_global():   # SINK.read() reads SINK.inner.buf
    SINK.read()


def _report_to(sink):   # handed the object itself: s.host(_report_to, SINK)
    sink.read()


@pytest.mark.parametrize("report", [_report, _report_by_helper, _report_by_attribute,
                                    _report_by_default, _report_by_method_of_a_global,
                                    _report_to])
def test_a_callback_reading_an_array_by_a_global_name_waits_for_its_writers(report):
    @gt.graph
    def f(s, d):
        _square[1, 32, s](d)
        s.copy(PINNED, d)
        s.host(report, *((SINK,) if report is _report_to else ()))
    d = cuda.to_device(np.arange(4.0))
    g = f.trace(d)
    assert g.nodes[1] in g.nodes[2].deps   # after the copy into PINNED
    SEEN.clear()
    for seed in range(6):   # in any order the data allow
        d.copy_to_device(np.arange(4.0))
        gt.simulate(g, seed=seed)
    assert SEEN == [[0.0, 1.0, 4.0, 9.0]] * 6


STAGING = gt.pinned_empty(8)   # the graph is given (or reaches) a part of it
STAGED = STAGING[2:6]


def _report_staging():   # reads the whole staging array by its global name
    SEEN.append(STAGING[2:6].copy().tolist())


@pytest.mark.parametrize("part", ["argument", "global view", "argument at its end"])
def test_a_callback_reading_a_global_array_holding_the_graphs_waits_for_its_writers(part):
    """The global the callback reads reaches past the graph's array (a staging
    array of which the graph copies into a part): the callback was not ordered
    after the copy, and saw the call before's values."""
    @gt.graph
    def f(s, d, h):
        _square[1, 32, s](d)
        s.copy(STAGED if part == "global view" else h, d)
        s.host(_report_staging)
    h = STAGING[2:6] if part != "argument at its end" else STAGING[2:]
    d = cuda.to_device(np.arange(4.0))
    g = f.trace(d, h if part != "argument at its end" else h[:4])
    assert g.nodes[1] in g.nodes[2].deps   # after the copy into the staging array
    SEEN.clear()
    for seed in range(6):   # in any order the data allow
        d.copy_to_device(np.arange(4.0))
        STAGING[:] = -1
        gt.simulate(g, seed=seed)
    assert SEEN == [[0.0, 1.0, 4.0, 9.0]] * 6
    SEEN.clear()
    for call in range(3):   # called: each call's values
        STAGING[:] = -1
        f(cuda.to_device(np.arange(4.0) + call), STAGING[2:6])
    assert SEEN == [[float(v * v) for v in np.arange(4.0) + call] for call in range(3)]


class _Holder:
    def __init__(self, a):
        self.a = a

    def __call__(self):
        SEEN.append(self.a[0])

    def report(self):
        SEEN.append(self.a[0])


@pytest.mark.parametrize("how", ["closure", "partial", "opaque closure", "object",
                                 "bound method", "function in a closure", "view",
                                 "default argument", "object handed to it"])
def test_a_callback_holding_an_array_of_the_graph_is_refused_at_its_line(how):
    import functools

    @gt.graph
    def f(s, d, h):
        s.copy(h, d)
        inner = lambda: h[0]   # noqa: E731
        view = h[1:]
        if how == "partial":
            s.host(functools.partial(print, h))                  # partial holds h
        elif how == "object":
            s.host(_Holder(h))                                   # object holds h
        elif how == "bound method":
            s.host(_Holder(h).report)                            # bound method holds h
        elif how == "function in a closure":
            s.host(lambda: SEEN.append(inner()))                 # function in a closure holds h
        elif how == "view":
            s.host(lambda: SEEN.append(view[0]))                 # view holds h
        elif how == "default argument":
            s.host(lambda a=h: SEEN.append(a[0]))                # default argument holds h
        elif how == "object handed to it":
            s.host(_report_to, _Sink(h))                         # object handed to it holds h
        else:
            s.host(lambda: print(h), opaque=how != "closure")   # closure holds h
    with pytest.raises(gt.ArgumentError, match="pass it to s.host as an argument") as e:
        f.trace(cuda.to_device(np.zeros(4)), gt.pinned_empty(4))
    marker = "closure holds h" if how == "opaque closure" else f"{how} holds h"
    assert e.value.source[1] == line_of(__file__, marker)


def test_a_callback_holding_a_number_of_the_graph_is_refused_and_one_handed_to_it_is_bound():
    """A number argument is a placeholder while tracing: a callback holding it
    (its closure) would receive that, not each call's number."""
    @gt.graph
    def f(s, d, h, a):
        s.copy(h, d)
        s.host(lambda: SEEN.append(a * 2))                   # holds a number
    with pytest.raises(gt.ArgumentError, match=r"s.host\(fn, a\)") as e:
        f(cuda.to_device(np.zeros(4)), gt.pinned_empty(4), 1.5)
    assert e.value.source[1] == line_of(__file__, "holds a number")

    @gt.graph
    def g(s, h, a):
        s.host(lambda v: SEEN.append(v * 2), a)
    SEEN.clear()
    for a in (1.5, 2.5):
        g(gt.pinned_empty(4), a)
    assert SEEN == [3.0, 5.0]


STATS = type("Stats", (), {"PINNED": 0})()


def test_a_callback_of_other_globals_and_constants_is_taken_as_before():
    @gt.graph
    def f(s, d, h):
        s.copy(h, d)
        s.host(_report, opaque=True)      # opaque: ordered with all, no access named
        s.host(lambda: print(len(SEEN)))  # no array of the graph
        s.host(lambda: print(d.shape))    # a device array it cannot read: its shape
        s.host(lambda: print(STATS.PINNED))   # an attribute named as a global is
    g = f.trace(cuda.to_device(np.zeros(4)), gt.pinned_empty(4))
    assert g.nodes[1].opaque and [a for n in g.nodes[1:] for a in n.accesses] == []


@cuda.jit
def _scale_by(x, a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i]


def test_simulate_runs_a_traced_graph_with_its_traced_numbers():
    @gt.graph
    def step(s, x, out, a):
        _scale_by[1, 4, s](x, a, out)
    x, out = cuda.to_device(np.ones(4)), cuda.device_array(4)
    gt.simulate(step.trace(x, out, 2.5), seed=1)
    assert out.copy_to_host().tolist() == [2.5] * 4


def test_a_child_graph_must_be_a_graph_function():
    @gt.graph
    def f(s, x, out):
        s.child(_scale_by, x, 2.0, out)   # a kernel
    with pytest.raises(gt.ArgumentError, match="takes a @gt.graph function, not"):
        f.trace(cuda.to_device(np.ones(4)), cuda.device_array(4))


def test_a_race_in_a_streams_graph_is_not_said_to_be_in_stream_order():
    @gt.graph(deps="streams")
    def f(s, x):
        t = s.fork()
        _scale_by[1, 4, s](x, 2.0, x)
        _scale_by[1, 4, t](x, 3.0, x)
    g = f.trace(cuda.to_device(np.ones(4)))
    why = gt.explain(g).why(g.nodes[0], g.nodes[1])
    assert why.race and "stream order" not in why.text and "nothing orders them" in why.text

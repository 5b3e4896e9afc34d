"""cuda.core's launch spelling on proxy streams, and launch options in kernel nodes:
thread block clusters, dynamic shared memory, cooperative launches."""
import operator

import numpy as np
import pytest
from numba import cuda, float64

import graphtrace as gt
from cuda.core import Kernel, LaunchConfig, launch   # after graphtrace: it records
from graphtrace.ops import _launch, kernel as kernel_module
from helpers import FakeDeviceArray as A, line_of

# launches recorded by the compiled path (_speedups.c) and by pure Python
pytestmark = pytest.mark.usefixtures("both_launch_paths")

F = __file__
cp = pytest.importorskip("cupy")


@cuda.jit
def scale(x, a, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i]


CUPY_SRC = r'''
extern "C" __global__ void cscale(const double* x, double a, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i];
}
'''
cscale = cp.RawKernel(CUPY_SRC, "cscale")
core_scale = gt.kernel(Kernel.from_handle(0x1234), "in, in, out", name="core_scale")


@gt.reference(cscale)
def _cscale(grid, block, x, a, out, n):
    out[:n] = a * x[:n]


def config(grid, block, **fields):
    """A LaunchConfig; cluster and is_cooperative are set afterwards, since cuda.core
    asks the device about them in the constructor (there is none here)."""
    cfg = LaunchConfig(grid=grid, block=block, shmem_size=fields.pop("shmem_size", None))
    for name, value in fields.items():
        setattr(cfg, name, value)
    return cfg


def check(excinfo, where, *phrases):
    """The error names line ``where`` of this file (a ``# marker``, or the first line
    of a function: the lambdas that issue launches here) and says ``phrases``."""
    err = excinfo.value
    line = line_of(F, where) if isinstance(where, str) else where.__code__.co_firstlineno
    assert err.source == (F, line), str(err)
    for p in phrases:
        assert p in str(err), str(err)


def kernel_lines(g):
    return [line.split("  ")[1] for line in str(g).splitlines()[1:]]


# --- the cuda.core spelling ---------------------------------------------------
def test_graphtrace_puts_its_launch_in_place_of_cuda_cores():
    import cuda.core
    assert cuda.core.launch is gt.launch is launch


@pytest.mark.parametrize("spelling", ["cuda.core", "gt", "stream"])
def test_each_kernel_kind_records_through_each_spelling(spelling):
    def go(s, cfg, k, *args):
        if spelling == "cuda.core":
            return launch(s, cfg, k, *args)
        if spelling == "gt":
            return gt.launch(s, cfg, k, *args)
        return s.launch(k, cfg, *args)

    @gt.graph
    def f(s, x, out, n):
        go(s, LaunchConfig(grid=4, block=128), scale, x, 2.0, out)
        go(s, {"grid": 4, "block": 128, "shmem_size": 64}, cscale, x, 2.0, out, n)
        go(s, LaunchConfig(grid=(2, 2), block=(64, 2)), core_scale, x, 2.0, out)
    g = f.trace(A(512, "float64"), A(512, "float64"), 512)
    assert kernel_lines(g) == [
        "%0 = kernel scale[4, 128](x, 2.0, out)",
        "%1 = kernel cscale[4, 128](x, 2.0, out, n) shared_mem=64",
        "%2 = kernel core_scale[(2, 2, 1), (64, 2, 1)](x, 2.0, out)"]
    assert [[m for _, m in node.accesses] for node in g.nodes] == \
        [["r", "w"], ["r", "rw"], ["r", "w"]]   # cupy: a pointer not const is read too


@pytest.mark.parametrize("spelling", ["cuda.core", "gt", "stream"])
def test_the_cuda_core_spelling_runs_on_the_simulator(spelling):
    @gt.graph(backend="sim")
    def f(s, x, a, out, out2):
        cfg = LaunchConfig(grid=1, block=32)
        if spelling == "stream":
            s.launch(scale, cfg, x, a, out)
            s.launch(cscale, cfg, x, a, out2, 10)
        else:
            (launch if spelling == "cuda.core" else gt.launch)(s, cfg, scale, x, a, out)
            (launch if spelling == "cuda.core" else gt.launch)(s, cfg, cscale, x, a, out2, 10)
    x, out, out2 = cuda.to_device(np.arange(10.0)), cuda.to_device(np.zeros(10)), \
        cuda.to_device(np.zeros(10))
    f(x, 3.0, out, out2)
    assert out.copy_to_host().tolist() == out2.copy_to_host().tolist() == \
        [3.0 * i for i in range(10)]


def test_on_a_real_stream_outside_a_trace_it_is_cuda_cores_own_launch(monkeypatch):
    from graphtrace.ops import _core
    calls = []
    monkeypatch.setattr(_core, "_core_launch", lambda *a: calls.append(a))
    cfg, stream = LaunchConfig(grid=1, block=32), object()
    assert launch(stream, cfg, core_scale.kernel, 1, 2.0) is None
    assert calls == [(stream, cfg, core_scale.kernel, 1, 2.0)]


def test_cuda_cores_launch_on_a_real_stream_inside_a_trace_is_refused():
    @gt.graph
    def f(s, x, out):
        launch(object(), LaunchConfig(grid=1, block=32), scale, x, 2.0, out)  # realstream
    with pytest.raises(gt.StreamError) as e:
        f.trace(A(32), A(32))
    check(e, "realstream", "escape the graph", "launch(s, config, kernel, *args)")


def test_cuda_cores_own_launch_bound_before_graphtrace_says_what_to_do():
    from cuda.core._launcher import launch as cores_own   # what an earlier import binds

    @gt.graph
    def f(s, x):
        cores_own(s, LaunchConfig(grid=1, block=32), Kernel.from_handle(0x1234), x)  # early
    with pytest.raises(gt.StreamError) as e:
        f.trace(A(32))
    check(e, "early", "import graphtrace first, or call gt.launch")


@pytest.mark.parametrize("sizes", [{"grid": "n", "block": 32}, {"grid": 1, "block": "n"},
                                   {"grid": (1, "n"), "block": 32}])
def test_a_dynamic_scalar_sizing_a_launch_config_is_the_dynamic_scalar_error(sizes):
    """cuda.core's LaunchConfig takes ints alone: it refused a dynamic scalar with a
    ValueError naming graphtrace's Scalar class, no line and no static= advice."""
    def put(v, n):
        return n if v == "n" else tuple(put(d, n) for d in v) if isinstance(v, tuple) else v

    @gt.graph
    def f(s, x, out, n):
        cfg = LaunchConfig(**{k: put(v, n) for k, v in sizes.items()})   # dyncfg
        launch(s, cfg, scale, x, 2.0, out)
    with pytest.raises(gt.DynamicScalarError) as e:
        f.trace(A(32), A(32), 2)
    check(e, "dyncfg", "static=('n',)")
    import cuda.core
    from cuda.core._launch_config import LaunchConfig as cores_own
    assert LaunchConfig is cuda.core.LaunchConfig and issubclass(LaunchConfig, cores_own)
    assert (LaunchConfig.__name__, LaunchConfig.__module__) == ("LaunchConfig",
                                                                cores_own.__module__)
    with pytest.raises(ValueError, match="must be an int"):   # the rest as cuda.core's
        LaunchConfig(grid="2", block=32)
    assert isinstance(LaunchConfig(grid=2, block=32), cores_own)
    # a config cuda.core makes itself (a KernelNode's, one made with a name bound before
    # graphtrace) is one of the class its module now names, as before the replacement
    assert isinstance(cores_own(grid=2, block=32), LaunchConfig)
    assert issubclass(cores_own, LaunchConfig)


@pytest.mark.parametrize("which", ["numba", "cupy", "declared"])
def test_cuda_cores_own_launch_bound_before_graphtrace_given_another_kernel_says_what_to_do(
        which):
    """cuda.core's own launch checks its kernel's type before it looks at the
    stream: a numba or cupy kernel was cuda.core's bare TypeError."""
    from cuda.core._launcher import launch as cores_own   # what an earlier import binds
    k = {"numba": scale, "cupy": cscale, "declared": gt.kernel(scale, "in, in, out")}[which]

    @gt.graph
    def f(s, x, out):
        cores_own(s, LaunchConfig(grid=1, block=32), k, x, 2.0, out)  # early other
    with pytest.raises(gt.StreamError) as e:
        f.trace(A(32), A(32))
    check(e, "early other", "cuda.core's own launch", "import graphtrace first",
          "gt.launch(s, config, kernel, *args)")


# --- launch options -------------------------------------------------------------
@pytest.mark.parametrize("option", [{"cluster": 2}, {"is_cooperative": True}])
def test_a_launch_config_asking_the_gpu_on_a_machine_without_one_says_what_to_do(option):
    """cuda.core's LaunchConfig asks the driver about clusters and cooperative launches:
    without a GPU that was a driver library's traceback, naming no line."""
    from graphtrace import _driver
    if _driver.available():
        pytest.skip("a GPU is here: cuda.core answers")

    @gt.graph
    def f(s, x, out):
        cfg = LaunchConfig(grid=2, block=32, **option)   # askgpu
        launch(s, cfg, scale, x, 2.0, out)
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(64), A(64))
    check(e, "askgpu", f"LaunchConfig({next(iter(option))}=...)", "cluster=(2, 1, 1)")


def test_options_as_keywords_and_in_a_launch_config_are_listed():
    @gt.graph
    def f(s, x, out):
        s.launch(scale, 8, 128, x, 2.0, out, cluster=(2, 1, 1), shared_mem=102400,
                 cooperative=True)
        s.launch(scale, config(4, 128, cluster=(2, 1, 1), shmem_size=102400,
                               is_cooperative=True), x, 2.0, out)
        launch(s, config((2, 2), 64, cluster=(1, 2, 1)), scale, x, 2.0, out)
        s.launch(scale, 8, 128, x, 2.0, out, shared_mem=np.int64(0), cooperative=np.True_)
    g = f.trace(A(1024), A(1024))
    assert kernel_lines(g) == [
        "%0 = kernel scale[8, 128](x, 2.0, out) cluster=(2,1,1) shared_mem=102400 cooperative",
        "%1 = kernel scale[8, 128](x, 2.0, out) cluster=(2,1,1) shared_mem=102400 cooperative",
        "%2 = kernel scale[(2, 4, 1), 64](x, 2.0, out) cluster=(1,2,1)",
        "%3 = kernel scale[8, 128](x, 2.0, out) cooperative"]
    assert g.nodes[0].attrs == g.nodes[1].attrs == {
        "grid": (8, 1, 1), "block": (128, 1, 1), "shared_mem": 102400,
        "cluster": (2, 1, 1), "cooperative": True}
    assert type(g.nodes[3].attrs["cooperative"]) is bool


def test_a_plain_launch_has_no_options():
    @gt.graph
    def f(s, x, out):
        s.launch(scale, 8, 128, x, 2.0, out)
    node = f.trace(A(1024), A(1024)).nodes[0]
    assert node.attrs == {"grid": (8, 1, 1), "block": (128, 1, 1), "shared_mem": 0,
                          "cluster": None, "cooperative": False}
    assert not _launch.has_node_attributes(node.attrs)


def test_numba_dynamic_shared_memory_from_the_launch_syntax_runs_on_the_simulator():
    @cuda.jit
    def reverse_block(x, out):
        buf = cuda.shared.array(0, float64)
        t = cuda.threadIdx.x
        buf[t] = x[t]
        cuda.syncthreads()
        out[t] = buf[cuda.blockDim.x - 1 - t]

    @gt.graph(backend="sim")
    def f(s, x, out):
        reverse_block[1, 16, s, 16 * 8](x, out)
    x, out = cuda.to_device(np.arange(16.0)), cuda.to_device(np.zeros(16))
    f(x, out)
    assert out.copy_to_host().tolist() == list(np.arange(16.0)[::-1])
    assert kernel_lines(f.trace(x, out)) == [
        "%0 = kernel reverse_block[1, 16](x, out) shared_mem=128"]


@pytest.mark.parametrize("launch_, phrase", [
    (lambda s, x, out: s.launch(scale, 4, 64, x, 2.0, out, cluster=3),
     "grid (4, 1, 1) is not a whole number of clusters (3, 1, 1)"),
    (lambda s, x, out: s.launch(scale, 4, 64, x, 2.0, out, cluster=(1, 0)),
     "cluster must be a positive int"),
    (lambda s, x, out: s.launch(scale, LaunchConfig(grid=4, block=64), x, 2.0, out,
                                shared_mem=128),
     "given both in a LaunchConfig and as keywords"),
    (lambda s, x, out: s.launch(scale, LaunchConfig(grid=4, block=64), x, 2.0, out,
                                cooperative=False),
     "given both in a LaunchConfig and as keywords"),
    (lambda s, x, out: s.launch(scale, 4),
     "a launch needs a block size after the grid"),
    (lambda s, x, out: gt.launch(s, {"grid": 4, "block": 64, "stream": 0}, scale, x, 2.0, out),
     "unknown LaunchConfig field 'stream'"),
    (lambda s, x, out: gt.launch(s, {"block": 64}, scale, x, 2.0, out),
     "LaunchConfig.grid must be a positive int"),
    (lambda s, x, out: s.launch(scale, LaunchConfig(
        grid=4, block=64, programmatic_stream_serialization=True), x, 2.0, out),
     "programmatic_stream_serialization=True"),
    (lambda s, x, out: s.launch(scale, 4, 64, x, 2.0, out, cooperative=1),
     "cooperative must be True or False, not 1"),
    (lambda s, x, out: s.launch(scale, 4, 64, x, 2.0, out, shared_mem=-1),
     "shared_mem must be a non-negative int"),
])
def test_bad_options_are_refused_at_the_launch_line(launch_, phrase):
    @gt.graph
    def f(s, x, out):
        launch_(s, x, out)
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(256), A(256))
    check(e, launch_, phrase)


@pytest.mark.parametrize("option", ["cluster", "shared_mem", "cooperative"])
def test_options_cannot_be_dynamic_scalars(option):
    @gt.graph
    def f(s, x, out, n):
        s.launch(scale, 4, 64, x, 2.0, out, **{option: n})   # dynamicoption
    with pytest.raises(gt.DynamicScalarError) as e:
        f.trace(A(256), A(256), 2)
    check(e, "dynamicoption", "static=")


# --- cooperative launches ---------------------------------------------------------
@cuda.jit
def grid_total(x, total, out):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(total, 0, x[i])
    cuda.cg.this_grid().sync()          # every block's atomics are done
    if i < x.size:
        out[i] = total[0]


def test_a_grid_syncing_kernel_becomes_a_node_when_launched_cooperatively():
    @gt.graph(backend="sim")
    def f(s, x, total, out):
        s.launch(grid_total, 1, 16, x, total, out, cooperative=True)
        s.launch(grid_total, config(1, 16, is_cooperative=True), x, total, out)
    x, total, out = cuda.to_device(np.arange(16.0)), cuda.to_device(np.zeros(1)), \
        cuda.to_device(np.zeros(16))
    f(x, total, out)
    assert out.copy_to_host().tolist() == [240.0] * 16
    assert total.copy_to_host().tolist() == [240.0]
    assert all(n.attrs["cooperative"] for n in f.trace(x, total, out).nodes)


def test_cooperative_launches_are_ordered_one_at_a_time_in_the_recorded_graph():
    """Two at once broke each other's grid syncs on an H200: the graph orders them,
    whatever their data, and its listing, explain, check and profile say so."""
    @gt.graph
    def f(s, x, y, out, flag):
        s.launch(scale, 1, 16, x, 2.0, out[:16], cooperative=True)
        s.launch(scale, 1, 16, y, 2.0, out[16:], cooperative=True)     # other bytes
        with s.while_loop(gt.cond(flag), max_iterations=2) as body:
            body.launch(scale, 1, 16, y, 3.0, out[16:], cooperative=True)
    g = f.trace(A(16), A(16), A(32), A(1, "int32"))
    assert [[d.index for d in n.deps] for n in g.nodes] == [[], [0], [1]]
    assert g.nodes[0].accesses[-1][0].label == "cooperative launches"
    e = gt.explain(g)
    assert str(e).splitlines()[1] == "  %0 scale -> %1 scale: cooperative launches run one " \
                                      "at a time"
    assert str(e.why(0, 1)) == ("%0 scale runs before %1 scale: ordered by the edge %0 -> %1 "
                                "(cooperative launches run one at a time)")
    assert e.why(0, 3).ordered                                # the loop's too, in data mode
    assert '  n0 -> n1 [label="cooperative", fontsize=9];' in g.to_dot(buffers=True)

    @gt.graph(deps="streams")
    def h(s, x, y, out):
        t = s.fork()
        s.launch(scale, 1, 16, x, 2.0, out[:16], cooperative=True)
        t.launch(scale, 1, 16, y, 2.0, out[16:], cooperative=True)    # another stream
    g = h.trace(A(16), A(16), A(32))
    assert [d.index for d in g.nodes[1].deps] == [0] and gt.check(g) == []
    assert str(gt.explain(g)).splitlines()[1] == \
        "  %0 scale -> %1 scale: cooperative launches run one at a time"
    x, y, out = (cuda.to_device(np.arange(n, dtype=np.float32)) for n in (16, 16, 32))
    p = h.profile(x, y, out, backend="sim")
    assert "critical path by node count: 2 of 2 nodes (%0 -> %1)" in str(p)


def test_the_simulator_refuses_a_grid_sync_across_blocks_at_the_launch_line():
    @gt.graph(backend="sim")
    def f(s, x, total, out):
        s.launch(grid_total, 2, 8, x, total, out, cooperative=True)   # twoblocks
    x, total, out = cuda.to_device(np.arange(16.0)), cuda.to_device(np.zeros(1)), \
        cuda.to_device(np.zeros(16))
    with pytest.raises(gt.SimulationError) as e:
        f(x, total, out)
    check(e, "twoblocks", "one block at a time", "2 blocks here", "run it on the GPU")
    assert isinstance(f.trace(x, total, out), gt.Graph)   # the trace itself is fine


def test_a_grid_syncing_kernel_launched_without_the_option_is_cooperative_as_eagerly():
    """numba launches a kernel that synchronises its grid cooperatively on its own:
    ``grid_total[1, 16](...)`` runs eagerly, so it is a cooperative node here."""
    @gt.graph(backend="sim")
    def f(s, x, total, out):
        grid_total[1, 16, s](x, total, out)
        s.launch(grid_total, 1, 16, x, total, out)
    x, total, out = cuda.to_device(np.arange(16.0)), cuda.to_device(np.zeros(1)), \
        cuda.to_device(np.zeros(16))
    f(x, total, out)
    assert out.copy_to_host().tolist() == [240.0] * 16
    g = f.trace(x, total, out)
    assert all(n.attrs["cooperative"] for n in g.nodes)
    assert [d.index for d in g.nodes[1].deps] == [0]
    assert all(") cooperative  in(x)" in line for line in str(g).splitlines()[1:3])


@cuda.jit
def named_this_grid(x):
    this_grid = cuda.grid(1)          # a local of that name: no grid sync
    if this_grid < x.size:
        x[this_grid] += 1


def test_a_kernel_with_a_local_named_this_grid_is_a_plain_node():
    @gt.graph(backend="sim")
    def f(s, x):
        named_this_grid[2, 4, s](x)
    x = cuda.to_device(np.zeros(8))
    f(x)
    assert x.copy_to_host().tolist() == [1.0] * 8
    assert not f.trace(x).nodes[0].attrs["cooperative"]


def test_a_grid_syncing_kernel_said_not_cooperative_points_to_the_option():
    @gt.graph
    def f(s, x, total, out):
        s.launch(grid_total, 1, 16, x, total, out, cooperative=False)   # notcooperative
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace(A(16, "float64"), A(1, "float64"), A(16, "float64"))
    check(e, "notcooperative", "grid_total synchronises the whole grid", "cooperative=True")


def test_cupy_kernels_built_for_cooperative_groups_need_the_option():
    k = cp.RawKernel(CUPY_SRC, "cscale", enable_cooperative_groups=True)

    @gt.graph
    def f(s, x, out, cooperative):
        s.launch(k, 1, 32, x, 2.0, out, 32, cooperative=cooperative)    # cupycoop
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace(A(32, "float64"), A(32, "float64"), False)
    check(e, "cupycoop", "enable_cooperative_groups=True", "cooperative=True")
    assert f.trace(A(32, "float64"), A(32, "float64"), True).nodes[0].attrs["cooperative"]


def test_cooperative_nodes_are_one_switch(monkeypatch):
    monkeypatch.setattr(_launch, "COOPERATIVE_NODES", False)
    kernel_module._launches.clear()   # what earlier launches of grid_total were checked as

    @gt.graph
    def f(s, x, total, out):
        s.launch(scale, 1, 16, x, 2.0, out, cooperative=True)  # switchedoff
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace(A(16, "float64"), A(1, "float64"), A(16, "float64"))
    check(e, "switchedoff", "cannot be a graph kernel node", "launch the kernel eagerly")

    @gt.graph
    def g(s, x, total, out):
        grid_total[1, 16, s](x, total, out)                     # syncswitchedoff
    with pytest.raises(gt.KernelArgumentError) as e:
        g.trace(A(16, "float64"), A(1, "float64"), A(16, "float64"))
    check(e, "syncswitchedoff", "synchronises the whole grid", "launch it eagerly")
    assert "cooperative=True" not in str(e.value)


# --- raw addresses ------------------------------------------------------------------
def test_an_int_pointing_into_an_argument_is_refused():
    @gt.graph
    def f(s, x, out):
        ptr = np.uint64(x.__cuda_array_interface__["data"][0] + 8)
        launch(s, LaunchConfig(grid=1, block=32), core_scale, ptr, 2.0, out)   # rawptr
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace(A(32), A(32))
    check(e, "rawptr", "is an int that points into x", "pass the array x itself")


def test_an_address_passed_in_as_a_number_is_refused_too():
    @gt.graph
    def f(s, x, out, address):
        s.launch(core_scale, 1, 32, address, 2.0, out)        # rawarg
    x = A(32)
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace(x, A(32), x.__cuda_array_interface__["data"][0])
    check(e, "rawarg", "points into x")


def test_a_launch_like_an_earlier_one_is_checked_for_addresses_too():
    """The second launch of a kernel and configuration takes what the first one
    checked; its arguments are still its own to check."""
    @gt.graph
    def f(s, x, out):
        s.launch(core_scale, 1, 32, x, 2.0, out)
        ptr = x.__cuda_array_interface__["data"][0] + 8
        s.launch(core_scale, 1, 32, ptr, 2.0, out)             # cachedptr
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace(A(32), A(32))
    check(e, "cachedptr", "is an int that points into x")


@pytest.mark.parametrize("as_number, refused", [
    (int, True), (np.int64, True), (np.uint64, True),
    (float, False), (np.float64, False), (lambda v: np.timedelta64(v, "ns"), False)])
def test_an_address_is_refused_as_any_integer_type_and_floats_pass(as_number, refused):
    """An integer of any type from the lowest mapped address on may point into
    an argument; a float or a duration is no address."""
    @gt.graph
    def f(s, x, out):
        value = as_number(x.__cuda_array_interface__["data"][0])
        s.launch(core_scale, 1, 32, value, 2.0, out)            # asnumber
    x = A(32)
    if refused:
        with pytest.raises(gt.KernelArgumentError) as e:
            f.trace(x, A(32))
        check(e, "asnumber", "is an int that points into x")
    else:
        assert len(f.trace(x, A(32)).nodes) == 1


def test_raw_addresses_pass_for_opaque_kernels_and_other_ints_pass():
    opaque = gt.kernel(Kernel.from_handle(0x1234), opaque=True, name="opaque")

    @gt.graph
    def f(s, x, out):
        ptr = x.__cuda_array_interface__["data"][0]
        s.launch(opaque, 1, 32, ptr, out)
        s.launch(core_scale, 1, 32, x, 12345, out)
    g = f.trace(A(32), A(32))
    assert [n.opaque for n in g.nodes] == [True, False]


# --- what libraries ask of a stream -------------------------------------------------
@pytest.mark.parametrize("use, what", [
    (lambda s: s.ptr, "cupy asked for its pointer"),
    (lambda s: s.handle, "numba or cuda.core asked for its handle"),
    (lambda s: s.cuda_stream, "torch asked for its handle"),
    (lambda s: s.device, "torch asked for its device"),
    (lambda s: s.__cuda_stream__(), "the CUDA stream protocol"),
    (lambda s: int(s), "handle as an int"),
    (lambda s: operator.index(s), "handle as an int"),
    (lambda s: cp.cuda.Stream.from_external(s), "the CUDA stream protocol"),
])
def test_what_libraries_ask_of_a_stream_is_refused_with_the_spellings_to_use(use, what):
    @gt.graph
    def f(s, x):
        use(s)
    with pytest.raises(gt.StreamError) as e:
        f.trace(A(4))
    check(e, use, what, "s.launch(kernel, grid, block, *args)",
          "gt.launch(s, config, kernel, *args)", "s.captured(fn, *args)")


def test_a_library_frame_between_the_user_and_the_stream_is_skipped(tmp_path, monkeypatch):
    import os
    from graphtrace import errors
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "fake_streams.py").write_text(
        "def enter(stream):\n    return stream.device\n")
    monkeypatch.syspath_prepend(str(tmp_path / "torch"))
    # torch's frames are those in the folder it is installed in: this one
    monkeypatch.setitem(errors._library_dirs, "torch", str(tmp_path / "torch") + os.sep)
    import fake_streams

    @gt.graph
    def f(s, x):
        fake_streams.enter(s)                                      # throughlibrary
    with pytest.raises(gt.StreamError) as e:
        f.trace(A(4))
    check(e, "throughlibrary", "torch asked for its device")


def test_a_library_taking_the_proxy_stream_for_a_handle_is_named_at_the_users_line():
    """Compiled library code (torch, cupy's Cython) reads a stream handle without
    any attribute graphtrace could refuse; its TypeError becomes a StreamError at
    the user's line, naming the spellings to use."""
    import os
    import sysconfig
    library = {}
    exec(compile("def external_stream(stream):\n"
                 "    raise TypeError(f'argument 5 must be int, not {type(stream).__name__}')\n",
                 os.path.join(sysconfig.get_paths()["purelib"], "fakelib.py"), "exec"), library)

    @gt.graph
    def f(s, x):
        library["external_stream"](s)                                  # library call
    with pytest.raises(gt.StreamError) as e:
        f(A(4))
    assert e.value.source[1] == line_of(F, "library call")
    assert "s.captured(fn, *args)" in str(e.value) and "not Stream" in str(e.value)

    @gt.graph
    def g(s, x):
        raise TypeError("a mistake of the user's own")
    with pytest.raises(TypeError, match="of the user's own"):
        g(A(4))


@pytest.mark.parametrize("symbol, expression", [
    ("_Z6axpy_tIfEvPKT_S0_PS0_i", "axpy_t<float>"), ("_Z1kIdLi256EEvPT_", "k<double, 256>"),
    ("_Z1kIjLin3EEvv", "k<unsigned int, -3>"), ("_Z3fooPf", "foo"),
    ("_Z1kI6float2EvT_", None), ("plain", None)])
def test_the_name_expression_of_a_templated_cupy_kernel_is_read_from_its_symbol(
        symbol, expression):
    from graphtrace.ops._cupy import demangled
    assert demangled(symbol) == expression

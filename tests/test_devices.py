"""Graphs over several GPUs, on the CPU: placement, listing, dependencies, errors.

numba's simulator has one device; ``gt.sim_device(array, d)`` tags a simulator
array as living on simulated device ``d``, which is all placement looks at.
"""
import textwrap

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace.columns import Recording
from helpers import FakeDeviceArray, any_kernel, line_of
from step_kernels import add, scale

# launches recorded by the compiled path (_speedups.c) and by pure Python
pytestmark = pytest.mark.usefixtures("both_launch_paths")

F = __file__
N = 64
K = any_kernel()


@cuda.jit
def fill(y, v):
    i = cuda.grid(1)
    if i < y.size:
        y[i] = v


def on(device, values):
    """A simulator device array on simulated device ``device``."""
    return gt.sim_device(cuda.to_device(np.asarray(values, np.float64)), device)


def arrays(device, *fills):
    return [on(device, np.full(N, v)) for v in fills]


def where(graph):
    """``{kind target: device}`` of the top-level nodes, in order."""
    return [(n.index, n.device) for n in graph.nodes]


def check(excinfo, marker, *phrases):
    err = excinfo.value
    assert err.source[1] == line_of(F, marker), str(err)
    for p in phrases:
        assert p in str(err), str(err)


# --- placement -------------------------------------------------------------------

@gt.graph
def two_devices(s, x0, y0, x1, y1):
    scale[1, N, s](x0, 2.0, y0)           # on0
    scale[1, N, s](x1, 3.0, y1)           # on1
    s.copy(y0, y1)                        # peer
    add[1, N, s](x0, y0)                  # after-peer


def test_each_node_runs_on_the_device_of_its_arrays():
    g = two_devices.trace(*arrays(0, 1, 0), *arrays(1, 1, 0))
    assert where(g) == [(0, 0), (1, 1), (2, 0), (3, 0)]
    assert g.devices == (0, 1)


def test_listing_names_each_nodes_device_when_the_graph_spans_several():
    g = two_devices.trace(*arrays(0, 1, 0), *arrays(1, 1, 0))
    ln = {k: line_of(F, k) for k in ("on0", "on1", "peer", "after-peer")}
    assert str(g) == textwrap.dedent(f"""\
        graph two_devices(x0, y0, x1, y1)  deps=data  4 nodes, 3 edges
          %0 = kernel scale[1, 64](x0, 2.0, y0)  @cuda:0  in(x0)  out(y0)  # test_devices.py:{ln['on0']}
          %1 = kernel scale[1, 64](x1, 3.0, y1)  @cuda:1  in(x1)  out(y1)  # test_devices.py:{ln['on1']}
          %2 = memcpy y0 <- y1 (512 B)  @cuda:0  in(y1)  out(y0)  after(%0, %1)  # test_devices.py:{ln['peer']}
          %3 = kernel add[1, 64](x0, y0)  @cuda:0  in(x0)  inout(y0)  after(%2)  # test_devices.py:{ln['after-peer']}""")


def test_listing_of_a_graph_on_one_device_has_no_devices_even_if_not_device_0():
    g = two_devices.trace(*arrays(1, 1, 0), *arrays(1, 1, 0))
    assert g.devices == (1,)
    assert "@cuda" not in str(g)
    assert all(n.device == 1 for n in g.nodes)


def test_fake_device_arrays_can_be_tagged_too():
    x = gt.sim_device(FakeDeviceArray(N, "float64"), 1)
    g = two_devices.trace(FakeDeviceArray(N, "float64"), FakeDeviceArray(N, "float64"), x,
                          gt.sim_device(FakeDeviceArray(N, "float64"), 1))
    assert where(g) == [(0, 0), (1, 1), (2, 0), (3, 0)]


def test_views_of_a_tagged_array_are_on_its_device():
    x, y = arrays(1, 1, 0)

    @gt.graph
    def halves(s, x, y):
        add[1, N, s](x[: N // 2], y[: N // 2])
    assert halves.trace(x, y).nodes[0].device == 1


def test_a_view_keeps_the_device_after_the_tagged_array_is_dropped():
    import gc
    from graphtrace import arrays as _arrays
    x = gt.sim_device(cuda.to_device(np.ones(N + 2)), 1)[1:-1]   # only the view is kept
    gc.collect()
    assert two_devices.trace(x, on(1, np.zeros(N)), *arrays(1, 1, 0)).nodes[0].device == 1
    lo = _arrays.as_buffer(x).lo - 8
    del x
    gc.collect()
    assert lo not in _arrays._sim_devices   # the memory is gone: so is its tag


@gt.graph
def named(s, x0, x1, t0):
    fill[1, N, s.on(1)](x1, 1.0)                     # named-on
    k = s.fork(device=1)
    fill[1, N, k](x1, 2.0)                           # forked
    s.launch(fill, 1, N, x0, 3.0, device=0)          # launched
    fill[1, N, s.on(0)](t0, 4.0)


def test_a_stream_can_name_the_device_of_its_work():
    x0, x1 = on(0, np.zeros(N)), on(1, np.zeros(N))
    g = named.trace(x0, x1, on(0, np.zeros(N)))
    assert [n.device for n in g.nodes] == [1, 1, 0, 0]
    assert [n.stream for n in g.nodes] == [0, 1, 0, 0]   # s.on(d) is the same stream


def test_a_fork_places_as_its_parent_unless_told():
    x1 = on(1, np.zeros(N))

    @gt.graph
    def f(s, x):
        k = s.on(1).fork()
        t = k.empty(N)
        fill[1, N, k](t, 1.0)
        s.copy(x, t)
    g = f.trace(x1)
    assert [n.device for n in g.nodes] == [1, 1]


def test_temporaries_live_where_the_stream_says_or_where_their_kernels_run():
    x1 = on(1, np.arange(N))

    @gt.graph
    def f(s, x):
        a = s.zeros(N)                 # used by a device-1 kernel: on device 1
        b = s.on(1).empty(N)           # named
        add[1, N, s](x, a)
        fill[1, N, s](b, 1.0)          # only b: runs on b's device
        s.copy(x, a)
    g = f.trace(x1)
    assert [t.device for t in g.temporaries] == [1, 1]
    assert [n.device for n in g.nodes] == [1, 1, 1, 1]


def test_launches_are_placed_as_recorded_without_making_their_nodes(monkeypatch):
    """Each launch is placed by its own arrays and stream, also when the kernel and
    configuration were launched before; its Node, made when asked for, says where."""
    monkeypatch.setenv("GRAPHTRACE_VERIFY", "0")   # verify() makes every Node
    made = []
    make = Recording._make
    monkeypatch.setattr(Recording, "_make",
                        lambda rec, pos, opaque: made.append(pos) or make(rec, pos, opaque))

    @gt.graph
    def f(s, x0, y0, x1, y1):
        for _ in range(2):
            scale[1, N, s](x0, 2.0, y0)
            scale[1, N, s](x1, 3.0, y1)
            scale[1, N, s.on(1)](x1, 3.0, y1)
            s.launch(K, 1, N, 7, 1.0, device=1)   # no array: its stream says
            s.launch(K, 1, N, 7, 1.0)
    g = f.trace(*arrays(0, 1, 0), *arrays(1, 1, 0))
    assert made == []
    assert [n.device for n in g.nodes] == [0, 1, 1, 1, None] * 2
    g.verify()


def test_a_launch_like_an_earlier_one_is_refused_for_two_devices_too():
    @gt.graph
    def f(s, x0, y0, x1):
        add[1, N, s](x0, y0)
        add[1, N, s](x1, x1)
        add[1, N, s](x0, x1)                                   # mixed-again
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(*arrays(0, 1, 0), on(1, np.zeros(N)))
    check(e, "mixed-again", "kernel add is given x0 on device 0 and x1 on device 1")


def test_a_copy_runs_on_its_destinations_device_and_a_download_on_its_sources():
    host = gt.pinned_empty(N)

    @gt.graph
    def f(s, x0, x1):
        s.copy(x0, x1)
        s.copy(host, x1)
        s.copy(x1, host)
        s.on(1).copy(x0, x1)
    g = f.trace(on(0, np.zeros(N)), on(1, np.zeros(N)))
    assert [n.device for n in g.nodes] == [0, 1, 1, 1]


def test_bodies_of_a_stream_that_names_a_device_place_as_it_does():
    flag, x1 = on(1, np.ones(1)), on(1, np.zeros(N))

    @gt.graph
    def inner(s, x):
        t = s.empty(N)
        fill[1, N, s](t, 1.0)
        add[1, N, s](t, x)

    @gt.graph
    def f(s, flag, x):
        with s.on(1).while_loop(gt.cond(flag) > 5.0, max_iterations=2) as body:
            fill[1, N, body](body.empty(N), 2.0)
        s.on(1).child(inner, x)
    g = f.trace(flag, x1)
    loop, child = g.nodes
    assert loop.device == 1 and loop.regions[0].nodes[0].device == 1
    assert [n.device for n in child.regions[0].nodes] == [1, 1]
    assert [t.device for t in g.temporaries] == [1, 1]
    assert "@cuda" not in str(g) and "@cuda" not in g.to_dot()   # one device


def test_the_dot_graph_names_devices_too():
    dot = two_devices.trace(*arrays(0, 1, 0), *arrays(1, 1, 0)).to_dot()
    assert "scale[1, 64](x1, 3.0, y1)  @cuda:1" in dot


def test_host_callbacks_and_events_belong_to_no_device():
    x1 = on(1, np.zeros(N))
    host = gt.pinned_empty(N)

    @gt.graph
    def f(s, x):
        s.copy(host, x)
        s.host(print, gt.In(host))
    g = f.trace(x1)
    assert [n.device for n in g.nodes] == [1, None]


def test_a_captured_region_over_two_devices_lists_both():
    x0, x1 = on(0, np.zeros(N)), on(1, np.zeros(N))

    def both(a, b):
        a[...] = 1
        b[...] = 2

    @gt.graph
    def f(s, a, b):
        s.captured(both, a, b)
        s.on(1).captured(both, a, b)
    g = f.trace(x0, x1)
    assert [n.device for n in g.nodes] == [(0, 1), (1, 0)]
    assert "@cuda:0,1" in str(g) and "@cuda:1,0" in str(g)


# --- dependencies ----------------------------------------------------------------

def test_dependencies_cross_devices_as_within_one():
    x0, y0 = arrays(0, 1, 0)
    x1, y1 = arrays(1, 1, 0)

    @gt.graph
    def f(s, x0, y0, x1, y1):
        scale[1, N, s](x0, 2.0, y0)     # %0 writes y0 (device 0)
        s.copy(y1, y0)                   # %1 reads y0: after %0
        add[1, N, s](x1, y1)             # %2 reads/writes y1: after %1
        scale[1, N, s](x1, 1.0, x1)      # %3 writes x1, read by %2: after %2 (WAR)
        fill[1, N, s](x0, 5.0)           # %4 writes x0, read by %0: after %0 only
    g = f.trace(x0, y0, x1, y1)
    assert [[d.index for d in n.deps] for n in g.nodes] == [[], [0], [1], [2], [0]]
    assert gt.check(g) == []


def test_streams_mode_orders_by_stream_and_check_finds_the_race_across_devices():
    x0, x1 = on(0, np.zeros(N)), on(1, np.zeros(N))

    @gt.graph(deps="streams")
    def f(s, x0, x1):
        fill[1, N, s](x0, 1.0)
        k = s.fork(device=1)
        fill[1, N, k](x1, 2.0)
        s.copy(x0, x1)                 # nothing orders it after the fill on k
    g = f.trace(x0, x1)
    races = gt.check(g)
    assert [(r.first.index, r.second.index) for r in races] == [(1, 2)]


# --- the simulator: devices ignored, arrays kept apart ----------------------------

@gt.graph
def step(s, xs, ys, a):
    """One step on every device, then the sum of the ys gathered on device 0."""
    for x, y in zip(xs, ys):
        scale[1, N, s](x, a, y)
    for y in ys[1:]:
        t = s.on(0).empty(N)
        s.copy(t, y)
        add[1, N, s](t, ys[0])


def test_a_graph_over_several_devices_simulates_like_eager_code():
    rng = np.random.default_rng(0)
    host = [rng.standard_normal(N) for _ in range(3)]
    xs = [on(d, h) for d, h in enumerate(host)]
    ys = [on(d, np.zeros(N)) for d in range(3)]
    for seed in range(3):
        step(xs, ys, 2.0)
        np.testing.assert_allclose(ys[0].copy_to_host(), 2.0 * sum(host))
        np.testing.assert_allclose(ys[2].copy_to_host(), 2.0 * host[2])
    g = step.trace(xs, ys, 2.0)
    assert g.devices == (0, 1, 2)
    assert gt.check(g) == []


def test_new_arrays_of_the_same_devices_rebind_and_other_devices_trace_again():
    f = gt.graph(step.fn)
    xs = [on(d, np.ones(N)) for d in range(2)]
    ys = [on(d, np.zeros(N)) for d in range(2)]
    f(xs, ys, 1.0)
    xs2 = [on(d, np.full(N, 3.0)) for d in range(2)]
    f(xs2, ys, 2.0)
    assert f.cache_info().misses == 1
    np.testing.assert_allclose(ys[0].copy_to_host(), 12.0)
    swapped = [on(1, np.ones(N)), on(0, np.ones(N))]
    with pytest.raises(gt.ArgumentError):   # device 1's x with device 0's y: traced, refused
        f(swapped, ys, 1.0)
    f(swapped[::-1], ys, 1.0)
    assert f.cache_info().misses == 2
    f([on(0, np.ones(N)), on(2, np.ones(N))], [on(0, np.zeros(N)), on(2, np.zeros(N))], 1.0)
    assert f.cache_info().misses == 3


# --- errors ----------------------------------------------------------------------

def test_arrays_of_two_devices_in_one_launch_are_an_error_at_the_users_line():
    @gt.graph
    def f(s, x0, x1):
        add[1, N, s](x0, x1)                                   # mixed
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(on(0, np.zeros(N)), on(1, np.zeros(N)))
    check(e, "mixed", "kernel add is given x0 on device 0 and x1 on device 1",
          "s.copy(dst, src) between devices is a peer copy node")


def test_cupy_style_launch_of_two_devices_is_refused_too():
    @gt.graph
    def f(s, x0, x1):
        s.launch(add, 1, N, x0, x1)                            # mixed-launch
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(on(0, np.zeros(N)), on(1, np.zeros(N)))
    check(e, "mixed-launch", "x1 on device 1")


def test_a_kernel_placed_on_another_device_than_its_arrays_is_an_error():
    @gt.graph
    def f(s, x0):
        fill[1, N, s.on(1)](x0, 1.0)                           # elsewhere
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(on(0, np.zeros(N)))
    check(e, "elsewhere", "is placed on device 1 but is given x0 on device 0")


def test_a_memset_of_another_devices_memory_is_an_error():
    @gt.graph
    def f(s, x0):
        s.on(1).memset(x0, 0)                                  # memset
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(on(0, np.zeros(N)))
    check(e, "memset", "memset of x0 is placed on device 1")


def test_a_temporary_used_on_two_devices_is_an_error_at_the_second_use():
    @gt.graph
    def f(s, x0, x1):
        t = s.empty(N)
        add[1, N, s](x0, t)
        add[1, N, s](x1, t)                                    # second-use
    with pytest.raises(gt.TraceError) as e:
        f.trace(on(0, np.zeros(N)), on(1, np.zeros(N)))
    check(e, "second-use", "temporary tmp0", "used on device 0", "on device 1",
          "s.on(d).empty(...)")


def test_a_temporary_made_for_one_device_cannot_be_used_on_another():
    @gt.graph
    def f(s, x0):
        t = s.on(1).empty(N)
        add[1, N, s](x0, t)                                    # wrong-temp
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(on(0, np.zeros(N)))
    check(e, "wrong-temp", "x0 on device 0 and tmp0 on device 1")


def test_a_kernel_given_temporaries_that_settle_on_two_devices_is_an_error_at_its_line():
    @gt.graph
    def f(s, x0, x1):
        a, b = s.empty(N), s.empty(N)
        add[1, N, s](a, b)                                     # both-temps
        add[1, N, s](x0, a)
        add[1, N, s](x1, b)
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(on(0, np.zeros(N)), on(1, np.zeros(N)))
    check(e, "both-temps", "tmp0 on device 0 and tmp1 on device 1")


def test_a_loop_body_over_two_devices_is_an_error():
    @gt.graph
    def f(s, x0, x1, flag):
        with s.while_loop(gt.cond(flag), max_iterations=2) as body:
            fill[1, N, body](x0, 1.0)
            fill[1, N, body](x1, 1.0)                          # in-body
    with pytest.raises(gt.TraceError) as e:
        f.trace(on(0, np.zeros(N)), on(1, np.zeros(N)), on(0, np.zeros(1)))
    check(e, "in-body", "holds work on devices 0 and 1", "one device")


@pytest.mark.parametrize("how", ["while", "if"])
def test_a_condition_comparing_arrays_of_two_devices_is_an_error(how):
    """The condition's kernel reads the array it compares with too: one on another
    device than the condition's (and the body's) was passed over, the loop placed on
    the condition's device alone."""
    @gt.graph
    def f(s, c, lim, x):
        if how == "while":
            with s.while_loop(gt.cond(c) > lim, max_iterations=2) as body:   # cmp-while
                fill[1, N, body](x, 1.0)
        else:
            with s.if_then(gt.cond(c) < lim) as then:                         # cmp-if
                fill[1, N, then](x, 1.0)
    with pytest.raises(gt.TraceError) as e:
        f.trace(on(0, np.zeros(1)), on(1, np.zeros(1)), on(0, np.zeros(N)))
    check(e, f"cmp-{how}", "devices 0 and 1", "compares arrays of both")


def test_sim_device_of_a_temporary_is_an_error_naming_s_on():
    """A temporary has no memory to tag: an internal weakref TypeError escaped, and
    the tag stayed behind."""
    from graphtrace import arrays as ga
    x = on(0, np.zeros(N))
    before = dict(ga._sim_devices)

    @gt.graph
    def f(s, x):
        t = s.empty(N)
        gt.sim_device(t, 1)                                      # tag-temp
        fill[1, N, s](t, 1.0)
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(x)
    check(e, "tag-temp", "s.on(d).empty")
    assert ga._sim_devices == before


@pytest.mark.parametrize("bad", [-1, 1.5, "1", True])
def test_a_device_is_a_non_negative_int(bad):
    @gt.graph
    def f(s, x):
        fill[1, N, s.on(bad)](x, 1.0)                          # bad-device
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(on(0, np.zeros(N)))
    check(e, "bad-device", "non-negative int")


@gt.graph
def dynamic_on(s, x, d):
    fill[1, N, s.on(d)](x, 1.0)                                # dynamic-on


@gt.graph
def dynamic_fork(s, x, devs):
    fill[1, N, s.fork(device=devs[1])](x, 1.0)                 # dynamic-fork


@gt.graph
def dynamic_launch(s, x, d):
    s.launch(fill, 1, N, x, 1.0, device=d)                     # dynamic-launch


@gt.graph
def dynamic_temporary(s, x, d):
    s.on(d).zeros(N)                                           # dynamic-temporary


@pytest.mark.parametrize("fn, device, marker, param", [
    (dynamic_on, 1, "dynamic-on", "d"), (dynamic_fork, (0, 1), "dynamic-fork", "devs"),
    (dynamic_launch, 1, "dynamic-launch", "d"),
    (dynamic_temporary, 1, "dynamic-temporary", "d")])
def test_a_device_passed_as_a_dynamic_number_is_refused_with_static_named(
        fn, device, marker, param):
    with pytest.raises(gt.ArgumentError) as e:
        fn.trace(on(1, np.zeros(N)), device)
    check(e, marker, "number of the call", "fixed when the graph is built",
          f"static=({param!r},)")
    g = gt.graph(static=(param,))(fn.__wrapped__).trace(on(1, np.zeros(N)), device)
    assert g.nodes[0].device == 1


def test_sim_device_refuses_host_memory_and_bad_devices():
    with pytest.raises(gt.ArgumentError, match="host memory"):
        gt.sim_device(np.zeros(4), 1)
    with pytest.raises(gt.ArgumentError, match="non-negative int"):
        gt.sim_device(cuda.to_device(np.zeros(4)), -1)


# --- the driver path, as far as it goes without a GPU -----------------------------

def test_only_graphs_with_work_off_the_home_device_take_the_driver_path():
    from graphtrace.ops._devices import ON_DEVICE, for_graph
    g = two_devices.trace(*arrays(0, 1, 0), *arrays(1, 1, 0))
    assert for_graph(g, 0) is not None and for_graph(g, 1) is not None
    devices = for_graph(g, 0)
    assert [devices.op(n) is ON_DEVICE for n in g.nodes] == [False, True, False, False]
    assert for_graph(two_devices.trace(*arrays(1, 1, 0), *arrays(1, 1, 0)), 1) is None


def _traces():
    """Traces of this file's programs: on one device, on two, placed by name, with
    temporaries and copies, each with the device the graph is built on."""
    yield two_devices.trace(*arrays(0, 1, 0), *arrays(1, 1, 0)), 0
    yield two_devices.trace(*arrays(1, 1, 0), *arrays(1, 1, 0)), 1
    yield two_devices.trace(*arrays(0, 1, 0), *arrays(0, 1, 0)), 0
    yield two_devices.trace(*arrays(0, 1, 0), *arrays(0, 1, 0)), 1
    yield named.trace(on(0, np.zeros(N)), on(1, np.zeros(N)), on(0, np.zeros(N))), 0
    yield step.trace([on(0, np.zeros(N))] * 2, [on(0, np.zeros(N))] * 2, 2.0), 0
    for d in range(3):
        xs = [on(e, np.zeros(N)) for e in range(3)]
        yield step.trace(xs, [on(e, np.zeros(N)) for e in range(3)], 2.0), d


def test_the_device_column_says_what_the_walk_says(monkeypatch):
    from graphtrace.ops._devices import KINDS, _elsewhere, _placed, for_graph
    monkeypatch.setenv("GRAPHTRACE_VERIFY", "0")   # verifying makes the Nodes
    seen = set()
    for g, home in _traces():
        assert g.recording() is not None
        walk = any(_elsewhere(d, home) and (kind in KINDS or structured)
                   for d, kind, structured in _placed(g))
        assert (for_graph(g, home) is not None) == walk
        seen.add(walk)
    assert seen == {True, False}


class _CoreLike(gt.ops.kernel.Adapter):
    """A kernel as cuda.core's adapter sees one: a handle, arguments packed as given."""
    library = "cuda.core"

    def compile(self, args):
        return type("K", (), {"handle": 0x1234})(), None

    def pack(self, meta, args, value_of):
        return [value_of(a).ptr if hasattr(a, "ptr") else a for a in args]


def test_driver_parameters_of_nodes_on_another_device(monkeypatch):
    from cuda.bindings import driver as drv
    from graphtrace.ops import _devices
    monkeypatch.setattr(_devices, "driver", lambda: drv)
    monkeypatch.setattr(_devices, "primary_context", lambda d: drv.CUcontext(100 + d))
    host = gt.pinned_empty(N)
    k = _CoreLike(None, "k")

    @gt.graph
    def f(s, x, y, z):
        s.launch(k, (2, 3), 32, x, 2.0, shared_mem=16)
        s.copy(y, x)
        s.copy(host, y)
        s.memset(z, 7)
        s.on(1).zeros(8, np.int16)
    x, y = on(1, np.zeros(N)), on(1, np.zeros(N))
    z = gt.sim_device(cuda.to_device(np.zeros(N, np.int32)), 1)
    g = f.trace(x, y, z)
    from types import SimpleNamespace
    from graphtrace.ops._driver_nodes import ArgumentBlock
    gpu = SimpleNamespace(state={}, value_of=lambda v: v,
                          kernel_nodes=SimpleNamespace(arguments=ArgumentBlock()))
    kernel, copy, download, memset, zeros = (_devices.PARAMS[n.kind](gpu, n)[0]
                                             for n in g.nodes)
    t = drv.CUgraphNodeType
    assert kernel.type == t.CU_GRAPH_NODE_TYPE_KERNEL
    kp = kernel.kernel
    assert (int(kp.kern), int(kp.ctx), int(kp.func)) == (0x1234, 101, 0)
    assert (kp.gridDimX, kp.gridDimY, kp.gridDimZ, kp.blockDimX, kp.sharedMemBytes) == \
        (2, 3, 1, 32, 16)
    assert kp.kernelParams != 0
    dev, hst = drv.CUmemorytype.CU_MEMORYTYPE_DEVICE, drv.CUmemorytype.CU_MEMORYTYPE_HOST
    c = copy.memcpy.copyParams
    assert copy.type == t.CU_GRAPH_NODE_TYPE_MEMCPY and int(copy.memcpy.copyCtx) == 101
    assert (c.dstMemoryType, int(c.dstDevice), c.srcMemoryType, int(c.srcDevice)) == \
        (dev, g.nodes[1].args[0].ptr, dev, g.nodes[1].args[1].ptr)
    assert (c.WidthInBytes, c.Height, c.Depth) == (N * 8, 1, 1)
    c = download.memcpy.copyParams
    assert (c.dstMemoryType, c.dstHost, c.srcMemoryType) == (hst, host.ctypes.data, dev)
    m = memset.memset
    assert memset.type == t.CU_GRAPH_NODE_TYPE_MEMSET
    assert (int(m.dst), m.value, m.elementSize, m.width, m.height, int(m.ctx)) == \
        (g.nodes[3].args[0].ptr, 7, 4, N, 1, 101)
    z = zeros.memset
    assert (z.value, z.elementSize, z.width) == (0, 4, 4)


def test_device_of_asks_the_context_of_the_memory(monkeypatch):
    """The owning context's device decides, not the pointer's ordinal
    attribute (which said 0 for device-1 memory on a 2-GPU host); memory
    of no context falls back to the ordinal."""
    import types

    from graphtrace import _driver

    ok = 0

    class Fake:
        CUresult = types.SimpleNamespace(CUDA_SUCCESS=ok)
        CUpointer_attribute = types.SimpleNamespace(
            CU_POINTER_ATTRIBUTE_CONTEXT="ctx", CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL="ord")
        stack: list = []

        def cuPointerGetAttribute(self, attr, ptr):
            if attr == "ctx":
                return ok, {0x1000: 11, 0x2000: 22}.get(ptr, 0)
            return ok, 0 if ptr != 0x3000 else 5

        def cuCtxPushCurrent(self, ctx):
            self.stack.append(ctx)
            return (ok,)

        def cuCtxGetDevice(self):
            return ok, {11: 1, 22: 0}[self.stack[-1]]

        def cuCtxPopCurrent(self):
            return ok, self.stack.pop()

    fake = Fake()
    monkeypatch.setattr(_driver, "driver", lambda: fake)
    monkeypatch.setattr(_driver, "device_count", lambda: 2)
    monkeypatch.setattr(_driver, "_context_devices", {})
    assert _driver.device_of(0x1000) == 1
    assert _driver.device_of(0x2000) == 0
    assert _driver.device_of(0x3000) == 5      # no context: the ordinal
    assert fake.stack == []                    # every push popped
    assert _driver._context_devices == {11: 1, 22: 0}

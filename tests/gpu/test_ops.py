"""Copies, memsets, host callbacks, a DAG, streams and rebinding on a real GPU."""
import threading

import numpy as np
import pytest

import graphtrace as gt
from helpers import Handle as _Handle

cuda = pytest.importorskip("numba.cuda")


@cuda.jit
def inc(x, v):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += v


@cuda.jit
def combine(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] * 3 + b[i]


def test_arrays_a_host_callback_keeps_after_a_rebind_stay_alive():
    from test_host_keep import kept_after_rebind
    kept_after_rebind("gpu")


def test_copies_between_device_and_pinned_host(rng):
    src = rng.standard_normal(256)
    h_in = gt.pinned_empty(256)
    h_in[:] = src
    h_out = gt.pinned_empty(256)
    h_out[:] = 0
    d1, d2 = cuda.device_array(256), cuda.device_array(256)

    @gt.graph
    def f(s, h_in, d1, d2, h_out):
        s.copy(d1, h_in)          # host -> device
        inc[1, 256, s](d1, 1.0)
        s.copy(d2, d1)            # device -> device
        s.copy(h_out, d2)         # device -> host
    f(h_in, d1, d2, h_out)
    cuda.synchronize()
    assert np.array_equal(h_out, src + 1.0)


@pytest.mark.parametrize("dtype, value", [("uint8", 7), ("int16", -2), ("int32", 123456),
                                          ("float32", 1.5), ("float16", -0.25),
                                          ("float64", 0.0), ("int64", -1)])
def test_memset_fills_like_numpy(dtype, value, rng):
    orig = rng.integers(1, 100, 1000).astype(dtype)
    x = cuda.to_device(orig)

    @gt.graph
    def f(s, x):
        s.memset(x[100:900], value)
    f(x)
    cuda.synchronize()
    expect = orig.copy()
    expect[100:900] = value
    assert np.array_equal(x.copy_to_host(), expect)


def test_host_callback_sees_results_through_pinned_memory(rng):
    x = cuda.to_device(rng.standard_normal(64))
    h = gt.pinned_empty(64)
    seen = []

    @gt.graph
    def f(s, x, h):
        inc[1, 64, s](x, 2.0)
        s.copy(h, x)
        s.host(lambda a: seen.append(a.sum()), gt.In(h))
    expect = x.copy_to_host() + 2.0
    f(x, h)
    cuda.synchronize()
    assert seen and np.isclose(seen[0], expect.sum())


def test_independent_branches_match_eager_and_the_emitted_graph_matches_the_ir(rng):
    a0, b0 = rng.standard_normal(512), rng.standard_normal(512)
    a, b, out = cuda.to_device(a0), cuda.to_device(b0), cuda.device_array(512)

    @gt.graph
    def f(s, a, b, out):
        inc[2, 256, s](a, 1.0)        # branch 1
        inc[2, 256, s](b, 2.0)        # branch 2 (independent)
        combine[2, 256, s](a, b, out) # joins both
    g = f.compile(a, b, out)
    assert sorted(g.ir.edges()) == [(0, 2), (1, 2)]
    assert len(g.definition.nodes()) == 3 and len(g.definition.edges()) == 2
    assert (g.node_count, g.edge_count) == (3, 2)
    index = {int(g.gpu.handle(n)): n.index for n in g.ir.nodes}
    assert sorted((index[int(u.handle)], index[int(v.handle)])
                  for u, v in g.definition.edges()) == [(0, 2), (1, 2)]
    g.launch()
    cuda.synchronize()
    assert np.allclose(out.copy_to_host(), (a0 + 1) * 3 + (b0 + 2))


def test_second_call_rebinds_without_tracing_and_leaves_old_arrays_alone(rng):
    x1, x2 = rng.standard_normal(300), rng.standard_normal(300)
    d1, d2 = cuda.to_device(x1), cuda.to_device(x2)
    h1, h2 = gt.pinned_empty(300), gt.pinned_empty(300)

    seen = []

    @gt.graph
    def f(s, x, h, v):
        inc[2, 256, s](x, v)
        s.memset(x[:10], 0)
        s.copy(h, x)
        s.host(lambda a, v: seen.append((a[10:].sum(), v)), gt.In(h), v)
    f(d1, h1, 1.0)
    f(d2, h2, 5.0)
    cuda.synchronize()
    assert f.cache_info().misses == 1 and f.cache_info().hits == 1
    assert np.allclose(seen, [((x1 + 1.0)[10:].sum(), 1.0), ((x2 + 5.0)[10:].sum(), 5.0)])
    e1, e2 = x1 + 1.0, x2 + 5.0
    e1[:10] = 0
    e2[:10] = 0
    assert np.array_equal(d1.copy_to_host(), e1) and np.array_equal(h1, e1)
    assert np.array_equal(d2.copy_to_host(), e2) and np.array_equal(h2, e2)


def test_launch_on_streams_of_each_library(cp, rng):
    from cuda.core import Device
    x0 = rng.standard_normal(128)
    x = cp.asarray(x0)

    @gt.graph
    def f(s, x):
        inc[1, 128, s](x, 1.0)
    streams = [cp.cuda.Stream(), Device().create_stream(), cuda.stream(), None]
    try:
        import torch
        streams.append(torch.cuda.Stream())
    except ImportError:
        pass
    for st in streams:
        f(x, stream=st)
    cp.cuda.Device().synchronize()
    assert cp.allclose(x, cp.asarray(x0) + len(streams))


def test_concurrent_calls_from_threads(cp, rng):
    xs = [cp.asarray(rng.standard_normal(1000)) for _ in range(8)]
    expect = [x + 10.0 for x in xs]

    @gt.graph
    def f(s, x):
        inc[4, 256, s](x, 1.0)

    def work(x):
        st = cp.cuda.Stream()
        for _ in range(10):
            f(x, stream=st)
        st.synchronize()
    ts = [threading.Thread(target=work, args=(x,)) for x in xs]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for x, e in zip(xs, expect):
        assert cp.allclose(x, e)


def test_streams_mode_and_an_event_record_node(rng):
    from cuda.core import Device
    a0, b0 = rng.standard_normal(256), rng.standard_normal(256)
    a, b, out = cuda.to_device(a0), cuda.to_device(b0), cuda.device_array(256)
    ev = Device().create_event()

    @gt.graph(deps="streams")
    def f(s, a, b, out):
        t = s.fork()
        inc[1, 256, s](a, 1.0)
        inc[1, 256, t](b, 2.0)
        s.join(t)
        combine[1, 256, s](a, b, out)
        s.record(ev)
    g = f.compile(a, b, out)
    assert sorted(g.ir.edges()) == [(0, 2), (1, 2), (2, 3)]
    g.launch()
    ev.sync()
    assert np.allclose(out.copy_to_host(), (a0 + 1) * 3 + (b0 + 2))


def test_update_routes_can_alternate_without_bringing_back_old_values(rng):
    x0 = [rng.standard_normal(64).astype(np.float32) for _ in range(2)]
    xs = [cuda.to_device(a) for a in x0]
    expect = [a.copy() for a in x0]

    @gt.graph
    def f(s, x, v):
        inc[1, 64, s](x, v)
        s.memset(x[:4], v)
    g = f.compile(xs[0], np.float32(1.0))
    steps = [(0, 1.0, "node"), (1, 2.0, "whole"), (1, 3.0, "node"), (0, 3.0, "whole"),
             (0, 4.0, "whole"), (1, 4.0, "node"), (1, 5.0, "whole")]
    for i, v, route in steps:
        x = xs[i]
        g.rebind([x], [x.__cuda_array_interface__["data"][0]], [np.float32(v)], route=route)
        g.launch()
        cuda.synchronize()
        expect[i] += np.float32(v)
        expect[i][:4] = v
        for j in range(2):
            assert np.array_equal(xs[j].copy_to_host(), expect[j]), (i, v, route)


def test_a_function_that_records_nothing_still_runs():
    @gt.graph
    def f(s, x):
        pass
    x = cuda.device_array(4)
    f(x)
    f(x)
    cuda.synchronize()
    assert f.compile(x).node_count == 0


def test_a_failed_rebind_changes_nothing(cp):
    src = r'''
    extern "C" __global__ void setn(float* x, int n) { x[0] = n; }
    extern "C" __global__ void one(float* x) { x[1] = 1.0f; }
    '''
    mod = cp.RawModule(code=src)
    setn, one = gt.kernel(mod, name="setn"), gt.kernel(mod, name="one")

    @gt.graph
    def f(s, x, n):
        s.launch(setn, 1, 1, x, n)
        s.launch(one, 1, 1, x)
    x1, x2 = cp.zeros(2, cp.float32), cp.zeros(2, cp.float32)
    f(x1, 5)
    # refused as the first call refuses such a number: a KernelArgumentError at the line
    with pytest.raises(gt.KernelArgumentError,
                       match=r"test_ops.py:\d+: .*does not fit parameter int n.*rebinding"):
        f(x2, 2**40)
    f(x2, 6)
    cp.cuda.Device().synchronize()
    assert x1.tolist() == [5, 1] and x2.tolist() == [6, 1]


def test_host_callbacks_see_the_arguments_of_their_own_launch(cp):
    spin = cp.RawKernel(r'''extern "C" __global__ void spin(float* x, long long n) {
        long long t = clock64(); while (clock64() - t < n); x[0] += 1; }''', "spin")
    seen = []

    @gt.graph
    def f(s, d, tag):
        s.launch(spin, 1, 1, d, 20_000_000)          # milliseconds: launches queue up
        s.host(lambda t: seen.append(t), tag, opaque=True)
    d = cp.zeros(1, cp.float32)
    for tag in range(4):                             # the host rebinds far ahead of them
        f(d, tag)
    cp.cuda.Device().synchronize()
    assert seen == [0, 1, 2, 3]


def test_host_callbacks_of_repeated_calls_on_a_stream_see_their_own_launch(cp):
    """Calls repeating the last one on a given stream take the short way (one driver
    call, no work for the callbacks); rebinding between them, while the earlier
    launches are still queued, reaches only the launches after it."""
    spin = cp.RawKernel(r'''extern "C" __global__ void spin2(float* x, long long n) {
        long long t = clock64(); while (clock64() - t < n); x[0] += 1; }''', "spin2")
    seen = []

    @gt.graph
    def f(s, d, tag, h):
        s.launch(spin, 1, 1, d, 5_000_000)           # milliseconds: launches queue up
        s.host(lambda t, a: seen.append((t, a[0])), tag, h, opaque=True)
    d, st = cp.zeros(1, cp.float32), cp.cuda.Stream(non_blocking=True)
    hs = [np.full(1, float(k)) for k in range(3)]
    calls = [(0, 0), (0, 0), (0, 0), (1, 0), (1, 1), (1, 1), (2, 2), (2, 2), (0, 2)]
    for tag, k in calls:
        f(d, tag, hs[k], stream=st)
    st.synchronize()
    assert seen == [(tag, float(k)) for tag, k in calls]
    assert f.cache_info().misses == 1


def test_arrays_of_a_launch_in_flight_outlive_the_next_binding(cp):
    spin = cp.RawKernel(r'''extern "C" __global__ void spin_fill(float* x, long long n) {
        long long t = clock64(); while (clock64() - t < n);
        x[threadIdx.x] = 7.0f; }''', "spin_fill")

    @gt.graph
    def f(s, x):
        s.launch(spin, 1, 256, x, 50_000_000)        # tens of milliseconds
    st = cp.cuda.Stream(non_blocking=True)           # not ordered with cupy's own work
    a = cp.zeros(256, cp.float32)
    b = cp.zeros(256, cp.float32)
    cp.cuda.Device().synchronize()
    f(a, stream=st)
    del a                                            # the graph still writes it
    f(b, stream=st)                                  # rebinding drops the graph's hold on a
    z = cp.zeros(256, cp.float32)                    # would take a's memory if it were freed
    cp.cuda.Device().synchronize()
    assert float(z.sum()) == 0.0 and float(b.sum()) == 7.0 * 256


def test_repeated_calls_on_a_stream_each_run_and_see_changes_between_them(cp, rng):
    """Calls that repeat the last one (same arrays, same stream) are launched by
    one driver call; every one of them runs, and a change of array, number or
    stream between them is seen."""
    a0, b0 = rng.standard_normal(128), rng.standard_normal(128)
    a, b = cp.asarray(a0), cp.asarray(b0)

    @gt.graph
    def f(s, x, v):
        inc[1, 128, s](x, v)
    s1, s2 = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
    want_a, want_b = a0.copy(), b0.copy()
    for x, v, st in [(a, 1.0, s1)] * 5 + [(b, 1.0, s1), (a, 1.0, s1), (a, 2.0, s1),
                                          (a, 2.0, s2), (a, 2.0, s2), (a, 2.0, s1),
                                          (b, 3.0, s1), (b, 3.0, s1)]:
        f(x, v, stream=st)
        st.synchronize()   # the next call may be on the other stream
        (want_a if x is a else want_b)[:] += v
    assert np.allclose(a.get(), want_a) and np.allclose(b.get(), want_b)
    assert f.cache_info().misses == 1


def test_repeated_calls_with_a_host_callback_run_it_every_time(cp):
    seen = []
    x = cp.zeros(4, cp.float32)

    @gt.graph
    def f(s, x):
        inc[1, 4, s](x, 1.0)
        s.host(lambda: seen.append(1))
    st = cp.cuda.Stream(non_blocking=True)
    for _ in range(4):
        f(x, stream=st)
    st.synchronize()
    assert len(seen) == 4 and float(x.sum()) == 16.0


@pytest.mark.parametrize("checked", [False, True], ids=["graph", "check_intents"])
def test_a_host_callback_that_raises_is_raised_by_the_next_call(cp, checked):
    """On the GPU the callback runs on the driver's thread, which printed what it
    raised and went on: the program never saw it. The next call raises it,
    launching nothing (the simulator raises it in the call that ran it, as the
    intent check, which runs the graph node by node, does)."""
    x, flag = cp.zeros(4, cp.float32), gt.pinned_empty(1)

    def check(f):
        if f[0] > 0:
            raise RuntimeError("callback failed")

    @gt.graph(check_intents=checked)
    def f(s, x, flag):
        inc[1, 4, s](x, 1.0)
        s.host(check, flag)
    got = []
    for k in range(5):
        flag[0] = 1 if k == 1 else 0
        try:
            f(x, flag)
            cp.cuda.Device().synchronize()   # the callback of call k has run
            got.append("ok")
        except RuntimeError as e:
            got.append("raised")
            assert f"host callback {check.__qualname__}," in "\n".join(e.__notes__)
    if checked:   # raised by the call that ran it, after its kernel
        assert got == ["ok", "raised", "ok", "ok", "ok"] and float(x[0]) == 5.0
    else:
        assert got == ["ok", "ok", "raised", "ok", "ok"]
        assert float(x[0]) == 4.0   # the call that raised launched nothing


def test_a_build_makes_no_node_objects_for_launches_until_they_are_asked_for(cp, monkeypatch):
    """Launches are added to the CUDA graph from the columns the trace recorded;
    their Node objects come when something asks (a listing, a rebind), with the
    same dependencies, and the graph runs and rebinds as one built from Nodes."""
    monkeypatch.setenv("GRAPHTRACE_VERIFY", "0")   # verify() would make every Node
    a, b, out = (cp.zeros(64, cp.float64) for _ in range(3))

    @gt.graph
    def f(s, a, b, out):
        inc[1, 64, s](a, 1.0)
        inc[1, 64, s](b, 2.0)
        combine[1, 64, s](a, b, out)
        s.memset(b, 0)
    c = f.compile(a, b, out)
    assert c.ir.recording() is not None            # no Node made by the build
    assert [(d.index, n.index) for n in c.ir.nodes for d in n.deps] == \
        [(0, 2), (1, 2), (2, 3)]
    f(a, b, out)
    a2, b2, out2 = (cp.ones(64, cp.float64) for _ in range(3))
    f(a2, b2, out2)                                  # a rebind, through the Nodes
    cp.cuda.Device().synchronize()
    assert out.tolist() == [5.0] * 64 and b.tolist() == [0.0] * 64
    assert out2.tolist() == [2.0 * 3 + 3.0] * 64 and a2.tolist() == [2.0] * 64


WEIGHTS = {}
SCALE = (1.0,)


def test_a_dict_of_arrays_and_a_tuple_reached_by_name_are_watched_between_calls(cp):
    """A global dict of arrays (changed in place) and a global tuple (rebound):
    calls that repeat the last one launch at once, and each change is seen."""
    x = cp.zeros(64, cp.float32)
    WEIGHTS.clear()
    WEIGHTS.update(a=cp.full(64, 1, cp.float32), b=cp.full(64, 2, cp.float32))

    @gt.graph
    def f(s, out):
        for w in WEIGHTS.values():
            combine[1, 64, s](w, out, out)   # out = 3 w + out
        inc[1, 64, s](out, SCALE[0])

    global SCALE
    keep = SCALE
    st = cp.cuda.Stream(non_blocking=True)
    want = np.zeros(64, np.float32)
    try:
        for step in ["same", "same", "item", "same", "key", "scale", "same", "drop"]:
            if step == "item":
                WEIGHTS["a"] = cp.full(64, 5, cp.float32)
            elif step == "key":
                WEIGHTS["c"] = WEIGHTS.pop("b")
            elif step == "scale":
                SCALE = (10.0,)
            elif step == "drop":
                del WEIGHTS["a"]
            f(x, stream=st)
            st.synchronize()
            for w in WEIGHTS.values():
                want = 3 * w.get() + want
            want = want + SCALE[0]
            assert np.allclose(x.get(), want), step
            assert f._fast is not None, step
    finally:
        SCALE = keep
        WEIGHTS.clear()


def test_copies_and_memsets_of_no_bytes_and_a_body_left_empty_by_them():
    x = cuda.to_device(np.arange(8.0))
    flag = cuda.to_device(np.ones(1, np.int32))

    @gt.graph
    def f(s, x, flag):
        s.copy(x[2:2], x[5:5])
        s.memset(x[:0], 0)
        with s.if_then(gt.cond(flag) > 0) as then:
            then.memset(x[4:4], 0)
        inc[1, 8, s](x, 1.0)
    f(x, flag)
    f(x, flag)
    cuda.synchronize()
    assert np.array_equal(x.copy_to_host(), np.arange(8.0) + 2)


def test_copies_and_memsets_of_fortran_and_reversed_views(rng):
    """Copy and memset nodes start at a view's lowest byte: a Fortran-ordered or
    reversed view is one run like a C-ordered one, before and after a rebind."""
    @gt.graph
    def f(s, dst, src, y, x, m):
        s.copy(dst, src)
        s.copy(y[::-1], x[::-1])
        s.memset(m[:, 1:3], 1.0)
        s.memset(x[:98][::-1], 0.5)   # (numba's x[::-1][2:] is empty: its own slicing)
    a = np.asfortranarray(rng.standard_normal((33, 40)))
    src, dst = cuda.to_device(a), cuda.to_device(np.asfortranarray(np.zeros((33, 40))))
    hx = rng.standard_normal(100).astype(np.float32)   # 0.5 is a 4-byte pattern
    x, y = cuda.to_device(hx), cuda.device_array(100, np.float32)
    m = cuda.to_device(np.asfortranarray(np.zeros((7, 5), np.float32)))
    f(dst, src, y, x, m)
    cuda.synchronize()
    want_m = np.zeros((7, 5), np.float32)
    want_m[:, 1:3] = 1
    want_x = hx.copy()
    want_x[:98] = 0.5
    assert np.array_equal(dst.copy_to_host(), a) and np.array_equal(m.copy_to_host(), want_m)
    assert np.array_equal(x.copy_to_host(), want_x)
    assert np.array_equal(y.copy_to_host(), hx)   # copied before the memset wrote x
    b = np.asfortranarray(rng.standard_normal((33, 40)))
    f(dst, cuda.to_device(b), y, cuda.to_device(hx), m)   # rebound
    cuda.synchronize()
    assert np.array_equal(dst.copy_to_host(), b)


def test_a_handle_pointed_at_another_array_between_identical_calls_is_rebound():
    """The same handle object, pointed elsewhere, with every other argument the same:
    the call shortcut took it for the same call and replayed the first array."""
    a, b = cuda.to_device(np.full(64, 1.0)), cuda.to_device(np.full(64, 10.0))
    out = cuda.device_array(64)
    h = _Handle(a)

    @gt.graph
    def f(s, x, out):
        combine[1, 64, s](x, x, out)
    f(h, out)
    f(h, out)   # the shortcut made
    h.target = b
    f(h, out)
    cuda.synchronize()
    assert np.array_equal(out.copy_to_host(), np.full(64, 40.0))


@pytest.mark.parametrize("dtype, values", [
    ("float64", [1.0, -2.5, 0.0, 1e300]), ("int64", [5, -7, 2**62]),
    ("complex128", [1 + 2j, -0.5j]), ("complex64", [3 - 1j, 0.25 + 0j])])
def test_memsets_of_8_and_16_byte_elements_a_word_at_a_time(dtype, values, rng):
    """A value that is no repeated 4-byte pattern, dynamic (rebound at each call),
    on a slice, a reversed view and a Fortran-ordered one, in word lanes."""
    orig = rng.integers(1, 100, 3000).astype(dtype)
    x = cuda.to_device(orig)
    y = cuda.to_device(np.zeros((40, 30), dtype, order="F"))

    @gt.graph
    def f(s, x, y, v):
        s.memset(x[100:2900], v)
        s.memset(x[99::-1], v)
        s.memset(y, v)
    for v in values:
        f(x, y, v)
        cuda.synchronize()
        expect = orig.copy()
        expect[:2900] = v
        assert np.array_equal(x.copy_to_host(), expect), v
        assert np.array_equal(y.copy_to_host(), np.full((40, 30), v, dtype)), v
    assert f.cache_info().misses == 1

"""Collectives (gt.nccl) on the simulator: results, placement, ordering, errors."""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of

F = __file__
N = 32


@cuda.jit
def grad(x, g, a):
    i = cuda.grid(1)
    if i < x.size:
        g[i] = a * x[i]


@cuda.jit
def update(w, g, lr):
    i = cuda.grid(1)
    if i < w.size:
        w[i] -= lr * g[i]


def on(device, values, dtype=np.float64):
    return gt.sim_device(cuda.to_device(np.asarray(values, dtype)), device)


def per_device(n, make):
    return [on(d, make(d)) for d in range(n)]


def host(arrays):
    return [a.copy_to_host() for a in arrays]


def check(excinfo, marker, *phrases):
    err = excinfo.value
    assert err.source[1] == line_of(F, marker), str(err)
    for p in phrases:
        assert p in str(err), str(err)


@gt.graph
def train(s, ws, xs, gs, lr):
    for w, x, g in zip(ws, xs, gs):
        grad[1, N, s](x, g, 2.0)
    gt.nccl.all_reduce(s, None, gs, op="avg")          # in place
    for w, g in zip(ws, gs):
        update[1, N, s](w, g, lr)


def test_all_reduce_in_a_data_parallel_step_gives_every_device_the_mean():
    rng = np.random.default_rng(1)
    xh = [rng.standard_normal(N) for _ in range(3)]
    ws = per_device(3, lambda d: np.ones(N))
    xs = [on(d, xh[d]) for d in range(3)]
    gs = per_device(3, lambda d: np.zeros(N))
    train(ws, xs, gs, 0.5)
    mean = 2.0 * sum(xh) / 3
    for w in host(ws):
        np.testing.assert_allclose(w, 1.0 - 0.5 * mean)
    xs2 = [on(d, xh[d] + 1) for d in range(3)]          # rebound, not traced again
    train(ws, xs2, gs, 0.5)
    assert train.cache_info().misses == 1
    for w in host(ws):
        np.testing.assert_allclose(w, 1.0 - 0.5 * mean - 0.5 * (mean + 2.0))


def test_the_collective_is_one_node_over_all_devices_ordered_by_its_arrays():
    ws, xs, gs = (per_device(2, lambda d: np.zeros(N)) for _ in range(3))
    g = train.trace(ws, xs, gs, 0.1)
    node = g.nodes[2]
    assert node.kind == "captured" and node.device == (0, 1)
    assert "captured nccl.all_reduce[avg](gs[0], gs[1])  @cuda:0,1  inout(gs[0], gs[1], " \
        "library state)" in str(g)   # collectives run in turn, as every region
    assert [d.index for d in node.deps] == [0, 1]
    assert [[d.index for d in n.deps] for n in g.nodes[3:]] == [[2], [2]]
    assert gt.check(g) == []


@pytest.mark.parametrize("op, expect", [("sum", np.sum), ("prod", np.prod), ("max", np.max),
                                        ("min", np.min), ("avg", np.mean)])
def test_all_reduce_ops_out_of_place(op, expect):
    vals = [np.arange(N) + d for d in range(3)]
    sends = [on(d, v, np.float32) for d, v in enumerate(vals)]
    recvs = [on(d, np.zeros(N), np.float32) for d in range(3)]

    @gt.graph
    def f(s, a, b):
        gt.nccl.all_reduce(s, None, a, b, op=op)
    f(sends, recvs)
    for r in host(recvs):
        np.testing.assert_allclose(r, expect(np.stack(vals), axis=0), rtol=1e-6)
    np.testing.assert_array_equal(host(sends)[1], vals[1])   # sends only read


def test_broadcast_copies_the_roots_array_everywhere():
    xs = [on(d, np.full(N, d + 1.0)) for d in range(3)]

    @gt.graph
    def f(s, xs):
        gt.nccl.broadcast(s, None, xs, root=1)
    f(xs)
    for x in host(xs):
        np.testing.assert_array_equal(x, 2.0)


@pytest.mark.parametrize("root", [np.int64(1), np.int32(1), 1])
def test_a_broadcast_root_may_be_a_numpy_integer(root):
    """A numpy integer is a rank as an int is (sim_device and s.on take one too); it
    was refused as "a rank below 3, not np.int64(1)"."""
    xs = [on(d, np.full(N, d + 1.0)) for d in range(3)]

    @gt.graph(static=("r",))
    def f(s, xs, r):
        gt.nccl.broadcast(s, None, xs, root=r)
    f(xs, root)
    for x in host(xs):
        np.testing.assert_array_equal(x, 2.0)


def test_a_dynamic_broadcast_root_says_to_make_it_static():
    def body(s, xs, r):
        gt.nccl.broadcast(s, None, xs, root=r)                   # dyn-root
    with pytest.raises(gt.ArgumentError) as e:
        _trace(body, per_device(2, lambda d: np.zeros(N)), 1)
    check(e, "dyn-root", "dynamic scalar", "static=")


def test_all_gather_puts_the_ranks_arrays_one_after_another():
    sends = [on(d, np.full(N, d, np.int32), np.int32) for d in range(2)]
    recvs = [on(d, np.zeros((2, N), np.int32), np.int32) for d in range(2)]

    @gt.graph
    def f(s, a, b):
        gt.nccl.all_gather(s, None, a, b)
    f(sends, recvs)
    for r in host(recvs):
        np.testing.assert_array_equal(r, [[0] * N, [1] * N])


class _Comm:
    """A stand-in for a cupy communicator of one process of ``size``."""

    def __init__(self, size, device=0):
        self._size, self._device = size, device

    def size(self):
        return self._size

    def device_id(self):
        return self._device


def test_a_process_per_gpu_is_simulated_as_a_world_of_one():
    x, y = on(0, np.arange(N)), on(0, np.zeros(N))

    @gt.graph
    def f(s, comm, x, y):
        gt.nccl.all_reduce(s, comm, x, y)
    f(_Comm(1), x, y)
    np.testing.assert_array_equal(y.copy_to_host(), np.arange(N))
    with pytest.raises(gt.SimulationError, match="runs this process alone"):
        f(_Comm(2), x, y)


# --- errors ----------------------------------------------------------------------

def _trace(body, *args):
    f = gt.graph(body)
    return f.trace(*args)


def test_an_unknown_op_is_an_error_at_the_users_line():
    def body(s, xs):
        gt.nccl.all_reduce(s, None, xs, op="mean")               # bad-op
    with pytest.raises(gt.ArgumentError) as e:
        _trace(body, per_device(2, lambda d: np.zeros(N)))
    check(e, "bad-op", "sum, prod, max, min, avg")


def test_one_array_per_device():
    def body(s, xs):
        gt.nccl.all_reduce(s, None, xs)                          # same-device
    with pytest.raises(gt.ArgumentError) as e:
        _trace(body, [on(0, np.zeros(N)), on(0, np.zeros(N))])
    check(e, "same-device", "one array per device")


def test_counts_of_arrays_and_communicators_must_match():
    def body(s, xs, ys):
        gt.nccl.all_reduce(s, [_Comm(2, 0), _Comm(2, 1)], xs, ys)   # counts
    with pytest.raises(gt.ArgumentError) as e:
        _trace(body, per_device(2, lambda d: np.zeros(N)), per_device(1, lambda d: np.zeros(N)))
    check(e, "counts", "2 sendbufs, 1 recvbufs, 2 comms")


def test_communicators_in_the_order_of_the_arrays():
    def body(s, xs):
        gt.nccl.all_reduce(s, [_Comm(2, 1), _Comm(2, 0)], xs)    # order
    with pytest.raises(gt.ArgumentError) as e:
        _trace(body, per_device(2, lambda d: np.zeros(N)))
    check(e, "order", "communicator for xs[0] is on device 1")


def test_a_send_array_of_another_size_is_named_with_its_size():
    def body(s, xs):
        gt.nccl.all_reduce(s, None, xs)                          # sizes
    with pytest.raises(gt.ArgumentError) as e:
        _trace(body, [on(0, np.zeros(N)), on(1, np.zeros(N + 1))])
    check(e, "sizes", f"({(N + 1) * 8} bytes)", f"every send array must be {N * 8} bytes")


def test_all_gather_needs_room_for_every_rank():
    def body(s, xs, ys):
        gt.nccl.all_gather(s, None, xs, ys)                      # room
    with pytest.raises(gt.ArgumentError) as e:
        _trace(body, per_device(2, lambda d: np.zeros(N)), per_device(2, lambda d: np.zeros(N)))
    check(e, "room", f"every receive array {2 * N * 8} bytes")


def test_nccl_types_only():
    def body(s, xs):
        gt.nccl.all_reduce(s, None, xs)                          # complex
    with pytest.raises(gt.ArgumentError) as e:
        _trace(body, [on(d, np.zeros(N), np.complex64) for d in range(2)])
    check(e, "complex", "NCCL cannot reduce or move complex64")


def test_a_receive_array_on_another_device_than_its_send():
    def body(s, xs, ys):
        gt.nccl.all_reduce(s, None, xs, ys)                      # crossed
    with pytest.raises(gt.ArgumentError) as e:
        _trace(body, per_device(2, lambda d: np.zeros(N)),
               [on(1, np.zeros(N)), on(0, np.zeros(N))])
    check(e, "crossed", "xs[0] is on device 0 but its receive array ys[0] on device 1")


def test_a_broadcast_root_is_a_rank():
    def body(s, xs):
        gt.nccl.broadcast(s, None, xs, root=2)                   # root
    with pytest.raises(gt.ArgumentError) as e:
        _trace(body, per_device(2, lambda d: np.zeros(N)))
    check(e, "root", "a rank below 2")


# --- temporaries, placed on the devices of the kernels using them once traced ---

@gt.graph
def reduce_temporaries(s, xs, ys):
    ts = [s.empty(N) for _ in xs]
    for x, t in zip(xs, ts):
        grad[1, N, s](x, t, 2.0)
    gt.nccl.all_reduce(s, None, ts)                                  # in-place-temps
    for t, y in zip(ts, ys):
        s.copy(y, t)


@gt.graph
def reduce_into(s, xs, ys):
    ts = [s.zeros(N) for _ in xs]
    for x, t in zip(xs, ts):
        grad[1, N, s](x, t, 2.0)
    gt.nccl.all_reduce(s, None, ts, ys)                              # temps-into


def _collective(graph):
    return next(n for n in graph.nodes if n.kind == "captured")


@pytest.mark.parametrize("f", [reduce_temporaries, reduce_into])
def test_all_reduce_over_temporaries_placed_by_their_kernels(f):
    xh = [np.arange(N, dtype=np.float64) + d for d in range(2)]
    xs, ys = [on(d, xh[d]) for d in range(2)], per_device(2, lambda d: np.zeros(N))
    node = _collective(f.trace(xs, ys))
    assert node.device == (0, 1) and node.target.devices == (0, 1)
    f(xs, ys)
    for y in host(ys):
        np.testing.assert_allclose(y, 2.0 * sum(xh))


def test_temporaries_placed_on_one_device_are_refused_at_the_users_line():
    with pytest.raises(gt.ArgumentError) as e:
        reduce_temporaries.trace([on(0, np.zeros(N))] * 2, per_device(2, lambda d: np.zeros(N)))
    check(e, "in-place-temps", "devices [0, 0] repeat")


def test_a_temporary_placed_on_another_device_than_its_receive_array():
    with pytest.raises(gt.ArgumentError) as e:
        reduce_into.trace(per_device(2, lambda d: np.zeros(N))[::-1],
                          per_device(2, lambda d: np.zeros(N)))
    check(e, "temps-into", "tmp0 is on device 1 but its receive array ys[0] on device 0")


def test_a_temporary_no_kernel_places_is_refused_at_the_users_line():
    def body(s, xs):
        ss, ts = [s.empty(N) for _ in xs], [s.empty(2 * N) for _ in xs]
        gt.nccl.all_gather(s, None, ss, ts)                      # unplaced
    with pytest.raises(gt.ArgumentError) as e:
        _trace(body, per_device(2, lambda d: np.zeros(N)))
    check(e, "unplaced", "tmp0, a temporary that no kernel places", "s.on(d).empty")


@gt.graph
def gather_out(s, xs, outs):
    ys = [s.empty(N * len(xs)) for _ in xs]
    gt.nccl.all_gather(s, None, xs, ys)
    for y, out in zip(ys, outs):
        s.copy(out, y)


@gt.graph
def broadcast_in(s, xs, ys):
    ts = [s.empty(N) for _ in xs]
    for x, t in zip(xs, ts):
        s.copy(t, x)
    gt.nccl.broadcast(s, None, ts, ys, root=1)


@gt.graph
def reduce_out(s, xs, outs):
    ys = [s.empty(N) for _ in xs]
    gt.nccl.all_reduce(s, None, xs, ys)
    for y, out in zip(ys, outs):
        s.copy(out, y)


@pytest.mark.parametrize("f, size, want", [(gather_out, 2 * N, [1.0] * N + [2.0] * N),
                                           (reduce_out, N, [3.0] * N)])
def test_receive_temporaries_go_on_their_send_arrays_devices(f, size, want):
    xs, outs = per_device(2, lambda d: np.full(N, d + 1.0)), per_device(2, lambda d: np.zeros(size))
    graph = f.trace(xs, outs)
    assert _collective(graph).device == (0, 1)
    assert [n.device for n in graph.nodes if n.kind == "memcpy"] == [0, 1]
    f(xs, outs)
    for out in host(outs):
        np.testing.assert_array_equal(out, want)


def test_send_temporaries_go_on_their_receive_arrays_devices():
    xs, ys = per_device(2, lambda d: np.full(N, d + 1.0)), per_device(2, lambda d: np.zeros(N))
    assert _collective(broadcast_in.trace(xs, ys)).target.devices == (0, 1)
    broadcast_in(xs, ys)
    for y in host(ys):
        np.testing.assert_array_equal(y, 2.0)


def test_communicators_in_the_order_of_temporaries_placed_by_their_kernels():
    def body(s, xs):
        ts = [s.empty(N) for _ in xs]
        for x, t in zip(xs, ts):
            grad[1, N, s](x, t, 2.0)
        gt.nccl.all_reduce(s, [_Comm(2, 1), _Comm(2, 0)], ts)    # temps-order
    with pytest.raises(gt.ArgumentError) as e:
        _trace(body, per_device(2, lambda d: np.zeros(N)))
    check(e, "temps-order", "communicator for tmp0 is on device 1 but the array on device 0")

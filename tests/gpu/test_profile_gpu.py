"""``f.profile`` on a real GPU: node times, the critical path by them, the whole
graph's time, every kind of node replayed alone, and arrays left as one call
leaves them."""
import numpy as np
import pytest

import graphtrace as gt
from step_kernels import add

cuda = pytest.importorskip("numba.cuda")


@cuda.jit
def slow_inc(x, n):            # x += 1 after n dependent steps of busy work
    i = cuda.grid(1)
    if i < x.size:
        v = 0.0
        for _ in range(n):
            v = v * 0.5 + 1.0
        x[i] += 1.0 + v * 0.0


@cuda.jit
def inc(x, v):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += v


@cuda.jit
def count(k, x):
    i = cuda.grid(1)
    if i == 0:
        k[0] += 1
    if i < x.size:
        x[i] += 1.0


@gt.graph
def chains(s, a, b, c, n):
    slow_inc[4, 256, s](a, n)      # %0: slow
    inc[4, 256, s](b, 1.0)         # %1: fast, beside %0
    add[4, 256, s](a, c)           # %2: after %0
    add[4, 256, s](b, c)           # %3: after %1 and %2


def test_node_times_find_the_slow_chain_and_the_arrays_end_as_after_one_call():
    a0, b0, c0 = (np.arange(1024.0) * k for k in (1, 2, 3))
    a, b, c = cuda.to_device(a0), cuda.to_device(b0), cuda.to_device(c0)
    p = chains.profile(a, b, c, 200_000, repeat=5)
    print(p)
    assert p.backend == "gpu" and p.repeat == 5
    assert all(t.us > 0 for t in p.nodes) and p.graph_us > 0
    assert p.nodes[0].us > 5 * p.nodes[1].us, str(p)
    assert [n.index for n in p.critical_path] == [0, 2, 3]
    assert p.sum_us == pytest.approx(sum(t.us for t in p.nodes))
    assert p.graph_us > 0.5 * p.critical_us, str(p)
    # 12 runs of every node and of the graph, arrays put back in between
    assert np.array_equal(a.copy_to_host(), a0 + 1)
    assert np.array_equal(b.copy_to_host(), b0 + 1)
    assert np.array_equal(c.copy_to_host(), c0 + (a0 + 1) + (b0 + 1))
    lines = str(p).splitlines()
    assert lines[0].startswith(f"profile of chains on {p.device}: 4 nodes, 3 edges; median of 5")
    assert lines[-2].startswith("sum of node times ") and "(%0 -> %2 -> %3)" in lines[-2]


def test_every_kind_of_node_is_replayed_alone():
    seen = []

    def report(h):
        seen.append(int(h[0]))

    @gt.graph
    def f(s, x, y, k, h):
        tmp = s.empty(x.shape, name="tmp")
        inc[1, 64, s](x, 1.0)                     # the loop waits for this and the memset
        s.memset(k, 0)
        with s.while_loop(gt.cond(k) < 5, max_iterations=100) as body:
            count[1, 64, body](k, x)
        inc[1, 64, s](tmp, 0.0)
        s.copy(tmp, x)
        add[1, 64, s](tmp, y)
        s.copy(h, k)
        s.host(report, gt.In(h))

    x0 = np.arange(64.0)
    x, y = cuda.to_device(x0), cuda.to_device(np.zeros(64))
    k, h = cuda.to_device(np.zeros(1, np.int32)), gt.pinned_empty(1, np.int32)
    p = f.profile(x, y, k, h, repeat=3)
    print(p)
    kinds = [t.node.kind for t in p.nodes]
    assert kinds == ["kernel", "memset", "while", "kernel", "memcpy", "kernel", "memcpy", "host"]
    assert len(p.nodes[2].node.deps) == 2          # a loop with two predecessors, alone
    assert all(t.us >= 0 for t in p.nodes) and p.sum_us > 0
    assert np.array_equal(x.copy_to_host(), x0 + 6)
    assert np.array_equal(y.copy_to_host(), x0 + 6)
    assert k.copy_to_host()[0] == 5 and h[0] == 5
    assert seen == [5] * 8                         # 4 runs alone, 4 in the whole graph


def test_a_timeline_of_measured_times_is_drawn(tmp_path):
    pytest.importorskip("matplotlib")
    a, b, c = (cuda.to_device(np.zeros(1024)) for _ in range(3))
    p = chains.profile(a, b, c, 10_000, repeat=3)
    t = p.timeline(tmp_path / "chains.png")
    assert (tmp_path / "chains.png").read_bytes()[:4] == b"\x89PNG"
    ax = t.figure.axes[0]
    assert len(ax.patches) == 4
    assert ax.get_legend().get_texts()[0].get_text().startswith("whole graph, measured: ")

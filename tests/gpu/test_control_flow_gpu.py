"""Loops, branches and child graphs as CUDA conditional and child nodes, on a real GPU.

Each graph is compared with the same program run eagerly with the
condition read on the host.
"""
import numpy as np
import pytest

import graphtrace as gt

cuda = pytest.importorskip("numba.cuda")
from flow_kernels import add, copy_into, count, dev, halve, host  # noqa: E402


@gt.graph
def halve_until(s, x, n, tol):
    with s.while_loop(gt.cond(x) > tol, max_iterations=1000) as body:
        halve[1, 1, body](x)
        count[1, 1, body](n)


def eager_halvings(x, tol):
    n = 0
    while x > tol:
        x, n = x / 2, n + 1
    return x, n


def test_the_trip_count_is_decided_on_the_device():
    for start, tol in ((100.0, 1.0), (1e6, 3.0), (0.5, 1.0)):
        x, n = dev(start), dev(0, dtype=np.int32)
        halve_until(x, n, tol)
        want_x, want_n = eager_halvings(np.float32(start), np.float32(tol))
        assert host(x) == [want_x] and host(n) == [want_n]
    assert halve_until.cache_info().misses == 1       # rebinding, not tracing again


def test_rebinding_arrays_used_inside_the_body():
    x1, n1 = dev(64.0), dev(0, dtype=np.int32)
    x2, n2 = dev(1024.0), dev(0, dtype=np.int32)
    halve_until(x1, n1, 1.0)
    halve_until(x2, n2, 1.0)
    halve_until(x1, n1, 1.0)                          # back to the first arrays
    assert host(x2) == [1.0] and host(n2) == [10]
    assert host(x1) == [1.0] and host(n1) == [6]


def test_the_trip_bound_ends_a_loop_that_never_stops():
    @gt.graph
    def forever(s, flag, n):
        with s.while_loop(gt.cond(flag), max_iterations=7) as body:
            count[1, 1, body](n)
    n = dev(0, dtype=np.int32)
    forever(dev(1, dtype=np.int32), n)
    assert host(n) == [7]


def test_a_nested_loop_with_a_branch():
    @gt.graph
    def f(s, outer, inner, n, big):
        with s.while_loop(gt.cond(outer) > 1, max_iterations=50) as o:
            halve[1, 1, o](outer)
            copy_into[1, 1, o](outer, inner)
            with o.while_loop(gt.cond(inner) > 1) as i:
                halve[1, 1, i](inner)
                count[1, 1, i](n)
            with o.if_then(gt.cond(n) > 12) as then:
                count[1, 1, then](big)
    outer, inner = dev(64.0), dev(0.0)
    n, big = dev(0, dtype=np.int32), dev(0, dtype=np.int32)
    f(outer, inner, n, big)
    # inner loops of 5, 4, 3, 2, 1, 0 halvings; n passes 12 after the 4th outer step
    assert host(n) == [15] and host(outer) == [1.0] and host(big) == [3]


def test_a_switch_with_three_cases():
    @gt.graph
    def f(s, k, y):
        with s.switch(gt.cond(k), 3) as cases:
            for i, case in enumerate(cases):
                add[1, 4, case](y, 10.0 ** i)
    y = dev(0, 0, 0, 0)
    for k in (0, 1, 2, 2, 3, -1):
        f(dev(k, dtype=np.int32), y)
    assert host(y) == [211] * 4


def test_if_else_with_a_dynamic_threshold():
    @gt.graph
    def f(s, x, y, t):
        with s.if_else(gt.cond(x) >= t) as (yes, no):
            add[1, 4, yes](y, 1.0)
            add[1, 4, no](y, 100.0)
    y = dev(0, 0)
    f(dev(2.0), y, 1.0)
    f(dev(2.0), y, 3.0)
    assert host(y) == [101, 101]


def test_a_child_graph_node():
    @gt.graph
    def inner(s, x, v):
        add[1, 4, s](x, v)
        add[1, 4, s](x, v)

    @gt.graph
    def outer(s, x, y):
        s.child(inner, x, 1.0)
        add[1, 4, s](y, 5.0)
    x, y = dev(0, 0), dev(0, 0)
    outer(x, y)
    x2 = dev(1, 1)
    outer(x2, y)
    assert host(x) == [2, 2] and host(x2) == [3, 3] and host(y) == [10, 10]


def test_a_number_that_no_longer_fits_is_refused_at_the_call_and_nothing_runs():
    """A dynamic right side (or memset value) the dtype cannot hold: an
    ArgumentError at the node's line, as on the simulator; the graph is left as
    it was and runs again with numbers that fit."""
    import flow_kernels
    from helpers import line_of
    f = gt.graph(flow_kernels.loop_and_fill)
    c, n, runs = (dev(0, dtype=np.int32) for _ in range(3))
    small = dev(0, 0, dtype=np.int8)
    f(c, n, runs, 2, 7, small)
    for lim, fill, marker in ((2 ** 31, 1, "the loop"), (2, 300, "the fill")):
        with pytest.raises(gt.ArgumentError) as e:
            f(c, n, runs, lim, fill, small)
        assert e.value.source[1] == line_of(flow_kernels.__file__, marker), str(e.value)
    assert host(runs) == [1] and host(n) == [2] and host(small) == [7, 7]
    f(c, n, runs, 4, -1, small)
    assert host(runs) == [2] and host(n) == [4] and host(small) == [-1, -1]


def test_a_child_graph_node_comes_after_what_it_reads_and_before_what_reads_it():
    """The child node's own edges: emitting its region (its nodes added by the
    nested emission) left the node with no predecessor, so it raced with the
    kernel writing what it reads (wrong results in random programs)."""
    from cuda.bindings import driver

    @gt.graph
    def inner(s, x, v):
        add[1, 4, s](x, v)

    @gt.graph
    def outer(s, x, y):
        add[1, 4, s](x, 1.0)       # the child reads and writes x after this
        s.child(inner, x, 2.0)
        copy_into[1, 4, s](x, y)   # and this reads x after the child
    x, y = dev(0, 0), dev(0, 0)
    h = outer.compile(x, y)
    gpu, ir = h.compiled.gpu, h.compiled.ir
    child = next(n for n in ir.nodes if n.op.kind == "child")

    def deps(handle):   # (error, nodes, [edge data,] count): CUDA 13 adds edge data
        out = driver.cuGraphNodeGetDependencies(handle, 0)
        assert out[0] == driver.CUresult.CUDA_SUCCESS
        return out[-1]
    assert deps(gpu._handles[child.index]) == 1   # the first kernel
    after = next(n for n in ir.nodes if n.index > child.index and n.op.kind == "kernel")
    assert deps(gpu._handles[after.index]) >= 1
    for _ in range(20):
        x, y = dev(0, 0), dev(0, 0)
        outer(x, y)
        assert host(x) == [3, 3] and host(y) == [3, 3]

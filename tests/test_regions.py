"""Regions: a structured node owns sub-graphs recorded through the tracer's scopes.

The op here (``helpers.repeat``) uses only what a structured op may use:
``open_region``/``close_region``, a ``Stream`` that records into the region,
``Graph.walk``, and ``SimContext.run`` to execute the region.
"""
import textwrap

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace.arrays import as_buffer
from helpers import FakeDeviceArray as A, line_of, repeat

# launches recorded by the compiled path (_speedups.c) and by pure Python
pytestmark = pytest.mark.usefixtures("both_launch_paths")


@cuda.jit
def inc(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


@cuda.jit
def double(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= 2


@cuda.jit
def add(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


def body(b, x, y):
    inc[1, 8, b](x)          # body inc
    double[1, 8, b](y)       # body double


@gt.graph
def f(s, x, y, out):
    inc[1, 8, s](x)                                   # before
    repeat(s, 3, lambda b: body(b, x, y))             # repeat
    add[1, 8, s](x, y, out)                           # after


def test_a_region_is_listed_under_its_node_with_trace_wide_indices():
    g = f.trace(A(8), A(8), A(8))
    ln = {k: line_of(__file__, k) for k in ("before", "repeat", "after", "body inc",
                                             "body double")}
    assert str(g) == textwrap.dedent(f"""\
        graph f(x, y, out)  deps=data  3 nodes, 2 edges
          %0 = kernel inc[1, 8](x)  inout(x)  # test_regions.py:{ln['before']}
          %3 = repeat <lambda>[times=3]()  inout(x, y)  after(%0)  # test_regions.py:{ln['repeat']}
            body:
              %1 = kernel inc[1, 8](x)  inout(x)  # test_regions.py:{ln['body inc']}
              %2 = kernel double[1, 8](y)  inout(y)  # test_regions.py:{ln['body double']}
          %4 = kernel add[1, 8](x, y, out)  in(x, y)  out(out)  after(%3)  # test_regions.py:{ln['after']}""")


def test_walk_descends_into_regions_and_positions_are_per_graph():
    g = f.trace(A(8), A(8), A(8))
    assert [n.index for n in g.walk()] == [0, 3, 1, 2, 4]
    region = g.nodes[1].regions[0]
    assert [n.pos for n in g.nodes] == [0, 1, 2]
    assert [n.pos for n in region.nodes] == [0, 1]
    assert all(not n.deps for n in region.nodes)   # no edge leaves a region
    g.verify()


def test_the_simulator_runs_a_region_through_its_op():
    x0, y0 = np.arange(8.0), np.ones(8)
    x, y, out = cuda.to_device(x0), cuda.to_device(y0), cuda.to_device(np.zeros(8))
    f(x, y, out, backend="sim")
    assert out.copy_to_host().tolist() == ((x0 + 4) + y0 * 8).tolist()


def test_rebinding_reaches_the_nodes_of_a_region():
    first = [cuda.to_device(np.zeros(8)) for _ in range(3)]
    g = f.compile(*first, backend="sim")              # traced and bound to these
    x, y, out = cuda.to_device(np.arange(8.0)), cuda.to_device(np.ones(8)), \
        cuda.to_device(np.zeros(8))
    changed = g.bind([x, y, out], [as_buffer(a).ptr for a in (x, y, out)], [])
    assert sorted(n.index for n in changed) == [0, 1, 2, 3, 4]   # %1 and %2 in the region
    g.launch()
    assert out.copy_to_host().tolist() == ((np.arange(8.0) + 4) + 8).tolist()
    assert first[0].copy_to_host().tolist() == [0.0] * 8


def test_regions_nest():
    @gt.graph
    def g(s, x):
        repeat(s, 2, lambda b: repeat(b, 2, lambda c: inc[1, 8, c](x)))
    ir = g.trace(A(8))
    assert [n.index for n in ir.walk()] == [2, 1, 0]
    assert "\n    body:\n      %1 = repeat" in str(ir)
    assert "\n        body:\n          %0 = kernel inc" in str(ir)
    x = cuda.to_device(np.zeros(8))
    g(x, backend="sim")
    assert x.copy_to_host().tolist() == [4.0] * 8


def test_dot_draws_a_region_as_a_cluster():
    dot = f.trace(A(8), A(8), A(8)).to_dot()
    assert 'subgraph "cluster_3_0" {' in dot and 'label="%3 body";' in dot
    assert "    n1 [label=" in dot and "n0 -> n3;" in dot


def test_a_body_stream_used_after_its_region_is_refused():
    kept = []

    @gt.graph
    def g(s, x):
        repeat(s, 1, kept.append)
        inc[1, 8, kept[0]](x)                         # escaped
    with pytest.raises(gt.StreamError, match="used after its region ended") as e:
        g.trace(A(8))
    assert e.value.source[1] == line_of(__file__, "escaped")


def test_join_across_regions_is_refused():
    @gt.graph(deps="streams")
    def g(s, x):
        repeat(s, 1, lambda b: b.join(s))             # across
    with pytest.raises(gt.StreamError, match="same region") as e:
        g.trace(A(8))
    assert e.value.source[1] == line_of(__file__, "across")


def test_streams_mode_orders_a_region_on_its_own():
    @gt.graph(deps="streams")
    def g(s, x, y):
        inc[1, 8, s](x)
        repeat(s, 1, lambda b: (inc[1, 8, b](x), double[1, 8, b](y)))
    ir = g.trace(A(8), A(8))
    region = ir.nodes[1].regions[0]
    assert [d.index for d in ir.nodes[1].deps] == [0]
    assert [[d.index for d in n.deps] for n in region.nodes] == [[], [1]]

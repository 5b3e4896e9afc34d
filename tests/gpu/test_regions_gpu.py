"""A structured node on the GPU: its region emitted by GpuContext.emit_region.

``helpers.repeat`` (times=1) emits its region into a new GraphDefinition and
embeds it as a child graph: the path a while loop or a branch will take.
"""
import numpy as np
import pytest

import graphtrace as gt
from helpers import repeat

cuda = pytest.importorskip("numba.cuda")
from step_kernels import scaled as scale, summed as add  # noqa: E402


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


def test_a_region_runs_as_a_child_graph_between_its_neighbours(rng):
    a0, b0 = rng.standard_normal(512), rng.standard_normal(512)
    a, b, out = cuda.to_device(a0), cuda.to_device(b0), cuda.device_array(512)

    @gt.graph
    def f(s, a, b, out):
        inc[2, 256, s](a, 1.0)
        repeat(s, 1, lambda body: (inc[2, 256, body](a, 2.0), inc[2, 256, body](b, 5.0)))
        combine[2, 256, s](a, b, out)
    g = f.compile(a, b, out)
    assert len(g.definition.nodes()) == 3   # the region is inside the child node
    body = g.ir.nodes[1].regions[0]
    assert all(g.gpu.definition_node(n) is not None for n in body.nodes)
    g.launch()
    cuda.synchronize()
    assert np.allclose(out.copy_to_host(), (a0 + 3) * 3 + (b0 + 5))


@gt.graph
def _data_helper(s, a, b, c):
    s2 = s.fork()
    scale[4, 256, s2](a, 2.0, b)   # on a forked stream; the add below reads b
    add[4, 256, s](b, a, c)


@gt.graph(deps="streams")
def _streams_caller(s, a, b, c):
    _data_helper(s, a, b, c)


def test_a_data_helper_in_a_streams_graph_runs_in_its_data_order(rng):
    a0 = rng.standard_normal(1024)
    a, b, c = cuda.to_device(a0), cuda.device_array(1024), cuda.device_array(1024)
    for _ in range(5):
        c[:] = 0
        _streams_caller(a, b, c)
        cuda.synchronize()
        assert np.allclose(c.copy_to_host(), 3 * a0)
    assert _streams_caller.trace(a, b, c).nodes[0].kind == "child"

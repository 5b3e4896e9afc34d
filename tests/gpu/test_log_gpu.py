"""The "graphtrace" logger on a real GPU: the update route of each rebinding."""
import logging

import numpy as np
import pytest

import graphtrace as gt
from graphtrace.emit import RELEASE_EVERY

cuda = pytest.importorskip("numba.cuda")


@cuda.jit
def inc(x, v):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += v


def routes(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("rebind f on")]


def test_each_rebinding_logs_its_route_and_why(caplog):
    caplog.set_level(logging.DEBUG, logger="graphtrace")

    @gt.graph
    def f(s, x, v):
        inc[1, 64, s](x, v)
        s.memset(x[:4], v)
    xs = [cuda.to_device(np.zeros(64, np.float32)) for _ in range(2)]
    g = f.compile(xs[0], np.float32(1.0))
    ptr = [x.__cuda_array_interface__["data"][0] for x in xs]
    g.rebind([xs[1]], [ptr[1]], [np.float32(1.0)], route="node")
    g.rebind([xs[0]], [ptr[0]], [np.float32(1.0)], route="whole")
    g.rebind([xs[1]], [ptr[1]], [np.float32(1.0)])          # two nodes of two: the cost decides
    assert routes(caplog) == [
        "rebind f on the GPU: node by node for 2 nodes (as asked)",
        "rebind f on the GPU: the whole graph for 2 nodes (as asked)",
        f"rebind f on the GPU: {'node by node' if g._route(2) == 'node' else 'the whole graph'}"
        " for 2 nodes (cheaper for this many nodes)"]
    caplog.clear()
    for i in range(RELEASE_EVERY + 1):
        g.rebind([xs[i % 2]], [ptr[i % 2]], [np.float32(1.0)], route="node")
    taken = routes(caplog)
    forced = (f"rebind f on the GPU: the whole graph for 2 nodes (after {RELEASE_EVERY} "
              "per-node rounds, to release what they keep)")
    assert taken.count(forced) == 1
    assert set(taken) == {forced, "rebind f on the GPU: node by node for 2 nodes (as asked)"}
    g.launch()
    cuda.synchronize()


def test_a_gpu_build_is_logged_as_an_instantiated_graph(caplog):
    caplog.set_level(logging.INFO, logger="graphtrace")

    @gt.graph
    def f(s, x):
        inc[1, 64, s](x, 1.0)
    f(cuda.to_device(np.zeros(64)))
    cuda.synchronize()
    built = [r.getMessage() for r in caplog.records if r.getMessage().startswith("built f")]
    assert len(built) == 1 and built[0].startswith("built f for gpu: 1 nodes, 0 edges")
    assert built[0].endswith("): a CUDA graph, instantiated")

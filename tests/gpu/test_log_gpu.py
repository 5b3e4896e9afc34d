"""The "graphtrace" logger on a real GPU: the update route of each rebinding."""
import logging

import numpy as np
import pytest

import graphtrace as gt

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
        inc[1, 64, s](x[:4], v)
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
    g.launch()
    cuda.synchronize()


def test_a_memset_among_the_changed_nodes_takes_the_whole_route(caplog):
    caplog.set_level(logging.DEBUG, logger="graphtrace")

    @gt.graph
    def f(s, x, v):
        inc[1, 64, s](x, v)
        s.memset(x[:4], v)
    xs = [cuda.to_device(np.zeros(64, np.float32)) for _ in range(2)]
    g = f.compile(xs[0], np.float32(1.0))
    ptr = [x.__cuda_array_interface__["data"][0] for x in xs]
    g.rebind([xs[1]], [ptr[1]], [np.float32(2.0)], route="node")
    assert routes(caplog) == ["rebind f on the GPU: the whole graph for 2 nodes "
                              "(memset nodes are updated through the definition)"]
    g.launch()
    cuda.synchronize()
    assert xs[1].copy_to_host().tolist() == [2.0] * 4 + [2.0] * 60


def test_a_gpu_build_is_logged_as_an_instantiated_graph(caplog):
    caplog.set_level(logging.INFO, logger="graphtrace")

    @gt.graph
    def f(s, x):
        inc[1, 64, s](x, 1.0)
    f(cuda.to_device(np.zeros(64)))
    cuda.synchronize()
    built = [r.getMessage() for r in caplog.records if r.getMessage().startswith("built f")]
    assert len(built) == 1 and built[0].startswith("built f for gpu: 1 node, 0 edges")
    assert built[0].endswith("): a CUDA graph, instantiated")

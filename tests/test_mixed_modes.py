"""A graph function keeps its own ``deps`` mode when another of the other mode calls it.

A ``deps="data"`` helper orders its nodes by the memory they touch; inside a
``deps="streams"`` graph its nodes would be ordered by streams alone (a kernel
on a forked stream racing the one that reads its output). Called there, inline
or with ``s.child``, it becomes one child-graph node in the caller's stream
order whose nodes are ordered by their data.
"""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of
from step_kernels import scaled as scale, summed as add


@gt.graph(backend="sim")
def helper(s, a, b, c):
    s2 = s.fork()
    scale[1, 4, s2](a, 2.0, b)   # b = 2a on a forked stream
    add[1, 4, s](b, a, c)        # c = b + a: after the line above, by the data


class Layer:
    @gt.graph(backend="sim")
    def run(self, s, a, b, c):
        helper(s, a, b, c)


@gt.graph(deps="streams", backend="sim")
def inlined(s, a, b, c):
    helper(s, a, b, c)


@gt.graph(deps="streams", backend="sim")
def as_child(s, a, b, c):
    s.child(helper, a, b, c)


LAYER = Layer()


@gt.graph(deps="streams", backend="sim")
def through_method(s, a, b, c):
    LAYER.run(s, a, b, c)


def _arrays():
    a = np.arange(1, 5, dtype=np.float32)
    return a, cuda.to_device(a), cuda.device_array(4, np.float32), cuda.device_array(4, np.float32)


@pytest.mark.parametrize("outer", [inlined, as_child, through_method])
def test_a_data_helper_keeps_its_data_order_in_a_streams_graph(outer):
    a, da, db, dc = _arrays()
    g = outer.trace(da, db, dc)
    child = [n for n in g.nodes if n.kind == "child"]
    assert child and child[0].regions[0].mode == "data"
    first, second = [n for n in child[0].regions[0].walk() if n.kind == "kernel"]
    assert any(d is first for d in second.deps)   # add after scale, by the data
    assert gt.check(g) == []
    for _ in range(6):   # the simulator runs independent nodes in a random order
        outer(da, db, dc)
        np.testing.assert_allclose(dc.copy_to_host(), 3 * a)


def test_a_streams_helper_keeps_stream_order_as_a_child_of_a_data_graph():
    @gt.graph(deps="streams", backend="sim")
    def ordered(s, a, b, c):
        scale[1, 4, s](a, 2.0, b)
        add[1, 4, s](b, a, c)

    @gt.graph(backend="sim")
    def outer(s, a, b, c):
        s.child(ordered, a, b, c)

    a, da, db, dc = _arrays()
    g = outer.trace(da, db, dc)
    assert g.nodes[0].regions[0].mode == "streams"
    outer(da, db, dc)
    np.testing.assert_allclose(dc.copy_to_host(), 3 * a)


@gt.graph(backend="sim")
def two_streams(s, side, a, b):
    scale[1, 4, s](a, 2.0, a)        # a = 2a
    scale[1, 4, side](b, 3.0, b)     # b = 3b, on the caller's second stream


@pytest.mark.parametrize("spelling", ["inline", "s.child"])
def test_a_data_helper_handed_a_second_stream_of_the_caller_runs_in_its_child_node(spelling):
    @gt.graph(deps="streams", backend="sim")
    def outer(s, a, b, c):
        s2 = s.fork()
        scale[1, 4, s2](c, 1.0, b)   # b = c, before the helper's b = 3b
        if spelling == "inline":
            two_streams(s, s2, a, b)
        else:
            s.child(two_streams, s2, a, b)
        add[1, 4, s2](b, b, c)       # c = 2b, after it
        s.join(s2)

    a, da, db, dc = _arrays()
    g = outer.trace(da, db, dc)
    child = next(n for n in g.nodes if n.kind == "child")
    assert sorted(g.edges()) == [(0, child.index), (child.index, child.index + 3)]
    assert f"%{child.index} = child two_streams(stream 1, a, b)" in str(g)
    assert gt.check(g) == []
    for _ in range(6):
        da, dc = cuda.to_device(a), cuda.to_device(a)
        outer(da, db, dc)
        np.testing.assert_allclose(da.copy_to_host(), 2 * a)
        np.testing.assert_allclose(dc.copy_to_host(), 6 * a)


def test_a_stream_of_the_caller_a_child_graph_reaches_otherwise_is_refused_naming_it():
    @gt.graph(backend="sim")
    def in_a_list(s, sides, a, b):
        sides[0].launch(scale, 1, 4, a, 2.0, b)   # reached

    @gt.graph(deps="streams", backend="sim")
    def outer(s, a, b, c):
        in_a_list(s, [s.fork()], a, b)

    _, da, db, dc = _arrays()
    with pytest.raises(gt.StreamError, match="the child graph in_a_list it calls") as e:
        outer.trace(da, db, dc)
    assert e.value.source[1] == line_of(__file__, "reached")

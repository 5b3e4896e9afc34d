"""``Graph.verify``: graphs broken on purpose, and the message that names the node."""
import dataclasses

import pytest

import graphtrace as gt
from graphtrace.arrays import as_buffer
from graphtrace.ops.base import Op
from helpers import FakeDeviceArray as A, any_kernel, line_of, repeat

K = any_kernel()


@gt.graph
def chain(s, x, y):
    s.launch(K, 1, 1, gt.Out(x))                    # first
    s.launch(K, 1, 1, gt.In(x), gt.Out(y))          # second
    s.copy(y, x)                                    # third


def broken(why):
    """A freshly traced ``chain``, then ``why(graph)`` breaks it."""
    g = chain.trace(A(16), A(16))
    g.verify()   # whole, it passes
    why(g)
    with pytest.raises(gt.IRError) as e:
        g.verify()
    return e.value


def test_a_dependency_on_a_later_node_is_named():
    def later(g):
        g.nodes[0].deps = [g.nodes[2]]
    e = broken(later)
    assert "%0 (kernel) depends on %2, which is no earlier node of graph chain" in e.message
    assert e.source[1] == line_of(__file__, "first")
    assert "graph chain(x, y)  deps=data" in e.message   # the listing is attached


def test_a_dependency_on_a_node_of_another_graph_is_named():
    other = chain.trace(A(16), A(16))

    def foreign(g):
        g.nodes[1].deps = [other.nodes[0]]
    assert "%1 (kernel) depends on %0, which is no earlier node" in broken(foreign).message


def test_a_position_that_does_not_match_the_list():
    def swapped(g):
        g.nodes[1], g.nodes[2] = g.nodes[2], g.nodes[1]
    assert "%2 (memcpy) says it is at position 2 of graph chain, but is at 1" in \
        broken(swapped).message


def test_an_index_used_twice_in_the_trace():
    def twice(g):
        g.nodes[2].index = 0
    assert "%0 (memcpy) has the index of another node of the trace" in broken(twice).message


def test_an_index_used_twice_across_a_region():
    @gt.graph
    def f(s, x):
        repeat(s, 1, lambda b: b.launch(K, 1, 1, x))
    g = f.trace(A(16))
    g.nodes[0].regions[0].nodes[0].index = g.nodes[0].index
    with pytest.raises(gt.IRError, match="has the index of another node of the trace"):
        g.verify()


def test_a_node_whose_op_is_not_an_op():
    def stringly(g):
        g.nodes[1].op = "kernel"
    assert "%1 (?) has op 'kernel', which is no graphtrace Op" in broken(stringly).message


def test_a_view_outside_the_array_it_moves_with():
    def moved(g):
        b, mode = g.nodes[1].accesses[0]
        stray = as_buffer(A(16))
        stray.base, stray.label = b.base, "stray"
        g.nodes[1].accesses = ((stray, mode),) + g.nodes[1].accesses[1:]
    assert "%1 (kernel) accesses stray, which does not lie in the array it moves with (x)" \
        in broken(moved).message


def test_an_op_verify_hook_reports_its_own_invariant():
    def resized(g):
        g.nodes[2].attrs["nbytes"] = 8
    assert "%2 (memcpy) source, destination and nbytes differ in size" in \
        broken(resized).message


def test_a_region_is_checked_too():
    @gt.graph
    def f(s, x):
        repeat(s, 1, lambda b: b.launch(K, 1, 1, x))
    g = f.trace(A(16))
    inner = g.nodes[0].regions[0].nodes[0]
    g.nodes[0].regions[0].nodes[0] = dataclasses.replace(inner, pos=5)
    with pytest.raises(gt.IRError, match=r"%0 \(kernel\) says it is at position 5 of graph body"):
        g.verify()


class _Lying(Op):
    kind = "lying"

    def verify(self, node):
        return "is wrong on purpose"


def test_traces_are_verified_when_graphtrace_verify_is_set(monkeypatch):
    @gt.graph
    def f(s, x):
        t = s.tracer()
        t.record(_Lying(), None, (), (), stream=s.index)     # lying
    monkeypatch.setenv("GRAPHTRACE_VERIFY", "1")
    with pytest.raises(gt.IRError, match="is wrong on purpose") as e:
        f.trace(A(16))
    assert e.value.source[1] == line_of(__file__, "lying")
    monkeypatch.setenv("GRAPHTRACE_VERIFY", "0")
    assert f.trace(A(16)).nodes[0].kind == "lying"

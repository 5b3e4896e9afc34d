"""A build adds launches from the columns the trace recorded, without their Nodes.

``GpuContext.emit_region`` hands each recorded launch to ``KernelOp.emit_launch``
and each node made while recording to ``emit_node``. These tests run it with a
driver stand-in that hands out handles and keeps what it was given, and check
it against the Nodes made afterwards: each node comes after the handles of
exactly its dependencies, launches with their packed arguments, and a failure
names the node and the user's line.
"""
import pytest

import graphtrace as gt
from graphtrace.emit import GpuContext
from graphtrace.ops.base import Op
from graphtrace.ops.kernel import Adapter
from helpers import FakeDeviceArray as A, line_of


class Handle:
    """A ``CUgraphNode`` as far as the emitter can tell."""

    def __init__(self, n):
        self.n = n


class FakeNodes:
    """The part of ``KernelNodes`` that emission uses: it records every node."""

    compiled = None   # the compiled emitter's loop is tests/test_emitter.py's: this is Python's

    def __init__(self):
        self.added = {}   # handle number -> (what, handles it comes after, values)

    def _new(self, what, preds, values=None):
        h = Handle(len(self.added))
        self.added[h.n] = (what, [p.n for p in preds], values)
        return h

    def add(self, parent, preds, kernel, function, grid, block, shared_mem, values):
        return self._new(kernel, preds, list(values))

    def add_edges(self, definition, preds, handle):
        what, before, values = self.added[handle.n]
        self.added[handle.n] = (what, before + [p.n for p in preds], values)


class Packed(Adapter):
    """A kernel adapter whose compile and pack need no GPU; ``fail`` makes pack raise."""

    library = "test"

    def __init__(self, name, intents, fail=False):
        super().__init__(None, name, [f"a{i}" for i in range(len(intents))], intents)
        self.fail = fail

    def compile(self, args):
        return self.name, None

    def pack(self, meta, args, value_of):
        if self.fail:
            raise ValueError("cannot pack this")
        return [getattr(value_of(a), "ptr", a) for a in args]


class Marker(Op):
    """A node made while recording (``Tracer.record``), added through ``emit``."""

    kind = "marker"

    def emit(self, gpu, node, parent):
        return gpu.kernel_nodes._new("marker", gpu.take_preds())


def context():
    gpu = object.__new__(GpuContext)   # no driver: what emission reads, set here
    gpu.value_of, gpu.state, gpu.on_launch, gpu.devices = (lambda v: v), {}, [], None
    gpu._nodes, gpu._handles, gpu._preds, gpu.packings = {}, {}, None, {}
    gpu.kernel_nodes, gpu._handle_type = FakeNodes(), Handle
    return gpu


READ_WRITE, WRITE = Packed("rw", ["r", "w"]), Packed("w", ["w"])


def program(s, x, y, z):
    s.launch(WRITE, 1, 32, x)
    s.launch(WRITE, 1, 32, y)
    s.launch(READ_WRITE, 1, 32, x, z)
    t = s.tracer()
    t.record(Marker(), None, (), ((t.buffer(z), "r"), (t.buffer(y), "w")), stream=s.index)
    s.launch(READ_WRITE, 1, 32, y, x)
    s.launch(WRITE, 1, 32, z)


def test_each_node_comes_after_exactly_its_dependencies(monkeypatch):
    monkeypatch.setenv("GRAPHTRACE_VERIFY", "0")   # verify() would make every Node
    x, y, z = A(32), A(32), A(32)
    g = gt.graph(program).trace(x, y, z)
    gpu = context()
    gpu.emit_region(g, "definition")
    assert g.recording() is not None   # the launches' Nodes are still unmade
    added = gpu.kernel_nodes.added
    by_index = {index: handle.n for index, handle in gpu._handles.items()}
    assert sorted(by_index) == [n.index for n in g.nodes]
    for n in g.nodes:
        what, before, values = added[by_index[n.index]]
        assert sorted(before) == sorted(by_index[d.index] for d in n.deps), n.index
        if n.kind == "kernel":
            assert what == n.target.name and values == [a.ptr for a in n.args]
            assert gpu.state[n.index] == (n.target.name, None)
        else:
            assert what == "marker"
    assert any(n.deps for n in g.nodes) and len(added) == 6


def test_a_launch_that_fails_is_named_at_its_line(monkeypatch):
    monkeypatch.setenv("GRAPHTRACE_VERIFY", "0")
    broken = Packed("broken", ["rw"], fail=True)

    def f(s, x):
        s.launch(WRITE, 1, 32, x)
        s.launch(broken, 1, 32, x)                                  # packfails
    g = gt.graph(f).trace(A(32))
    with pytest.raises(gt.EmitError, match=r"kernel node %1 kernel broken.*cannot pack this") as e:
        context().emit_region(g, "definition")
    assert e.value.source == (__file__, line_of(__file__, "packfails"))

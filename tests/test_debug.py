"""The GPU intent check (graphtrace/debug.py), as far as it runs without a GPU.

The check itself is run here with the simulator executing each node and
host memory standing for device memory; tests/gpu/test_debug.py runs it on
a real GPU.
"""
import ctypes

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace import debug, emit, sim
from graphtrace.debug import checks_intents, guarded, read_only_bytes
from helpers import FakeDeviceArray as A, any_kernel, line_of


@cuda.jit
def sneaky(x, y):
    i = cuda.grid(1)
    if i < y.size:
        x[i] = y[i]


@cuda.jit
def shift(x, y):           # y is x[4:] below: writes bytes x holds
    i = cuda.grid(1)
    if i < y.size:
        y[i] = x[i % 4] * 10


@cuda.jit
def spill(x, y):           # also writes x[0], which it is declared to only read
    i = cuda.grid(1)
    if i < y.size:
        y[i] = x[i] + 1
    if i == 0:
        x[0] = 5


def host_bytes(v):
    """What the GPU check copies off the device, read from the simulator's host memory."""
    return np.frombuffer((ctypes.c_uint8 * (v.hi - v.lo)).from_address(v.lo), np.uint8).copy()


def run_checked(graph):
    """Run each node of ``graph`` through the check, as a debug launch does."""
    runner = sim.SimContext(check_intents=False)
    for node in graph.nodes:
        guarded(node, lambda v: v, host_bytes, lambda: node.op.simulate(runner, node))


def test_flag_and_environment_variable(monkeypatch):
    monkeypatch.delenv("GRAPHTRACE_CHECK_INTENTS", raising=False)
    assert checks_intents() is False
    for value, expect in (("1", True), ("yes", True), ("0", False), ("off", False)):
        monkeypatch.setenv("GRAPHTRACE_CHECK_INTENTS", value)
        assert checks_intents() is expect
    assert checks_intents(False) is False     # the decorator's choice wins
    monkeypatch.setenv("GRAPHTRACE_CHECK_INTENTS", "maybe")
    with pytest.raises(ValueError, match="GRAPHTRACE_CHECK_INTENTS"):
        checks_intents()
    with pytest.raises(TypeError, match="check_intents"):
        gt.graph(check_intents="yes")(lambda s: None)


def test_gpu_backend_chooses_the_checked_graph(monkeypatch):
    # Stand-ins that run on the simulator: only which class is chosen matters here
    # (and the check that backend="gpu" has a GPU to run on passes).
    monkeypatch.setattr("graphtrace.function.runnable", lambda backend: backend)
    monkeypatch.setattr(debug, "CheckedGraph", type("Checked", (sim.SimGraph,), {}))
    monkeypatch.setattr(emit, "CompiledGraph", type("Plain", (sim.SimGraph,), {}))
    monkeypatch.delenv("GRAPHTRACE_CHECK_INTENTS", raising=False)

    def body(s, x):
        s.memset(x, 0)
    x = cuda.to_device(np.ones(4))

    def kind(f, backend="gpu"):   # the class of the graph compile() holds
        return type(f.compile(x, backend=backend).compiled).__name__
    assert kind(gt.graph(check_intents=True)(body)) == "Checked"
    assert kind(gt.graph(body)) == "Plain"
    monkeypatch.setenv("GRAPHTRACE_CHECK_INTENTS", "1")
    assert kind(gt.graph(body)) == "Checked"
    assert kind(gt.graph(check_intents=False)(body)) == "Plain"
    assert kind(gt.graph(body), "sim") == "SimGraph"


def test_a_write_to_a_read_only_argument_names_kernel_parameter_and_line():
    @gt.graph
    def f(s, a, b):
        sneaky[1, 8, s](gt.In(a), b)             # sneaky
    g = f.trace(cuda.to_device(np.zeros(8)), cuda.to_device(np.ones(8)))
    with pytest.raises(gt.IntentError) as e:
        run_checked(g)
    assert e.value.source[1] == line_of(__file__, "sneaky")
    assert "kernel sneaky wrote to a (parameter x): 8 of its 8 elements changed, the first at index 0" in str(e.value)
    assert "gt.InOut" in str(e.value) and "gt.kernel" in str(e.value)


def test_bytes_also_written_through_another_argument_are_not_checked():
    k = gt.kernel(shift, "in, out")

    @gt.graph
    def f(s, x):
        s.launch(k, 1, 8, x, x[4:])
    x = cuda.to_device(np.arange(12.0))
    g = f.trace(x)
    (_, _, keep), = read_only_bytes(g.nodes[0], lambda v: v)
    assert keep.tolist() == [True] * 32 + [False] * 64   # x[:4] only
    run_checked(g)
    assert x.copy_to_host().tolist() == [0, 1, 2, 3, 0, 10, 20, 30, 0, 10, 20, 30]


def test_a_write_outside_the_overlap_is_still_found():
    k = gt.kernel(spill, "in, out")

    @gt.graph
    def f(s, x):
        s.launch(k, 1, 8, x, x[4:])              # spill
    g = f.trace(cuda.to_device(np.arange(12.0)))
    with pytest.raises(gt.IntentError) as e:
        run_checked(g)
    assert e.value.source[1] == line_of(__file__, "spill")
    assert "wrote to x (parameter x): 1 of its 4 elements changed, the first at index 0" in str(e.value)


def test_interleaved_views_keep_their_own_bytes():
    K = any_kernel()

    @gt.graph
    def f(s, x):
        s.launch(K, 1, 1, gt.In(x[::2]), gt.Out(x[1::2]))
    (_, view, keep), = read_only_bytes(f.trace(A(8, "float32")).nodes[0], lambda v: v)
    assert (view.hi - view.lo, int(keep.sum())) == (28, 16)
    assert keep.reshape(7, 4)[:, 0].tolist() == [True, False] * 3 + [True]


def test_an_argument_read_and_written_is_not_checked():
    K = any_kernel()

    @gt.graph
    def f(s, x, y):
        s.launch(K, 1, 1, x, gt.In(y), gt.Out(y))
    assert read_only_bytes(f.trace(A(8), A(8)).nodes[0], lambda v: v) == []


def test_host_callback_writing_an_in_argument_is_named():
    def scribble(h):
        h[0] = 1.0

    @gt.graph
    def f(s, h):
        s.host(scribble, gt.In(h))               # scribble
    h = gt.pinned_empty(4)
    h[:] = 0
    g = f.trace(h)
    with pytest.raises(gt.IntentError) as e:
        run_checked(g)
    assert e.value.source[1] == line_of(__file__, "scribble")
    assert "scribble wrote to h (argument 0)" in str(e.value)

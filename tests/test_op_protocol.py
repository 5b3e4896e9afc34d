"""The defaults of ``Op``: what a new kind of node gets without writing it."""
import numpy as np
import pytest

import graphtrace as gt
from graphtrace.ops import control, host, kernel, memory
from graphtrace.ops.base import Op
from helpers import FakeDeviceArray as A, line_of


class _Bare(Op):
    kind = "bare"


class _Params(Op):
    kind = "params"

    def params(self, gpu, node):
        return {"dst": gpu.value_of(node.args[0])}


class _Updated:
    def __init__(self):
        self.calls = []

    def update(self, **kw):
        self.calls.append(kw)


class _Gpu:
    """The part of GpuContext that the update hooks use."""

    def __init__(self):
        self.defn = _Updated()
        self.value_of = lambda v: v * 10

    def definition_node(self, node):
        return self.defn


def _record(op, *args, **attrs):
    @gt.graph
    def f(s, x):
        s.tracer().record(op, print, args, (), stream=s.index, attrs=attrs)
    return f.trace(A(4)).nodes[0]


def test_describe_prints_target_attrs_and_args_generically():
    node = _record(_Bare(), 1, (2, 3), width=4)
    assert str(node.op.describe(node, gt.ir.Namer())) == "print[width=4](1, (2, 3))"


def test_driver_update_follows_from_params():
    assert _Params().driver_update and not _Bare().driver_update
    assert kernel.KERNEL.driver_update and memory.MEMCPY.driver_update
    assert not host.HOST_CALLBACK.driver_update and not control.EVENT_RECORD.driver_update


def test_update_definition_passes_params_to_the_definition_node():
    node, gpu = _record(_Params(), 7), _Gpu()
    node.op.update_definition(gpu, node)
    assert gpu.defn.calls == [{"dst": 70}]
    bare, gpu = _record(_Bare(), 7), _Gpu()
    bare.op.update_definition(gpu, bare)
    assert gpu.defn.calls == []   # nothing to update


def test_an_executable_node_is_set_only_by_ops_that_say_they_can():
    # the others are rebound by a whole-graph update from the definition
    node = _record(_Params(), 7)
    assert not node.op.exec_update
    with pytest.raises(NotImplementedError, match="updated with the whole graph"):
        node.op.update(_Gpu(), node)
    assert kernel.KERNEL.exec_update and not memory.MEMCPY.exec_update
    bare = _record(_Bare(), 7)
    bare.op.update(_Gpu(), bare)   # nothing to update: no error


def test_simulate_refuses_an_op_without_it_at_the_users_line():
    @gt.graph(backend="sim")
    def f(s, x):
        s.tracer().record(_Bare(), None, (), (), stream=s.index)   # bare
    with pytest.raises(gt.SimulationError, match="the simulator cannot run bare nodes") as e:
        f(np.zeros(4))
    assert e.value.source[1] == line_of(__file__, "bare")


def test_emit_refuses_an_op_without_it():
    node = _record(_Bare())
    with pytest.raises(NotImplementedError, match="bare nodes cannot be put in a CUDA graph"):
        node.op.emit(None, node, None)

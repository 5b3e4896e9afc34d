"""A bound method put on an object's instance between calls (``m.layer.forward =
types.MethodType(gamma_forward, m.layer)``): the graph calls another function,
so what that one reads off its object (``self.gamma``) and by name is watched
from then on, as the class's method's reads were; swapped back, the class's
method's reads again. Before, what the held objects' methods read was found
once per set of classes, and a later change to ``m.layer.gamma`` replayed the
old value."""
import types

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt


@cuda.jit
def scale(x, a, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * a


G = 1.0


class _Layer:
    def __init__(self):
        self.a, self.gamma = 2.0, 7.0

    def forward(self, s, x, out):
        scale[1, 2, s](x, self.a, out)


def _gamma_forward(self, s, x, out):
    scale[1, 2, s](x, self.gamma * G, out)


class _Net:
    def __init__(self):
        self.layer = _Layer()
        self.a, self.gamma = 2.0, 7.0

    def forward(self, s, x, out):
        scale[1, 2, s](x, self.a, out)

    @gt.graph(backend="sim")
    def through_layer(self, s, x, out):
        self.layer.forward(s, x, out)

    @gt.graph(backend="sim")
    def through_self(self, s, x, out):
        self.forward(s, x, out)


class _GlobalLayer(_Layer):
    """(A class of its own: what was bound to another class's objects says nothing.)"""


LAYER = _GlobalLayer()


@gt.graph(backend="sim")
def _through_global(s, x, out):
    LAYER.forward(s, x, out)


def _case(where):
    m = _Net()
    if where == "layer":
        return m.through_layer, m.layer
    if where == "self":
        return m.through_self, m
    LAYER.__dict__.pop("forward", None)
    LAYER.a, LAYER.gamma = 2.0, 7.0
    return _through_global, LAYER


@pytest.mark.parametrize("where", ["layer", "self", "global"])
def test_what_a_method_swapped_in_on_an_instance_reads_is_watched(where):
    global G
    G = 1.0
    run, target = _case(where)
    x, out = cuda.to_device(np.ones(2)), cuda.to_device(np.zeros(2))

    def now():
        run(x, out)
        return float(out.copy_to_host()[0])

    assert now() == 2.0
    target.forward = types.MethodType(_gamma_forward, target)
    assert now() == 7.0
    target.gamma = 0.5   # read by the new function alone
    assert now() == 0.5
    G = 4.0   # a global it reads
    assert now() == 2.0
    G = 1.0
    del target.forward   # swapped back: the class's method
    target.a = 3.0
    assert now() == 3.0
    target.forward = types.MethodType(_gamma_forward, target)   # and in again
    target.gamma = 0.25
    assert now() == 0.25
    target.gamma = 0.125
    assert now() == 0.125


def test_a_method_bound_to_another_object_of_the_class_reads_that_one():
    """The function is the class's own, bound to another layer: what it reads off
    that layer is watched."""
    class _Other(_Layer):
        pass

    m, other = _Net(), _Other()
    m.layer = _Other()
    x, out = cuda.to_device(np.ones(2)), cuda.to_device(np.zeros(2))
    m.through_layer(x, out)
    m.layer.forward = types.MethodType(_gamma_forward, other)
    m.through_layer(x, out)
    assert float(out.copy_to_host()[0]) == 7.0
    other.gamma = 0.5
    m.through_layer(x, out)
    assert float(out.copy_to_host()[0]) == 0.5

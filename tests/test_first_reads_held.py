"""A flag or key the traced code reads and then sets on an object ``self`` holds
(``if not self.opt.started: ...; self.opt.started = True``, ``if "init" not in
self.state: ...; self.state["init"] = True``) decided the work it recorded, as
one on ``self`` itself does (``test_first_reads``): the next call, finding the
new value, takes the other branch as eager code does. What the traced code
bumps there (``self.state.step += 1``) is state: said (``StateWarning``)."""
import types
import warnings

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt


@cuda.jit
def axpy(a, x, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] += a * x[i]


def dev(*values):
    return cuda.to_device(np.array(values, dtype=np.float64))


class _Opt:
    def __init__(self):
        self.started, self.lr = False, 1.0


class _Model:
    def __init__(self):
        self.opt, self.state = _Opt(), {}
        self.flags = types.SimpleNamespace(started=False)
        self.f, self.v = dev(1, 1), dev(0, 0)

    @gt.graph(backend="sim")
    def held_object(self, s):
        if not self.opt.started:
            axpy[1, 2, s](100.0, self.f, self.v)   # the first call alone
            self.opt.started = True
        axpy[1, 2, s](self.opt.lr, self.f, self.v)

    @gt.graph(backend="sim")
    def namespace(self, s):
        if not self.flags.started:
            axpy[1, 2, s](100.0, self.f, self.v)
            self.flags.started = True
        axpy[1, 2, s](1.0, self.f, self.v)

    @gt.graph(backend="sim")
    def dict_key(self, s):
        if "init" not in self.state:
            axpy[1, 2, s](100.0, self.f, self.v)
            self.state["init"] = True
        axpy[1, 2, s](1.0, self.f, self.v)


@pytest.mark.parametrize("method", ["held_object", "namespace", "dict_key"])
def test_a_flag_on_an_object_self_holds_the_trace_read_then_set_runs_once(method):
    """Each replayed the first call's work at every call, silently: the flag lay
    deeper than self, where the key left out what the code stores."""
    m = _Model()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(4):
            getattr(m, method)()
    assert m.v.copy_to_host().tolist() == [104.0, 104.0]
    assert getattr(_Model, method).cache_info().misses == 2


class _Stepper:
    def __init__(self):
        self.state = types.SimpleNamespace(step=0)
        self.f, self.v = dev(1, 1), dev(0, 0)

    @gt.graph(backend="sim")
    def run(self, s):
        self.state.step += 1   # bumped when traced alone
        axpy[1, 2, s](1.0, self.f, self.v)


def test_a_counter_on_an_object_self_holds_is_said_once_and_traced_once():
    m = _Stepper()
    with pytest.warns(gt.StateWarning, match=r"changed self\.state\.step") as caught:
        for _ in range(3):
            m.run()
    assert len([w for w in caught if issubclass(w.category, gt.StateWarning)]) == 1
    assert m.v.copy_to_host().tolist() == [3.0, 3.0] and _Stepper.run.cache_info().misses == 1

"""A number the traced code reads by a constant index off a host numpy array
(``float(LR[0])`` of ``LR = np.array([0.1])``) changed in place between calls:
keyed by value wherever the array is held (by ``self``, a global name or an
argument object), so the next call traces anew with the new value, as eager
code would use it, instead of replaying the first.

On the simulator, where results can be read back.
"""
import types

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt


@cuda.jit
def put(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v


LR = np.array([0.1])
TABLE = np.array([[1.0, 2.0], [3.0, 4.0]])


def first(a):
    return float(a.copy_to_host()[0])


def test_an_item_of_a_global_host_array_changed_in_place_traces_anew():
    @gt.graph(backend="sim")
    def step(s, w):
        put[1, 32, s](w, float(LR[0]))

    w = cuda.device_array(4)
    got = []
    for lr in (0.1, 0.2, 0.3, 0.3):
        LR[0] = lr
        step(w)
        got.append(first(w))
    assert got == [0.1, 0.2, 0.3, 0.3]
    assert step.cache_info().misses == 3


def test_an_item_of_a_two_dimensional_global_host_array_is_keyed_by_value():
    @gt.graph(backend="sim")
    def step(s, w):
        put[1, 32, s](w, float(TABLE[1, 0]))

    w = cuda.device_array(4)
    step(w)
    TABLE[1, 0] = 5.0
    try:
        step(w)
        assert first(w) == 5.0
    finally:
        TABLE[1, 0] = 3.0


def test_an_item_of_a_host_array_an_argument_object_holds_changed_in_place_traces_anew():
    @gt.graph(backend="sim")
    def step(s, w, cfg):
        put[1, 32, s](w, float(cfg.lr[0]))

    w, cfg = cuda.device_array(4), types.SimpleNamespace(lr=np.array([0.1]))
    got = []
    for lr in (0.1, 0.2, 0.3, 0.2):
        cfg.lr[0] = lr
        step(w, cfg)
        got.append(first(w))
    assert got == [0.1, 0.2, 0.3, 0.2]
    assert step.cache_info().misses == 3


class _Model:
    def __init__(self):
        self.lr, self.w = np.array([0.1]), cuda.device_array(4)

    @gt.graph(backend="sim")
    def step(self, s):
        put[1, 32, s](self.w, float(self.lr[0]))


def test_an_item_of_a_host_array_self_holds_changed_in_place_traces_anew():
    m = _Model()
    got = []
    for lr in (0.1, 0.2):
        m.lr[0] = lr
        m.step()
        got.append(first(m.w))
    assert got == [0.1, 0.2]


@cuda.jit
def triple(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 3.0 * x[i]


HBUF = gt.pinned_empty(4)


def test_an_item_a_host_callback_reads_off_a_global_host_array_is_not_keyed():
    """The callback reads HBUF[0] when it runs (the graph writes HBUF at every
    call): not a value the trace baked in, so no call traces anew for it."""
    seen = []

    @gt.graph(backend="sim")
    def step(s, x, out):
        triple[1, 32, s](x, out)
        s.copy(HBUF, out)
        s.host(lambda: seen.append(float(HBUF[0])))

    out = cuda.device_array(4)
    for v in (1.0, 2.0, 3.0):
        step(cuda.to_device(np.full(4, v)), out)
    assert seen == [3.0, 6.0, 9.0]
    assert step.cache_info().misses == 1


G = np.float64(0.0)


def test_a_global_numpy_number_from_zero_to_another_traces_anew():
    """np.float64(0.0) is keyed with the sign of its zero, (0.0, 1.0): compared with
    the np.float64(0.1) of the next call it made an array, and the call raised."""
    global G

    @gt.graph(backend="sim")
    def step(s, w):
        put[1, 32, s](w, G)

    w = cuda.device_array(4)
    got = []
    for v in (0.0, 0.1, 0.0, 0.2):
        G = np.float64(v)
        step(w)
        got.append(first(w))
    assert got == [0.0, 0.1, 0.0, 0.2]


def test_an_item_of_a_host_array_an_argument_object_holds_from_zero_traces_anew():
    @gt.graph(backend="sim")
    def step(s, w, cfg):
        put[1, 32, s](w, float(cfg.lr[0]))

    w, cfg = cuda.device_array(4), types.SimpleNamespace(lr=np.array([0.0]))
    got = []
    for lr in (0.0, 0.1, 0.0):
        cfg.lr[0] = lr
        step(w, cfg)
        got.append(first(w))
    assert got == [0.0, 0.1, 0.0]


def test_the_retrace_warning_names_an_item_of_an_argument_objects_host_array():
    @gt.graph(backend="sim")
    def step(s, w, cfg):
        put[1, 32, s](w, float(cfg.lr[0]))

    w, cfg = cuda.device_array(4), types.SimpleNamespace(lr=np.array([0.0]))
    with pytest.warns(gt.RetraceWarning) as rec:
        for i in range(12):
            cfg.lr[0] = 0.1 * (i + 1)
            step(w, cfg)
    message = str(rec[0].message)
    assert "the value(s) read by name keep changing (cfg.lr[0])" in message
    assert "off an argument object" in message and "argument(s) cfg" not in message

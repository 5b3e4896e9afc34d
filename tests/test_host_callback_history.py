"""A host callback keeping a history or a count on its own object, a list or dict
subclass of the program's own (``class History(list)`` whose ``record`` appends to
itself, ``class Metrics(dict)`` whose ``bump`` counts into itself) that a global
holds and whose method the graph hands to ``s.host``: what the callback changes
there is its state, read when it runs, not a setting the cache key watches.

Before, such an object was keyed by every value it held, as a list of settings
read whole is, so each call after the callback ran found a new key and traced
anew (20 calls, 20 traces), with a warning saying to pass the values as
arguments. It now traces once, as ``s.host(LOG.append, h)`` of a plain list
does; a setting the graph's own code reads off the same object still keys it,
and the arrays the callback reads still order it after their writers.
"""
import numpy as np
from numba import cuda

import graphtrace as gt


class _History(list):
    def record(self, h):
        self.append(float(h[0]))


class _Metrics(dict):
    def bump(self, h):
        self["n"] = self.get("n", 0) + 1
        self["last"] = float(h[0])


class _Sink(list):
    """Holds a pinned array at [0]; its callback appends what that holds."""
    def record(self, _tick):
        self.append(float(self[0][0]))


HIST = _History()
METRICS = _Metrics()
SINK = _Sink()


@gt.graph(backend="sim")
def _hist_step(s, x, h):
    s.copy(h, x)
    s.host(HIST.record, h)


@gt.graph(backend="sim")
def _metrics_step(s, x, h):
    s.copy(h, x)
    s.host(METRICS.bump, h)


@gt.graph(backend="sim")
def _metrics_scaled_step(s, x, h, y):
    s.copy(h, x)
    if METRICS["scale"] > 1:   # a setting the graph's own code reads
        s.copy(y, x)
    s.host(METRICS.bump, h)


@gt.graph(backend="sim")
def _hist_scaled_step(s, x, h, y):
    s.copy(h, x)
    if HIST.scale > 1:   # an attribute of the list subclass the graph's code reads
        s.copy(y, x)
    s.host(HIST.record, h)


@gt.graph(backend="sim")
def _sink_step(s, x, h, tick):
    s.copy(h, x)
    s.host(SINK.record, tick)


def _arrays():
    return cuda.to_device(np.ones(4)), gt.pinned_empty(4)


def test_a_list_subclass_history_its_callback_appends_to_traces_once():
    x, h = _arrays()
    HIST.clear()
    for _ in range(10):
        _hist_step(x, h)
    assert len(HIST) == 10
    assert _hist_step.cache_info().misses == 1


def test_a_dict_subclass_counter_its_callback_bumps_traces_once():
    x, h = _arrays()
    METRICS.clear()
    for _ in range(10):
        _metrics_step(x, h)
    assert METRICS["n"] == 10
    assert _metrics_step.cache_info().misses == 1


def test_a_setting_the_graph_reads_off_the_counter_still_keys_it():
    x, h = _arrays()
    y = cuda.to_device(np.zeros(4))
    METRICS.clear()
    METRICS["scale"] = 1
    for _ in range(5):
        _metrics_scaled_step(x, h, y)
    assert _metrics_scaled_step.cache_info().misses == 1
    METRICS["scale"] = 2
    _metrics_scaled_step(x, h, y)
    assert _metrics_scaled_step.cache_info().misses == 2
    assert y.copy_to_host().tolist() == [1.0] * 4


def test_an_attribute_the_graph_reads_off_the_history_still_keys_it():
    x, h = _arrays()
    y = cuda.to_device(np.zeros(4))
    HIST.clear()
    HIST.scale = 1
    for _ in range(5):
        _hist_scaled_step(x, h, y)
    assert _hist_scaled_step.cache_info().misses == 1
    HIST.scale = 2
    _hist_scaled_step(x, h, y)
    assert _hist_scaled_step.cache_info().misses == 2
    assert y.copy_to_host().tolist() == [1.0] * 4


def test_the_callback_still_runs_after_the_copy_into_the_array_it_holds():
    tick, h = gt.pinned_empty(1), gt.pinned_empty(4)
    SINK[:] = [h]
    bad = 0
    for i in range(10):
        h[:] = -1.0
        del SINK[1:]
        _sink_step(cuda.to_device(np.full(4, float(i))), h, tick)
        bad += SINK[1:] != [float(i)]
    assert bad == 0
    assert _sink_step.cache_info().misses == 1


class _Model:
    def __init__(self):
        self.history = []

    @gt.graph(backend="sim")
    def step(self, s, x, h):
        s.copy(h, x)
        s.host(self.history.append, 1.0)

    @gt.graph(backend="sim")
    def sized_step(self, s, x, h, y):
        s.copy(h, x)
        if len(self.history) > 100:   # the graph's own code reads the history too
            s.copy(y, x)
        s.host(self.history.append, 1.0)


def test_a_history_on_self_whose_append_is_handed_to_s_host_traces_once():
    x, h = _arrays()
    m = _Model()
    for _ in range(10):
        m.step(x, h)
    assert m.history == [1.0] * 10
    assert m.step.cache_info().misses == 1


def test_a_history_on_self_the_graph_also_reads_still_keys_it():
    x, h = _arrays()
    y = cuda.to_device(np.zeros(4))
    m = _Model()
    for _ in range(3):
        m.sized_step(x, h, y)
    assert m.sized_step.cache_info().misses == 3

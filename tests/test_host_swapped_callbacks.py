"""A graph hands a held object's method to ``s.host`` (``s.host(self.sink.read,
t)``, ``s.host(SINK.read, t)``, ``s.host(sink.read, t)`` of a closure), and the
object is then replaced by another of the same class holding another array.

Before, the key held the chain only by which arrays the callback reads overlap
the call's: traced with the sink holding ``a`` and called with ``a`` as ``h``,
then after ``m.sink = Sink(b)`` called with ``b`` as ``h``, the overlap was the
same, so every call replayed the first graph, whose callback is a method of the
old sink and read ``a`` (eager reads ``b``). The key now holds the object the
callback is bound to: the graph is traced anew with the new sink's callback.
"""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt

SEEN = []


class _Sink:
    def __init__(self, buf):
        self.buf = buf

    def read(self, _tick):
        SEEN.append(float(self.buf[0]))


class _Settings:
    def __init__(self, scale):
        self.scale = scale


class _Model:
    def __init__(self, buf):
        self.sink = _Sink(buf)
        self.cfg = _Settings(1)

    @gt.graph(backend="sim")
    def step(self, s, x, h, tick):
        s.copy(h, x)
        s.host(self.sink.read, tick)

    @gt.graph(backend="sim")
    def scaled(self, s, x, h, tick):
        s.copy(h, x)
        if self.cfg.scale == 1:
            s.host(self.sink.read, tick)


SINK = None


@gt.graph(backend="sim")
def _global_step(s, x, h, tick):
    s.copy(h, x)
    s.host(SINK.read, tick)


class _Holder:
    pass


HOLDER = _Holder()


@gt.graph(backend="sim")
def _holder_step(s, x, h, tick):
    s.copy(h, x)
    s.host(HOLDER.sink.read, tick)


def _closure(buf):
    sink = _Sink(buf)

    @gt.graph(backend="sim")
    def step(s, x, h, tick):
        s.copy(h, x)
        s.host(sink.read, tick)

    def swap(new):
        nonlocal sink
        sink = new
    return step, swap


def _swap_global(new):
    global SINK
    SINK = new


def _made(how, buf):
    if how == "method":
        m = _Model(buf)
        return m.step, lambda new: setattr(m, "sink", new)
    if how == "global":
        _swap_global(_Sink(buf))
        return _global_step, _swap_global
    if how == "held by a global":
        HOLDER.sink = _Sink(buf)
        return _holder_step, lambda new: setattr(HOLDER, "sink", new)
    return _closure(buf)


def _stale(step, a, b, tick, same_arguments):
    bad = 0
    x = cuda.to_device(np.zeros(4))
    for i in range(20):
        a[:], b[:] = -2.0, -1.0
        if same_arguments:
            x.copy_to_device(np.full(4, float(i)))
        else:
            x = cuda.to_device(np.full(4, float(i)))
        SEEN.clear()
        step(x, b, tick)
        bad += SEEN != [float(i)]
    return bad


@pytest.mark.parametrize("same_arguments", [False, True])
@pytest.mark.parametrize("how", ["method", "global", "held by a global", "closure"])
def test_a_swapped_callback_object_traces_anew_with_its_callback(how, same_arguments):
    tick, a, b = gt.pinned_empty(1), gt.pinned_empty(4), gt.pinned_empty(4)
    step, swap = _made(how, a)
    step.clear_cache()
    step(cuda.to_device(np.full(4, 7.0)), a, tick)
    swap(_Sink(b))
    assert _stale(step, a, b, tick, same_arguments) == 0
    assert step.cache_info().misses == 2


def test_an_object_the_graph_reads_but_does_not_hand_to_host_is_watched_by_value():
    tick, a = gt.pinned_empty(1), gt.pinned_empty(4)
    m = _Model(a)
    m.scaled.clear_cache()
    x = cuda.to_device(np.full(4, 3.0))
    m.scaled(x, a, tick)
    m.cfg = _Settings(1)   # another object, the same settings: the same graph
    m.scaled(x, a, tick)
    assert m.scaled.cache_info().misses == 1
    m.sink = _Sink(a)   # another callback object: traced anew, with its callback
    SEEN.clear()
    m.scaled(x, a, tick)
    assert m.scaled.cache_info().misses == 2
    assert SEEN == [3.0]


def test_a_callback_object_made_anew_at_every_call_is_named_by_the_retrace_warning():
    tick, a = gt.pinned_empty(1), gt.pinned_empty(4)
    m = _Model(a)
    m.step.clear_cache()
    x = cuda.to_device(np.full(4, 3.0))
    with pytest.warns(gt.RetraceWarning, match=r"hands to s.host is another at every call "
                                                r"\(self\.sink\.read\)"):
        for _ in range(12):
            m.sink = _Sink(a)
            m.step(x, a, tick)

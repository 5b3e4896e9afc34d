"""The call path under warnings made errors, many signatures, and a graph function
handed to s.host."""
import gc
import warnings
import weakref

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of


@cuda.jit
def inc(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


class Counter:
    def __init__(self):
        self.t = 0
        self.x = cuda.to_device(np.zeros(2, np.float32))

    @gt.graph(backend="sim")
    def step(self, s):
        self.t += 1   # state: changed once, when traced
        inc[1, 2, s](self.x)


def test_a_state_warning_made_an_error_does_not_throw_the_trace_away():
    c = Counter()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(gt.StateWarning):
            c.step()
        c.step()   # the graph was cached before the warning: not traced again
    assert c.t == 1
    assert Counter.step.cache_info().misses == 1
    assert c.x.copy_to_host().tolist() == [1, 1]
    Counter.step.clear_cache()


class Big:
    def __init__(self):
        self.blob = np.zeros(1000)


def test_the_retrace_warning_keeps_no_signature_after_it_is_given():
    @gt.graph(static=("cfg",), maxsize=2, backend="sim")
    def f(s, x, cfg):
        inc[1, 2, s](x)

    x = cuda.to_device(np.zeros(2, np.float32))
    refs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(20):
            cfg = Big()
            refs.append(weakref.ref(cfg))
            f(x, cfg)
            del cfg
    gc.collect()
    alive = sum(r() is not None for r in refs)
    assert alive <= 2 + 1, alive   # the cached graphs' (maxsize), and the last call's


def test_a_graph_function_handed_to_s_host_is_refused_at_the_line():
    @gt.graph(backend="sim")
    def g(s, h):
        pass

    @gt.graph(backend="sim")
    def f(s, h):
        s.host(g, h)   # the line named

    h = gt.pinned_empty(2) if hasattr(gt, "pinned_empty") else np.zeros(2)
    with pytest.raises(gt.ArgumentError, match="is a graph function") as e:
        f.trace(h)
    assert e.value.source[1] == line_of(__file__, "the line named")

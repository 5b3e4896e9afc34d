"""The retrace log names each function or kernel reached by name that changed once,
in the order the key reaches them, however many ways the function reaches it."""
import logging

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt


def _add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


def _add_two(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 2


bump = cuda.jit(_add_one)


def helper(s, x):
    bump[1, 32, s](x)


@gt.graph
def f(s, x):
    helper(s, x)   # reaches bump through helper, and by its own name below
    bump[1, 32, s](x)


@pytest.fixture
def info(caplog):
    caplog.set_level(logging.INFO, logger="graphtrace")
    return caplog


def reason(caplog, name: str = "f") -> str:
    traces = [r.getMessage() for r in caplog.records
              if r.name == "graphtrace" and r.getMessage().startswith(f"trace {name}: ")]
    return traces[-1]


def test_a_kernel_reached_twice_and_redefined_is_named_once(info):
    """It said ``changed: _add_two, _add_two`` (the kernel's own name)."""
    global bump, helper
    old_bump, old_helper = bump, helper
    x = cuda.to_device(np.zeros(4))
    try:
        f(x)
        bump = cuda.jit(_add_two)
        f(x)
        said = reason(info)
        assert said.endswith("functions or kernels reached by name changed: _add_two"), said

        def helper(s, x):   # noqa: F811 (redefined, as a notebook cell does)
            bump[1, 32, s](x)
            bump[1, 32, s](x)
        f(x)
        said = reason(info)
        # (the closest cached graph is the one with the new kernel: helper alone)
        assert said.endswith("functions or kernels reached by name changed: helper"), said
    finally:
        bump, helper = old_bump, old_helper
    assert x.copy_to_host()[0] == 2.0 + 4.0 + 6.0


@cuda.jit
def k2(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= 2


def h2(s, x):
    k2[1, 32, s](x)


@gt.graph
def g2(s, x):
    h2(s, x)


def test_only_what_changed_since_the_closest_graph_is_named_once(info):
    """Redefining the helper said ``h2, h2 (its code or defaults)``; then redefining
    the kernel alone said ``h2, k2, h2 (its code or defaults)`` (blaming ``h2``,
    unchanged since the last graph cached)."""
    global k2, h2
    old_k, old_h = k2, h2
    x = cuda.to_device(np.ones(4))
    try:
        g2(x)

        def h2(s, x):   # noqa: F811
            k2[1, 32, s](x)
            k2[1, 32, s](x)
        g2(x)
        assert reason(info, "g2").endswith("reached by name changed: h2"), reason(info, "g2")
        @cuda.jit
        def k2(x):   # noqa: F811
            i = cuda.grid(1)
            if i < x.size:
                x[i] *= 3
        g2(x)
        assert reason(info, "g2").endswith("reached by name changed: k2"), reason(info, "g2")
    finally:
        k2, h2 = old_k, old_h


def _act(v):
    return np.tanh(v)


def _region(x, y):
    y[...] = _act(x)


@gt.graph
def g3(s, x, y):
    s.captured(_region, x, y, reads=[x], writes=[y])


def test_a_redefined_captured_region_alone_is_named(info):
    """It said ``_region, g3 (its code or defaults), _region (its code or
    defaults)``: the key's helpers were compared place by place, and the new region,
    which no longer calls ``_act``, moved those after it."""
    global _act, _region
    old_act, old_region = _act, _region
    x, y = cuda.to_device(np.ones(4)), cuda.device_array(4)
    try:
        g3(x, y)

        def _act(v):   # noqa: F811
            return v * 3.0
        g3(x, y)
        assert reason(info, "g3").endswith("reached by name changed: _act"), reason(info, "g3")

        def _region(x, y):   # noqa: F811
            y[...] = x + 100.0
        g3(x, y)
        assert reason(info, "g3").endswith("reached by name changed: _region"), \
            reason(info, "g3")
    finally:
        _act, _region = old_act, old_region
    assert y.copy_to_host()[0] == 101.0


def test_code_replaced_in_place_is_named_as_such(info):
    """A helper whose code alone changed (the function kept, as ``%autoreload 2``
    does) is named with what changed."""
    def h5(s, x):
        k2[1, 32, s](x)

    def h6(s, x):
        k2[1, 32, s](x)
        k2[1, 32, s](x)

    @gt.graph
    def g5(s, x):
        h5(s, x)
    x = cuda.to_device(np.ones(4))
    g5(x)
    h5.__code__ = h6.__code__
    g5(x)
    assert reason(info, "g5").endswith("reached by name changed: h5 (its code or "
                                       "defaults)"), reason(info, "g5")


def test_a_graph_dropped_from_the_full_cache_is_the_reason_given(info):
    """It said ``the signature differs from the closest cached one: x: shape (16,) ->
    (8,)`` though the graph of (8,) had been cached, then dropped."""
    @gt.graph(maxsize=1)
    def g4(s, x):
        s.memset(x, 0)
    a, b = cuda.to_device(np.ones(8)), cuda.to_device(np.ones(16))
    g4(a)
    g4(b)
    g4(a)
    said = reason(info, "g4")
    assert said == "trace g4: its graph was dropped from the full cache (maxsize=1; " \
        "gt.graph(maxsize=...) keeps more, or None for no bound)", said
    g4.clear_cache()
    g4(b)
    assert reason(info, "g4").endswith("no longer cached (dropped from a full cache, or "
                                       "cleared)"), reason(info, "g4")

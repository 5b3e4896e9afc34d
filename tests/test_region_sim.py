"""A captured region on the simulator: a host read of device data in its code is a
``gt.CaptureError`` as on a GPU, where the region is captured, not run; an error of
the region's own code is reported plainly."""
import random
import warnings

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of

F = __file__


def by_truth(x, y):
    y[...] = 1.0 if x[0] > 0 else -1.0   # truth


def by_float(x, y):
    y[...] = float(x.sum())   # float


def by_item(x, y):
    y[...] = x.item(0)   # item


def by_loop(x, y):
    for v in x:
        if v > 0:   # loop truth
            y[...] = 1.0


def on_device(x, y):
    y[0] = x.sum()
    y[1] = x[0] * 2
    y[2:] = np.where(x[0] > 0, x[2:], -x[2:]) / x.max() + x[int(x.shape[0]) - 1]
    y[...] = np.tanh(y) if np.allclose(x.shape, x.shape) else y


@gt.graph
def run(s, x, y, region):
    s.captured(region, x, y, reads=[x], writes=[y])   # recorded


@pytest.mark.parametrize("region, marker, spelled", [
    (by_truth, "truth", "if x[0] > 0"), (by_float, "float", "float(...)"),
    (by_item, "item", ".item()"), (by_loop, "loop truth", "if x[0] > 0")])
def test_a_host_read_of_device_data_in_a_region_is_a_capture_error_at_its_line(
        region, marker, spelled):
    x, y = cuda.to_device(np.ones(4)), cuda.to_device(np.zeros(4))
    with pytest.raises(gt.CaptureError) as e:
        run(x, y, region, backend="sim")
    assert e.value.source == (F, line_of(F, marker))
    text = e.value.message
    assert f"captured region {region.__name__} (recorded at test_region_sim.py:" \
        f"{line_of(F, 'recorded')}) reads device data on the host at test_region_sim.py:" \
        f"{line_of(F, marker)}" in text
    assert spelled in text and "Compute it on the device" in text


def test_work_a_gpu_does_on_the_device_runs_as_before():
    x0 = np.array([1.0, 2.0, 3.0, 4.0])
    x, y = cuda.to_device(x0), cuda.to_device(np.zeros(4))
    run(x, y, on_device, backend="sim")
    want = np.empty(4)
    want[0], want[1] = x0.sum(), x0[0] * 2
    want[2:] = x0[2:] / 4.0 + 4.0
    np.testing.assert_allclose(y.copy_to_host(), np.tanh(want))


def takes_one(x):
    x[...] = 1


def adds_none(x, y):
    y[...] = x + helper()   # own bug


def helper():
    return None


def test_calling_the_region_with_the_wrong_arguments_says_so_plainly():
    @gt.graph
    def f(s, x):
        s.captured(takes_one, x, x)   # two given

    with pytest.raises(gt.SimulationError) as e:
        f(cuda.to_device(np.zeros(4)), backend="sim")
    assert e.value.source == (F, line_of(F, "two given"))
    text = e.value.message
    assert "could not be called with the 2 arguments s.captured gave it (takes_one() " \
        "takes 1 positional argument but 2 were given)" in text
    assert "numpy" not in text and "GPU backend" not in text


def test_an_error_of_the_regions_own_code_is_no_advice_about_numpy():
    x, y = cuda.to_device(np.ones(4)), cuda.to_device(np.zeros(4))
    with pytest.raises(gt.SimulationError) as e:
        run(x, y, adds_none, backend="sim")
    text = e.value.message
    assert f"failed at test_region_sim.py:{line_of(F, 'own bug')} (TypeError: " in text
    assert "numpy" not in text and "GPU backend" not in text


def draws(x, y):
    y[...] = x * random.random()   # region draw


def test_a_number_a_region_draws_on_the_host_warns_once_at_its_line():
    """A GPU runs the region's Python only when it captures it, so the draw is baked
    in, as one in the graph function's own code is."""
    x, y = cuda.to_device(np.ones(4)), cuda.to_device(np.zeros(4))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        run(x, y, draws, backend="sim")
        run(x, y, draws, backend="sim")
    hits = [m for m in w if issubclass(m.category, gt.StateWarning)]
    assert len(hits) == 1
    assert (hits[0].filename, hits[0].lineno) == (F, line_of(F, "region draw"))
    text = str(hits[0].message)
    assert f"captured region draws of run (recorded at test_region_sim.py:" \
        f"{line_of(F, 'recorded')}) draws a random value on the host with random.random() " \
        f"at test_region_sim.py:{line_of(F, 'region draw')}" in text
    assert "pass the number to s.captured as an argument" in text


@cuda.jit
def _bump(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1.0


def test_finding_a_regions_draws_makes_no_node_of_a_launch(monkeypatch):
    """A build adds launches from the recorded columns; looking for the regions'
    draws (in a loop's body too) must not make their Nodes."""
    from graphtrace.host_draws import region_draws
    monkeypatch.setenv("GRAPHTRACE_VERIFY", "0")   # verify() would make every Node

    @gt.graph
    def f(s, x, y, c):
        _bump[1, 4, s](x)
        with s.while_loop(gt.cond(c) > 0, max_iterations=2) as body:
            body.captured(draws, x, y, reads=[x], writes=[y])   # body region
        _bump[1, 4, s](y)
    ir = f.trace(cuda.to_device(np.ones(4)), cuda.to_device(np.zeros(4)),
                 cuda.to_device(np.zeros(1, np.int32)))
    assert ir.recording() is not None
    found = region_draws(ir)
    assert [d[1] for d in found] == [line_of(F, "region draw")]
    assert ir.recording() is not None   # no Node of a launch was made

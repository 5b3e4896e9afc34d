"""Arguments made anew at every call: a lambda or nested function handed to
``s.host`` (keyed by its code and what its cells hold, as a partial is by what
it holds), and what the retrace warning says of objects and functions made anew.

On the simulator, where results can be read back.
"""
import dataclasses
import types
import warnings

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt


@cuda.jit
def triple(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 3.0 * x[i]


@cuda.jit
def put(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v


LOG = []


def _step():
    @gt.graph(backend="sim")
    def step(s, x, out, h, cb):
        triple[1, 32, s](x, out)
        s.copy(h, out)
        s.host(cb, h)
    return step


def test_a_lambda_callback_made_anew_with_the_same_code_finds_its_graph():
    step = _step()
    x, out, h = cuda.to_device(np.ones(4)), cuda.device_array(4), gt.pinned_empty(4)
    LOG.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error", gt.RetraceWarning)
        for _ in range(12):
            step(x, out, h, lambda hh: LOG.append(float(hh[0])))
    assert step.cache_info().misses == 1 and step.cache_info().hits == 11
    assert LOG == [3.0] * 12


def test_a_nested_callback_is_another_function_each_time():
    """A function closing over variables is keyed by identity: what its cells hold
    may change after the call (module made_functions), so each made anew traces
    anew, and each callback sees its own tag."""
    step = _step()
    x, out, h = cuda.to_device(np.ones(4)), cuda.device_array(4), gt.pinned_empty(4)
    LOG.clear()

    def made(tag):
        def cb(hh):
            LOG.append((tag, float(hh[0])))
        return cb

    for i in range(6):
        step(x, out, h, made(i % 2))
    assert LOG == [(i % 2, 3.0) for i in range(6)]
    assert step.cache_info().misses == 6


def test_a_lambda_with_defaults_alone_is_keyed_by_them():
    """No cells: its code, globals and defaults make it; equal defaults are one
    function's behaviour, another default another graph whose callback sees it."""
    step = _step()
    x, out, h = cuda.to_device(np.ones(4)), cuda.device_array(4), gt.pinned_empty(4)
    LOG.clear()
    for i in range(4):
        step(x, out, h, lambda hh, tag=i % 2: LOG.append((tag, float(hh[0]))))
    assert LOG == [(i % 2, 3.0) for i in range(4)]


def test_a_lambda_made_anew_with_its_loop_variable_as_a_default_finds_its_graphs():
    """``lambda hh, i=i: ...`` builds a new tuple of defaults each time it is made:
    the key's entry of what the callback runs (``code_parts._Code``) compared it by
    identity, so each epoch traced both again; equal values find their graph (and
    keyword defaults, a new dict each time, too)."""
    step = _step()
    x, out, h = cuda.to_device(np.ones(4)), cuda.device_array(4), gt.pinned_empty(4)
    LOG.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error", gt.RetraceWarning)
        for _ in range(5):
            for i in range(2):
                step(x, out, h, lambda hh, i=i: LOG.append(i))
    assert LOG == [0, 1] * 5
    assert step.cache_info().misses == 2 and step.cache_info().hits == 8
    step = _step()
    for i in range(4):
        step(x, out, h, lambda hh, *, tag=i % 2: LOG.append(("kw", tag)))
    assert LOG[10:] == [("kw", i % 2) for i in range(4)]
    assert step.cache_info().misses == 2 and step.cache_info().hits == 2


def test_callbacks_a_generator_makes_read_their_own_loop_variable():
    """The generator's frame is suspended, off the stack, and rebinds i: the cached
    graph of a callback keyed by its cells ran the first one, which read the
    generator's last i."""
    step = _step()
    x, out, h = cuda.to_device(np.ones(4)), cuda.device_array(4), gt.pinned_empty(4)
    LOG.clear()

    def callbacks():
        for i in range(3):
            yield lambda hh: LOG.append(i)

    for _ in range(2):
        for cb in callbacks():
            step(x, out, h, cb)
    assert LOG == [0, 1, 2, 0, 1, 2]


def test_a_callback_sharing_a_cell_with_a_function_that_sets_it_reads_its_own():
    step = _step()
    x, out, h = cuda.to_device(np.ones(4)), cuda.device_array(4), gt.pinned_empty(4)
    LOG.clear()

    def make():
        n = 0

        def bump():
            nonlocal n
            n += 1

        def report(hh):
            LOG.append(n)
        return bump, report

    b1, r1 = make()
    step(x, out, h, r1)
    b1()
    _, r2 = make()
    step(x, out, h, r2)
    assert LOG == [0, 0]


def test_a_callback_closing_over_a_list_made_anew_is_keyed_by_that_list():
    """A list in a cell is keyed by identity: the callback of a cached graph would
    append to the first call's list, so each new list traces anew."""
    step = _step()
    x, out, h = cuda.to_device(np.ones(4)), cuda.device_array(4), gt.pinned_empty(4)
    for _ in range(3):
        got = []
        step(x, out, h, (lambda res: lambda hh: res.append(float(hh[0])))(got))
        assert got == [3.0]


def test_a_callback_handing_a_result_back_through_nonlocal_gives_each_call_its_own():
    """The callback's cell is the caller's (its frame still runs): the cached graph
    ran the first call's callback, so later calls' results stayed None."""
    step = _step()
    out, h = cuda.device_array(4), gt.pinned_empty(4)

    def first_value(x):
        result = None

        def grab(hh):
            nonlocal result
            result = float(hh[0])
        step(x, out, h, grab)
        return result

    assert [first_value(cuda.to_device(np.full(4, v))) for v in (1.0, 2.0, 3.0)] == \
        [3.0, 6.0, 9.0]


def test_a_callback_reading_a_loop_variable_reads_the_calls_value():
    """A loop still running rebinds the variable the callback reads: the first epoch's
    callback, replayed, read its own loop's last value."""
    step = _step()
    x, out, h = cuda.to_device(np.ones(4)), cuda.device_array(4), gt.pinned_empty(4)
    LOG.clear()

    def epoch(e):
        for i in range(3):
            step(x, out, h, lambda hh: LOG.append((e, i)))

    epoch(0)
    epoch(0)
    assert LOG == [(0, 0), (0, 1), (0, 2)] * 2


def test_a_callback_counting_in_its_own_cell_counts_from_its_start_at_each_call():
    step = _step()
    x, out, h = cuda.to_device(np.ones(4)), cuda.device_array(4), gt.pinned_empty(4)
    LOG.clear()

    def made():
        n = 0

        def cb(hh):
            nonlocal n
            n += 1
            LOG.append(n)
        return cb

    for _ in range(3):
        step(x, out, h, made())
    assert LOG == [1, 1, 1]


def test_the_retrace_warning_names_a_function_made_anew_at_each_call():
    step = _step()
    x, out, h = cuda.to_device(np.ones(4)), cuda.device_array(4), gt.pinned_empty(4)
    with pytest.warns(gt.RetraceWarning) as rec:
        for i in range(12):
            step(x, out, h, (lambda t: lambda hh: LOG.append((t, float(hh[0]))))(i))
    message = str(rec[0].message)
    assert "argument(s) cb are functions made anew at each call" in message
    assert "functools.partial" in message and "keep shapes" not in message


@dataclasses.dataclass
class _Gain:
    gain: float


def test_the_retrace_warning_names_a_dataclass_made_anew_whose_values_repeat():
    """Two values in turn, each in a new object: two graphs would do."""
    @gt.graph(backend="sim")
    def scaled(s, out, cfg):
        put[1, 32, s](out, cfg.gain)

    out = cuda.device_array(4)
    with pytest.warns(gt.RetraceWarning) as rec:
        for i in range(12):
            scaled(out, _Gain(2.0 + i % 2))
    message = str(rec[0].message)
    assert "argument(s) cfg are objects of the program's own" in message
    assert "frozen dataclass" in message and "keep shapes" not in message


def test_the_retrace_warning_of_a_simple_namespace_made_anew_does_not_say_make_its_class_frozen():
    @gt.graph(backend="sim")
    def plain(s, out, cfg):
        put[1, 32, s](out, 1.0)

    out = cuda.device_array(4)
    with pytest.warns(gt.RetraceWarning) as rec:
        for _ in range(12):
            plain(out, types.SimpleNamespace(gain=2.0))
    message = str(rec[0].message)
    assert "make its class a frozen dataclass" not in message
    assert "in place of SimpleNamespace" in message
    assert "reads nothing off cfg" in message


def _record(res, hh):
    res.append(float(hh[0]))


def test_a_partial_callback_holding_a_list_made_anew_appends_to_that_list():
    """s.host(cb) of partial(record, res) with a new list res at every call: the
    cached graph's callback appended to the first call's list, and the call's
    own list stayed empty. A list it holds is keyed by identity: each new one
    traces anew and is the one appended to."""
    import functools
    step = _step()
    x, out, h = cuda.to_device(np.ones(4)), cuda.device_array(4), gt.pinned_empty(4)
    for _ in range(3):
        got = []
        step(x, out, h, functools.partial(_record, got))
        assert got == [3.0]
    kept = []
    for _ in range(3):
        step(x, out, h, functools.partial(_record, kept))
    assert kept == [3.0] * 3

"""Settings and flags kept as attributes of a function (``helper.scale = 5.0``,
``step.done = True``) are read off it as off an object: a value the code reads
is watched (a new one traces anew), a flag the code sets is told by the trace,
and a count it bumps is state, named once (``gt.StateWarning``). The same on
a plain helper, on a ``@gt.graph`` function itself and on a
``functools.wraps`` wrapper; graphtrace's own attributes of a graph function
and Python's of every function (``f.__name__``) are no settings.
"""
import functools
import warnings

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import compiled_buffers

from watch_common import IDS, WALKS


@cuda.jit
def addc(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] += v


def helper(s, out):
    addc[1, 2, s](out, helper.scale)   # a setting on the helper itself


helper.scale = 1.0


@gt.graph(backend="sim")
def by_helper(s, out):
    helper(s, out)


def cfg():
    pass


cfg.c = 1.0


@gt.graph(backend="sim")
def by_global_function(s, out):
    addc[1, 2, s](out, cfg.c)   # a plain function used as a namespace


@gt.graph(backend="sim")
def by_itself(s, out):
    addc[1, 2, s](out, by_itself.scale)   # a setting on the graph function


by_itself.scale = 1.0


def scaled(fn):
    @functools.wraps(fn)
    def w(s, out):
        addc[1, 2, s](out, w.scale)   # the wrapper's own attribute
        return fn(s, out)
    w.scale = 1.0
    return w


@gt.graph(backend="sim")
@scaled
def by_wrapper(s, out):
    pass


def _inner_of(f):
    return f.__wrapped__


SETTINGS = {"helper": (by_helper, lambda: helper),
            "global function": (by_global_function, lambda: cfg),
            "graph function": (by_itself, lambda: by_itself),
            "wraps wrapper": (by_wrapper, lambda: _inner_of(by_wrapper))}
NAMES = {"helper": "scale", "global function": "c", "graph function": "scale",
         "wraps wrapper": "scale"}


@pytest.mark.parametrize("on", WALKS, ids=IDS.get)
@pytest.mark.parametrize("form", list(SETTINGS))
def test_a_setting_kept_on_a_function_is_watched_by_value(on, form):
    """``helper.scale = 5.0`` between calls: the next call uses 5.0, as eager code
    does (it replayed the 1.0 of the first trace), with no warning; setting it
    back finds the first graph."""
    f, holder = SETTINGS[form]
    obj, name = holder(), NAMES[form]
    setattr(obj, name, 1.0)
    f.clear_cache()
    out = cuda.to_device(np.zeros(2, np.float32))
    got = []
    with compiled_buffers(on), warnings.catch_warnings():
        warnings.simplefilter("error", gt.StateWarning)
        try:
            for v in (1.0, 1.0, 5.0, 1.0):
                setattr(obj, name, v)
                f(out)
                got.append(float(out.copy_to_host()[0]))
        finally:
            setattr(obj, name, 1.0)
    assert got == [1.0, 2.0, 7.0, 8.0]
    assert f.cache_info().misses == 2


def marker():
    pass


marker.done = False


@gt.graph(backend="sim")
def flag_on_a_function(s, out):
    if not marker.done:
        addc[1, 2, s](out, 1.0)
        marker.done = True


@gt.graph(backend="sim")
def flag_on_itself(s, out):
    if not getattr(flag_on_itself, "done", False):   # absent at first
        addc[1, 2, s](out, 1.0)
        flag_on_itself.done = True


def run_once(fn):
    @functools.wraps(fn)
    def w(*a):
        if w.done:
            return
        w.done = True
        return fn(*a)
    w.done = False
    return w


@gt.graph(backend="sim")
@run_once
def flag_on_a_wrapper(s, out):
    addc[1, 2, s](out, 1.0)


FLAGS = {"function": (flag_on_a_function, lambda: marker.__dict__.update(done=False)),
         "graph function": (flag_on_itself,
                            lambda: flag_on_itself.__dict__.pop("done", None)),
         "wraps wrapper": (flag_on_a_wrapper,
                           lambda: flag_on_a_wrapper.__wrapped__.__dict__.update(done=False))}


@pytest.mark.parametrize("on", WALKS, ids=IDS.get)
@pytest.mark.parametrize("form", list(FLAGS))
def test_a_flag_the_code_sets_on_a_function_runs_its_work_once(on, form):
    """``if not step.done: ...; step.done = True``: the first call does the work,
    later ones do not, as eager code (each call replayed it); clearing the flag
    runs it once more."""
    f, reset = FLAGS[form]
    reset()
    f.clear_cache()
    out = cuda.to_device(np.zeros(2, np.float32))
    got = []
    with compiled_buffers(on), warnings.catch_warnings():
        warnings.simplefilter("error", gt.StateWarning)
        try:
            for again in (False, False, False, True, False):
                if again:
                    reset()
                f(out)
                got.append(float(out.copy_to_host()[0]))
        finally:
            reset()
    assert got == [1.0, 1.0, 1.0, 2.0, 2.0]


def counted(s, out):
    counted.calls += 1   # runs when traced only
    addc[1, 2, s](out, counted.scale)


counted.calls, counted.scale = 0, 1.0


@gt.graph(backend="sim")
def counts_calls(s, out):
    counted(s, out)


def test_a_count_the_code_bumps_on_a_function_is_state_and_named():
    """``counted.calls += 1`` in the traced code: state, as ``STATS["calls"] += 1``
    is: not watched (no trace at every call), named once; the setting beside it
    still is watched."""
    counted.calls, counted.scale = 0, 1.0
    counts_calls.clear_cache()
    out = cuda.to_device(np.zeros(2, np.float32))
    with pytest.warns(gt.StateWarning, match=r"counted\.calls"):
        for _ in range(3):
            counts_calls(out)
    assert float(out.copy_to_host()[0]) == 3.0 and counts_calls.cache_info().misses == 1
    counted.scale = 2.0
    try:
        counts_calls(out)
    finally:
        counted.scale = 1.0
    assert float(out.copy_to_host()[0]) == 5.0 and counts_calls.cache_info().misses == 2


@gt.graph(backend="sim")
def child(s, out):
    addc[1, 2, s](out, 1.0)


def named(s, out):
    addc[1, 2, s](out, float(len(named.__name__)))


@gt.graph(backend="sim")
def reads_other_attributes(s, out):
    named(s, out)
    child(s, out)
    if child.maxsize and child.static is not None:
        addc[1, 2, s](out, 1.0)


def test_python_and_graphtrace_attributes_of_functions_key_nothing():
    """What Python keeps on every function (``f.__name__``) and graphtrace on a
    graph function (``child.maxsize``, the counts a call updates) are no settings
    of the program's: no value of theirs is in the key, so the call keeps its
    short path and a call of the child does not make the caller trace anew."""
    from graphtrace.reach import Reach
    reach = Reach(reads_other_attributes.fn)
    assert not [str(n) for _, n in reach.numbers if "." in str(n)], reach.numbers
    out = cuda.to_device(np.zeros(2, np.float32))
    reads_other_attributes.clear_cache()
    for _ in range(3):
        reads_other_attributes(out)
        child(out)
    assert reads_other_attributes.cache_info().misses == 1


@cuda.jit
def add(x, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] += x[i]


def _filled(v):
    return cuda.to_device(np.full(2, v, np.float32))


ONE, TWO = _filled(1.0), _filled(2.0)


def buffered(s, out):
    add[1, 2, s](buffered.bufs[0], out)   # arrays kept on the helper


buffered.bufs = [ONE, TWO]


@gt.graph(backend="sim")
def by_helper_arrays(s, out):
    buffered(s, out)


@gt.graph(backend="sim")
def by_own_array(s, out):
    add[1, 2, s](by_own_array.buf, out)   # an array kept on the graph function


by_own_array.buf = ONE


@pytest.mark.parametrize("on", WALKS, ids=IDS.get)
def test_arrays_kept_on_a_function_are_reached_as_an_objects_are(on):
    """``helper.bufs = [a, b]`` and ``step.buf = a`` read by the code: the graph
    uses the arrays they hold at each call (reversed, replaced), as eager code
    does and as for ``OBJ.bufs`` (they were refused as arrays reached no known
    way)."""
    buffered.bufs, by_own_array.buf = [ONE, TWO], ONE
    by_helper_arrays.clear_cache()
    by_own_array.clear_cache()
    changes = {by_helper_arrays: (lambda: None, lambda: buffered.bufs.reverse(),
                                  lambda: None),
               by_own_array: (lambda: None, lambda: setattr(by_own_array, "buf", TWO),
                              lambda: None)}
    with compiled_buffers(on):
        try:
            for f, steps in changes.items():
                out = cuda.to_device(np.zeros(2, np.float32))
                got = []
                for change in steps:
                    change()
                    f(out)
                    got.append(float(out.copy_to_host()[0]))
                assert got == [1.0, 3.0, 5.0], f.__name__
                assert f.cache_info().hits == 1, f.__name__
        finally:
            buffered.bufs, by_own_array.buf = [ONE, TWO], ONE

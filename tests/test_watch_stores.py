"""Settings the traced code may store in, off a global, closure or module name.

A store the code makes (``if CFG.scale is None: CFG.scale = 2.0``, one in a
branch not taken, ``CFG.setdefault("eps", 1e-8)``) does not make what it reads
there state: the trace tells. What it set from None (or put where nothing
was), or left as it was, is a setting and watched, as on ``self``; what it
changed is state, left out of the key and named once (``gt.StateWarning``).
"""
import types
import warnings

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import compiled_buffers, line_of

from watch_common import IDS, WALKS, put


def written(f, changes) -> list:
    """What ``f(out)`` writes after each change of ``changes`` (callables)."""
    out, got = cuda.to_device(np.zeros(2, np.float32)), []
    for change in changes:
        change()
        f(out)
        got.append(float(out.copy_to_host()[0]))
    return got


class Cfg:
    def __init__(self):
        self.scale = None


OBJ, NS, DICT = Cfg(), types.SimpleNamespace(scale=None), {"scale": None}
MODULE = types.ModuleType("graphtrace_test_stores")
MODULE.SCALE = None


@gt.graph(backend="sim")
def object_default(s, out):
    if OBJ.scale is None:
        OBJ.scale = 2.0
    put[1, 2, s](out, OBJ.scale)


@gt.graph(backend="sim")
def namespace_default(s, out):
    if NS.scale is None:
        NS.scale = 2.0
    put[1, 2, s](out, NS.scale)


@gt.graph(backend="sim")
def dict_default(s, out):
    if DICT["scale"] is None:
        DICT["scale"] = 2.0
    put[1, 2, s](out, DICT["scale"])


@gt.graph(backend="sim")
def module_default(s, out):
    if MODULE.SCALE is None:
        MODULE.SCALE = 2.0
    put[1, 2, s](out, MODULE.SCALE)


def closure_default():
    cfg = {"scale": None}

    @gt.graph(backend="sim")
    def f(s, out):
        if cfg["scale"] is None:
            cfg["scale"] = 2.0
        put[1, 2, s](out, cfg["scale"])
    return cfg, f


def _setter(obj, name):
    if isinstance(obj, dict):
        return lambda v: obj.__setitem__(name, v)
    return lambda v: setattr(obj, name, v)


@pytest.mark.parametrize("on", WALKS, ids=IDS.get)
@pytest.mark.parametrize("form", ["object", "namespace", "dict", "module", "closure"])
def test_a_default_a_global_is_set_to_from_none_is_a_setting(on, form):
    """``if CFG.scale is None: CFG.scale = 2.0``: the value set is watched, so
    ``CFG.scale = 5.0`` later traces anew (it replayed 2.0), with no warning."""
    cfg, by_closure = closure_default()
    f, obj, name = {"object": (object_default, OBJ, "scale"),
                    "namespace": (namespace_default, NS, "scale"),
                    "dict": (dict_default, DICT, "scale"),
                    "module": (module_default, MODULE, "SCALE"),
                    "closure": (by_closure, cfg, "scale")}[form]
    put_value = _setter(obj, name)
    put_value(None)
    f.clear_cache()
    with compiled_buffers(on), warnings.catch_warnings():
        warnings.simplefilter("error", gt.StateWarning)
        try:
            assert written(f, (lambda: None, lambda: None, lambda: put_value(5.0),
                               lambda: None)) == [2.0, 2.0, 5.0, 5.0]
        finally:
            put_value(None)


BRANCH = {"lr": 1.0, "reset": False}
DEFAULTS = {"lr": 1.0}


@gt.graph(backend="sim")
def resets_if_asked(s, out):
    if BRANCH["reset"]:
        BRANCH["lr"] = 0.0   # not run
    put[1, 2, s](out, BRANCH["lr"])


@gt.graph(backend="sim")
def sets_a_default(s, out):
    DEFAULTS.setdefault("eps", 1e-8)
    put[1, 2, s](out, DEFAULTS["lr"])


@pytest.mark.parametrize("on", WALKS, ids=IDS.get)
def test_a_store_the_trace_does_not_run_leaves_the_setting_watched(on):
    """A store in a branch not taken, and ``setdefault`` of another key, change
    nothing the code reads: ``CFG["lr"] = 3.0`` later traces anew."""
    with compiled_buffers(on), warnings.catch_warnings():
        warnings.simplefilter("error", gt.StateWarning)
        for f, d in ((resets_if_asked, BRANCH), (sets_a_default, DEFAULTS)):
            f.clear_cache()
            try:
                got = written(f, (lambda: None, lambda: d.__setitem__("lr", 3.0)))
            finally:
                d["lr"] = 1.0
                d.pop("eps", None)
            assert got == [1.0, 3.0], f.__name__


STATS = {"calls": 0, "lr": 1.0}


@gt.graph(backend="sim")
def counts_calls(s, out):
    STATS["calls"] += 1   # runs when traced only
    put[1, 2, s](out, STATS["lr"])


def test_state_the_trace_changes_in_a_global_is_named_and_not_watched():
    """``STATS["calls"] += 1`` in the traced code: state, which a trace changes once;
    it is not watched (no trace at every call) and the warning names it; the
    setting read beside it still is."""
    STATS["calls"], STATS["lr"] = 0, 1.0
    counts_calls.clear_cache()
    misses = counts_calls.cache_info().misses
    with pytest.warns(gt.StateWarning, match=r"tracing counts_calls changed STATS\['calls'\]"):
        got = written(counts_calls, (lambda: None, lambda: None, lambda: None))
    assert got == [1.0] * 3 and counts_calls.cache_info().misses - misses == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", gt.StateWarning)   # said once
        got = written(counts_calls, (lambda: STATS.__setitem__("lr", 3.0), lambda: None))
    assert got == [3.0, 3.0] and counts_calls.cache_info().misses - misses == 2


# --- what host callbacks change that the graph reads: watched, and named --------------

class Scaled:
    def __init__(self):
        self.scale = 1.0

    def bump(self):
        self.scale *= 0.5


SCALED = Scaled()


@gt.graph(backend="sim")
def object_bumped(s, out):
    put[1, 2, s](out, SCALED.scale)
    s.host(SCALED.bump)


class Warmup:
    def __init__(self):
        self.step_count, self.cfg, self.hp = 0, Scaled(), {"lr": 1.0, "other": 1.0}

    def tick(self):
        self.step_count += 1

    def halve(self):
        self.hp["lr"] *= 0.5

    def other(self):
        self.hp["other"] *= 0.5

    @gt.graph(backend="sim")
    def counted(self, s, out):
        put[1, 2, s](out, self.step_count + 1.0)
        s.host(self.tick)

    @gt.graph(backend="sim")
    def held(self, s, out):
        put[1, 2, s](out, self.cfg.scale)
        s.host(self.cfg.bump)

    @gt.graph(backend="sim")
    def item(self, s, out):
        put[1, 2, s](out, self.hp["lr"])
        s.host(self.halve)

    @gt.graph(backend="sim")
    def unread(self, s, out):   # its callback changes an item the graph does not read
        put[1, 2, s](out, self.hp["lr"])
        s.host(self.other)


@pytest.mark.parametrize("how, label, values", [
    ("global object", "SCALED.scale", [1.0, 0.5, 0.25, 0.125]),
    ("self", "self.step_count", [1.0, 2.0, 3.0, 4.0]),
    ("held by self", "self.cfg.scale", [1.0, 0.5, 0.25, 0.125]),
    ("item of self's", "self.hp['lr']", [1.0, 0.5, 0.25, 0.125])])
def test_an_attribute_the_graph_reads_and_a_callback_method_changes_is_named(how, label, values):
    """As CFG["scale"] changed by a callback function: each call uses the value the
    last call's callback left, as eager code would (it traces anew), and says so
    once, at the user's line (it said nothing where a bound method changed it)."""
    SCALED.scale = 1.0
    w = Warmup()
    f = {"global object": object_bumped, "self": w.counted, "held by self": w.held,
         "item of self's": w.item}[how]
    f.clear_cache()
    out = cuda.to_device(np.zeros(2, np.float32))
    got = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in values:
            f(out)                                      # the call
            got.append(float(out.copy_to_host()[0]))
    said = [x for x in caught if x.category is gt.StateWarning]
    assert got == values and f.cache_info().misses == len(values)
    assert len(said) == 1 and said[0].lineno == line_of(__file__, "the call"), said
    assert f"reads {label}, which a host callback of its graph changes" in str(said[0].message)


def test_an_item_a_callback_method_changes_that_the_graph_does_not_read_is_not_named():
    w = Warmup()
    out = cuda.to_device(np.zeros(2, np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error", gt.StateWarning)
        for _ in range(3):
            w.unread(out)
    assert w.hp["other"] == 0.125 and w.unread.cache_info().misses == 1

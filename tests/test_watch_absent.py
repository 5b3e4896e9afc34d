"""Settings not there yet when traced, read by a constant name: an attribute read
in ``try`` / ``except AttributeError`` (off a global object, a class, a module, a
function, a chain of them, a parameter's default, also by a helper), and a global
name looked up in ``globals()`` (``"GW" in globals()``, ``globals().get("GV", 1.0)``).
The graph bakes in the default each took; one set later (a later notebook cell)
traces anew, deleting it again finds the default's graph, and while it stays
absent repeated calls trace nothing.
"""
import sys
import types

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import compiled_buffers

from watch_common import IDS, WALKS, put


class Cfg:
    pass


class Sub:
    pass


CFG = Cfg()
CFG.sub = Sub()
SETTINGS = types.ModuleType("graphtrace_test_absent_settings")


def hook():
    pass


@gt.graph(backend="sim")
def object_attr(s, out):
    try:
        a = CFG.w
    except AttributeError:
        a = 1.0
    put[1, 2, s](out, a)


@gt.graph(backend="sim")
def class_attr(s, out):
    try:
        a = Cfg.w
    except AttributeError:
        a = 1.0
    put[1, 2, s](out, a)


@gt.graph(backend="sim")
def module_attr(s, out):
    try:
        a = SETTINGS.W
    except AttributeError:
        a = 1.0
    put[1, 2, s](out, a)


@gt.graph(backend="sim")
def function_attr(s, out):
    try:
        a = hook.w
    except AttributeError:
        a = 1.0
    put[1, 2, s](out, a)


@gt.graph(backend="sim")
def nested_attr(s, out):
    try:
        a = CFG.sub.v
    except AttributeError:
        a = 1.0
    put[1, 2, s](out, a)


@gt.graph(backend="sim")
def default_attr(s, out, cfg=CFG):
    try:
        a = cfg.d
    except AttributeError:
        a = 1.0
    put[1, 2, s](out, a)


def _helper(s, out):
    try:
        a = CFG.h
    except AttributeError:
        a = 1.0
    put[1, 2, s](out, a)


@gt.graph(backend="sim")
def helper_attr(s, out):
    _helper(s, out)


ATTRIBUTES = [(object_attr, CFG, "w"), (class_attr, Cfg, "w"), (module_attr, SETTINGS, "W"),
              (function_attr, hook, "w"), (nested_attr, CFG.sub, "v"), (default_attr, CFG, "d"),
              (helper_attr, CFG, "h")]


def dev():
    return cuda.to_device(np.zeros(2, np.float32))


def calls(f, out, changes) -> list:
    """What ``f(out)`` writes after each change (a callable), called twice each time:
    the second call, with the arguments of the first, takes the repeated-call path."""
    got = []
    for change in changes:
        change()
        f(out)
        first = out.copy_to_host()[0]
        f(out)
        got.append((first, out.copy_to_host()[0]))
    return got


@pytest.mark.parametrize("on", WALKS, ids=IDS.get)
@pytest.mark.parametrize("f, holder, attr", ATTRIBUTES, ids=[f.__name__ for f, _, _ in ATTRIBUTES])
def test_an_attribute_absent_when_traced_and_set_later_traces_anew(on, f, holder, attr):
    """``try: a = CFG.w`` / ``except AttributeError: a = 1.0`` traced without ``w``:
    the graph kept 1.0 after ``CFG.w = 7.0``, with no warning."""
    with compiled_buffers(on):
        f.clear_cache()
        misses = f.cache_info().misses
        try:
            got = calls(f, dev(), (lambda: None, lambda: setattr(holder, attr, 7.0),
                                   lambda: setattr(holder, attr, 8.0),
                                   lambda: delattr(holder, attr), lambda: None))
        finally:
            if attr in vars(holder):
                delattr(holder, attr)
        assert got == [(1.0, 1.0), (7.0, 7.0), (8.0, 8.0), (1.0, 1.0), (1.0, 1.0)]
        assert f.cache_info().misses - misses == 3   # the default's graph found again


@gt.graph(backend="sim")
def name_in_globals(s, out):
    put[1, 2, s](out, 7.0 if "GW_ABSENT" in globals() else 1.0)


@gt.graph(backend="sim")
def globals_get(s, out):
    put[1, 2, s](out, globals().get("GV_ABSENT", 1.0))


@pytest.mark.parametrize("on", WALKS, ids=IDS.get)
@pytest.mark.parametrize("f, name", [(name_in_globals, "GW_ABSENT"), (globals_get, "GV_ABSENT")],
                         ids=["in", "get"])
def test_a_name_absent_from_globals_when_traced_and_defined_later_traces_anew(on, f, name):
    """``"GW" in globals()``, ``globals().get("GV", 1.0)`` traced without the name:
    the graph kept 1.0 after it was defined, with no warning; ``del`` of it after
    traces anew too."""
    g = globals()
    with compiled_buffers(on):
        f.clear_cache()
        misses = f.cache_info().misses
        try:
            got = calls(f, dev(), (lambda: None, lambda: g.__setitem__(name, 7.0),
                                   lambda: g.__delitem__(name), lambda: None))
        finally:
            g.pop(name, None)
        assert got == [(1.0, 1.0), (7.0, 7.0), (1.0, 1.0), (1.0, 1.0)]
        assert f.cache_info().misses - misses <= 3   # (not one a call: 8)


@gt.graph(backend="sim")
def counts_on_cfg(s, out):
    try:
        n = CFG.count
    except AttributeError:
        n = 0
    CFG.count = n + 1
    put[1, 2, s](out, 1.0)


def test_an_absent_attribute_the_trace_sets_is_state_not_a_retrace_at_every_call():
    """``try: n = CFG.count`` / ``except AttributeError: n = 0``; ``CFG.count = n + 1``:
    keyed as absent when first traced, the store the trace makes is told as state
    (``gt.StateWarning``), and later calls trace nothing more."""
    counts_on_cfg.clear_cache()
    misses = counts_on_cfg.cache_info().misses
    try:
        with pytest.warns(gt.StateWarning):
            for _ in range(5):
                counts_on_cfg(dev())
    finally:
        vars(CFG).pop("count", None)
    assert counts_on_cfg.cache_info().misses - misses <= 2


@gt.graph(backend="sim")
def get_or_none(s, out):
    v = globals().get("GN_ABSENT", 1.0)
    put[1, 2, s](out, 5.0 if v is None else v)


@gt.graph(backend="sim")
def name_error_or_none(s, out):
    try:
        v = GN_ABSENT  # noqa: F821  (defined by the test)
    except NameError:
        v = 1.0
    put[1, 2, s](out, 5.0 if v is None else v)


NONE_CASES = [(name_in_globals, "GW_ABSENT", 7.0), (get_or_none, "GN_ABSENT", 5.0),
              (name_error_or_none, "GN_ABSENT", 5.0)]


@pytest.mark.parametrize("on", WALKS, ids=IDS.get)
@pytest.mark.parametrize("first", [False, True], ids=["absent first", "None first"])
@pytest.mark.parametrize("f, name, none", NONE_CASES, ids=["in", "get", "NameError"])
def test_a_global_absent_is_not_the_same_as_one_set_to_none(on, first, f, name, none):
    """``"GW" in globals()``, ``globals().get("GV", 1.0)``, ``try: GV`` / ``except
    NameError`` traced without the name, then the name set to None: the call
    replayed the graph made for "absent" (1.0, not the None branch's value), and
    the other way round; a number set in between (its place found anew) too."""
    g = globals()
    number = 7.0 if f is name_in_globals else 3.0
    with compiled_buffers(on):
        f.clear_cache()
        g.pop(name, None)
        changes = [lambda: g.__setitem__(name, None), lambda: g.pop(name),
                   lambda: g.__setitem__(name, 3.0), lambda: g.pop(name),
                   lambda: g.__setitem__(name, None), lambda: g.__setitem__(name, 3.0),
                   lambda: g.__setitem__(name, None)]
        want = [(none, none), (1.0, 1.0), (number, number), (1.0, 1.0), (none, none),
                (number, number), (none, none)]
        if not first:
            changes, want = [lambda: None] + changes, [(1.0, 1.0)] + want
        try:
            got = calls(f, dev(), changes)
        finally:
            g.pop(name, None)
        assert got == want


def _closure_reading_b():
    """A graph function reading closure variable B, unbound until ``set_b``, and
    the functions setting and deleting B."""
    @gt.graph(backend="sim")
    def f(s, out):
        try:
            b = B
        except NameError:
            b = 1.0
        put[1, 2, s](out, 5.0 if b is None else b)

    def set_b(v):
        nonlocal B
        B = v

    def del_b():
        nonlocal B
        del B
    return f, set_b, del_b
    B = None   # noqa: F841  (B is a closure variable: unbound until set_b)


@pytest.mark.parametrize("on", WALKS, ids=IDS.get)
def test_an_empty_closure_cell_is_not_the_same_as_one_holding_none(on):
    """``try: b = B`` / ``except NameError`` of a closure variable not set yet when
    traced, then set to None: the call replayed the graph made for "unbound" (1.0,
    not the None branch's 5.0), and the other way round."""
    with compiled_buffers(on):
        f, set_b, del_b = _closure_reading_b()
        got = calls(f, dev(), [lambda: None, lambda: set_b(None), del_b,
                               lambda: set_b(3.0), lambda: set_b(None), del_b])
        assert got == [(1.0, 1.0), (5.0, 5.0), (1.0, 1.0), (3.0, 3.0), (5.0, 5.0),
                       (1.0, 1.0)]


ME = sys.modules[__name__]


@gt.graph(backend="sim")
def module_getattr(s, out):
    put[1, 2, s](out, getattr(sys.modules[__name__], "GM_ABSENT", 1.0))


@gt.graph(backend="sim")
def module_vars_get(s, out):
    put[1, 2, s](out, vars(ME).get("GM_ABSENT", 1.0))


@gt.graph(backend="sim")
def module_attribute(s, out):
    try:
        v = sys.modules[__name__].GM_ABSENT
    except AttributeError:
        v = 1.0
    put[1, 2, s](out, v)


@gt.graph(backend="sim")
def module_vars_in(s, out):
    put[1, 2, s](out, 7.0 if "GM_ABSENT" in vars(sys.modules[__name__]) else 1.0)


MODULE_READS = [module_getattr, module_vars_get, module_attribute, module_vars_in]


@pytest.mark.parametrize("on", WALKS, ids=IDS.get)
@pytest.mark.parametrize("f", MODULE_READS, ids=[f.__name__ for f in MODULE_READS])
def test_a_global_read_through_its_module_is_watched(on, f):
    """``getattr(sys.modules[__name__], "G", 1.0)``, ``vars(ME).get("G", 1.0)``
    (``ME = sys.modules[__name__]``): traced without G, the graph kept 1.0 after G
    was defined, and kept the first value of G after it changed or was deleted."""
    g = globals()
    with compiled_buffers(on):
        f.clear_cache()
        g.pop("GM_ABSENT", None)
        try:
            got = calls(f, dev(), (lambda: None, lambda: g.__setitem__("GM_ABSENT", 7.0),
                                   lambda: g.__delitem__("GM_ABSENT"),
                                   lambda: g.__setitem__("GM_ABSENT", 7.0)))
            if f is not module_vars_in:
                got += calls(f, dev(), (lambda: g.__setitem__("GM_ABSENT", 8.0),))
        finally:
            g.pop("GM_ABSENT", None)
        want = [(1.0, 1.0), (7.0, 7.0), (1.0, 1.0), (7.0, 7.0)]
        assert got == want + ([(8.0, 8.0)] if f is not module_vars_in else [])

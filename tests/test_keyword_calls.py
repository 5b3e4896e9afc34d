"""Calls with keyword arguments read from bytecode as their positional spelling is.

On Python 3.11 and 3.12 a keyword call loads its arguments as a positional one
does, then names the keywords (``KW_NAMES``; 3.11's ``dis`` leaves the names
unknown) before the call; 3.13 loads the names as a constant and calls with
``CALL_KW``. Code reading what a call is handed must step over those names:
``show(x=self.box["a"])`` hands the item as ``show(self.box["a"])`` does.
"""
import types

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace.bytecode import instructions, keyword_names, past_keywords
from graphtrace.handed import _partial_parts
from graphtrace.ops._host_uses import _item_use, _use
from helpers import line_of

SEEN = []


def _show(x=None, y=None):
    SEEN.append(x)


class _Boxed:
    """Holds a device array under "a" and a host array under "b"."""

    def __init__(self, d):
        self.box = {"a": d, "b": np.ones(2)}

    def positional(self):
        _show(self.box["a"])

    def keyword(self):
        _show(x=self.box["a"])

    def keyword_after(self):
        _show(None, y=self.box["a"])

    def host_item_keyword(self):
        _show(x=self.box["b"])


@pytest.mark.parametrize("method", ["positional", "keyword", "keyword_after"])
def test_a_callback_handing_a_held_device_item_to_a_call_by_keyword_is_refused(method):
    """``_show(x=self.box["a"])`` hands the callback's device array on as
    ``_show(self.box["a"])`` does: refused alike (it ran, the keyword's names
    taken for the end of the item's use)."""
    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(getattr(_Boxed(d), method))                  # keyword-item
    with pytest.raises(gt.ArgumentError) as e:
        f(cuda.to_device(np.ones(8)))
    assert e.value.source[1] == line_of(__file__, "keyword-item"), str(e.value)
    assert "holds device memory (d) by attribute 'box'" in str(e.value), str(e.value)
    assert "cannot touch the GPU" in str(e.value), str(e.value)


def test_a_callback_handing_a_held_host_item_to_a_call_by_keyword_runs():
    """The item of a key holding no device array is the callback's to use."""
    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(_Boxed(d).host_item_keyword)
    SEEN.clear()
    f(cuda.to_device(np.ones(8)))
    assert len(SEEN) == 1 and SEEN[0].tolist() == [1.0, 1.0]


def test_keyword_names_are_read_off_the_call_on_every_version():
    """``keyword_names`` names the keywords of a call (3.11's ``KW_NAMES`` too,
    whose value ``dis`` leaves unknown there), none for a positional call."""
    def f(g, a, b):
        g(a, b)
        g(a, y=b)
        g(x=a, y=b)

    ins = list(instructions(f.__code__))
    calls = [i for i, c in enumerate(ins) if c.opname in ("CALL", "CALL_KW")]
    assert [keyword_names(ins, i) for i in calls] == [(), ("y",), ("x", "y")]


def _shaped(*ops):
    """Instructions of a version not running here, as records of what the readers
    read (``opname``, ``argval``, ``arg``)."""
    return [types.SimpleNamespace(opname=op, argval=v, arg=v if type(v) is int else None)
            for op, v in ops]


# show(x=held[0]) on 3.13: the keywords' names loaded as a constant, then CALL_KW
_SHOW_ITEM_313 = _shaped(("LOAD_GLOBAL", "show"), ("LOAD_DEREF", "held"), ("LOAD_CONST", 0),
                         ("BINARY_SUBSCR", None), ("LOAD_CONST", ("x",)), ("CALL_KW", 1),
                         ("POP_TOP", None))


def test_the_keywords_of_a_313_call_are_read_and_stepped_over():
    assert keyword_names(_SHOW_ITEM_313, 5) == ("x",)
    assert past_keywords(_SHOW_ITEM_313, 4) == 5 and past_keywords(_SHOW_ITEM_313, 2) == 2


def test_a_313_keyword_call_handed_a_callbacks_value_or_item_is_a_use():
    """3.13's ``show(x=self.d)`` and ``show(x=held[0])``: the value handed to a call,
    as 3.11's (``CALL_KW`` was no call there: the callback's device array ran)."""
    assert _use(_SHOW_ITEM_313[2:])
    assert _item_use(_SHOW_ITEM_313, 1)


def test_a_313_partial_with_keywords_ends_what_it_binds_for_host():
    """``s.host(partial(notify, sink=SINK), TABLE["x"])`` on 3.13: SINK is the
    callback's, TABLE["x"] (the callback's argument, read when traced) is not."""
    ins = _shaped(("LOAD_FAST", "s"), ("LOAD_ATTR", "host"), ("LOAD_GLOBAL", "partial"),
                  ("LOAD_GLOBAL", "notify"), ("LOAD_GLOBAL", "SINK"), ("LOAD_CONST", ("sink",)),
                  ("CALL_KW", 2), ("LOAD_GLOBAL", "TABLE"), ("LOAD_CONST", "x"),
                  ("BINARY_SUBSCR", None), ("CALL", 2))
    assert _partial_parts(ins) == {3, 4, 5}


class _Registry:
    """A lookup of the program's own, taking its default by keyword too."""

    def __init__(self):
        self.scales = {float: 2.0}

    def get(self, key, default=None):
        return self.scales.get(key, default)


_REGISTRY = _Registry()


@cuda.jit
def _scale(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= a


@gt.graph(backend="sim")
def _by_type_positional(s, x, a):
    _scale[1, 8, s](x, _REGISTRY.get(type(a), 1.0))                  # type-positional


@gt.graph(backend="sim")
def _by_type_keyword(s, x, a):
    _scale[1, 8, s](x, _REGISTRY.get(type(a), default=1.0))          # type-keyword


@pytest.mark.parametrize("f, marker", [(_by_type_positional, "type-positional"),
                                       (_by_type_keyword, "type-keyword")])
def test_a_lookup_by_the_type_of_a_dynamic_scalar_with_a_keyword_is_refused(f, marker):
    """``REG.get(type(a), default=1.0)`` decides by ``type(a)`` as ``REG.get(type(a),
    1.0)`` does, and is refused alike: it ran, with the stand-in's type found in no
    entry, scaling by the default (1.0) where eager code scales by 2.0."""
    with pytest.raises(gt.DynamicScalarError) as e:
        f(cuda.to_device(np.ones(4)), 3.0)
    assert "type(a) of dynamic scalar argument 'a'" in str(e.value), str(e.value)
    assert f"test_keyword_calls.py:{line_of(__file__, marker)}:" in str(e.value), str(e.value)

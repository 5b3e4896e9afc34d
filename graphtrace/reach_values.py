"""How ``Reach`` holds what names and chains give (``_settled``, ``_keyed``), which
objects it watches by a key of graphtrace's (``watch_by_value``: a device
condition), and which objects a function may read settings off
(``_holds_settings``).
"""
from __future__ import annotations

import types
import weakref
from functools import partial

import numpy as np

from .arrays import is_array
from .chains import MISSING, Chain, NoKey, _layered, chain as _chain, nested_codes
from .global_keys import by_globals
from .names import _filled, _getter, name_chains
from .owners import _followed, _library
from .probe import _attr, _has
from .scalar import value_key
from .values import _GROUPS, _WHOLES, _Held, _is_value, _record, pure_values
from .whole_reads import loads_to_hand

__all__ = ["watch_by_value"]

_IMMUTABLE = frozenset({int, float, bool, complex, str, bytes, type(None), NoKey})   # (NoKey:
# an attribute or key absent, getattr(CFG, "w", 1.0), CFG.get("k"): one of two members)
_NUMPY_NUMBERS = (np.number, np.bool_)


def _settled(v):
    """A value a name or chain holds, as the cache key holds it (``Reach.functions``):
    a number or other value by value and type, a container of values whole
    (``CFG.flags = {"x"}``), None as itself (``CFG["schedule"]`` before one is set);
    MISSING for anything else."""
    if v is None:
        return None
    if _is_value(v):   # a numpy number as Python's (its type is the entry's own):
        return _Held(v) if type(v) in _GROUPS else value_key(   # np.float64(0.1) ==
            v.item() if isinstance(v, _NUMPY_NUMBERS) else v)  # (zero, sign) is an array
    form = pure_values(v) if isinstance(v, _WHOLES) or _record(v) else None   # a namedtuple
    if form is None and type(v) in _KEYED:   # STOP = gt.cond(c) < lim: its comparison
        return _KEYED[type(v)](v)                # and bound
    return MISSING if form is None else _Held(form)


def _keyed(chain):
    """``chain`` read as the cache key holds it where its key or attribute may be
    absent (``STATE["init"]`` before it is set): as ``STATE.get("init")``."""
    if not chain.steps or chain.steps[-1][0] not in ("item", "attr"):
        return chain
    how, k = chain.steps[-1]
    return _chain(chain.head, chain.steps[:-1] + (("get" if how == "item" else "default", k),))


def _read_keyed(fn, chain) -> tuple:
    """``(chain, value)``: what ``chain`` reads off ``fn``'s names now; where its last
    attribute is not there (yet) off a holder that is (``try: w = CFG.w`` / ``except
    AttributeError``, off an object, a class, a module or a function), ``chain`` read
    as ``getattr(CFG, "w", ...)`` is (``_keyed``), by its own label: absent
    (``NoKey.ATTR``), a value, so that one set later (a later notebook cell) traces
    anew, as with ``getattr`` or ``hasattr``; the label is the one a store of
    ``CFG.w`` by the traced code has (``Reach.note_state``)."""
    value = chain.read(fn)
    if value is MISSING and chain.steps and chain.steps[-1][0] == "attr" and \
            _chain(chain.head, chain.steps[:-1]).read(fn) is not MISSING:
        keyed, chain = _keyed(chain), Chain(chain)
        chain.head, chain.steps = keyed.head, keyed.steps
        value = chain.read(fn)
    return chain, value


def _global_places(places) -> tuple:
    """``(holder, name)`` of the places of ``places`` that are a plain global or
    closure name where arrays may go (``BIAS = None``, or a name not defined yet:
    ``try: GT`` / ``except NameError``, ``globals().get("GV", 1.0)``, a closure
    variable its enclosing function has yet to set): whether each is defined is
    part of the key (``absent_names``), for absent is not None to the code. The
    holder is the function's globals, or the closure cell of a free name."""
    out = []
    for fn, name, _, array in places:
        if array and type(name) is str and name[:1] not in "=<" and "." not in name:
            out.append((_cell_of(fn, name) or fn.__globals__, name))
    return tuple(out)


def _cell_of(fn, name: str):
    """The closure cell of free name ``name`` of ``fn``; None for a global name."""
    free = fn.__code__.co_freevars
    return fn.__closure__[free.index(name)] if name in free else None


def absent_names(present) -> tuple:
    """The names of ``present`` (``_global_places``) not defined now: ``"GW" in
    globals()`` traced without GW is another graph than with ``GW = None``, and an
    empty closure cell another than one holding None."""
    return tuple(name for g, name in present
                 if (not _filled(g) if type(g) is types.CellType else name not in g))


def _cell_value(cell):
    """What closure cell ``cell`` holds; MISSING where it is empty."""
    try:
        return cell.cell_contents
    except ValueError:
        return MISSING


def present_getter(fn, name):
    """A call without arguments giving what ``name`` holds inside ``fn`` now
    (``_getter``), but MISSING for a plain global name not defined or an empty
    closure cell (the call path's shortcut compares by identity: a name set to
    None since is another call)."""
    if type(name) is str and name[:1] not in "=<" and "." not in name:
        cell = _cell_of(fn, name)
        return partial(_cell_value, cell) if cell is not None else \
            partial(fn.__globals__.get, name, MISSING)
    return _getter(fn, name)


def _loaded(code) -> set:
    """The global names ``code`` and the code nested in it load (``name_chains``), or
    look up in ``globals()`` by a constant key (``"GW" in globals()``,
    ``globals().get("GV", 1.0)``: ``by_globals``): one not defined yet is watched,
    so that one defined later traces anew."""
    return {n for n, _ in name_chains(code, {})}.union(
        *(by_globals(c)[0] for c in nested_codes(code)))


_KEYED: dict = {}   # a class of graphtrace's -> the key its objects are watched by
_KEYED_ARRAYS: dict = {}   # such a class -> the attributes its arrays may be held by


def watch_by_value(cls, key, arrays=()) -> None:
    """Watch an object of ``cls`` a name holds by ``key(obj)`` (hashable), as a
    number is: a device condition (``STOP = gt.cond(c) < lim``), whose arrays
    (held by the attributes ``arrays``) are arguments, bound as those (the key
    holds which arguments they are: ``Reach._keyed_arrays``), and whose
    comparison and bound are baked in."""
    _KEYED[cls] = key
    _KEYED_ARRAYS[cls] = tuple(arrays)


def _held_by_key(v) -> bool:
    """An object ``watch_by_value`` watches (a device condition)."""
    return type(v) in _KEYED


def handed_alone(name: str, chains, handed, code) -> bool:
    """Whether ``code``, whose dotted reads are ``chains`` and whose ``s.host`` hands
    are ``handed`` (``handed.hands``), reads ``name`` only to hand it or its methods
    to ``s.host`` (``s.host(HIST.record, h)`` of a list subclass, ``s.host(HC, h)``):
    a history the callback keeps there is read when it runs, not by the trace. Not
    where any load of it does more (``pick(M)``, ``"k" in M``: ``loads_to_hand``)."""
    found = [steps for head, steps in chains if head == name] or [()]   # (s.host(HC, h))
    whole = handed.get((name, ()))
    return all(_handed_step(name, steps, handed) for steps in found) and loads_to_hand(
        code, name, handed_methods(name, chains, handed),
        whole is not None and whole.whole_callback)


def handed_methods(name: str, chains, handed) -> frozenset:
    """The attributes code (as ``handed_alone``'s) reads off ``name`` only to hand
    them to ``s.host`` (``record`` of ``s.host(HIST.record, h)``): no read of what
    ``name`` holds by the trace."""
    return frozenset(steps[0][1] for head, steps in chains if head == name and
                     len(steps) == 1 and _handed_step(name, steps, handed))


def _handed_step(name: str, steps, handed) -> bool:
    hand = handed.get((name, tuple(s[1] for s in steps)))
    return all(s[0] == "attr" for s in steps) and hand is not None and hand.callbacks_alone


def _method_of(v, steps) -> bool:
    """Whether a chain read off ``v`` starts with a method of its type
    (``TABLE.values()``, ``COEFS.index(x)``): a read of the whole."""
    return steps[0][0] == "attr" and callable(_attr(type(v), steps[0][1]))


_PROXIES = frozenset({weakref.ProxyType, weakref.CallableProxyType})


def _dead(proxy) -> bool:
    try:
        proxy.__class__
    except ReferenceError:
        return True
    return False


def _host_written(v, name: str, changed) -> bool:
    """Whether ``v``, held by ``name``, is a host numpy array the code writes in
    (``HOST_FLAG[0] = True``): its items are not keyed (a flag there is said to be
    unkeyed, ``unkeyed.py``), as those of one it only reads are (``LR[0]``)."""
    return type(v) is np.ndarray and any(head == name for head, _ in changed)


def _holds_settings(v) -> bool:
    """An object a function may read settings off (``CFG["lr"]``, ``cfg.lr``,
    ``Config.lr``, ``settings.LR``, ``helper.scale``): a dict or list, a namespace, a
    plain object, a class or a module of the program's own (not a library's), or a
    function of the program's, by its own attributes (``_program_attribute``)."""
    if type(v) is np.ndarray:   # LR[0] of a host array: its items read by constant
        return True              # indices are keyed by value, as self.lr[0] is
    if v is None or is_array(v) or type(v) in _GROUPS:
        return False
    if isinstance(v, (dict, list)) or _layered(v):   # OrderedDict, defaultdict, a
        return True       # subclass too; ChainMap(OVERRIDES, DEFAULTS), a read-only view
    if isinstance(v, (types.ModuleType, type)):
        return not _library(v)
    if _own_function(v):   # helper.scale, step.done: a function's own attributes
        return True
    if callable(v) or _is_value(v):
        return False
    return (_has(v, "__dict__") or _has(type(v), "__slots__")) and not _library(type(v))


def _own_function(v) -> bool:
    """A Python function of the program's own (a ``functools.wraps`` wrapper too), or
    a ``@gt.graph`` function, whose attributes (``helper.scale``, ``step.done``) hold
    settings and flags as an object's do."""
    t = type(v)
    if t is types.FunctionType:
        return not _library(v)
    return _attr(t, "_graphtrace_graph", False) is True


def _program_attribute(v, step) -> bool:
    """Whether a chain's first ``step`` off ``v`` reads what the program keeps there:
    anything off an object; off a function (``_own_function``) an attribute of its
    own (``helper.scale``, ``getattr(step, "done", False)``), not what Python's
    functions have (``f.__name__``) nor graphtrace's of a graph function
    (``step.maxsize``, ``step.trace``): those are no settings of the program's."""
    if not _own_function(v):
        return True
    key = step[1]
    return type(key) is str and key[:2] != "__" and \
        key not in _attr(v, "_fields", frozenset()) and _attr(type(v), key, MISSING) is MISSING


def _kernel_like(v) -> bool:
    """A kernel or helper a module, class or namespace holds (``K.step``, which
    ``importlib.reload(K)`` replaces): watched by identity. A library's functions
    are left alone (each watched name costs every call a lookup)."""
    return _has(v, "py_func") or _has(v, "kernel") and _has(v, "intents") or \
        _followed(v) is not None

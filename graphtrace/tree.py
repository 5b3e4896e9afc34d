"""One walk over argument trees: lists, tuples (namedtuples too) and dicts, and
deques, UserDicts, UserLists and ChainMaps (``more_children``).

These are the containers a graph function's arguments may nest in (the cache
key walks them, ``function.walk``); everything else is a leaf. Recording,
binding, emission, simulation and printing walk recorded arguments with
these two functions, so a new kind of leaf is taught in one place.
"""
from __future__ import annotations

import copy
import copyreg
from collections import ChainMap, OrderedDict, UserDict, UserList, deque
from functools import partial

from .buffers import Buffer
from .errors import ArgumentError
from .probe import _attr, _has
from .scalar import Scalar
from .weak_types import store

__all__ = ["tree_map", "leaves", "children", "more_children", "rebuild", "materialize",
           "Uncopyable", "Attribute", "wrapped"]


def children(value) -> list | None:
    """``(key, child)`` pairs of a container (index or dict key); None for a leaf."""
    if isinstance(value, (list, tuple)):
        return list(enumerate(value))
    if isinstance(value, dict):
        return list(value.items())
    return None


class Attribute(str):
    """A path element naming an attribute, not an item (``more_children``:
    ``cm.maps[0]['lr']``, ``cfg.data['lr']``)."""


def wrapped(t: type):
    """The attribute holding the items of an object of class ``t`` (a UserDict's or
    UserList's ``data``, a ChainMap's ``maps``), ``"deque"`` for a deque; None for
    anything else (found once per class)."""
    hit = _WRAPPED.get(t, _UNKNOWN)
    if hit is _UNKNOWN:
        hit = store(_WRAPPED, t, "deque" if issubclass(t, deque) else
                    "data" if issubclass(t, (UserDict, UserList)) else
                    "maps" if issubclass(t, ChainMap) else None)
    return hit


_WRAPPED: dict = {}   # class -> wrapped(class) (weak_types.store)
_UNKNOWN = object()


def more_children(value) -> list | None:
    """``(key, child)`` pairs of a container of the standard library other than a
    list, tuple or dict (``wrapped``) that an argument may be (``arguments.walk``):
    a deque's items by index; the one attribute holding a UserDict's, a
    UserList's or a ChainMap's items (``Attribute``: its dict, list, list of
    maps); None for anything else, or one lacking that attribute."""
    kind = wrapped(type(value))
    if kind is None:
        return None
    if kind == "deque":
        return list(enumerate(deque.__iter__(value)))
    state = _attr(value, "__dict__")
    return [(Attribute(kind), state[kind])] if type(state) is dict and kind in state else None


def rebuild(value, items):
    """A container like ``value`` holding ``items`` (a dict gets ``value``'s keys):
    a subclass of dict, list or tuple (a config with defaults, an attribute dict,
    a defaultdict, a Counter, an OrderedDict) keeps its type, attributes and
    behaviour (``_refilled``)."""
    t = type(value)
    if t is dict:
        return dict(zip(value.keys(), items))
    if t is list:
        return list(items)
    if t is tuple:
        return tuple(items)
    if isinstance(value, tuple) and _has(value, "_fields"):   # a namedtuple
        return t(*items)
    if t is partial:   # (func, args, keywords): a partial holding arrays (arguments.walk)
        return partial(items[0], *items[1], **items[2])
    return _refilled(value, items)


class Uncopyable(ArgumentError):
    """A container subclass whose object cannot be copied (``rebuild``); the
    argument walk names where it is (``arguments.walk``)."""


def _refilled(value, items):
    """A copy of container subclass ``value`` (its type and attributes: a dict's
    and a list's by ``copy.copy``, which keeps a defaultdict's factory) holding
    ``items``, filled by the base type's own methods, never the subclass's."""
    t = type(value)
    try:
        if isinstance(value, tuple):   # made by tuple's __new__: the class's may take other
            new = tuple.__new__(t, items)   # parameters; then its attributes
            state = _attr(value, "__dict__")
            if state:
                new.__dict__.update(state)
            for name in copyreg._slotnames(t):
                if _has(value, name):
                    object.__setattr__(new, name, getattr(value, name))
            return new
        new = copy.copy(value)
        if type(new) is not t:
            raise TypeError(f"its copy is a {type(new).__name__}")
        kind = wrapped(t)
        if kind == "deque":   # (its maxlen kept)
            deque.clear(new)
            deque.extend(new, items)
        elif kind is not None:   # a UserDict, a UserList, a ChainMap: what holds its items
            new.__dict__[kind] = items[0]
        elif isinstance(value, OrderedDict):   # its order is its own, not dict's
            OrderedDict.clear(new)
            for k, v in zip(value.keys(), items):
                OrderedDict.__setitem__(new, k, v)
        elif isinstance(value, dict):
            dict.clear(new)
            dict.update(new, zip(value.keys(), items))
        else:
            list.__setitem__(new, slice(None), items)
        return new
    except Exception as e:  # noqa: BLE001  (whatever the class's own copying raises)
        base = next(b for b in (OrderedDict, dict, list, tuple, deque, UserDict, UserList,
                                ChainMap) if isinstance(value, b))
        raise Uncopyable(
            f"a {t.__name__} (a subclass of {base.__name__}), which cannot be copied "
            f"({type(e).__name__}: {e}), and graphtrace hands the function a copy holding "
            "the traced arrays and numbers; give the class a working __copy__ (or "
            f"__reduce__), or pass a plain {base.__name__}") from e


def tree_map(fn, value):
    """``value`` with ``fn`` applied to every leaf, containers rebuilt alike."""
    t = type(value)
    if t is list or t is tuple:
        return rebuild(value, [tree_map(fn, v) for v in value])
    if t is dict:
        return {k: tree_map(fn, v) for k, v in value.items()}
    if isinstance(value, (list, tuple, dict)):   # a subclass: kept (``rebuild``)
        return rebuild(value, [tree_map(fn, v) for v in value.values()]
                       if isinstance(value, dict) else [tree_map(fn, v) for v in value])
    items = None if _WRAPPED.get(t, _UNKNOWN) is None else more_children(value)
    if items is not None:   # a deque, a UserDict... (an argument's: ``more_children``),
        mapped = [tree_map(fn, v) for _, v in items]   # rebuilt only where it holds what
        return value if all(a is b for a, (_, b) in zip(mapped, items)) else \
            rebuild(value, mapped)   # fn replaces: a global deque handed to s.host is itself
    return fn(value)


def leaves(value, _within=None):
    """Every leaf of ``value``, depth first, in order; a container inside itself
    (a list appended to itself) is not walked again."""
    if isinstance(value, (list, tuple, dict)):
        items = value.values() if isinstance(value, dict) else value
    else:
        t = type(value)   # (a leaf's class is known at once)
        more = None if _WRAPPED.get(t, _UNKNOWN) is None else more_children(value)
        if more is None:   # a deque, a UserDict... (``more_children``)
            yield value
            return
        items = [v for _, v in more]
    within = set() if _within is None else _within
    if id(value) in within:
        return
    within.add(id(value))
    for v in items:
        yield from leaves(v, within)
    within.discard(id(value))


def _traced(v):
    if isinstance(v, Buffer):
        return v.obj
    return v._value if isinstance(v, Scalar) else v


def materialize(value):
    """The Python value a recorded argument stood for when it was traced."""
    return tree_map(_traced, value)

"""The slots a block's snapshots hold, for ``_loop_state.py``.

``_slots`` lists, nearest first, the slots under one name: numbers, arrays,
strings, slices, Enum members and None it reaches through the containers (a
numpy object array's items too), the objects and the classes and modules of the
program's own it holds, ``_DEPTH`` levels deep, with the lengths of those
containers, a dict's order and what an iterator has left (``_left``);
``_shadowed`` the attributes a body gave an object over its class's value.
``LoopState`` compares two such snapshots.
"""
from __future__ import annotations

import enum
import inspect
import operator
import types
import zlib
from collections import Counter, deque

import numpy as np

from ..arrays import is_array
from ..chains import MISSING
from ..owners import _attributes, held_attributes, own_holder, own_object
from ..scalar import Scalar
from ..values import _is_number
from ._loop_paths import _ITEMS, _LEN, _MAX_ITEMS, _NEXT, _ORDER, _resolve


_DEPTH = 4          # names, then three levels of containers and objects
_PER_ROOT = 1024    # nor more slots than this under one name
_BY_VALUE = 4096    # a host array of this many bytes at most: compared by its values,
_BY_DIGEST = 1 << 26   # one of this many by a digest of them


def _indices(v) -> bool:
    """A small host array of numbers (indices the body picks arrays by, a time
    ``t[0]`` or ``t[()]`` it hands a kernel, ``_BY_VALUE`` bytes at most):
    compared by its values."""
    return type(v) is np.ndarray and v.nbytes <= _BY_VALUE and v.dtype.kind in "iubfc"


def _contents(v):
    """What a host array of numbers holds: its bytes where it is small
    (``_indices``), a digest of them up to ``_BY_DIGEST`` bytes (told changed,
    not which values), else None (not watched)."""
    if _indices(v):
        return v.tobytes()
    if type(v) is np.ndarray and v.nbytes <= _BY_DIGEST and v.dtype.kind in "iubfc":
        return ("crc32", zlib.crc32(np.ascontiguousarray(v).view(np.uint8)))
    return None


def _slots(root, name: str) -> dict:
    """The slots under ``root`` (held by ``name``), nearest first, ``_PER_ROOT`` at
    most: ``path -> (value, its bytes (a slice's bounds) where compared by
    value, (id of the container, step) or None)``."""
    out: dict = {}
    holders: set = set()   # the classes and modules walked (one imports another)
    level = [(root, (name,), None)]
    while level and len(out) < _PER_ROOT:
        below = []
        for v, path, where in level:
            t = type(v)
            if t in (str, bytes):   # mode = "b": by its value; tag = tag + "x": its length
                out[path] = (v, None, where)
                out[path + (_LEN,)] = (len(v), None, None)
                continue
            if t is Scalar:   # a dynamic number of the call: told by its identity
                out[path] = (v, None, where)
                continue
            if t is slice:   # a[sl]: by its bounds
                if all(type(x) is int or x is None for x in (v.start, v.stop, v.step)):
                    out[path] = (v, (v.start, v.stop, v.step), where)
                continue
            if t is np.ndarray and v.dtype.kind == "O":   # arrays in a numpy object array:
                if len(path) < _DEPTH and v.size <= _MAX_ITEMS:   # its items, as a list's
                    keys = range(v.size) if v.ndim == 1 else np.ndindex(v.shape)
                    below += [(x, path + (("[]", k),), (id(v), ("[]", k)))
                              for k, x in zip(keys, v.flat)]
                continue
            try:
                kept = _is_number(v) or is_array(v)
            except Exception:  # noqa: BLE001  (an object's own interface raising: none)
                continue
            if kept:
                out[path] = (v, _contents(v), where)
                if len(out) >= _PER_ROOT:
                    break
                continue
            left = _left(v)
            if left is not None:   # next(it): by what it has left
                out[path + (_NEXT,)] = (left, None, (id(v), _NEXT))
                continue
            if v is None or isinstance(v, enum.Enum):   # prev = a, ph = Phase.RUN: by
                out[path] = (v, None, where)   # its identity
                continue
            if len(path) >= _DEPTH:
                continue
            kind = _container(v)
            if kind is not None:   # lst.append(0) with x[:len(lst)]
                out[path + (_LEN,)] = (len(v), None, (id(v), _LEN))
            if kind is dict and 1 < len(v) <= _MAX_ITEMS:   # d["a"] = d.pop("a") with
                out[path + (_ORDER,)] = (tuple(v), None, (id(v), _ORDER))   # d.values()
            if kind is list or kind is dict:
                items = (v.items() if kind is dict else enumerate(v)) \
                    if len(v) <= _MAX_ITEMS else ()
                below += [(x, path + (("[]", k),), (id(v), ("[]", k))) for k, x in items]
            elif kind is set:   # unordered: its items compared as a whole
                if len(v) <= _MAX_ITEMS and all(type(x) in (str, bytes) or _is_number(x)
                                                for x in v):
                    out[path + (_ITEMS,)] = (frozenset(v), None, (id(v), _ITEMS))
            elif isinstance(v, tuple) and isinstance(getattr(t, "_fields", None), tuple):
                below += [(x, path + ((".", k),), (id(v), (".", k)))   # a namedtuple's
                          for k, x in zip(t._fields, v)]                # items, by name
            elif own_object(v):
                mine = _attributes(v)
                below += [(x, path + ((".", k),), (id(v), (".", k))) for k, x in mine]
                cls, own = type(v), {k for k, _ in mine}
                if own_holder(cls):   # c.t read through it, held by its class: Ctr.t's slot
                    below += [(x, path + ((".", k),), (id(cls), (".", k)))
                              for k, x in held_attributes(cls) if k not in own]
            elif own_holder(v) and id(v) not in holders:   # Bufs.cur, bufstate.cur: a class's
                holders.add(id(v))                         # or a module's, once a name
                below += [(x, path + ((".", k),), (id(v), (".", k)))
                          for k, x in held_attributes(v)]
        level = below
    return out


def _shadowed(before: dict, after: dict, now: dict) -> dict:
    """The attributes the body gave an object of the program's own, through
    attributes from a name, that its class holds a value for (``st.k += 1`` with
    ``class State: k = 0``): path -> the class's value, as the slot held it before."""
    out, full = {}, Counter(p[0] for p in before)   # (a root cut at _PER_ROOT: not told)
    for p, (_, _, where) in after.items():
        if p in before or len(p) < 2 or any(k != "." for k, _ in p[1:]) or \
                full[p[0]] >= _PER_ROOT:
            continue
        holder = _resolve(now, p[:-1])
        old = MISSING if holder is MISSING else \
            inspect.getattr_static(type(holder), p[-1][1], MISSING)
        leaf = _slots(old, p[0]).get((p[0],)) if old is not MISSING else None
        if leaf is not None:
            out[p] = leaf[:2] + (where,)
    return out


_ITERATORS = frozenset({"builtins", "_collections"})


def _left(v):
    """How many items an iterator of Python's own over a container (a list's, a
    tuple's, a range's, a dict's, a deque's) has left, or where a generator
    stands (the instruction it waits at, and what its names hold: numbers by
    value, else by identity), else None: told without running code of the
    program's."""
    t = type(v)
    if t is types.GeneratorType:
        f = v.gi_frame
        return None if f is None else (f.f_lasti, tuple(
            (k, x if _is_number(x) else id(x)) for k, x in f.f_locals.items()))
    if t.__module__ not in _ITERATORS or not hasattr(t, "__next__") or \
            not hasattr(t, "__length_hint__"):
        return None
    try:
        return operator.length_hint(v, -1)
    except Exception:  # noqa: BLE001  (one that cannot tell: not watched)
        return None


_PLAIN_METHODS = ("__iter__", "__len__", "__getitem__", "items", "keys", "values")


def _container(v):
    """``list`` (also a tuple, a deque, a bytearray), ``dict`` or ``set`` (also a
    frozenset) where ``v`` is one whose length and items are watched: of the
    type itself, or of a subclass whose reading runs no Python code of its own
    (``Counter``, ``defaultdict``, ``OrderedDict``; not a class defining
    ``__iter__`` or ``__getitem__``), else None."""
    t = type(v)
    if t is tuple:   # (a namedtuple's items are its attributes: not looked into)
        return list
    for base, kind in _KINDS:
        if isinstance(v, base):
            return kind if t is base or not any(
                isinstance(inspect.getattr_static(t, m, None), types.FunctionType)
                for m in _PLAIN_METHODS) else None
    return None


_KINDS = ((list, list), (deque, list), (bytearray, list), (dict, dict), (set, set),
          (frozenset, set))

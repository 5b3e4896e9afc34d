"""Plain values a trace changed where the cache key does not look.

The key holds what the traced code reads by constant names, attributes and
keys (``first_reads``, ``reach``): a flag it reads, then sets, keys its graph
by the value read. A trace that sets one where the code's reads cannot be
told (``setattr(OB, NAME, True)``, its name in a variable; ``ST[k + "0"] =
True``, a key computed; ``FL[0] = 1`` in a host numpy array a global name holds) ran
its Python once: each later call replays what that value decided then, where
eager code would find it changed. ``plain_snapshot`` takes, before and after a
trace, the plain values (numbers, strings, None, enum members) that the
objects of the program's own and the dicts and lists the function's names
hold, and the bytes of the small host arrays they hold; ``unkeyed`` tells the
labels of those the trace changed that the key does not hold, which the call
says (``StateWarning``).
"""
from __future__ import annotations

import enum

import numpy as np

from .chains import chain, lookup
from .named_keys import by_name, resolved
from .owners import own_object

__all__ = ["plain_snapshot", "unkeyed"]

_PLAIN = (bool, int, float, complex, str, bytes, type(None))
_SMALL = 1 << 16   # host arrays up to this many bytes are compared by their bytes


def plain_snapshot(reach) -> dict:
    """label -> ``(how, type, value)`` of each plain value the objects, dicts and lists
    held by the names of ``reach`` (a ``Reach``) hold, one level deep, and of the
    bytes of a small host array held there. Each once, under the first label
    found, as the key holds an object (``held.held_objects``): a global that the
    function and a helper both name (``FO``, ``helper.FO``) is one object."""
    out: dict = {}
    seen: set = set()
    for fn, name, label, kind in reach.places:
        if kind is True and isinstance(label, str):
            _take_once(_read(fn, name), label, out, seen)
    for fn, name, label in reach.objects:
        _take_once(_read(fn, name), label, out, seen)
    return out


def _take_once(v, label: str, out: dict, seen: set) -> None:
    if v is None or id(v) not in seen:
        seen.add(id(v))
        _take(v, label, out)


def unkeyed(before: dict, after: dict, known, reach=None) -> set:
    """The labels of ``before`` the trace changed or removed, and the keys it added
    to a dict, but those ``known`` (the key's entries, told by ``first_reads``; and
    those of the chains ``reach`` stores by a key read by a name, ``ST[Phase.A]``,
    as the key they read now: ``ST[<Phase.A: 1>]``)."""
    known = set(known) | (_by_keys_now(reach) if reach is not None else set())
    return {label for label in (before.keys() | after.keys()) - known
            if before.get(label) != after.get(label) and
            (label in before or after[label][0] == "key")}   # (not a list's item appended)


def _by_keys_now(reach) -> set:
    """The labels of the chains ``reach`` stores by a key read by a name, written with
    the key it gives now (as ``_take`` writes a dict's keys)."""
    out = set()
    for fn, c in reach.stored:
        if by_name(c.steps):
            steps = resolved(c.steps, fn)
            if steps is not None:
                out.add(str(chain(c.head, steps)))
    return out


def _read(fn, name):
    try:
        return lookup(fn, name)
    except Exception:  # noqa: BLE001  (whatever an object's lookup raises: not taken)
        return None


def _take(v, label: str, out: dict) -> None:
    if type(v) is np.ndarray and v.nbytes <= _SMALL:   # FL = np.array([False])
        out[label] = ("bytes", v.dtype.str, v.shape, v.tobytes())
    elif type(v) is dict:
        for k, x in list(v.items()):
            if _plain(x):
                out[f"{label}[{k!r}]"] = ("key", type(x), x)
    elif type(v) is list:
        for i, x in enumerate(v):
            if _plain(x):
                out[f"{label}[{i}]"] = ("item", type(x), x)
    elif own_object(v):
        try:
            held = object.__getattribute__(v, "__dict__")
        except Exception:  # noqa: BLE001  (slots, or a lookup of its own raising)
            return
        for k, x in list(held.items()) if type(held) is dict else ():
            if _plain(x):
                out[f"{label}.{k}"] = ("attr", type(x), x)


def _plain(x) -> bool:
    return type(x) in _PLAIN or isinstance(x, enum.Enum)

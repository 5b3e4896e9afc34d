"""Caches keyed by class that let a class made at run time die.

A dictionary keyed by a class holds the class: a ``namedtuple`` or a class made
per call (with its graph methods' caches, their instances and arrays) would be
kept for good by ``arrays._kinds`` and the like. ``store`` puts such a class's
entry under a ``_TypeKey`` in its place: equal to the class and hashing as it
does, so that ``table.get(cls)`` (in C too) finds it, but holding it weakly; the
entry is taken out once the class dies. A class its module holds by its name
(defined at the top of a module), or one of C, is keyed by itself: lookups of
those stay a dictionary's (a ``_TypeKey`` costs a lookup a call of its ``__eq__``).
"""
from __future__ import annotations

import sys
import weakref

__all__ = ["store"]

_HEAP = 1 << 9   # Py_TPFLAGS_HEAPTYPE: a class made by a class statement or type()


class _TypeKey:
    """Stands for class ``t`` in a dictionary's keys without holding it: equal to
    ``t`` alone, hashing as ``t``. ``entries``: the (table, key) to take out when
    ``t`` dies."""

    __slots__ = ("ref", "hash", "entries", "__weakref__")

    def __init__(self, t: type):
        self.ref, self.hash, self.entries = weakref.ref(t, self._gone), hash(t), []

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other) -> bool:
        return other is self or self.ref() is other

    def _gone(self, _ref) -> None:
        for table, key in self.entries:
            table.pop(key, None)
        self.entries.clear()


_KEYS: dict = {}   # id(class) -> its _TypeKey (taken out with its class)


def _lasting(t: type) -> bool:
    """Whether class ``t`` lives as long as the program: one of C, or one its module
    holds by its name (a class statement at the top of a module)."""
    if not t.__flags__ & _HEAP:
        return True
    module = sys.modules.get(t.__module__)
    return module is not None and getattr(module, "__dict__", {}).get(t.__qualname__) is t


def store(table: dict, key, value, t: type | None = None):
    """``table[key] = value``, where ``key`` is class ``t`` (``key`` itself by
    default) or a tuple holding it; for a class made at run time under its
    ``_TypeKey``, taken out when the class dies. Returns ``value``."""
    t = key if t is None else t
    if _lasting(t):
        table[key] = value
        return value
    weak = _KEYS.get(id(t))
    if weak is None or weak.ref() is not t:
        weak = _KEYS[id(t)] = _TypeKey(t)
        weak.entries.append((_KEYS, id(t)))
    key = weak if key is t else tuple(weak if x is t else x for x in key)
    table[key] = value
    weak.entries.append((table, key))
    return value

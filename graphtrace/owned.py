"""Entries of a module's cache that live as long as the object they are about.

A kernel's adapter, and what its launches share, hold the kernel: a module's
dictionary holding them (alive for good) would keep every kernel ever launched,
with its module, alive (a kernel made per call, ``importlib.reload``). Where the
object takes attributes, ``keep`` hands the value to the object itself (in
``_OWNED``, a dict in its ``__dict__``) and puts in the table a weak reference to
the ``_Box`` holding it, whose callback takes the entry out once the object dies;
``kept`` reads an entry either way. An object without a ``__dict__`` (a cupy
``RawKernel``) is kept as it was: the value itself in the table.
"""
from __future__ import annotations

import weakref
from functools import partial

__all__ = ["keep", "kept"]

_OWNED = "_graphtrace_owned"   # the attribute holding what an object owns of the caches


class _Box(list):
    """The one value an object owns of a table: weakly referenced (a tuple is not)."""

    __slots__ = ("__weakref__",)


def keep(table: dict, key, obj, value) -> None:
    """``table[key] = value`` for as long as ``obj`` lives, where ``obj`` can hold it;
    else ``value`` itself, as before."""
    try:
        owned = obj.__dict__.setdefault(_OWNED, {})
    except (AttributeError, TypeError):   # no __dict__ (or a read-only mapping)
        table[key] = value
        return
    box = _Box((value,))
    ref = table[key] = weakref.ref(box, partial(_drop, table, key))
    owned[id(table), key] = table, ref, box
    n = len(owned)
    if n >= 256 and n & (n - 1) == 0:   # now and then (a table cleared since: launch
        for at, (t, r, _) in list(owned.items()):   # configurations computed from data)
            if t.get(at[1]) is not r:   # what its table no longer holds
                del owned[at]


def _drop(table: dict, key, ref) -> None:
    """The callback of an entry's weak reference: its object is gone."""
    if table.get(key) is ref:
        del table[key]


def kept(hit):
    """The value ``keep`` put in a table, given what the table holds (None where
    its object is gone)."""
    if type(hit) is weakref.ReferenceType:
        box = hit()
        return box[0] if box is not None else None
    return hit

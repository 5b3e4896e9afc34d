"""The places captured regions reached device arrays through, keyed as names are.

A captured region may reach an array through a module or class it is handed
(``m.W``), ``globals()["W"]``, ``sys.modules[__name__].W``, an item of a numpy
object array (``OBJ[0]``): places that no global or closure name of the graph
function shows, so ``reach.py`` cannot watch them. The trace finds them
(``ops/_region_reach.py``) and notes them here (``RegionPlaces.note``); from
then on every call of the graph function keys what they hold as it keys the
arrays it reaches by name: each array's address and geometry, and how it shares
memory with the call's arrays (``key``). So a call passing the very array a
place holds, where the trace saw another, or a call after a new array was put
there (``rmod.W = new``, ``rmod.Ws[0] = new``) traces anew, and the region is
ordered with the nodes using it. The call path's shortcuts compare what the
places hold by identity, item by item for a list or dict (``watch``,
``values``).

The places are the function's, found by any of its traces, and kept until
``clear_cache``.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from .arrays import as_buffer, is_array
from .tree import leaves
from .values import Identity, identities

__all__ = ["RegionPlaces", "place_label", "read_place"]


def read_place(holder, how: str, key):
    """What ``holder`` holds at the place now (None where nothing is there):
    ``how`` ``"global"``: a namespace dict's key; ``"attr"``: an attribute;
    ``"item"``: a numpy object array's item."""
    try:
        if how == "global":
            return holder.get(key)
        if how == "attr":
            return getattr(holder, key, None)
        return holder[key]
    except Exception:  # noqa: BLE001  (an item gone, an object's own lookup raising)
        return None


def _getter(holder, how: str, key):
    """``read_place`` as a call without arguments, in C where it can be."""
    if how == "global" and type(holder) is dict:
        return partial(holder.get, key)
    return partial(read_place, holder, how, key)


def place_label(holder, how: str, key) -> str:
    """How the user names the place (``rmod.W``, ``Params.w``, ``OBJ item (0,)``)."""
    if how == "global":
        return f"{holder.get('__name__', '?')}.{key}" if isinstance(holder, dict) else \
            f"?.{key}"
    if how == "attr":
        name = getattr(holder, "__name__", None)
        return f"{name if isinstance(name, str) else type(holder).__name__}.{key}"
    if isinstance(key, tuple):   # (np.unravel_index's numpy integers, as ints)
        key = tuple(int(i) if isinstance(i, np.integer) else i for i in key)
    return f"object array item {key!r}"


class _Place:
    __slots__ = ("label", "holder", "how", "key", "get")

    def __init__(self, holder, how: str, key):
        self.holder, self.how, self.key = holder, how, key
        self.label = place_label(holder, how, key)
        self.get = _getter(holder, how, key)


def _is_leaf_array(x) -> bool:
    try:
        return is_array(x)
    except Exception:  # noqa: BLE001  (an object's own lookup, whatever it raises)
        return False


class RegionPlaces:
    """The places a graph function's regions reached arrays through (module doc)."""

    __slots__ = ("places",)

    def __init__(self):
        self.places: dict = {}   # (id of the holder, how, repr(key)) -> _Place

    def __bool__(self) -> bool:
        return bool(self.places)

    def __len__(self) -> int:
        return len(self.places)

    def note(self, entries) -> None:
        """Keep the places of ``entries`` (``(holder, how, key, ...)``), each once."""
        for holder, how, key, *_ in entries:
            k = (id(holder), how, repr(key))
            if k not in self.places:
                self.places[k] = _Place(holder, how, key)

    def clear(self) -> None:
        self.places.clear()

    def key(self) -> tuple:
        """``(entries, objects, buffers)``: what the cache key holds of each place now
        (an array's type, geometry and address; a list's or dict's arrays so, item by
        item; another object by identity), and the arrays with their Buffers, whose
        sharing of memory with the call's arrays the key holds too."""
        entries, objs, bufs = [], [], []
        for p in self.places.values():
            v = p.get()
            if v is None:
                entries.append((p.label, None))
                continue
            items = list(leaves(v))
            held = []
            for x in items:
                b = None
                if _is_leaf_array(x):
                    try:
                        b = as_buffer(x)
                    except Exception:  # noqa: BLE001  (a numpy object array, an odd one)
                        b = None
                if b is None:
                    held.append(Identity(x))
                    continue
                held.append((type(x), b.signature(), b.ptr))
                objs.append(x)
                bufs.append(b)
            entries.append((p.label, type(v), tuple(held)))
        return tuple(entries), objs, bufs

    def values(self) -> list:
        """``(label, object)`` of what each place holds now and of its leaves: the
        very objects, compared by identity by the call path's shortcut."""
        out = []
        for p in self.places.values():
            v = p.get()
            out.append((p.label, v))
            if isinstance(v, (list, tuple, dict)):
                out += [(p.label + "[]", x) for x in leaves(v)]
        return out

    def watch(self) -> tuple | None:
        """``(getters, deep)`` for ``Shortcuts._fast_check``, as ``Reach.watch``
        gives them: a getter per place holding an array, None or another object
        (compared by identity), and ``(getter, identities)`` per place holding a
        list, tuple or dict; None where ``identities`` cannot vouch for one."""
        getters, deep = [], []
        for p in self.places.values():
            v = p.get()
            if isinstance(v, (list, tuple, dict)):
                held: list = []
                if not identities(v, held):
                    return None
                deep.append((p.get, held))
            else:
                getters.append(p.get)
        return tuple(getters), tuple(deep)

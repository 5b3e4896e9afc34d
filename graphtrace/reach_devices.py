"""The device functions a numba kernel a graph function reaches calls (``reach.py``).

numba freezes what a kernel reaches when it compiles it, so of a kernel's code
only the device functions it calls by a global or closure name (and by a module
attribute, ``devops.op``) are watched, by identity: a kernel compiled anew after
one is defined again runs the new one, whose intents may differ.
"""
from __future__ import annotations

import types

from .chains import lookup as _lookup
from .names import _held_dotted, _names
from .owners import _followed, _library
from .probe import _attr, _has
from .values import _MAX_DEPTH

__all__ = ["device_places"]

_HOLDERS = (types.ModuleType, type, types.SimpleNamespace)


def device_places(places: list, fn, seen: set, depth: int) -> None:
    """Append to ``places`` a helper place ``(function, name, None, False)`` for each
    device function the kernel code ``fn`` calls by a global or closure name, and for
    theirs (``seen``: the ids of the functions walked)."""
    if id(fn) in seen or depth > _MAX_DEPTH or _attr(fn, "__code__") is None:
        return
    seen.add(id(fn))
    chains: list = []
    for name in _names(fn.__code__):
        v = _lookup(fn, name)
        if _has(v, "py_func") and _followed(v.py_func) is not None:
            places.append((fn, name, None, False))
            device_places(places, v.py_func, seen, depth + 1)
        elif isinstance(v, _HOLDERS) and not _library(v):   # devops.op of a module
            for dotted, held in _held_dotted(fn, fn.__code__, name, chains):
                if _has(held, "py_func") and _followed(held.py_func) is not None:
                    places.append((fn, dotted, None, False))
                    device_places(places, held.py_func, seen, depth + 1)

"""A stand-in for a function of the program's own in a cache keyed weakly by it.

A cache held by a ``weakref.WeakKeyDictionary`` keeps its key alive where its
value holds the key (the dictionary is a module's, alive for good): a
``Holdings`` or ``Reach`` of a lambda or closure passed as an argument at every
call holds the function, and the function (with what its closure holds) would
never be freed. ``stand_in`` is a function running the very code with the very
globals, closure cells, defaults and attributes, which holds none of the
function itself: walked in its place, it reads what the function reads, and the
entry dies with the function.
"""
from __future__ import annotations

import types

__all__ = ["stand_in", "stands_for"]


def stand_in(fn):
    """A function sharing ``fn``'s code, globals, closure cells, defaults, keyword
    defaults (the same dict: one changed in place is seen) and attributes, but not
    ``fn``; anything but a plain Python function is returned as it is."""
    if type(fn) is not types.FunctionType:
        return fn
    g = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                           fn.__closure__)
    g.__kwdefaults__, g.__dict__ = fn.__kwdefaults__, fn.__dict__
    g.__qualname__, g.__module__ = fn.__qualname__, fn.__module__
    return g


def stands_for(g, fn) -> bool:
    """Whether ``g`` (``stand_in(fn)`` once) still runs what ``fn`` runs: ``fn`` given
    other code or defaults since (``%autoreload``, ``f.__defaults__ = (2,)``) needs
    another."""
    return g is fn or (g.__code__ is fn.__code__ and g.__defaults__ is fn.__defaults__ and
                       g.__kwdefaults__ is fn.__kwdefaults__)

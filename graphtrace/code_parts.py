"""What a function the reach walked runs: its code and defaults
(``code_parts``). Replaced in place (``%autoreload 2`` sets them on the
function), it runs other code, and a trace bakes in what the old ran (its
launches, its default values): ``Reach`` checks them at every call
(``_code_check``, in C where tracing is compiled) and keys them (``_Code``).
"""
from __future__ import annotations

import operator
import types
from functools import partial

from ._compiled import buffers as _compiled_buffers
from .made_functions import held_value

__all__ = ["code_parts", "same_signed", "signed"]


# a function's code and defaults: replaced in place, it runs other code (a trace
# bakes in what the old ran: its launches, its default values)
_CODE_PARTS = ("__code__", "__defaults__", "__kwdefaults__")


def code_parts(fn) -> tuple:
    return tuple(getattr(fn, at) for at in _CODE_PARTS)


def signed(fn) -> tuple:
    """``code_parts`` and the items its keyword defaults hold: what a signature
    read off ``fn`` depends on (``same_signed``)."""
    parts = code_parts(fn)
    return parts + (tuple(parts[2].items()) if parts[2] else (),)


def same_signed(fn, was: tuple) -> bool:
    """Whether ``fn`` holds what ``signed`` found (its keyword defaults' dict changed in
    place too: ``f.__kwdefaults__["a"] = 8.0``)."""
    if not all(map(operator.is_, code_parts(fn), was)):
        return False
    kw = was[2]
    return not kw or len(kw) == len(was[3]) and \
        all(a == c and b is d for (a, b), (c, d) in zip(kw.items(), was[3]))


def _runs_as_walked(entries: list, mappings: list) -> bool:
    """Whether each ``(function, defaults, keyword defaults, code)`` still holds them,
    and each keyword defaults' dict (``mappings``: ``(dict, keys, values)``) what it
    held."""
    return all(f.__defaults__ is d and f.__kwdefaults__ is kw and f.__code__ is c
               for f, d, kw, c in entries) and \
        all(len(m) == len(keys) and all(map(operator.is_, m, keys)) and
            all(map(operator.is_, m.values(), values)) for m, keys, values in mappings)


def _code_check(walked: list):
    """A getter saying ``True`` (that very object) while every walked function runs the
    code and defaults it ran when walked (its keyword defaults changed in place too,
    ``helper.__kwdefaults__["a"] = 8.0``): one call, in C where tracing is compiled
    (_buffers.c's guard_unchanged, given only functions), however many were walked."""
    entries = [(f, f.__defaults__, f.__kwdefaults__, f.__code__) for f in walked]
    mappings = [(kw, tuple(kw), tuple(kw.values())) for _, _, kw, _ in entries if kw]
    if _COMPILED_CHECK is None or not all(type(f) is types.FunctionType for f in walked):
        return partial(_runs_as_walked, entries, mappings)
    return partial(_COMPILED_CHECK, mappings, [], [], [], entries, [], [], None)


_COMPILED_CHECK = getattr(_compiled_buffers(), "guard_unchanged", None)


class _Code:
    """A walked function's ``code_parts`` in a cache key: equal where the code is the
    same object and its defaults and keyword defaults hold the same, as a function
    made anew is keyed (``made_functions.held_value``: numbers, strings, None and
    tuples of them by value, anything else by identity): ``lambda h, i=i: ...``
    made again at each call builds a new tuple of equal defaults, and finds its
    graph; a default replaced by another value (``f.__defaults__ = (2,)``,
    ``f.__kwdefaults__["a"] = 8.0``) is another key (a name-by-name log says the
    function changed). Its hash is found once: a key is hashed at every call that
    takes the full check."""

    __slots__ = ("name", "parts", "kw", "held", "_hash")

    def __init__(self, fn, parts):
        self.name, self.parts = fn.__name__, parts
        self.kw = tuple(parts[2].items()) if parts[2] else ()   # (changed in place too)
        self.held = (tuple(map(held_value, parts[1])) if parts[1] else (),
                     tuple((k, held_value(v)) for k, v in self.kw))
        try:
            self._hash = hash((id(parts[0]), self.held))
        except TypeError:   # a default no hash takes: by the code alone
            self._hash = hash(id(parts[0]))

    def __eq__(self, other):
        return self is other or type(other) is _Code and other.parts[0] is self.parts[0] \
            and other._hash == self._hash and other.held == self.held

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"{self.name} (its code or defaults)"

    def differs(self, other) -> bool:
        return self != other

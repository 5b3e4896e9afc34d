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

__all__ = ["code_parts"]


# a function's code and defaults: replaced in place, it runs other code (a trace
# bakes in what the old ran: its launches, its default values)
_CODE_PARTS = ("__code__", "__defaults__", "__kwdefaults__")


def code_parts(fn) -> tuple:
    return tuple(getattr(fn, at) for at in _CODE_PARTS)


def _runs_as_walked(entries: list) -> bool:
    """Whether each ``(function, defaults, keyword defaults, code)`` still holds them."""
    return all(f.__defaults__ is d and f.__kwdefaults__ is kw and f.__code__ is c
               for f, d, kw, c in entries)


def _code_check(walked: list):
    """A getter saying ``True`` (that very object) while every walked function runs the
    code and defaults it ran when walked: one call, in C where tracing is compiled
    (_buffers.c's guard_unchanged, given only functions), however many were walked."""
    entries = [(f, f.__defaults__, f.__kwdefaults__, f.__code__) for f in walked]
    if _COMPILED_CHECK is None or not all(type(f) is types.FunctionType for f in walked):
        return partial(_runs_as_walked, entries)
    return partial(_COMPILED_CHECK, [], [], [], [], entries, [], [], None)


_COMPILED_CHECK = getattr(_compiled_buffers(), "guard_unchanged", None)


class _Code:
    """A walked function's ``code_parts`` in a cache key: equal where each is the
    same object (a name-by-name log says the function changed)."""

    __slots__ = ("name", "parts")

    def __init__(self, fn, parts):
        self.name, self.parts = fn.__name__, parts

    def __eq__(self, other):
        return type(other) is _Code and all(map(operator.is_, self.parts, other.parts))

    def __hash__(self):
        return hash(tuple(map(id, self.parts)))

    def __repr__(self):
        return f"{self.name} (its code or defaults)"

    def differs(self, other) -> bool:
        return self != other

"""A function argument made anew at each call (a lambda or a nested function
defined in the loop that calls the graph function: ``step(x, lambda h: ...)``),
keyed by what makes it, as a ``partial`` is keyed by what it holds: its code, its
module's globals and what its defaults hold (numbers, strings, and tuples and
frozensets of them by value; a function made anew in turn; anything else, an
array, a list, an object of the program's own, by identity). One made anew with
equal defaults finds its graph, and the graph's callback, the first such
function, runs the same code on the same objects and equal values.

A function with closure cells is keyed by identity, each made anew tracing anew:
its cells may be rebound after the call by code graphtrace cannot see (the loop
still running that made it, ``for i in ...: step(x, lambda h: log(i))``; a
generator suspended or another thread doing so; a sibling function sharing the
cell; the callback's own ``nonlocal result``, which the caller reads), and the
cached graph would run the first function, whose cells are another's than the
call's. The retrace warning says to define it once or pass a ``partial``.
"""
from __future__ import annotations

import types

import numpy as np

from .scalar import value_key
from .values import Identity

__all__ = ["MadeFunction", "function_key", "held_value"]

_VALUES = (int, float, complex, bool, str, bytes, type(None), np.generic)
_MAX_DEPTH = 4   # functions made anew in a made function's cells, in turn


class MadeFunction:
    """The key of a plain function by what makes it (``function_key``): equal for two
    functions of the same code, globals and defaults."""

    __slots__ = ("code", "parts", "_hash")

    def __init__(self, code, parts: tuple):
        self.code, self.parts = code, parts
        self._hash = hash((code, parts))

    def __eq__(self, other):
        return type(other) is MadeFunction and other.code is self.code and \
            other.parts == self.parts

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"<function {self.code.co_name} of line {self.code.co_firstlineno} " \
            f"holding {self.parts[1:]!r}>"


def function_key(f, depth: int = 0):
    """The cache key's entry of function argument ``f``: a ``MadeFunction`` for a
    plain Python function, ``f`` itself for anything else, for a function
    carrying attributes of its own (``functools.wraps``'s ``__wrapped__``, a
    counter set on it), which only it holds, and for one with closure cells
    (module docstring)."""
    if type(f) is not types.FunctionType or f.__dict__ or f.__closure__ or \
            depth > _MAX_DEPTH:
        return f
    kw = f.__kwdefaults__ or {}
    return MadeFunction(f.__code__, (
        Identity(f.__globals__),
        tuple(held_value(x, depth) for x in f.__defaults__ or ()),
        tuple((k, held_value(kw[k], depth)) for k in sorted(kw))))


def held_value(x, depth: int = 0):
    """A closure cell's or default's entry (or a host callback's ``partial``
    argument's): by value where it cannot change in place, a function made anew by
    what makes it, anything else by identity (the first function's, run by the
    cached graph, must hold the very list or array the call's does)."""
    t = type(x)
    if isinstance(x, _VALUES):
        return t, value_key(x)
    if t is tuple or t is frozenset:
        items = sorted(x, key=repr) if t is frozenset else x
        return t, tuple(held_value(y, depth) for y in items)
    if t is types.FunctionType:
        made = function_key(x, depth + 1)
        if made is not x:
            return made
    return Identity(x)

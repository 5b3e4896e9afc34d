"""A function argument made anew at each call (a lambda or a nested function
defined in the loop that calls the graph function: ``step(x, lambda h: ...)``),
keyed by what makes it, as a ``partial`` is keyed by what it holds: its code, its
module's globals, and what its closure cells and defaults hold (numbers, strings,
and tuples and frozensets of them by value; a function made anew in turn;
anything else, an array, a list, an object of the program's own, by identity).
One made anew with equal contents finds its graph, and the graph's callback, the
first such function, runs the same code on the same objects and equal values;
so only where no code can change its cells after the call (``_cells_settled``):
one whose cells the caller's running code still holds (``nonlocal result`` set by
the callback, a loop variable) is keyed by identity, each call tracing anew."""
from __future__ import annotations

import dis
import sys
import types

import numpy as np

from .scalar import value_key
from .values import Identity

__all__ = ["MadeFunction", "function_key", "held_value"]

_VALUES = (int, float, complex, bool, str, bytes, type(None), np.generic)
_EMPTY = "<empty cell>"   # a cell bound later (a name the enclosing code assigns after)
_MAX_DEPTH = 4   # functions made anew in a made function's cells, in turn


class MadeFunction:
    """The key of a plain function by what makes it (``function_key``): equal for two
    functions of the same code, globals, closure values and defaults."""

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
    counter set on it), which only it holds, and for one whose cells may change
    after the call: the cached graph runs the first such function, whose cells
    would then be another's than the call's (``_cells_settled``)."""
    if type(f) is not types.FunctionType or f.__dict__ or depth > _MAX_DEPTH or \
            f.__closure__ and not _cells_settled(f):
        return f
    cells = []
    for cell in f.__closure__ or ():
        try:
            cells.append(held_value(cell.cell_contents, depth))
        except ValueError:   # not yet bound
            cells.append(_EMPTY)
    kw = f.__kwdefaults__ or {}
    return MadeFunction(f.__code__, (
        Identity(f.__globals__), tuple(cells),
        tuple(held_value(x, depth) for x in f.__defaults__ or ()),
        tuple((k, held_value(kw[k], depth)) for k in sorted(kw))))


def _cells_settled(f) -> bool:
    """Whether no code but ``f``'s can rebind its closure cells, and its own does not:
    no function still running on this thread's stack defines a variable ``f`` closes
    over around ``f``'s code (a loop running, ``for i in ...: step(x, lambda h:
    log(i))``, rebinds ``i`` after the call; a callback storing ``nonlocal result``
    hands it to the caller, which reads it after), and no code of ``f`` stores to
    one (a counter it keeps there would go on in the first function's cell)."""
    code = f.__code__
    names = frozenset(code.co_freevars)
    frame = sys._getframe(1)
    while frame is not None:
        outer = frame.f_code
        if names.intersection(outer.co_cellvars) and code in _nested(outer):
            return False
        frame = frame.f_back
    return not _stores_free(code, names)


def _nested(code) -> frozenset:
    """The code objects nested in ``code``, at any depth (found once per code)."""
    found = _NESTED.get(code)
    if found is None:
        inner = [c for c in code.co_consts if isinstance(c, types.CodeType)]
        found = frozenset(inner).union(*(_nested(c) for c in inner))
        if len(_NESTED) >= 4096:
            _NESTED.clear()
        _NESTED[code] = found
    return found


_NESTED: dict = {}


def _stores_free(code, names) -> bool:
    """Whether ``code`` or code nested in it stores to or deletes one of ``names``."""
    for i in dis.get_instructions(code):
        if i.opname in ("STORE_DEREF", "DELETE_DEREF") and i.argval in names:
            return True
    return any(_stores_free(c, names) for c in code.co_consts if isinstance(c, types.CodeType))


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

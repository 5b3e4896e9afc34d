"""The globals of the program's own modules where a trace may have kept what it
made (``helper.CACHE = t``, ``helper.TABLE["t"] = [t]``, ``helper.keep(t)``
with ``global CACHE`` there), checked once the trace is over (``tracing.py``).

A module's globals are many, and most of them hold what no trace touches (a
vocabulary list of a million entries): walking each of them for a temporary
would cost every trace more than the trace itself. So ``ModuleBindings``
notes, before the trace, what each global of those modules is bound to; after
it, a global is checked where the trace may have put something in it: bound
anew (by any code: an assignment, ``global``, ``setattr``), or named by the
code the trace ran (the function and the helpers the reach walked: a global,
an attribute, a string: ``helper.TABLE[k] = t``, ``TABLE.append(t)``,
``getattr(helper, "TABLE")``).
"""
from __future__ import annotations

import functools
import types

from .names import named_values
from .owners import holds_state, own_holder
from .probe import _attr

__all__ = ["ModuleBindings"]

_DEPTH = 3        # a module's own modules, that many levels down from the function's
_ABSENT = object()


def _own_modules(values):
    """``(module, its globals)`` of the modules of the program's own among
    ``values`` (``import helper``, in the function or a helper it calls), and of
    those modules' own modules, ``_DEPTH`` levels down."""
    seen, depth = set(), _DEPTH
    todo = [v for v in values if _is_module(v)]
    while todo and depth:
        depth, found = depth - 1, []
        for m in todo:
            if id(m) in seen or not own_holder(m):
                continue
            seen.add(id(m))
            space = _space(m)
            yield m, space
            found += [v for v in space.values() if _is_module(v)]
        todo = found


def _is_module(v) -> bool:
    try:
        return isinstance(v, types.ModuleType)
    except Exception:   # (a dead weak proxy, an object whose __class__ raises)
        return False


def _space(m) -> dict:
    """A copy of the globals of module ``m`` (its code may change them meanwhile)."""
    space = _attr(m, "__dict__", None)
    return dict(space) if isinstance(space, dict) else {}


def _code_names(functions) -> frozenset:
    """The names the code of ``functions`` (and of what they define) may reach a
    global by: the globals and attributes it names, the strings it holds."""
    out, todo, seen = set(), [], set()
    for f in functions:
        code = _attr(f, "__code__", None)
        if isinstance(code, types.CodeType):
            todo.append(code)
    while todo:
        code = todo.pop()
        if id(code) in seen:
            continue
        seen.add(id(code))
        out.update(code.co_names)
        consts = list(code.co_consts)
        while consts:
            c = consts.pop()
            if type(c) is str:
                out.add(c)
            elif isinstance(c, types.CodeType):
                todo.append(c)
            elif type(c) in (tuple, frozenset):   # (keyword names: f(CACHE=t))
                consts.extend(c)
    return frozenset(out)


def _held_by(functions) -> set:
    """The ids of the values the functions among ``functions`` hold where their code
    reaches them by no name: their closures' cells (``stash = _mk(_LIST)``, a
    factory's function appending to ``store``), defaults, and what a
    ``functools.partial`` or a bound method binds; followed through the
    functions found there."""
    out, seen, todo = set(), set(), list(functions)
    while todo and len(seen) < _MOST:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        for v in _bound_values(f):
            out.add(id(v))
            if _is_function(v):
                todo.append(v)
    return out


def _is_function(v) -> bool:
    try:
        return isinstance(v, _FUNCTIONS)
    except Exception:   # (a dead weak proxy, an object whose __class__ raises)
        return False


def _bound_values(f) -> list:
    if isinstance(f, functools.partial):
        return [f.func, *f.args, *f.keywords.values()]
    if isinstance(f, types.MethodType):
        return [f.__func__, f.__self__]
    if not isinstance(f, types.FunctionType):
        return []
    out = list(f.__defaults__ or ()) + list((f.__kwdefaults__ or {}).values())
    for cell in f.__closure__ or ():
        try:
            out.append(cell.cell_contents)
        except ValueError:   # (a cell not yet filled)
            pass
    return out


_FUNCTIONS = (types.FunctionType, types.MethodType, functools.partial)
_MOST = 10_000    # functions followed at most (a factory's chain of them)


class ModuleBindings:
    """What the globals of the program's own modules the function reaches are
    bound to before its trace (made before it runs): ``places`` after it."""

    __slots__ = ("_fn", "_before")

    def __init__(self, fn):
        self._fn = fn
        self._before = {id(m): (m, space)
                        for m, space in _own_modules(v for _, v in named_values(fn))}

    def places(self, named, walked) -> list:
        """``(label, value)`` of the globals of the program's own modules among
        the values of ``named`` (``named_values``, now) and their own modules,
        that the trace may have stored into: bound anew since ``__init__``, or
        named by the code of the function or of a function in ``walked``, or held
        by the closure, the defaults or the bound arguments of one of those, or of
        a function bound to a global that code names (``_held_by``)."""
        names = _code_names((self._fn, *walked))
        modules = list(_own_modules(v for _, v in named))
        held = _held_by([self._fn, *walked] + [
            v for _, space in modules for name, v in space.items()
            if name in names and _is_function(v)])
        out = []
        for m, space in modules:
            noted = self._before.get(id(m))
            before = noted[1] if noted is not None and noted[0] is m else None
            for name, v in space.items():
                if (before is None or name in names or id(v) in held
                        or before.get(name, _ABSENT) is not v) and holds_state(name, v):
                    out.append((f"global {m.__name__}.{name}", v))
        return out

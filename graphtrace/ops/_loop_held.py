"""Functions a block's code holds in names, and the state they reach, for
``_loop_state.py`` and ``_loop_after.py``.

A body reaches state not only by its own names but through the functions it
holds: a closure's cells, a bound method's object, a ``functools.partial``'s
arguments, a function's globals (``cur, bump = c.cur, c.bump``; ``pk =
partial(pick, st, bufs)``; ``cur, bump = make_counter()``). It calls them
(``bufs[cur() % 2]``, ``src, dst = pk()``), and the code after a block may do
the same (``get()`` reading what the body's ``set_("b")`` set).
``_helper_roots`` takes, beside a function's cells and globals, the object a
bound method holds and a partial's arguments, where no name of the block
holds them already (``cur.__self__``, ``pk.args[0]``); ``binding`` tells a
callable's code and what it binds to its parameters; ``reached`` the paths by
which that code reaches a slot.
"""
from __future__ import annotations

import inspect
import sys
import types
from functools import partial

from ..chains import MISSING
from ..names import _global_names
from ..owners import _attr, own_holder, own_object
from ..values import _is_number
from ._loop_code import _Region, _named
from ._loop_paths import _found

_NONE = (None, {}, 0)
_FIXED = frozenset({str, bytes, bool, type(None)})   # (held by value: no slot of their own)


def _function(body):
    """``(function, bound object or None, extra roots)`` of a ``body=`` callable."""
    if isinstance(body, partial):
        fn, bound, extra = _function(body.func)
        names = fn.__code__.co_varnames[:fn.__code__.co_argcount] if fn is not None else ()
        extra = {**extra, **dict(zip(names[1 if bound is not None else 0:], body.args)),
                 **body.keywords}
        return fn, bound, extra
    if isinstance(body, types.MethodType):
        return body.__func__, body.__self__, {}
    inner = _attr(body, "fn")   # a @gt.graph function as the body: its code
    if type(body).__module__.startswith("graphtrace") and isinstance(inner, types.FunctionType):
        return inner, None, {}
    if isinstance(body, types.FunctionType):
        inner = inspect.unwrap(body)   # a decorator's wrapper (functools.wraps): the body's
        return (inner if isinstance(inner, types.FunctionType) else body), None, {}
    call = _attr(type(body), "__call__")
    if isinstance(call, types.FunctionType):   # an object of the program's own
        return call, body, {}
    return None, None, {}


def binding(v) -> tuple:
    """``(function, {parameter: what it is bound to}, how many positions are bound)``
    of a callable: a function, a bound method (its object as its first
    parameter), a partial (its arguments, over what its function binds), an
    object of the program's own with a ``__call__``; ``(None, {}, 0)`` for
    another (told by type: a weak proxy's may be dead)."""
    t = type(v)
    if t is types.FunctionType:
        return v, {}, 0
    if t is types.MethodType:
        fn = v.__func__
        if type(fn) is not types.FunctionType or not fn.__code__.co_argcount:
            return _NONE
        return fn, {fn.__code__.co_varnames[0]: v.__self__}, 1
    if issubclass(t, partial):
        fn, bound, skip = binding(v.func)
        if fn is None:
            return _NONE
        code = fn.__code__
        names = code.co_varnames[:code.co_argcount]
        bound = {**bound, **dict(zip(names[skip:], v.args))}
        bound.update((k, x) for k, x in v.keywords.items()
                     if k in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
        return fn, bound, skip + len(v.args)
    if own_object(v):
        call = _attr(t, "__call__")
        if type(call) is types.FunctionType and call.__code__.co_argcount:
            return call, {call.__code__.co_varnames[0]: v}, 1
    return _NONE


def _own_function(v) -> bool:
    """Whether ``v`` (a function, a method) is of a module of the program's own."""
    module = sys.modules.get(_attr(_attr(v, "__func__", v), "__module__") or "")
    return module is None or own_holder(module)


def _cell(fn, name: str):
    """The closure cell of ``fn`` by the name ``name``, or None."""
    code = fn.__code__
    return dict(zip(code.co_freevars, fn.__closure__ or ())).get(name) if \
        name in code.co_freevars else None


def _kept(v, out: dict) -> bool:
    """Whether ``v`` is held by a name in ``out`` already (an object or a container
    by its identity; a number, a string, by none: another slot)."""
    return not (_is_number(v) or type(v) in _FIXED) and any(v is x for x in out.values())


def _helper_roots(fn, name: str, out: dict, owners: dict, shared=()) -> None:
    """The closure cells and the globals of a function the body calls by ``name``
    (a function, a bound method, a partial; ``owners``: root -> (the function,
    its name there)), and what a bound
    method or a partial of the program's own binds (``name.__self__``,
    ``name.args[0]``, ``name.keywords['k']``) where no name holds it yet
    (``shared``: the names of the block's code's own cells, which a function
    made there shares)."""
    for label, v in _bound_roots(fn, name):
        if not _kept(v, out):
            out.setdefault(label, v)
    fn = binding(fn)[0] if type(fn) is not types.FunctionType else fn
    if fn is None:
        return
    code = fn.__code__
    seen = {id(c) for r in out if r in owners for c in (_cell(*owners[r]),) if c is not None}
    for cell_name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            v = cell.cell_contents
        except ValueError:   # a cell not yet filled
            continue
        if _kept(v, out) or id(cell) in seen or \
                cell_name in shared and out.get(cell_name, MISSING) is v:
            continue   # one the body's names hold, or another function's cell: once
        out.setdefault(f"{name}.<{cell_name}>", v)
        owners.setdefault(f"{name}.<{cell_name}>", (fn, cell_name))
    for g in _global_names(code):
        if g in fn.__globals__:
            out.setdefault(g, fn.__globals__[g])
            owners.setdefault(g, (fn, g))


def _bound_roots(v, name: str) -> list:
    """``(label, value)`` of what a bound method or a partial of the program's own
    binds: its object, its arguments (and those of a partial or method within)."""
    t = type(v)
    if t is types.MethodType and _own_function(v):
        return [(f"{name}.__self__", v.__self__)]
    fn = binding(v)[0] if issubclass(t, partial) else None
    if fn is None or not _own_function(fn):
        return []
    return [(f"{name}.args[{i}]", x) for i, x in enumerate(v.args)] + \
        [(f"{name}.keywords[{k!r}]", x) for k, x in v.keywords.items()] + \
        _bound_roots(v.func, f"{name}.func")


_BOUND = (".__self__", ".args[", ".keywords[")   # (the roots _bound_roots names)


def named_directly(hits: list, before: dict) -> list:
    """``hits`` (``(path, ...)``) but those reached through what a bound method or a
    partial binds (``cur.__self__.k``) where another hit is the same slot
    (``before``: path -> (value, bytes, where it is held)) named otherwise."""
    where = [before.get(h[0], (None, None, None))[2] for h in hits]
    bound = [any(m in h[0][0] for m in _BOUND) for h in hits]
    plain = {w for w, b in zip(where, bound) if w is not None and not b}
    return [h for h, w, b in zip(hits, where, bound) if not (b and w in plain)]


def reached(fn, bound: dict, path: tuple, now: dict, owners: dict) -> list:
    """The paths by which the code of ``fn`` (a function, ``bound`` its parameters
    bound to values) reaches the slot at ``path`` (from the names the block
    began with, holding ``now``): a global of its own by the same name, a
    closure cell the root is (``owners``: the cell's function), or an object or
    a container on the path it holds by a parameter bound, a cell or a global
    (``self`` of ``c.cur`` with ``c.k``; ``st`` of ``partial(pick, st)`` with
    ``st['i']``)."""
    out = []
    named = _named(fn)
    owner = owners.get(path[0])
    if owner is not None and owner[0] is not None and owner[1] in owner[0].__code__.co_freevars:
        cell = _cell(*owner)
        out += [(n,) + path[1:] for n in fn.__code__.co_freevars if _cell(fn, n) is cell]
    elif path[0] in named and path[0] not in fn.__code__.co_freevars and \
            fn.__globals__.get(path[0], MISSING) is now.get(path[0], MISSING):
        out.append(path)
    if len(path) > 1:   # the objects and containers on its way (the first from the name)
        on_way = {id(_found(now, path[:n])): n for n in range(len(path) - 1, 0, -1)}
        for name, v in [*bound.items(), *named.items()]:
            n = on_way.get(id(v))
            if n is not None and _found(now, path[:n]) is v:
                out.append((name,) + path[n:])
    return list(dict.fromkeys(out))


def _region(state, fn) -> _Region:
    """The ``_Region`` of all the code of ``fn``, once a state."""
    code = fn.__code__
    if code not in state.helpers:
        state.helpers[code] = _Region((code, -1, 1 << 62), dict(fn.__globals__))
    return state.helpers[code]

"""Functions a block's code holds in names, and the state they reach, for
``_loop_state.py``.

A body reaches state not only by its own names but through the functions it
holds and calls: a closure's cells, a function's globals (``swap()``,
``pp.swap()``). ``_function`` tells the code of a ``body=`` callable and what
it binds; ``_helper_roots`` the cells and globals of a function the body
calls, which ``LoopState`` takes as roots of their own.
"""
from __future__ import annotations

import inspect
import sys
import types
from functools import partial

from ..names import _global_names
from ..owners import _attr, own_holder


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


def _helper_roots(fn, name: str, out: dict, owners: dict) -> None:
    """The closure cells and the globals of a function the body calls by ``name``
    (``owners``: root -> (the function, its name there))."""
    fn = _attr(fn, "__func__", fn)
    if not isinstance(fn, types.FunctionType):
        return
    code = fn.__code__
    for cell_name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            v = cell.cell_contents
        except ValueError:   # a cell not yet filled
            continue
        if not any(v is x for x in out.values()):   # one the body's names hold: once
            out.setdefault(f"{name}.<{cell_name}>", v)
            owners.setdefault(f"{name}.<{cell_name}>", (fn, cell_name))
    for g in _global_names(code):
        if g in fn.__globals__:
            out.setdefault(g, fn.__globals__[g])
            owners.setdefault(g, (fn, g))


def _own_function(v) -> bool:
    """Whether ``v`` (a function, a method) is of a module of the program's own."""
    module = sys.modules.get(_attr(_attr(v, "__func__", v), "__module__") or "")
    return module is None or own_holder(module)

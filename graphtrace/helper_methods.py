"""The methods of ``self``'s class that a decorated method's helpers call.

A method may hand ``self`` to a plain function it calls by a global name
(``helper(s, self, x)``), which calls a method of it or reads a property
(``o.rate()``, ``o.scale``). ``class_methods`` (``names.py``) finds the methods
the method's own code names on ``self``; ``helper_methods`` finds those the
helpers name, so that ``Holdings._class_reaches`` watches them as it watches
those: what the class holds by each name by identity (``Model.rate = ...`` after
a trace is another graph) and the globals they read (their ``Reach``).
"""
from __future__ import annotations

import types

from .chains import callback_codes
from .host_chains import host_callbacks, host_methods
from .names import _methods_named
from .owners import _python_helper

__all__ = ["helper_methods"]


def _helpers(f) -> list:
    """The Python functions ``f``'s code (and the code nested in it, but that
    handed to ``s.host``) calls by a global name, which may be handed ``self``;
    not those it hands to ``s.host`` (``s.host(tick)``: read when they run)."""
    code = f.__code__
    names, codes, hosted = set(), [code], set()
    while codes:
        c = codes.pop()
        names.update(c.co_names)
        hosted |= host_callbacks(c)
        live = callback_codes(c)
        codes.extend(k for k in c.co_consts if isinstance(k, types.CodeType) and k not in live)
    scope = getattr(f, "__globals__", {})
    return [h for h in map(_python_helper, (scope.get(n) for n in sorted(names - hosted)))
            if isinstance(h, types.FunctionType)]


def helper_methods(fn, cls, known) -> list:
    """``(name, function)`` for the Python functions of the methods, properties
    and static or class methods of ``cls`` that the helpers method ``fn`` calls
    by a global name name (``helper(s, self, x)`` calling ``o.rate()``), and
    those these call, and the helpers of those in turn; ``known``: the
    ``(name, function)`` of ``class_methods``, whose helpers are walked too and
    which are left out. Not the methods a helper hands to ``s.host`` alone
    (``s.host(o.report, h)``: read when it runs)."""
    fn = getattr(fn, "__func__", fn)
    have = {id(f) for _, f in known} | {id(fn)}
    out: list = []
    todo, seen = [fn] + [f for _, f in known], set()
    while todo:
        f = todo.pop()
        if id(f) in seen or not isinstance(f, types.FunctionType):
            continue
        seen.add(id(f))
        for h in _helpers(f):
            if id(h) in seen:
                continue
            todo.append(h)
            for name, m, _ in _methods_named(h.__code__, cls, host_methods(h.__code__),
                                             supers=True):
                if id(m) not in have:
                    have.add(id(m))
                    out.append((name, m))
                    todo.append(m)
    return out

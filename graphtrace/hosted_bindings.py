"""What the callbacks a graph function hands to ``s.host(...)`` as an attribute
chain are bound to now (``s.host(self.sink.read, t)``, ``s.host(SINK.read, t)``,
``s.host(sink.read, t)`` of a closure): a cached graph runs the very callback
its trace was handed, so the cache key holds that callback's object by
identity. After ``m.sink = Sink(b)`` the chain gives a method of another
object: the key differs and the graph is traced anew with the callback of the
object held now (the old graph's callback would still read the old sink's
arrays). Only chains handed to ``s.host`` count: an object the code reads
otherwise is watched by what it holds (``held.py``), and swapping it for an
equal one traces nothing anew.
"""
from __future__ import annotations

import functools
import types

from .chains import nested_codes
from .host_chains import _host_chain_loads
from .object_keys import Identity
from .values import _Same

__all__ = ["hosted_bindings"]

_NOTHING = ()
_BUILTIN_METHODS = (types.BuiltinMethodType, types.MethodWrapperType)


def hosted_bindings(fn, self_param, self_obj) -> tuple:
    """``(label, "s.host", identity)`` for each callback ``fn``'s code hands to
    ``s.host`` as an attribute chain off ``self_param`` (``self_obj``), a closure
    name or a global name, read now: a bound method by its function and its
    object's identity (made anew at each read, equal to one of the same object),
    a method of a builtin object (``self.log.append``) by its name and object,
    anything else by identity."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return _NOTHING
    found = _chains(code, self_param)
    if not found:
        return _NOTHING
    out = []
    for where, head, steps, label in found:
        try:
            if where == "self":
                v = self_obj
            elif where == "cell":
                v = fn.__closure__[code.co_freevars.index(head)].cell_contents
            else:
                v = fn.__globals__[head]
            for step in steps:
                v = getattr(v, step)
        except Exception:  # noqa: BLE001  (whatever the object raises: the trace says)
            continue
        out.append((label, "s.host", _bound_key(v)))
    return tuple(out)


def _bound_key(v):
    """A callback in the key by what it runs on (``hosted_bindings``)."""
    if type(v) is types.MethodType:
        return v.__func__, Identity(v.__self__)
    if isinstance(v, _BUILTIN_METHODS) and not isinstance(v.__self__, types.ModuleType):
        return type(v), v.__name__, Identity(v.__self__)
    return _Same(v)


@functools.lru_cache(maxsize=1024)
def _chains(code, self_param) -> tuple:
    """``(where, head, attributes, label)`` of each chain ``code`` (and the code
    nested in it) hands to ``s.host`` off a name the function itself can read
    when called: ``self_param`` ("self"), a name of its closure ("cell") or a
    global ("global"); not off a local of its own (set by the code as it runs)."""
    out = {}
    for c in nested_codes(code):
        for head, loads in _host_chain_loads(c):
            steps = tuple(i.argval for i in loads)
            if head == self_param and (c is code or head in c.co_freevars):
                where = "self"
            elif head in c.co_varnames or head in c.co_cellvars:
                continue
            elif head in c.co_freevars:
                if head not in code.co_freevars:   # a local of the function's own
                    continue
                where = "cell"
            else:
                where = "global"
            out[(where, head, steps)] = f"{head}.{'.'.join(steps)}"
    return tuple((where, head, steps, label) for (where, head, steps), label in out.items())

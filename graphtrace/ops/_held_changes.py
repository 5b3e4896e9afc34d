"""Whether a host callback's code may change a container it holds.

A callback holding a list or dict argument of the graph function (by a closure
name or a ``functools.partial`` argument) holds the copy the function was
handed: what it appends or assigns there is lost to the caller, which
``host.py`` warns of. A callback that only reads the container (a config
dict's entries) loses nothing: its code is read to tell the two apart, and
where it cannot tell, the answer is that it may.
"""
from __future__ import annotations

import dis
from functools import partial

__all__ = ["may_change"]

# Methods that change a list, dict, set or deque in place.
_CHANGING = frozenset({"append", "extend", "insert", "update", "setdefault", "pop", "popitem",
                       "clear", "remove", "add", "discard", "sort", "reverse", "appendleft",
                       "extendleft", "rotate", "__setitem__", "__delitem__", "__iadd__"})
_READING = frozenset({"get", "keys", "items", "values", "copy", "index", "count",
                      "__getitem__", "__contains__", "__len__"})
_LOADS = frozenset({"LOAD_DEREF", "LOAD_FAST", "LOAD_CLOSURE", "LOAD_CONST", "LOAD_GLOBAL",
                    "LOAD_NAME", "LOAD_SMALL_INT"})
_SUBSCRIPT_READS = frozenset({"BINARY_SUBSCR", "BINARY_SLICE"})
_NEUTRAL = frozenset({"GET_ITER", "CONTAINS_OP"})


def may_change(fn, label: str) -> bool:
    """Whether the callback ``fn`` may change what it holds by ``label`` (as
    ``host._names_of`` names it: ``closure name 'cfg'``, ``partial argument 0``):
    False only where each use of it in the callback's own code is a read."""
    name = _variable(fn, label)
    if name is None:
        return True
    while isinstance(fn, partial):
        fn = fn.func
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    if code is None:
        return True
    uses = [_changes(c, name) for c in _codes(code)]
    # loaded nowhere in the callback's own code: a helper it calls holds it, and may
    return True in uses or False not in uses


def _variable(fn, label: str):
    """The name the callback's code uses for what it holds by ``label``."""
    if label.startswith("closure name "):
        return label[len("closure name "):].strip("'\"")
    if not label.startswith("partial argument ") or not isinstance(fn, partial) \
            or isinstance(fn.func, partial):
        return None
    key = label[len("partial argument "):]
    if not key.isdigit():
        return key   # a keyword: the parameter's name
    code = getattr(getattr(fn.func, "__func__", fn.func), "__code__", None)
    i = int(key) + (1 if hasattr(fn.func, "__self__") else 0)
    return code.co_varnames[i] if code is not None and i < code.co_argcount else None


def _codes(code):
    """``code`` and the code of the functions and lambdas made in it."""
    yield code
    for c in code.co_consts:
        if hasattr(c, "co_code"):
            yield from _codes(c)


def _changes(code, name: str):
    """True where ``code`` may change what it loads by ``name``, False where it only
    reads it, None where it does not load it."""
    ins = [i for i in dis.get_instructions(code) if i.opname not in ("CACHE", "NOP")]
    used = None
    for k, op in enumerate(ins):
        if op.opname not in _LOADS or op.argval != name or op.opname == "LOAD_CONST":
            continue
        used = False
        after = ins[k + 1:k + 3]
        if not after:
            return True
        nxt = after[0]
        if nxt.opname in ("LOAD_ATTR", "LOAD_METHOD"):
            if nxt.argval in _CHANGING or nxt.argval not in _READING:
                return True
        elif nxt.opname in _LOADS and len(after) > 1 and after[1].opname in _SUBSCRIPT_READS:
            continue   # x[key] read
        elif nxt.opname not in _NEUTRAL:
            return True   # stored into, handed on, or anything else: it may
    return used

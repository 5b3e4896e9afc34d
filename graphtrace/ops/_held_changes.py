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

from ..chains import _MUTATORS
from ..probe import _attr, _has

__all__ = ["may_change", "may_change_argument"]

# Methods that change a list, dict, set or deque in place: those the watch of
# global state counts as stores, and a deque's own.
_CHANGING = _MUTATORS | {"appendleft", "extendleft", "rotate"}
_READING = frozenset({"get", "keys", "items", "values", "copy", "index", "count",
                      "__getitem__", "__contains__", "__len__"})
_READING_BUILTINS = frozenset({"len", "print", "repr", "str", "sorted", "list", "dict", "tuple",
                               "set", "frozenset", "bool", "any", "all", "sum", "min", "max",
                               "enumerate", "reversed", "iter", "hash", "id", "type"})
_LOADS = frozenset({"LOAD_DEREF", "LOAD_FAST", "LOAD_CLOSURE", "LOAD_CONST", "LOAD_GLOBAL",
                    "LOAD_NAME", "LOAD_SMALL_INT"})
_SUBSCRIPT_READS = frozenset({"BINARY_SUBSCR", "BINARY_SLICE"})
_NEUTRAL = frozenset({"GET_ITER", "CONTAINS_OP", "IS_OP", "COMPARE_OP", "FORMAT_VALUE",
                      "UNARY_NOT", "TO_BOOL"})


def may_change(fn, label: str, held) -> bool:
    """Whether the callback ``fn`` may change ``held``, which it holds by ``label``
    (as ``host._names_of`` names it: ``closure name 'cfg'``, ``partial argument
    0``): False only where each use of it in the callback's own code is a read, and
    it holds no container (``stats["losses"].append(...)`` reads one item and
    changes it: the items are copies too)."""
    return _nests(held) or _uses_change(fn, _variable(fn, label))


def may_change_argument(fn, i: int, held) -> bool:
    """``may_change`` for the ``i``-th argument ``s.host`` hands the callback."""
    extra = 0
    if isinstance(fn, partial):
        extra, fn = len(fn.args), fn.func
    if isinstance(fn, partial):
        return True
    code = _attr(_attr(fn, "__func__", fn), "__code__")
    i += extra + (1 if _has(fn, "__self__") else 0)
    name = code.co_varnames[i] if code is not None and i < code.co_argcount else None
    return _nests(held) or _uses_change(fn, name)


def _nests(held) -> bool:
    items = held.values() if isinstance(held, dict) else held
    return any(isinstance(x, (list, dict, set, tuple)) or _has(x, "__dict__")
               for x in items)


def _uses_change(fn, name) -> bool:
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
    code = _attr(_attr(fn.func, "__func__", fn.func), "__code__")
    i = int(key) + (1 if _has(fn.func, "__self__") else 0)
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
        if not _read_by_builtin(ins[k - 1] if k else None, ins[k + 1:k + 2]) and \
                _use_changes(ins[k + 1:k + 12]):
            return True
    return used


def _read_by_builtin(before, after) -> bool:
    """Whether the load is the one argument of a builtin that only reads it
    (``len(cfg)``, ``print(cfg)``, ``sorted(names)``)."""
    return before is not None and before.opname in ("LOAD_GLOBAL", "LOAD_NAME") and \
        before.argval in _READING_BUILTINS and bool(after) and \
        after[0].opname in ("PRECALL", "CALL") and after[0].arg == 1


def _use_changes(after) -> bool:
    """Whether what follows the load of a container may change it: False for an
    attribute read (``cfg.get``), a test, a text or an iteration of it, and an item
    or slice read by a key computed in between (``names[i + 1]``); True otherwise
    (stored into, a changing method, handed on to a call: the call takes it off
    the stack)."""
    if not after:
        return True
    nxt = after[0]
    if nxt.opname in ("LOAD_ATTR", "LOAD_METHOD"):
        return nxt.argval in _CHANGING or nxt.argval not in _READING
    if nxt.opname in _NEUTRAL or nxt.opname.startswith("POP_JUMP"):
        return False
    above = 0   # what the key's code has put on the stack above the container
    for op in after:
        if above == 1 and op.opname == "BINARY_SUBSCR" or \
                above == 2 and op.opname == "BINARY_SLICE":
            return False
        if op.opname.startswith(("STORE", "DELETE", "POP_JUMP", "JUMP", "RETURN")) \
                or "ITER" in op.opname:
            return True
        try:
            above += dis.stack_effect(op.opcode, op.arg, jump=False)
        except ValueError:
            return True
        if above < 1:
            return True   # the container itself was taken by something else
    return True

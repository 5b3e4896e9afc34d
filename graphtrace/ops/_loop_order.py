"""Whether a loop body's code reads a dict's order, for ``_loop_state.py``.

A body that moves a dict's key to its end (``d["a"] = d.pop("a")``) records
other work in its next iteration only where that iteration reads the dict by
position (``src, dst = d.values()``). ``reads_order`` tells False, the order
not read, only where that is sure:

- the dict is held by a name of the user's frame alone (a local, or a cell
  that only code made in the block names), by no other slot the snapshots
  reach;
- each load of that name in the block's code, and in the code of the
  comprehensions, generator expressions and functions made there, takes it
  by key (``d[k]``, ``d.get(k)``, ``d.pop(k)``, ``k in d``, ``d[k] = v``, ``del
  d[k]``), measures it (``len(d)``, ``if d:``), sorts its keys (``sorted(d)``,
  ``sorted(d.items())``, where its keys are all strings or all ints), or is
  the iterable (``d``, ``d.keys()``, ``d.values()``, ``d.items()``) of a for
  loop each of whose passes does the same for its item whatever its place:
  one storing no name but its target, which no code after it in the block
  reads, none of the program's state, and never leaving early, whose nodes
  touch no byte another of them writes (each order records the same graph);
- the block runs none of the program's own code: its calls are kernel
  launches, a graphtrace stream's methods, functions of Python's builtins or
  of a library's modules, the dict's own methods, and the code made in it.

The code after a loop or branch (``_loop_after.py``) is asked the same, in the
user's frame, its for loops taken as reading the order (their nodes are not
recorded yet when the block closes). Anything else is taken as reading the
order.
"""
from __future__ import annotations

import builtins
import dis
import sys
import types

from ..owners import _attr, _bound_to, _graph_class, own_holder, own_object
from ..static_attrs import getattr_static
from ._loop_stack import (_ATTR_STORES, _ITEM_STORES, _LOADS, _STORES, _begin, _chain,
                          _holder, _reads_item)

_MAX_NODES = 64   # a for loop recording more: its nodes are not compared
_KEY_CODE = 64    # d[<key>]: a key computed by more instructions is not looked through

_KEYED = frozenset({"get", "pop", "setdefault", "update", "clear", "__getitem__",
                    "__contains__", "__len__", "__setitem__", "__delitem__",
                    "move_to_end"})   # (an OrderedDict's: it moves, it reads no order)
_VIEWS = frozenset({"keys", "values", "items"})
_MEASURES = frozenset({"len", "bool"})
_TRUTH = frozenset({"UNARY_NOT", "TO_BOOL"})
_NOT_PURE = frozenset({"next", "iter", "map", "filter", "getattr", "setattr", "delattr",
                       "vars", "exec", "eval", "globals", "locals", "__import__",
                       "compile", "open", "input", "breakpoint"})
_LEAVES = frozenset({"RETURN_VALUE", "RETURN_CONST", "YIELD_VALUE", "RAISE_VARARGS",
                     "RERAISE", "BEFORE_WITH", "MAKE_FUNCTION", "SETUP_WITH"})


def reads_order(code, offsets: set, name: str, keys: tuple, scope: dict, space: dict,
                regions) -> bool:
    """Whether the instructions of ``code`` at ``offsets`` (a block's body, or the
    code after it) may read the order of the dict its frame's name ``name`` holds
    (``keys``: its keys, as it held them before and after; ``scope``: the frame's
    names at the block's end, ``space`` its globals; ``regions``: what they
    recorded, or None where that is not known yet: a for loop over it reads it)."""
    if name not in code.co_varnames and name not in code.co_cellvars:
        return True
    code_ins = list(dis.get_instructions(code))
    inner = _made(code_ins, offsets)
    if any(name in c.co_freevars and c not in inner for c in _nested(code)):
        return True   # a function made outside the block names it
    sortable = all(type(k) is str for k in keys) or all(type(k) is int for k in keys)
    look = _Look(scope, space, name, inner)
    tries = [e.start for e in dis.Bytecode(code).exception_entries]
    parts = [(code_ins, [i for i, ins in enumerate(code_ins) if ins.offset in offsets])]
    parts += [(ins, list(range(len(ins)))) for ins in map(_instructions, inner)]
    for part, at in parts:
        calls = _calls(part, at)
        if not all(look.pure(part, k, callee, part is not code_ins)
                   for k, (callee, _) in calls.items()):
            return True
        for j in at:
            ins = part[j]
            if ins.opname in _LOADS and name in _loaded(ins) or \
                    ins.opname in _STORES and name in _loaded(ins):
                use = _use(part, j, calls, sortable)
                if use is True or type(use) is int and (part is not code_ins or not _passes(
                        code_ins, use, offsets, calls, look, regions, code.co_filename,
                        tries)):
                    return True
    return False


def _loaded(ins) -> tuple:
    return ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)


def _instructions(code) -> list:
    return list(dis.get_instructions(code))


def _nested(code) -> list:
    """The code objects made in ``code``, at any depth."""
    out, todo = [], [code]
    while todo:
        for k in todo.pop().co_consts:
            if isinstance(k, types.CodeType):
                out.append(k)
                todo.append(k)
    return out


def _made(code_ins: list, offsets: set) -> set:
    """The code objects the instructions at ``offsets`` load, and those made in
    them."""
    top = [ins.argval for ins in code_ins if ins.offset in offsets and
           isinstance(ins.argval, types.CodeType)]
    return set(top).union(*map(_nested, top))


def _calls(code_ins: list, at: list) -> dict:
    """The calls among the instructions ``at``: index -> (the index of the
    callee's last instruction, [the index of each argument's last one])."""
    out = {}
    for i in at:
        ins = code_ins[i]
        if ins.opname in ("PRECALL", "CALL", "CALL_KW") and \
                code_ins[i - 1].opname != "PRECALL" or ins.opname == "CALL_FUNCTION_EX":
            n = ins.arg + (ins.opname == "CALL_KW") if ins.opname != "CALL_FUNCTION_EX" \
                else 1 + (ins.arg & 1)
            ends = [_begin(code_ins, i, n - m - 1)[0] - 1 for m in range(n)]
            out[i] = (_begin(code_ins, i, n)[0] - 1, ends)
    return out


def _result(code_ins: list, k: int) -> int:
    """The index of the last instruction of the call at ``k`` (3.11: its CALL)."""
    return k + 1 if code_ins[k].opname == "PRECALL" else k


def _use(code_ins: list, j: int, calls: dict, sortable: bool, view=None):
    """How the code uses the value the instruction ``code_ins[j]`` leaves (the
    dict, or its ``view`` ``"keys"``, ``"values"``, ``"items"``): False where it
    reads no order, the index of the ``FOR_ITER`` of a for loop over it, True
    for anything else."""
    ins = code_ins[j]
    if ins.opname == "LOAD_CLOSURE":   # handed to code made in the block: read there
        return False
    if ins.opname in _STORES or isinstance(ins.argval, tuple):   # rebound; one of two
        return True                                              # names loaded (3.13)
    after = code_ins[j + 1] if j + 1 < len(code_ins) else None
    if after is None:
        return True
    if after.opname == "GET_ITER" and j + 2 < len(code_ins) and \
            code_ins[j + 2].opname == "FOR_ITER":
        return j + 2
    if after.opname == "CONTAINS_OP" or after.opname in _TRUTH or \
            after.opname.startswith("POP_JUMP") and "_IF_" in after.opname:
        return False   # k in d, not d, if d: (not d or x: d itself, maybe)
    for callee, ends in calls.values():
        if j in ends:   # len(d), sorted(d): by its length, by its keys' own order
            fn = code_ins[callee].argval if len(ends) == 1 and callee >= 0 and \
                code_ins[callee].opname == "LOAD_GLOBAL" else None
            return not (fn in _MEASURES or fn == "sorted" and sortable and view != "values")
    if (after.opname in ("LOAD_METHOD", "LOAD_ATTR") and _holder(code_ins, j + 1) == j and
            view is None):
        method = after.argval
        if method in _KEYED:
            return False
        call = next((k for k, (callee, ends) in calls.items() if callee == j + 1 and
                     not ends), None)
        if method in _VIEWS and call is not None:
            return _use(code_ins, _result(code_ins, call), calls, sortable, method)
        return True
    if view is None and any(_holder(code_ins, k) == j for k in range(
            j + 1, min(j + _KEY_CODE, len(code_ins)))
            if _reads_item(code_ins[k]) or code_ins[k].opname in _ITEM_STORES):
        return False   # d[k], d[k] = v, del d[k]
    return True


def _passes(code_ins: list, f: int, offsets: set, calls: dict, look, regions,
            file: str, tries: list) -> bool:
    """Whether each pass of the for loop whose ``FOR_ITER`` is ``code_ins[f]`` does
    the same for its item whatever its place, and the loop's nodes touch no byte
    another of them writes: its passes may run in any order."""
    if regions is None:   # (its nodes not recorded yet)
        return False
    end = code_ins[f].argval
    inside = [i for i in range(f + 1, len(code_ins)) if code_ins[i].offset < end]
    k = f + 1
    n = code_ins[k].arg if code_ins[k].opname == "UNPACK_SEQUENCE" else 0
    k += n > 0
    targets = set()
    for i in range(k, k + max(n, 1)):
        if i >= len(code_ins) or code_ins[i].opname not in ("STORE_FAST",
                                                           "STORE_FAST_STORE_FAST"):
            return False
        targets.update(_loaded(code_ins[i]))
    heads = set(range(f + 1, k + max(n, 1)))
    for i in inside:
        ins = code_ins[i]
        if i in heads:
            continue
        if ins.opname in _STORES or ins.opname in _ATTR_STORES or \
                ins.opname in _ITEM_STORES or ins.opname in _LEAVES:
            return False
        if i in calls and _method_of(code_ins, calls[i][0], look.name) not in (None, "get"):
            return False
    if not _runs_through(code_ins, f, tries):
        return False   # break, return: a pass leaving the loop early
    if any(code_ins[i].opname in _LOADS and targets & set(_loaded(code_ins[i]))
           for i, ins in enumerate(code_ins) if ins.offset in offsets and i not in inside):
        return False   # the last item's name read after the loop
    lines = {code_ins[i].positions.lineno for i in inside if code_ins[i].positions}
    nodes = [n for r in regions for n in r.nodes if n.source[0] == file and
             n.source[1] in lines]
    return len(nodes) <= _MAX_NODES and not any(
        _conflict(a, b) for x, a in enumerate(nodes) for b in nodes[x + 1:])


_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
_GOTO = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_ABSOLUTE", "JUMP",
                   "JUMP_NO_INTERRUPT", "JUMP_BACKWARD_NO_INTERRUPT"})


def _runs_through(code_ins: list, f: int, tries: list) -> bool:
    """Whether every path from the for loop's ``FOR_ITER`` (``code_ins[f]``) into
    its pass comes back to it, leaving the loop only when its iterator is
    exhausted: no ``break``, ``return`` or ``raise``, and no ``try`` in it (an
    ``except`` may leave it)."""
    start, end = code_ins[f].offset, code_ins[f].argval
    if any(start < t < end for t in tries):
        return False
    at = {ins.offset: k for k, ins in enumerate(code_ins)}
    seen, todo = set(), [f + 1]
    while todo:
        k = todo.pop()
        if k in seen:
            continue
        seen.add(k)
        if k >= len(code_ins) or not start < code_ins[k].offset < end:
            return False   # fell out of the loop (break: the iterator popped)
        ins = code_ins[k]
        if ins.opname in _LEAVES:
            return False
        if ins.opcode in _JUMPS:
            if ins.argval != start:
                if ins.argval not in at:
                    return False
                todo.append(at[ins.argval])
            if ins.opname in _GOTO:
                continue
        todo.append(k + 1)
    return True


def _conflict(a, b) -> bool:
    return a.opaque or b.opaque or any(
        ("w" in m or "w" in n) and x.overlaps(y) for x, m in a.accesses for y, n in b.accesses)


def _method_of(code_ins: list, callee: int, name: str):
    """The name of the method the callee at ``callee`` takes off the name ``name``
    (``d.get``), else None."""
    ins = code_ins[callee]
    if ins.opname in ("LOAD_METHOD", "LOAD_ATTR") and _chain(code_ins, callee) == \
            (name, (".", ins.argval)):
        return ins.argval
    return None


class _Look:
    """What a block's callees are: none of the program's own code (``pure``)."""

    def __init__(self, scope: dict, space: dict, name: str, inner: set):
        self.scope, self.space, self.name, self.inner = scope, space, name, inner

    def value(self, path):
        v = self.scope.get(path[0], self.space.get(path[0], _NONE))
        if v is _NONE:
            v = getattr(builtins, path[0], _NONE)
        for kind, key in path[1:]:
            if kind != "." or v is _NONE or not isinstance(v, types.ModuleType) and \
                    not type(v).__module__.startswith("graphtrace"):
                return _NONE
            v = getattr_static(v, key, _NONE)
        return v

    def pure(self, code_ins: list, k: int, callee: int, inner: bool) -> bool:
        """Whether the call at ``k`` runs none of the program's code (``inner``: in
        code made in the block, whose own names the frame's do not tell)."""
        ins = code_ins[callee] if callee >= 0 else None
        if ins is None:
            return False
        root = callee
        while code_ins[root].opname in ("LOAD_ATTR", "LOAD_METHOD") and root > 0:
            root = _holder(code_ins, root)
        if inner and code_ins[root].opname not in ("LOAD_GLOBAL", "LOAD_DEREF") and \
                ins.opname not in ("MAKE_FUNCTION", "GET_ITER"):
            return False
        if ins.opname == "GET_ITER" and not code_ins[k].arg:   # (3.11) a comprehension's
            start = _begin(code_ins, callee, 1)[0]   # function, called on an iterator
            ins = code_ins[start - 1] if start > 0 else ins
        if ins.opname == "MAKE_FUNCTION" or ins.opname == "LOAD_CONST":
            return True   # code made in the block; a with block's exit (its None, None, None)
        if _reads_item(ins):   # k[grid, block, body](...): a kernel's launch
            h = _holder(code_ins, callee)
            path = _chain(code_ins, h) if h >= 0 else None
            v = self.value(path) if path is not None else _NONE
            return v is not _NONE and not _own(v) and \
                not isinstance(v, (list, tuple, dict, types.FunctionType))
        if _method_of(code_ins, callee, self.name) is not None:
            d = self.scope.get(self.name)
            raw = getattr_static(type(d), ins.argval, None)
            return type(d) is dict or not isinstance(raw, types.FunctionType)
        path = _chain(code_ins, callee)
        if path is None:
            return False
        v = self.value(path)
        if v is _NONE:
            return False
        if isinstance(v, types.FunctionType) and v.__code__ in self.inner:
            return True   # a function made in the block: its code is looked at
        if len(path) == 1 and getattr(builtins, path[0], _NONE) is v:
            return path[0] not in _NOT_PURE
        if len(path) == 1:   # from math import sqrt: a library's function or class
            return not _own(v) and isinstance(v, (types.FunctionType, type,
                                                  types.BuiltinFunctionType))
        holder = self.value(path[:-1])
        return not _own(v) and (isinstance(holder, types.ModuleType) or
                                type(holder).__module__.startswith("graphtrace"))


_NONE = object()


def _own(v) -> bool:
    """Whether calling ``v`` may run the program's own code (a ``@gt.graph``
    function or method: its function's)."""
    got = _bound_to(v)
    v = _attr(v, "fn") if _graph_class(type(v)) else got[1] if got is not None else v
    fn = _attr(v, "__func__", v)
    module = _attr(fn, "__module__")
    if isinstance(v, type):
        return own_holder(v)
    if isinstance(fn, (types.FunctionType, types.BuiltinFunctionType)):
        m = sys.modules.get(module or "")
        return m is None or own_holder(m)
    return own_object(v) or own_holder(v)

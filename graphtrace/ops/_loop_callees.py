"""What a call of a body's code calls, for ``_loop_code.py``: a kernel's launch
through ``forall`` (``_launcher``), a method loaded for the call
(``_method_load``), a comprehension's own code run at once (``_made_here``),
what the arguments of ``body.child(step, x)`` but its function read
(``_child_args``), and the slot a call reads by a name it spells
(``_slot_read``: ``getattr(st, "v", 1.0)``, ``d.get("k", 1.0)``).
"""
from __future__ import annotations

import sys
import types

from ._loop_operands import _CALLS, _arguments, _parameters, _taken
from ._loop_paths import _resolve
from ._loop_stack import _ATTR_LOADS, _CONSTS, _begin, _chain


def _made_here(code_ins: list, c: int) -> bool:
    """Whether ``code_ins[c]`` makes a comprehension's or a generator expression's
    function (3.11), which the call that follows runs at once."""
    return code_ins[c].opname == "MAKE_FUNCTION" and c > 0 and \
        isinstance(code_ins[c - 1].argval, types.CodeType) and \
        code_ins[c - 1].argval.co_name in _COMPREHENSIONS


_COMPREHENSIONS = frozenset({"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"})


def _method_load(ins) -> bool:
    """Whether ``ins`` loads a method for a call (``obj.step(body)``; 3.12 on, a
    ``LOAD_ATTR`` so flagged), not an attribute's value."""
    return ins.opname == "LOAD_METHOD" or ins.opname == "LOAD_ATTR" and \
        bool(ins.arg & 1) and sys.version_info >= (3, 12)


def _launcher(code_ins: list, c: int) -> bool:
    """Whether ``code_ins[c]`` calls a kernel's ``forall`` (``k.forall(m,
    stream=body)``), whose result launches it."""
    if code_ins[c].opname == "CALL" and c > 0 and code_ins[c - 1].opname == "PRECALL":
        c -= 1   # (3.11: the arguments are the PRECALL's)
    if code_ins[c].opname not in _CALLS:
        return False
    k = _begin(code_ins, c, _taken(code_ins[c]))[0]
    return k > 0 and code_ins[k - 1].opname in _ATTR_LOADS and code_ins[k - 1].argval == "forall"


def _child_args(code_ins: list, i: int, n: int, stored: set, made: dict,
                clamps: bool = True) -> set:
    """What the arguments of ``body.child(step, x)`` (the call ``code_ins[i]``)
    but its function read (``_arguments``)."""
    return set().union(*(v for k, v in _arguments(code_ins, i, n, stored, made, clamps).items()
                         if k != 0))


_ATTR_READS = frozenset({"getattr", "hasattr"})


def _slot_read(code_ins: list, i: int, n: int, scope: dict):
    """The path of the slot the call ``code_ins[i]`` (taking ``n`` values) reads by
    a constant name or key: ``getattr(st, "v")``, ``getattr(st, "v", 1.0)`` or
    ``hasattr(st, "v")``: ``st.v``; ``d.get("k", 1.0)`` of a dict ``d``:
    ``d["k"]``; else None. (A slot new to the object that the body sets after
    such a read is read before it is set: eagerly the next iteration finds it.)"""
    if code_ins[i].opname not in _CALLS or n < 1:
        return None
    ends = [end for key, end in _parameters(code_ins, i, n) if type(key) is int]
    j = _begin(code_ins, i, n)[0]
    callee = code_ins[j - 1] if j > 0 else None
    if callee is None or len(ends) != n:
        return None
    if callee.opname == "LOAD_GLOBAL" and callee.argval in _ATTR_READS and n in (2, 3):
        name = code_ins[ends[1] - 1]
        if ends[1] != ends[0] + 1 or name.opname not in _CONSTS or type(name.argval) is not str:
            return None
        holder = _chain(code_ins, ends[0] - 1)
        return None if holder is None else holder + ((".", name.argval),)
    if callee.opname in _ATTR_LOADS and callee.argval == "get" and n in (1, 2):
        key = code_ins[ends[0] - 1]
        holder = _chain(code_ins, j - 1)
        if holder is None or key.opname not in _CONSTS or ends[0] != j + 1 or \
                type(key.argval) not in (str, int) or \
                type(_resolve(scope, holder[:-1])) is not dict:
            return None
        return holder[:-1] + (("[]", key.argval),)
    return None

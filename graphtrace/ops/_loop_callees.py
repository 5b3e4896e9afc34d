"""What a call of a body's code calls, for ``_loop_code.py``: a kernel's launch
through ``forall`` (``_launcher``), a method loaded for the call
(``_method_load``), a comprehension's own code run at once (``_made_here``),
and what the arguments of ``body.child(step, x)`` but its function read
(``_child_args``).
"""
from __future__ import annotations

import sys
import types

from ._loop_operands import _CALLS, _arguments, _taken
from ._loop_stack import _ATTR_LOADS, _begin


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

"""A code's instructions with the keyword names of its calls told, for every
reader of bytecode (the device loops' in ``ops/``, the host callbacks', the
watch's), on each Python version graphtrace runs on.

A call with keywords loads its arguments as a positional call does; then:

- 3.11 and 3.12: ``KW_NAMES`` (before ``PRECALL``/``CALL``) names the last of
  them. 3.11's ``dis`` leaves its value unknown (the index of the names in
  ``co_consts``); 3.12's gives the names.
- 3.13 on: a ``LOAD_CONST`` of the names' tuple, then ``CALL_KW``, which takes
  the tuple off the stack with the arguments.

``instructions`` gives each ``KW_NAMES`` the names as its value; ``keyword_names``
reads them off a call; ``past_keywords`` steps over them, so that what follows
an argument reads as in the positional spelling (``show(x=self.box["a"])`` as
``show(self.box["a"])``). ``CALLS`` are the instructions that call.
"""
from __future__ import annotations

import dis
import sys

__all__ = ["CALLS", "instructions", "keyword_names", "method_load", "past_inlined",
           "past_keywords"]

# what calls (3.11: PRECALL, then CALL; 3.13: CALL_KW with keywords)
CALLS = frozenset({"PRECALL", "CALL", "CALL_KW", "CALL_FUNCTION_EX"})


def instructions(code) -> tuple:
    """``code``'s instructions, a ``KW_NAMES``'s keywords as its value (3.11's
    ``dis`` leaves them unknown: ``body.child(step, x=x)`` filled no parameter
    it could name)."""
    out = tuple(dis.get_instructions(code))
    if not any(c.opname == "KW_NAMES" and type(c.argval) is not tuple for c in out):
        return out
    consts = code.co_consts
    return tuple(c._replace(argval=consts[c.arg]) if c.opname == "KW_NAMES" and
                 type(c.argval) is not tuple and type(c.arg) is int and
                 0 <= c.arg < len(consts) and type(consts[c.arg]) is tuple else c
                 for c in out)


def method_load(ins) -> bool:
    """Whether ``ins`` loads a method for the call that follows (``self.mark()``):
    a ``LOAD_METHOD`` (3.11), or from 3.12 on a ``LOAD_ATTR`` so flagged (its
    argument's low bit), not an attribute's value."""
    return ins.opname == "LOAD_METHOD" or ins.opname == "LOAD_ATTR" and \
        sys.version_info >= (3, 12) and type(ins.arg) is int and bool(ins.arg & 1)


_BUILDS = frozenset({"BUILD_LIST", "BUILD_SET", "BUILD_MAP"})


def past_inlined(code_ins, j: int) -> int:
    """The index of the ``FOR_ITER`` of a comprehension inlined in its function
    (3.12 on, PEP 709) whose prologue begins at ``code_ins[j]``, just after the
    ``GET_ITER`` of its iterable: a ``LOAD_FAST_AND_CLEAR`` of each name it binds,
    ``SWAP``, the ``BUILD_LIST`` (set, dict) of its result, ``SWAP``; ``j`` itself
    where no such prologue begins there (3.11: the comprehension is a function of its
    own, called with the iterator)."""
    k = j
    while k < len(code_ins) and code_ins[k].opname == "LOAD_FAST_AND_CLEAR":
        k += 1
    if k == j or k + 3 >= len(code_ins) or code_ins[k].opname != "SWAP" or \
            code_ins[k + 1].opname not in _BUILDS or code_ins[k + 2].opname != "SWAP" or \
            code_ins[k + 3].opname != "FOR_ITER":
        return j
    return k + 3


def _names(ins) -> bool:
    """Whether instruction ``ins`` names a call's keywords: a ``KW_NAMES`` (3.11,
    3.12), or the load of a tuple of strings (a ``CALL_KW``'s, 3.13)."""
    return ins.opname == "KW_NAMES" or ins.opname == "LOAD_CONST" and \
        type(ins.argval) is tuple and all(type(k) is str for k in ins.argval)


def past_keywords(code_ins, j: int) -> int:
    """The index of the first instruction from ``code_ins[j]`` on that does not name
    the keywords of the call after it (``j`` itself where none does)."""
    while j < len(code_ins) and _names(code_ins[j]) and (
            code_ins[j].opname == "KW_NAMES" or
            j + 1 < len(code_ins) and code_ins[j + 1].opname == "CALL_KW"):
        j += 1
    return j


def keyword_names(code_ins, i: int):
    """The keywords of the call ``code_ins[i]`` (``PRECALL``, ``CALL`` or ``CALL_KW``),
    in the order of its last arguments: ``()`` where it has none, None where
    they cannot be told (``code_ins`` not read by ``instructions`` on 3.11)."""
    if code_ins[i].opname == "CALL_KW":
        names = code_ins[i - 1].argval if i else None
        return names if type(names) is tuple else None
    for c in code_ins[max(i - 2, 0):i]:
        if c.opname == "KW_NAMES":
            return c.argval if type(c.argval) is tuple else None
    return ()

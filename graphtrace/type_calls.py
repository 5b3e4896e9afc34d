"""Where a graph function's code asks ``type(a)`` of a parameter holding a dynamic
scalar (``type_calls``), and the refusal of such code (``refuse_type_calls``).

A dynamic scalar is a stand-in (``scalar.Scalar``) while the function is traced,
so that a later call with another number rebinds the graph instead of tracing it
again. ``isinstance(a, float)`` answers as the number would (the stand-in's
``__class__`` is the number's type, and that type keys the graph), but Python's
``type(a)`` reads the object's own type, which no object can answer for itself:
``type(a) is float`` is False whatever the number, silently recording the other
branch. Nothing is called on the stand-in there, so such a use is found in the
function's code and refused at its line before the function runs. Only the uses
that decide are refused: ``type(a)`` (or its ``__name__``) compared
(``is``, ``==``, ``in``, either side), a dict's key looked up
(``{float: f}[type(a)]``, ``d.get(type(a))``) or ``issubclass(type(a), ...)``.
Followed through a local (``t = type(a)``) and
out of a nested function returning it. Other uses (an error message's ``type(a).__name__`` after ``isinstance``, an
assert's message, ``print``) run only for what is no number, or decide nothing;
``s.empty(n, type(a))`` is refused where the temporary is made (temporary.py).
"""
from __future__ import annotations

import builtins
import dis
import inspect
import types
import weakref

from .errors import DynamicScalarError
from .scalar import Scalar

__all__ = ["type_calls", "refuse_type_calls"]

# what calls a function: PRECALL in 3.11 (its CALL follows); CALL on
_CALLS = frozenset({"PRECALL"} if "PRECALL" in dis.opmap else {"CALL"})
_OWN_LOADS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF"})
_STORES = frozenset({"STORE_FAST", "STORE_DEREF", "DELETE_FAST", "DELETE_DEREF"})
# what pushes an operand that type(a) may be compared with or looked up by
_OPERANDS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "LOAD_CONST", "LOAD_FAST", "LOAD_FAST_CHECK",
                       "LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_ATTR", "BUILD_TUPLE",
                       "BUILD_LIST", "BUILD_SET", "BUILD_MAP"})
_COMPARES = frozenset({"IS_OP", "COMPARE_OP", "CONTAINS_OP"})
# callables that look type(a), their first argument, up (a dict's) or compare it
_LOOKUPS = frozenset({"get", "setdefault", "pop", "__getitem__", "__contains__", "issubclass"})
_FOUND: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def type_calls(code) -> tuple:
    """``((name, line), ...)``: the calls ``type(name)`` in ``code`` (and in the code
    nested in it: a lambda, a comprehension) of one of its parameters that no code
    there binds again (``a = ...``, ``nonlocal a``), whose result decides
    (``_decides``). Found once per code object."""
    hit = _FOUND.get(code)
    if hit is None:
        params = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
        found, stored = [], set()
        _scan(code, params, _OWN_LOADS, found, stored)
        hit = _FOUND[code] = tuple((n, line) for n, line in found if n not in stored)
    return hit


def _scan(code, names: set, loads, found: list, stored: set) -> None:
    """Add to ``found`` the calls ``type(name)`` of ``names`` in ``code`` (loaded by one
    of ``loads``), and to ``stored`` those of ``names`` it binds; then the same in
    the code nested in it, where only the free names still are the parameters."""
    ins = list(dis.get_instructions(code))
    for i, op in enumerate(ins):
        if op.opname in _STORES and op.argval in names:
            stored.add(op.argval)
        if op.opname in ("LOAD_GLOBAL", "LOAD_NAME") and op.argval == "type" and \
                i + 2 < len(ins) and ins[i + 1].opname in loads and \
                ins[i + 1].argval in names and ins[i + 2].opname in _CALLS and \
                ins[i + 2].arg == 1 and \
                _decides(ins, i + 2 + (ins[i + 2].opname == "PRECALL"), ins[i - 1]):
            line = op.positions.lineno if op.positions is not None else None
            found.append((ins[i + 1].argval, line or code.co_firstlineno))
    for k in code.co_consts:
        if isinstance(k, types.CodeType):
            inner = names & set(k.co_freevars)
            if inner:
                _scan(k, inner, frozenset({"LOAD_DEREF"}), found, stored)


def _decides(ins: list, k: int, prev, seen: frozenset = frozenset()) -> bool:
    """Whether ``type(a)``, left on the stack by ``ins[k]`` (``prev`` the instruction
    before it), is compared or looked up by: followed past the operands pushed after
    it (names, constants, attributes, a tuple of them) to the instruction that takes
    it off the stack; through a local it is stored in (``t = type(a)``) to each load
    of that local, and out of a nested function that returns it (``lambda: type(a)``)."""
    depth, same = 0, True           # operands pushed above it; still type(a) itself
    for op in ins[k + 1:]:
        name = op.opname
        if name in _COMPARES:
            return depth <= 1                       # type(a) is one of the two
        if name == "BINARY_SUBSCR":
            return depth == 0                       # type(a) is the key
        if name == "KW_NAMES":
            continue                                # (3.11, 3.12) the keywords named
        if name in ("PRECALL", "CALL", "CALL_KW"):  # the first argument of a lookup
            # (CALL_KW: 3.13's, its keywords' names a constant loaded above them)
            return depth - (name == "CALL_KW") == op.arg - 1 and prev.argval in _LOOKUPS and \
                prev.opname in ("LOAD_GLOBAL", "LOAD_METHOD", "LOAD_ATTR")
        if depth == 0 and name == "RETURN_VALUE":
            return same                             # to code not read here
        if depth == 0 and name in ("STORE_FAST", "STORE_DEREF"):
            if name == "STORE_DEREF" or op.argval in seen:
                return name == "STORE_DEREF"        # read by nested code: not followed
            return any(_decides(ins, j, ins[j - 1], seen | {op.argval})
                       for j, load in enumerate(ins)
                       if load.opname in _OWN_LOADS and load.argval == op.argval)
        if name not in _OPERANDS or op.is_jump_target:
            return False                            # formatted, passed: decides nothing
        if name == "LOAD_ATTR" and depth == 0:
            same = False                            # type(a).__name__: as type(a)
            continue
        if name.startswith("BUILD_"):
            taken = op.arg * (2 if name == "BUILD_MAP" else 1)
            if taken > depth:
                return False                        # (type(a), ...): not it alone
            depth -= taken
        depth += 1 if name != "LOAD_ATTR" else 0
        if name == "LOAD_GLOBAL" and op.arg & 1:
            return False                            # NULL + a callable: a call of it
    return False


def refuse_type_calls(fn, function: str, values: dict) -> None:
    """Refuse, at its line, a call ``type(a)`` in ``fn``'s code of a parameter whose
    value in ``values`` (parameter name -> value) is a dynamic scalar."""
    f = inspect.unwrap(getattr(fn, "__func__", fn))
    code = getattr(f, "__code__", None)
    if code is None or getattr(f, "__globals__", {}).get("type", builtins.type) \
            is not builtins.type:   # a module's own name type: not Python's
        return
    for name, line in type_calls(code):
        value = values.get(name)
        if type(value) is not Scalar:
            continue
        kind = type(value._value).__name__
        raise DynamicScalarError(
            f"type({name}) of dynamic scalar argument {name!r} of {function} is "
            f"graphtrace's stand-in's type, not {kind}: a dynamic scalar stands for the "
            "numbers of later calls while it is traced, and type() cannot answer for it "
            f"(type({name}) is {kind} would be False and record the other branch); ask "
            f"isinstance({name}, {kind}), which answers as the number does (its type "
            "keys the graph: a call with a number of another type traces anew), use "
            f"{name}.dtype for a numpy number's dtype, or pass {name!r} in "
            f"@graph(static=({name!r},)) to trace a graph per value",
            source=(code.co_filename, line))

"""Whether code reads attributes by names its code does not hold
(``by_names``): ``getattr(self, name)``, ``getattr(self, f"layer{i}")``,
``hasattr(cfg, key)``, ``operator.attrgetter(self.key)``,
``operator.methodcaller(op)``, ``obj.__getattribute__(name)``. Which attribute
such code reads is known only when it runs, so no attribute name the code
loads says what a graph bakes in: ``names.reads_fields`` answers ``EVERY`` for
it, as for ``vars(cfg)``, and what the objects it may apply to hold is keyed
whole. A name loaded as a constant (``getattr(self, "lr")``) is read as
``self.lr`` (``chain_steps._by_name``) and needs none of this; nor does a class's
``__getattr__`` or ``__getattribute__`` looking up the very name it is asked
for (``getattr(self._values, name)``): that is a name the code it serves loads.
"""
from __future__ import annotations

import dis
import types
import weakref

__all__ = ["by_names"]

# callee -> the positions of its arguments that are attribute names (None: all)
# (-1: the last; object.__getattribute__(self, name) or super().__getattribute__(name))
_NAMED = {"getattr": (1,), "hasattr": (1,), "attrgetter": None, "methodcaller": (0,),
          "__getattribute__": (-1,)}
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
_LOADS = ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_ATTR", "LOAD_METHOD")
# what calls a function: PRECALL in 3.11 (its CALL follows); CALL and CALL_KW on;
# 3.10's; those marked take the keywords' names off the stack too
_CALLS = frozenset({"PRECALL"} if "PRECALL" in dis.opmap else
                   {"CALL", "CALL_KW", "CALL_FUNCTION", "CALL_METHOD", "CALL_FUNCTION_KW"})
_KEYWORDS = frozenset({"CALL_KW", "CALL_FUNCTION_KW"})
_LOOKUPS = frozenset({"__getattr__", "__getattribute__"})
_FAR = 256   # instructions a call's arguments may take before it is read as dynamic
_BY_NAMES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def by_names(code) -> bool:
    """Whether ``code`` (or the code nested in it) reads attributes by names known
    only when it runs: a call of one of ``_NAMED`` whose name arguments are not
    each a string constant, such a function used otherwise than called at once
    (``map(getattr, objs, names)``), or ``__getattribute__`` loaded. Found once
    per code object."""
    hit = _BY_NAMES.get(code)
    if hit is None:
        hit = _BY_NAMES[code] = _reads_by_names(code) or any(
            by_names(k) for k in code.co_consts if isinstance(k, types.CodeType))
    return hit


def _reads_by_names(code) -> bool:
    # a class's own lookup reads by the name the code it serves loads (cfg.lr:
    # getattr(self._values, name), object.__getattribute__(self, name))
    lookup = code.co_varnames[1] if code.co_name in _LOOKUPS and code.co_argcount == 2 else None
    if "__getattribute__" in code.co_names and lookup is None:
        return True
    if not any(name in code.co_names for name in _NAMED):
        return False
    instructions = list(dis.get_instructions(code))
    return any(ins.opname in _LOADS and ins.argval in _NAMED and
               not _constant_names(instructions, i, lookup)
               for i, ins in enumerate(instructions))


def _constant_names(instructions: list, at: int, lookup: str | None = None) -> bool:
    """Whether the function loaded at ``instructions[at]`` is called right away
    with a string constant for each argument that names an attribute (or the
    parameter ``lookup``, the name a ``__getattr__`` is asked for): the
    arguments are told apart by the depth of the stack each ends at (one value
    more than the last); code with a jump among them (``"a" if c else "b"``),
    or any other use, is read as naming no constant."""
    wanted = _NAMED[instructions[at].argval]
    depth, ends = 0, {}   # ends: depth -> where the last value so deep was pushed
    for j in range(at + 1, min(len(instructions), at + _FAR)):
        ins = instructions[j]
        if ins.opcode in _JUMPS:
            return False
        if ins.opname in _CALLS and ins.arg == depth - (ins.opname in _KEYWORDS):
            # the call of the function; a call in an argument takes its own too
            bounds = [at] + [ends.get(k, -1) for k in range(1, depth + 1)]
            if any(b < a for a, b in zip(bounds, bounds[1:])):
                return False
            positions = range(depth) if wanted is None else [k % max(depth, 1) for k in wanted]
            return all(k < depth and bounds[k + 1] == bounds[k] + 1 and
                       _constant(instructions[bounds[k + 1]], lookup) for k in positions)
        try:
            effect = dis.stack_effect(ins.opcode, ins.arg, jump=False)
        except ValueError:
            return False
        if depth + effect < 0:   # taken off the stack by another call (map(getattr, ...))
            return False
        depth += effect
        ends[depth] = j
    return False


def _constant(ins, lookup: str | None) -> bool:
    """Whether instruction ``ins`` loads a string constant, or parameter ``lookup``."""
    if ins.opname == "LOAD_CONST":
        return isinstance(ins.argval, str)
    return lookup is not None and ins.opname == "LOAD_FAST" and ins.argval == lookup

"""The branches of a test in bytecode, as ``container_flags`` reads them.

A test is a conditional jump forward (``POP_JUMP_IF_FALSE``, 3.11's
``POP_JUMP_FORWARD_IF_FALSE``, ``POP_JUMP_IF_NONE``): the instructions after it
run where it falls through (its arm), those from its target where it jumps.
Where the arm never falls through to the target (it ends in ``return``,
``raise``, ``continue``, ``break``, or jumps over an ``else``), the code from the
target on runs only where the test jumped, as far as no other jump lands in it
(``sides``): ``if DONE: return`` then ``DONE.append(True)`` changes ``DONE``
only where it was empty, as ``if not DONE: DONE.append(True)`` does.

Read by instruction names and ``dis`` alone, so that 3.11 and 3.12 (whose jump
and return instructions differ) read alike: jump targets are ``argval``
offsets, and ``dis.stack_effect`` tells what an arm leaves on the stack
(``effect``).
"""
from __future__ import annotations

import dis

__all__ = ["EXITS", "GOTOS", "effect", "jumps", "returns_none", "sides"]

EXITS = frozenset({"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"})
GOTOS = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP",
                   "JUMP_NO_INTERRUPT", "JUMP_ABSOLUTE"})
_JUMPING = frozenset(dis.hasjrel) | frozenset(dis.hasjabs) | frozenset(
    getattr(dis, "hasjump", ()))


def jumps(code, ins, at) -> list:
    """``(source, target)`` index pairs of ``ins`` (the instructions of ``code``;
    ``at``, offset -> index): each jump, and each instruction an exception handler
    covers, to the handler (``raise`` inside ``try``)."""
    out = [(n, at[i.argval]) for n, i in enumerate(ins)
           if i.opcode in _JUMPING and isinstance(i.argval, int) and i.argval in at]
    for e in getattr(dis.Bytecode(code), "exception_entries", ()):
        if e.target in at:
            out += [(n, at[e.target]) for n, i in enumerate(ins) if e.start <= i.offset < e.end]
    return out


def sides(ins, found, a: int, b: int) -> list:
    """``(start, end)`` index ranges of ``ins`` that run on one side of the test
    jumping at ``a`` to ``b`` only (``found``: ``jumps``): its arm, and where the
    arm never falls through to ``b``, the code from ``b`` on; each cut where a jump
    from outside it lands in it."""
    out = [_only(found, a + 1, b, None)]
    if "OR_POP" not in ins[a].opname and ins[b - 1].opname in EXITS | GOTOS:
        out.append(_only(found, b, len(ins), a))
    return [r for r in out if r[0] < r[1]]


def _only(found, start: int, end: int, entry) -> tuple:
    """``(start, e)``: the instructions from ``start`` that nothing reaches from
    outside them but falling in at ``start`` or the jump at ``entry`` to it."""
    moved = True
    while moved:
        moved = False
        for source, target in found:
            if start <= target < end and not start <= source < end and \
                    not (source == entry and target == start):
                end, moved = target, True
    return start, end


def effect(i):
    """What the instruction ``i`` does to the stack's depth where it does not jump
    (``dis.stack_effect``); None where ``dis`` cannot tell."""
    try:
        return dis.stack_effect(i.opcode, i.arg if i.opcode >= dis.HAVE_ARGUMENT else None)
    except ValueError:
        return None


def returns_none(ins, n: int) -> bool:
    """Whether ``ins[n]`` returns None: ``return`` (``RETURN_CONST None``, or
    ``RETURN_VALUE`` after ``LOAD_CONST None``)."""
    i = ins[n]
    if i.opname == "RETURN_CONST":
        return i.argval is None
    return i.opname == "RETURN_VALUE" and n > 0 and ins[n - 1].opname == "LOAD_CONST" and \
        ins[n - 1].argval is None

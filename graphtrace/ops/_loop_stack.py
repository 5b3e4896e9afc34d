"""Walking a code's instructions by the values they take off the stack, for
``_loop_code.py``.

``_begin`` walks back from an instruction over the code computing what it takes
off the stack; ``_reported`` tells the instructions whose value the code only
reports (prints, logs, formats into a message, asserts), which pick no work.
"""
from __future__ import annotations

import dis


def _begin(code_ins: list, i: int, values: int) -> tuple:
    """``(where, beyond)``: the instruction where the code computing the
    ``values`` values that ``code_ins[i]`` takes off the stack begins, and how
    many values that one pushes before theirs (x of LOAD_FAST_LOAD_FAST x, k)."""
    j, depth, end = i, 0, code_ins[i].offset
    while j > 0 and (depth < values or _other_branch(code_ins, j - 1, end) != j - 1):
        j = _other_branch(code_ins, j - 1, end)   # (the walk stops in no branch)
        try:
            depth += dis.stack_effect(code_ins[j].opcode, code_ins[j].arg, jump=False)
        except ValueError:   # an instruction dis cannot tell: read no further
            return j + 1, 0
    return j, max(depth - values, 0)


_FORWARD = frozenset({"JUMP_FORWARD", "JUMP", "JUMP_NO_INTERRUPT"})
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)


def _other_branch(code_ins: list, j: int, end: int) -> int:
    """Walking back from ``end``: where ``code_ins[j]`` ends the first branch of a
    conditional expression (``1 if k else 0``: its jump past the second one,
    which the walk has counted), the jump on the condition, whose value the walk
    takes next; else ``j``."""
    ins = code_ins[j]
    if ins.opname not in _FORWARD or not ins.offset < ins.argval <= end or \
            j + 1 >= len(code_ins):
        return j
    target = code_ins[j + 1].offset
    for c in range(j - 1, -1, -1):
        if code_ins[c].opcode in _JUMPS and code_ins[c].argval == target:
            return c
    return j


def _reported(code_ins: list) -> set:
    """The indices of the instructions whose value the code only reports: an
    argument of ``print`` or of a logger's method (``log.debug("%s", t[k])``), a
    value an f-string formats, an assert's test; also through arithmetic, a
    comparison or a negation on the way (``print(TOLS[k] * 2)``)."""
    errors = {ins.offset for ins in code_ins if ins.opname == "LOAD_ASSERTION_ERROR"}
    todo = [e for i in range(len(code_ins)) for e in _report_operands(code_ins, i, errors)]
    out: set = set()
    while todo:
        e = todo.pop()
        if e < 0 or e in out:
            continue
        out.add(e)
        n = _PASSING.get(code_ins[e].opname)
        if n:
            todo += _ends(code_ins, e, n)
    return out


def _report_operands(code_ins: list, i: int, errors: set) -> list:
    """The last instructions of the values ``code_ins[i]`` takes to report them:
    a call of ``print`` or a logger's method, an f-string's formatting, the
    jump on an assert's test (to or before its ``LOAD_ASSERTION_ERROR``)."""
    ins = code_ins[i]
    op = ins.opname
    if op in _FORMATS:
        return _ends(code_ins, i, _FORMATS[op] or (2 if ins.arg & 4 else 1))
    if "_IF_" in op and ins.opcode in _JUMPS and (ins.argval in errors or (
            i + 1 < len(code_ins) and code_ins[i + 1].offset in errors)):
        return _ends(code_ins, i, 1)
    if op not in ("PRECALL", "CALL", "CALL_KW") or code_ins[i - 1].opname == "PRECALL":
        return []   # (3.11: PRECALL, CALL: the PRECALL)
    n = ins.arg + (op == "CALL_KW")   # (3.13: the keywords' names, a value too)
    j = _begin(code_ins, i, n)[0]
    callee = code_ins[j - 1] if j > 0 else None
    if callee is None or not (callee.opname == "LOAD_GLOBAL" and callee.argval == "print" or
                              callee.opname in ("LOAD_ATTR", "LOAD_METHOD") and
                              callee.argval in _LOGS):
        return []
    return _ends(code_ins, i, n)


def _ends(code_ins: list, i: int, values: int) -> list:
    """The indices of the last instructions of the code computing each of the
    ``values`` values ``code_ins[i]`` takes off the stack (past 3.11's and
    3.12's ``KW_NAMES``, which takes none)."""
    while i > 0 and code_ins[i - 1].opname == "KW_NAMES":
        i -= 1
    return [_begin(code_ins, i, m)[0] - 1 for m in range(values)]


_LOGS = frozenset({"debug", "info", "warning", "warn", "error", "critical", "exception"})
_FORMATS = {"FORMAT_VALUE": None, "FORMAT_SIMPLE": 1, "FORMAT_WITH_SPEC": 2,
            "CONVERT_VALUE": 1}   # -> the values each takes (None: by its flags)
_PASSING = {"BINARY_OP": 2, "COMPARE_OP": 2, "CONTAINS_OP": 2, "IS_OP": 2, "TO_BOOL": 1,
            "UNARY_NEGATIVE": 1, "UNARY_NOT": 1, "UNARY_INVERT": 1}

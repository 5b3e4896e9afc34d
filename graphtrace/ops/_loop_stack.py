"""Walking a code's instructions by the values they take off the stack, for
``_loop_code.py`` and ``_loop_operands.py``.

``_begin`` walks back from an instruction over the code computing what it takes
off the stack (of the instructions ``bytecode.instructions`` reads); ``_chain``
and ``_set`` tell the slot (its path, ``_loop_paths.py``) an instruction loads or
stores, ``_holder`` the instruction loading what it takes
an attribute or an item of; ``_reported`` tells the instructions whose value the
code only reports (prints, logs, formats into a message, asserts), which pick no
work.
"""
from __future__ import annotations

import dis

_LOADS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_NAME", "LOAD_GLOBAL", "LOAD_DEREF",
                    "LOAD_CLASSDEREF", "LOAD_FAST_LOAD_FAST", "LOAD_CLOSURE",
                    "LOAD_FROM_DICT_OR_DEREF", "LOAD_FROM_DICT_OR_GLOBALS", "LOAD_FAST_BORROW",
                    "LOAD_FAST_BORROW_LOAD_FAST_BORROW"})
# (an inlined comprehension's LOAD_FAST_AND_CLEAR saves a name and puts it back: no read)
_STORES = frozenset({"STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF",
                     "STORE_FAST_STORE_FAST", "DELETE_FAST", "DELETE_NAME", "DELETE_GLOBAL",
                     "DELETE_DEREF"})
_ATTR_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR"})
_ATTR_STORES = frozenset({"STORE_ATTR", "DELETE_ATTR"})
_SUBSCRIPTS = {"BINARY_SUBSCR": 2, "BINARY_SLICE": 3}   # -> the values each takes
_ITEM_STORES = frozenset({"STORE_SUBSCR", "DELETE_SUBSCR"})
_CONSTS = frozenset({"LOAD_CONST", "LOAD_SMALL_INT"})


def _holder(code_ins: list, j: int) -> int:
    """The index of the instruction that loads what the instruction
    ``code_ins[j]`` takes an attribute or an item of (``st`` of ``st.k``, ``d``
    of ``d[key]``, also to store it: ``st.k = v``, ``d[key] = v``), else -1."""
    op = code_ins[j].opname
    if op in ("LOAD_ATTR", "LOAD_METHOD") or op in _ATTR_STORES:
        below = j - 2 if j > 1 and _copy(code_ins[j - 1], 1) else j - 1
        return below if below >= 0 and code_ins[below].opname != "SWAP" else -1
    if op in _SUBSCRIPTS or op in _ITEM_STORES or _reads_item(code_ins[j]):
        at = j - 2 if j > 2 and _copy(code_ins[j - 1], 2) and _copy(code_ins[j - 2], 2) \
            else j   # (d[key] += 1: the holder and the key, copied)
        if code_ins[at - 1].opname == "SWAP":
            return -1
        start, beyond = _begin(code_ins, at, _SUBSCRIPTS.get(op, 2) - 1)   # the key's code
        return start - 1 if not beyond else -1
    return -1


def _chain(code_ins: list, j: int):
    """The path of the slot whose value the instruction ``code_ins[j]`` loads
    (``("st", (".", "k"))`` of ``st.k``, ``("d", ("[]", "k"))`` of ``d["k"]``),
    where the code names it all the way from a name, else None."""
    ins = code_ins[j]
    if ins.opname in _LOADS:
        return (ins.argval[-1] if isinstance(ins.argval, tuple) else ins.argval,)
    if ins.opname in ("LOAD_ATTR", "LOAD_METHOD"):
        below = j - 2 if j > 1 and _copy(code_ins[j - 1], 1) else j - 1   # st.k += 1
        holder = _chain(code_ins, below) if below >= 0 else None
        return holder + ((".", ins.argval),) if holder is not None else None
    if _reads_item(ins):
        key = j - 3 if j > 2 and _copy(code_ins[j - 1], 2) and _copy(code_ins[j - 2], 2) \
            else j - 1   # d["k"] += 1
        return _keyed(code_ins, key, "[]")
    return None


def _item_read(code_ins: list, j: int):
    """The path of the item the instruction ``code_ins[j]`` reads: by its constant
    key (``st[0]``), else ``_ANY_KEY`` after its holder's (``st[k]``), where the code
    names the holder from a name; else None."""
    path = _chain(code_ins, j)
    if path is None:
        h = _holder(code_ins, j)
        holder = _chain(code_ins, h) if h >= 0 else None
        path = holder + (_ANY_KEY,) if holder is not None else None
    return path


_ANY_KEY = ("key", None)   # after a holder's path: an item by a key computed (st[k])


def _keyed(code_ins: list, key: int, kind: str):
    """``holder path + ((kind, key),)`` where ``code_ins[key]`` loads a constant
    key and the instruction before it the holder, else None."""
    if key < 1 or code_ins[key].opname not in _CONSTS:
        return None
    k = code_ins[key].argval
    try:
        hash(k)
    except TypeError:
        return None
    holder = _chain(code_ins, key - 1)
    return holder + ((kind, k),) if holder is not None else None


def _copy(ins, n: int) -> bool:
    return ins.opname == "COPY" and ins.arg == n


def _set(code_ins: list, i: int):
    """The path of the slot the instruction ``code_ins[i]`` stores or deletes
    (a name, ``st.k = ...``, ``d["k"] = ...``) where the code names it from a
    name, else None."""
    ins = code_ins[i]
    if ins.opname in _ATTR_STORES:
        holder = _chain(code_ins, i - 1) if i > 0 else None
        return holder + ((".", ins.argval),) if holder is not None else \
            _augmented(code_ins, i, 1)
    if ins.opname in _ITEM_STORES:
        return _keyed(code_ins, i - 1, "[]") or _augmented(code_ins, i, 2)
    return None


def _augmented(code_ins: list, i: int, swaps: int):
    """The path of the slot an augmented assignment stores (``st.k += 1``, after
    one SWAP; ``d["k"] += 1``, after two): the one its value was loaded from."""
    j = i - swaps
    if j < 1 or any(code_ins[x].opname != "SWAP" for x in range(j, i)):
        return None
    load = _begin(code_ins, j, 1)[0] + swaps   # past the COPYs of the holder (and key)
    ins = code_ins[load] if load < j else None
    if ins is None or not (_reads_item(ins) if swaps == 2 else
                           ins.opname == "LOAD_ATTR" and ins.argval == code_ins[i].argval):
        return None
    return _chain(code_ins, load)


def _unpacked(code_ins: list, at: int) -> int:
    """Where the value stored by the instruction at ``at`` is unpacked from a
    sequence (``src, dst = pick(k)``: the ``UNPACK_SEQUENCE``, each name taking what
    the sequence's code reads), past the stores of the names before it; else
    ``at``."""
    j = at - 1
    while j > 0 and code_ins[j].opname in _STORES:
        j -= 1
    return j if j >= 0 and code_ins[j].opname in ("UNPACK_SEQUENCE", "UNPACK_EX") else at


def _reads_item(ins) -> bool:
    return ins.opname == "BINARY_SUBSCR" or ins.opname == "BINARY_OP" and ins.argrepr == "[]"



def _begin(code_ins: list, i: int, values: int) -> tuple:
    """``(where, beyond)``: the instruction where the code computing the
    ``values`` values that ``code_ins[i]`` takes off the stack begins, and how
    many values that one pushes before theirs (x of LOAD_FAST_LOAD_FAST x, k)."""
    j, depth, end = i, 0, code_ins[i].offset
    while j > 0 and (depth < values or _other_branch(code_ins, j - 1, end) != j - 1 or
                     _right_operand(code_ins, j, end)):
        j = _other_branch(code_ins, j - 1, end)   # (the walk stops in no branch)
        try:
            depth += dis.stack_effect(code_ins[j].opcode, code_ins[j].arg, jump=False)
        except ValueError:   # an instruction dis cannot tell: read no further
            return j + 1, 0
    return j, max(depth - values, 0)


def _right_operand(code_ins: list, j: int, end: int) -> bool:
    """Whether ``code_ins[j]`` begins the right operand of an ``and`` or an ``or``
    (``t or 1.0``) whose value ends at ``end``: a jump on the left one just
    before it (past a ``POP_TOP``, 3.12 on, and a ``NOT_TAKEN``, 3.14) goes past
    it, up to ``end``, with that value; the walk takes the left one too."""
    k = j - 1
    while k > 0 and j - k < 3 and code_ins[k].opname in ("POP_TOP", "NOT_TAKEN"):
        k -= 1
    c = code_ins[k]
    return "_IF_" in c.opname and c.opcode in _JUMPS and \
        code_ins[j].offset < c.argval <= end


def _swapped(code_ins: list, i: int) -> tuple:
    """``(where, values)``: for a value that ``code_ins[i]`` takes which a tuple
    assignment swapped onto the stack (``a, b, c = x, y, z``: a ``SWAP``), that
    swap and all the values it swapped (which one each name takes, not told);
    else ``(i, 1)``."""
    start = _begin(code_ins, i, 1)[0]
    swap = next((j for j in range(i - 1, start - 1, -1) if code_ins[j].opname == "SWAP"),
                None)
    return (i, 1) if swap is None else (swap, code_ins[swap].arg)


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

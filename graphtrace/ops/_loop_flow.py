"""The paths through a loop body's code, for ``_loop_code.py``.

Python runs a body once, when it is recorded; the device repeats that one
pass, while each iteration of the Python code might have taken another path.
So ``_Region`` reads a body's code by its control-flow graph, not in code
order: a slot counts as stored before a read only where every path from the
body's entry to the read stores it (``if reset: t = 0.0`` then ``add(x, t)``
reads the ``t`` the iteration before left), and a name holds what any store of
it that may reach a read computed it from (``t += 1``, then ``v = t`` in one
branch and ``v = 1.0`` in the other: ``v`` holds ``t``, and what the test
deciding between them read: ``_guards``).

``_graph`` reads the graph of a code once (basic blocks cut at jumps, their
targets and the edges of the exception table: try/except, with, a body's own
loops, match statements, conditional expressions, ``and``/``or``); ``span``
tells the instructions of a body in it, with the handlers of its try
statements that the compiler placed past its end (3.12 on); ``states`` runs a
transfer function over them to a fixed point and gives the state each block
is entered with, a ``_Stored`` (stored on every path, and on some) and what
each slot stored was computed from. A branch decided by a value the body
leaves alone (``if FLAG:``) goes, at each iteration, where it went when the
body ran: ``_decided`` tells those, and ``states`` follows them only there.
``_controlled`` tells the lines a jump decides to run, ``_trips`` what decides
how many times a for loop runs.
"""
from __future__ import annotations

import dis
import functools
import heapq
import operator

from ..bytecode import instructions
from ..chains import MISSING
from ._loop_paths import _ITEMS, _LEN, _WHOLE, _found
from ._loop_stack import (_ATTR_STORES, _CONSTS, _FORWARD, _ITEM_STORES, _JUMPS, _LOADS,
                          _STORES, _begin, _chain, _set)

_GOTO = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_ABSOLUTE", "JUMP",
                   "JUMP_NO_INTERRUPT", "JUMP_BACKWARD_NO_INTERRUPT"})
_ENDS = frozenset({"RETURN_VALUE", "RETURN_CONST", "RERAISE", "RAISE_VARARGS"})


class _Stored(set):
    """The paths stored on every path to a point of the code (the set itself),
    and those stored on some (``may``)."""

    __slots__ = ("may",)

    def __init__(self, must=(), may=()):
        super().__init__(must)
        self.may = set(may) | self

    def add(self, path) -> None:
        set.add(self, path)
        self.may.add(path)


class _Graph:
    """A code's instructions and, by their index, where each goes next: ``succ``
    (its jumps and the next one), ``handler`` (the handler an exception raised
    there goes to, -1 for none), ``leader`` (whether a block begins there),
    ``cold`` (whether only an exception reaches it)."""

    __slots__ = ("ins", "succ", "handler", "leader", "cold")


@functools.lru_cache(maxsize=256)
def _graph(code) -> _Graph:
    g = _Graph()
    g.ins = ins = instructions(code)
    n = len(ins)
    at = {c.offset: k for k, c in enumerate(ins)}
    g.handler, g.leader, g.succ = [-1] * n, [False] * n, []
    for e in getattr(dis.Bytecode(code), "exception_entries", ()):
        target = at.get(e.target, -1)
        covered = [k for k, c in enumerate(ins) if e.start <= c.offset < e.end]
        for k in covered:
            g.handler[k] = target
        for k in (covered[0], covered[-1] + 1, target) if covered else ():
            if 0 <= k < n:
                g.leader[k] = True
    for k, c in enumerate(ins):
        if c.opname in _ENDS:
            nxt: tuple = ()
        elif c.opcode in _JUMPS and c.argval in at and not _swallows(ins, k):
            nxt = (at[c.argval],) if c.opname in _GOTO else (k + 1, at[c.argval])
        else:
            nxt = (k + 1,)
        nxt = tuple(j for j in nxt if j < n)
        g.succ.append(nxt)
        if nxt != (k + 1,):
            for j in nxt + (k + 1,):
                if j < n:
                    g.leader[j] = True
    if n:
        g.leader[0] = True
    seen, todo = set(), [0] if n else []
    while todo:   # what the code reaches without an exception
        k = todo.pop()
        if k not in seen:
            seen.add(k)
            todo += g.succ[k]
    g.cold = [k not in seen for k in range(n)]
    return g


def _swallows(ins: tuple, k: int) -> bool:
    """Whether the jump ``ins[k]`` goes on past a ``with`` statement where its
    context manager's ``__exit__`` swallowed an exception: a path not taken
    here (``with nvtx.annotate("step"): tmp = body.empty(4)`` then a read of
    ``tmp`` after it reads the ``tmp`` stored), the exception raised on
    instead. A body whose Python raises at some iterations is not one a
    recorded pass stands for anyway."""
    return any(c.opname == "WITH_EXCEPT_START" for c in ins[max(k - 2, 0):k])


def span(g: _Graph, lo: int, hi: int, keep=None) -> tuple:
    """``(entry, members, linear)`` of the body whose code lies strictly between
    the offsets ``lo`` and ``hi`` (or at the offsets ``keep``, entered after
    ``lo``): the index of its first instruction (None where it has none), those
    of its instructions, with, for a ``with`` block (``lo`` >= 0), the handlers
    of its try and with statements placed past it and the code they run (not
    its own handler's, by which it is left), and whether it runs them one after
    another, with no branch."""
    ins = g.ins
    members = {k for k, c in enumerate(ins) if (c.offset in keep if keep is not None
                                                else lo < c.offset < hi)}
    entry = next((k for k, c in enumerate(ins) if c.offset > lo), None)
    if entry not in members:
        return None, set(), True
    outer = g.handler[entry] if lo >= 0 else -1
    if keep is None and lo >= 0:
        todo = [g.handler[k] for k in members]
        while todo:   # (3.12: an except clause's code lies past the body)
            j = todo.pop()
            if j >= 0 and j != outer and j not in members and g.cold[j]:
                members.add(j)
                todo += g.succ[j] + (g.handler[j],)
    last = max(members)
    linear = all(k == last or g.succ[k] == (k + 1,) and k + 1 in members and
                 g.handler[k] not in members for k in members)
    return entry, members, linear


def states(g: _Graph, entry: int, members: set, start: tuple, step, taken=None) -> list:
    """``(indices, state)`` of each block of ``members`` that ``entry`` reaches, in
    code order: its instructions and the state it is entered with, where
    ``start`` (``(_Stored, made)``) is the entry's and ``step(i, stored, made)``
    changes a state by the instruction ``i`` (true where it may have); a state
    meets another where paths join (stored: on every path; made: what any of
    them computed). ``taken``: jump -> the instruction it goes to, each time
    (``_decided``)."""
    blocks, into, todo = {}, {entry: _copy(start)}, [entry]
    queued = {entry}
    while todo:
        b = heapq.heappop(todo)
        queued.discard(b)
        if b not in blocks:
            blocks[b] = _block(g, b, entry, members, taken or {})
        body, nxt, handler = blocks[b]
        stored, made = state = _copy(into[b])
        changed = True
        for i in body:
            if handler is not None and changed:   # an exception may leave from any
                _into(into, handler, state, todo, queued)   # instruction
            changed = step(i, stored, made)
        for j in nxt:
            _into(into, j, state, todo, queued)
    return [(blocks[b][0], into[b]) for b in sorted(blocks)]


def _block(g: _Graph, b: int, entry: int, members: set, taken: dict) -> tuple:
    """``(indices, successors, handler)`` of the block of ``members`` beginning at
    ``b``: its instructions up to the next block's or a jump, the blocks it goes
    to next, and its handler (None where it has none of ``members``)."""
    body, k = [b], b
    while g.succ[k] == (k + 1,) and k + 1 in members and not g.leader[k + 1] and \
            k + 1 != entry:
        k += 1
        body.append(k)
    handler = g.handler[b] if g.handler[b] in members else None
    nxt = (taken[k],) if k in taken else g.succ[k]
    return body, tuple(j for j in nxt if j in members), handler


def _copy(state: tuple) -> tuple:
    stored, made = state
    return _Stored(stored, stored.may), dict(made)


def _into(into: dict, b: int, state: tuple, todo: list, queued: set) -> None:
    """Meet ``state`` into the state block ``b`` is entered with; queue ``b`` where
    that changed."""
    old = into.get(b)
    if old is None:
        into[b] = _copy(state)
        changed = True
    else:
        (stored, made), (was, held) = state, old
        changed = not was <= stored or not stored.may <= was.may
        if changed:
            into[b] = (_Stored(was & stored, was.may | stored.may), held)
        for path, reads in made.items():
            before = held.get(path)
            if before is None or not reads <= before:
                held[path] = reads if before is None else before | reads
                changed = True
    if changed and b not in queued:
        queued.add(b)
        heapq.heappush(todo, b)


_FIXED = frozenset({bool, int, float, str, type(None)})
_COMPARE = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
            ">": operator.gt, ">=": operator.ge}


def _decided(g: _Graph, members: set, scope: dict, now: dict) -> dict:
    """The branches of ``members`` that a test of values the body leaves alone
    decides (``if FLAG:``, ``if self.mode == "a":``; a bool, a number, a string
    or None, the same object in ``scope``, when the body began, and ``now``, and
    stored by none of its code): jump -> the instruction it goes to, as it did
    when the body ran and would at each iteration."""
    ins, out = g.ins, {}
    stored: set = set()
    for k in members:
        c = ins[k]
        if c.opname in _STORES or c.opname == "STORE_FAST_LOAD_FAST":
            names = c.argval if isinstance(c.argval, tuple) else (c.argval,)
            stored.update((n,) for n in names[:1 if c.opname == "STORE_FAST_LOAD_FAST" else None])
        elif c.opname in _ATTR_STORES or c.opname in _ITEM_STORES:
            stored.add(_set(ins, k))   # (None: on a path the code does not name)
    for k in members:
        name = ins[k].opname
        if "_IF_" not in name or "_OR_POP" in name or len(g.succ[k]) != 2:
            continue
        v = _tested(ins, k, scope, now, stored)
        if v is MISSING:
            continue
        jumps = v is not None if "NOT_NONE" in name else v is None if "NONE" in name else \
            bool(v) if "TRUE" in name else not v
        out[k] = g.succ[k][1] if jumps else g.succ[k][0]
    return out


def _tested(ins: tuple, k: int, scope: dict, now: dict, stored: set):
    """The value the jump ``ins[k]`` tests, where its code only loads values the
    body leaves alone and constants, and compares or negates them; else MISSING."""
    start, beyond = _begin(ins, k, 1)
    stack: list = []
    for j in range(start, k) if not beyond else ():
        c = ins[j]
        op = c.opname
        if op in _LOADS and not isinstance(c.argval, tuple) or op == "LOAD_ATTR" and \
                stack and "NULL" not in c.argrepr:   # (3.12: NULL|self, a method's)
            path = _chain(ins, j)
            if op == "LOAD_ATTR":
                stack.pop()
            stack.append(_fixed(path, scope, now, stored) if path is not None else MISSING)
        elif op in _CONSTS:
            stack.append(c.argval)
        elif op in ("COMPARE_OP", "IS_OP", "CONTAINS_OP") and len(stack) > 1:
            b, a = stack.pop(), stack.pop()
            stack.append(_compare(op, c, a, b))
        elif op in ("UNARY_NOT", "TO_BOOL") and stack:
            v = stack.pop()
            stack.append(v if v is MISSING else not v if op == "UNARY_NOT" else bool(v))
        elif op != "NOP":
            return MISSING
    return stack[0] if len(stack) == 1 else MISSING


def _fixed(path: tuple, scope: dict, now: dict, stored: set):
    """The value at ``path`` where it is a bool, a number, a string or None that
    the body's code stores nowhere on its way and that is the same object when
    the body began and now; else MISSING."""
    v = _found(scope, path)
    if type(v) not in _FIXED or _found(now, path) is not v or \
            None in stored and len(path) > 1 or \
            any(q is not None and q[:len(path)] == path[:len(q)] for q in stored):
        return MISSING
    return v


def _compare(op: str, c, a, b):
    """``a`` compared with ``b`` as the instruction ``c`` does, where both are
    known and the comparison runs none of the program's code."""
    if a is MISSING or b is MISSING or type(a) not in _FIXED and op != "CONTAINS_OP" or \
            type(b) not in _FIXED and not (op == "CONTAINS_OP" and type(b) in (tuple, frozenset)
                                           and all(type(x) in _FIXED for x in b)):
        return MISSING
    if op == "IS_OP":
        return (a is b) != bool(c.arg)
    if op == "CONTAINS_OP":
        return (a in b) != bool(c.arg)
    test = _COMPARE.get(c.argrepr.removeprefix("bool(").removesuffix(")"))
    try:
        return test(a, b) if test is not None else MISSING
    except TypeError:   # (3 < "a")
        return MISSING


def _controlled(code_ins: list, i: int) -> set:
    """The lines the jump ``code_ins[i]`` (a for loop's, a test's) decides to run:
    those it jumps past or back over, and an ``else`` the part it enters jumps
    past."""
    lo, hi = _decides(code_ins, i)
    return {c.positions.lineno for c in code_ins if lo <= c.offset < hi and
            c.positions is not None and c.positions.lineno is not None}


def _decides(code_ins: list, i: int) -> tuple:
    """``(lo, hi)``: the offsets of the code the jump ``code_ins[i]`` decides to run
    lie in ``lo <= offset < hi`` (``_controlled``)."""
    ins = code_ins[i]
    lo, hi = sorted((ins.offset + 1, ins.argval))
    k = next((j for j, c in enumerate(code_ins) if c.offset == ins.argval), None)
    before = code_ins[k - 1] if k else None
    if ins.argval > ins.offset and before is not None and before.opname in _FORWARD and \
            before.argval > ins.argval:   # if ...: else: (its jump past the else)
        hi = before.argval
    return lo, hi


def _guards(code_ins: list, members) -> list:
    """``(index, lo, hi)`` of each jump of ``members`` (a test's, a for loop's) and
    the offsets of the code it decides to run (``_decides``): a value stored
    there holds what the jump's test read too (``if mode == 0: v = 1.0``)."""
    return [(j, *_decides(code_ins, j)) for j in sorted(members)
            if code_ins[j].opname == "FOR_ITER" or "_IF_" in code_ins[j].opname and
            code_ins[j].opcode in _JUMPS]


def _trips(read: set) -> set:
    """What decides how many times a for loop over what reads ``read`` runs:
    the numbers it reads (``range(k)``), and the length (a set's items) of a
    container it iterates whole (``lst``, ``d.items()``), not its items."""
    out = {q for q in read if q[-1] != _WHOLE}
    for q in read - out:
        for c in (q[:-1], q[:-2]) if len(q) > 2 and q[-2][0] == "." else (q[:-1],):
            out |= {c + (_LEN,), c + (_ITEMS,)}
    return out

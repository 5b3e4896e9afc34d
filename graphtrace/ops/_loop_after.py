"""What code after a loop or branch body reads of the Python state the body changed.

Python runs the body of ``s.while_loop``, ``s.if_then``, ``s.if_else`` or
``s.switch`` once, when it is recorded; the device runs it zero, one or many
times. Code after the block that reads what the body changed (``u, v = v, u``
in a branch, then ``s.copy(out, u)``; ``res = y`` in a loop that may run no
time; ``sweeps += 1`` then ``add(x, float(sweeps))``) would see the values of
that one recorded pass, whatever the device does. Such a body is refused at
the block's line:

- an array slot (its old or its new value an array of the trace) that the
  code after the block loads before storing it: at once, when the block closes;
- any other slot (a number, a string, a container's length) that the code
  after the block hands to work, indexes or sizes by, or decides by which work
  runs (``LoopState``'s own notions): when the trace ends, once the lines that
  record work are known.

"After the block" is every path from the block's end in the user's code,
following its jumps: a Python for loop around the block comes back to the
block's own code. A slot stored again before it is read is not read.
``LoopState`` (``_loop_state.py``) takes the snapshots of the user's frame the
slots changed are told by; ``_Region`` (``_loop_code.py``) what the code after
reads, kept to the instructions run before the slot's name is stored again.
"""
from __future__ import annotations

import dis
from collections import deque

from ..buffers import is_array
from ..errors import ArgumentError
from ._loop_code import _LOADS, _STORES, _Region, _chain
from ._loop_paths import _label

_GOTO = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_ABSOLUTE", "JUMP",
                   "JUMP_NO_INTERRUPT", "JUMP_BACKWARD_NO_INTERRUPT"})
_ENDS = frozenset({"RETURN_VALUE", "RETURN_CONST", "RERAISE", "RAISE_VARARGS"})
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)


def refuse_escapes(t, state, what: str, source) -> None:
    """Refuse (arrays, at once) or hold for the trace's end (the rest) what the
    code after the block reads of the slots its body changed (``state``: a
    ``LoopState`` of the user's frame, taken when the block was entered)."""
    if state is None or state.frame is None:
        return
    _, changed = state.closed()
    if not changed:
        return
    code = state.frame.f_code
    code_ins = list(dis.get_instructions(code))
    lasti = state.frame.f_lasti   # (3.11: in the cache after the call, in a call of it)
    start = max(k for k, ins in enumerate(code_ins) if ins.offset <= lasti)
    arrays, later = [], []
    for root in dict.fromkeys(p[0] for p in changed):
        keep, lines = _after(code_ins, start, root)
        region = _Kept((code, -1, 1 << 62), state.now, keep)
        for p in (p for p in changed if p[0] == root and region.carried(p) is True):
            line = lines.get(p, lines.get(p[:1]))
            if _array(t, state.before[p][0], state.after[p][0]):
                arrays.append((p, line))
            else:
                later.append((p, line, region))
    if arrays:
        raise ArgumentError(_message(arrays, what, "array"), source)
    if later:
        t.escapes.append(lambda graph: _refuse_numbers(state, later, graph, what, source))


def _refuse_numbers(state, later: list, graph, what: str, source) -> None:
    """At the trace's end: refuse the slots in ``later`` that the code after the
    block hands to work (``graph``: all of it), indexes or sizes by, or decides
    by which work runs."""
    hits = []
    for p, line, region in later:
        work = state._work(region, (graph,))
        if region.indexes_with(p) or region.sizes_with(p) or \
                region.decides_with(p, work) or state._hands_on(region, p, True, (graph,)):
            hits.append((p, line))
    if hits:
        raise ArgumentError(_message(hits, what, "number"), source)


def _array(t, old, new) -> bool:
    return any(is_array(x) and t.cached_buffer(x) is not None for x in (old, new))


def _after(code_ins: list, start: int, name: str) -> tuple:
    """``(offsets, lines)``: the offsets of the instructions run after
    ``code_ins[start]`` on some path before the name ``name`` is stored again,
    and the line where each slot under it (its path) is loaded first on them."""
    keep, lines, seen, todo = set(), {}, set(), deque([start + 1])
    at = {ins.offset: k for k, ins in enumerate(code_ins)}
    while todo:
        k = todo.popleft()
        if k >= len(code_ins) or k in seen:
            continue
        seen.add(k)
        ins = code_ins[k]
        names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
        if ins.opname in _STORES and name in names:
            continue   # stored again: this path reads it no more
        keep.add(ins.offset)
        path = _chain(code_ins, k) if ins.opname not in _LOADS or name in names else None
        if path is not None and path[0] == name and ins.positions is not None:
            lines.setdefault(path, ins.positions.lineno)
        if ins.opname in _ENDS:
            continue
        if ins.opcode in _JUMPS and ins.argval in at:
            todo.append(at[ins.argval])
            if ins.opname in _GOTO:
                continue
        todo.append(k + 1)
    return keep, lines


class _Kept(_Region):
    """A ``_Region`` of the instructions at the offsets ``keep`` only (those of a
    comprehension they make, all)."""

    def __init__(self, code: tuple, scope: dict, keep: set):
        self.keep, self.inner = keep, False
        super().__init__(code, scope)

    def _note(self, code_ins: list, i: int, stored: set, made: dict) -> None:
        if self.inner or code_ins[i].offset in self.keep:
            super()._note(code_ins, i, stored, made)

    def _comprehension(self, code_ins: list, i: int, stored: set, made: dict) -> None:
        self.inner = True
        try:
            super()._comprehension(code_ins, i, stored, made)
        finally:
            self.inner = False


_ADVICE = {
    "array": "choose the array outside the block (set {name} before it and leave it "
             "unchanged in the body), or have the body's kernels write their result into "
             "an array the code after the block reads",
    "number": "compute it on the device (a counter in a device array that the body's "
              "kernels update, read by the kernels after the block), or set it before the "
              "block and leave it unchanged in the body",
}


def _message(hits: list, what: str, kind: str) -> str:
    names = sorted({_label(p) for p, _ in hits})
    lines = sorted({line for _, line in hits if line is not None})
    listed = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    where = f"line {', '.join(map(str, lines))}" if lines else "the code after it"
    runs = "zero, one or many times" if what.startswith("s.while_loop") else \
        "once or not at all, as its condition decides"
    return (f"the body of {what} changes {listed}, which {where} reads after the block: "
            f"Python runs the body once, when it is recorded, while the device runs it {runs}, "
            "so the code after the block would always see what that one recorded pass left; "
            + _ADVICE[kind].format(name=names[0]))

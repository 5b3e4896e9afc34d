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
- a container holding arrays of the trace that the body adds an item to or
  removes one from (``picks.append(y)``, ``d["k"] = y``, ``stack.pop()``; the
  new item has no slot before), where the code after the block reads its
  items (``picks[-1]``, ``d.get("k", x)``, ``for x in stack``, ``f(picks)``;
  not ``len(picks)`` nor ``picks.append(z)``): at once too;
- any other slot (a number, a string, a container's length) that the code
  after the block hands to work, indexes or sizes by, or decides by which work
  runs (``LoopState``'s own notions): when the trace ends, once the lines that
  record work are known;
- each of these under a name the body set first, that held nothing before the
  block (``v = 3.0`` in one arm, ``v = 5.0`` in the other; ``kern = mul`` in a
  loop that may run no time: ``LoopState.first_set``), or an attribute or a
  key the body gave an object or a dict it began with (``st.v = 3.0``,
  ``d["k"] = 3.0``), by what it holds now.

"After the block" is every path from the block's end in the user's code,
following its jumps: a Python for loop around the block comes back to the
block's own code, and a function of the program's it calls reads by its own
global or closure names (``post(s, a)`` testing ``MODE``), as does a function
held in a name, called or handed to one (``get()`` of ``get, set_ =
make_mode()``, ``post(s, a, get)``: ``_loop_held.py``). A slot stored again
before it is read is not read. Where
the block is in a helper, the code after the call in each frame calling it, up
to the graph function's own, reads too (``helper(s, x)`` setting ``ST.res = y``
in a branch, then ``s.copy(out, ST.res)``): the slots there are those under a
container or an object the body changed a slot of, a global or a closure's
cell the body changed, and the name the caller stores the helper's result in
where the helper returns what the body changed (``r = helper(s, x)``).
``LoopState`` (``_loop_state.py``) takes the snapshots of the user's frame the
slots changed are told by; ``_Region`` (``_loop_code.py``) what the code after
reads, kept to the instructions run before the slot's name is stored again,
or past that store where they loaded it before (``go = kern[1, 4, s]; kern =
add; go(x)``: what was made of it is still used).
"""
from __future__ import annotations

import dis
import functools
from collections import deque

from ..arrays import is_array
from ..chains import MISSING
from ..errors import ArgumentError, _is_internal, format_source
from ..names import _global_names
from ._loop_code import _Region
from ._loop_held import handed_reads, handed_use
from ._loop_paths import _LEN, _ORDER, _WHOLE, _resolve, quoted
from ._loop_stack import (_ATTR_STORES, _ITEM_STORES, _LOADS, _STORES, _chain, _holder,
                          _reads_item, _set)
from ._loop_state import LoopState
from ._loop_stored import stored_slots
from ._loop_work import work_callable

_GOTO = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_ABSOLUTE", "JUMP",
                   "JUMP_NO_INTERRUPT", "JUMP_BACKWARD_NO_INTERRUPT"})
_ENDS = frozenset({"RETURN_VALUE", "RETURN_CONST", "RERAISE", "RAISE_VARARGS"})
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)


def refuse_escapes(t, state, what: str, source, body=None, arms: int = 1) -> None:
    """Refuse (arrays, at once) or hold for the trace's end (the rest) what the
    code after the block reads of the slots its body changed (``state``: a
    ``LoopState`` of the user's frame, taken when the block was entered), there
    and in each frame calling that one, up to the graph function's own. Of a
    block of several bodies (``arms``; ``body``: a ``body=`` function), a slot
    its code stores counts as changed whatever it holds after
    (``_loop_stored.py``: ``v = 3.0`` in ``then``, ``v = 5.0`` as before in
    ``otherwise``)."""
    if state is None or state.frame is None:
        return
    _, changed = state.closed()
    changed = [p for p in changed if state.before[p][0] is not None or   # st.t = None
               not _made_in(t, state, p)]   # before, then st.t = body.zeros(n): as new
    changed = changed + [p for p in state.first_set()   # v = 3.0 in a branch, first:
                         if not _made_in(t, state, p)]   # unset eagerly where not taken
    if arms > 1:   # the last body recorded set it back: the one taken may not have
        changed = changed + stored_slots(state, changed, body)
    if not changed:
        return
    slots = {p: _kind(t, state, p) for p in changed   # (a string's length: the string's;
             if (p[-1] != _LEN or p[:-1] not in changed) and   # a dict's order, with its
             (p[-1] != _ORDER or p[:-1] + (_LEN,) not in changed)}   # length: the length's)
    ids = {state.after[p][2]: kind for p, kind in slots.items()
           if state.after[p][2] is not None}   # (a slot a caller reaches: by its holder)
    arrays, later, view = [], [], state
    returned = _scan(state, slots, arrays, later)
    for frame in _callers(t, state.frame):   # helper(s, ...) then ST.res read after
        caller = _Caller(frame)
        slots, view = _passed(view, caller, slots, returned, ids), caller
        returned = _scan(view, slots, arrays, later)
    if arrays:
        raise ArgumentError(_message(state.named_once(arrays), what, "array", source, state),
                            source)
    if later:
        t.escapes.append(lambda graph: _refuse_numbers(later, graph, what, source, state))


def _kind(t, state, p: tuple) -> str:
    """``"array"`` (the slot's old or new value an array of the trace, or the order
    of a dict holding such arrays), ``"items"``
    (the length of a container holding such arrays), ``"work"`` (its old or new
    value a kernel or a function, ``work_callable``) or ``"number"``."""
    if work_callable(state.before[p][0]) or work_callable(state.after[p][0]):
        return "work"
    if _array(t, state.before[p][0], state.after[p][0]) or p[-1] == _ORDER and any(
            _array(t, state.after.get(p[:-1] + (("[]", k),), (None,))[0], None)
            for k in state.after[p][0]):   # the order of a dict of arrays: which is where
        return "array"
    n = len(p) - 1
    if p[-1] == _LEN and any(q[:n] == p[:n] and len(q) > n and q[n][0] != "len" and
                             _array(t, v, None) for snap in (state.before, state.after)
                             for q, (v, _, _) in snap.items()):
        return "items"
    return "number"


def _made_in(t, state, p: tuple) -> bool:
    """Whether the slot at ``p``, under a name the body set first, holds a temporary
    the body made (or a view of one) and the body's code sets the name in one
    place: each pass of the body leaves it the same temporary, which holds what
    the device's last pass wrote (``t = body.zeros(n)``, then ``s.copy(out, t)``
    after the block; not ``t = then.zeros(n)`` and ``t = other.zeros(n)``); the
    same of a slot new to an object the body began with (``st.t = body.zeros(n)``)."""
    value = state.after[p][0]
    made = {id(t.cached_buffer(tmp)) for tmp in t.temporaries[state.made:]}
    buf = t.cached_buffer(value) if made and is_array(value) else None
    if buf is None or id(buf.base) not in made and id(buf) not in made:
        return False
    code, lo, hi = state._code()
    code_ins = _instructions(code)
    if p[0] in state.scope and len(p) > 1:   # st.t = body.zeros(n), new to st
        return sum(lo < ins.offset < hi and (ins.opname in _ATTR_STORES or
                                             ins.opname in _ITEM_STORES) and _set(code_ins, i) == p
                   for i, ins in enumerate(code_ins)) == 1
    return sum(lo < ins.offset < hi and ins.opname in _STORES and ins.argval == p[0]
               for ins in code_ins) == 1


def _scan(view, slots: dict, arrays: list, later: list) -> dict:
    """Note in ``arrays`` and ``later`` the slots (``path -> kind``) the code of
    ``view``'s frame reads after the instruction it stands at, by
    ``(path, (file, line)[, region, view])``; return what it returns of them
    (the rest of each path below what is returned -> its kind)."""
    code, returned = view.frame.f_code, {}
    code_ins = _instructions(code)
    lasti = view.frame.f_lasti   # (3.11: in the cache after the call, in a call of it)
    start = max(k for k, ins in enumerate(code_ins) if ins.offset <= lasti)
    if isinstance(view, _Caller) and _result(code_ins, start) is not None:
        start += 1   # r = helper(s, ...): r holds what the helper returned
    for root in dict.fromkeys(p[0] for p in slots):
        keep, lines, direct = _after(code_ins, start, root)
        region = _Kept((code, code_ins[start].offset, 1 << 62), view.now, keep, direct)
        for p in (p for p in slots if p[0] == root):
            if p[-1] == _ORDER and not isinstance(view, _Caller) and \
                    not view._reads_order(p, None, direct):
                continue   # sorted(d), d[k] after the block: whatever its order
            item = _reads_items(code_ins, direct, p[:-1]) if slots[p] == "items" else \
                _reads_new_items(code_ins, direct, p[:-1], view.before[p][0]) \
                if p[-1] == _LEN and type(view.before.get(p, (None,))[0]) is int and \
                isinstance(_resolve(view.now, p[:-1]), (list, deque)) else None
            # (L.append(3.0) in the body, then L[-1] after it)
            read, at = region.carried(p), lines.get(p, lines.get(p[:1]))
            if read is None:   # post(s, a) testing the global MODE the body set
                read, at = _helper_reads(view, region, p)
            line = (code.co_filename, item or at)
            if item is not None or slots[p] == "array" and read is True:
                arrays.append((p, line))
            elif read is True:
                later.append((p, line, region, view, slots[p]))
            returned.update((p[len(q) - 1:], slots[p]) for q in region.returns
                            if q[-1] == _WHOLE and p[:len(q) - 1] == q[:-1])
    return returned


def _helper_reads(view, region, p: tuple) -> tuple:
    """``(True, the line of the call)`` where the code after the block calls a
    function of the program's that reads the slot at ``p`` before storing it,
    by its own global or closure name (``post(s, a)`` testing the global
    ``MODE``; a nested ``finish()`` launching with ``scale``), else ``(None,
    None)``."""
    for line, _, _, own, held in view._callees(region, p, None):
        if any(own.carried(q) is True for q in held):
            return True, line
    line = handed_reads(view, region, p)   # post(s, a, get): get() reading it
    return (True, line) if line is not None else (None, None)


def _refuse_numbers(later: list, graph, what: str, source, state) -> None:
    """At the trace's end: refuse the slots in ``later`` that the code after the
    block hands to work (``graph``: all of it), indexes or sizes by, or decides
    by which work runs (each named once, ``state.named_once``)."""
    hits = []
    for p, line, region, view, kind in later:
        work = view._work(region, (graph,))
        if kind == "work":   # kern = mul in a branch, then kern[1, 4, s](x) after it
            if view._launches(region, p, True, work, (graph,), region.direct):
                hits.append((p, line))
        elif region.indexes_with(p) or region.sizes_with(p) or \
                region.decides_with(p, work) or view._hands_on(region, p, True, (graph,)) or \
                view._handed(region, p, (), (graph,), {}) or \
                view._helper_returns(region, p, (graph,)) or \
                handed_use(view, region, p, (graph,)):   # (post(s, a): if MODE there;
            # 100.0 if get() == "b" else 10.0; post(s, a, get): get() deciding there)
            hits.append((p, line))
    if hits:
        kinds = {p: k for p, _, _, _, k in later}
        kind = "work" if any(kinds.get(h[0]) == "work" for h in hits) else "number"
        raise ArgumentError(_message(state.named_once(hits), what, kind, source, state), source)


def _callers(t, frame) -> list:
    """The user's frames calling ``frame``, innermost first, up to the graph
    function's own (the one ``t`` was entered from calls); none where that is
    not on the way."""
    out, f = [], frame.f_back
    while f is not None and f.f_code is not t.entered_in:
        if not _is_internal(f.f_code.co_filename):
            out.append(f)
        f = f.f_back
    return out if f is not None else []


class _Caller(LoopState):
    """A ``LoopState`` of a frame calling the block's: its names now (``now``),
    what ``_scan`` and ``_refuse_numbers`` ask of its code."""

    def __init__(self, frame):   # (not LoopState's: no snapshot of its own)
        self.frame, self.fn, self.bound, self.extra, self.made = frame, None, None, {}, 0
        self.slots = None
        self.owners, self.helpers, self.after, self.before = {}, {}, None, {}
        self.entered_at = frame.f_lasti
        self.scope = self.now = self._roots()


def _passed(inner, caller, slots: dict, returned: dict, ids: dict) -> dict:
    """The slots (``path -> kind``) of ``caller``'s names that the changed
    ``slots`` of ``inner``'s frame, the one it calls, are: those under a
    container or an object holding one of them (``ids``: its id and step ->
    kind), a global or a closure's cell both name, and what the name the
    caller stores the call's result in holds of what it returns (``returned``)."""
    out = {q: ids[where] for q, (_, _, where) in caller._snapshot(caller.now).items()
           if where in ids}
    code, mine = inner.frame.f_code, caller.frame.f_code
    for p, kind in slots.items():
        name = p[0]
        shared = name in _global_names(code) and name in _global_names(mine) and \
            inner.frame.f_globals is caller.frame.f_globals or \
            name in code.co_freevars + code.co_cellvars and \
            name in mine.co_freevars + mine.co_cellvars and \
            caller.now.get(name, MISSING) is inner.now.get(name)
        if len(p) == 1 and shared:
            out[p] = kind
    code_ins = _instructions(mine)
    name = _result(code_ins, max(k for k, ins in enumerate(code_ins)
                                 if ins.offset <= caller.frame.f_lasti))
    if name is not None:   # r = helper(s, ...): what r held before, no more
        out = {q: kind for q, kind in out.items() if q[0] != name}
        out.update(((name,) + rest, kind) for rest, kind in returned.items())
    return out


def _result(code_ins: list, at: int):
    """The name the instruction after the call ``code_ins[at]`` stores its result
    in, else None."""
    store = code_ins[at + 1] if at + 1 < len(code_ins) else None
    return store.argval if store is not None and store.opname in _RESULT else None


_RESULT = frozenset({"STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF"})
_ADDING = frozenset({"append", "extend", "insert", "add", "update", "appendleft",
                     "extendleft", "clear", "remove", "discard", "setdefault"})


def _reads_items(code_ins: list, keep: set, path: tuple):
    """The line where the instructions at the offsets ``keep`` first read the
    items of the container at ``path``: an item or a method of it (``picks[-1]``,
    ``d.get("y")``; not one only adding or removing, ``picks.append(x)``), or it
    whole (``for x in picks``, ``f(picks)``; not ``len(picks)``); else None."""
    held = {_holder(code_ins, j): j for j, ins in enumerate(code_ins) if ins.offset in keep}
    for j, ins in enumerate(code_ins):
        if ins.offset not in keep or _chain(code_ins, j) != path:
            continue
        k = held.get(j)
        step = code_ins[k] if k is not None else None
        if step is None and not _measured(code_ins, j) or step is not None and not (
                step.opname in _ATTR_STORES or step.opname in _ITEM_STORES or
                step.opname in ("LOAD_ATTR", "LOAD_METHOD") and step.argval in _ADDING):
            return ins.positions.lineno
    return None


def _reads_new_items(code_ins: list, keep: set, path: tuple, size: int):
    """The line where the instructions at the offsets ``keep`` first read an item
    of the sequence at ``path``, whose length the body changed from ``size``,
    other than one of the places it had before (``L[-1]``, ``L[k]``, ``L.pop()``
    after ``L.append(3.0)``; not ``L[0]``); else None."""
    held = {_holder(code_ins, j): j for j, ins in enumerate(code_ins) if ins.offset in keep}
    for j, ins in enumerate(code_ins):
        k = held.get(j)
        if k is None or ins.offset not in keep or _chain(code_ins, j) != path:
            continue
        step = code_ins[k]
        key = _chain(code_ins, k) if _reads_item(step) else None
        if _reads_item(step) and not (key is not None and type(key[-1][1]) is int and
                                      0 <= key[-1][1] < size) or \
                step.opname in ("LOAD_ATTR", "LOAD_METHOD") and step.argval == "pop":
            return ins.positions.lineno
    return None


def _measured(code_ins: list, j: int) -> bool:
    """Whether what ``code_ins[j]`` loads is only measured: ``len(x)``."""
    return 0 < j < len(code_ins) - 1 and code_ins[j - 1].opname == "LOAD_GLOBAL" and \
        code_ins[j - 1].argval == "len" and code_ins[j + 1].opname in _CALL_ONE and \
        code_ins[j + 1].arg == 1


_CALL_ONE = frozenset({"PRECALL", "CALL"})


def _array(t, old, new) -> bool:
    return any(is_array(x) and t.cached_buffer(x) is not None for x in (old, new))


@functools.lru_cache(maxsize=256)
def _instructions(code) -> tuple:
    """``code``'s instructions, read once per code (every block of a helper called
    many times, and each of its callers, reads them)."""
    return tuple(dis.get_instructions(code))


def _after(code_ins: list, start: int, name: str) -> tuple:
    """``(offsets, lines, direct)``: the offsets of the instructions run after
    ``code_ins[start]`` on some path before the name ``name`` is stored again,
    or past that store where the path loaded the name before it (``go =
    kern[1, 4, s]; kern = add; go(x)``: what was computed from it is used
    later), and the line where each slot under it (its path) is loaded first
    before the store, in reading order from the block on (not the nearest load
    of a branch written after the one that runs first); ``direct``: the offsets
    before the store alone, where a load of the name is one of its slot."""
    keep, direct, lines, seen = set(), set(), {}, set()
    todo = deque([(start + 1, False, False)])   # (index, loaded it, stored it again)
    at = {ins.offset: k for k, ins in enumerate(code_ins)}
    while todo:
        k, loaded, past = todo.popleft()
        if k >= len(code_ins) or (k, loaded, past) in seen:
            continue
        seen.add((k, loaded, past))
        ins = code_ins[k]
        names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
        if ins.opname in _STORES and name in names and not past:
            if not loaded:
                continue   # stored again: this path reads it no more
            past = True   # (what was computed from it may still be used)
        keep.add(ins.offset)
        if not past:
            direct.add(ins.offset)
        path = _chain(code_ins, k) if ins.opname not in _LOADS or name in names else None
        if path is not None and path[0] == name and ins.positions is not None and not past:
            first = (k <= start, k, ins.positions.lineno)   # (a loop around: after)
            lines[path] = min(lines.get(path, first), first)
            loaded = True
        if ins.opname in _ENDS:
            continue
        if ins.opcode in _JUMPS and ins.argval in at:
            todo.append((at[ins.argval], loaded, past))
            if ins.opname in _GOTO:
                continue
        todo.append((k + 1, loaded, past))
    return keep, {p: line for p, (_, _, line) in lines.items()}, direct


class _Kept(_Region):
    """A ``_Region`` of the instructions at the offsets ``keep`` only (those of a
    comprehension they make, all), entered after the offset ``code[1]``;
    ``direct``: those where a load of the slot's name is one of the slot (before
    the name is stored again), by default all."""

    def __init__(self, code: tuple, scope: dict, keep: set, direct=None):
        self.keep, self.inner = keep, False
        self.direct = keep if direct is None else direct
        super().__init__(code, scope, keep)

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
    "items": "fill {name} before the block and leave it unchanged in the body, or have "
             "the body's kernels write their result into an array the code after the "
             "block reads",
    "array": "choose the array outside the block (set {name} before it and leave it "
             "unchanged in the body), or have the body's kernels write their result into "
             "an array the code after the block reads",
    "work": "choose the kernel or function on the device: launch each one under "
            "s.if_else or s.switch on the block's condition, or set {name} before the "
            "block and leave it unchanged in the body",
    "number": "compute it on the device (a counter in a device array that the body's "
              "kernels update, read by the kernels after the block), or set it before the "
              "block and leave it unchanged in the body",
}


def _message(hits: list, what: str, kind: str, source, state) -> str:
    first = {p for p, _ in hits if state.before.get(p, (None,))[0] is MISSING}   # (first_set)
    names = sorted({quoted(p) for p, _ in hits if p[-1] != _LEN and p not in first})
    sized = sorted({quoted(p[:-1]) for p, _ in hits if p[-1] == _LEN and p not in first})
    made = sorted({quoted(p[:1] if p[0] not in state.scope else p) for p in first
                   if len(p) < 2 or quoted(p[:-1]) not in sized})   # (d["y"] = b: d's item)
    at = sorted({(file != source[0], file, line) for _, (file, line) in hits
                 if line is not None})
    where = ", ".join(format_source((file, line)) if other else str(line)
                      for other, file, line in at)
    where = f"line {where}" if where else "the code after it"
    runs = "zero, one or many times" if what.startswith("s.while_loop") else \
        "once or not at all, as its condition decides"
    change = " and ".join(([f"changes {_listed(names)}"] if names else []) + (
        [f"adds an item to or removes one from {_listed(sized)}"] if sized else []) + (
        [f"sets {_listed(made)} (unset before the block)"] if made else []))
    names = names + made
    advice = [_ADVICE[kind].format(name=(names or sized)[0])] if names or kind != "array" else []
    advice += [_ADVICE["items"].format(name=sized[0])] if sized and kind == "array" else []
    return (f"the body of {what} {change}, which {where} reads after the block: "
            f"Python runs the body once, when it is recorded, while the device runs it {runs}, "
            "so the code after the block would always see what that one recorded pass left; "
            + "; ".join(advice))


def _listed(names: list) -> str:
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)

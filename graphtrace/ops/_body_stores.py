"""Host state a loop or branch body stores that outlives the trace.

Python runs the body of ``s.while_loop``, ``s.if_then``, ``s.if_else`` or
``s.switch`` once, when it is recorded; the device decides at each replay
whether (and how often) it runs. A store the body's Python makes to state that
outlives the trace happens once, at the trace, whatever the device decides:
``if not self.started: <work>; self.started = True`` in an ``if_then`` whose
condition is false at the first call leaves ``started`` True, and the next
call's Python, which reads it to decide its work, leaves the one-off work out
when the condition finally holds. Such a body is refused at the store's line
when the trace ends (after the refusals of ``_loop_state.py`` and
``_loop_after.py``, which name what the loop or the code after the block reads),
where the code of the block's function, run again from its start as the next
call runs it, reads the slot before storing it and hands it to work, indexes or
sizes by it, or decides by it which work runs (an array: reads it at all), as
``_loop_after.py`` asks of the code after a block (``_read_for_work``). A
counter or a log that only reports (``self.calls += 1``, ``log.append(...)``,
a host array kept as a log) changes no work, and is left alone.

State that outlives the trace is what a store reaches from a global name, a
closure's cell (one no frame of the trace made), or an object the trace's
arguments, globals or closures hold (``self.started``, ``CFG["init"]``,
``STATE.n``, ``hits.append(1)`` with a list of the caller's, an argument's
attribute); a store counts where it changed what the slot held (a slot set to
what it held changes nothing). Found two ways:

- the stores the body's own code makes (``_stores``: attributes, items,
  ``global``/``nonlocal`` names, ``setattr``, a list's, dict's, set's, deque's
  or host array's methods that change it), each slot read when the block is
  entered and again when it is closed;
- the slots ``LoopState`` (``_loop_state.py``) watches under the names the
  block reaches, changed by a function the body calls (``self.mark()``), named
  at the body's line that calls it.

Names local to the trace (``k += 1``, the ``as`` names), objects made in the
trace and held by none of those (a temporary, ``rec = Rec(); rec.k = 1``) and
functions defined in the body (a host callback's own stores run when it runs)
are left alone.
"""
from __future__ import annotations

import types
from collections import deque

import numpy as np

from ..arrays import is_array
from ..bytecode import method_load
from ..chains import MISSING
from ..errors import ArgumentError, format_source
from ..names import _filled, _global_names
from ..owners import _attr, own_object
from ..temporary import held_one
from ._loop_after import _Caller, _Kept, _after, _array, _helper_reads, _kind
from ._loop_after import _instructions as _cached
from ._loop_held import binding
from ._loop_paths import _ITEMS, _LEN, _NEXT, _ORDER, _label, _resolve
from ._loop_slots import _contents
from ._loop_stack import _ATTR_STORES, _ITEM_STORES, _LOADS, _chain, _holder, _set

__all__ = ["BodyStores"]

_WHOLE = ("*", "whole")   # a slot step: the holder's contents, compared whole
_NAME_STORES = frozenset({"STORE_GLOBAL", "DELETE_GLOBAL", "STORE_DEREF", "DELETE_DEREF"})
# methods changing a container or a host array in place (on no other kind of object)
_CHANGING = frozenset({"append", "extend", "insert", "pop", "popitem", "remove", "clear",
                       "update", "setdefault", "add", "discard", "appendleft", "extendleft",
                       "popleft", "rotate", "sort", "reverse", "fill", "put", "itemset",
                       "resize", "__setitem__", "__delitem__", "difference_update",
                       "intersection_update", "symmetric_difference_update", "move_to_end"})
_CONTAINERS = (list, dict, set, deque, bytearray, np.ndarray)
_SETTERS = frozenset({"setattr", "delattr"})


class BodyStores:
    """The stores a body's code makes, with what each slot held when the body
    was entered (``frame``: the user's frame of a ``with`` block; ``body``: the
    ``(function, bound object, extra names)`` of a ``body=`` callable)."""

    def __init__(self, frame, body=None):
        self.frame, self.fn = frame, body[0] if body is not None else None
        self.bound, self.extra = (body[1], body[2]) if body is not None else (None, {})
        self.code = self.fn.__code__ if self.fn is not None else \
            frame.f_code if frame is not None else None
        self.lo = frame.f_lasti if self.fn is None and frame is not None else -1
        self.taken: list = []   # (offset, line, label, holder, step, what it held)
        if self.code is None:
            return
        names = self._names()
        for offset, line, path, step in _stores(self.code, self.lo):
            holder = _walk(names, path)
            if step is None:   # nonlocal k: the cell's value
                self.taken.append((offset, line, path, None, None, holder))
                continue
            if holder is MISSING or is_array(holder) and not isinstance(holder, np.ndarray):
                continue   # (made in the body, or device memory: no host state)
            if step == _WHOLE and not isinstance(holder, _CONTAINERS):
                continue   # (obj.update(...) of a class of its own: LoopState's)
            self.taken.append((offset, line, path, holder, step, _read(holder, step)))

    def _names(self) -> dict:
        """The names the body's code starts from: ``_GLOBALS`` and each of the
        frame's (or the function's) names."""
        if self.fn is None:
            names = dict(self.frame.f_locals)
            names[_GLOBALS], names[_LOCAL] = self.frame.f_globals, _locals(self.code)
            return names
        fn, code = self.fn, self.fn.__code__
        names = {n: c.cell_contents for n, c in zip(code.co_freevars, fn.__closure__ or ())
                 if _filled(c)}
        params = code.co_varnames[:code.co_argcount]
        if self.bound is not None and params:
            names[params[0]] = self.bound
        names.update(zip(params[len(params) - len(fn.__defaults__ or ()):],
                         fn.__defaults__ or ()))
        names.update(self.extra)
        names[_GLOBALS], names[_LOCAL] = fn.__globals__, _locals(code)
        return names

    def refuse(self, t, state, what: str, source) -> None:
        """Hold for the trace's end the refusal of the stores the body made to
        state that outlives the trace (``state``: the ``LoopState`` of the
        block's frame, closed) and that the code of the next call reads to
        decide or take work (``_read_for_work``), at the line of the first."""
        if self.code is None:
            return
        hi = self.frame.f_lasti if self.fn is None else 1 << 62
        places, names, own = _Places(t, self.frame), self._names(), None
        hits, seen = [], set()   # (line, path, label, kind, view); the slots taken
        for offset, line, path, holder, step, held in self.taken:
            now = names.get(path[0], MISSING) if step is None else _read(holder, step)
            if offset >= hi or _same(held, now) or \
                    not places.outlives(self.code, path, holder, step is None):
                continue
            label = _named(path, step)
            if step is None or path == _GLOBALS:
                slots = [((step[1],) if path == _GLOBALS else path, None)]
            elif step != _WHOLE:
                slots = [(path + (step,), step)]
            else:   # lst.append(x): its length; d[k] = v: that item
                slots = [(path + (sub,) if sub is not None else path, sub)
                         for sub in _parts(held, now)]
            if isinstance(holder, np.ndarray):   # (its values: LoopState's slot of it)
                seen.add(id(holder))
            if own is None:   # (the names now: made only where some store counts)
                own = _view(self.frame, self.fn, self.bound, self.extra)
            for slot, sub in slots:
                seen.add((id(holder), sub) if sub is not None else label)
                kind = "array" if _array(t, held, now) else "number"
                hits.append((line, slot, label, kind, own))
        if state is not None and state.frame is not None:
            frame = None
            for line, p, label in self._changed(state, places):
                where = state.after[p][2] or state.before[p][2]
                old, new = state.before[p][0], state.after[p][0]
                if (where if where is not None else label) in seen or \
                        isinstance(new, np.ndarray) and id(new) in seen:
                    continue
                kind = "number" if old is new else _kind(t, state, p)   # (values in place)
                frame = frame or (own if own is not None and self.fn is None else
                                  _view(state.frame))
                hits.append((line, p, label, kind, frame))
        if hits:
            file = self.code.co_filename
            t.escapes.append(lambda graph: _refuse_read(hits, graph, what, source, file))

    def _changed(self, state, places) -> list:
        """``(line, path, label)`` of the slots ``state`` saw the body change
        (through a function it calls) that outlive the trace, each at the body's
        line naming the slot's name or calling the function that holds it."""
        _, changed = state.closed()
        out = []
        for p in changed:
            base = p[:-1] if p[-1] in (_LEN, _NEXT, _ORDER, _ITEMS) else p
            root = base[0]
            if root not in state.owners and len(base) == 1 and root not in _global_names(
                    state.frame.f_code) and root not in state.frame.f_code.co_freevars:
                continue   # a local name rebound
            holder = _resolve(state.now, base[:-1]) if len(base) > 1 else MISSING
            if root not in state.owners and not places.outlives(
                    state.frame.f_code, base[:-1] or base, holder, len(base) == 1):
                continue
            out.append((self._line(state, base), p, _label(base)))
        return out

    def _line(self, state, path: tuple):
        """The first line of the body that stores the slot at ``path``, else that
        calls a method through its name (``self.mark()``) or the function holding
        it, else that names it."""
        code_ins = _instructions(self.code)
        hi = state.frame.f_lasti if self.fn is None else 1 << 62
        fn = state.owners.get(path[0], (None,))[0]
        found = [None, None, None]   # a store, a call, a load
        for j, ins in enumerate(code_ins):
            if not self.lo < ins.offset < hi or ins.positions is None:
                continue
            at, chain = ins.positions.lineno, _chain(code_ins, j)
            if _set(code_ins, j) == path:
                found[0] = found[0] or at
            elif ins.opname in _LOADS and fn is not None and binding(
                    state.scope.get(ins.argval))[0] is fn \
                    or method_load(ins) and chain is not None and \
                    chain[0] == path[0] and len(chain) > 1:
                found[1] = found[1] or at
            elif ins.opname in _LOADS and ins.argval == path[0]:
                found[2] = found[2] or at
        return next((at for at in found if at is not None), None)


def _view(frame, fn=None, bound=None, extra=None):
    """What ``_loop_state``'s analyses ask of the code of the block's frame, or of
    a ``body=`` function ``fn``, run from its start, as the next call runs it."""
    view = _Caller(frame) if fn is None else _FnView(fn, bound, extra)
    view.entered_at = -1
    return view


class _FnView(_Caller):
    """A ``_Caller`` of a ``body=`` function: its names are its closure's, its
    defaults and its bound object."""

    def __init__(self, fn, bound, extra):   # (not _Caller's: no frame)
        self.frame, self.fn, self.bound, self.extra, self.made = None, fn, bound, extra or {}, 0
        self.slots = None
        self.owners, self.helpers, self.after, self.before = {}, {}, None, {}
        self.scope = self.now = self._roots()


def _read_for_work(view, path: tuple, kind: str, graph) -> bool:
    """Whether the code of ``view``, run again from its start (the next call),
    reads the slot at ``path`` before storing it and hands it to work, indexes
    or sizes by it or decides by it which work runs (an array: reads it at all)."""
    code = view._code()[0]
    keep, _, direct = _after(_instructions(code), -1, path[0])
    region = _Kept((code, -1, 1 << 62), view.now, keep, direct)
    read = region.carried(path)
    if read is None:   # a function of the program's it calls reading its own global
        read = _helper_reads(view, region, path)[0]
    if read is not True:   # an item by its key: read in its container ("k" in d)
        return len(path) > 1 and path[-1][0] == "[]" and \
            _read_for_work(view, path[:-1], kind, graph)
    if kind == "array":
        return True
    work = view._work(region, (graph,))
    return region.indexes_with(path) or region.sizes_with(path) or \
        region.decides_with(path, work) or view._hands_on(region, path, True, (graph,)) or \
        view._handed(region, path, (), (graph,), {})


def _refuse_read(hits: list, graph, what: str, source, file: str) -> None:
    """At the trace's end: refuse the first of ``hits`` that the next call reads
    for work (``_read_for_work``), naming the others too."""
    found = [(line, label) for line, path, label, kind, view in hits
             if _read_for_work(view, path, kind, graph)]
    if not found:
        return
    line, label = min(found, key=lambda h: h[0] or 0)
    others = sorted({lab for _, lab in found} - {label})
    raise ArgumentError(_message(label, others, what, source),
                        (file, line) if line else source)


_GLOBALS = ("<globals>",)   # the name the frame's globals are kept by in ``_names``
_LOCAL = ("<locals>",)      # and the names local to its code


def _locals(code) -> frozenset:
    return frozenset(code.co_varnames + code.co_cellvars + code.co_freevars)


class _Places:
    """What outlives the trace: the values of the call's arguments, and the
    globals and closures' names of the trace's frames, from ``frame`` out to the
    graph function's (``outlives``)."""

    def __init__(self, t, frame):
        self.t, self.frame = t, frame
        self.made: set | None = None   # the names of cells the trace's frames made
        self.values: list | None = None

    def _frames(self) -> list:
        out, f = [], self.frame
        while f is not None:
            out.append(f)
            if f.f_back is not None and f.f_back.f_code is self.t.entered_in:
                return out
            f = f.f_back
        return out[:1]   # (not on the way to the trace's entry: the block's frame alone)

    def _cells(self) -> set:
        if self.made is None:
            self.made = {n for f in self._frames() for n in f.f_code.co_cellvars}
        return self.made

    def outlives(self, code, path: tuple, holder, name: bool = False) -> bool:
        """Whether a store into ``holder``, reached by ``path`` from a name of
        ``code`` (``name``: the store rebinds that name), changes state that
        outlives the trace."""
        root = path[0]
        if root == _GLOBALS or root in code.co_freevars and root not in self._cells():
            return True   # a global, a closure's cell of a function outside the trace
        if root not in code.co_varnames + code.co_cellvars + code.co_freevars:
            return True   # a global name the code loads
        if name or holder is MISSING:
            return False   # a name of the trace's own frames
        if self.values is None:
            self.values = list(self.t.given.values())
            for f in self._frames():
                self.values += [f.f_globals[n] for n in _global_names(f.f_code)
                                if n in f.f_globals]
                self.values += [f.f_locals[n] for n in f.f_code.co_freevars
                                if n not in self._cells() and n in f.f_locals]
        return any(held_one(v, lambda x: x is holder) is not None for v in self.values
                   if v is holder or not (isinstance(v, (types.ModuleType, type)) or
                                          callable(v) and not own_object(v)))


def _stores(code, lo: int) -> list:
    """``(offset, line, holder's path, step)`` of the stores ``code`` makes after
    the offset ``lo``: a name's (global or a closure's: the holder ``_GLOBALS`` or
    the cell's name, step None), an attribute's or an item's (the holder's path
    from a name, its step), or a container's changed in place (step ``_WHOLE``)."""
    code_ins = _instructions(code)
    out = []
    for j, ins in enumerate(code_ins):
        if ins.offset <= lo or ins.positions is None:
            continue
        line, op = ins.positions.lineno, ins.opname
        if op in _NAME_STORES:
            if op.endswith("GLOBAL"):
                out.append((ins.offset, line, _GLOBALS, ("[]", ins.argval)))
            elif ins.argval in code.co_freevars:
                out.append((ins.offset, line, (ins.argval,), None))
            continue
        if op in _ATTR_STORES or op in _ITEM_STORES:
            path = _set(code_ins, j)
            if path is not None and len(path) > 1:
                out.append((ins.offset, line, path[:-1], path[-1]))
                continue
            h = _holder(code_ins, j)
            holder = _chain(code_ins, h) if h >= 0 else None
            if holder is not None:
                step = (".", ins.argval) if op in _ATTR_STORES else _WHOLE
                out.append((ins.offset, line, holder, step))
        elif op in ("LOAD_METHOD", "LOAD_ATTR") and ins.argval in _CHANGING:
            h = _holder(code_ins, j)
            holder = _chain(code_ins, h) if h >= 0 else None
            if holder is not None:
                out.append((ins.offset, line, holder, _WHOLE))
        elif op == "LOAD_GLOBAL" and ins.argval in _SETTERS and j + 1 < len(code_ins):
            k = j + 1   # setattr(st, "w", v): the longest chain after it, then the name
            while k + 1 < len(code_ins) and code_ins[k + 1].opname == "LOAD_ATTR" and \
                    _chain(code_ins, k + 1) is not None:
                k += 1
            holder = _chain(code_ins, k)
            name = code_ins[k + 1] if k + 1 < len(code_ins) else None
            if holder is not None and name is not None and name.opname == "LOAD_CONST" \
                    and type(name.argval) is str:
                out.append((ins.offset, line, holder, (".", name.argval)))
    return out


def _instructions(code) -> list:
    return list(_cached(code))


def _walk(names: dict, path: tuple):
    """The holder at ``path`` from ``names`` (attributes of any object, items of
    lists, tuples and dicts), or MISSING."""
    if path == _GLOBALS:
        return names[_GLOBALS]
    v = names[path[0]] if path[0] in names else MISSING if path[0] in names[_LOCAL] \
        else names[_GLOBALS].get(path[0], MISSING)   # (a local not bound yet: none)
    for kind, key in path[1:]:
        if kind == ".":
            v = _attr(v, key, MISSING)
        elif type(v) in (list, tuple, dict):
            try:
                v = v[key]
            except (LookupError, TypeError):
                return MISSING
        else:
            return MISSING
        if v is MISSING:
            return MISSING
    return v


def _read(holder, step):
    """What the slot ``step`` of ``holder`` holds now, to compare (``_same``)."""
    kind, key = step
    if step == _WHOLE:
        if isinstance(holder, np.ndarray):
            got = _contents(holder)
            return _UNKNOWN if got is None else got
        if isinstance(holder, dict):
            return _Items(holder.items())
        if isinstance(holder, (set, frozenset)):
            return frozenset(holder)
        try:
            return tuple(holder)
        except TypeError:
            return _UNKNOWN
    if kind == ".":
        return _attr(holder, key, MISSING)
    if isinstance(holder, dict):
        return holder.get(key, MISSING)
    try:
        return holder[key]
    except Exception:  # noqa: BLE001  (whatever the container's own lookup raises)
        return MISSING


def _parts(held, now) -> list:
    """The steps under a container changed in place that differ between two
    ``_read``-ings of it: ``_LEN`` where its length changed, ``("[]", key)`` for
    each item changed, ``_ORDER`` a dict's order alone, ``_ITEMS`` a set's items;
    ``[None]`` for a host array's values (the array itself)."""
    if type(held) is frozenset or type(now) is frozenset:
        return [_ITEMS]
    if not isinstance(held, tuple) or not isinstance(now, tuple):
        return [None]
    if type(held) is _Items and type(now) is _Items:
        old, new = dict(held), dict(now)
        out = [("[]", k) for k in old.keys() & new.keys() if not _same(old[k], new[k])]
        if old.keys() != new.keys():
            out.append(_LEN)
        elif not out:
            out.append(_ORDER)
        return out
    out = [("[]", i) for i, (x, y) in enumerate(zip(held, now)) if not _same(x, y)]
    return out + [_LEN] if len(held) != len(now) else out


class _Items(tuple):
    """A dict's items as ``_read`` takes them whole."""

    __slots__ = ()


_UNKNOWN = object()   # a slot too large to compare: taken as changed


def _same(a, b) -> bool:
    """Whether two readings of a slot hold the same: the same objects, or equal
    values of the same plain type (a number computed anew)."""
    if a is _UNKNOWN or b is _UNKNOWN:
        return False
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if type(a) in (int, float, complex, bool, str, bytes, frozenset) or \
            isinstance(a, np.generic):   # (an item of a host array: read anew each time)
        try:
            return bool(a == b)
        except Exception:  # noqa: BLE001
            return False
    return False


def _named(path: tuple, step) -> str:
    if path == _GLOBALS:
        return str(step[1])
    if step is None or step == _WHOLE:
        return _label(path)
    return _label(path + (step,))


def _message(label: str, others: list, what: str, source) -> str:
    runs = "zero, one or many times" if what.startswith("s.while_loop") else \
        "once or not at all, as its condition decides"
    more = f" (and {', '.join(others)})" if others else ""
    where = format_source(source) if source else "the block"
    return (f"the body of {what} at {where} stores {label}{more}, which outlives the trace "
            "and which the function reads to decide or take its work: Python runs the body "
            f"once, when it is recorded, while the device runs it {runs}, so {label} is changed "
            "at the trace whatever the device decides, and later calls would work from that; "
            "move the store out of the body (before or after the block), or keep the flag or "
            "count in a device array that the "
            "body's kernels update")

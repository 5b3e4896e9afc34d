"""What a while loop's body changes in the Python state its next iteration reads.

Python runs a loop's body once, when it is recorded; the device runs that
recording every iteration. A body that changes what its own code reads next
time (``u, v = v, u``; ``bufs[0], bufs[1] = bufs[1], bufs[0]``;
``self.u, self.v = self.v, self.u``; ``k += 1`` with ``bufs[k % 2]``; ``t += dt``
handed to a kernel) would, run eagerly, work on other arrays or numbers in
each iteration, where the graph repeats the first. Such a body is refused.

``snapshot`` takes the slots the body may read when it is entered: the names of
the user's frame (a ``body=fn``'s closure and globals), and the items and
attributes of the lists, tuples, dicts and objects of the program's own they
hold, ``_DEPTH`` levels deep, where they hold arrays or numbers.
``refuse_carried`` compares them when the body is closed. A slot that changed
is carried into the next iteration where the body's code reads it before
storing it (``_Region``): a name loaded first, an attribute whose name the
body does not store before loading it, any item of a container the body
loads. Arrays count where the old or the new one is the trace's; a number
counts where the body also reads it on a line that does not store it (a
counter ``n += 1`` that nothing else reads changes nothing on the device).
"""
from __future__ import annotations

import dis

import numpy as np

from ..buffers import is_array
from ..errors import ArgumentError
from ..reach import _attributes, own_object

_DEPTH = 3          # names, then two levels of containers and objects
_MAX_ITEMS = 256    # a longer container is not looked into
_MAX_SLOTS = 4096   # nor more slots than this in all

# (an inlined comprehension's LOAD_FAST_AND_CLEAR saves a name and puts it back: no read)
_LOADS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_NAME", "LOAD_GLOBAL", "LOAD_DEREF",
                    "LOAD_CLASSDEREF", "LOAD_FAST_LOAD_FAST", "LOAD_CLOSURE",
                    "LOAD_FROM_DICT_OR_DEREF", "LOAD_FROM_DICT_OR_GLOBALS", "LOAD_FAST_BORROW",
                    "LOAD_FAST_BORROW_LOAD_FAST_BORROW"})
_STORES = frozenset({"STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF",
                     "STORE_FAST_STORE_FAST", "DELETE_FAST", "DELETE_NAME", "DELETE_GLOBAL",
                     "DELETE_DEREF"})
_ATTR_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR"})
_ATTR_STORES = frozenset({"STORE_ATTR", "DELETE_ATTR"})
_ITEM_STORES = frozenset({"STORE_SUBSCR", "DELETE_SUBSCR", "STORE_SLICE"})


def _number(v) -> bool:
    return type(v) in (int, float, complex) or isinstance(v, np.number)


def roots_of(frame, fn=None) -> dict:
    """The names a body reads from, and what they hold: a ``body=fn``'s closure
    cells, bound object (as ``self``) and the globals its code names; else the
    frame's variables and the globals its code names."""
    if fn is not None:
        code, out = fn.__code__, {}
        for name in _global_names(code):
            if name in fn.__globals__:
                out[name] = fn.__globals__[name]
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            try:
                out[name] = cell.cell_contents
            except ValueError:   # a cell not yet filled
                continue
        bound = getattr(fn, "__self__", None)
        if bound is not None and code.co_argcount:   # body=self.step: self is read
            out[code.co_varnames[0]] = bound
        return out
    if frame is None:
        return {}
    out = {name: frame.f_globals[name] for name in _global_names(frame.f_code)
           if name in frame.f_globals}
    out.update(frame.f_locals)
    return out


def _global_names(code) -> set:
    return {ins.argval for ins in dis.get_instructions(code)
            if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and isinstance(ins.argval, str)}


def snapshot(roots: dict) -> dict:
    """``path -> value`` of each slot under ``roots`` that holds an array or a
    number: a path is the root's name, then ``(".", attribute)`` or ``("[]", key)``."""
    out: dict = {}
    for name, v in roots.items():
        _walk(v, (name,), out)
    return out


def _walk(v, path: tuple, out: dict) -> None:
    if len(out) >= _MAX_SLOTS:
        return
    t = type(v)
    if t in (str, bytes, bool, type(None)):
        return
    if _number(v) or is_array(v):
        out[path] = v
        return
    if len(path) >= _DEPTH:
        return
    if t is list or t is tuple:
        items = [(("[]", i), x) for i, x in enumerate(v)] if len(v) <= _MAX_ITEMS else ()
    elif t is dict:
        items = [(("[]", k), x) for k, x in v.items()] if len(v) <= _MAX_ITEMS else ()
    elif own_object(v):
        items = [((".", k), x) for k, x in _attributes(v)]
    else:
        return
    for step, x in items:
        _walk(x, path + (step,), out)


def _changed(old, new) -> bool:
    if old is new:
        return False
    if is_array(old) or is_array(new) or type(old) is not type(new):
        return True
    try:
        return bool(old != new) or str(old) != str(new)   # -0.0 and 0.0: not the same
    except Exception:  # noqa: BLE001  (a number of a library's class answering oddly)
        return True


class _Region:
    """What a body's code (a code object, and the offsets it lies strictly
    between) loads and stores, line by line, and which names and attribute
    names it reads before it stores them."""

    def __init__(self, code: tuple):
        obj, lo, hi = code
        self.lines: dict = {}
        self.first: dict = {}        # name -> "load" or "store", whichever comes first
        self.attr_first: dict = {}   # attribute name -> the same
        for ins in dis.get_instructions(obj):
            line = ins.positions.lineno if ins.positions is not None else None
            if not lo < ins.offset < hi or line is None:
                continue
            names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
            entry = self.lines.setdefault(line, (set(), set(), set(), set(), [False]))
            loads, stores, attr_loads, attr_stores, item_store = entry
            if ins.opname == "STORE_FAST_LOAD_FAST":   # one name stored, then one loaded
                stores.add(names[0])
                loads.add(names[-1])
                self.first.setdefault(names[0], "store")
                self.first.setdefault(names[-1], "load")
            elif ins.opname in _LOADS:
                loads.update(names)
                for n in names:
                    self.first.setdefault(n, "load")
            elif ins.opname in _STORES:
                stores.update(names)
                for n in names:
                    self.first.setdefault(n, "store")
            elif ins.opname in _ATTR_LOADS:
                attr_loads.add(ins.argval)
                self.attr_first.setdefault(ins.argval, "load")
            elif ins.opname in _ATTR_STORES:
                attr_stores.add(ins.argval)
                self.attr_first.setdefault(ins.argval, "store")
            elif ins.opname in _ITEM_STORES:
                item_store[0] = True

    def carried(self, path: tuple) -> bool:
        """Whether the body may read the slot at ``path`` before storing it."""
        root = path[0]
        if len(path) == 1:
            return self.first.get(root) == "load"
        if self.first.get(root) != "load":   # the root not read, or set anew first
            return False
        attrs = [key for kind, key in path[1:] if kind == "."]
        return not attrs or self.attr_first.get(attrs[-1]) != "store"

    def read_apart(self, path: tuple) -> bool:
        """Whether a line of the body reads the slot at ``path`` without storing it
        (a counter's ``n += 1`` reads and stores it on one line)."""
        root = path[0]
        attrs = [key for kind, key in path[1:] if kind == "."]
        for loads, stores, attr_loads, attr_stores, item_store in self.lines.values():
            if root not in loads:
                continue
            if len(path) == 1:
                if root not in stores:
                    return True
            elif attrs and path[-1][0] == ".":
                if attrs[-1] in attr_loads and attrs[-1] not in attr_stores:
                    return True
            elif not item_store[0]:
                return True
        return False


def refuse_carried(t, before: dict, roots: dict, code: tuple, what: str, source) -> None:
    """Refuse a loop body whose Python changed a slot its next iteration reads:
    ``before`` is ``snapshot`` when the body was entered, ``roots`` its roots now."""
    after = snapshot(roots)
    changed = [p for p, old in before.items() if p in after and _changed(old, after[p])]
    if not changed:
        return
    region = _Region(code)
    hits = []
    for p in changed:
        old, new = before[p], after[p]
        if not region.carried(p):
            continue
        if is_array(old) or is_array(new):
            if any(is_array(x) and t.cached_buffer(x) is not None for x in (old, new)):
                hits.append((p, "array"))
        elif region.read_apart(p):
            hits.append((p, "number"))
    if not hits:
        return
    names = sorted({_label(p) for p, _ in hits})
    listed = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    kinds = {k for _, k in hits}
    if kinds == {"number"}:
        advice = ("keep what changes from one iteration to the next in a device array "
                  "that the body's kernels update, and pass that array")
    else:
        advice = ("write one iteration's work for each order in the body (step(u, v) then "
                  "step(v, u)) and loop half as many times, or pick arrays by a device "
                  "array's value inside the kernel")
    raise ArgumentError(
        f"the body of {what} changes {listed}, which it reads again in the next "
        "iteration: Python runs the body once, when it is recorded, so the device would "
        "run every iteration on the arrays and numbers as they were then; " + advice, source)


def _label(path: tuple) -> str:
    out = str(path[0])
    for kind, key in path[1:]:
        out += f".{key}" if kind == "." else f"[{key!r}]"
    return out

"""Slots by their path, and the refusal that names them, for ``_loop_state.py``.

A slot a while loop's body may read is named by its path from a name:
``("k",)``, ``("st", (".", "k"))``, ``("d", ("[]", "k"))``, with ``_WHOLE``,
``_LEN``, ``_NEXT``, ``_ORDER`` or ``_ITEMS`` after it for a slot taken whole, a
container's length, what an iterator has left, a dict's order or a set's items. ``_slots`` (``_loop_state.py``) keys its snapshots so and
``_Region`` (``_loop_code.py``) what the body's code reads; here are what a
path holds in the names the body began with, whether a slot lies within one
read whole, and the text of a refusal (``LoopState.refuse``) naming the slots
changed.
"""
from __future__ import annotations

import types

from ..chains import MISSING
from ..errors import format_source
from ..owners import _attr, _has, own_holder, own_object
from ..static_attrs import getattr_static

_MAX_ITEMS = 256    # a longer container is not looked into
# (sets: a type is found by identity, not by ``==``, which a metaclass may define)
_SEQUENCES = frozenset({list, tuple})
_INDEXED = frozenset({list, tuple, dict})

_WHOLE = ("*", "all")   # after a path: the slot taken whole, with all it holds
_LEN = ("len", None)    # after a container's path: its length
_ITEMS = ("items", None)   # after a set's path: its items, as a whole
_NEXT = ("len", "next")   # after an iterator's path: what it has left (next(it))
_ORDER = ("len", "order")   # after a dict's path: its keys in order (d.values() unpacked)


def _resolve(scope: dict, path: tuple):
    """The value at ``path`` in ``scope`` (names, then attributes of the program's
    own objects, classes and modules, and items of lists, tuples and dicts), or MISSING."""
    v = scope.get(path[0], MISSING)
    for kind, key in path[1:]:
        if kind == "." and (own_object(v) or own_holder(v) or isinstance(v, types.ModuleType)):
            v = _attr(v, key, MISSING)
        elif kind == "[]" and type(v) in _INDEXED:
            try:
                v = v[key]
            except (LookupError, TypeError):
                return MISSING
        else:
            return MISSING
    return v


def _found(scope: dict, path: tuple):
    """``_resolve``, but running no code of the program's: an attribute read from
    an object's, a class's or a module's dictionary (a function of its class
    bound to it, a classmethod to the class), MISSING where a property or
    another descriptor, or a module's ``__getattr__``, would compute it."""
    v = scope.get(path[0], MISSING)
    for kind, key in path[1:]:
        if kind == "[]":
            v = _resolve({"": v}, ("", (kind, key)))
        elif isinstance(v, types.ModuleType):
            v = _attr(v, "__dict__", {}).get(key, MISSING)
        elif own_holder(v) or own_object(v):
            v = _static(v, key)
        else:
            return MISSING
        if v is MISSING:
            break
    return v


def _static(v, key: str):
    """``_found``'s step: ``v.key`` of a class or an object of the program's own."""
    cls = v if isinstance(v, type) else type(v)
    if not isinstance(v, type):
        try:
            held = object.__getattribute__(v, "__dict__")
        except (AttributeError, TypeError):
            held = {}
        if key in held:
            return held[key]
    raw = getattr_static(cls, key, MISSING)
    if isinstance(raw, classmethod):
        return types.MethodType(raw.__func__, cls)
    if isinstance(raw, staticmethod):
        return raw.__func__
    if isinstance(raw, types.FunctionType):
        return raw if v is cls else types.MethodType(raw, v)
    return MISSING if _has(type(raw), "__get__") else raw


def _text(v) -> bool:
    """A string, or a list, tuple or dict (its values) of strings: labels."""
    if type(v) is dict:
        v = list(v.values())
    return type(v) is str or type(v) in _SEQUENCES and 0 < len(v) <= _MAX_ITEMS and \
        all(type(x) is str for x in v)


def _reads(read: set, path: tuple) -> bool:
    """Whether ``read`` (``_Region.indexed`` or ``.sized``) holds the slot at
    ``path``: by its path, or by its last step reached from its name through
    something the code does not name from a name (``bufs[objs[i].k]``), or
    within a slot read whole (``b.zeros(shape)``, ``k[grid, 4, body]``,
    ``a[slice(*lims)]``, ``body.launch(k, *cfg.values(), x)``)."""
    return path in read or len(path) > 1 and path[:1] in read and ("*", path[-1]) in read \
        or any(q[-1] == _WHOLE and _within(q[:-1], path) for q in read)


def _within(whole: tuple, path: tuple) -> bool:
    """Whether the slot at ``path`` lies in the one at ``whole``, read whole: a
    container or an object on its way, or a container whose method ``whole``
    is (``cfg.values``, ``stack.pop``: an item of it at ``path``, or its length)."""
    n = len(whole)
    return n < len(path) and path[:n] == whole or n > 1 and whole[-1][0] == "." and \
        n - 1 < len(path) and path[:n - 1] == whole[:-1] and path[n - 1][0] in ("[]", "len")


_ADVICE = {
    "array": "write one iteration's work for each order in the body (step(u, v) then "
             "step(v, u)) and loop half as many times, or pick arrays by a device "
             "array's value inside the kernel",
    "number": "keep what changes from one iteration to the next in a device array "
              "that the body's kernels update, and pass that array",
    "flow": "its Python decides by it which work, or how much, the body records (a for "
            "loop's iterable or range(), an if or a while test): keep that decision on the "
            "device (a kernel that reads a counter in a device array) or unroll those "
            "iterations on the host, outside the loop",
    "order": "read the dict by its keys (d[k], for k in sorted(d), or over a tuple of its "
             "keys taken before the loop), or leave its order as it is (d[k] = v where k "
             "is, not d.pop(k) then d[k] = v); a for loop over it runs where each pass does "
             "the same for its item, its nodes touch no array another one writes and the "
             "body calls none of the program's own functions",
    "size": "size the temporaries the body makes by numbers fixed for the loop (make one "
            "of the largest size before the loop, and hand its kernels the size in use in "
            "a device array), or run the loop on the host",
    "work": "choose the kernel or function on the device: launch each one the iterations "
            "may run under s.if_else or s.switch on a counter in a device array that the "
            "body's kernels update, or unroll those iterations on the host, outside the loop",
    "condition": "keep the bound in a one-element device array that the body's kernels "
                 "update (gt.cond(c) > lim with lim a device array of c's dtype), and the "
                 "condition's array one array for the whole loop, or leave what the "
                 "condition reads unchanged in the body",
}


def _message(hits: list, what: str, equal=None, source=None) -> str:
    """The refusal of a body whose Python changes the slots ``hits`` (``(path,
    kind)``) that its next iteration reads; ``equal``: path -> (its value when
    the body was recorded, the sources of the kernels taking a number equal to
    it), where that equality is the reason (``n += 1`` only logged)."""
    names = sorted({quoted(p) for p, _ in hits})
    listed = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    kinds = {k for _, k in hits}
    advice = "; ".join(_ADVICE[k] for k in _ADVICE if k in kinds and not (
        k == "number" and "array" in kinds))   # (arrays picked by a number: pick on the device)
    why = "".join(
        f": its value when the body was recorded, {value!r}, is also a number a kernel of "
        f"the body takes ({_where(sources, source)}), and graphtrace cannot tell that the "
        f"kernel does not take it from {quoted(p)}" for p, (value, sources) in
        sorted((equal or {}).items(), key=lambda e: _label(e[0]))[:1])
    reads = "its condition reads again before the next iteration" if kinds == {"condition"} \
        else "it reads again in the next iteration"   # (gt.cond(c) > lim, lim += 1)
    held = "the kernels, functions, arrays and numbers" if "work" in kinds else \
        "the arrays and numbers"
    runs = "test the condition before every iteration on what it read" if \
        kinds == {"condition"} else f"run every iteration on {held} as they were"
    return (f"the body of {what} changes {listed}, which {reads}{why}: Python runs the "
            f"body once, when it is recorded, so the device would {runs} then; " + advice)


def blind_message(path: tuple, what: str, source, at) -> str:
    """The refusal of a body that changes the slot at ``path`` and calls, at
    ``at``, a function graphtrace cannot tell."""
    block = f" at {_where({source}, at)}" if source else ""
    return (f"the body of {what}{block} changes {quoted(path)}, and this call's function "
            "is one graphtrace cannot tell (a lambda made here, a function a call returns, a "
            "method of an object the code computes, a function a helper's parameter is "
            f"handed other than by a name, one of a table of over {_MAX_ITEMS} items picked "
            "by a key computed or a for loop), so it cannot check whether that function "
            f"reads {quoted(path)} again in the next iteration: Python runs the body once, when it "
            "is recorded, so the device would run every iteration on what it read then; call "
            "the function, or hand it to the helper, by its name (a function of a module, a "
            "method of an object a name holds; in the body, also a name set to one, from a "
            "table of functions or a condition), or keep what changes from one iteration to "
            "the next in a device array that the body's kernels update")


def _where(sources, near) -> str:
    """``sources`` (``(file, line)``) as ``line 12`` (in the file of ``near``) or
    ``other.py:12``, in order."""
    got = sorted({(f != (near[0] if near else None), f, line) for f, line in sources})
    text = ", ".join(format_source((f, line)) if other else str(line)
                     for other, f, line in got)
    return f"line {text}" if got and not got[0][0] else text


def _label(path: tuple) -> str:
    out = str(path[0])
    for kind, key in path[1:]:
        out = _LENGTHS[key].format(out) if kind == "len" else out if kind == "items" else out + (
            f".{key}" if kind == "." else f"[{_key(key)}]")
    return out


def quoted(path: tuple) -> str:
    """The slot at ``path`` as a refusal names it: in backticks (``st.i``, a
    counter ``it``), a length's or an order's container within its words (the
    order of ``d``)."""
    if len(path) > 1 and path[-1][0] == "len" and path[-1][1] is not None:
        return _LENGTHS[path[-1][1]].format(f"`{_label(path[:-1])}`")
    return f"`{_label(path)}`"


def _key(key) -> str:
    """An item's key as the code writes it: ``0``, ``'k'``, ``0, 1`` (a numpy
    object array's item ``bufs[0, 1]``)."""
    return ", ".join(map(repr, key)) if type(key) is tuple and key else repr(key)


_LENGTHS = {None: "len({})", "next": "the position of iterator {}", "order": "the order of {}"}


def _below(reads: set, path: tuple):
    """Where an argument reading ``reads`` holds the slot at ``path``: ``()`` where
    it is the slot, or what a number computed from it (``k * 2``); the rest of the
    path where it holds it within (``cfg`` handed whole: ``((".", "it"),)`` of
    ``cfg.it``); None where it does not read it."""
    out = None
    for q in reads:
        if q[:len(path)] == path:
            return ()
        if q[-1] == _WHOLE and _within(q[:-1], path):
            n = len(q) - 1
            out = path[n:] if path[:n] == q[:-1] else ()   # (cfg.values: cfg whole)
    return out

"""Host arrays a trace writes, guarded where the code reaches them by name.

A node recorded in the trace that writes a host array the function reaches by
name (``s.copy(H, d)``, a host callback handed it, unless wrapped in ``gt.In``,
or reading it by its own name: read and written, as the callback's arrays are
ordered) fills it when the graph runs. While tracing, the array still holds
what it held before the call; a number read off it then (``float(H[0])``,
``H.sum()``, ``H[k]``, a loop over it) would be baked into the graph, and the
key reads the same stale number, so every call replays it. From that node on,
the places that hold the array (the global or closure name, ``self``'s
attribute, an item or attribute of an object, list or dict those hold, as its
label names it: ``H``, ``self.h``, ``CFG['h']``, ``BOX.h``) hold a view of it
whose values refuse to be read while tracing (``_host_guard.written_view``),
at the read's line and naming the write's. Ops take the view as the array
itself. When the trace ends each place gets its own array back.

Reads before the first write stay reads of a setting (keyed by value, as
before); host callbacks read the array when they run, after the write. Not
seen: an alias taken before the write (``h = H`` then ``h[0]``), a place a
tuple or a property holds, and an opaque node (which touches no array it is
handed): their reads stay baked in.
"""
from __future__ import annotations

import types

import numpy as np

from ._host_guard import written_view
from .context import current_tracer
from .errors import near
from .ops.base import callable_name
from .owners import own_object
from .probe import _attr

__all__ = ["WrittenHosts"]

_DEPTH = 6        # levels of containers and attributes looked through from a name
_WIDE = 1024      # containers of more items are not looked into


class WrittenHosts:
    """The host arrays one trace reaches by name (``arrays``: ``(root Buffer,
    array)``), the functions whose globals and closures hold them, the call's
    arguments (``given``: a method's ``self`` among them, and objects holding
    the same array), and the places changed so far (``_put``)."""

    def __init__(self, arrays: list, functions: list, given: list, tracer=None):
        self.arrays, self.functions, self.given = arrays, functions, given
        self._put: list = []   # (container, key, how, the array, its view)
        self._tracer = tracer   # the trace whose reads are refused (not another
        # thread's, nor any after it: a view the code kept somewhere is a plain array)

    def wrote(self, accesses, op, target, source: tuple) -> None:
        """Guard each named host array that an access of a node just recorded
        (``op`` on ``target``, at ``source``) may write."""
        for b, mode in accesses:
            if mode == "r" or not b.is_host:
                continue
            for k, (root, array) in enumerate(self.arrays):
                if root is not None and root.overlaps(b):
                    self.arrays[k] = (None, array)   # guarded once
                    self._guard(root.label or "the array", array, _what(op, target), source)

    def _guard(self, label: str, array, what: str, write: tuple) -> None:
        def refusal(read: tuple) -> str | None:
            if self._tracer is not None and current_tracer() is not self._tracer:
                return None
            verb = "may write" if what.startswith("host") else "writes"
            why = f" (a callback's arrays are read and written unless handed as " \
                f"gt.In({label}))" if what.startswith("host") else ""
            return (f"the values of {label} are read while tracing, after {what} at "
                    f"{near(write, read)} {verb} {label}{why}: they are not there until the "
                    f"graph runs (the trace would bake in what {label} holds now, from "
                    "before the call, for every call); compute with them on the device, "
                    f"read {label} in a host callback recorded after that write "
                    f"(s.host(fn, {label})), or read it after the call")
        view = written_view(array, refusal)
        for container, key, how in self._places(label, array):
            self._set(container, key, how, view)
            self._put.append((container, key, how, array, view))

    def _places(self, label: str, array) -> list:
        """``(container, key, how)`` of each place holding ``array`` under the name
        its ``label`` starts with: ``how`` is "item" (a dict, a list, globals, an
        object's ``__dict__``), "attr" (a class's attribute) or "cell"."""
        parts = label.replace("[", ".").split(".")
        head = parts[1] if len(parts) > 1 and any(   # helper.o.H: o, in helper's globals
            _attr(f, "__name__", None) == parts[0] for f in self.functions) else parts[0]
        found, seen = [], set()
        for v in self.given:   # an argument object's attribute (cfg.h), self's
            if v is not array:
                _look(v, array, _DEPTH - 1, found, seen)
        if head == "self":
            return found
        done = set()
        for fn in self.functions:
            code = getattr(fn, "__code__", None)
            if code is not None and head in code.co_freevars and fn.__closure__:
                cell = fn.__closure__[code.co_freevars.index(head)]
                if id(cell) in done:
                    continue
                done.add(id(cell))
                try:
                    v = cell.cell_contents
                except ValueError:   # an empty cell
                    continue
                if v is array:
                    found.append((cell, None, "cell"))
                else:
                    _look(v, array, _DEPTH, found, seen)
                continue
            g = getattr(fn, "__globals__", None)
            if g is None or id(g) in done or head not in g:
                continue
            done.add(id(g))
            if g[head] is array:
                found.append((g, head, "item"))
            else:
                _look(g[head], array, _DEPTH, found, seen)
        return found

    @staticmethod
    def _set(container, key, how: str, v) -> None:
        if how == "cell":
            container.cell_contents = v
        elif how == "attr":
            setattr(container, key, v)
        else:
            container[key] = v

    def unguarded(self, x):
        """The array whose guard view ``x`` is, where this trace put ``x`` in a place
        (a host callback holding that place reads the array itself); else ``x``."""
        return next((array for *_, array, view in self._put if view is x), x)

    def restore(self) -> None:
        """Give each place changed its own array back (where the code did not put
        another there since)."""
        for container, key, how, array, view in reversed(self._put):
            now = container.cell_contents if how == "cell" else \
                getattr(container, key, None) if how == "attr" else _item(container, key)
            if now is view:
                self._set(container, key, how, array)
        self._put.clear()


def _what(op, target) -> str:
    """The node that writes, as a message names it."""
    kind = getattr(op, "kind", "?")
    if kind == "memcpy":
        return "the copy (s.copy)"
    if kind in ("memset", "zeros"):
        return "the memset (s.memset)"
    if kind == "host":
        return f"host callback {callable_name(target)}"
    return f"the {kind} node"


def _item(container, key):
    try:
        return container[key]
    except (KeyError, IndexError):
        return None


def _look(v, array, depth: int, found: list, seen: set) -> None:
    """Add the places under ``v`` holding ``array`` to ``found``, ``depth`` levels
    down at most: the items of a list or dict, the attributes of an object of the
    program's own, and at the top (a label's head) those of a module or class."""
    if depth <= 0 or id(v) in seen:
        return
    seen.add(id(v))
    how = "item"
    if isinstance(v, (list, dict)):
        container = v
    elif isinstance(v, type) and depth == _DEPTH:   # Model.W
        container, how = v, "attr"
    elif isinstance(v, types.ModuleType) and depth == _DEPTH or own_object(v):
        container = _attr(v, "__dict__")
        if not isinstance(container, dict):   # slots alone
            return
    else:
        return
    items = vars(container) if how == "attr" else container
    if len(items) > _WIDE:
        return
    for key, x in list(enumerate(items) if isinstance(items, list) else items.items()):
        if x is array:
            found.append((container, key, how))
        elif not isinstance(x, (np.ndarray, type, types.ModuleType)):
            _look(x, array, depth - 1, found, seen)

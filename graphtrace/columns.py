"""What one scope recorded, column by column; ``Node`` objects made only when asked for.

Recording a kernel launch appends one tuple and its access codes, and
nothing else: no ``Node``, no ``(Buffer, mode)`` pairs, nothing for the
cyclic collector to walk per access. The dependency inference (``deps.py``)
reads the flat access codes; ``Graph.nodes`` makes the nodes once, with the
deps it found.
"""
from __future__ import annotations

from bisect import bisect_right

import numpy as np

from .context import gc_paused
from .deps import MODE_NAMES
from .ir import Node

__all__ = ["Recording"]


class Recording:
    """The ops of one scope (the function's graph, or a region), in order.

    ``entries[pos]`` is ``(op, target, args, attrs, stream, where, at, index, device)``:
    the source is ``(where, at)``, a file and line, or a code object and the
    offset of its instruction that issued the op (its line is looked up then);
    ``device`` is the node's (``placement.py``) unless its Node was made while
    recording, which holds it then;
    the accesses of node ``pos`` are ``codes[ends[pos - 1]:ends[pos]]``, each
    ``slot << 2 | mode`` (``deps.MODE_CODES``) where ``slots[slot]`` is the
    trace's Buffer; ``opaque`` lists the opaque nodes' positions, ``regions``
    the regions of structured nodes by position. ``deps`` is ``(ptr, preds)``
    once the inference ran (``trace.Scope.finish``).
    """

    __slots__ = ("entries", "codes", "ends", "opaque", "regions", "slots", "deps",
                 "_early", "_nodes")

    def __init__(self, slots: list):
        self.entries: list[tuple] = []
        self.codes: list[int] = []
        self.ends: list[int] = []
        self.opaque: list[int] = []
        self.regions: dict[int, tuple] = {}
        self.slots = slots
        self.deps = None
        self._early: dict[int, Node] = {}   # nodes made while recording (record())
        self._nodes = None

    def __len__(self) -> int:
        return len(self.entries)

    def node(self, pos: int) -> Node:
        """Node ``pos``, made now if it was not (its deps come with ``nodes()``)."""
        node = self._early.get(pos)
        if node is None:
            node = self._early[pos] = self._make(pos, pos in self.opaque)
        return node

    def early(self) -> dict:
        """``{pos: Node}`` of the nodes made while recording (``made``), not to be changed."""
        return self._early

    def made(self, pos: int) -> Node | None:
        """Node ``pos`` if it was made while recording (a node ``Tracer.record``
        added, or one placed then), else None: a launch ``Tracer.add`` recorded."""
        return self._early.get(pos)

    def nodes(self) -> list[Node]:
        """Every node, with its deps (``deps`` must be set)."""
        if self._nodes is None:
            with gc_paused():
                self._nodes = self._all()
        return self._nodes

    def _all(self) -> list[Node]:
        """Every node: ``_make``'s work inlined, since it runs once per node."""
        early, opaque, slots, codes, regions = \
            self._early, set(self.opaque), self.slots, self.codes, self.regions
        accesses, sources = {}, {}   # shared by the nodes that have the same
        out, start = [], 0
        for pos, (op, target, args, attrs, stream, where, at, index, device), end in \
                zip(range(len(self.entries)), self.entries, self.ends):
            node = early.get(pos)
            if node is None:
                key = tuple(codes[start:end])
                acc = accesses.get(key)
                if acc is None:
                    acc = accesses[key] = tuple([(slots[c >> 2], MODE_NAMES[c & 3])
                                                 for c in key])
                source = sources.get((where, at))
                if source is None:
                    source = sources[(where, at)] = _source(where, at)
                node = Node(op, target, args, acc, dict(attrs), pos in opaque, [], stream,
                            source, index, pos, regions.get(pos, ()), device)
            out.append(node)
            start = end
        ptr, preds = self.deps
        ptr, preds = ptr.tolist(), preds.tolist()
        for node, a, b in zip(out, ptr, ptr[1:]):
            if b - a == 1:
                node.deps = [out[preds[a]]]
            elif a != b:
                node.deps = [out[p] for p in preds[a:b]]
        return out

    def edges(self) -> list[tuple[int, int]]:
        """``(%a, %b)`` of every edge, without making nodes."""
        ptr, preds = self.deps
        index = [e[7] for e in self.entries]
        ops = np.repeat(np.arange(len(index)), np.diff(ptr))
        return [(index[p], index[o]) for p, o in zip(preds.tolist(), ops.tolist())]

    def _make(self, pos: int, opaque: bool) -> Node:
        op, target, args, attrs, stream, where, at, index, device = self.entries[pos]
        slots = self.slots
        accesses = tuple([(slots[c >> 2], MODE_NAMES[c & 3])
                          for c in self.codes[self.ends[pos - 1] if pos else 0:self.ends[pos]]])
        # attrs may be shared by many launches (interned): each node gets its own
        return Node(op, target, args, accesses, dict(attrs), opaque, [], stream,
                    _source(where, at), index, pos, self.regions.get(pos, ()), device)


def _source(where, at) -> tuple:
    """``(file, line)`` of what ``Recording.entries`` holds."""
    return (where, at) if type(where) is str else (where.co_filename, _line(where, at))


_tables: dict = {}   # code object -> (ends of its instruction ranges, their lines)


def _line(code, offset: int) -> int:
    """The line of the instruction at ``offset`` in ``code`` (what ``f_lineno`` says)."""
    table = _tables.get(code)
    if table is None:
        ranges = list(code.co_lines())
        table = _tables[code] = ([end for _, end, _ in ranges], [line for _, _, line in ranges])
    line = table[1][bisect_right(table[0], offset)]
    return line if line is not None else code.co_firstlineno

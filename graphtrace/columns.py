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

    def nodes(self) -> list[Node]:
        """Every node, with its deps (``deps`` must be set)."""
        if self._nodes is None:
            with gc_paused():
                self._nodes = self._all()
        return self._nodes

    def _all(self) -> list[Node]:
        early, opaque = self._early, set(self.opaque)
        out = [early.get(pos) or self._make(pos, pos in opaque)
               for pos in range(len(self.entries))]
        ptr, preds = self.deps
        ptr, preds = ptr.tolist(), preds.tolist()
        for pos, node in enumerate(out):
            a, b = ptr[pos], ptr[pos + 1]
            if a != b:
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
        source = (where, at) if type(where) is str else (where.co_filename, _line(where, at))
        # attrs may be shared by many launches (interned): each node gets its own
        return Node(op, target, args, accesses, dict(attrs), opaque, [], stream, source,
                    index, pos, self.regions.get(pos, ()), device)


_tables: dict = {}   # code object -> (ends of its instruction ranges, their lines)


def _line(code, offset: int) -> int:
    """The line of the instruction at ``offset`` in ``code`` (what ``f_lineno`` says)."""
    table = _tables.get(code)
    if table is None:
        ranges = list(code.co_lines())
        table = _tables[code] = ([end for _, end, _ in ranges], [line for _, _, line in ranges])
    line = table[1][bisect_right(table[0], offset)]
    return line if line is not None else code.co_firstlineno

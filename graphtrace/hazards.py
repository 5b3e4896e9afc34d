"""Why two nodes of a graph are ordered: the hazards between their accesses,
reachability and paths.

``deps.py`` gives a node an edge from an earlier node of its graph when the
two touch a common byte and one of them writes (``deps="data"``), or when
one of them is opaque; it then drops edges that a path already implies.
This module answers the same question for one given pair, so that
``explain`` and the pictures can say which buffer, which bytes and which
hazard put an edge there, and why two nodes are or are not ordered. It
uses the same ``Buffer.overlaps`` as ``deps.py``, so the answers agree.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .buffers import Buffer
from .deps import EVERYTHING
from .temporary import COOPERATIVE

__all__ = ["Hazard", "hazards", "touches", "reachability", "path", "RAW", "WAR", "WAW",
           "OPAQUE", "CLOSES", "WORDS", "span", "merged", "serial", "SERIAL"]

RAW, WAR, WAW, OPAQUE, CLOSES = "RAW", "WAR", "WAW", "opaque", "closes"
WORDS = {RAW: "read after write", WAR: "write after read", WAW: "write after write",
         OPAQUE: "an opaque node is ordered after and before everything",
         CLOSES: "an event record follows everything recorded before it"}


@dataclass(frozen=True, slots=True)
class Hazard:
    """One reason for ``second`` (recorded later) to run after ``first``.

    ``kinds``: some of ``RAW``, ``WAR``, ``WAW`` (or just ``OPAQUE``, or just
    ``CLOSES``: ``second`` is a data-mode event record, after all before it);
    ``first_view``/``second_view``: the views of the two nodes that conflict
    (for ``OPAQUE``: ``deps.EVERYTHING`` for the opaque node, None for the
    other; for ``CLOSES`` both None); ``lo``/``hi``: the bytes both
    views' extents share, ``[lo, hi)`` (for strided views, the bytes they
    have in common lie within).
    """

    kinds: tuple
    first_view: Buffer
    second_view: Buffer
    lo: int
    hi: int


def touches(node) -> tuple:
    """``(view, mode)`` of what a node touches: every byte, read and written, when opaque."""
    return ((EVERYTHING, "rw"),) if node.opaque else node.accesses


def hazards(first, second) -> list[Hazard]:
    """Every way ``second`` conflicts with ``first``: per pair of views that share
    a byte, the hazards their modes make. Empty when they do not conflict."""
    if first.opaque or second.opaque:
        return [Hazard((OPAQUE,), EVERYTHING if first.opaque else None,
                       EVERYTHING if second.opaque else None, 0, 0)]
    if second.attrs.get("closes"):
        return [Hazard((CLOSES,), None, None, 0, 0)]
    out = []
    for bf, mf in first.accesses:
        for bs, ms in second.accesses:
            kinds = tuple(k for k, hit in ((RAW, "w" in mf and "r" in ms),
                                           (WAR, "r" in mf and "w" in ms),
                                           (WAW, "w" in mf and "w" in ms)) if hit)
            if kinds and bf.overlaps(bs):
                out.append(Hazard(kinds, bf, bs, max(bf.lo, bs.lo), min(bf.hi, bs.hi)))
    return out


SERIAL = "cooperative launches run one at a time"


def serial(h: Hazard) -> bool:
    """Whether ``h`` is on the byte every cooperative launch writes (``Tracer.cooperative``):
    not data, the rule that they run one at a time."""
    return h.kinds not in ((OPAQUE,), (CLOSES,)) and h.first_view.lo == COOPERATIVE


def span(view: Buffer, lo: int, hi: int, name: str) -> str:
    """Bytes ``[lo, hi)`` as offsets into the array ``view`` lies in (named ``name``):
    ``x[0B:2048B]``, or ``x`` for all of it; ``x[0B:456B:strided]`` where ``view``
    touches only some of them, as the listing shows it."""
    base = view.base
    if (lo, hi) == (base.lo, base.hi) and view.contiguous:
        return name
    tail = "" if view.contiguous else ":strided"
    return f"{name}[{lo - base.lo}B:{hi - base.lo}B{tail}]"


def merged(pairs) -> list[str]:
    """``"RAW/WAR x"``: one entry per text of the ``(kinds, text)`` pairs, with
    the kinds of every pair naming it, in the order the texts first come (an
    array passed for two parameters makes several pairs of views of it)."""
    by: dict[str, set] = {}
    for kinds, text in pairs:
        by.setdefault(text, set()).update(kinds)
    return [f"{'/'.join(k for k in (RAW, WAR, WAW) if k in kinds)} {text}"
            for text, kinds in by.items()]


def _users(graph) -> list[list[int]]:
    users: list[list[int]] = [[] for _ in graph.nodes]
    for n in graph.nodes:
        for d in n.deps:
            users[d.pos].append(n.pos)
    return users


def reachability(graph) -> list[int]:
    """reach[i]: bitmask of the positions reachable from the node at position i
    (recording order is topological)."""
    reach = [0] * len(graph.nodes)
    users = _users(graph)
    for i in range(len(graph.nodes) - 1, -1, -1):
        r = 0
        for u in users[i]:
            r |= reach[u] | (1 << u)
        reach[i] = r
    return reach


def path(graph, first, second) -> list | None:
    """A shortest path of edges from ``first`` to ``second`` (nodes of ``graph``,
    both ends included), or None."""
    users = _users(graph)
    came = {first.pos: None}
    todo = deque([first.pos])
    while todo:
        p = todo.popleft()
        if p == second.pos:
            out = []
            while p is not None:
                out.append(graph.nodes[p])
                p = came[p]
            return out[::-1]
        for u in users[p]:
            if u not in came and u <= second.pos:
                came[u] = p
                todo.append(u)
    return None

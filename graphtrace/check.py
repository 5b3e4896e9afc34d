"""``gt.check(graph)``: conflicting nodes that the DAG leaves unordered.

Two nodes conflict when their bytes overlap and one of them writes; an
opaque node reads and writes every byte, so it conflicts with any node that
touches memory (a node that touches none, like an event, races with
nothing). In ``deps="data"`` graphs every conflict is ordered by
construction, so a report there is a bug in graphtrace; in ``deps="streams"``
graphs a report is a race in the user's own stream ordering.
"""
from __future__ import annotations

from .deps import EVERYTHING
from .errors import format_source
from .hazards import reachability, touches
from .ir import Graph, Node, Namer, graph_of

__all__ = ["check", "Race"]


class Race:
    """Two unordered nodes that touch the same bytes, one of them writing."""

    __slots__ = ("first", "second", "buffers", "_text")

    def __init__(self, first: Node, second: Node, buffers: tuple, text: str):
        self.first, self.second, self.buffers, self._text = first, second, buffers, text

    def __str__(self):
        return self._text

    def __repr__(self):
        return f"<Race %{self.first.index} / %{self.second.index}>"

    def _repr_pretty_(self, p, cycle):   # IPython shows a list of races as their texts
        p.text(str(self))


def _conflicts(a: Node, b: Node) -> list:
    """The pairs of views by which two nodes conflict (none: they do not)."""
    return [(ba, bb) for ba, ma in touches(a) for bb, mb in touches(b)
            if ("w" in ma or "w" in mb) and ba.overlaps(bb)]


def _name(buf, namer: Namer) -> str:
    return "any memory (opaque)" if buf is EVERYTHING else namer.buffer(buf)


def check(graph: Graph, namer: Namer | None = None) -> list[Race]:
    """Every pair of conflicting nodes with no path between them, in recording
    order; inside each region (a loop or branch body, a child graph) too.

    >>> @gt.graph(deps="streams")
    ... def racy(s, x, out):
    ...     t = s.fork()
    ...     scale[1, 32, s](x, 2.0, out)
    ...     add[1, 32, t](out, x)          # on a forked stream, never joined
    >>> races = gt.check(racy.trace(cuda.device_array(32), cuda.device_array(32)))
    >>> print(races[0])                    # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE
    %0 kernel scale[1, 32](x, 2.0, out) (<doctest ...>:4) and
    %1 kernel add[1, 32](out, x) (<doctest ...>:5) touch x / x and out / out, one writing
    in each pair, but nothing orders them: ...
    """
    graph = graph_of(graph, "check")
    reach = reachability(graph)
    namer, races = namer or Namer(), []
    nodes = graph.nodes
    for n in nodes:
        for region in n.regions:
            races += check(region, namer)
    for j, b in enumerate(nodes):
        for i in range(j):
            if reach[i] >> j & 1:
                continue
            a = nodes[i]
            hits = _conflicts(a, b)
            if not hits:
                continue
            hit, pairs = hits[0], dict.fromkeys(
                f"{_name(x, namer)} / {_name(y, namer)}" for x, y in hits)
            what = f"touch {' and '.join(pairs)}, one writing" + \
                (" in each pair," if len(pairs) > 1 else ",")
            text = (f"%{a.index} {graph.describe(a, namer)} ({format_source(a.source)}) and "
                    f"%{b.index} {graph.describe(b, namer)} ({format_source(b.source)}) {what} "
                    "but nothing orders them: join the streams, record/wait an event, or "
                    "use deps=\"data\"")
            races.append(Race(a, b, hit, text))
    return races

"""``gt.explain``: why each edge of a graph is there, and why two nodes are or
are not ordered.

Every edge of a ``deps="data"`` graph joins two nodes that touch a common
byte, one of them writing: read after write (RAW), write after read (WAR),
write after write (WAW); or one of them is opaque. ``explain`` names the
buffer, the bytes and the hazard of each edge (``hazards.py``, which uses
the same overlap test as ``deps.py``). Edges a path already implies were
dropped when the graph was recorded: ``why(a, b)`` shows that path, or says
why two nodes are independent (their bytes do not overlap, or both only
read them). In a ``deps="streams"`` graph edges follow stream order, and an
unordered conflict is a race (``gt.check`` lists them all).

>>> @gt.graph
... def step(s, x, y, tmp, a):
...     scale[4, 256, s](x, a, tmp)
...     add[4, 256, s](tmp, y)
...     s.memset(x[:16], 0)
>>> n = 1024
>>> e = gt.explain(step, cuda.device_array(n), cuda.device_array(n), cuda.device_array(n), 2.0)
>>> print(e)  # doctest: +NORMALIZE_WHITESPACE
edges of step (deps=data): RAW read after write, WAR write after read, WAW write after write
  %0 scale -> %1 add: RAW tmp
  %0 scale -> %2 memset: WAR x[0B:128B]
>>> print(e.why(1, 2))       # doctest: +NORMALIZE_WHITESPACE
%1 add and %2 memset are independent: their bytes do not overlap
(%1 add touches tmp, y; %2 memset touches x[0B:128B])
"""
from __future__ import annotations

import operator

from .deps import EVERYTHING
from .errors import GraphtraceError, counted
from .hazards import (CLOSES, OPAQUE, RAW, SERIAL, WAR, WAW, WORDS, hazards, merged, path, serial,
                      span, touches)
from .ir import Graph, Namer, Node, graph_of
from .ops.base import callable_name
from .probe import _attr
from .temporary import HOST_ORDER

__all__ = ["explain", "Explanation", "Edge", "Why"]


def _same_node(a: Node, b: Node) -> bool:
    """Whether ``b`` is ``a`` of another trace of the same function and arguments:
    the same index, kind, line and listing."""
    return a.index == b.index and a.kind == b.kind and a.source == b.source and \
        repr(a) == repr(b)


class NodeLookupError(GraphtraceError, KeyError):
    """A node an explanation was asked for that its graph lacks: a graphtrace error
    at the user's line (its text as written, not quoted as a KeyError's), and a
    ``KeyError`` too."""

    __str__ = Exception.__str__


class Edge:
    """An edge of the graph and the hazards that put it there.

    ``first``/``second``: the nodes (``second`` runs after ``first``);
    ``hazards``: ``hazards.Hazard`` tuples; ``streams``: the graph orders by
    stream order (``deps="streams"``), so the edge may carry no hazard.
    """

    __slots__ = ("first", "second", "hazards", "streams", "text")

    def __init__(self, first: Node, second: Node, found: list, streams: bool, namer: Namer):
        self.first, self.second, self.hazards, self.streams = first, second, found, streams
        head, reason = _edge_reason(first, second, found, streams, namer)
        if head:
            reason = head + (f" (carrying {reason})" if reason else "")
        self.text = f"{_short(first)} -> {_short(second)}: " + \
            (reason or "no hazard found: a bug in graphtrace, please report it")

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"<Edge %{self.first.index} -> %{self.second.index}>"


class Why:
    """The answer of ``Explanation.why``: ``ordered`` (bool), ``path`` (the nodes
    of a path that orders the two, empty if none), ``hazards`` (how they
    conflict, directly) and ``race`` (they conflict and nothing orders them);
    ``str()`` says it in words."""

    __slots__ = ("ordered", "path", "hazards", "race", "text")

    def __init__(self, ordered, path_, found, race, text):
        self.ordered, self.path, self.hazards, self.race, self.text = \
            ordered, path_, found, race, text

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"<Why ordered={self.ordered}: {self.text}>"


class Explanation:
    """Why a recorded graph has its edges: ``edges`` (one ``Edge`` per edge, those
    of loop and branch bodies and child graphs too), ``str()`` lists them, and
    ``why(a, b)`` answers for any two nodes (by index, ``"%3"`` or ``Node``)."""

    def __init__(self, graph: Graph):
        self.graph, self.namer = graph, Namer()
        self.edges: list[Edge] = []
        self._where: dict[int, tuple] = {}   # node index -> (node, its graph, enclosing chain)
        self._lines = [f"edges of {graph.name} (deps={graph.mode}): " +
                       ", ".join(f"{k} {WORDS[k]}" for k in (RAW, WAR, WAW))]
        self._walk(graph, (), "  ")

    def _walk(self, graph: Graph, chain: tuple, indent: str) -> None:
        streams = graph.mode == "streams"
        for n in graph.nodes:
            self._where[n.index] = (n, graph, chain)
            for d in n.deps:
                edge = Edge(d, n, hazards(d, n), streams, self.namer)
                self.edges.append(edge)
                self._lines.append(indent + edge.text)
        for n in graph.nodes:
            for k, region in enumerate(n.regions):
                edges = sum(len(m.deps) for m in region.nodes)
                alone = f" no edges ({counted(len(region.nodes), 'node')})"
                head = _short(n)   # a child graph's region is named as the node is
                where = head if head.endswith(f" {region.name}") else f"{head} {region.name}"
                self._lines.append(f"{indent}in {where}:" + ("" if edges else alone))
                self._walk(region, chain + ((n, k),), indent + "  ")

    def __str__(self):
        return "\n".join(self._lines)

    def __repr__(self):
        return f"<graphtrace.Explanation of {self.graph.name}: {counted(len(self.edges), 'edge')}>"

    def _repr_pretty_(self, p, cycle):   # IPython and notebooks show the text
        p.text(str(self))

    def node(self, which) -> Node:
        """The node named by an index, ``"%3"`` or a ``Node`` of the graph."""
        hit = self._where.get(which.index if isinstance(which, Node) else _index(which))
        if isinstance(which, Node) and (hit is None or hit[0] is not which):
            if hit is not None and _same_node(hit[0], which):   # another trace of it
                return hit[0]
            raise NodeLookupError(
                f"{which!r} is a node of another graph than {self.graph.name} explained "
                "here: pass a Node of this explanation's graph (e.graph.nodes), or the "
                "index the listing shows")
        if hit is None and not self._where:
            raise NodeLookupError(f"{which!r} is no node of graph {self.graph.name}: it has "
                                  "no nodes (its function recorded no work)")
        if hit is None:
            last = max(self._where)
            raise NodeLookupError(
                f"{which!r} is no node of graph {self.graph.name}: name one by its index, as "
                f"the listing shows it ({last} or '%{last}', from %{min(self._where)} to "
                f"%{last}), or pass the Node")
        return hit[0]

    def why(self, a, b) -> Why:
        """Why nodes ``a`` and ``b`` are ordered (directly or through which path), or
        why they are not (bytes that do not overlap, only reads, or a race)."""
        a, b = self.node(a), self.node(b)
        if a is b:
            return Why(False, [], [], False, f"{_short(a)} is one node")
        ra, rb, graph, inside = self._common(a, b)
        if ra is rb:   # one holds the other, or both lie in bodies of one node
            return Why(inside is not None, [], [], False, inside or
                       f"{_short(a)} and {_short(b)} lie in different bodies of {_short(ra)}: "
                       "one run of it runs one of them, never both")
        if ra.pos > rb.pos:
            a, b, ra, rb = b, a, rb, ra
        na, nb = (f"{_short(n)}{f' (in {_short(r)})' if n is not r else ''}"
                  for n, r in ((a, ra), (b, rb)))
        # the path joins the nodes of ``graph`` that stand for a and b; the
        # hazards are a's and b's own, not those of a loop or branch holding one
        found = hazards(a, b)
        route = path(graph, ra, rb) or []
        if route:
            steps = " -> ".join(f"%{n.index}" for n in route)
            direct = self._reasons(found, graph)
            if len(route) == 2:
                head, reason = _edge_reason(ra, rb, hazards(ra, rb),
                                            graph.mode == "streams", self.namer)
                if head:
                    reason = head + (f", carrying {reason}" if reason else "")
                text = f"{na} runs before {nb}: ordered by the edge {steps} ({reason})"
                if found and (a, b) != (ra, rb):
                    text += f"; they also conflict directly ({direct})"
            else:
                text = f"{na} runs before {nb}: ordered through {steps}"
                if found:
                    text += f"; they also conflict directly ({direct}), " \
                            "which that path already orders"
            return Why(True, route, found, False, text)
        race = _conflicting(a, b)
        if race:
            text = (f"{na} and {nb} conflict ({self._reasons(found, graph)}) but nothing "
                    "orders them: a race")
        else:
            text = f"{na} and {nb} are independent: " + self._apart(a, b)
        return Why(False, [], found if race else [], race, text)

    def _common(self, a: Node, b: Node):
        """``(a's node, b's node, graph, note)``: the two in the deepest graph that
        holds both (a node of a body stands for the structured node there); the
        same node twice where one holds the other (``note`` says so) or both lie
        in different bodies of it."""
        ca = self._where[a.index][2] + ((a, None),)
        cb = self._where[b.index][2] + ((b, None),)
        k = 0
        while k < min(len(ca), len(cb)) and ca[k][0] is cb[k][0]:
            k += 1
        if k == len(ca) or k == len(cb):
            outer, inner = (a, b) if k == len(ca) else (b, a)
            return outer, outer, None, f"{_short(inner)} lies in {_short(outer)}: it runs " \
                                       "as part of it"
        if k and ca[k - 1][1] != cb[k - 1][1]:
            return ca[k - 1][0], ca[k - 1][0], None, None
        return ca[k][0], cb[k][0], self._where[ca[k][0].index][1], None

    def _reasons(self, found, graph) -> str:
        """The hazards ``found`` of two nodes of ``graph``."""
        return _hazards(found, self.namer, graph.mode == "streams")

    def _apart(self, a: Node, b: Node) -> str:
        """Why two unordered nodes do not conflict."""
        for n in (a, b):
            if not n.opaque and not n.accesses:
                return f"{_short(n)} touches no memory"
        shared = [(x, y) for x, _ in a.accesses for y, _ in b.accesses if x.overlaps(y)]
        if shared:
            views = ", ".join(sorted({span(x, max(x.lo, y.lo), min(x.hi, y.hi),
                                           self.namer.buffer(x.base)) for x, y in shared}))
            return f"both only read {views}"
        return (f"their bytes do not overlap ({_short(a)} touches {self._views(a)}; "
                f"{_short(b)} touches {self._views(b)})")

    def _views(self, node: Node) -> str:
        return ", ".join(dict.fromkeys(self.namer.buffer(v) for v, _ in node.accesses))


def _conflicting(a: Node, b: Node) -> bool:
    """Whether two nodes conflict as ``gt.check`` counts it (an opaque node with one
    that touches memory, or a shared byte one of them writes)."""
    return any(("w" in ma or "w" in mb) and x.overlaps(y)
               for x, ma in touches(a) for y, mb in touches(b))


def _edge_reason(first: Node, second: Node, found, streams: bool, namer: Namer) -> tuple:
    """``(what orders, hazards carried)`` of an edge: in a streams-mode graph stream
    order, or between two cooperative launches (whatever their streams) their
    running one at a time, carrying the hazards; else no head and the hazards."""
    if not streams:
        return "", _hazards(found, namer)
    if _cooperative(first) and _cooperative(second):
        return SERIAL, _hazards([h for h in found if not serial(h)], namer, True)
    return "stream order", _hazards(found, namer, True)


def _cooperative(node: Node) -> bool:
    return node.kind == "kernel" and bool(node.attrs.get("cooperative"))


def _hazards(found, namer: Namer, streams: bool = False) -> str:
    """The hazards ``found``, one entry per buffer or view (``RAW/WAR/WAW x``);
    ``streams``: of a streams-mode graph, where an opaque node is ordered by its
    stream like any other."""
    if found and found[0].kinds == (CLOSES,):
        return WORDS[CLOSES]
    if found and found[0].kinds == (OPAQUE,):
        h = found[0]
        which = "both" if h.first_view is h.second_view else \
            "the first" if h.first_view is EVERYTHING else "the second"
        if streams:
            return f"opaque ({which} may touch any memory)"
        return f"opaque ({which} {'are' if which == 'both' else 'is'} ordered after and " \
               "before everything)"
    pairs, one, in_turn = [], False, False
    for h in found:
        if serial(h):
            one = True
            continue
        if h.kinds != (OPAQUE,) and h.first_view.lo == HOST_ORDER:
            in_turn = True
            continue
        first = span(h.first_view, h.lo, h.hi, namer.buffer(h.first_view.base))
        second = span(h.second_view, h.lo, h.hi, namer.buffer(h.second_view.base))
        pairs.append((h.kinds, first + (f" (= {second})" if second != first else "")))
    return "; ".join(merged(pairs) + [SERIAL] * one + [IN_TURN] * in_turn)


IN_TURN = "host callbacks run in the order recorded"


def _index(which) -> int | None:
    """A node index given as an integer (a numpy one too, not a bool) or ``"%3"``."""
    if isinstance(which, str):
        try:
            return int(which.lstrip("%"))
        except ValueError:
            return None
    if isinstance(which, bool):
        return None
    try:
        return operator.index(which)
    except TypeError:
        return None


def _short(node: Node) -> str:
    """``%3 scale``: the node and the name of what it runs."""
    target = node.target
    name = getattr(target, "name", None) if node.kind == "kernel" else None
    name = name or _attr(target, "__name__")   # (a host callback: the program's object)
    if name is None and node.kind in ("host", "captured"):
        name = callable_name(target)
    name = name or node.kind
    return f"%{node.index} {name}"


def explain(f, *args, **kwargs) -> Explanation:
    """Why each edge of ``f``'s graph for these arguments is there (``f``: a
    ``@gt.graph`` function, traced with ``args``; or a ``Graph``). ``str()`` of
    the result lists the edges with their buffer, bytes and hazard; its
    ``why(a, b)`` says why two nodes are or are not ordered."""
    return Explanation(graph_of(f, "explain", *args, **kwargs))

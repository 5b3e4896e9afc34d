"""What ``f.compile(*args)`` returns: the function's compiled graph for that
signature, held at the arguments it was compiled for.

A function keeps one compiled graph per signature, and each call rebinds it
to the call's arguments. Two handles of one signature (``even =
f.compile(a, b)``, ``odd = f.compile(b, a)``: double buffering) are two
``Compiled`` objects over that one graph: each launch of a handle first
points the graph back at the handle's arguments where another call or handle
has bound it to others since (a rebind: no trace), so each replays what it
was compiled for. Every other attribute is the graph's (``node_count``,
``ir``, ``wait``...).
"""
from __future__ import annotations

__all__ = ["Compiled"]


class Compiled:
    """``f.compile(...)``: ``graph`` (a ``CompiledGraph``, ``SimGraph`` or
    ``CheckedGraph``) at the arguments of that call."""

    __slots__ = ("graph", "_objs", "_ptrs", "_svals")

    def __init__(self, graph):
        self.graph = graph
        self._objs, self._ptrs, self._svals = graph._objs, graph._ptrs, graph._svals

    def launch(self, stream=None) -> None:
        """Replay the graph on ``stream`` with this handle's arguments."""
        g = self.graph
        with g._lock:
            if g._objs is not self._objs:   # another call or handle bound it since
                g.rebind(self._objs, self._ptrs, self._svals)
                self._objs = g._objs
                g._bound = None   # the function's next call checks its arguments again
            g.launch(stream)

    def rebind(self, objs: list, ptrs: list, svals: list, route: str | None = None) -> int:
        """Point this handle (and the graph) at other arguments of the signature."""
        return self._adopt(self.graph.rebind, objs, ptrs, svals, route)

    def bind(self, objs: list, ptrs: list, svals: list) -> list:
        """``Binding.bind`` (new values taken, no node updated), kept by this handle."""
        return self._adopt(self.graph.bind, objs, ptrs, svals)

    def _adopt(self, how, *args):
        g = self.graph
        with g._lock:
            out = how(*args)
            self._objs, self._ptrs, self._svals = g._objs, g._ptrs, g._svals
            g._bound = None
        return out

    def __getattr__(self, name):
        return getattr(self.graph, name)

    def __repr__(self):
        return f"<graphtrace.Compiled {self.graph!r}>"

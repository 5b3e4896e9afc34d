"""What ``f.compile(*args)`` returns: the function's compiled graph for that
signature, held at the arguments it was compiled for.

A function keeps one compiled graph per signature, and each call rebinds it
to the call's arguments. Two handles of one signature (``even =
f.compile(a, b)``, ``odd = f.compile(b, a)``: double buffering) are two
``Compiled`` objects over that one graph: each launch of a handle first
points the graph back at the handle's arguments where another call or handle
has bound it to others since (a rebind: no trace), so each replays what it
was compiled for. Every other attribute is the compiled graph's
(``node_count``, ``ir``, ``wait``, ``graph``: the executable graph...).
"""
from __future__ import annotations

from .context import current_tracer, refuse_in_callback
from .errors import GraphtraceError, TraceError, user_frame

__all__ = ["Compiled"]


class Compiled:
    """``f.compile(...)``: ``compiled`` (a ``CompiledGraph``, ``SimGraph`` or
    ``CheckedGraph``) at the arguments of that call."""

    __slots__ = ("compiled", "_objs", "_ptrs", "_svals")

    def __init__(self, compiled):
        self.compiled = compiled
        self._objs, self._ptrs, self._svals = compiled._objs, compiled._ptrs, compiled._svals

    def launch(self, stream=None) -> None:
        """Replay the graph on ``stream`` with this handle's arguments."""
        refuse_in_callback(f"a compiled handle of {self.compiled.ir.name}")
        if current_tracer() is not None:   # it would run now, once, and not be recorded
            raise TraceError(
                f"a compiled handle of {self.compiled.ir.name} was launched while a graph "
                "function is traced: it would run now, once, and the graph would replay "
                "without it; call the graph function itself with the proxy stream "
                f"({self.compiled.ir.name}(s, ...), or s.child({self.compiled.ir.name}, "
                "...)) to make it part of the graph", user_frame())
        g = self.compiled
        with g._lock:
            if g.broken:
                raise GraphtraceError(
                    f"the compiled graph of {g.ir.name} failed to take new arguments and "
                    "was dropped: compile it again (f.compile(...))")
            if g._objs is not self._objs:   # another call or handle bound it since
                g.rebind(self._objs, self._ptrs, self._svals)
                self._objs = g._objs
            g.launch(stream)

    def rebind(self, objs: list, ptrs: list, svals: list, route: str | None = None) -> int:
        """Point this handle (and the graph) at other arguments of the signature."""
        return self._adopt(self.compiled.rebind, objs, ptrs, svals, route)

    def bind(self, objs: list, ptrs: list, svals: list) -> list:
        """``Binding.bind`` (new values taken, no node updated), kept by this handle."""
        return self._adopt(self.compiled.bind, objs, ptrs, svals)

    def _adopt(self, how, *args):
        g = self.compiled
        with g._lock:
            out = how(*args)
            self._objs, self._ptrs, self._svals = g._objs, g._ptrs, g._svals
        return out

    def __getattr__(self, name):
        if name in Compiled.__slots__:   # not set yet (a copy being made): no attribute
            raise AttributeError(name)
        return getattr(self.compiled, name)

    def __repr__(self):
        return f"<graphtrace.Compiled {self.compiled!r}>"

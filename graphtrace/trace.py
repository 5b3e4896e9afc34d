"""``@graph``, the tracing context and the proxy ``Stream``.

Tracing runs the user's function once with a proxy stream as its first
argument. Every op on the proxy goes through the op table (``ops/``), which
turns it into a ``Node``; the dependency tracker (``deps.py``) gives the node
its predecessors as it is recorded. Nothing runs on a GPU while tracing.
"""
from __future__ import annotations

import gc
import threading

from .buffers import Buffer, as_buffer
from .context import TRACE_HOOKS, ProxyStream, current_tracer, set_tracer
from .deps import make_tracker
from .errors import ArgumentError, HostSyncError, StreamError, TraceError, user_frame
from .ir import Graph, Node
from .ops.base import STREAM_METHODS

__all__ = ["Stream", "Tracer"]

_hooks_lock = threading.Lock()


_gc_pause = [0, False]   # traces running, and whether the collector was on before


def _pause_gc(step: int) -> None:
    """Tracing makes many small objects and frees none: the cyclic collector
    would only rescan them (a third of the time of a 100,000-op trace)."""
    if step > 0 and _gc_pause[0] == 0:
        _gc_pause[1] = gc.isenabled()
        gc.disable()
    _gc_pause[0] += step
    if _gc_pause[0] == 0 and _gc_pause[1]:
        gc.enable()


class Tracer:
    """Records nodes for one trace of one function, in one thread."""

    def __init__(self, name: str, params: list[str], mode: str):
        self.name, self.params, self.mode = name, params, mode
        self.nodes: list[Node] = []
        self.deps = make_tracker(mode)
        self.thread = threading.get_ident()
        self.active = False
        self.n_streams = 1
        self.events: dict[int, Node] = {}       # id(event) -> its record node
        self._bufs: dict[int, tuple] = {}       # id(obj) -> (obj, Buffer)
        self._roots: list[Buffer] = []          # labelled buffers: arguments, globals

    # --- buffers -----------------------------------------------------------
    def add_argument(self, label: str, obj) -> Buffer:
        """Name an array the function receives or reaches by a global name.

        Such an array is its own base: it moves only with itself when a later
        call rebinds the graph, whatever other argument it lies in.
        """
        buf = self.cached_buffer(obj)
        if buf is None:
            buf = as_buffer(obj)
            buf.label = label
            self._bufs[id(obj)] = (obj, buf)
            self._roots.append(buf)
        return buf

    def cached_buffer(self, obj) -> Buffer | None:
        hit = self._bufs.get(id(obj))
        return hit[1] if hit is not None and hit[0] is obj else None

    def buffer(self, obj) -> Buffer:
        """The (labelled) ``Buffer`` of an array, cached for the trace.

        Every array a node uses must lie in an argument or in an array the
        function reaches by a global or closure name: those are the arrays a
        later call can change, and that the cache key watches. Any other array
        (a helper function's global, an object's attribute, an array made or
        uploaded during the trace) would be frozen into the graph unseen.
        """
        hit = self._bufs.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        buf = as_buffer(obj)
        buf.label = self._label(buf)
        if buf.base is buf and buf.label is None and not self._within_roots(buf):
            raise ArgumentError(
                f"an array used here ({_describe(buf)}) is not an argument of {self.name} "
                "nor an array it reaches by a global or closure name (it may be a helper "
                "function's global, an object's attribute such as self.weights, or an "
                "array made during the trace): graphtrace cannot see when it changes, "
                f"so the graph would keep using this one; pass it to {self.name} as an "
                "argument")
        self._bufs[id(obj)] = (obj, buf)  # holding obj keeps its id unique
        return buf

    def _within_roots(self, buf: Buffer) -> bool:
        """Whether a view meets a named array (one too strided to place exactly)."""
        return any(r.lo <= buf.lo and buf.hi <= r.hi for r in self._roots)

    def _label(self, buf: Buffer) -> str | None:
        """Find the named array a view lies in: it moves with that one on rebinding.

        The array must hold every byte of the view; where that cannot be told
        (huge strided views) an array is chosen only if it is the one candidate.
        """
        candidates = [r for r in self._roots
                      if r.lo <= buf.lo and buf.hi <= r.hi and r.lo < r.hi]
        root = next((r for r in candidates if r.contains(buf)), None)
        if root is None and len(candidates) == 1 and candidates[0].contains(buf) is None:
            root = candidates[0]
        if root is None:
            return None
        buf.base = root
        if buf.same_view(root):
            return root.label
        tail = "" if buf.contiguous else ":strided"
        return f"{root.label}[{buf.lo - root.lo}B:{buf.hi - root.lo}B{tail}]"

    # --- nodes -------------------------------------------------------------
    def record(self, kind: str, target, args: tuple, accesses: tuple, *,
               stream: int = 0, attrs: dict | None = None, opaque: bool = False,
               source: tuple | None = None) -> Node:
        node = Node(kind, target, tuple(args), tuple(accesses), attrs or {}, opaque,
                    stream=stream, source=source or user_frame(2), index=len(self.nodes))
        self.deps.add(node, stream)
        self.nodes.append(node)
        return node

    def graph(self) -> Graph:
        return Graph(self.name, self.params, self.mode, self.nodes)

    # --- context -----------------------------------------------------------
    def __enter__(self):
        if current_tracer() is not None:
            raise TraceError(
                f"cannot trace {self.name} while tracing {current_tracer().name}: to "
                "nest a graph, call the decorated function with the proxy stream "
                "as its first argument")
        with _hooks_lock:
            for hook in TRACE_HOOKS:   # each is cheap once done
                hook()
            _pause_gc(+1)
        set_tracer(self)
        self.active = True
        return self

    def __exit__(self, *exc):
        set_tracer(None)
        self.active = False
        with _hooks_lock:
            _pause_gc(-1)
        return False


def _describe(buf: Buffer) -> str:
    where = "host" if buf.is_host else f"device {buf.device}"
    return f"{buf.dtype}{list(buf.shape)} on {where}"


class Stream(ProxyStream):
    """The proxy stream a traced function receives as its first argument.

    Ops issued on it are recorded as graph nodes: ``launch``, numba's
    ``kernel[grid, block, s](...)``, ``copy``, ``memset``, ``host``,
    ``record``/``wait``, ``fork``/``join``. It is valid only inside its trace.
    """

    __slots__ = ("_tracer", "_index")

    def __init__(self, tracer: Tracer, index: int = 0):
        self._tracer, self._index = tracer, index

    def _check(self) -> Tracer:
        t = self._tracer
        if not t.active or t.thread != threading.get_ident():
            raise StreamError(
                f"proxy stream of {t.name} used outside its trace: a proxy stream is "
                "valid only inside the decorated function while it is traced; issue "
                "work there, or launch on a real stream outside")
        return t

    def _record(self, kind, target, args, accesses, **kw) -> Node:
        return self._check().record(kind, target, args, accesses, stream=self._index,
                                    source=user_frame(2), **kw)

    def fork(self) -> "Stream":
        """A new proxy stream that starts after the work issued here so far."""
        t = self._check()
        child = Stream(t, t.n_streams)
        t.n_streams += 1
        t.deps.fork(self._index, child._index)
        return child

    def join(self, *others: "Stream") -> None:
        """Make later work here wait for everything issued on ``others``."""
        t = self._check()
        for other in others:
            if not isinstance(other, Stream) or other._tracer is not t:
                raise StreamError("join() takes proxy streams of the same trace")
            t.deps.join(self._index, other._index)

    def synchronize(self) -> None:
        raise HostSyncError(
            "synchronize() inside a trace: a graph cannot wait for the host midway; "
            "split the function in two graphs, or use s.host(fn, ...) to run host "
            "code at that point of the graph")

    @property
    def __cuda_stream__(self):
        raise StreamError(
            "a proxy stream is not a real CUDA stream: issue work on it with "
            "s.launch(...), kernel[grid, block, s](...), s.copy(...), s.memset(...) "
            "or s.host(...)")

    def __repr__(self):
        return f"<graphtrace proxy stream {self._index} of {self._tracer.name}>"


for _name, _fn in STREAM_METHODS.items():
    setattr(Stream, _name, _fn)

"""IR -> cuda.core ``GraphDefinition`` -> instantiated graph; rebinding.

The emitter is thin: each node is added after its predecessors by its op
table entry (``Op.emit``), and every driver failure is re-raised naming the
node and the user's line. ``CompiledGraph`` holds the definition, the
executable graph and the current binding of arguments; ``rebind`` updates
only the nodes whose arrays or scalars changed.
"""
from __future__ import annotations

import threading

from .buffers import Buffer
from .errors import EmitError
from .ir import Graph, Scalar
from .ops import OPS

__all__ = ["CompiledGraph", "as_stream", "materialize"]

_tls = threading.local()
_streams: dict[int, tuple] = {}   # id(stream object) -> (it, its cuda.core Stream)

# Host cost of the two update routes on an H200 (bench/RESULTS.md): updating one
# executable node, updating one definition node, and Graph.update per node held.
EXEC_NODE_UPDATE_US = 4.6
DEFINITION_NODE_UPDATE_US = 1.0
WHOLE_GRAPH_US_PER_NODE = 0.65


def materialize(value):
    """The Python value a recorded argument stood for when it was traced."""
    if isinstance(value, Buffer):
        return value.obj
    if isinstance(value, Scalar):
        return value.value
    if isinstance(value, (tuple, list)):
        return type(value)(materialize(v) for v in value)
    return value


def as_stream(stream, device=None):
    """A cuda.core ``Stream`` for any stream object (None: the current one).

    ``device`` is the cuda.core ``Device`` made current in this thread (its
    instances are per thread).
    """
    from cuda.core import Device, Stream
    import sys
    device = device or Device()
    if isinstance(stream, Stream):
        return stream
    if stream is None:
        if "cupy" in sys.modules:
            stream = sys.modules["cupy"].cuda.get_current_stream()
        elif "torch" in sys.modules and sys.modules["torch"].cuda.is_initialized():
            stream = sys.modules["torch"].cuda.current_stream()
        else:
            return device.default_stream
    if isinstance(stream, int):
        return Stream.from_handle(stream)
    hit = _streams.get(id(stream))
    if hit is not None and hit[0] is stream:
        return hit[1]
    if hasattr(stream, "__cuda_stream__"):
        core = device.create_stream(stream)
        if len(_streams) >= 16:
            _streams.pop(next(iter(_streams)))
        _streams[id(stream)] = (stream, core)  # wrapping costs more than a launch
        return core
    handle = getattr(stream, "handle", None)  # numba streams: a ctypes c_void_p
    if handle is not None:
        return Stream.from_handle(int(getattr(handle, "value", handle) or 0))
    raise TypeError(f"cannot launch on {type(stream).__name__}: pass a cupy, torch, numba "
                    "or cuda.core stream, an object with __cuda_stream__, or a handle int")


class _Emitter:
    """What an op's ``emit`` gets: the definition, and values for this binding."""

    def __init__(self, compiled: "CompiledGraph"):
        from cuda.core.graph import GraphDefinition
        self.definition = GraphDefinition()
        self.value_of = compiled.value_of
        self.state: dict[int, object] = {}   # node index -> what the op keeps for updates


class CompiledGraph:
    """An instantiated CUDA graph for one signature of a decorated function.

    ``launch(stream)`` replays it; ``rebind(arrays, scalars)`` points it at
    new arguments of the same signature. It keeps every buffer it references
    alive: the arguments of its current binding and the arrays of its trace.
    """

    def __init__(self, ir: Graph, arrays: list[Buffer], scalars: list[Scalar], device=None):
        from cuda.core import Device
        self.ir = ir
        self.device = Device(device) if device is not None else Device()
        self.device.set_current()
        self._lock = threading.Lock()
        self._roots = arrays                             # traced argument buffers
        self._slot = {}
        for i, b in enumerate(arrays):
            self._slot.setdefault(id(b), i)
        self._ptrs = [b.ptr for b in arrays]             # current binding
        self._objs = [b.obj for b in arrays]
        self._svals = [s.value for s in scalars]
        self._bound = None                               # args tuple of the last call
        self._users_a, self._users_s = self._users(len(arrays), len(scalars))
        self._emit()

    # --- binding -----------------------------------------------------------
    def value_of(self, x):
        """The value a recorded argument has in the current binding."""
        if isinstance(x, Buffer):
            i = self._slot.get(id(x.base))
            if i is None:
                return x
            delta = self._ptrs[i] - x.base.ptr
            return x if delta == 0 else x.moved(delta)
        if isinstance(x, Scalar):
            return self._svals[x.slot]
        return x

    def _users(self, n_arrays, n_scalars):
        users_a = [set() for _ in range(n_arrays)]
        users_s = [set() for _ in range(n_scalars)]

        def visit(v, idx):
            if isinstance(v, Buffer):
                i = self._slot.get(id(v.base))
                if i is not None:
                    users_a[i].add(idx)
            elif isinstance(v, Scalar):
                users_s[v.slot].add(idx)
            elif isinstance(v, (tuple, list)):
                for x in v:
                    visit(x, idx)

        for n in self.ir.nodes:
            visit(n.args, n.index)
            for b, _ in n.accesses:
                visit(b, n.index)
        # an argument passed twice shares the first slot's traced buffer
        for i, b in enumerate(self._roots):
            first = self._slot[id(b)]
            if first != i:
                users_a[i] = users_a[first]
        return [sorted(u) for u in users_a], [sorted(u) for u in users_s]

    # --- building ----------------------------------------------------------
    def _emit(self):
        em = _Emitter(self)
        gnodes = []
        for node in self.ir.nodes:
            preds = [gnodes[d.index] for d in node.deps]
            parent = preds[0] if preds else em.definition
            try:
                gn = OPS[node.kind].emit(em, node, parent)
                if len(preds) > 1:
                    gn.pred.update(preds[1:])
            except EmitError:
                raise
            except Exception as e:  # driver and packing failures, with the node named
                raise EmitError(
                    f"failed to add {node.kind} node %{node.index} "
                    f"{self.ir.describe(node)} ({type(e).__name__}: {e})",
                    source=node.source) from e
            gnodes.append(gn)
        self.definition, self.gnodes, self._state = em.definition, gnodes, em.state
        self._em = em
        try:
            self.graph = em.definition.instantiate()
        except Exception as e:
            raise EmitError(f"failed to instantiate graph {self.ir.name} "
                            f"({type(e).__name__}: {e})", source=self.ir.nodes[0].source
                            if self.ir.nodes else None) from e
        self._uploaded = False

    # --- running -----------------------------------------------------------
    def _make_current(self):
        """Contexts are current per thread: make ours current in this one, once."""
        from cuda.core import Device
        dev = getattr(_tls, "device", None)
        if dev is None or dev.device_id != self.device.device_id:
            dev = _tls.device = Device(self.device.device_id)
            dev.set_current()
        return dev

    def launch(self, stream=None) -> None:
        """Replay the graph on ``stream`` (asynchronous)."""
        s = as_stream(stream, self._make_current())
        if not self._uploaded:
            self.graph.upload(s)
            self._uploaded = True
        self.graph.launch(s)

    def rebind(self, objs: list, ptrs: list[int], svals: list, route: str | None = None) -> int:
        """Point the graph at new arguments; returns how many nodes were updated.

        Two routes: update each changed node of the executable graph
        (``"node"``), or update the changed nodes of the definition and then
        the whole executable graph from it (``"whole"``, kernels only). By
        default the cheaper one for this many nodes is taken.
        """
        self._make_current()
        changed = set()
        for i, p in enumerate(ptrs):
            if p != self._ptrs[i]:
                changed.update(self._users_a[i])
        for j, v in enumerate(svals):
            old = self._svals[j]
            if v is not old and (type(v) is not type(old) or v != old):
                changed.update(self._users_s[j])
        self._objs, self._ptrs, self._svals = objs, ptrs, svals
        if not changed:
            return 0
        nodes = [self.ir.nodes[i] for i in sorted(changed)]
        route = route or self._route(len(nodes))
        whole = route == "whole" and all(OPS[n.kind].update_definition for n in nodes)
        for node in nodes:
            op, gnode = OPS[node.kind], self.gnodes[node.index]
            try:
                (op.update_definition if whole else op.update)(self, node, gnode)
            except Exception as e:
                raise EmitError(f"failed to update {node.kind} node %{node.index} "
                                f"{self.ir.describe(node)} ({type(e).__name__}: {e})",
                                source=node.source) from e
        if whole:
            self.graph.update(self.definition)
        return len(nodes)

    def _route(self, n_changed: int) -> str:
        """The cheaper update route, by the costs measured in bench/ (us)."""
        per_node = n_changed * EXEC_NODE_UPDATE_US
        whole = n_changed * DEFINITION_NODE_UPDATE_US + len(self.gnodes) * WHOLE_GRAPH_US_PER_NODE
        return "node" if per_node <= whole else "whole"

    def exec_node(self, gnode):
        return self.graph[gnode]

    @property
    def state(self):
        return self._state

    def __repr__(self):
        n = len(self.ir.nodes)
        return f"<graphtrace.CompiledGraph {self.ir.name}: {n} nodes, " \
               f"{len(self.ir.edges())} edges on {self.device}>"


"""The IR: ``Node`` and ``Graph`` (and ``Scalar``, which recorded arguments hold).

A ``Graph`` is the ordered list of nodes one trace recorded; a structured
node owns regions, which are graphs of their own. ``str(graph)`` is its
listing, with names assigned at print time so that listings are
deterministic and comparable as text; ``graph.verify()`` checks the IR's
invariants.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import picture
from .buffers import Buffer
from .context import ProxyStream
from .errors import ArgumentError, IRError, counted, format_source
from .ops.base import Op
from .placement import device_name
from .probe import _attr, _repr
from .scalar import Scalar
from .temporary import is_virtual
from .tree import tree_map

__all__ = ["Node", "Graph", "Scalar", "Namer", "describe", "device_name", "MODES"]

MODES = {"r": "in", "w": "out", "rw": "inout"}


@dataclass(eq=False, slots=True)
class Node:
    """One recorded operation.

    Fields
    ------
    op : ops.base.Op
        What the node does: the one instance of its kind's ``Op`` subclass,
        which describes, verifies, emits, updates and simulates it;
        ``node.kind`` is ``op.kind``. Kinds:

        - ``kernel``: ``target`` is a kernel adapter (``ops._adapter``);
          ``args`` the launch arguments as the user passed them (``Buffer``
          for arrays, ``Scalar`` for dynamic numbers, constants otherwise);
          ``attrs``: ``grid`` (in blocks), ``block`` (3-tuples), ``shared_mem``,
          ``cluster`` (a 3-tuple or None), ``cooperative`` (``ops/_launch.py``).
        - ``memcpy``: ``args = (dst, src)`` Buffers of equal byte size;
          ``dst`` written, ``src`` read. Host sides must be pinned.
        - ``memset``: ``args = (dst, value)``; ``dst`` written; ``attrs``:
          ``element`` (1, 2 or 4 bytes) and ``pattern`` (an unsigned int).
        - ``host``: ``target`` a Python callable run by the graph on a
          driver thread with ``args``; array arguments are host Buffers.
        - ``event_record`` / ``event_wait``: ``target`` the event; no accesses.

    accesses : tuple of (Buffer, mode)
        Memory the node touches; mode is ``"r"``, ``"w"`` or ``"rw"``.
    opaque : bool
        The node may touch memory it was not given: it is ordered after every
        earlier node and before every later one.
    deps : list of Node
        Direct predecessors after transitive reduction, in recording order.
    stream : int
        Index of the proxy stream the node was issued on (0 is the one the
        function receives; ``fork`` makes more).
    source : (file, line)
        The user's line that issued the node.
    index : int
        The node's id, unique in its trace (regions included) and given in
        recording order: listings name the node ``%index``, and emission
        keeps per-node state under it.
    pos : int
        Position in its own graph's ``nodes`` (a topological order of that
        graph): dense per graph, for per-graph tables.
    regions : tuple of Graph
        Sub-graphs a structured node owns (a loop body, the branches of a
        conditional, a child graph); empty for every other node. A region's
        nodes depend only on nodes of the same region.
    device : int, tuple of int or None
        The GPU the node runs on (``placement.py``): the device of its arrays
        or the one its proxy stream names; a tuple for a captured region
        over several devices (the first one captures); None for the device
        the graph is built on (and for host callbacks and events).
    """

    op: object
    target: object
    args: tuple
    accesses: tuple
    attrs: dict = field(default_factory=dict)
    opaque: bool = False
    deps: list = field(default_factory=list)
    stream: int = 0
    source: tuple = ("<unknown>", 0)
    index: int = -1
    pos: int = -1
    regions: tuple = ()
    device: object = None

    def __repr__(self) -> str:
        """One line, as the listing shows the node: its predecessors by name, not
        by their own reprs (which would repeat every path to them)."""
        after = f"  after({', '.join(f'%{d.index}' for d in self.deps)})" if self.deps else ""
        return f"<Node %{self.index} = {describe(self)}{after}  # {format_source(self.source)}>"

    @property
    def kind(self) -> str:
        return self.op.kind

    @property
    def reads(self) -> tuple:
        return tuple(b for b, m in self.accesses if "r" in m)

    @property
    def writes(self) -> tuple:
        return tuple(b for b, m in self.accesses if "w" in m)


class Namer:
    """Print-time names: ``%i`` for nodes, labels or ``%bK`` for buffers."""

    def __init__(self):
        self.anon: dict[int, str] = {}

    def buffer(self, b: Buffer) -> str:
        if b.label:
            return b.label
        key = b.lo, b.hi, b.shape, b.strides
        name = self.anon.get(key)
        if name is None:
            name = self.anon[key] = f"%b{len(self.anon)}"
        return name

    def value(self, v) -> str:
        """A recorded argument as the listing shows it; containers print as Python's."""
        if isinstance(v, (list, tuple, dict)):
            return repr(tree_map(lambda x: _Shown(self.value(x)), v))
        if isinstance(v, Buffer):
            return self.buffer(v)
        if isinstance(v, Node):
            return f"%{v.index}"
        if isinstance(v, Scalar):
            return v.name
        if isinstance(v, ProxyStream):   # handed to a graph function: as nodes show it
            return f"stream {getattr(v, '_index', '?')}"
        name = _attr(v, "__name__") if callable(v) else None
        return name if isinstance(name, str) else _repr(v)


def describe(node: Node, namer: Namer | None = None) -> str:
    """``kind target(args)`` of one node, as the listing shows it."""
    return f"{node.kind} {node.op.describe(node, namer or Namer())}"


class _Shown(str):
    """A leaf's listing text, which ``repr`` of its container shows as it is."""

    def __repr__(self):
        return str(self)


class Graph:
    """A recorded graph: nodes in recording order, with their dependencies.

    ``nodes`` is a list of ``Node``, or what a trace recorded
    (``columns.Recording``), whose nodes are made when first asked for.
    ``temporaries`` are the root Buffers of the arrays the graph owns
    (``s.empty``/``s.zeros``, ``temporary.py``), those made in its regions
    too; a region's own list is empty.

    >>> @gt.graph
    ... def step(s, x, out, flag):
    ...     scale[1, 32, s](x, 2.0, out)
    ...     with s.if_then(gt.cond(flag)) as then:
    ...         add[1, 32, then](out, x)
    >>> g = step.trace(cuda.device_array(32), cuda.device_array(32), cuda.device_array(1))
    >>> g.edges(), [(n.index, n.kind) for n in g.walk()]
    ([(0, 1)], [(0, 'kernel'), (1, 'if'), (2, 'kernel')])
    >>> g.verify()                       # the IR's invariants hold
    >>> g.picture(buffers=True).save("step.svg")   # doctest: +SKIP
    """

    def __init__(self, name: str, params: list[str], mode: str, nodes, temporaries=()):
        self.name, self.params, self.mode = name, params, mode
        self._nodes, self._recording = (nodes, None) if isinstance(nodes, list) else (None, nodes)
        self.temporaries = list(temporaries)
        self._count = None   # count(): nodes are not added once recorded

    @property
    def nodes(self) -> list[Node]:
        if self._nodes is None:
            self._nodes = self._recording.nodes()
        return self._nodes

    def recording(self):
        """What the trace recorded (``columns.Recording``) while its Nodes are not
        made, else None."""
        return self._recording if self._nodes is None else None

    def edges(self) -> list[tuple[int, int]]:
        """``(%a, %b)`` for each edge of this graph (not of its regions)."""
        if self._nodes is None:
            return self._recording.edges()
        return [(d.index, n.index) for n in self.nodes for d in n.deps]

    def structured(self) -> list[Node]:
        """The nodes that own regions, in order, without making the others' Nodes."""
        if self._nodes is None:
            return [self._recording.node(pos) for pos in sorted(self._recording.regions)]
        return [n for n in self._nodes if n.regions]

    def count(self) -> int:
        """How many nodes ``walk`` yields (those of regions too)."""
        n = self._count
        if n is None:
            n = self._count = len(self.nodes if self._nodes is not None else
                                  self._recording) + \
                sum(r.count() for node in self.structured() for r in node.regions)
        return n

    def walk(self):
        """Every node, depth first: a node, then the nodes of its regions."""
        for node in self.nodes:
            yield node
            for region in node.regions:
                yield from region.walk()

    def verify(self) -> None:
        """Check the IR's invariants; raise ``IRError`` naming the first node
        that breaks one, with the listing attached.

        Each node's op is an ``Op``; its ``pos`` is its place in its graph;
        each dependency is an earlier node of the same graph; indices are
        unique over the whole walk; each accessed view lies in its base (the
        argument it moves with); each temporary accessed is one the graph owns;
        regions are graphs and verify too; and the op's own ``verify(node)``
        finds nothing.
        """
        self._verify(self, set())

    def _verify(self, top: "Graph", seen: set) -> None:
        for pos, node in enumerate(self.nodes):
            problem = _problem(self, node, pos, seen) or _unowned(top, node)
            if problem is not None:
                kind = getattr(getattr(node, "op", None), "kind", "?")
                raise IRError(f"IR check of graph {top.name}: %{getattr(node, 'index', '?')} "
                              f"({kind}) {problem}\n{_listing(top)}",
                              source=getattr(node, "source", ("<unknown>", 0)))
            seen.add(node.index)
            for region in node.regions:
                region._verify(top, seen)

    def describe(self, node: Node, namer: Namer | None = None) -> str:
        """``kind target(args)`` of one node, as the listing shows it."""
        return describe(node, namer)

    def _line(self, node: Node, namer: Namer, indent: str = "  ",
              devices: bool = False) -> str:
        parts = [f"%{node.index} = {self.describe(node, namer)}"]
        if devices and node.device is not None:
            parts.append(device_name(node.device))
        modes: dict[str, str] = {}   # one entry per name: an array passed twice is one
        for b, m in node.accesses:
            name = namer.buffer(b)
            old = modes.get(name, m)
            modes[name] = m if old == m else "rw"
        for mode, word in MODES.items():
            names = [name for name, m in modes.items() if m == mode]
            if names:
                parts.append(f"{word}({', '.join(names)})")
        if node.opaque:
            parts.append("opaque")
        if node.deps:
            parts.append("after(" + ", ".join(f"%{d.index}" for d in node.deps) + ")")
        if node.stream:
            parts.append(f"stream {node.stream}")
        return indent + "  ".join(parts) + f"  # {format_source(node.source)}"

    def _lines(self, namer: Namer, indent: str = "  ", devices: bool = False) -> list[str]:
        """One line per node, each region's under its node, indented; with
        ``devices``, the device each node runs on."""
        out = []
        for n in self.nodes:
            out.append(self._line(n, namer, indent, devices))
            for region in n.regions:
                out.append(f"{indent}  {region.name}:")
                out += region._lines(namer, indent + "    ", devices)
        return out

    @property
    def devices(self) -> tuple:
        """The devices its nodes are placed on, sorted (the graph's own one not
        counted where nodes are left to it)."""
        found = set()
        for n in self.walk():
            if n.device is not None:
                found.update(n.device if isinstance(n.device, tuple) else (n.device,))
        return tuple(sorted(found))

    def __str__(self) -> str:
        namer = Namer()
        head = (f"graph {self.name}({', '.join(self.params)})  deps={self.mode}  "
                f"{counted(len(self.nodes), 'node')}, {counted(len(self.edges()), 'edge')}")
        temps = [f"{b.label} {b.dtype}{list(b.shape)}" for b in self.temporaries]
        owned = [f"  temporaries: {', '.join(temps)}"] if temps else []
        return "\n".join([head] + owned + self._lines(namer, devices=len(self.devices) > 1))

    def __repr__(self) -> str:
        return f"<graphtrace.Graph {self.name}: {counted(len(self.nodes), 'node')}>"

    def to_dot(self, buffers: bool = False) -> str:
        """The DAG in Graphviz DOT (``picture.py``); ``buffers=True`` labels each edge
        with the buffer and hazard that put it there."""
        return picture.dot(self, Namer(), buffers)

    def picture(self, buffers: bool = False) -> picture.Picture:
        """A ``Picture`` of the graph: ``.save("g.svg")`` (or .png, .dot), SVG in Jupyter."""
        return picture.Picture(self.to_dot(buffers), self.name)

    def _repr_mimebundle_(self, include=None, exclude=None):
        """Jupyter: the listing, and the picture where Graphviz is installed."""
        return picture.bundle(self, str(self), self.to_dot)


def graph_of(obj, tool: str, *args, **kwargs) -> Graph:
    """The IR a tool is given: a ``Graph``, a compiled graph's (``f.compile(...)``), or
    with ``args`` a graph function's trace; ``ArgumentError`` saying what to pass."""
    if isinstance(obj, Graph):
        return obj
    if isinstance(getattr(obj, "ir", None), Graph):
        return obj.ir
    name = getattr(obj, "__name__", None) or "f"
    if hasattr(obj, "trace") and hasattr(obj, "signature"):   # a graph function
        if args or kwargs or tool == "explain":
            return obj.trace(*args, **kwargs)
        raise ArgumentError(f"gt.{tool}() takes a traced graph, not the graph function "
                            f"{name} itself: gt.{tool}({name}.trace(*arguments))")
    also = ", or a @gt.graph function and its arguments" if tool == "explain" else ""
    raise ArgumentError(f"gt.{tool}() takes a traced graph (f.trace(*arguments)) or a "
                        f"compiled one{also}, not {type(obj).__name__}")


def _problem(graph: Graph, node, pos: int, seen: set) -> str | None:
    """What breaks an invariant at ``node``, the ``pos``-th of ``graph``, or None."""
    if not isinstance(node, Node):
        return f"is a {type(node).__name__}, not a Node"
    if not isinstance(node.op, Op):
        return f"has op {node.op!r}, which is no graphtrace Op"
    if node.pos != pos:
        return f"says it is at position {node.pos} of graph {graph.name}, but is at {pos}"
    if node.index in seen:
        return f"has the index of another node of the trace (%{node.index})"
    for d in node.deps:
        if not (isinstance(d, Node) and 0 <= d.pos < pos and graph.nodes[d.pos] is d):
            return (f"depends on %{getattr(d, 'index', d)}, which is no earlier node of "
                    f"graph {graph.name}")
    for b, mode in node.accesses:
        if mode not in MODES:
            return f"accesses a view with mode {mode!r} (not 'r', 'w' or 'rw')"
        if not _within_base(b):
            return (f"accesses {b.label or repr(b)}, which does not lie in the array it "
                    f"moves with ({b.base.label or repr(b.base)})")
    ids = node.device if isinstance(node.device, tuple) else (node.device,)
    if node.device is not None and not all(type(d) is int and d >= 0 for d in ids):
        return f"is placed on {node.device!r}, which is no device ordinal (nor a tuple of them)"
    for region in node.regions:
        if not isinstance(region, Graph):
            return f"owns a region that is a {type(region).__name__}, not a Graph"
    return node.op.verify(node)


def _unowned(top: Graph, node) -> str | None:
    """A temporary the node touches that the whole graph does not own (no memory)."""
    owned = {id(t) for t in top.temporaries}
    for b, _ in node.accesses:
        if is_virtual(b) and id(b.base) not in owned:
            return f"accesses {b.label or repr(b)}, a temporary the graph does not own"
    return None


def _within_base(b: Buffer) -> bool:
    base = b.base
    if base is b:
        return True
    inside = base.contains(b)
    return inside if inside is not None else base.lo <= b.lo and b.hi <= base.hi


def _listing(graph: Graph) -> str:
    """The listing of a graph that may be broken (then as far as it prints)."""
    try:
        return str(graph)
    except Exception as e:  # noqa: BLE001  (the listing only illustrates the error)
        return f"(no listing: {type(e).__name__}: {e})"

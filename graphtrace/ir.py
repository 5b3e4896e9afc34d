"""The IR: ``Node``, ``Scalar`` and ``Graph``.

A ``Graph`` is the ordered list of nodes one trace recorded; ``str(graph)``
is its listing, with names assigned at print time so that listings are
deterministic and comparable as text.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field

from .buffers import Buffer
from .errors import format_source
from .scalar import Scalar
from .tree import tree_map

__all__ = ["Node", "Graph", "Scalar", "Namer", "describe", "MODES"]

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

        - ``kernel``: ``target`` is a kernel adapter (``ops.kernel``);
          ``args`` the launch arguments as the user passed them (``Buffer``
          for arrays, ``Scalar`` for dynamic numbers, constants otherwise);
          ``attrs``: ``grid``, ``block`` (3-tuples), ``shared_mem``.
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
        Position in the recording order (a topological order of the DAG).
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
        if callable(v) and hasattr(v, "__name__"):
            return v.__name__
        return repr(v)


def describe(node: Node, namer: Namer | None = None) -> str:
    """``kind target(args)`` of one node, as the listing shows it."""
    return f"{node.kind} {node.op.describe(node, namer or Namer())}"


class _Shown(str):
    """A leaf's listing text, which ``repr`` of its container shows as it is."""

    def __repr__(self):
        return str(self)


class Graph:
    """A recorded graph: nodes in recording order, with their dependencies."""

    def __init__(self, name: str, params: list[str], mode: str, nodes: list[Node]):
        self.name, self.params, self.mode, self.nodes = name, params, mode, nodes

    def edges(self) -> list[tuple[int, int]]:
        return [(d.index, n.index) for n in self.nodes for d in n.deps]

    def describe(self, node: Node, namer: Namer | None = None) -> str:
        """``kind target(args)`` of one node, as the listing shows it."""
        return describe(node, namer)

    def _line(self, node: Node, namer: Namer) -> str:
        parts = [f"%{node.index} = {self.describe(node, namer)}"]
        for mode, word in MODES.items():
            names = [namer.buffer(b) for b, m in node.accesses if m == mode]
            if names:
                parts.append(f"{word}({', '.join(names)})")
        if node.opaque:
            parts.append("opaque")
        if node.deps:
            parts.append("after(" + ", ".join(f"%{d.index}" for d in node.deps) + ")")
        if node.stream:
            parts.append(f"stream {node.stream}")
        return "  " + "  ".join(parts) + f"  # {format_source(node.source)}"

    def __str__(self) -> str:
        namer = Namer()
        head = (f"graph {self.name}({', '.join(self.params)})  deps={self.mode}  "
                f"{len(self.nodes)} nodes, {len(self.edges())} edges")
        return "\n".join([head] + [self._line(n, namer) for n in self.nodes])

    def __repr__(self) -> str:
        return f"<graphtrace.Graph {self.name}: {len(self.nodes)} nodes>"

    def to_dot(self) -> str:
        """The DAG in Graphviz DOT, one box per node labelled like the listing."""
        namer = Namer()
        out = [f'digraph "{self.name}" {{', "  node [shape=box, fontname=monospace];"]
        for n in self.nodes:
            label = f"%{n.index} {self.describe(n, namer)}\\n{format_source(n.source)}"
            out.append(f'  n{n.index} [label="{_dot_escape(label)}"];')
        out += [f"  n{a} -> n{b};" for a, b in self.edges()]
        out.append("}")
        return "\n".join(out)

    def _repr_svg_(self):
        """Jupyter's picture of the graph, where Graphviz's ``dot`` is installed."""
        dot = shutil.which("dot")
        if dot is None:
            return None
        done = subprocess.run([dot, "-Tsvg"], input=self.to_dot(), capture_output=True,
                              text=True, timeout=30, check=False)
        return done.stdout if done.returncode == 0 else None


def _dot_escape(text: str) -> str:
    return text.replace('"', '\\"').replace(os.linesep, "\\n")

"""Pictures of recorded graphs: Graphviz DOT, rendered to SVG or PNG.

Each node is drawn in a shape and colour of its kind and labelled with what
it runs (a kernel's name and launch shape, a copy's ends) and the user's
line; a loop, branch or child graph is a cluster holding a head (the test
or the call), a box per body and an end point that later nodes wait for; a
captured region is a cluster of its own. With ``buffers=True`` each edge
says which buffer and hazard put it there (``hazards.py``).

The DOT text needs nothing; rendering needs the ``graphviz`` Python package
and Graphviz's ``dot`` program, and a missing one is a
``MissingDependencyError`` that says how to install it.
"""
from __future__ import annotations

import os
import textwrap

from .errors import MissingDependencyError, counted, format_source
from .hazards import CLOSES, OPAQUE, hazards, merged, serial, span
from .placement import device_name
from .temporary import HOST_ORDER

__all__ = ["dot", "Picture", "STYLES", "render", "bundle"]

# kind -> (shape, fill colour, extra style)
STYLES = {
    "kernel": ("box", "#cfe2f3", ""),
    "memcpy": ("parallelogram", "#d9ead3", ""),
    "memset": ("box", "#fff2cc", "rounded"),
    "zeros": ("box", "#fff2cc", "rounded"),
    "host": ("hexagon", "#fce5cd", ""),
    "event_record": ("cds", "#eeeeee", ""),
    "event_wait": ("cds", "#eeeeee", ""),
    "captured": ("box3d", "#ead1dc", ""),
    "while": ("invhouse", "#f4cccc", ""),
    "if": ("invhouse", "#f4cccc", ""),
    "switch": ("invhouse", "#f4cccc", ""),
    "child": ("tab", "#d9d2e9", ""),
}
_OTHER = ("box", "#ffffff", "")
_CLUSTER_FILL = {"while": "#fdf3f3", "if": "#fdf3f3", "switch": "#fdf3f3",
                 "child": "#f4f1fa", "captured": "#faf0f5"}
_CLUSTER_LABEL = {"while": "loop on the device", "if": "branch on the device",
                  "switch": "switch on the device", "child": "child graph",
                  "captured": "captured region (library code)"}
AUTO_LIMIT = 400   # nodes: above this, Jupyter shows the listing, not a picture

INSTALL = ("install the graphviz Python package and Graphviz's dot program: "
           "pip install graphviz, and apt-get install graphviz (Debian, Ubuntu), "
           "conda install -c conda-forge python-graphviz graphviz, or brew install graphviz")
INSTALL_DOT = ("install Graphviz's dot program (the graphviz Python package is installed): "
               "apt-get install graphviz (Debian, Ubuntu), conda install -c conda-forge "
               "graphviz, or brew install graphviz; or save the picture as .dot, which needs "
               "nothing")


def _quote(text: str) -> str:
    """A DOT string; lines joined by DOT's ``\\n``."""
    lines = text.split("\n")
    return '"' + "\\n".join(ln.replace("\\", "\\\\").replace('"', '\\"') for ln in lines) + '"'


def _wrap(text: str, width: int = 48) -> str:
    return "\n".join(textwrap.wrap(text, width, break_long_words=False,
                                   break_on_hyphens=False)) or text


def _end(node) -> str:
    """The DOT node later nodes wait for: a structured node's end point."""
    return f"n{node.index}_end" if node.regions or node.kind == "captured" else f"n{node.index}"


class _Writer:
    def __init__(self, graph, namer, buffers: bool):
        self.graph, self.namer, self.buffers = graph, namer, buffers
        self.devices = len(graph.devices) > 1   # name each node's GPU
        self.out: list[str] = []

    def node(self, node, indent: str) -> None:
        shape, fill, extra = STYLES.get(node.kind, _OTHER)
        on = f"  {device_name(node.device)}" if self.devices and node.device is not None \
            else ""
        label = _wrap(f"%{node.index} {self.graph.describe(node, self.namer)}{on}") + \
            ("\nopaque" if node.opaque else "") + f"\n{format_source(node.source)}"
        style = ",".join(s for s in ("filled", extra) if s)
        more = ', color="#cc0000", penwidth=2' if node.opaque else ""
        self.out.append(f'{indent}n{node.index} [label={_quote(label)}, shape={shape}, '
                        f'style="{style}", fillcolor="{fill}"{more}];')

    def graph_nodes(self, graph, indent: str) -> None:
        for n in graph.nodes:
            if n.regions or n.kind == "captured":
                self.cluster(n, indent)
            else:
                self.node(n, indent)
        for n in graph.nodes:
            for d in n.deps:
                self.edge(d, n, graph, indent)

    def cluster(self, node, indent: str) -> None:
        """A structured node: head, one box per body, an end point; a captured
        region: its node and end point (what it captured is known only when built)."""
        fill = _CLUSTER_FILL.get(node.kind, "#f3f3f3")
        what = _CLUSTER_LABEL.get(node.kind, node.kind)
        self.out += [f'{indent}subgraph "cluster_{node.index}" {{',
                     f'{indent}  label={_quote(what)}; style="rounded,filled"; '
                     f'fillcolor="{fill}"; color="#999999";']
        self.node(node, indent + "  ")
        end = f"n{node.index}_end"
        self.out.append(f'{indent}  {end} [shape=point, width=0.08, label=""];')
        if not node.regions:
            self.out.append(f"{indent}  n{node.index} -> {end} [style=dashed, arrowhead=none];")
        for k, region in enumerate(node.regions):
            self.region(node, k, region, indent + "  ")
        if node.kind == "while":
            self.out.append(f'{indent}  {end} -> n{node.index} [style=dashed, '
                            'constraint=false, label="again", fontsize=9, color="#999999"];')
        self.out.append(f"{indent}}}")

    def region(self, node, k: int, region, indent: str) -> None:
        self.out += [f'{indent}subgraph "cluster_{node.index}_{k}" {{',
                     f'{indent}  label={_quote(f"%{node.index} {region.name}")}; '
                     'style="dashed"; color="#666666";']
        if region.nodes:
            self.graph_nodes(region, indent + "  ")
            used = {d.index for n in region.nodes for d in n.deps}
            heads = [n for n in region.nodes if not n.deps]
            tails = [n for n in region.nodes if n.index not in used]
        else:   # an empty body is drawn, so that its branch shows
            empty = f"n{node.index}_{k}_empty"
            self.out.append(f'{indent}  {empty} [label="(empty)", shape=plaintext];')
            heads = tails = [None]
        self.out.append(f"{indent}}}")
        runs = "[style=dashed, color=\"#666666\"]"
        for h in heads:
            to = f"n{node.index}_{k}_empty" if h is None else f"n{h.index}"
            self.out.append(f"{indent}n{node.index} -> {to} {runs};")
        for t in tails:
            fro = f"n{node.index}_{k}_empty" if t is None else _end(t)
            self.out.append(f"{indent}{fro} -> n{node.index}_end {runs};")

    def edge(self, first, second, graph, indent: str) -> None:
        attrs = ""
        if self.buffers:
            text = self.edge_label(first, second, graph)
            if text:
                attrs = f" [label={_quote(text)}, fontsize=9]"
        self.out.append(f"{indent}{_end(first)} -> n{second.index}{attrs};")

    def edge_label(self, first, second, graph) -> str:
        found = hazards(first, second)
        if found and found[0].kinds == (OPAQUE,):
            text = "opaque"
        elif found and found[0].kinds == (CLOSES,):
            text = "event record"
        else:
            turn = [h for h in found if h.first_view.lo == HOST_ORDER]   # callbacks in turn
            text = "\n".join(merged(
                (h.kinds, span(h.first_view, h.lo, h.hi, self.namer.buffer(h.first_view.base)))
                for h in found if not serial(h) and h not in turn) +
                ["cooperative"] * any(map(serial, found)) + ["in turn"] * bool(turn))
        if graph.mode == "streams":
            text = "stream" + (f"\n{text}" if text else "")
        return text


def dot(graph, namer, buffers: bool = False) -> str:
    """The DOT text of a graph (``namer``: an ``ir.Namer`` for buffer names)."""
    w = _Writer(graph, namer, buffers)
    edges = len(graph.edges())
    title = (f"{graph.name}({', '.join(graph.params)})  deps={graph.mode}  "
             f"{counted(len(graph.nodes), 'node')}, {counted(edges, 'edge')}")
    w.out += [f"digraph {_quote(graph.name)} {{",
              f"  label={_quote(title)}; labelloc=t; fontname=Helvetica;",
              '  node [fontname=Helvetica, fontsize=10];',
              '  edge [fontname=Helvetica];']
    w.graph_nodes(graph, "  ")
    w.out.append("}")
    return "\n".join(w.out)


def render(source: str, fmt: str) -> bytes:
    """DOT text rendered by Graphviz's ``dot`` to ``fmt`` (svg, png, pdf...)."""
    try:
        import graphviz
    except ImportError:
        raise MissingDependencyError(
            f"drawing a graph as {fmt} needs the graphviz Python package (not installed): "
            + INSTALL) from None
    try:
        return graphviz.Source(source).pipe(format=fmt)
    except graphviz.ExecutableNotFound:
        raise MissingDependencyError(
            f"drawing a graph as {fmt} needs Graphviz's dot program, which is not on "
            "PATH: " + INSTALL_DOT) from None


class Picture:
    """A picture of a recorded graph: ``graph.picture(buffers=False)``.

    ``source`` is the DOT text; ``svg()`` the SVG; ``save(path)`` writes
    ``.svg``, ``.png``, ``.pdf`` (rendered by Graphviz's ``dot``) or ``.dot``
    (the text, which needs nothing installed); Jupyter shows it as SVG.

    >>> @gt.graph
    ... def step(s, x, y, tmp, a):
    ...     scale[4, 256, s](x, a, tmp)
    ...     add[4, 256, s](tmp, y)
    >>> n = 1024
    >>> g = step.trace(cuda.device_array(n), cuda.device_array(n), cuda.device_array(n), 2.0)
    >>> p = g.picture(buffers=True)
    >>> print(p.source.splitlines()[-2])
      n0 -> n1 [label="RAW tmp", fontsize=9];
    >>> p.save("step.svg")          # doctest: +SKIP
    """

    def __init__(self, source: str, name: str):
        self.source, self.name = source, name

    def svg(self) -> str:
        return render(self.source, "svg").decode()

    def save(self, path) -> str:
        """Write the picture to ``path``; its suffix chooses the format. Returns the path."""
        path = os.fspath(path)
        fmt = os.path.splitext(path)[1].lstrip(".").lower()
        if not fmt:
            raise ValueError(f"{path!r} has no suffix: name the format, as in step.svg, "
                             "step.png or step.dot")
        try:
            data = self.source.encode() if fmt in ("dot", "gv") else render(self.source, fmt)
        except ValueError as e:   # graphviz's, listing the formats it knows
            if "unknown format" not in str(e):
                raise
            raise ValueError(f"{path!r}: Graphviz writes no format {fmt!r}; name one by the "
                             "suffix, as in step.svg, step.png, step.pdf or step.dot") from None
        with open(path, "wb") as f:
            f.write(data)
        return path

    def _repr_svg_(self):
        """The SVG; None where Graphviz is missing (Jupyter shows the text instead,
        ``_repr_mimebundle_``, with a note saying what to install)."""
        try:
            return self.svg()
        except MissingDependencyError:
            return None

    def _repr_mimebundle_(self, include=None, exclude=None):
        """Jupyter's view: the SVG, or where Graphviz is missing the text with a note
        saying what is missing (as a graph's own view, ``bundle``)."""
        try:
            return {"text/plain": repr(self), "image/svg+xml": self.svg()}
        except MissingDependencyError as e:
            return {"text/plain": f"{self!r}\n(no picture: {e.message})"}

    def __repr__(self):
        return f"<graphtrace.Picture of {self.name}>"


def bundle(graph, text: str, source) -> dict:
    """Jupyter's view of a graph: its listing, and its picture where Graphviz is
    installed and the graph is small enough to draw at once."""
    size = sum(1 for _ in graph.walk())
    if size > AUTO_LIMIT:
        return {"text/plain": text + f"\n({size} nodes: too many to draw at once; "
                                     "graph.picture().save('graph.svg') draws them)"}
    try:
        return {"text/plain": text, "image/svg+xml": render(source(), "svg").decode()}
    except MissingDependencyError as e:
        return {"text/plain": text + f"\n(no picture: {e.message})"}

"""``f.profile(*args)``: where the time of a launch goes.

On the GPU, profile takes the graph a call with these arguments uses, and
replays its nodes one at a time in recording order, each as a one-node graph
(made by the same ops as the real one, as ``debug.py`` does) between two
timing events; then it times the whole graph. Each is repeated after a
warm-up run and the medians are reported: per node its GPU time, the
critical path of the DAG by those times, and the sum of the node times
against the whole graph's. Between runs, the arrays the graph touches are
put back as they were, so that every run starts where the call would, and
they end as one call leaves them (memory an opaque node reaches without
being given is not put back). A loop, branch or child graph is timed as one
node, bodies included; host callbacks run once per run.

On the simulator there are no times: profile runs the call and reports the
structure, with the critical path by node count.

>>> @gt.graph
... def step(s, x, y, tmp, a):
...     scale[4, 256, s](x, a, tmp)
...     add[4, 256, s](tmp, y)
...     s.memset(x[:16], 0)
>>> n = 1024
>>> print(step.profile(cuda.to_device(np.ones(n)), cuda.device_array(n), cuda.device_array(n),
...                    2.0))   # doctest: +NORMALIZE_WHITESPACE
profile of step on the simulator: 3 nodes, 2 edges; no times (profile on a GPU for them)
  node                                    critical
  %0 kernel scale[4, 256](x, a, tmp)      *
  %1 kernel add[4, 256](tmp, y)           *
  %2 memset x[0B:128B] = 0
critical path by node count: 2 of 3 nodes (%0 -> %1); up to 2 nodes at once
"""
from __future__ import annotations

import ctypes
import functools
import io
from statistics import median
from typing import NamedTuple

from . import _driver
from .debug import alone, launch_alone, read
from .errors import MissingDependencyError, counted
from .ir import Namer
from .replayed_stores import apply as apply_stores
from .temporary import is_state

__all__ = ["profile", "Profile", "NodeTime", "Timeline"]

_COLOURS = {"kernel": "#6fa8dc", "memcpy": "#93c47d", "memset": "#ffd966", "zeros": "#ffd966",
            "host": "#f6b26b", "captured": "#c27ba0", "child": "#8e7cc3", "while": "#e06666",
            "if": "#e06666", "switch": "#e06666"}
_WIDTH = 40   # characters of a node's description in the table


class NodeTime(NamedTuple):
    """One node of a profile: its GPU time in microseconds (None on the simulator)
    and whether it lies on the critical path."""
    node: object
    us: float | None
    critical: bool


class Profile:
    """What ``f.profile(*args)`` found; ``str()`` is the table.

    ``nodes``: a ``NodeTime`` per node of the graph (its own nodes, in
    recording order); ``critical_path``: the nodes of the longest path (by
    GPU time, or by node count on the simulator); ``sum_us``, ``critical_us``
    and ``graph_us`` (the whole graph, measured): microseconds, None on the
    simulator; ``schedule()`` and ``timeline()``: each node started as soon as
    its predecessors end.
    """

    def __init__(self, graph, backend: str, times: dict | None, graph_us: float | None = None,
                 device: str = "", repeat: int = 0, note: str = ""):
        self.graph, self.backend, self.device = graph, backend, device
        self.repeat, self.graph_us, self._note = repeat, graph_us, note
        self._times = times
        self.critical_path = _critical(graph, self._weight)
        on = {n.index for n in self.critical_path}
        self.nodes = [NodeTime(n, None if times is None else times[n.index], n.index in on)
                      for n in graph.nodes]
        self.sum_us = None if times is None else sum(times.values())
        self.critical_us = None if times is None else \
            sum(times[n.index] for n in self.critical_path)

    def _weight(self, node) -> float:
        return 1.0 if self._times is None else self._times[node.index]

    def schedule(self) -> list[tuple]:
        """``(node, start, end, lane)`` per node: started when its predecessors end
        (by its GPU time, or one step each on the simulator), in the first lane
        free then."""
        end, starts = {}, []
        for n in self.graph.nodes:   # recording order: every node after its predecessors
            start = max((end[d.index] for d in n.deps), default=0.0)
            end[n.index] = start + self._weight(n)
            starts.append((start, len(starts), n))
        lanes, lane_of = [], {}
        for start, _, n in sorted(starts, key=lambda s: s[:2]):   # by start: fewest lanes
            lane = next((k for k, free in enumerate(lanes) if free <= start + 1e-9), len(lanes))
            lanes[lane:lane + 1] = [end[n.index]]
            lane_of[n.index] = lane
        return [(n, start, end[n.index], lane_of[n.index]) for start, _, n in starts]

    def __str__(self):
        g, namer = self.graph, Namer()
        edges = len(g.edges())
        width = max((lane for *_, lane in self.schedule()), default=-1) + 1
        chain = " -> ".join(f"%{n.index}" for n in self.critical_path)
        if self._times is None:
            out = [f"profile of {g.name} on the simulator: {counted(len(g.nodes), 'node')}, "
                   f"{counted(edges, 'edge')};"
                   " no times (profile on a GPU for them)",
                   f"  {'node':<{_WIDTH}}critical"]
            out += [f"  {_cut(_label(t.node, g, namer)):<{_WIDTH}}{'*' if t.critical else ''}"
                    .rstrip() for t in self.nodes]
            out.append(f"critical path by node count: {len(self.critical_path)} of "
                       f"{len(g.nodes)} nodes ({chain}); up to {counted(width, 'node')} at once")
            return "\n".join(out)
        out = [f"profile of {g.name} on {self.device}: {counted(len(g.nodes), 'node')}, "
               f"{counted(edges, 'edge')}; "
               f"median of {self.repeat} runs{self._note}",
               f"  {'node':<{_WIDTH}}{'us':>10}{'share':>8}  critical"]
        total = self.sum_us or 1.0
        out += [f"  {_cut(_label(t.node, g, namer)):<{_WIDTH}}{t.us:>10.2f}"
                f"{100 * t.us / total:>7.1f}%  {'*' if t.critical else ''}".rstrip()
                for t in self.nodes]
        out.append(f"sum of node times {self.sum_us:.2f} us; critical path {self.critical_us:.2f}"
                   f" us ({chain}); whole graph {self.graph_us:.2f} us")
        if self.critical_us:
            out.append(f"parallelism {self.sum_us / self.critical_us:.2f} on average (sum / "
                       f"critical path), up to {width} at once; whole graph / sum "
                       f"{self.graph_us / self.sum_us:.2f}")
        return "\n".join(out)

    def __repr__(self):
        return f"<graphtrace.Profile of {self.graph.name} on {self.device or self.backend}>"

    def _repr_pretty_(self, p, cycle):   # IPython and notebooks show the text
        p.text(str(self))

    def timeline(self, path=None) -> "Timeline":
        """A picture of ``schedule()`` (needs matplotlib): a bar per node, the critical
        path outlined, the whole graph's measured time as a dashed line. Saved to
        ``path`` when given; Jupyter shows it."""
        try:
            from matplotlib.figure import Figure
        except ImportError:
            raise MissingDependencyError(
                "the timeline picture needs matplotlib (not installed): pip install "
                "matplotlib, or conda install matplotlib") from None
        rows = self.schedule()
        lanes = max((lane for *_, lane in rows), default=0) + 1
        fig = Figure(figsize=(10, 1.5 + 0.45 * lanes))
        ax = fig.subplots()
        on = {n.index for n in self.critical_path}
        for node, start, end, lane in rows:
            crit = node.index in on
            ax.barh(lane, end - start, left=start, height=0.7,
                    color=_COLOURS.get(node.kind, "#cccccc"),
                    edgecolor="#cc0000" if crit else "#333333", linewidth=2 if crit else 0.5)
            ax.text((start + end) / 2, lane, f"%{node.index}", ha="center", va="center",
                    fontsize=8)
        if self.graph_us is not None:
            ax.axvline(self.graph_us, color="#666666", linestyle="--",
                       label=f"whole graph, measured: {self.graph_us:.1f} us")
            ax.legend(loc="lower right", fontsize=8)
        ax.set_yticks(range(lanes))
        ax.set_ylim(lanes - 0.5, -0.5)
        ax.set_ylabel("nodes at once")
        ax.set_xlabel("us: each node's own time, started when its predecessors end"
                      if self._times is not None else
                      "steps (no times on the simulator): each node one step")
        ax.set_title(f"{self.graph.name}: critical path outlined in red", fontsize=10)
        fig.tight_layout()
        if path is not None:
            fig.savefig(path)
        return Timeline(fig)


class Timeline:
    """A timeline picture: ``figure`` (a matplotlib ``Figure``), ``save(path)``;
    Jupyter shows it as PNG."""

    def __init__(self, figure):
        self.figure = figure

    def save(self, path) -> None:
        self.figure.savefig(path)

    def _repr_png_(self):
        out = io.BytesIO()
        self.figure.savefig(out, format="png")
        return out.getvalue()


def _label(node, graph, namer) -> str:
    return f"%{node.index} {graph.describe(node, namer)}"


def _cut(text: str) -> str:
    return text if len(text) <= _WIDTH - 2 else text[:_WIDTH - 5] + "..."   # 2 spaces after


def _critical(graph, weight) -> list:
    """The nodes of a heaviest path of the DAG (recording order is topological)."""
    best: dict[int, tuple] = {}   # node index -> (weight of the heaviest path to it, previous)
    for n in graph.nodes:
        prev = max(n.deps, key=lambda d: best[d.index][0], default=None)
        best[n.index] = ((best[prev.index][0] if prev else 0.0) + weight(n), prev)
    tip = max(graph.nodes, key=lambda n: best[n.index][0], default=None)
    path = []
    while tip is not None:
        path.append(tip)
        tip = best[tip.index][1]
    return path[::-1]


def profile(fn, args: tuple, kwargs: dict, repeat: int = 10, backend: str | None = None):
    """The ``Profile`` of ``fn(*args, **kwargs)`` (``GraphFunction.profile``)."""
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"repeat must be a positive int, not {repeat!r}")
    entry = fn.compile(*args, backend=backend, **kwargs)
    # the values its trace read, then set, are set as one call leaves them (replayed_stores)
    apply_stores(entry.stores, fn._bind(args, kwargs).arguments)
    if not hasattr(entry, "device"):   # the simulator: run the call, report the structure
        entry.launch()
        return Profile(entry.ir, "sim", None)
    return _measure(entry, repeat)


def _measure(entry, repeat: int) -> Profile:
    from cuda.core import Device, EventOptions
    dev = Device(entry.device.device_id)
    dev.set_current()
    dev.sync()   # the caller's work before the profile runs first
    stream = dev.create_stream()
    timing = EventOptions(timing_enabled=True)
    kept = _Kept(entry)
    singles = [_Single(node, entry) for node in entry.ir.nodes]
    runs: list[list[float]] = [[] for _ in singles]
    whole: list[float] = []
    for run in range(repeat + 1):    # run 0 warms up: uploads, first launches
        kept.restore()
        for i, one in enumerate(singles):
            us = _timed(stream, timing, functools.partial(one.launch, stream))
            if run:
                runs[i].append(us)
    for run in range(repeat + 1):    # the last one leaves the arrays as one call does
        kept.restore()
        us = _timed(stream, timing, lambda: entry.launch(stream))
        if run:
            whole.append(us)
    times = {n.index: median(r) for n, r in zip(entry.ir.nodes, runs)}
    kind = type(getattr(entry, "compiled", entry)).__name__   # f.compile's handle holds it
    note = "" if kind == "CompiledGraph" else f" ({kind}: the whole graph runs node by node)"
    return Profile(entry.ir, "gpu", times, median(whole), dev.name, repeat, note)


def _timed(stream, timing, launch) -> float:
    """Microseconds between two timing events around ``launch()`` on ``stream``."""
    start = stream.record(options=timing)
    launch()
    end = stream.record(options=timing)
    end.sync()
    return (end - start) * 1e3   # cuda.core gives milliseconds


class _Single:
    """One node of a compiled graph as a one-node graph of its own."""

    def __init__(self, node, entry):
        self.gpu, self.graph = alone(node, entry.value_of, entry.ir)   # gpu keeps what emit made

    def launch(self, stream) -> None:
        launch_alone(self.gpu, self.graph, stream)


class _Kept:
    """The bytes of every array a graph touches, copied to the host, to put back."""

    def __init__(self, entry):
        views = {}
        for node in entry.ir.walk():
            for b, _ in node.accesses:
                v = entry.value_of(b.base)
                if v.hi > v.lo and not is_state(v):   # (bytes that only order nodes)
                    views[v.lo, v.hi] = v
        self.saved = [(v, read(v)) for v in views.values()]

    def restore(self) -> None:
        for v, data in self.saved:
            if v.is_host:
                ctypes.memmove(v.lo, data.ctypes.data, v.hi - v.lo)
                continue
            drv = _driver.driver()
            (err,) = drv.cuMemcpyHtoD(v.lo, data.ctypes.data, v.hi - v.lo)
            if err != drv.CUresult.CUDA_SUCCESS:
                raise RuntimeError(f"cuMemcpyHtoD of {v.label or 'an array'} failed: "
                                   f"{err.name}")

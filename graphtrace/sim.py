"""The CPU reference executor.

``simulate(graph, seed)`` runs a recorded graph on the CPU, one node at a
time, in a random topological order drawn from ``seed``: numba kernels
through numba's CUDA simulator, copies and memsets with numpy, host
callbacks as they are. Any order the DAG allows must give the answer of
running the ops one after another; comparing the two is the oracle for
dependency inference. Before and after each kernel it checks that memory
the kernel was inferred or declared to only read is unchanged.

Arrays must live in host memory here: numpy arrays, or the device arrays of
numba's simulator (``cuda.to_device`` with ``NUMBA_ENABLE_CUDASIM=1``, which
graphtrace sets where there is no GPU).
"""
from __future__ import annotations

import random

import numpy as np

from ._host_guard import plain
from .backend import check_stream
from .binding import Binding
from .buffers import Buffer
from .errors import SimulationError, counted
from .ir import Graph, graph_of
from .scalar import Scalar
from .temporary import is_virtual
from .temporary_memory import host_memory, owned_moves
from .tree import tree_map

__all__ = ["simulate", "topological_order", "host_view", "SimContext", "SimGraph"]

def host_view(b: Buffer, owner=None) -> np.ndarray:
    """The numpy array behind a view, for the simulator (host memory only); one
    made from the address keeps ``owner`` (the array bound there) alive."""
    obj = b.obj
    if obj is None:  # a view moved with its rebound argument: build it from the address
        if b.lo == b.hi:   # no bytes (an empty view of an empty temporary): no memory needed
            return np.empty(b.shape, b.dtype)
        if is_virtual(b):
            raise SimulationError(f"temporary {b.base.label} has no memory here: run the "
                                  "whole graph (gt.simulate(graph)), not one of its regions",
                                  source=None)
        return b.host_array(owner)
    if type(obj).__name__ == "FakeCUDAArray":
        obj = obj._ary
    if isinstance(obj, np.ndarray):
        return plain(obj)   # an argument as the ordinary array it is
    raise SimulationError(
        f"the simulator cannot read {type(obj).__name__} {b.label or ''}: it runs on "
        "the CPU and needs numpy arrays or numba simulator arrays (cuda.to_device with "
        "no GPU); run on the GPU backend instead", source=None)


class SimContext:
    """What an op's ``simulate(sim, node)`` gets: the binding's values, on the CPU.

    One context serves one launch; drawn like torch.fx's ``Interpreter``::

        SimContext
          value_of(x)    a recorded Buffer or Scalar -> its value in the binding
          owner_of(x)    the array bound now to the argument x lies in (or None)
          array(b)       the numpy array of a recorded view, now
          value(v)       a recorded argument (any tree) as a kernel or callback
                         receives it: arrays as numpy, scalars as numbers
          check          whether kernels must leave what they only read unchanged
          random         the launch's random.Random (one per launch)
          run(region)    run a region Graph's nodes in a random topological order
                         drawn from random (structured ops: a loop body); the
                         whole graph too. Returns that order.
    """

    def __init__(self, value_of=None, check_intents: bool = True, seed=None, owner_of=None):
        self.value_of = value_of or _traced
        self.owner_of = owner_of
        self.check = check_intents
        self.random = random.Random(seed)

    def array(self, b: Buffer) -> np.ndarray:
        v = self.value_of(b)
        if v.obj is None and self.owner_of is not None:   # a callback may keep it
            owner = self.owner_of(b)
            if b.base is b and isinstance(owner, np.ndarray):
                return plain(owner)   # a rebound argument as itself
            return host_view(v, owner)
        return host_view(v)

    def value(self, v):
        """What a recorded argument stands for: arrays as numpy, scalars as numbers."""
        return tree_map(self._leaf, v)

    def _leaf(self, v):
        if isinstance(v, Buffer):
            return self.array(v)
        return self.value_of(v) if isinstance(v, Scalar) else v

    def run(self, region: Graph) -> list:
        order = topological_order(region, self.random)
        for node in order:
            node.op.simulate(self, node)
        return order


def topological_order(graph: Graph, seed=None) -> list:
    """A random order of the nodes that respects every edge.

    ``seed`` seeds the draw, or is the ``random.Random`` to draw from.
    """
    rnd = seed if isinstance(seed, random.Random) else random.Random(seed)
    indeg = [len(n.deps) for n in graph.nodes]
    users: list[list] = [[] for _ in graph.nodes]
    for n in graph.nodes:
        for d in n.deps:
            users[d.pos].append(n)
    ready = [n for n in graph.nodes if not n.deps]
    order = []
    while ready:
        n = ready.pop(rnd.randrange(len(ready)))
        order.append(n)
        for u in users[n.pos]:
            indeg[u.pos] -= 1
            if indeg[u.pos] == 0:
                ready.append(u)
    return order


def simulate(graph: Graph, seed=None, check_intents: bool = True, value_of=None,
             owner_of=None) -> list:
    """Run ``graph`` on the CPU in a random topological order; returns that order.

    ``value_of`` maps recorded arrays and scalars to the ones to use (a
    binding's; ``owner_of`` its arrays bound now, which arrays made from an
    address keep alive); by default the traced ones, and new memory for the graph's
    temporaries. ``check_intents`` verifies that kernels leave the arrays they
    only read unchanged.

    >>> @gt.graph
    ... def step(s, x, out):
    ...     scale[1, 4, s](x, 2.0, out)
    ...     s.memset(x, 0)
    >>> x, out = cuda.to_device(np.ones(4)), cuda.device_array(4)
    >>> [n.index for n in gt.simulate(step.trace(x, out), seed=1)]
    [0, 1]
    >>> out.copy_to_host()
    array([2., 2., 2., 2.])
    """
    graph = graph_of(graph, "simulate")
    if value_of is None and graph.temporaries:
        value_of = _owned(graph)
    return SimContext(value_of, check_intents, seed, owner_of).run(graph)


def _traced(v):
    """A recorded argument as traced: a dynamic Scalar's value, anything else itself."""
    return v._value if isinstance(v, Scalar) else v


def _owned(graph: Graph):
    """``value_of`` placing the graph's temporaries in new host memory, leaving the rest."""
    kept = []

    def allocate(nbytes, device=None):   # the simulator keeps devices apart by address
        block, base = host_memory(nbytes)
        kept.append(block)   # the block lives as long as value_of
        return base
    delta = owned_moves(graph, allocate)

    def value_of(v):
        d = delta.get(id(v.base)) if isinstance(v, Buffer) else None
        return _traced(v) if d is None else v.moved(d)
    value_of.blocks = kept   # the temporaries' memory lives as long as value_of
    return value_of


class SimGraph(Binding):
    """A recorded graph bound to arguments and run by the simulator.

    It stands in for a compiled GPU graph on the CPU backend: same cache,
    same rebinding. Launch ``k`` of it runs the nodes in the random order of
    seed ``k``, so repeated calls try different orders.
    """

    def __init__(self, ir: Graph, arrays, scalars):
        super().__init__(ir, arrays, scalars)
        self.launches = 0

    def allocate(self, nbytes: int, device=None) -> int:
        block, base = host_memory(nbytes)
        self._scratch = [*getattr(self, "_scratch", []), block]
        return base

    def rebind(self, objs, ptrs, svals, route=None) -> int:
        self.refuse_numbers(svals)
        return len(self.bind(objs, ptrs, svals))

    def launch(self, stream=None) -> None:
        if stream is not None:
            check_stream(stream)
        for node in self.ir.walk():   # numbers no node can take: refused before any runs
            node.op.check_values(self.value_of, node)
        seed, self.launches = self.launches, self.launches + 1
        simulate(self.ir, seed, value_of=self.value_of, owner_of=self.owner_of)

    def wait(self) -> None:
        """Simulated launches finish before ``launch`` returns."""

    def __repr__(self):
        return f"<graphtrace.SimGraph {self.ir.name}: {counted(len(self.ir.nodes), 'node')}>"

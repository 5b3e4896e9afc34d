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
import threading
import types

import numpy as np

from .binding import Binding
from .buffers import Buffer
from .errors import SimulationError
from .ir import Graph, Scalar
from .ops import OPS

__all__ = ["simulate", "topological_order", "reference", "reference_for",
           "run_numba_kernel", "host_view", "Simulator", "SimGraph"]

_references: dict[int, tuple] = {}   # id(kernel) -> (kernel, its Python stand-in)
_kernel_lock = threading.Lock()      # numba's simulator runs one kernel at a time


def reference(kernel):
    """Register a Python function that stands for ``kernel`` on the simulator.

    The function receives ``(grid, block, *args)`` with arrays as numpy arrays.

    >>> @gt.reference(saxpy_raw_kernel)                   # doctest: +SKIP
    ... def saxpy(grid, block, x, y, a, n):
    ...     y[:n] += a * x[:n]
    """
    def register_fn(fn):
        from .ops.kernel import Adapter
        keys = [kernel.kernel] if isinstance(kernel, Adapter) else [kernel]
        for k in keys:
            _references[id(k)] = (k, fn)
        return fn
    return register_fn


def reference_for(adapter):
    hit = _references.get(id(adapter.kernel)) or _references.get(id(adapter))
    if hit is None:
        raise SimulationError(
            f"no CPU reference for {adapter.library} kernel {adapter.name}: the simulator "
            "runs only numba kernels by itself; register a Python stand-in with "
            f"@gt.reference({adapter.name}) def f(grid, block, *args): ...", source=None)
    return hit[1]


def run_numba_kernel(py_func, grid, block, shared_mem, args, **options) -> None:
    """Run a numba kernel function on numba's CUDA simulator.

    The simulator keeps the running kernel in a module global (a kernel
    started meanwhile from another thread is taken for a device function
    called by the first, and fails), and while a kernel runs it puts its fake
    ``cuda`` module in place of ``cuda`` in the globals of the kernel's module
    (other threads using ``cuda`` in that module fail). So kernels run one at
    a time here, each on a copy of its module's globals.
    """
    from numba.cuda.simulator.kernel import FakeCUDAKernel
    with _kernel_lock:
        kern = FakeCUDAKernel(_isolated(py_func, {}, options), device=False, **options)
        kern[grid, block, 0, shared_mem](*args)


def _isolated(fn, copies: dict, options: dict):
    """``fn`` on a copy of its globals, its numba device functions likewise."""
    g = copies.get(id(fn.__globals__))
    if g is None:
        g = copies[id(fn.__globals__)] = dict(fn.__globals__)
        for name, v in g.items():
            g[name] = _isolated_device_function(v, copies, options)
    cells = fn.__closure__ and tuple(_isolated_cell(c, copies, options) for c in fn.__closure__)
    clone = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, cells)
    clone.__kwdefaults__ = fn.__kwdefaults__
    return clone


def _isolated_device_function(v, copies, options):
    from .ops._numba import is_device_function
    if is_device_function(v):
        from numba.cuda.simulator.kernel import FakeCUDAKernel
        return FakeCUDAKernel(_isolated(v.py_func, copies, options), device=True, **options)
    return v


def _isolated_cell(cell, copies, options):
    try:
        value = cell.cell_contents
    except ValueError:   # a name not bound yet
        return cell
    new = _isolated_device_function(value, copies, options)
    return cell if new is value else types.CellType(new)


def host_view(b: Buffer) -> np.ndarray:
    """The numpy array behind a view, for the simulator (host memory only)."""
    obj = b.obj
    if obj is None:  # a view moved with its rebound argument: build it from the address
        return b.host_array()
    if type(obj).__name__ == "FakeCUDAArray":
        obj = obj._ary
    if isinstance(obj, np.ndarray):
        return obj
    raise SimulationError(
        f"the simulator cannot read {type(obj).__name__} {b.label or ''}: it runs on "
        "the CPU and needs numpy arrays or numba simulator arrays (cuda.to_device with "
        "no GPU); run on the GPU backend instead", source=None)


class Simulator:
    """What an op's ``simulate(sim, node)`` gets: values in the current binding."""

    def __init__(self, value_of=None, check_intents: bool = True):
        self.value_of = value_of or (lambda v: v)
        self.check = check_intents

    def array(self, b: Buffer) -> np.ndarray:
        return host_view(self.value_of(b))

    def value(self, v):
        """What a recorded argument stands for: arrays as numpy, scalars as numbers."""
        if isinstance(v, Buffer):
            return self.array(v)
        if isinstance(v, Scalar):
            return self.value_of(v)
        if isinstance(v, (tuple, list)):
            return type(v)(self.value(x) for x in v)
        if isinstance(v, dict):
            return {k: self.value(x) for k, x in v.items()}
        return v


def topological_order(graph: Graph, seed=None) -> list:
    """A random order of the nodes that respects every edge."""
    rnd = random.Random(seed)
    indeg = {n.index: len(n.deps) for n in graph.nodes}
    users: dict[int, list] = {n.index: [] for n in graph.nodes}
    for n in graph.nodes:
        for d in n.deps:
            users[d.index].append(n)
    ready = [n for n in graph.nodes if not n.deps]
    order = []
    while ready:
        n = ready.pop(rnd.randrange(len(ready)))
        order.append(n)
        for u in users[n.index]:
            indeg[u.index] -= 1
            if indeg[u.index] == 0:
                ready.append(u)
    return order


def simulate(graph: Graph, seed=None, check_intents: bool = True, value_of=None) -> list:
    """Run ``graph`` on the CPU in a random topological order; returns that order.

    ``value_of`` maps recorded arrays and scalars to the ones to use (a
    binding's); by default the traced ones. ``check_intents`` verifies that
    kernels leave the arrays they only read unchanged.
    """
    sim = Simulator(value_of, check_intents)
    order = topological_order(graph, seed)
    for node in order:
        run = OPS[node.kind].simulate
        if run is None:
            raise SimulationError(f"the simulator cannot run {node.kind} nodes",
                                  source=node.source)
        run(sim, node)
    return order


class SimGraph(Binding):
    """A recorded graph bound to arguments and run by the simulator.

    It stands in for a compiled GPU graph on the CPU backend: same cache,
    same rebinding. Launch ``k`` of it runs the nodes in the random order of
    seed ``k``, so repeated calls try different orders.
    """

    def __init__(self, ir: Graph, arrays, scalars):
        super().__init__(ir, arrays, scalars)
        self.launches = 0

    def rebind(self, objs, ptrs, svals, route=None) -> int:
        return len(self.bind(objs, ptrs, svals))

    def launch(self, stream=None) -> None:
        seed, self.launches = self.launches, self.launches + 1
        simulate(self.ir, seed, value_of=self.value_of)

    def wait(self) -> None:
        """Simulated launches finish before ``launch`` returns."""

    def __repr__(self):
        return f"<graphtrace.SimGraph {self.ir.name}: {len(self.ir.nodes)} nodes>"

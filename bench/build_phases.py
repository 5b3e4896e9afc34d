"""Where a build's time goes: the 1000-node chain of bench/callpath.py compiled
anew, each phase timed by wrapping the function that does it (best of 5, after
a ``gc.collect()``), in us per node.

Floors in the same run, of the same chain: stream capture recording it
(cupy launches between begin and end of capture, no instantiation), and
``cuGraphAddKernelNode`` adding it with one prebuilt parameter struct, through
``cuda.bindings`` and, where the compiled emitter is built, called from C (the
driver's own cost of an explicit node). Where the emitter is built, the same
build is also timed with it switched off (emission through ``cuda.bindings``).
A build by tracing is at least trace + driver add + instantiation; capture
is record + instantiation.

    python bench/build_phases.py        (on a GPU machine)
"""
from __future__ import annotations

import gc
import time

import numpy as np

import graphtrace as gt
from common import interleaved_us
from graphtrace import binding, emit, tracing
from graphtrace.ops import _driver_nodes

N = 1000
PHASES = [("trace", tracing.Tracing, "_trace"),
          ("binding", binding.Binding, "__init__"),
          ("users", binding.Binding, "_users"),
          ("emission", emit.GpuContext, "emit_region"),
          ("instantiation", emit, "instantiate")]


def timed(spent: dict, name: str, owner, attr: str) -> None:
    f = getattr(owner, attr)

    def wrapper(*a, **kw):
        t = time.perf_counter()
        try:
            return f(*a, **kw)
        finally:
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - t
    wrapper.__wrapped__ = f
    setattr(owner, attr, wrapper)


def run() -> dict:
    """``{phase: us per node}`` of the best of 5 builds of the 1000-node chain."""
    import cupy as cp
    mod = cp.RawModule(code=r'''extern "C" __global__ void inc(float* x, int n) {
        int i = threadIdx.x; if (i < n) x[i] += 1; }''')
    k, x = gt.kernel(mod, name="inc"), cp.zeros(32, cp.float32)

    @gt.graph(static=("n",))
    def chain(s, x, n):
        for _ in range(n):
            s.launch(k, 1, 32, x, 32)

    spent: dict = {}
    for phase in PHASES:
        timed(spent, *phase)
    chain.compile(x, N)
    best = _best_build(chain, x, spent)
    if _driver_nodes.emitter() is not None:   # the same build through cuda.bindings
        was = _driver_nodes.use_compiled(False)
        try:
            slow = _best_build(chain, x, spent)
        finally:
            _driver_nodes.use_compiled(was)
        best["total, cuda.bindings"] = slow["total"]
        best["emission, cuda.bindings"] = slow["emission"]
    g = chain.trace(x, N)
    t = time.perf_counter()
    g.nodes   # noqa: B018  (made when first asked for)
    best["Node objects"] = time.perf_counter() - t
    for owner, attr in {(o, a) for _, o, a in PHASES}:   # the functions as they were
        setattr(owner, attr, getattr(owner, attr).__wrapped__)
    out = {k: v / N * 1e6 for k, v in best.items()}
    out.update(floors(k, x))
    return out


def _best_build(chain, x, spent: dict) -> dict:
    """The phases of the best of 5 builds (the least total)."""
    best = None
    for _ in range(5):
        chain.clear_cache()
        spent.clear()
        gc.collect()
        t = time.perf_counter()
        chain.compile(x, N)
        row = {"total": time.perf_counter() - t, **spent}
        best = row if best is None or row["total"] < best["total"] else best
    return best


def _captured(stream, fn, x, n: int):
    """The CUgraph of ``n`` launches of the cupy kernel ``fn`` on ``x``, by stream capture."""
    from cuda.bindings import driver as d
    cs, n32 = d.CUstream(stream.ptr), np.int32(32)
    with stream:
        assert not d.cuStreamBeginCapture(
            cs, d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED)[0]
        for _ in range(n):
            fn((1,), (32,), (x, n32))
        err, graph = d.cuStreamEndCapture(cs)
    assert not err
    return graph


def _best_of(fn, reps=5, collect=True) -> float:
    best = float("inf")
    for _ in range(reps):
        if collect:
            gc.collect()
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def floors(k, x) -> dict:
    """us per node of the two floors (module docstring), best of 5."""
    import ctypes

    import cupy as cp
    from cuda.bindings import driver as d
    fn = k.kernel.raw   # the RawModule's RawKernel, as a user launches it
    stream = cp.cuda.Stream(non_blocking=True)

    def capture():
        d.cuGraphDestroy(_captured(stream, fn, x, N))

    values = (ctypes.c_uint64(x.data.ptr), ctypes.c_int32(32))
    argv = (ctypes.c_void_p * 2)(*[ctypes.addressof(v) for v in values])
    p = d.CUDA_KERNEL_NODE_PARAMS()
    p.func = d.CUfunction(fn.kernel.ptr)
    p.gridDimX = p.gridDimY = p.gridDimZ = 1
    p.blockDimX, p.blockDimY, p.blockDimZ = 32, 1, 1
    p.sharedMemBytes, p.kernelParams = 0, ctypes.addressof(argv)

    def driver_add():
        err, graph = d.cuGraphCreate(0)
        prev = []
        for _ in range(N):
            err, node = d.cuGraphAddKernelNode(graph, prev, len(prev), p)
            prev = [node]
        assert not err
        d.cuGraphDestroy(graph)

    compiled = _driver_nodes.emitter()

    def compiled_add():   # the driver's own cost, called from C (_emitter.c)
        err, graph = d.cuGraphCreate(0)
        prev, at, g = [], p.getPtr(), int(graph)
        for _ in range(N):
            node = compiled.add(g, prev, at)
            assert type(node) is not int, node
            prev = [node]
        d.cuGraphDestroy(graph)

    capture()
    driver_add()
    out = {"floor: capture record": _best_of(capture) / N * 1e6,
           "floor: driver add": _best_of(driver_add) / N * 1e6}
    if compiled is not None:
        compiled_add()
        out["floor: driver add from C"] = _best_of(compiled_add) / N * 1e6
    return out


def small(sizes=(10, 50)) -> list:
    """Builds of short chains, where a build's fixed costs count: ``{n, graphtrace
    us, trace us, capture us}`` per size, medians of 15 each, timed in turn
    (``common.interleaved_us``; cupy stream capture of the same launches +
    instantiation). No ``gc.collect()`` before each:
    after one, the next build of a few nodes took twice as long on the H200 (the
    allocator's freed memory taken again), which a notebook's builds do not see."""
    import cupy as cp
    from cuda.bindings import driver as d
    mod = cp.RawModule(code=r'''extern "C" __global__ void inc(float* x, int n) {
        int i = threadIdx.x; if (i < n) x[i] += 1; }''')
    k, x = gt.kernel(mod, name="inc"), cp.zeros(32, cp.float32)
    fn = k.kernel.raw
    stream = cp.cuda.Stream(non_blocking=True)

    @gt.graph(static=("n",))
    def chain(s, x, n):
        for _ in range(n):
            s.launch(k, 1, 32, x, 32)

    def build(n):
        chain.clear_cache()
        chain.compile(x, n)

    def capture(n):
        graph = _captured(stream, fn, x, n)
        err, exe = d.cuGraphInstantiate(graph, 0)
        assert not err
        d.cuGraphExecDestroy(exe)
        d.cuGraphDestroy(graph)

    rows = []
    for n in sizes:
        build(n)
        capture(n)
        built, traced, captured = interleaved_us(
            [lambda: build(n), lambda: chain.trace(x, n), lambda: capture(n)], reps=15,
            collect=False)
        rows.append({"n": n, "graphtrace us": built, "trace us": traced,
                     "capture us": captured})
    return rows


def main():
    for r in small():
        print("  ".join(f"{k} {v:.1f}" for k, v in r.items()))
    phases = run()
    print("  ".join(f"{k} {v:.2f}" for k, v in phases.items()), "us/node")
    print("(Node objects: making them afterwards, which a build does not do for "
          "launches; total includes all)")
    print(floor_text(phases))


def _add(ph: dict) -> tuple:
    """The driver add floor that applies: from C where the emitter is built."""
    key = "floor: driver add from C" if "floor: driver add from C" in ph else \
        "floor: driver add"
    return key[len("floor: "):], ph[key]


def least(ph: dict) -> float:
    """us per node a build by tracing costs at least, with this trace."""
    return ph["trace"] + _add(ph)[1] + ph["instantiation"]


def floor_text(ph: dict) -> str:
    """What the floors say about the build target (at most capture + instantiate)."""
    least_us = least(ph)
    capture = ph["floor: capture record"] + ph["instantiation"]
    return (f"Least a traced build can cost with this trace: trace {ph['trace']:.2f} + "
            f"{_add(ph)[0]} {_add(ph)[1]:.2f} + instantiation "
            f"{ph['instantiation']:.2f} = {least_us:.2f} us/node, against capture "
            f"{ph['floor: capture record']:.2f} + the same instantiation = {capture:.2f}; "
            f"the trace alone is {ph['trace'] / ph['floor: capture record']:.2f}x "
            "capture's recording.")


if __name__ == "__main__":
    main()

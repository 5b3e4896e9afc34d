"""Where a build's time goes: the 1000-node chain of bench/callpath.py compiled
anew, each phase timed by wrapping the function that does it (best of 5, after
a ``gc.collect()``), in us per node.

    python bench/build_phases.py        (on a GPU machine)
"""
from __future__ import annotations

import gc
import time

import graphtrace as gt
from graphtrace import binding, emit

N = 1000
PHASES = [("trace", gt.GraphFunction, "_trace"),
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
    best = None
    for _ in range(5):
        chain.clear_cache()
        spent.clear()
        gc.collect()
        t = time.perf_counter()
        chain.compile(x, N)
        row = {"total": time.perf_counter() - t, **spent}
        best = row if best is None or row["total"] < best["total"] else best
    g = chain.trace(x, N)
    t = time.perf_counter()
    g.nodes   # noqa: B018  (made when first asked for)
    best["Node objects"] = time.perf_counter() - t
    for owner, attr in {(o, a) for _, o, a in PHASES}:   # the functions as they were
        setattr(owner, attr, getattr(owner, attr).__wrapped__)
    return {k: v / N * 1e6 for k, v in best.items()}


def main():
    phases = run()
    print("  ".join(f"{k} {v:.2f}" for k, v in phases.items()), "us/node")
    print("(binding includes users and making Node objects; total includes all)")


if __name__ == "__main__":
    main()

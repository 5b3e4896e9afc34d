"""Host cost of tracing: per recorded op, and of dependency inference alone.

Runs on the CPU (no GPU needed). Programs of N kernel launches over fake
device arrays, in three shapes: every op on its own buffers (disjoint), one
long read-modify-write chain on one buffer, and a ring of 64 buffers where
each op reads one buffer and writes the next (typical stencil/pipeline code).

    python bench/trace_cost.py [N ...]      (writes bench/TRACE_COST.md too)
"""
from __future__ import annotations

import datetime
import os
import platform
import sys
import time

import numpy as np

import graphtrace as gt
from graphtrace.deps import DataDeps
from graphtrace.ops.kernel import Adapter


class Fake:
    _next = 1 << 40

    def __init__(self, n=256):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f4",
                                         "data": (Fake._next, False), "version": 3}
        Fake._next += 4 * n + 4096


K = Adapter(None, "k", ["x", "y"], ["r", "w"])


def program(kind, n):
    if kind == "disjoint":
        bufs = [(Fake(), Fake()) for _ in range(n)]
    elif kind == "chain":
        x = Fake()
        bufs = [(x, x)] * n
    else:
        ring = [Fake() for _ in range(64)]
        bufs = [(ring[i % 64], ring[(i + 1) % 64]) for i in range(n)]

    @gt.graph
    def f(s):
        for a, b in bufs:
            s.launch(K, 1, 32, a, b)
    return f


def measure(kind, n):
    f = program(kind, n)
    t0 = time.perf_counter()
    g = f.trace()
    total = time.perf_counter() - t0
    tracker = DataDeps()
    t0 = time.perf_counter()
    for node in g.nodes:
        tracker.add(node)
    deps = time.perf_counter() - t0
    return total / n * 1e6, deps / n * 1e6, len(g.edges())


def main(sizes):
    rows = []
    for kind in ("disjoint", "chain", "ring64"):
        for n in sizes:
            per_op, per_dep, edges = measure(kind, n)
            rows.append((kind, n, per_op, per_dep, edges))
    out = [f"# Trace cost ({datetime.date.today()}, Python {platform.python_version()}, "
           f"{platform.processor() or platform.machine()}, numpy {np.__version__})", "",
           "| program | ops | trace us/op (total) | deps us/op | edges |",
           "| --- | ---: | ---: | ---: | ---: |"]
    out += [f"| {k} | {n} | {a:.2f} | {b:.2f} | {e} |" for k, n, a, b, e in rows]
    text = "\n".join(out) + "\n"
    print(text)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "TRACE_COST.md"), "w") as f:
        f.write(text)
    return rows


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10_000, 100_000])

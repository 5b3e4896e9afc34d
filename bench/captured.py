"""What a captured region costs on the call path (run on a GPU machine).

A graph of ``K`` cupy RawKernel nodes and one captured region (a cupy
expression with a reduction), called with the same arrays, with new arrays
only the kernels use, and with new arrays the region uses (captured again,
its child node updated); beside it the same graph with a kernel in place of
the region, and the same work run eagerly. Prints a table of host
microseconds per call.

    python3 bench/captured.py [--k 20] [--n 65536]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import graphtrace as gt  # noqa: E402
from common import KERNEL_SRC, host_us, median_us  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, default=20, help="kernel nodes beside the region")
    ap.add_argument("--n", type=int, default=1 << 16, help="elements the region works on")
    opts = ap.parse_args()
    import cupy as cp
    from cuda.core import Device
    Device().set_current()
    mod = cp.RawModule(code=KERNEL_SRC)
    k_inc = gt.kernel(mod, name="inc")
    st = cp.cuda.Stream(non_blocking=True)
    K, N = opts.k, opts.n

    def expr(x, y):
        y[...] = cp.tanh(x) * 2 + x.sum()

    @gt.graph(static=("k",))
    def with_region(s, x, y, c, k):
        for _ in range(k):
            s.launch(k_inc, 1, 32, c, 32)
        s.captured(expr, x, y, reads=[x], writes=[y])

    @gt.graph(static=("k",))
    def kernels_only(s, x, y, c, k):
        for _ in range(k + 1):
            s.launch(k_inc, 1, 32, c, 32)

    def eager(x, y, c, k):
        for _ in range(k):
            mod.get_function("inc")((1,), (32,), (c, cp.int32(32)))
        y[...] = cp.tanh(x) * 2 + x.sum()

    x = [cp.linspace(-1, 1, N, dtype=cp.float32) for _ in range(2)]
    y = [cp.zeros(N, cp.float32) for _ in range(2)]
    c = [cp.zeros(32, cp.float32) for _ in range(2)]
    flip = [0]

    def alternate(f, moved):
        def call():
            flip[0] ^= 1
            i, j = (flip[0] if "x" in moved else 0), (flip[0] if "c" in moved else 0)
            f(x[i], y[i], c[j], K, stream=st)
        return call

    def build(f):
        def once():
            f.clear_cache()
            f.compile(x[0], y[0], c[0], K)
        samples = []
        for _ in range(20):
            t0 = time.perf_counter()
            once()
            samples.append(time.perf_counter() - t0)
        return median_us(samples)

    rows = []
    with st:
        rows.append(("build: trace + capture + instantiate", build(with_region),
                     build(kernels_only)))
        for what, moved in (("call, same arrays (launch only)", ()),
                            ("call, new arrays for the kernels only", ("c",)),
                            ("call, new arrays for the region (captured again)", ("x", "c"))):
            rows.append((what, host_us(alternate(with_region, moved), sync=st.synchronize),
                         host_us(alternate(kernels_only, moved), sync=st.synchronize)))
        eager_us = host_us(lambda: eager(x[0], y[0], c[0], K), sync=st.synchronize)
    assert cp.allclose(y[0], cp.tanh(x[0]) * 2 + x[0].sum())

    print(f"K={K} kernel nodes + 1 region over {N} float32 ({Device().name})")
    print(f"{'host us per call':<52} {'with region':>12} {'kernel instead':>15}")
    for what, a, b in rows:
        print(f"{what:<52} {a:12.1f} {b:15.1f}")
    print(f"{'eager: the same work launched one by one':<52} {eager_us:12.1f}")


if __name__ == "__main__":
    main()

"""Temporaries: a block the compiled graph owns, against graph alloc/free nodes.

graphtrace gives a graph's temporaries one block it keeps for the graph's life,
in which temporaries whose uses the graph orders share bytes
(graphtrace/temporary_memory.py says why). The other design puts a CUDA alloc node
before each temporary's first user and a free node after its last, which lets
the driver reuse memory between temporaries whose lives do not meet. Measured
here on a chain of K kernels, each reading the previous temporary and writing
its own (x -> t0 -> ... -> t[K-1] -> y, ``dst = src + 1``):

- graphtrace, ``s.empty``: K temporaries in one owned block, packed (two
  places for the chain);
- cuda.core hand-built, block unshared: one place per temporary, no graphtrace;
- cuda.core hand-built, alloc/free nodes: t[i] allocated before its writer and
  freed after its reader, in one chain (at most two temporaries alive).

For each: replay time (CUDA events, median), the device memory taken once the
graph is built and launched (``cuMemGetInfo``), the graph allocator's reserve
(``CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT``), what is still taken after
``cuDeviceGraphMemTrim`` (memory given back between launches), and the time of
a launch after that trim (the memory is mapped again).

    python3 bench/temporaries.py [--k 100] [--mb 1 16]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import graphtrace as gt  # noqa: E402
from common import device_us  # noqa: E402

SRC = r'''
extern "C" __global__ void next(const float* src, float* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i] + 1.0f;
}
'''
THREADS = 256
MB = 1 << 20


def _ok(result):
    from cuda.bindings import driver
    err, *rest = result
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA driver call failed: {err}")
    return rest[0] if len(rest) == 1 else rest or None


class Memory:
    """Device memory as the driver reports it, and the graph allocator's reserve."""

    def __init__(self, device_id):
        from cuda.bindings import driver
        self.driver, self.device = driver, driver.CUdevice(device_id)
        self.pool = _ok(driver.cuDeviceGetMemPool(self.device))   # cuda.core allocates here

    def free(self) -> int:
        return int(_ok(self.driver.cuMemGetInfo())[0])

    def graph_reserved(self) -> int:
        attr = self.driver.CUgraphMem_attribute.CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT
        return int(_ok(self.driver.cuDeviceGetGraphMemAttribute(self.device, attr)))

    def trim(self) -> None:
        """Give back what the graph allocator and the stream-ordered pool keep unused."""
        _ok(self.driver.cuDeviceGraphMemTrim(self.device))
        _ok(self.driver.cuMemPoolTrimTo(self.pool, 0))


def builders(k, n, x, y, kern, core_kern):
    """name -> build(), which returns (launch(stream), release()) for the chain."""
    from cuda.bindings import driver
    from cuda.core import LaunchConfig
    from cuda.core.graph import GraphDefinition
    nbytes, blocks = n * 4, (n + THREADS - 1) // THREADS
    cfg = LaunchConfig(grid=blocks, block=THREADS)
    xp, yp, n32 = x.data.ptr, y.data.ptr, np.int32(n)

    @gt.graph(static=("count", "n"))
    def chain(s, x, y, count, n):
        prev = x
        for _ in range(count):
            t = s.empty(n, np.float32)
            s.launch(kern, blocks, THREADS, prev, t, n)
            prev = t
        s.launch(kern, blocks, THREADS, prev, y, n)

    def graphtrace():
        g = chain.compile(x, y, k, n)
        return g.launch, chain.clear_cache

    def owned():
        ptr = _ok(driver.cuMemAlloc(k * nbytes))
        base = int(ptr)
        d = GraphDefinition()
        node = d.launch(cfg, core_kern, xp, base, n32)
        for i in range(1, k):
            node = node.launch(cfg, core_kern, base + (i - 1) * nbytes, base + i * nbytes, n32)
        node.launch(cfg, core_kern, base + (k - 1) * nbytes, yp, n32)
        g = d.instantiate()
        return g.launch, lambda: _ok(driver.cuMemFree(ptr))

    def alloc_free():
        d = GraphDefinition()
        node = d.allocate(nbytes)
        ptrs = [node.dptr]
        node = node.launch(cfg, core_kern, xp, ptrs[0], n32)
        for i in range(1, k):
            node = node.allocate(nbytes)
            ptrs.append(node.dptr)
            node = node.launch(cfg, core_kern, ptrs[i - 1], ptrs[i], n32)
            node = node.deallocate(ptrs[i - 1])   # after its reader, before the next alloc
        node = node.launch(cfg, core_kern, ptrs[-1], yp, n32)
        node.deallocate(ptrs[-1])
        g = d.instantiate()
        return g.launch, lambda: None

    return {"graphtrace, s.empty (packed block)": graphtrace,
            "cuda.core hand-built, block unshared": owned,
            "cuda.core hand-built, alloc/free nodes": alloc_free}


def run(k=100, sizes_mb=(1, 16)):
    import cupy as cp
    from cuda.core import Device, Kernel
    dev = Device()
    dev.set_current()
    mod = cp.RawModule(code=SRC)
    raw = mod.get_function("next")
    kern = gt.kernel(mod, name="next")
    core_kern = Kernel.from_handle(raw.kernel.ptr if hasattr(raw, "kernel") else raw.ptr)
    st = cp.cuda.Stream(non_blocking=True)
    core_st = dev.create_stream(st)
    mem = Memory(dev.device_id)
    rows = []
    for mb in sizes_mb:
        n = mb * MB // 4
        x = cp.asarray(np.random.default_rng(4).standard_normal(n).astype(np.float32))
        y = cp.zeros(n, cp.float32)
        want = cp.asnumpy(x)
        for _ in range(k + 1):               # float32 adds, in the kernels' order
            want = want + np.float32(1)
        raw(((n + THREADS - 1) // THREADS,), (THREADS,), (x, y, np.int32(n)), stream=st)
        for name, build in builders(k, n, x, y, kern, core_kern).items():
            y.fill(0)
            cp.cuda.Device().synchronize()
            mem.trim()
            before = mem.free()
            launch, release = build()
            launch(core_st)
            st.synchronize()
            assert np.array_equal(cp.asnumpy(y), want), f"temporaries {name}: wrong result"
            taken, reserved = before - mem.free(), mem.graph_reserved()
            us = device_us(lambda: launch(core_st), st)
            after_trim = []
            for _ in range(3):
                mem.trim()
                held = before - mem.free()
                after_trim.append(device_us(lambda: launch(core_st), st, reps=1, warmup=0))
            st.synchronize()
            assert np.array_equal(cp.asnumpy(y), want), f"temporaries {name}: wrong after trim"
            release()
            rows.append({"k": k, "mb": mb, "variant": name, "replay_us": us,
                         "us_per_kernel": us / (k + 1), "taken_mb": taken / MB,
                         "reserved_mb": reserved / MB, "after_trim_mb": held / MB,
                         "after_trim_launch_us": statistics.median(after_trim)})
            r = rows[-1]
            print(f"temporaries K={k} {mb:>3} MB {name:<40} replay {us:9.1f} us, taken "
                  f"{r['taken_mb']:8.1f} MB, graph pool {r['reserved_mb']:8.1f} MB, after trim "
                  f"{r['after_trim_mb']:8.1f} MB (next launch {r['after_trim_launch_us']:.1f} us)",
                  flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, default=100, help="temporaries in the chain")
    ap.add_argument("--mb", type=int, nargs="+", default=[1, 16], help="MB per temporary")
    opts = ap.parse_args()
    run(opts.k, tuple(opts.mb))


if __name__ == "__main__":
    main()

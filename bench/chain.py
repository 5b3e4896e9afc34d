"""Workload 1: a chain of N dependent tiny kernels, in every variant, same kernel."""
from __future__ import annotations

import numpy as np

import graphtrace as gt
from common import KERNEL_SRC, device_us, host_us


def setup():
    import cupy as cp
    from cuda.core import Device
    from numba import cuda
    dev = Device()
    dev.set_current()
    mod = cp.RawModule(code=KERNEL_SRC)
    inc = mod.get_function("inc")

    @cuda.jit
    def inc_nb(x):
        i = cuda.threadIdx.x
        if i < x.size:
            x[i] += 1.0
    return dev, cp, mod, inc, inc_nb


def variants(n, ctx):
    """name -> (run_once, stream) for a chain of ``n`` kernels."""
    dev, cp, mod, inc, inc_nb = ctx
    from numba import cuda
    from cuda.core import LaunchConfig, Kernel
    from cuda.core.graph import GraphDefinition
    st = cp.cuda.Stream(non_blocking=True)
    x = cp.zeros(32, cp.float32)
    out = {}

    def eager_cupy():
        for _ in range(n):
            inc((1,), (32,), (x, np.int32(32)), stream=st)
    out["eager cupy"] = eager_cupy

    xn = cuda.as_cuda_array(x)
    nst = cuda.external_stream(st.ptr)

    def eager_numba():
        for _ in range(n):
            inc_nb[1, 32, nst](xn)
    out["eager numba"] = eager_numba

    with st:
        st.begin_capture()
        for _ in range(n):
            inc((1,), (32,), (x, np.int32(32)))
        cap = st.end_capture()
    cap.upload(st)
    out["cupy capture"] = lambda: cap.launch(st)

    kern = Kernel.from_handle(inc.kernel.ptr) if hasattr(inc, "kernel") else \
        Kernel.from_handle(inc.ptr)
    cfg = LaunchConfig(grid=1, block=32)
    d = GraphDefinition()
    node = d.launch(cfg, kern, x.data.ptr, np.int32(32))
    for _ in range(n - 1):
        node = node.launch(cfg, kern, x.data.ptr, np.int32(32))
    hand = d.instantiate()
    core_st = dev.create_stream(st)
    hand.upload(core_st)
    out["cuda.core hand-built"] = lambda: hand.launch(core_st)

    k = gt.kernel(mod, name="inc")

    @gt.graph(static=("n",))
    def chain(s, x, n):
        for _ in range(n):
            s.launch(k, 1, 32, x, 32)
    compiled = chain.compile(x, n)
    compiled.launch(st)
    out["graphtrace"] = lambda: chain(x, n, stream=st)
    out["graphtrace (bare launch)"] = lambda: compiled.graph.launch(core_st)

    try:
        import torch
        tx = torch.zeros(32, device="cuda")
        tst = torch.cuda.ExternalStream(st.ptr)

        def eager_torch():
            with torch.cuda.stream(tst):
                for _ in range(n):
                    tx.add_(1.0)
        out["eager torch"] = eager_torch
        tg = torch.cuda.CUDAGraph()
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            tx.add_(1.0)  # warm up outside capture, as torch asks
        torch.cuda.synchronize()
        with torch.cuda.graph(tg):
            for _ in range(n):
                tx.add_(1.0)

        def torch_graph():
            with torch.cuda.stream(tst):
                tg.replay()
        out["torch CUDA graph"] = torch_graph
    except Exception as e:  # noqa: BLE001  (torch is optional)
        print(f"torch skipped: {e}")
    return out, st


def run(sizes=(10, 100, 1000, 10000)):
    ctx = setup()
    rows = []
    for n in sizes:
        runs, st = variants(n, ctx)
        reps = 20 if n <= 1000 else 5
        for name, fn in runs.items():
            us = device_us(fn, st, reps=reps)
            rows.append({"workload": "chain", "n": n, "variant": name,
                         "us_total": us, "us_per_node": us / n})
            print(f"chain n={n:<6} {name:<26} {us / n:8.3f} us/node", flush=True)
    return rows

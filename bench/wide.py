"""Workload 2: W independent chains of L one-block kernels, written sequentially.

graphtrace (deps="data") finds the W chains by itself; stream capture of the
same sequential code serialises them; hand-forked capture (W streams, events
from the origin stream) is what an expert writes by hand. The variants are
timed in turns (``device_us_interleaved``): one of them timed apart ran up to
4% slower or faster from one run to the next on the same machine.
"""
from __future__ import annotations

import numpy as np

import graphtrace as gt
from common import device_us_interleaved

SRC = r'''
extern "C" __global__ void work(float* x, int iters) {
    float v = x[threadIdx.x];
    for (int i = 0; i < iters; ++i) v = v * 0.999f + 0.001f;
    x[threadIdx.x] = v;
}
'''
L, ITERS = 32, 2000


def run(widths=(1, 2, 4, 8, 16)):
    import cupy as cp
    mod = cp.RawModule(code=SRC)
    work = mod.get_function("work")
    k = gt.kernel(mod, name="work")
    st = cp.cuda.Stream(non_blocking=True)
    rows = []
    for w in widths:
        xs = [cp.ones(64, cp.float32) for _ in range(w)]

        def issue(launch):
            for _ in range(L):
                for x in xs:
                    launch(x)

        with st:
            st.begin_capture()
            issue(lambda x: work((1,), (64,), (x, np.int32(ITERS))))
            serial = st.end_capture()

        side = [cp.cuda.Stream(non_blocking=True) for _ in range(w)]
        with st:
            st.begin_capture()
            fork = st.record()
            for s2, x in zip(side, xs):
                s2.wait_event(fork)
                with s2:
                    for _ in range(L):
                        work((1,), (64,), (x, np.int32(ITERS)))
            for s2 in side:
                st.wait_event(s2.record())
            forked = st.end_capture()

        @gt.graph
        def chains(s, xs):
            for _ in range(L):
                for x in xs:
                    s.launch(k, 1, 64, x, ITERS)
        @gt.graph
        def chains_by_chain(s, xs):   # the same DAG, recorded one chain after another
            for x in xs:
                for _ in range(L):
                    s.launch(k, 1, 64, x, ITERS)
        chains(xs, stream=st)
        chains_by_chain(xs, stream=st)
        compiled = chains.compile(xs)
        core_st = compiled.device.create_stream(st)

        from cuda.core import Kernel, LaunchConfig
        from cuda.core.graph import GraphDefinition
        kern, cfg = Kernel.from_handle(work.kernel.ptr), LaunchConfig(grid=1, block=64)
        d = GraphDefinition()
        for x in xs:                     # W chains built by hand, explicitly
            node = d
            for _ in range(L):
                node = node.launch(cfg, kern, x.data.ptr, np.int32(ITERS))
        by_hand = d.instantiate()
        by_hand.upload(core_st)
        variants = {"serial capture": lambda: serial.launch(st),
                    "hand-forked capture": lambda: forked.launch(st),
                    "graphtrace (data)": lambda: chains(xs, stream=st),
                    "graphtrace, chain-major code": lambda: chains_by_chain(xs, stream=st),
                    "graphtrace (bare launch)": lambda: compiled.graph.launch(core_st),
                    "cuda.core hand-built": lambda: by_hand.launch(core_st)}
        for name, us in device_us_interleaved(variants, st).items():
            rows.append({"workload": "wide", "w": w, "variant": name, "us": us})
            print(f"wide W={w:<3} {name:<22} {us:10.1f} us", flush=True)
    return rows

"""One step over several GPUs: eager, captured across devices by hand, graphtrace.

The step, on every device d (a data-parallel step in miniature, small kernels
so that launching them is what costs):

    x_d = a * x_d + 1        K times (forward/backward kernels, one chain)
    g_d = x_d / 2            the device's gradient
    g   = sum_d g_d          NCCL all-reduce, one group over the devices
    w_d -= lr * g_d          the update

Variants, each on its own arrays and communicators:

- eager: cupy RawKernel launches on a stream per device, the NCCL group call
  between them;
- hand-captured: the same calls captured into one CUDA graph across devices
  (a device-0 stream captures; the other devices' streams join it through an
  event and leave it through events: the pattern in shared/FACTS.md), launched
  on the device-0 stream;
- graphtrace: the same step as a ``@gt.graph`` function (``s.launch`` on the
  arrays of each device, ``gt.nccl.all_reduce``), launched on that stream.

Each is timed as host wall time per step over ``--reps`` steps issued back to
back, every device synchronised at the end (what a training loop sees), with 1
GPU and with 2 (the same work per GPU: ideal scaling keeps the time). The
results of one step are checked against numpy first. The table goes to
``bench/MULTI_GPU.md``.

    python3 bench/multi_gpu.py [--k 20] [--n 1024] [--reps 200]
"""
from __future__ import annotations

import argparse
import datetime
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import graphtrace as gt  # noqa: E402
from common import gpu_name, versions  # noqa: E402

SRC = r'''
extern "C" __global__ void advance(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i] + 1.0f;
}
extern "C" __global__ void gradient(const float* x, float* g, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) g[i] = 0.5f * x[i];
}
extern "C" __global__ void update(float* w, const float* g, float lr, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) w[i] -= lr * g[i];
}
'''
THREADS, A, LR = 256, 0.5, 0.01
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "MULTI_GPU.md")


class Setup:
    """Arrays, streams and communicators of one variant over ``devices``."""

    def __init__(self, cp, nccl, devices, n):
        self.cp, self.nccl, self.devices, self.n = cp, nccl, devices, n
        self.xs, self.gs, self.ws, self.streams = [], [], [], []
        for d in devices:
            with cp.cuda.Device(d):
                self.xs.append(cp.zeros(n, cp.float32))
                self.gs.append(cp.zeros(n, cp.float32))
                self.ws.append(cp.zeros(n, cp.float32))
                self.streams.append(cp.cuda.Stream(non_blocking=True))
        self.comms = nccl.NcclCommunicator.initAll(list(devices))
        self.reset()

    def reset(self):
        for d, x, w in zip(self.devices, self.xs, self.ws):
            with self.cp.cuda.Device(d):
                x[...] = self.cp.arange(self.n, dtype=self.cp.float32) / self.n + d
                w.fill(1)
        self.sync()

    def sync(self):
        for d in self.devices:
            self.cp.cuda.Device(d).synchronize()


def eager_step(cp, nccl, kern, st, k):
    """The step launched call by call on ``st``'s per-device streams."""
    grid, n = (st.n + THREADS - 1) // THREADS, np.int32(st.n)
    for d, x, g, s in zip(st.devices, st.xs, st.gs, st.streams):
        with cp.cuda.Device(d):
            for _ in range(k):
                kern["advance"]((grid,), (THREADS,), (x, np.float32(A), n), stream=s)
            kern["gradient"]((grid,), (THREADS,), (x, g, n), stream=s)
    nccl.groupStart()
    for comm, g, s in zip(st.comms, st.gs, st.streams):
        comm.allReduce(g.data.ptr, g.data.ptr, st.n, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, s.ptr)
    nccl.groupEnd()
    for d, w, g, s in zip(st.devices, st.ws, st.gs, st.streams):
        with cp.cuda.Device(d):
            kern["update"]((grid,), (THREADS,), (w, g, np.float32(LR), n), stream=s)


def hand_captured(cp, nccl, kern, st, k):
    """The eager step captured into one graph across the devices; returns launch()."""
    s0, others = st.streams[0], list(zip(st.devices[1:], st.streams[1:]))
    with cp.cuda.Device(st.devices[0]):
        s0.begin_capture()
        forked = s0.record()
    for d, s in others:                     # the other devices' streams join the capture
        with cp.cuda.Device(d):
            s.wait_event(forked)
    eager_step(cp, nccl, kern, st, k)
    for d, s in others:                     # and leave it
        with cp.cuda.Device(d):
            done = s.record()
        with cp.cuda.Device(st.devices[0]):
            s0.wait_event(done)
    with cp.cuda.Device(st.devices[0]):
        graph = s0.end_capture()
    return lambda: graph.launch(s0)


@gt.graph(static=("k",))
def gt_step(s, xs, gs, ws, k, comms):
    for x, g in zip(xs, gs):
        grid = (x.size + THREADS - 1) // THREADS
        for _ in range(k):
            s.launch(KERNELS["advance"], grid, THREADS, x, A, x.size)
        s.launch(KERNELS["gradient"], grid, THREADS, x, g, x.size)
    gt.nccl.all_reduce(s, comms, gs, op="sum")
    for w, g in zip(ws, gs):
        s.launch(KERNELS["update"], (w.size + THREADS - 1) // THREADS, THREADS, w, g, LR,
                 w.size)


KERNELS: dict = {}


def reference(st, k):
    """w after one step from ``reset``, in numpy (float32, the kernels' order)."""
    xs = [np.arange(st.n, dtype=np.float32) / np.float32(st.n) + np.float32(d)
          for d in st.devices]
    for i, x in enumerate(xs):
        for _ in range(k):
            x = np.float32(A) * x + np.float32(1)
        xs[i] = x
    g = sum(np.float32(0.5) * x for x in xs)
    return np.float32(1) - np.float32(LR) * g


def wall_us(step, st, reps) -> float:
    for _ in range(10):
        step()
    st.sync()
    t0 = time.perf_counter()
    for _ in range(reps):
        step()
    st.sync()
    return (time.perf_counter() - t0) / reps * 1e6


def run(k=20, n=1024, reps=200, out=OUT):
    import cupy as cp
    from cupy.cuda import nccl
    if not nccl.available:
        raise SystemExit("cupy finds no NCCL library: pip install nvidia-nccl-cu13")
    ndev = cp.cuda.runtime.getDeviceCount()
    counts = [c for c in (1, 2) if c <= ndev]
    rows = []
    kern = {name: cp.RawKernel(SRC, name) for name in ("advance", "gradient", "update")}
    KERNELS.update(kern)                        # cupy loads them on each device at first use
    for count in counts:
        devices = list(range(count))
        eager = Setup(cp, nccl, devices, n)
        eager_step(cp, nccl, kern, eager, k)    # loads the kernels before any capture
        captured, traced = Setup(cp, nccl, devices, n), Setup(cp, nccl, devices, n)

        def graphtrace(st=traced):
            gt_step(st.xs, st.gs, st.ws, k, st.comms, stream=st.streams[0])
        variants = {
            "eager (call by call)": (eager, lambda st=eager: eager_step(cp, nccl, kern, st, k)),
            "hand-captured across devices": (captured, hand_captured(cp, nccl, kern, captured,
                                                                     k)),
            "graphtrace": (traced, graphtrace)}
        want = reference(eager, k)
        for name, (st, step) in variants.items():
            st.reset()
            step()
            st.sync()
            for w in st.ws:
                assert np.allclose(cp.asnumpy(w), want, rtol=1e-5), f"{name}: wrong result"
            us = wall_us(step, st, reps)
            rows.append({"gpus": count, "variant": name, "us": us})
            print(f"{count} GPU(s) {name:<30} {us:9.1f} us per step", flush=True)
    _write(rows, k, n, reps, out)
    return rows


def _write(rows, k, n, reps, out):
    by = {(r["gpus"], r["variant"]): r["us"] for r in rows}
    names = list(dict.fromkeys(r["variant"] for r in rows))
    counts = sorted({r["gpus"] for r in rows})
    lines = [
        "# One step over several GPUs", "",
        f"{gpu_name()} x {max(counts)}, {datetime.date.today()}; "
        + ", ".join(f"{m} {v}" for m, v in versions().items()) + ".", "",
        f"Per device: {k} small kernels ({n} floats), a gradient kernel, an NCCL "
        "all-reduce over the devices, an update kernel. Host wall time per step, "
        f"{reps} steps back to back, all devices synchronised at the end "
        "(`python3 bench/multi_gpu.py`).", "",
        "| variant | " + " | ".join(f"{c} GPU{'s' * (c > 1)} us/step" for c in counts)
        + " | vs hand-captured | " + (f"{counts[-1]}/{counts[0]} GPUs |" if len(counts) > 1
                                      else "|"),
        "| --- | " + " ---: |" * len(counts) + " ---: | ---: |"]
    for name in names:
        cells = [f"{by[(c, name)]:.1f}" for c in counts]
        ratio = by[(counts[-1], name)] / by[(counts[-1], "hand-captured across devices")]
        scale = by[(counts[-1], name)] / by[(counts[0], name)] if len(counts) > 1 else float("nan")
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {ratio:.3f}x | {scale:.2f}x |")
    lines += ["", "vs hand-captured: at the most GPUs (1.000x: the same replay). "
              f"{counts[-1]}/{counts[0]} GPUs: time per step with twice the GPUs and "
              "the same work on each (1.00x: perfect weak scaling)."]
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {out}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, default=20, help="small kernels per device per step")
    ap.add_argument("--n", type=int, default=1024, help="floats per array")
    ap.add_argument("--reps", type=int, default=200, help="steps timed per variant")
    ap.add_argument("--out", default=OUT)
    opts = ap.parse_args()
    run(opts.k, opts.n, opts.reps, opts.out)


if __name__ == "__main__":
    main()

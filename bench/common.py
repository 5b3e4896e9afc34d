"""Timing helpers shared by the benchmarks (run on the GPU machine)."""
from __future__ import annotations

import gc
import statistics
import time

import numpy as np

KERNEL_SRC = r'''
extern "C" __global__ void inc(float* x, int n) {
    int i = threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
extern "C" __global__ void axpb(float* x, float a, int n) {
    int i = threadIdx.x;
    if (i < n) x[i] = a * x[i] + 1.0f;
}
'''


def median_us(samples) -> float:
    return statistics.median(samples) * 1e6


def host_us(fn, reps=200, sync=None, every=10, warmup=20) -> float:
    """Median host time of one ``fn()`` call, synchronising every ``every`` calls."""
    for _ in range(warmup):
        fn()
    if sync:
        sync()
    out = []
    for i in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
        if sync and (i + 1) % every == 0:
            sync()
    if sync:
        sync()
    return median_us(out)


def interleaved_us(fns, reps=9, warmup=2, collect=True) -> list:
    """Median host time of one call of each of ``fns``, timed in turn round by
    round (a, b, c, a, b, c, ...), so that a slower stretch of the host weighs
    on each alike (blocks of one then the other swung 2x between runs on the
    H200 hosts). With ``collect``, each call starts after a ``gc.collect()``,
    untimed: else the garbage one leaves is collected in the next one's time
    (capture's allocations ran the collections of the builds' freed graphs,
    doubling it)."""
    for _ in range(warmup):
        for fn in fns:
            fn()
    out = [[] for _ in fns]
    for _ in range(reps):
        for fn, times in zip(fns, out):
            if collect:
                gc.collect()
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return [median_us(times) for times in out]


def _event_seconds(run_once, stream) -> list:
    """One ``run_once()`` timed with CUDA events on ``stream``: ``[seconds]``."""
    import cupy as cp
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record(stream)
    run_once()
    end.record(stream)
    end.synchronize()
    return [cp.cuda.get_elapsed_time(start, end) * 1e-3]


def device_us(run_once, stream, reps=20, warmup=3) -> float:
    """Median wall time of ``run_once()`` measured with CUDA events on ``stream``."""
    for _ in range(warmup):
        run_once()
    stream.synchronize()
    out = []
    for _ in range(reps):
        out += _event_seconds(run_once, stream)
    return median_us(out)


def device_us_interleaved(variants: dict, stream, rounds=7, reps=7, warmup=3) -> dict:
    """``{name: median us}`` of ``device_us`` for each ``run_once`` of ``variants``,
    measured in turns (``rounds`` rounds of ``reps`` each), so that a slow spell
    of the host or the GPU falls on every variant alike."""
    samples = {name: [] for name in variants}
    for name, fn in variants.items():
        for _ in range(warmup):
            fn()
    stream.synchronize()
    for _ in range(rounds):
        for name, fn in variants.items():
            fn()   # the stream's last graph is this one again
            stream.synchronize()
            for _ in range(reps):
                samples[name] += _event_seconds(fn, stream)
    return {name: median_us(out) for name, out in samples.items()}


def versions() -> dict:
    import platform
    out = {"python": platform.python_version(), "numpy": np.__version__}
    for mod in ("cuda.core", "cuda.bindings", "cupy", "numba", "numba_cuda", "torch"):
        try:
            m = __import__(mod, fromlist=["__version__"])
            out[mod] = getattr(m, "__version__", "?")
        except Exception:  # noqa: BLE001  (a missing library is just not listed)
            pass
    from graphtrace.ops.kernel import speedups_module
    out["graphtrace tracing"] = "compiled" if speedups_module is not None else "pure Python"
    return out


def gpu_name() -> str:
    from cuda.core import Device
    return Device().name

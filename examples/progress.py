"""Progress reports from inside a graph: host callbacks between the steps.

A Jacobi relaxation of -u'' = f on [0, 1] runs all its sweeps in one graph
launch. Every `every` sweeps the graph computes the squared residual on the
device, copies it into pinned host memory and calls a Python function with
it, which prints the progress: the host learns how the solve goes without
stopping the GPU or launching anything itself. A callback is a node like
any other: it waits for the copy it reads. Each one reads the whole pinned
array, so the copy of the next report waits for it (a write after its
read), and callbacks run in the order they were recorded: the reports come
in order. Kernels and copies that share no bytes run in any order.

A second call with another right-hand side rebinds the graph and reports
again. Runs on the GPU, or on the CPU simulator where there is none.
"""
import math

import numpy as np

import graphtrace as gt          # before numba: without a GPU it selects the simulator
from numba import cuda

THREADS = 128
REPORTS = []                     # (sweep, squared residual), as the callbacks saw them


@cuda.jit
def sweep(u, f, h2, out):        # one Jacobi sweep, the ends held at 0
    i = cuda.grid(1)
    n = u.size
    if 0 < i < n - 1:
        out[i] = 0.5 * (u[i - 1] + u[i + 1] + h2 * f[i])
    elif i == 0 or i == n - 1:
        out[i] = 0.0


@cuda.jit
def residual(u, f, h2, out):     # out[0] += sum of squared residuals (out zeroed before)
    i = cuda.grid(1)
    if 0 < i < u.size - 1:
        r = u[i - 1] - 2.0 * u[i] + u[i + 1] + h2 * f[i]
        cuda.atomic.add(out, 0, r * r)


def report(sweeps, total, h, slot):
    """Runs on the host, inside the graph, once the copy into h[slot] is done."""
    REPORTS.append((sweeps, float(h[slot])))
    print(f"  sweep {sweeps:>4}/{total}: residual {math.sqrt(h[slot]):.3e}")


@gt.graph(static=("sweeps", "every"))
def relax(s, u, v, f, h2, norms, host, sweeps, every):
    blocks = (u.size + THREADS - 1) // THREADS
    s.memset(u, 0)                               # each solve starts from u = 0
    for k in range(sweeps):
        a, b = (u, v) if k % 2 == 0 else (v, u)
        sweep[blocks, THREADS, s](a, f, h2, b)
        if (k + 1) % every == 0:
            r = (k + 1) // every - 1
            s.memset(norms[r:r + 1], 0)
            residual[blocks, THREADS, s](b, f, h2, norms[r:r + 1])
            s.copy(host[r:r + 1], norms[r:r + 1])
            s.host(report, k + 1, sweeps, gt.In(host), r)


def reference(f, h2, sweeps):
    u = np.zeros_like(f)
    out = []
    for k in range(sweeps):
        v = np.zeros_like(u)
        v[1:-1] = 0.5 * (u[:-2] + u[2:] + h2 * f[1:-1])
        u = v
        out.append(((u[:-2] - 2 * u[1:-1] + u[2:] + h2 * f[1:-1]) ** 2).sum())
    return u, out


def main():
    gpu = gt.backend.default_backend() == "gpu"
    n, sweeps, every = (4096, 2000, 500) if gpu else (64, 40, 10)
    h2 = (1.0 / (n - 1)) ** 2
    x = np.linspace(0, 1, n)
    u, v = cuda.to_device(np.zeros(n)), cuda.to_device(np.zeros(n))
    norms, host = cuda.device_array(sweeps // every), gt.pinned_empty(sweeps // every)
    print(f"backend {gt.backend.default_backend()}: {sweeps} sweeps of {n} points, "
          f"a report every {every}, one launch per call")
    for name, f0 in (("f = 1", np.ones(n)), ("f = sin(pi x)", np.sin(np.pi * x))):
        REPORTS.clear()
        print(name)
        relax(u, v, cuda.to_device(f0), h2, norms, host, sweeps, every)   # later: rebinds
        cuda.synchronize()
        expect, residuals = reference(f0, h2, sweeps)
        assert [k for k, _ in REPORTS] == list(range(every, sweeps + 1, every)), REPORTS
        assert np.allclose([r for _, r in REPORTS], residuals[every - 1::every],
                           rtol=1e-4, atol=0), "wrong residuals"
        assert np.allclose(u.copy_to_host(), expect), "wrong solution"
    assert relax.cache_info().misses == 1, "the second call traced again"
    print("results match numpy")


if __name__ == "__main__":
    main()

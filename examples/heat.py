"""A 2-D heat equation time loop: many small kernels per step, one graph per call.

Each call of `steps` advances the solution `n` steps (two kernels per step,
plus a boundary fix-up and a residual kernel at the end). The first call
traces and builds the graph; later calls with new arrays rebind and replay.
Runs on the GPU, or on the CPU simulator where there is none (smaller grid).
"""
import time

import numpy as np

import graphtrace as gt          # before numba: without a GPU it selects the simulator
from numba import cuda


@cuda.jit
def diffuse(u, v, alpha):
    i, j = cuda.grid(2)
    n, m = u.shape
    if 0 < i < n - 1 and 0 < j < m - 1:
        v[i, j] = u[i, j] + alpha * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1]
                                     + u[i, j + 1] - 4 * u[i, j])


@cuda.jit
def hold_edges(u, hot):
    i = cuda.grid(1)
    if i < u.shape[1]:
        u[0, i] = hot          # a hot top edge
        u[u.shape[0] - 1, i] = 0.0


@cuda.jit
def total(u, out):
    i, j = cuda.grid(2)
    if i < u.shape[0] and j < u.shape[1]:
        cuda.atomic.add(out, 0, u[i, j])


@gt.graph(static=("n",))
def steps(s, u, v, out, alpha, hot, n):
    blocks, threads = ((u.shape[0] + 15) // 16, (u.shape[1] + 15) // 16), (16, 16)
    for _ in range(n):
        hold_edges[(u.shape[1] + 127) // 128, 128, s](u, hot)
        diffuse[blocks, threads, s](u, v, alpha)
        hold_edges[(v.shape[1] + 127) // 128, 128, s](v, hot)
        diffuse[blocks, threads, s](v, u, alpha)
    s.memset(out, 0)
    total[blocks, threads, s](u, out)


def reference(u, alpha, hot, n):
    u, v = u.copy(), u.copy()
    for _ in range(n):
        for a, b in ((u, v), (v, u)):
            a[0, :], a[-1, :] = hot, 0.0
            b[1:-1, 1:-1] = a[1:-1, 1:-1] + alpha * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2]
                                                     + a[1:-1, 2:] - 4 * a[1:-1, 1:-1])
    return u


def main():
    size, n = (128, 10) if gt.backend.default_backend() == "gpu" else (16, 2)
    u0 = np.zeros((size, size))
    u, v, out = cuda.to_device(u0), cuda.to_device(u0), cuda.to_device(np.zeros(1))
    g = steps.compile(u, v, out, 0.2, 1.0, n)
    print(f"{g.node_count} nodes, {g.edge_count} edges; backend {gt.backend.default_backend()}")
    t0 = time.perf_counter()
    for _ in range(5):
        steps(u, v, out, 0.2, 1.0, n)
    cuda.synchronize()
    print(f"5 calls of {n} steps: {(time.perf_counter() - t0) * 1e3:.1f} ms")
    expect = reference(u0, 0.2, 1.0, 5 * n)
    assert np.allclose(u.copy_to_host(), expect), "wrong temperatures"
    assert np.isclose(out.copy_to_host()[0], expect.sum()), "wrong total"
    u2, v2 = cuda.to_device(u0), cuda.to_device(u0)
    steps(u2, v2, out, 0.1, 2.0, n)              # new arrays and scalars: rebind, replay
    cuda.synchronize()
    assert np.allclose(u2.copy_to_host(), reference(u0, 0.1, 2.0, n)), "wrong after rebinding"
    print("results match numpy")


if __name__ == "__main__":
    main()

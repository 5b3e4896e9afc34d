"""Conjugate gradient that iterates on the device until the residual is small.

The whole solve is one graph launch: a CUDA while node repeats the body of
one CG iteration as long as ``r.r > tol**2`` (read on the device), up to a
bound on the iterations. No host check, no fixed block of iterations. The
eager version below checks the residual on the host every iteration; both
must take the same number of iterations and find the same solution.
Runs on the GPU, or on the CPU simulator where there is none (smaller system).
"""
import time

import numpy as np

import graphtrace as gt          # before numba: without a GPU it selects the simulator
from numba import cuda


@cuda.jit
def laplace(p, ap):               # ap = A p, A = tridiag(-1, 2, -1)
    i = cuda.grid(1)
    n = p.size
    if i < n:
        left = p[i - 1] if i > 0 else 0.0
        right = p[i + 1] if i < n - 1 else 0.0
        ap[i] = 2.0 * p[i] - left - right


@cuda.jit
def dot(a, b, out):               # out[0] += a . b (out zeroed before)
    i = cuda.grid(1)
    if i < a.size:
        cuda.atomic.add(out, 0, a[i] * b[i])


@cuda.jit
def step_x_r(x, r, p, ap, rr, pap):
    i = cuda.grid(1)
    if i < x.size:
        alpha = rr[0] / pap[0]
        x[i] += alpha * p[i]
        r[i] -= alpha * ap[i]


@cuda.jit
def step_p(p, r, rr, rr_new):
    i = cuda.grid(1)
    if i < p.size:
        p[i] = r[i] + (rr_new[0] / rr[0]) * p[i]


@cuda.jit
def next_iteration(rr, rr_new, iterations):
    if cuda.grid(1) == 0:
        rr[0] = rr_new[0]
        iterations[0] += 1


def iteration(s, x, r, p, ap, rr, rr_new, pap, iterations, blocks, threads):
    """One CG iteration on ``s``: a proxy stream, or None to run it eagerly."""
    def launch(kernel):
        return kernel[blocks, threads, s] if s is not None else kernel[blocks, threads]

    def zero(a):
        s.memset(a, 0) if s is not None else a.copy_to_device(np.zeros(a.size))
    zero(pap)
    launch(laplace)(p, ap)
    launch(dot)(p, ap, pap)
    launch(step_x_r)(x, r, p, ap, rr, pap)
    zero(rr_new)
    launch(dot)(r, r, rr_new)
    launch(step_p)(p, r, rr, rr_new)
    launch(next_iteration)(rr, rr_new, iterations)


@gt.graph(static=("max_iterations",))
def solve(s, b, x, r, p, ap, rr, rr_new, pap, iterations, tol_squared, max_iterations):
    threads = 128
    blocks = (b.size + threads - 1) // threads
    s.memset(x, 0)                                   # x = 0, so r = p = b
    s.copy(r, b)
    s.copy(p, b)
    s.memset(rr, 0)
    s.memset(iterations, 0)
    dot[blocks, threads, s](r, r, rr)
    with s.while_loop(gt.cond(rr) > tol_squared, max_iterations=max_iterations) as body:
        iteration(body, x, r, p, ap, rr, rr_new, pap, iterations, blocks, threads)


def solve_eagerly(b, tol, max_iterations):
    n = b.size
    threads = 128
    blocks = (n + threads - 1) // threads
    x = cuda.to_device(np.zeros(n))
    r, p = cuda.to_device(b.copy_to_host()), cuda.to_device(b.copy_to_host())
    ap, rr, rr_new, pap = (cuda.to_device(np.zeros(k)) for k in (n, 1, 1, 1))
    iterations = cuda.to_device(np.zeros(1, np.int32))
    dot[blocks, threads](r, r, rr)
    while rr.copy_to_host()[0] > tol * tol and iterations.copy_to_host()[0] < max_iterations:
        iteration(None, x, r, p, ap, rr, rr_new, pap, iterations, blocks, threads)
    return x.copy_to_host(), int(iterations.copy_to_host()[0])


def main():
    gpu = gt.backend.default_backend() == "gpu"
    n, tol, max_iterations = (4096, 1e-8, 10_000) if gpu else (32, 1e-8, 200)
    rng = np.random.default_rng(0)
    b = cuda.to_device(rng.standard_normal(n))
    work = [cuda.to_device(np.zeros(k)) for k in (n, n, n, n, 1, 1, 1)]
    iterations = cuda.to_device(np.zeros(1, np.int32))
    args = (b, *work, iterations, tol * tol, max_iterations)
    print(solve.trace(*args))
    solve(*args)                                      # trace, build, launch
    cuda.synchronize()
    t0 = time.perf_counter()
    solve(*args)                                      # the whole solve: one launch
    cuda.synchronize()
    graph_ms = (time.perf_counter() - t0) * 1e3
    x, its = work[0].copy_to_host(), int(iterations.copy_to_host()[0])
    t0 = time.perf_counter()
    x_eager, its_eager = solve_eagerly(b, tol, max_iterations)
    eager_ms = (time.perf_counter() - t0) * 1e3
    print(f"backend {gt.backend.default_backend()}: n={n}, {its} iterations on the device "
          f"in {graph_ms:.1f} ms (eager, host check each iteration: {its_eager} in "
          f"{eager_ms:.1f} ms)")
    assert its == its_eager, f"{its} iterations on the device, {its_eager} eagerly"
    assert np.allclose(x, x_eager, rtol=1e-9, atol=1e-12), "solutions differ"
    a = 2 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1)
    assert np.linalg.norm(a @ x - b.copy_to_host()) <= 10 * tol, "residual too large"
    print("results match numpy and the eager solve")


if __name__ == "__main__":
    main()

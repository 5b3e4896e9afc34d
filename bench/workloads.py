"""Workload 5: real steps made of many small kernels.

- Jacobi: a 2-D stencil time loop (256x256, 100 steps = 200 kernels per call),
  with the same kernel from numba and from cupy, eager against graphtrace.
- Conjugate gradient to a tolerance (n = 4096): eager with a host check every
  iteration, graphs of 10 iterations with a host check after each (they
  overshoot by up to 9), and one graph whose while node loops on the device.
- Conjugate gradient on a 1-D Poisson matrix (n = 16384, 8 nodes per
  iteration: two dots with atomics, a matvec, updates, a memset pair and a
  copy), 200 iterations. Eager checks the residual on the host every
  iteration (the usual loop) or every 10; graphtrace runs 10 iterations per
  graph and checks after each graph.
- The training step of examples/train_step.py (256x256, 20 steps per call):
  eager (torch matmul, then numba kernels launched one by one), graphtrace
  (one graph per step), and torch's own CUDA graph of the same step.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

import graphtrace as gt

JACOBI_SRC = r'''
extern "C" __global__ void jacobi(const double* u, double* v, int n) {
    int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1 && j > 0 && j < n - 1)
        v[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1]);
}
'''
CG_SRC = r'''
extern "C" __global__ void matvec(const double* p, double* Ap, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) Ap[i] = 2.0 * p[i] - (i > 0 ? p[i - 1] : 0.0) - (i < n - 1 ? p[i + 1] : 0.0);
}
extern "C" __global__ void dot(const double* a, const double* b, double* out, int n) {
    __shared__ double part[256];
    double s = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        s += a[i] * b[i];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k /= 2) {
        if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, part[0]);
}
extern "C" __global__ void update_xr(double* x, double* r, const double* p, const double* Ap,
                                    const double* rr, const double* pAp, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double alpha = rr[0] / pAp[0];
    if (i < n) { x[i] += alpha * p[i]; r[i] -= alpha * Ap[i]; }
}
extern "C" __global__ void count(int* its) { its[0] += 1; }
extern "C" __global__ void update_p(double* p, const double* r, const double* rr_new,
                                   const double* rr, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double beta = rr_new[0] / rr[0];
    if (i < n) p[i] = r[i] + beta * p[i];
}
'''


def wall_us(fn, sync, reps=5):
    fn()
    sync()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        out.append(time.perf_counter() - t0)
    return float(np.median(out)) * 1e6


def jacobi(rows):
    import cupy as cp
    from numba import cuda
    n, steps = 256, 100
    k_cp = cp.RawKernel(JACOBI_SRC, "jacobi")

    @cuda.jit
    def k_nb(u, v):
        i, j = cuda.grid(2)
        m = u.shape[0]
        if 0 < i < m - 1 and 0 < j < m - 1:
            v[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])

    st = cp.cuda.Stream(non_blocking=True)
    nst = cuda.external_stream(st.ptr)
    init = np.random.default_rng(0).standard_normal((n, n))
    blocks, threads = (n // 16, n // 16), (16, 16)

    def arrays():
        return cp.asarray(init), cp.asarray(init)

    u, v = arrays()
    un, vn = cuda.as_cuda_array(u), cuda.as_cuda_array(v)

    def eager_numba():
        for _ in range(steps):
            k_nb[blocks, threads, nst](un, vn)
            k_nb[blocks, threads, nst](vn, un)

    def eager_cupy():
        for _ in range(steps):
            k_cp(blocks, threads, (u, v, np.int32(n)), stream=st)
            k_cp(blocks, threads, (v, u, np.int32(n)), stream=st)

    @gt.graph
    def g_numba(s, u, v):
        for _ in range(steps):
            k_nb[blocks, threads, s](u, v)
            k_nb[blocks, threads, s](v, u)

    @gt.graph
    def g_cupy(s, u, v):
        for _ in range(steps):
            s.launch(k_cp, blocks, threads, u, v, n)
            s.launch(k_cp, blocks, threads, v, u, n)

    results = {}
    for name, fn in (("eager numba", eager_numba), ("eager cupy", eager_cupy),
                     ("graphtrace numba", lambda: g_numba(u, v, stream=st)),
                     ("graphtrace cupy", lambda: g_cupy(u, v, stream=st))):
        u[...] = cp.asarray(init)
        v[...] = cp.asarray(init)
        cp.cuda.Device().synchronize()
        fn()
        st.synchronize()
        results[name] = cp.asnumpy(u)
        us = wall_us(fn, st.synchronize)
        rows.append({"workload": "jacobi 256x256, 100 steps", "variant": name, "us": us})
        print(f"jacobi {name:<20} {us:10.1f} us", flush=True)
    ref = results["eager cupy"]
    for name, res in results.items():
        assert np.allclose(res, ref, rtol=1e-12, atol=1e-12), f"jacobi {name} differs"


def cg(rows):
    import cupy as cp
    n, per_graph, iters = 1 << 14, 10, 200
    mod = cp.RawModule(code=CG_SRC)
    f = {name: mod.get_function(name) for name in ("matvec", "dot", "update_xr", "update_p")}
    k = {name: gt.kernel(mod, name=name) for name in f}
    st = cp.cuda.Stream(non_blocking=True)
    grid, block = ((n + 255) // 256,), (256,)
    b = cp.asarray(np.random.default_rng(1).standard_normal(n))

    def state():
        x = cp.zeros(n)
        r, p = b.copy(), b.copy()
        Ap = cp.zeros(n)
        rr, rr_new, pAp = cp.zeros(1), cp.zeros(1), cp.zeros(1)
        rr[...] = cp.dot(r, r)
        cp.cuda.Device().synchronize()   # made on the default stream; st does not wait for it
        return x, r, p, Ap, rr, rr_new, pAp

    def eager_iteration(x, r, p, Ap, rr, rr_new, pAp):
        pAp.fill(0)
        f["matvec"](grid, block, (p, Ap, np.int32(n)), stream=st)
        f["dot"]((64,), block, (p, Ap, pAp, np.int32(n)), stream=st)
        f["update_xr"](grid, block, (x, r, p, Ap, rr, pAp, np.int32(n)), stream=st)
        rr_new.fill(0)
        f["dot"]((64,), block, (r, r, rr_new, np.int32(n)), stream=st)
        f["update_p"](grid, block, (p, r, rr_new, rr, np.int32(n)), stream=st)
        rr[...] = rr_new

    @gt.graph
    def cg_steps(s, x, r, p, Ap, rr, rr_new, pAp):
        for _ in range(per_graph):
            s.memset(pAp, 0)
            s.launch(k["matvec"], grid, block, p, Ap, n)
            s.launch(k["dot"], 64, block, p, Ap, pAp, n)
            s.launch(k["update_xr"], grid, block, x, r, p, Ap, rr, pAp, n)
            s.memset(rr_new, 0)
            s.launch(k["dot"], 64, block, r, r, rr_new, n)
            s.launch(k["update_p"], grid, block, p, r, rr_new, rr, n)
            s.copy(rr, rr_new)

    def run_eager(check_every):
        vals = state()
        with st:
            for i in range(iters):
                eager_iteration(*vals)
                if (i + 1) % check_every == 0 and float(vals[4][0]) < 1e-30:
                    break
        return vals

    def run_graph():
        vals = state()
        with st:                              # the host check reads on st too
            for _ in range(iters // per_graph):
                cg_steps(*vals, stream=st)
                if float(vals[4][0]) < 1e-30:   # the host check, once per graph
                    break
        return vals

    results = {}
    for name, fn in (("eager, check every iteration", lambda: run_eager(1)),
                     ("eager, check every 10", lambda: run_eager(per_graph)),
                     ("graphtrace, 10 iterations per graph", run_graph)):
        results[name] = cp.asnumpy(fn()[0])
        st.synchronize()
        us = wall_us(fn, st.synchronize, reps=3)
        rows.append({"workload": "CG n=16384, 200 iterations", "variant": name, "us": us})
        print(f"cg {name:<36} {us:10.1f} us", flush=True)
    ref = results["eager, check every iteration"]
    for name, res in results.items():
        assert np.allclose(res, ref, rtol=1e-8, atol=1e-10), f"cg {name} differs"


def cg_to_tolerance(rows):
    """CG until r.r <= tol**2: eager with a host check every iteration, graphs of
    10 iterations with a host check after each, and one graph whose while node
    loops on the device (the whole solve is one launch)."""
    import cupy as cp
    n, per_graph, tol2, bound = 1 << 12, 10, 1e-12, 100_000
    mod = cp.RawModule(code=CG_SRC)
    f = {name: mod.get_function(name) for name in ("matvec", "dot", "update_xr", "update_p")}
    k = {name: gt.kernel(mod, name=name) for name in (*f, "count")}
    st = cp.cuda.Stream(non_blocking=True)
    grid, block = ((n + 255) // 256,), (256,)
    b = cp.asarray(np.random.default_rng(2).standard_normal(n))

    def state():
        x, r, p, Ap = cp.zeros(n), b.copy(), b.copy(), cp.zeros(n)
        rr, rr_new, pAp, its = cp.zeros(1), cp.zeros(1), cp.zeros(1), cp.zeros(1, cp.int32)
        rr[...] = cp.dot(r, r)
        cp.cuda.Device().synchronize()
        return x, r, p, Ap, rr, rr_new, pAp, its

    def iteration(s, x, r, p, Ap, rr, rr_new, pAp, its):
        s.memset(pAp, 0)
        s.launch(k["matvec"], grid, block, p, Ap, n)
        s.launch(k["dot"], 64, block, p, Ap, pAp, n)
        s.launch(k["update_xr"], grid, block, x, r, p, Ap, rr, pAp, n)
        s.memset(rr_new, 0)
        s.launch(k["dot"], 64, block, r, r, rr_new, n)
        s.launch(k["update_p"], grid, block, p, r, rr_new, rr, n)
        s.copy(rr, rr_new)

    @gt.graph
    def block_of_10(s, x, r, p, Ap, rr, rr_new, pAp, its):
        for _ in range(per_graph):
            iteration(s, x, r, p, Ap, rr, rr_new, pAp, its)

    @gt.graph
    def solve(s, x, r, p, Ap, rr, rr_new, pAp, its, tol2):
        with s.while_loop(gt.cond(rr) > tol2, max_iterations=bound) as body:
            iteration(body, x, r, p, Ap, rr, rr_new, pAp, its)
            body.launch(k["count"], 1, 1, its)

    def eager():
        v = state()
        x, r, p, Ap, rr, rr_new, pAp, its = v
        done = 0
        with st:
            while float(rr[0]) > tol2:
                pAp.fill(0)
                f["matvec"](grid, block, (p, Ap, np.int32(n)))
                f["dot"]((64,), block, (p, Ap, pAp, np.int32(n)))
                f["update_xr"](grid, block, (x, r, p, Ap, rr, pAp, np.int32(n)))
                rr_new.fill(0)
                f["dot"]((64,), block, (r, r, rr_new, np.int32(n)))
                f["update_p"](grid, block, (p, r, rr_new, rr, np.int32(n)))
                rr[...] = rr_new
                done += 1
        return v, done

    def blocks():
        v = state()
        done = 0
        with st:
            while float(v[4][0]) > tol2:
                block_of_10(*v, stream=st)
                done += per_graph
        return v, done

    def device_loop():
        v = state()
        solve(*v, tol2, stream=st)
        st.synchronize()
        return v, int(v[7][0])

    results = {}
    for name, fn in (("eager, host check every iteration", eager),
                     ("graphtrace, 10 iterations per graph + host check", blocks),
                     ("graphtrace, device-side while loop (one launch)", device_loop)):
        v, done = fn()
        st.synchronize()
        results[name] = (cp.asnumpy(v[0]), done)
        us = wall_us(fn, st.synchronize, reps=3)
        rows.append({"workload": f"CG n={n} until r.r <= 1e-12",
                     "variant": f"{name}: {done} iterations", "us": us})
        print(f"cg-tol {name:<50} {us:10.1f} us, {done} iterations", flush=True)
    # The dots sum with atomics, in an order that changes from run to run, so
    # runs agree on the iteration count (to a few) and on the residual, not bit
    # for bit.
    bh = cp.asnumpy(b)
    its = results["eager, host check every iteration"][1]
    for name, (x, done) in results.items():
        ax = 2 * x - np.concatenate(([0.0], x[:-1])) - np.concatenate((x[1:], [0.0]))
        assert np.linalg.norm(ax - bh) <= 1e-5, f"cg-tol {name}: residual too large"
        assert abs(done - its) <= per_graph + 2, f"cg-tol {name}: {done} iterations, eager {its}"


def training(rows, n=256, steps=20, lr=0.5):
    """examples/train_step.py's step; torch's graph captures the eager code, with the
    numba kernels launched on torch's capture stream."""
    try:
        import torch
    except ImportError:
        print("training step skipped: torch is not installed", flush=True)
        return
    from cuda.core import Stream
    from numba import cuda
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
        __file__))), "examples"))
    import train_step as ts
    rng = np.random.default_rng(3)
    x0 = (rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32)
    y0 = np.tanh(x0 @ rng.standard_normal((n, n))).astype(np.float32)
    w0 = (0.1 * rng.standard_normal((n, n))).astype(np.float32)
    x, y, w = (torch.tensor(v, device="cuda") for v in (x0, y0, w0))
    h, a, g = (torch.zeros(n, n, device="cuda") for _ in range(3))
    total, loss = torch.zeros(1, device="cuda"), torch.zeros(1, device="cuda")
    # numba views made once: converting a torch tensor at every launch costs more
    xn, yn, wn, hn, an, gn, totaln = (cuda.as_cuda_array(t) for t in (x, y, w, h, a, g, total))
    grid, threads = ts.blocks((n, n)), ts.THREADS
    st = torch.cuda.Stream()
    nst = cuda.external_stream(st.cuda_stream)

    def one_step(numba_stream):          # on torch's current stream, numba on the same
        ts.linear(x, w, h)
        ts.activate[grid, threads, numba_stream](hn, an)
        total.zero_()
        ts.squared_error[grid, threads, numba_stream](an, yn, totaln)
        loss.copy_(total)
        ts.output_grad[grid, threads, numba_stream](an, yn, gn)
        ts.sgd[grid, threads, numba_stream](xn, gn, wn, lr)

    def eager():
        with torch.cuda.stream(st):
            for _ in range(steps):
                one_step(nst)

    core_st = Stream.from_handle(st.cuda_stream)

    def graphtrace():
        for _ in range(steps):
            ts.train_step(x, y, w, h, loss, lr, stream=core_st)

    eager()                              # compiles the kernels and warms cuBLAS up
    st.synchronize()
    torch_graph, capture = torch.cuda.CUDAGraph(), torch.cuda.Stream()
    capture_nb = cuda.external_stream(capture.cuda_stream)
    with torch.cuda.graph(torch_graph, stream=capture, capture_error_mode="relaxed"):
        one_step(capture_nb)

    def torch_cuda_graph():
        with torch.cuda.stream(st):
            for _ in range(steps):
                torch_graph.replay()

    results = {}
    for name, fn in (("eager: torch matmul + numba kernels", eager),
                     ("graphtrace (one graph per step)", graphtrace),
                     ("torch CUDA graph of the same step", torch_cuda_graph)):
        with torch.cuda.stream(st):
            w.copy_(torch.from_numpy(w0))
        fn()
        st.synchronize()
        results[name] = (w.cpu().numpy(), float(loss.cpu()[0]))
        us = wall_us(fn, st.synchronize)
        rows.append({"workload": f"training step {n}x{n}, {steps} steps", "variant": name,
                     "us": us})
        print(f"training {name:<40} {us:10.1f} us", flush=True)
    ref_w, ref_loss = results["eager: torch matmul + numba kernels"]
    for name, (w_end, loss_end) in results.items():
        assert np.allclose(w_end, ref_w, rtol=1e-4, atol=1e-6), f"training {name}: weights"
        assert np.isclose(loss_end, ref_loss, rtol=1e-4), f"training {name}: loss"


def run():
    rows = []
    jacobi(rows)
    cg(rows)
    cg_to_tolerance(rows)
    training(rows)
    return rows

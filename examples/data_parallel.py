"""A data-parallel training step on every GPU of the host, as one graph.

Each GPU holds a shard of the batch and a copy of the weights of a linear
model (least squares). One step, on every device:

    r = x @ w - y                  numba kernel; r a temporary on that device
    loss += sum(r * r) / 2B        (atomics into the device's loss)
    g = x.T @ r / B                numba kernel
    g, loss = sum over devices     gt.nccl.all_reduce: one node, an NCCL group
    w -= lr * g                    numba kernel: every copy of w stays the same

graphtrace places each kernel on the device of its arrays, orders the
all-reduce after every device's gradient and each update after the
all-reduce, and launches the whole step, every GPU included, as one graph.

    python3 examples/data_parallel.py                 one process, every GPU
    torchrun --nproc-per-node=8 examples/data_parallel.py
                                                      one process per GPU (any
                                                      number of hosts): the same
                                                      step, with torch's process
                                                      group as the communicator

Without a GPU it runs on the simulator over two simulated devices
(``gt.sim_device``), where the all-reduce is numpy's sum.
"""
import os
import time

import numpy as np

import graphtrace as gt          # before numba: without a GPU it selects the simulator
from numba import cuda

DTYPE = np.float32
GPU = gt.backend.default_backend() == "gpu"
THREADS = (16, 16) if GPU else (4, 4)


def blocks(shape):
    return (shape[0] + THREADS[0] - 1) // THREADS[0], (shape[1] + THREADS[1] - 1) // THREADS[1]


@cuda.jit
def residual(x, w, y, r, loss, inv):       # r = x @ w - y; loss[0] += sum(r*r) * inv / 2
    i, j = cuda.grid(2)
    if i < r.shape[0] and j < r.shape[1]:
        acc = 0.0
        for k in range(x.shape[1]):
            acc += x[i, k] * w[k, j]
        d = acc - y[i, j]
        r[i, j] = d
        cuda.atomic.add(loss, 0, d * d * inv / 2)


@cuda.jit
def weight_grad(x, r, g, inv):             # g = x.T @ r * inv
    k, j = cuda.grid(2)
    if k < g.shape[0] and j < g.shape[1]:
        acc = 0.0
        for i in range(x.shape[0]):
            acc += x[i, k] * r[i, j]
        g[k, j] = acc * inv


@cuda.jit
def sgd(w, g, lr):
    k, j = cuda.grid(2)
    if k < w.shape[0] and j < w.shape[1]:
        w[k, j] -= lr * g[k, j]


@gt.graph
def step(s, xs, ys, ws, grads, losses, loss_out, comms, inv, lr):
    """One step over the devices of ``xs`` (one shard each); ``comms`` joins them."""
    for x, y, w, g, loss in zip(xs, ys, ws, grads, losses):
        r = s.empty(y.shape, DTYPE)            # on the device of the kernels using it
        s.memset(loss, 0)
        residual[blocks(y.shape), THREADS, s](x, w, y, r, loss, inv)
        weight_grad[blocks(g.shape), THREADS, s](x, r, g, inv)
    gt.nccl.all_reduce(s, comms, grads, op="sum")       # in place, on every device
    gt.nccl.all_reduce(s, comms, losses, op="sum")
    for w, g in zip(ws, grads):
        sgd[blocks(w.shape), THREADS, s](w, g, lr)
    s.copy(loss_out, losses[0])


def reference(x, y, w, lr, steps):
    """Full-batch gradient descent in numpy (float64): final weights, losses."""
    w, losses = w.astype(np.float64), []
    for _ in range(steps):
        r = x @ w - y
        losses.append(0.5 * (r * r).sum() / len(x))
        w = w - lr * x.T @ r / len(x)
    return w, np.array(losses)


def setup():
    """``(devices, shard numbers, number of shards, comms, rank)`` of this process."""
    if "LOCAL_RANK" in os.environ:               # torchrun: one process per GPU
        import torch
        import torch.distributed as dist
        local = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local)
        dist.init_process_group("nccl")
        return [local], [dist.get_rank()], dist.get_world_size(), dist.group.WORLD, \
            dist.get_rank()
    n = len(cuda.gpus) if GPU else 2
    return list(range(n)), list(range(n)), n, None, 0


def to_device(a, device):
    if not GPU:                                  # the simulator: tag its arrays instead
        return gt.sim_device(cuda.to_device(a), device)
    with cuda.gpus[device]:
        return cuda.to_device(a)


def synchronize(devices):
    for d in devices if GPU else ():
        with cuda.gpus[d]:
            cuda.synchronize()


def main():
    devices, shards, n_shards, comms, rank = setup()
    shard, n_in, n_out, steps, lr = (4096, 256, 64, 30, 0.5) if GPU else (8, 6, 3, 3, 0.5)
    rng = np.random.default_rng(0)             # the same data in every process
    x0 = rng.standard_normal((shard * n_shards, n_in)).astype(DTYPE)
    y0 = (x0 @ rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(DTYPE)
    w0 = np.zeros((n_in, n_out), DTYPE)
    part = lambda a, k: a[k * shard:(k + 1) * shard]                 # noqa: E731
    xs = [to_device(part(x0, k), d) for d, k in zip(devices, shards)]
    ys = [to_device(part(y0, k), d) for d, k in zip(devices, shards)]
    ws = [to_device(w0, d) for d in devices]
    grads = [to_device(np.zeros_like(w0), d) for d in devices]
    losses = [to_device(np.zeros(1, DTYPE), d) for d in devices]
    loss_out = gt.pinned_empty(1, DTYPE)
    args = (xs, ys, ws, grads, losses, loss_out, comms, 1.0 / len(x0), lr)

    if rank == 0:
        print(step.trace(*args))
    history = []
    for _ in range(steps):
        step(*args)
        synchronize(devices)
        history.append(float(loss_out[0]))
    w_ref, ref_losses = reference(x0, y0, w0, lr, steps)
    for w in ws:                                   # every copy took the same steps
        assert np.allclose(w.copy_to_host(), w_ref, rtol=1e-3, atol=1e-4), "weights differ"
    assert np.allclose(history, ref_losses, rtol=1e-3, atol=1e-6), "losses differ"
    assert history[-1] < history[0], "the loss did not go down"

    reps = 100 if GPU else 2
    t0 = time.perf_counter()
    for _ in range(reps):
        step(*args)
    synchronize(devices)
    if rank == 0:
        where = f"{len(devices)} devices" if comms is None else f"{n_shards} processes"
        print(f"backend {gt.backend.default_backend()}, {where}: loss {history[0]:.4f} -> "
              f"{history[-1]:.4f}; {(time.perf_counter() - t0) / reps * 1e6:.1f} us per step")
        print("results match numpy")


if __name__ == "__main__":
    main()

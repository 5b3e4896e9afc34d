"""Kernels of the loop and branch tests, shared by the CPU and the GPU tests."""
import numpy as np
from numba import cuda

import graphtrace as gt


@cuda.jit
def halve(x):
    if cuda.grid(1) == 0:
        x[0] = x[0] / 2


@cuda.jit
def count(n):
    if cuda.grid(1) == 0:
        n[0] += 1


@cuda.jit
def add(x, v):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += v


@cuda.jit
def mul(x, v):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= v


@cuda.jit
def copy_into(src, dst):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = src[i]


@cuda.jit
def shift(src, dst):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = src[i] + 1


def dev(*values, dtype=np.float32):
    return cuda.to_device(np.array(values, dtype=dtype))


def host(x):
    cuda.synchronize()
    return x.copy_to_host().tolist()


def loop_and_fill(s, c, n, runs, lim, fill, small):
    """A graph function's body for the tests that refuse a number a node cannot
    take: a node before a loop whose condition compares with ``lim``, then a
    memset of ``fill`` (each line marked for ``line_of``)."""
    count[1, 1, s](runs)   # a node before the loop: it must not run either
    with s.while_loop(gt.cond(c) < lim, max_iterations=100) as body:   # the loop
        count[1, 1, body](n)
        count[1, 1, body](c)
    s.memset(small, fill)   # the fill

"""Kernels of the loop and branch tests, shared by the CPU and the GPU tests."""
import numpy as np
from numba import cuda


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
def copy_into(src, dst):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = src[i]


def dev(*values, dtype=np.float32):
    return cuda.to_device(np.array(values, dtype=dtype))


def host(x):
    cuda.synchronize()
    return x.copy_to_host().tolist()

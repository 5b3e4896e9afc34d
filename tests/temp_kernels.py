"""Kernels of the temporaries tests, shared by the CPU and the GPU tests."""
from numba import cuda

from flow_kernels import count  # noqa: F401  (one counting kernel for every test)


@cuda.jit
def scale(x, a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i]


@cuda.jit
def add(src, dst):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] += src[i]


@cuda.jit
def add2d(src, dst):
    i, j = cuda.grid(2)
    if i < dst.shape[0] and j < dst.shape[1]:
        dst[i, j] += src[i, j]


@cuda.jit
def halve_into(x, t):
    if cuda.grid(1) == 0:
        t[0] = x[0] / 2

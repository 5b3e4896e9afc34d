"""The two numba kernels of the README's example, and a fill, shared by the tests that use them."""
from numba import cuda


@cuda.jit
def scale(x, a, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i]


@cuda.jit
def add(x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] += x[i]


@cuda.jit
def fill(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v


@cuda.jit
def scaled(a, f, b):
    i = cuda.grid(1)
    if i < b.size:
        b[i] = a[i] * f


@cuda.jit
def summed(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]

"""What the tests of watched settings share: the walks they run on, and a kernel."""
from numba import cuda

from graphtrace import regions

WALKS = [False] + ([True] if regions._BUFFERS is not None else [])
IDS = {True: "compiled walk", False: "Python walk"}


@cuda.jit
def put(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v

"""Kernels of the random programs (tests/programs.py), and what each op does.

Every kernel is elementwise: the element at one position of its output
depends only on the elements at that position of its inputs, and one thread
writes it. So an op whose output view equals or is disjoint from each of its
other views gives the same result in any order of threads.

The second group writes a parameter indirectly, through a device function
that returns one of its arrays or a row of one, through iteration over an
array's rows, or through tuples of arrays.
"""
import dataclasses

import graphtrace  # noqa: F401  (first: numba then builds simulator kernels without a GPU)
from numba import cuda


# --- kernels whose writes the intent analysis sees directly -------------------
@cuda.jit
def double_plus_one(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 2 * a[i] + 1


@cuda.jit
def add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


@cuda.jit
def increment(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


@cuda.jit
def add_rows(a, b, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        for j in range(out.shape[1]):
            out[i, j] = a[i, j] + b[i, j]


# --- kernels whose writes reach a parameter indirectly --------------------------
@cuda.jit(device=True)
def pick(a, b, first):
    if first:
        return a
    return b


@cuda.jit(device=True)
def same(a):
    return a


@cuda.jit(device=True)
def swap(a, b):
    return b, a


@cuda.jit(device=True)
def row_of(a, i):
    return a[i]


@cuda.jit(device=True)
def tail(a, k):
    return a[k:]


@cuda.jit(device=True)
def put_first(pair, i, v):
    pair[0][i] = v


@cuda.jit
def write_picked(x, out, tmp, first):
    i = cuda.grid(1)
    if i < out.size:
        pick(out, tmp, first)[i] = 2 * x[i] + 1


@cuda.jit
def write_same(x, out):
    i = cuda.grid(1)
    if i < out.size:
        same(out)[i] = x[i] + 3


@cuda.jit
def write_swapped(x, out):
    i = cuda.grid(1)
    if i < out.size:
        dst, src = swap(x, out)
        dst[i] = 2 * src[i]


@cuda.jit
def write_tail(x, out):
    i = cuda.grid(1)
    if i < out.size:
        tail(out, i)[0] = x[i] + 5


@cuda.jit
def write_tuple_item(x, out):
    i = cuda.grid(1)
    if i < out.size:
        t = (x, out)
        t[1][i] = t[0][i] + 4


@cuda.jit
def write_into_pair(x, out):
    i = cuda.grid(1)
    if i < out.size:
        put_first((out, x), i, x[i] + 6)


@cuda.jit
def fill_rows(x, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        r = row_of(out, i)
        for j in range(r.size):
            r[j] = x[i, j] + 1


@cuda.jit
def enumerate_rows(x, out):
    j = cuda.grid(1)
    if j < out.shape[1]:
        for i, row in enumerate(out):
            row[j] = 2 * x[i, j] + 1


@cuda.jit
def zip_rows(x, out):
    j = cuda.grid(1)
    if j < out.shape[1]:
        for dst, src in zip(out, x):
            dst[j] = src[j] + 2


@cuda.jit
def bump_rows(out):
    j = cuda.grid(1)
    if j < out.shape[1]:
        for row in out:
            row[j] += 1


@cuda.jit
def pick_rows(x, out, tmp, first):
    i = cuda.grid(1)
    if i < out.shape[0]:
        r = pick(out, tmp, first)[i]
        for j in range(r.size):
            r[j] = 3 * x[i, j]


@cuda.jit
def swap_rows(x, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        dst, src = swap(x, out)
        for j in range(dst.shape[1]):
            dst[i, j] = src[i, j] + 7


@dataclasses.dataclass(frozen=True)
class Spec:
    """An op kind: its kernel (None for copy and memset), the rank of its views,
    per view whether it is read and/or written, which extent gets a thread
    ("n": each element of a 1-D view, "rows", "cols"), how many 0/1 flags
    follow the views, and whether numba compiles it for a GPU."""
    kernel: object
    ndim: int
    roles: tuple
    threads: str = "n"
    flags: int = 0
    gpu: bool = True


SPECS = {
    "double_plus_one": Spec(double_plus_one, 1, ("r", "w")),
    "add": Spec(add, 1, ("r", "r", "w")),
    "increment": Spec(increment, 1, ("rw",)),
    "add_rows": Spec(add_rows, 2, ("r", "r", "w"), "rows"),
    "copy": Spec(None, 1, ("w", "r")),
    "memset": Spec(None, 1, ("w",)),
    "write_picked": Spec(write_picked, 1, ("r", "w", "w"), flags=1),
    "write_same": Spec(write_same, 1, ("r", "w")),
    "write_swapped": Spec(write_swapped, 1, ("r", "w")),
    # numba compiles a device function that returns a view it made (not one of
    # its arguments) only with NRT enabled, which graphs do not set up
    "write_tail": Spec(write_tail, 1, ("r", "w"), gpu=False),
    "write_tuple_item": Spec(write_tuple_item, 1, ("r", "w")),
    "write_into_pair": Spec(write_into_pair, 1, ("r", "w")),
    "fill_rows": Spec(fill_rows, 2, ("r", "w"), "rows", gpu=False),
    "enumerate_rows": Spec(enumerate_rows, 2, ("r", "w"), "cols"),
    "zip_rows": Spec(zip_rows, 2, ("r", "w"), "cols"),
    "bump_rows": Spec(bump_rows, 2, ("rw",), "cols"),
    "pick_rows": Spec(pick_rows, 2, ("r", "w", "w"), "rows", flags=1),
    "swap_rows": Spec(swap_rows, 2, ("r", "w"), "rows"),
}
DIRECT = ("double_plus_one", "add", "increment", "add_rows", "copy", "memset")
INDIRECT = tuple(k for k in SPECS if k not in DIRECT)

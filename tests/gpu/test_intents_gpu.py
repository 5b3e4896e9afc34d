"""Writes through aliases, compiled by numba: intents read off real numba objects
(not the simulator's), and graphs whose reader would race its writer if a write
were missed."""
import numpy as np
import pytest

import graphtrace as gt
from graphtrace.ops._intents import infer_intents

cuda = pytest.importorskip("numba.cuda")


@cuda.jit(device=True)
def pick(a, b, first):
    if first:
        return a
    return b


@cuda.jit
def fill_picked(x, out):      # writes ``out`` only through the array a device function returns
    i = cuda.grid(1)
    if i < out.shape[0]:
        t = pick(out, out, True)
        t[i, 0] = x[i]
        t[i, 1] = x[i] + 1


@cuda.jit
def fill_by_zip(x, out):      # writes ``out`` only through rows paired with zip
    if cuda.grid(1) == 0:
        for a, b in zip(out, x):
            a[0] = b
            a[1] = 2 * b


@cuda.jit
def fill_cache_hinted(x, out):   # writes ``out`` only through cache-hinted stores
    i = cuda.grid(1)
    if i < out.shape[0]:
        r = out[i]
        cuda.stcg(r, 0, x[i])
        cuda.stcg(r, 1, x[i] + 1)


@cuda.jit
def row_sums(out, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] = out[i, 0] + out[i, 1] + cuda.shfl_sync(0xffffffff, 0.0, 0)


@pytest.mark.parametrize("writer, expected", [(fill_picked, [1, 3, 5, 7]),
                                              (fill_by_zip, [0, 3, 6, 9]),
                                              (fill_cache_hinted, [1, 3, 5, 7])])
def test_reader_waits_for_a_write_through_an_alias(writer, expected):
    assert infer_intents(writer.py_func)[1] == "rw"
    assert infer_intents(row_sums.py_func) == ["r", "w"]

    @gt.graph
    def f(s, x, out, y):
        writer[1, 32, s](x, out)
        row_sums[1, 32, s](out, y)
    x = cuda.to_device(np.arange(4, dtype=np.float32))
    out = cuda.to_device(np.full((4, 2), -1, np.float32))
    y = cuda.to_device(np.zeros(4, np.float32))
    assert [d.index for d in f.trace(x, out, y).nodes[1].deps] == [0]
    for _ in range(3):
        out.copy_to_device(np.full((4, 2), -1, np.float32))
        f(x, out, y)
        cuda.synchronize()
        assert y.copy_to_host().tolist() == expected

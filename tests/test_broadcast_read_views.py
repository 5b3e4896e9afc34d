"""A broadcast view (stride 0) a kernel only reads is checked by the simulator for
staying unchanged through the few bytes it has, not a copy of its logical size (a
view of 2**40 elements over one float ran eagerly and ran out of memory in a graph)."""
import numpy as np
import pytest
from numba import cuda
from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
from numpy.lib.stride_tricks import as_strided

import graphtrace as gt


@cuda.jit
def sample(b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = b[i * 1000]


@cuda.jit
def poke(b, out):
    i = cuda.grid(1)
    if i == 0:
        b[5] = 9.0   # writes the one element every index shares
        out[0] = b[0]


@gt.graph(backend="sim")
def sampled(s, b, out):
    sample[1, 32, s](b, out)


def huge_broadcast():
    base = np.arange(4.0)
    return FakeCUDAArray(as_strided(base[1:], shape=(2 ** 40,), strides=(0,)))


def test_a_huge_broadcast_view_read_by_a_kernel_runs_as_eagerly():
    out = cuda.to_device(np.zeros(10))
    sampled(huge_broadcast(), out)
    assert np.array_equal(out.copy_to_host(), np.ones(10))


def test_a_write_to_a_broadcast_view_declared_read_only_is_still_found():
    @gt.graph(backend="sim")
    def f(s, b, out):
        s.launch(gt.kernel(poke, intents=("r", "w")), 1, 32, b, out)
    with pytest.raises(gt.IntentError, match="wrote to b"):
        f(huge_broadcast(), cuda.to_device(np.zeros(10)))

"""Views a kernel taking bare addresses (cupy's RawKernel, a RawModule's kernel,
a cuda.core Kernel declared by gt.kernel) cannot take, refused alike by the
compiled tracing path (``_speedups.c``) and by pure Python, whether or not the
kernel was launched before with the same sizes (which the compiled path records
without Python's help)."""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import FakeDeviceArray as A, line_of

# launches recorded by the compiled path (_speedups.c) and by pure Python
pytestmark = pytest.mark.usefixtures("both_launch_paths")
cp = pytest.importorskip("cupy")

SRC = r'''extern "C" __global__ void dbl(const double* x, double* y, int n) {
    int i = threadIdx.x; if (i < n) y[i] = 2 * x[i]; }'''


def _raw():
    k = cp.RawKernel(SRC, "dbl")

    @gt.reference(k)
    def _dbl(grid, block, x, y, n):
        y[:n] = 2 * x[:n]
    return k


def _core():
    from cuda.core import Kernel
    k = gt.kernel(Kernel.from_handle(0x1234), "in, out", name="core_dbl")

    @gt.reference(k)
    def _dbl(grid, block, x, y, n):
        y[:n] = 2 * x[:n]
    return k


def _module():
    mod = cp.RawModule(code=r'''template<typename T> __global__ void dbl(
        const T* x, T* y, int n) {}''', name_expressions=["dbl<double>"])
    k = gt.kernel(mod, name="dbl<double>")

    @gt.reference(k)
    def _dbl(grid, block, x, y, n):
        y[:n] = 2 * x[:n]
    return k


def _odd(y, which):
    if which == "forward":
        return y
    if which == "backward":
        return y[::-1]
    return A(8, "float64", ptr=y.ptr, strides=(0,))   # a broadcast


def _arrays():
    return (cuda.to_device(np.arange(8.0)), cuda.to_device(np.zeros(8)),
            cuda.to_device(np.zeros(8)))


@pytest.mark.parametrize("make", [_raw, _core, _module], ids=["RawKernel", "cuda.core",
                                                                 "RawModule"])
@pytest.mark.parametrize("which", ["backward", "repeating"])
def test_an_odd_view_after_a_forward_launch_of_the_kernel_is_refused(make, which):
    """The compiled path handed a launch back to Python's checks only for a view
    with gaps: once the kernel had been launched with the same sizes, y[::-1] was
    recorded, and on a GPU the kernel got y[7]'s address and wrote 56 bytes past y."""
    k = make()

    @gt.graph(static="which")
    def f(s, x, y, z, which):
        s.launch(k, 1, 8, x, z, 8)               # a forward launch first
        s.launch(k, 1, 8, x, _odd(y, which), 8)   # odd launch
    x, y, z = (A(8, "float64") for _ in range(3))
    with pytest.raises(gt.KernelArgumentError, match="laid out backward or repeating") as e:
        f.trace(x, y, z, which)
    assert e.value.source[1] == line_of(__file__, "odd launch")
    assert len(f.trace(x, y, z, "forward").nodes) == 2


def test_an_odd_view_is_refused_after_the_kernel_was_launched_by_another_graph():
    k = _raw()

    @gt.graph
    def forward(s, x, y):
        s.launch(k, 1, 8, x, y, 8)

    @gt.graph
    def backward(s, x, y):
        s.launch(k, 1, 8, x, y[::-1], 8)
    x, y, z = _arrays()
    forward(x, z)
    with pytest.raises(gt.KernelArgumentError, match="laid out backward"):
        backward(x, y)


def test_a_reversed_view_passed_to_a_cached_graph_traced_with_a_forward_one_is_refused():
    """A view's strides are in the key: the call traces again, and refuses."""
    k = _raw()

    @gt.graph
    def f(s, x, y):
        s.launch(k, 1, 8, x, y, 8)
    x, y, _ = _arrays()
    f(x, y)
    f(x, y)
    with pytest.raises(gt.KernelArgumentError, match="laid out backward"):
        f(x, y[::-1])

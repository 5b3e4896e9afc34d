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


def _windows(ptr, which):
    """Views of float64 over ``ptr`` whose elements overlap."""
    return {"sliding": A((4, 8), "float64", ptr=ptr, strides=(8, 8)),   # 32 in 88 bytes
            "rows": A((4, 8), "float64", ptr=ptr, strides=(32, 8)),     # rows 4 apart
            "columns": A((8, 4), "float64", ptr=ptr, strides=(8, 16)),  # the same, F-order
            "narrow": A((8,), "float64", ptr=ptr, strides=(4,))}[which]  # 4-byte steps


@pytest.mark.parametrize("make", [_raw, _core, _module], ids=["RawKernel", "cuda.core",
                                                                 "RawModule"])
@pytest.mark.parametrize("which", ["sliding", "rows", "columns", "narrow"])
def test_a_view_whose_elements_overlap_is_refused(make, which):
    """as_strided(p, (4, 8), (8, 8)) has 32 float64s in 88 bytes: the kernel got its
    address, read 256 bytes forward, and graphtrace recorded 88 of them, so a
    memset of bytes 128-192 of the same allocation ran unordered with it."""
    k = make()
    n = int(np.prod(_windows(0, which).shape))

    @gt.graph(static="which")
    def f(s, x, z, p, which):
        s.launch(k, 1, n, x, z, n)                          # a forward launch first
        s.launch(k, 1, n, x, _windows(p.ptr, which), n)     # overlapping launch
    x, z, p = A(n, "float64"), A(n, "float64"), A(64, "float64")
    with pytest.raises(gt.KernelArgumentError, match="view whose elements overlap") as e:
        f.trace(x, z, p, which)
    assert e.value.source[1] == line_of(__file__, "overlapping launch")
    assert "pass a contiguous copy" in str(e.value)
    assert "opaque=True" in str(e.value)
    if which == "sliding":
        assert "32 elements in 88 bytes" in str(e.value)
        assert "256 bytes forward" in str(e.value)


def test_a_memset_past_an_overlapping_view_is_ordered_with_an_opaque_launch():
    """Refused as it is; launched opaque=True, the kernel is ordered with the
    memset on bytes it reads past the view's last one."""
    k = _core()

    @gt.graph(static="opaque")
    def f(s, x, p, opaque):
        s.memset(A((8,), "float64", ptr=p.ptr + 128), 0)
        s.launch(k, 1, 32, x, _windows(p.ptr, "sliding"), 32, opaque=opaque)   # window
    x, p = A(32, "float64"), A(64, "float64")
    with pytest.raises(gt.KernelArgumentError, match="elements overlap") as e:
        f.trace(x, p, False)
    assert e.value.source[1] == line_of(__file__, "window")
    assert f.trace(x, p, True).edges() == [(0, 1)]


@pytest.mark.parametrize("shape, strides", [
    ((4, 8), (64, 8)),          # C-contiguous
    ((8, 4), (8, 64)),          # F-contiguous: a transpose
    ((2, 4, 4), (32, 8, 64)),   # axes in another order
    ((2, 8, 1), (64, 8, 8)),    # windows that touch, and an axis of one element
    ((1, 8), (8, 8)),           # one window
    ((0, 8), (8, 8)),           # no elements
])
def test_a_forward_view_without_gaps_or_overlaps_in_any_order_is_taken(shape, strides):
    k = _raw()
    n = int(np.prod(shape))

    @gt.graph
    def f(s, x, p):
        s.launch(k, 1, 32, x, A(shape, "float64", ptr=p.ptr, strides=strides), n)
    assert len(f.trace(A(64, "float64"), A(64, "float64")).nodes) == 1


def _elements_one_after_another(shape, strides, size):
    """Whether the elements' offsets are 0, size, 2*size, ... in some order."""
    offsets = [sum(i * st for i, st in zip(index, strides)) for index in np.ndindex(*shape)]
    return sorted(offsets) == list(range(0, size * len(offsets), size))


def test_a_bare_address_kernel_takes_exactly_the_views_of_elements_one_after_another():
    """Every small layout of float32s: taken iff its elements lie one after another
    from its address; the refused ones name why."""
    from graphtrace.buffers import Buffer
    from graphtrace.ops._adapter import adapter_for
    ad = adapter_for(_raw())
    rng = np.random.default_rng(7)
    taken = refused = 0
    for _ in range(3000):
        dims = rng.integers(1, 4)
        shape = tuple(int(v) for v in rng.integers(1, 5, dims))
        strides = tuple(4 * int(v) for v in rng.integers(-2, 9, dims))
        b = Buffer(1 << 20, shape, strides, np.float32, 0, None)
        try:
            ad.refuse_gaps((A(4), b, 4))
            ok = True
        except gt.KernelArgumentError as e:
            ok = False
            assert any(why in str(e) for why in ("laid out backward", "elements overlap",
                                                "gaps between"))
        assert ok == _elements_one_after_another(shape, strides, 4), (shape, strides)
        taken, refused = taken + ok, refused + (not ok)
    assert taken > 100 and refused > 100


@cuda.jit
def _window_sums(w, out):
    i = cuda.grid(1)
    if i < out.size:
        acc = 0.0
        for j in range(w.shape[1]):
            acc += w[i, j]
        out[i] = acc


def test_a_numba_kernel_takes_a_view_whose_elements_overlap():
    """numba passes a view with its strides: the windows are its own."""
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
    from numpy.lib.stride_tricks import sliding_window_view

    @gt.graph(backend="sim")
    def f(s, w, out):
        s.launch(_window_sums, 1, 32, w, out)
    p, out = np.arange(11.0), cuda.to_device(np.zeros(4))
    f(FakeCUDAArray(sliding_window_view(p, 8)), out)
    assert np.array_equal(out.copy_to_host(), [sum(range(i, i + 8)) for i in range(4)])

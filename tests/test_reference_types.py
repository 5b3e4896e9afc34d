"""A cupy kernel's @gt.reference stand-in gets its numbers as the kernel's C
parameter types (numpy scalars of them), as the GPU packs them, not the Python
values the launch was given."""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of

cp = pytest.importorskip("cupy")

SRC = ('extern "C" __global__ void scaled(const double* x, double* y, int n, float a, '
       'unsigned char flag, double b) {}')


def _kernel_and_seen():
    k = cp.RawKernel(SRC, "scaled")
    seen = []

    @gt.reference(k)
    def scaled_ref(grid, block, x, y, n, a, flag, b):
        seen.append((n, a, flag, b))
        y[:n] = x[:n] * a + b
    return k, seen


@pytest.mark.parametrize("n, a, flag", [(2, 0.1, 1), (2.0, 3, True), (np.int64(2), 0.5, 1.0)])
def test_the_reference_gets_each_number_as_its_parameters_c_type(n, a, flag):
    """Bug: it got 2.0 for ``int n`` (the GPU packs int 2; slicing with it failed) and
    a Python float or int for ``float a`` (the GPU computes with a float32)."""
    k, seen = _kernel_and_seen()

    @gt.graph(backend="sim")
    def f(s, x, y, n, a, flag):
        s.launch(k, 1, 32, x, y, n, a, flag, 1.0)
    y = cuda.to_device(np.zeros(4))
    f(cuda.to_device(np.arange(4.0)), y, n, a, flag)
    (got_n, got_a, got_flag, got_b), = seen
    assert type(got_n) is np.int32 and got_n == 2
    assert type(got_a) is np.float32 and got_a == np.float32(a)
    assert type(got_flag) is np.uint8 and got_flag == 1
    assert type(got_b) is np.float64 and got_b == 1.0
    assert y.copy_to_host().tolist() == [1.0, 1.0 + float(np.float32(a)), 0.0, 0.0]


def test_a_later_calls_number_reaches_the_reference_typed_too():
    k, seen = _kernel_and_seen()
    declared = gt.kernel(k, "in, out, in, in, in, in")

    @gt.graph(backend="sim")
    def f(s, x, y, n, a):
        s.launch(declared, 1, 32, x, y, n, a, 0, 0.0)
    x, y = cuda.to_device(np.arange(4.0)), cuda.to_device(np.zeros(4))
    f(x, y, 2, 1.0)
    f(x, y, 3.0, 2)                        # the same graph, new numbers
    assert [(type(n), n, type(a), a) for n, a, _, _ in seen] == \
        [(np.int32, 2, np.float32, 1.0), (np.int32, 3, np.float32, 2.0)]
    assert y.copy_to_host().tolist() == [0.0, 2.0, 4.0, 0.0]


def test_a_raw_modules_kernel_hands_its_reference_typed_numbers():
    mod = cp.RawModule(code=SRC)
    k = gt.kernel(mod, name="scaled")
    seen = []

    @gt.reference(k)
    def scaled_ref(grid, block, x, y, n, a, flag, b):
        seen.append((type(n), type(a)))
        y[:n] = x[:n] * a

    @gt.graph(backend="sim")
    def f(s, x, y):
        s.launch(k, 1, 32, x, y, 4.0, 2, 0, 0.0)
    y = cuda.to_device(np.zeros(4))
    f(cuda.to_device(np.arange(4.0)), y)
    assert seen == [(np.int32, np.float32)]
    assert y.copy_to_host().tolist() == [0.0, 2.0, 4.0, 6.0]


@cuda.jit
def _numba_scale(x, a, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i]


@pytest.mark.parametrize("declared", [False, True])
def test_a_reference_for_a_numba_kernel_is_refused_at_its_line(declared):
    """Bug: it was registered and never run (numba's simulator runs the kernel)."""
    k = gt.kernel(_numba_scale, "in, in, out") if declared else _numba_scale
    with pytest.raises(gt.ArgumentError) as e:
        @gt.reference(k)                                       # numba reference
        def never(grid, block, x, a, out):
            out[...] = -1
    assert e.value.source[1] == line_of(__file__, "numba reference")
    assert "_numba_scale is a numba kernel, which the simulator runs by itself" \
        in str(e.value)
    assert "drop the @gt.reference" in str(e.value)

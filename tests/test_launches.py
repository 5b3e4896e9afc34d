"""Kernel launches the eager libraries accept: *args kernels, numpy sizes, tuples."""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace.scalar import Scalar
from helpers import FakeDeviceArray as A, line_of

# launches recorded by the compiled path (_speedups.c) and by pure Python
pytestmark = pytest.mark.usefixtures("both_launch_paths")


@cuda.jit
def add_all(out, *xs):
    i = cuda.grid(1)
    if i < out.size:
        for x in xs:
            out[i] += x[i]


@cuda.jit
def weighted(out, *terms):          # (array, weight) pairs
    i = cuda.grid(1)
    if i < out.size:
        out[i] = terms[0][i] * terms[1] + terms[2][i] * terms[3]


def dev(values):
    return cuda.to_device(np.asarray(values, dtype=np.float64))


def test_varargs_kernel_takes_any_number_of_extra_arguments():
    @gt.graph(backend="sim")
    def f(s, out, xs):
        add_all[1, 8, s](out, *xs)
    for n in (0, 1, 3):
        out, xs = dev(np.zeros(8)), [dev(np.arange(8) * (k + 1)) for k in range(n)]
        f(out, xs)
        assert out.copy_to_host().tolist() == [i * n * (n + 1) / 2 for i in range(8)]


@cuda.jit
def clear_all(n, *xs):
    i = cuda.grid(1)
    for x in xs:
        if i < n:
            x[i] = 0


def test_varargs_elements_get_the_intent_inferred_for_star_args():
    @gt.graph
    def f(s, out, x, y):
        s.launch(add_all, 1, 8, out, x, y)
        s.launch(clear_all, 1, 8, 8, x, y)
        s.launch(gt.kernel(add_all, "inout, inout, in"), 1, 8, out, x, y)
    g = f.trace(A(8), A(8), A(8))
    assert [m for _, m in g.nodes[0].accesses] == ["rw", "r", "r"]
    assert [m for _, m in g.nodes[1].accesses] == ["w", "w"]
    assert [m for _, m in g.nodes[2].accesses] == ["rw", "rw", "r"]
    assert "add_all[1, 8](out, x, y)" in str(g)


def test_varargs_of_mixed_types_on_the_simulator():
    @gt.graph(backend="sim")
    def f(s, out, a, x, b, y):
        weighted[1, 8, s](out, x, a, y, b)
    out = dev(np.zeros(8))
    f(out, 2.0, dev(np.ones(8)), 3.0, dev(np.arange(8)))
    assert out.copy_to_host().tolist() == [2.0 + 3.0 * i for i in range(8)]


def test_declared_intents_of_a_varargs_kernel_are_checked_on_the_simulator():
    @gt.graph(backend="sim")
    def f(s, out, x):
        s.launch(gt.kernel(add_all, "in, in"), 1, 8, out, x)
    with pytest.raises(gt.SimulationError, match="kernel add_all wrote to out"):
        f(dev(np.zeros(8)), dev(np.ones(8)))
    with pytest.raises(gt.ArgumentError, match=r"0 intents for kernel add_all, which has 1 "
                                                r"parameters \(out\) and \*xs"):
        gt.kernel(add_all, [])


@cuda.jit
def fill(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v


@pytest.mark.parametrize("grid, block", [
    (np.int64(2), np.int32(4)), ((np.int64(2),), (np.uint8(4), 1)),
    ((np.int32(2), np.int64(1)), np.int16(4)), ([np.intp(2)], [4, np.int64(1), 1])])
def test_numpy_integers_size_grids_and_blocks(grid, block):
    @gt.graph(backend="sim", static=("g", "b"))
    def f(s, out, g, b):
        fill[g, b, s](out, 5.0)
        s.launch(fill, g, b, out[:4], 6.0, shared_mem=np.int64(16))
    out = dev(np.zeros(8))
    f(out, grid, block)
    assert out.copy_to_host().tolist() == [6.0] * 4 + [5.0] * 4
    a = f.trace(out, grid, block).nodes[0].attrs
    assert a["grid"] == (2, 1, 1) and a["block"] == (4, 1, 1)
    assert all(type(d) is int for d in a["grid"] + a["block"])


@cuda.jit
def poly(out, coeffs, parts):       # a tuple of numbers, a tuple of arrays
    i = cuda.grid(1)
    if i < out.size:
        out[i] = coeffs[0] + coeffs[1] * parts[0][i] + parts[1][i]


def test_tuples_of_numbers_and_of_arrays_are_valid_numba_arguments():
    @gt.graph(backend="sim")
    def f(s, out, x, y):
        poly[1, 8, s](out, (1.0, 2.0), (x, y))
    out = dev(np.zeros(8))
    f(out, dev(np.arange(8)), dev(np.ones(8)))
    assert out.copy_to_host().tolist() == [2.0 + 2.0 * i for i in range(8)]


# --- numba's other launch spellings and compile options -------------------------------
def test_forall_records_a_launch_of_one_thread_per_task():
    @gt.graph(backend="sim")
    def f(s, out, v):
        fill.forall(out.size, stream=s)(out[:6], v)       # numba's simulator: 1 per block
        fill.forall(3, 2, s)(out[6:], v)             # 3 tasks, 2 per block
        fill.forall(0, stream=s)(out, v)                  # no tasks: nothing to launch
    out = dev(np.zeros(9))
    f(out, 4.0)
    assert out.copy_to_host().tolist() == [4.0] * 9
    g = f.trace(out, 4.0)
    assert [(n.attrs["grid"][0], n.attrs["block"][0]) for n in g.nodes] == [(9, 1), (2, 2)]


def test_forall_task_counts_must_be_fixed_ints():
    @gt.graph
    def f(s, out, n):
        fill.forall(n, stream=s)(out, 1.0)                 # dynamic
    with pytest.raises(gt.DynamicScalarError) as e:
        f.trace(A(8, "float64"), 8)
    assert e.value.source[1] == line_of(__file__, "dynamic")
    with pytest.raises(gt.ArgumentError, match="forall's ntasks must be a non-negative int"):
        gt.graph(lambda s, out: fill.forall(-1, stream=s)(out, 1.0)).trace(A(8, "float64"))


def test_a_kernel_declared_with_gt_kernel_launches_by_forall_with_its_intents():
    """numba's forall on gt.kernel's wrapper was a bare AttributeError."""
    declared = gt.kernel(fill, "inout, in")   # numba finds out written alone

    @gt.graph(backend="sim")
    def f(s, out, v):
        declared.forall(6, stream=s)(out[:6], v)
        declared.forall(3, 2, s)(out[6:], v)
    out = dev(np.zeros(9))
    f(out, 4.0)
    assert out.copy_to_host().tolist() == [4.0] * 9
    g = f.trace(out, 4.0)
    assert [(n.attrs["grid"][0], n.attrs["block"][0]) for n in g.nodes] == [(6, 1), (2, 2)]
    assert [[m for _, m in n.accesses] for n in g.nodes] == [["rw"], ["rw"]]

    @gt.graph
    def real(s, out):
        declared.forall(8, stream=0)(out, 1.0)   # no proxy
    with pytest.raises(gt.ArgumentError, match="k.forall.n, stream=s") as e:
        real.trace(A(8, "float64"))
    assert e.value.source[1] == line_of(__file__, "no proxy")


@cuda.jit("void(float32[:], float32, float32[:])")
def typed_axpy(x, a, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + out[i]


@cuda.jit(fastmath=True)
def fast_square(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * x[i]


@cuda.jit(opt=False)               # lineinfo=True too on the GPU (not the simulator)
def traced_lines(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] + 1


def test_kernels_with_signatures_and_compile_options_trace_and_run():
    @gt.graph(backend="sim")
    def f(s, x, a, out, sq, inc):
        typed_axpy[1, 8, s](x, a, out)
        fast_square[1, 8, s](x, sq)
        s.launch(traced_lines, 1, 8, x, inc)
    x = cuda.to_device(np.arange(8, dtype=np.float32))
    out, sq, inc = (cuda.to_device(np.ones(8, np.float32)) for _ in range(3))
    f(x, 2.0, out, sq, inc)
    assert out.copy_to_host().tolist() == [2.0 * i + 1 for i in range(8)]
    assert sq.copy_to_host().tolist() == [float(i * i) for i in range(8)]
    assert inc.copy_to_host().tolist() == [i + 1.0 for i in range(8)]
    g = f.trace(x, 2.0, out, sq, inc)
    assert [[m for _, m in n.accesses] for n in g.nodes] == [["r", "rw"], ["r", "w"],
                                                              ["r", "w"]]


class CUDADispatcher:
    """What graphtrace reads of a numba kernel compiled for the GPU, with debug=True
    (numba's simulator, which these tests run on, keeps it as _debug)."""

    def __init__(self, py_func):
        self.py_func, self.targetoptions = py_func, {"debug": True, "opt": False}


def test_a_debug_kernel_warns_once_at_its_launch_line():
    debug_fill = CUDADispatcher(fill.py_func)

    @gt.graph
    def f(s, out):
        s.launch(debug_fill, 1, 8, out, 1.0)                # debugkernel
        s.launch(debug_fill, 1, 8, out, 2.0)
    with pytest.warns(UserWarning, match="compiled with debug=True") as record:
        g = f.trace(A(8, "float64"))
    assert len(record) == 1
    assert (record[0].filename, record[0].lineno) == (__file__, line_of(__file__, "debugkernel"))
    assert "in the graph they pass unseen" in str(record[0].message)
    assert len(g.nodes) == 2


def test_a_debug_kernel_warns_on_the_simulator_too():
    """numba's simulator keeps debug=True as the kernel's _debug, not in targetoptions:
    a program tested there did not warn, as it would on a GPU."""
    debug_fill = cuda.jit(debug=True, opt=False)(fill.py_func)   # warns once: a new one

    @gt.graph(backend="sim")
    def f(s, out):
        debug_fill[1, 8, s](out, 1.0)                       # simdebug
    out = dev(np.zeros(8))
    with pytest.warns(UserWarning, match="compiled with debug=True") as record:
        f(out)
    assert [(r.filename, r.lineno) for r in record] == [(__file__, line_of(__file__, "simdebug"))]
    assert out.copy_to_host().tolist() == [1.0] * 8


# --- cupy's templated kernels of a RawModule ----------------------------------------
TEMPLATED = r'''
template<typename T>
__global__ void axpy_t(const T* x, T a, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}
'''


class FakeModuleFunction:
    """What cupy's RawModule.get_function("axpy_t<double>") returns, as graphtrace reads
    it: a kernel named by its compiled symbol, whose module maps the expression to it."""

    class kernel:
        class module:
            mapping = {"axpy_t<float>": "_Z6axpy_tIfEvPKT_S0_PS0_i",
                       "axpy_t<double>": "_Z6axpy_tIdEvPKT_S0_PS0_i"}

    code, name_expressions = TEMPLATED, ("axpy_t<float>", "axpy_t<double>")

    def __init__(self, expression):
        self.name = self.kernel.module.mapping[expression]


@pytest.mark.parametrize("expression, ctype", [("axpy_t<float>", np.float32),
                                                ("axpy_t<double>", np.float64)])
def test_templated_kernels_of_a_module_by_their_name_expressions(expression, ctype):
    from graphtrace.ops._cupy import CupyAdapter, source_name
    k = FakeModuleFunction(expression)
    assert source_name(k) == expression
    ad = CupyAdapter(k)
    assert (ad.name, ad.params) == (expression, ["x", "a", "y", "n"])

    @gt.graph
    def f(s, x, y, a):
        s.launch(ad, 1, 32, x, a, y, 32)
    g = f.trace(A(32, ctype), A(32, ctype), 2.0)
    assert str(g).splitlines()[1].split("  #")[0] == \
        f"  %0 = kernel {expression}[1, 32](x, a, y, 32)  in(x)  inout(y)"
    packed = ad.pack(None, g.nodes[0].args,   # the number, as graphtrace's code reads it
                     lambda v: v._value if isinstance(v, Scalar) else v)
    assert type(packed[1]) is ctype and type(packed[3]) is np.int32


@pytest.mark.parametrize("seen, bad", [(4, 4.0), (4, True), ((4, 2), (4.0, 2)),
                                       ((1, 4), (True, 4))])
def test_a_configuration_equal_to_one_seen_is_checked_all_the_same(seen, bad):
    """Launches with the same configuration share their checks; a float or a bool
    that compares equal to an int seen before is refused as ever."""
    x = A(64)

    @gt.graph
    def f(s):
        s.launch(fill, seen, 8, x, 1.0)
        s.launch(fill, bad, 8, x, 1.0)

    with pytest.raises(gt.ArgumentError, match="grid must be a positive int|grid .* holds a "
                       "float: launch sizes are whole numbers"):
        f.trace()


@cuda.jit
def _copy_k(src, dst):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = src[i]


def test_a_declared_kernel_takes_numbas_launch_syntax():
    declared = gt.kernel(_copy_k, "in, out")

    @gt.graph(backend="sim")
    def f(s, a, b, c):
        declared[1, 8, s](a, b)                 # declared launch
        declared[1, 8, s, 0](b, c)
    a, b, c = cuda.to_device(np.arange(8.0)), cuda.device_array(8), cuda.device_array(8)
    f(a, b, c)
    assert c.copy_to_host().tolist() == list(range(8))
    g = f.trace(a, b, c)
    assert g.nodes[0].source[1] == line_of(__file__, "declared launch")
    assert [m for _, m in g.nodes[0].accesses] == ["r", "w"] and g.nodes[0] in g.nodes[1].deps
    with pytest.raises(gt.ArgumentError, match="proxy stream"):
        declared[1, 8](a, b)

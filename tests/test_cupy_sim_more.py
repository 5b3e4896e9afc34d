"""cupy kernels on the CPU simulator: a RawModule's kernels by name, and what cupy's
own spellings inside a trace or a captured region say where there is no GPU."""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace import _driver
from helpers import line_of

cp = pytest.importorskip("cupy")

MODULE_SRC = r'''
template<typename T> __global__ void twice(const T* x, T* y, int n) {
    int i = threadIdx.x; if (i < n) y[i] = 2 * x[i];
}
extern "C" __global__ void thrice(const double* x, double* y, int n) {
    int i = threadIdx.x; if (i < n) y[i] = 3 * x[i];
}
'''


def test_a_raw_modules_kernel_named_to_gt_kernel_runs_its_reference_on_the_simulator():
    """gt.kernel(module, name=...) compiled the kernel at once (module.get_function),
    which without a GPU raised cupy's CUDARuntimeError from inside graphtrace."""
    mod = cp.RawModule(code=MODULE_SRC, name_expressions=["twice<double>"])
    thrice = gt.kernel(mod, name="thrice")
    twice = gt.kernel(mod, name="twice<double>")

    @gt.reference(thrice)
    def thrice_ref(grid, block, x, y, n):
        y[:n] = 3 * x[:n]

    @gt.reference(twice)
    def twice_ref(grid, block, x, y, n):
        y[:n] = 2 * x[:n]

    @gt.graph(backend="sim")
    def f(s, x, y, z):
        s.launch(thrice, 1, 32, x, y, 4)
        s.launch(gt.kernel(mod, name="twice<double>"), 1, 32, y, z, 4)   # made again
    x, y, z = (cuda.to_device(v) for v in (np.arange(4.0), np.zeros(4), np.zeros(4)))
    f(x, y, z)
    assert z.copy_to_host().tolist() == [0.0, 6.0, 12.0, 18.0]
    assert [[m for _, m in n.accesses] for n in f.trace(x, y, z).nodes] == \
        [["r", "rw"], ["r", "rw"]]


def test_a_raw_modules_template_not_among_its_name_expressions_is_refused():
    mod = cp.RawModule(code=MODULE_SRC, name_expressions=["twice<double>"])
    with pytest.raises(gt.ArgumentError, match=r"'twice<float>' is not one of the "
                       r"RawModule's name_expressions \('twice<double>'\)") as e:
        gt.kernel(mod, name="twice<float>")                       # not compiled
    assert e.value.source[1] == line_of(__file__, "not compiled")


def test_a_name_the_raw_modules_source_lacks_is_an_argument_error():
    mod = cp.RawModule(code=MODULE_SRC)
    with pytest.raises(gt.ArgumentError, match="no __global__ function 'four_times'"):
        gt.kernel(mod, name="four_times")


def test_a_raw_module_loaded_from_a_file_says_its_source_is_needed(tmp_path):
    mod = cp.RawModule(path=str(tmp_path / "k.cubin"))
    with pytest.raises(gt.ArgumentError, match="no source code .* build the module from "
                       "code="):
        gt.kernel(mod, name="k")


# --- cupy's own spellings where there is no GPU ---------------------------------------
no_gpu = pytest.mark.skipif(_driver.available(), reason="cupy runs where there is a GPU")
KSRC = 'extern "C" __global__ void copy_k(const double* x, double* y) {}'


@no_gpu
@pytest.mark.parametrize("with_stream", [True, False])
def test_a_cupy_kernel_called_in_cupys_spelling_is_the_stream_error_a_gpu_gives(with_stream):
    """On a GPU cupy reads the proxy stream's pointer, a StreamError naming s.launch and
    s.captured; without one cupy raised its CUDARuntimeError before it got there."""
    k = cp.RawKernel(KSRC, "copy_k")

    @gt.reference(k)
    def copy_ref(grid, block, x, y):
        y[...] = x

    @gt.graph(backend="sim")
    def f(s, x, y):
        if with_stream:
            k((1,), (32,), (x, y), stream=s)                   # cupy spelling, stream
        else:
            k((1,), (32,), (x, y))                             # cupy spelling
    with pytest.raises(gt.StreamError) as e:
        f(cuda.to_device(np.arange(4.0)), cuda.to_device(np.zeros(4)))
    assert e.value.source[1] == line_of(
        __file__, "cupy spelling, stream" if with_stream else "cupy spelling")
    assert "a cupy kernel called in cupy's own spelling inside a trace" in str(e.value)
    assert "s.launch(kernel, grid, block, *args)" in str(e.value)
    assert "s.captured(fn, *args)" in str(e.value)
    assert "CUDARuntimeError" not in str(e.value)


@no_gpu
def test_other_cupy_calls_in_a_trace_say_they_would_run_at_once_and_need_a_gpu():
    @gt.graph(backend="sim")
    def f(s, x):
        cp.ones(3)                                             # eager cupy
    with pytest.raises(gt.HostSyncError, match=r"cupy code inside a trace "
                       r"\(cupy\._creation\.basic\.ones\) runs at once") as e:
        f(cuda.to_device(np.zeros(4)))
    assert e.value.source[1] == line_of(__file__, "eager cupy")


def _tanh_region(x, y):
    y[...] = cp.tanh(x)                                        # cupy in region


def _elementwise_region(x, y):
    cp.ElementwiseKernel("float64 x", "float64 y", "y = x", "ew_copy")(x, y)   # ew


@no_gpu
@pytest.mark.parametrize("region, marker", [(_tanh_region, "cupy in region"),
                                            (_elementwise_region, "ew")])
def test_a_region_calling_cupy_on_the_simulator_says_cupy_needs_a_gpu_there(region, marker):
    @gt.graph(backend="sim")
    def f(s, x, y):
        s.captured(region, x, y, reads=[x], writes=[y])
    with pytest.raises(gt.SimulationError) as e:
        f(cuda.to_device(np.arange(4.0)), cuda.to_device(np.zeros(4)))
    text = str(e.value)
    assert f"failed on the simulator at test_cupy_sim_more.py:{line_of(__file__, marker)}: " \
        "cupy's library call there (cupy." in text
    assert "needs a GPU, and on the simulator, where there is none, the region runs on " \
        "the CPU with numpy arrays" in text
    assert "as examples/train_step.py's region does" in text
    assert "CUDARuntimeError" not in text and "InsufficientDriver" not in text


@pytest.mark.parametrize("pinned", [True, False])
def test_host_memory_given_to_a_cupy_kernel_is_refused_naming_the_cupy_launch(pinned):
    """Bug: the refusal spoke of an eager numba launch's implicit copy."""
    k = cp.RawKernel(KSRC, "copy_k")

    @gt.reference(k)
    def copy_ref(grid, block, x, y):
        y[...] = x

    @gt.graph(backend="sim")
    def f(s, x, y):
        s.launch(k, 1, 32, x, y)                               # host into cupy
    h = gt.pinned_empty(4) if pinned else np.zeros(4)
    with pytest.raises(gt.ArgumentError) as e:
        f(h, cuda.to_device(np.zeros(4)))
    assert e.value.source[1] == line_of(__file__, "host into cupy")
    memory = "pinned host memory" if pinned else "host memory (a numpy array)"
    assert f"argument x of cupy kernel copy_k is {memory}: a kernel launched in a graph " \
        "takes device arrays" in str(e.value)
    assert "s.copy(device_array, x)" in str(e.value)
    assert "numba" not in str(e.value)

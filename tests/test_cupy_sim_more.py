"""cupy kernels on the CPU simulator: a RawModule's kernels by name, and what cupy's
own spellings inside a trace or a captured region say where there is no GPU."""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
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

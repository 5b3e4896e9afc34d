"""A cupy kernel whose C parameters graphtrace cannot read off its source (named by a
token-pasting macro, a function-pointer parameter) is a KernelArgumentError at the
launch line saying what to write, not a bare ValueError from the signature reader;
gt.kernel(k, intents) takes it, though its launches still need the C types."""
import pytest

import graphtrace as gt
from helpers import FakeDeviceArray as A, line_of

cp = pytest.importorskip("cupy")

MACRO = r'''
#define DEFINE_TWICE(T) \
extern "C" __global__ void twice_##T(const T* x, T* y, int n) { \
    int i = threadIdx.x; if (i < n) y[i] = 2 * x[i]; }
DEFINE_TWICE(float)
DEFINE_TWICE(double)
'''
HOOK = r'''
extern "C" __global__ void twice(const double* x, double* y, int n, void (*hook)(double*)) {
    int i = threadIdx.x; if (i < n) y[i] = 2 * x[i]; }'''


def test_kernel_named_by_a_macro_is_refused_at_its_launch_line():
    k = cp.RawKernel(MACRO, "twice_double")

    @gt.graph
    def f(s, x, y):
        s.launch(k, 1, 32, x, y, 4)   # macro launch
    with pytest.raises(gt.KernelArgumentError, match="plain declaration") as e:
        f.trace(A(4, "float64"), A(4, "float64"))
    assert e.value.source == (__file__, line_of(__file__, "macro launch"))
    assert "twice_double" in str(e.value)


def test_declared_intents_are_taken_and_its_launch_says_what_packing_needs():
    kd = gt.kernel(cp.RawKernel(MACRO, "twice_double"), "in, out, in")
    assert kd.intents == ["r", "w", "r"]

    @gt.graph
    def f(s, x, y):
        kd[1, 32, s](x, y, 4)   # declared launch
    with pytest.raises(gt.KernelArgumentError, match="do not tell the C types") as e:
        f.trace(A(4, "float64"), A(4, "float64"))
    assert e.value.source == (__file__, line_of(__file__, "declared launch"))


def test_a_declaration_in_the_source_makes_it_work():
    k = cp.RawKernel(MACRO + 'extern "C" __global__ void twice_double(const double* x, '
                     'double* y, int n);', "twice_double")

    @gt.graph
    def f(s, x, y):
        s.launch(k, 1, 32, x, y, 4)
    assert "in(x)  inout(y)" in str(f.trace(A(4, "float64"), A(4, "float64")))


def test_function_pointer_parameter_says_to_take_a_void_pointer():
    kd = gt.kernel(cp.RawKernel(HOOK, "twice"), "in, out, in, in")

    @gt.graph
    def f(s, x, y):
        kd[1, 32, s](x, y, 4, 0)
    with pytest.raises(gt.KernelArgumentError, match=r"void \(\*hook\)\(double\*\).*void\*"):
        f.trace(A(4, "float64"), A(4, "float64"))

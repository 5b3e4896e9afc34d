"""A cupy kernel whose C parameters graphtrace cannot read off its source (named by a
token-pasting macro, a function-pointer parameter) is a KernelArgumentError at the
launch line saying what to write, not a bare ValueError from the signature reader;
gt.kernel(k, intents) takes it, though its launches still need the C types. A kernel
whose name is a macro's argument (DEFINE(k, float) {...}), variadic macros included, is
read as written; a macro given arguments it does not take is refused, not guessed at."""
import pytest

import graphtrace as gt
from graphtrace.ops._cupy import CupyAdapter, parse_signature
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


class FakeRawKernel:  # what graphtrace reads of a cupy RawKernel
    def __init__(self, code, name, options=()):
        self.code, self.name, self.options = code, name, options


MACRO_NAMED = [
    ('#define DEFINE_COPY(name, T) extern "C" __global__ void name(const T* x, T* y, int n)\n'
     'DEFINE_COPY(copy_f32, float) { int i = threadIdx.x; if (i < n) y[i] = x[i]; }\n'
     'DEFINE_COPY(k, double) { int i = threadIdx.x; if (i < n) y[i] = x[i]; }\n', "double"),
    ('#define KERNEL(n) extern "C" __global__ void n\n'
     'KERNEL(k)(const float* x, float* y, int n) {}', "float"),
    ('#define GLOBAL extern "C" __global__\n#define RO const\n'
     '#define DECL(name, Q) GLOBAL void name(Q float* x, float* y, int n)\nDECL(k, RO) {}',
     "float"),
]


@pytest.mark.parametrize("code, ctype", MACRO_NAMED, ids=["args", "name", "nested"])
def test_a_kernel_named_by_a_macros_argument_is_read(code, ctype):
    """Bug: a kernel declared by a macro that takes its name was refused as
    unreadable (as a name made by ``##`` is)."""
    ps = parse_signature(code, "k")
    assert [(p.name, p.const, ctype in p.ctype) for p in ps[:2]] == [
        ("x", True, True), ("y", False, True)]
    assert CupyAdapter(FakeRawKernel(code, "k")).intents == ["r", "rw", "r"]


def test_a_kernel_macro_defined_twice_makes_what_either_writes_writable():
    code = ('#if __CUDA_ARCH__ >= 800\n#define DECL(name) extern "C" __global__ void '
            'name(float* x, const float* y)\n#else\n#define DECL(name) extern "C" __global__ '
            'void name(const float* x, const float* y)\n#endif\nDECL(k) {}')
    assert CupyAdapter(FakeRawKernel(code, "k")).intents == ["rw", "r"]


def test_a_kernel_named_by_a_macros_argument_in_a_trace():
    k = cp.RawKernel(MACRO_NAMED[0][0], "k")

    @gt.graph
    def f(s, x, y):
        s.launch(k, 1, 32, x, y, 4)
    assert "in(x)  inout(y)" in str(f.trace(A(4, "float64"), A(4, "float64")))


VARIADIC = '#define KERNEL(name, ...) extern "C" __global__ void name(__VA_ARGS__)\n'
MACRO_VARIADIC = [
    VARIADIC + 'KERNEL(k, const float* x, float* y, int n) {}',
    '#define KERNEL(name, args...) extern "C" __global__ void name(args)\n'
    'KERNEL(k, const float* x, float* y, int n) {}',
    '#define KERNEL(name, ...) extern "C" __global__ void name(const float* x __VA_OPT__(,) '
    '__VA_ARGS__)\nKERNEL(k, float* y, int n) {}',
    '#define KERNEL(name, ...) extern "C" __global__ void name(const float* x, ##__VA_ARGS__)\n'
    'KERNEL(k, float* y, int n) {}',
    '#define PARAMS(T) const T* x, T* y, int n\n' + VARIADIC + 'KERNEL(k, PARAMS(float)) {}',
    VARIADIC + '#define F32(name, ...) KERNEL(name, const float* x, __VA_ARGS__)\n'
    'F32(k, float* y, int n) {}',
]


@pytest.mark.parametrize("code", MACRO_VARIADIC,
                         ids=["va_args", "gnu_named", "va_opt", "gnu_comma", "params_macro",
                              "nested_maker"])
def test_a_kernel_declared_by_a_variadic_macro_is_read(code):
    """Bug: the arguments a variadic macro's ``...`` takes were dropped, and
    ``__VA_ARGS__`` read as one parameter of no known type, read-only."""
    ps = parse_signature(code, "k")
    assert [(p.name, p.ctype, p.const) for p in ps] == [
        ("x", "const float*", True), ("y", "float*", False), ("n", "int", False)]
    assert CupyAdapter(FakeRawKernel(code, "k")).intents == ["r", "rw", "r"]


@pytest.mark.parametrize("body", ["(const float* x __VA_OPT__(,) __VA_ARGS__)",
                                  "(const float* x, ##__VA_ARGS__)"], ids=["va_opt", "gnu_comma"])
def test_a_variadic_macro_given_no_variable_arguments_drops_its_comma(body):
    code = f'#define KERNEL(name, ...) extern "C" __global__ void name{body}\nKERNEL(k) {{}}'
    assert [(p.name, p.const) for p in parse_signature(code, "k")] == [("x", True)]


def test_a_kernel_written_by_a_variadic_macro_in_a_trace():
    k = cp.RawKernel(VARIADIC + 'KERNEL(scale2, const double* x, double* y) {}\n'
                     'KERNEL(addone, double* y) { y[threadIdx.x] += 1; }', "scale2")
    k1 = cp.RawKernel(k.code, "addone")

    @gt.graph
    def f(s, x, y):
        s.launch(k, 1, 4, x, y)
        s.launch(k1, 1, 4, y)
    listing = str(f.trace(A(4, "float64"), A(4, "float64")))
    assert "in(x)  inout(y)" in listing and "addone[1, 4](y)  inout(y)" in listing


def test_a_macro_given_the_wrong_number_of_arguments_is_refused_at_the_launch_line():
    """Bug: the parameter without an argument stayed as its name, ``const T* x``."""
    k = cp.RawKernel('#define DEFINE(name, T) extern "C" __global__ void name(const T* x, '
                     'T* y)\nDEFINE(k) {}', "k")

    @gt.graph
    def f(s, x, y):
        s.launch(k, 1, 32, x, y)   # wrong count launch
    with pytest.raises(gt.KernelArgumentError, match=r"DEFINE\(k\) gives 1 argument where "
                       r"macro DEFINE takes 2 \(name, T\).*plain declaration") as e:
        f.trace(A(4, "float64"), A(4, "float64"))
    assert e.value.source == (__file__, line_of(__file__, "wrong count launch"))


def test_a_parameter_list_macro_given_the_wrong_number_of_arguments_is_refused():
    code = ('#define PARAMS(T) const T* x, T* y\n#define DECL(name) extern "C" __global__ '
            'void name\nDECL(k)(PARAMS(double, int)) {}')
    with pytest.raises(ValueError, match=r"PARAMS\(double, int\) gives 2 arguments"):
        parse_signature(code, "k")
    assert "PARAMS" in CupyAdapter(FakeRawKernel(code, "k")).unread


def test_va_opt_over_arguments_that_expand_to_nothing_is_refused():
    """C++ versions differ on whether ``__VA_OPT__`` holds there: no guess is made."""
    code = ('#define NOTHING\n#define KERNEL(name, ...) extern "C" __global__ void '
            'name(const float* x __VA_OPT__(,) __VA_ARGS__)\nKERNEL(k, NOTHING) {}')
    with pytest.raises(ValueError, match="expand to nothing"):
        parse_signature(code, "k")


@pytest.mark.parametrize("name", ["k<float>", "k<double>"])
def test_an_explicit_specialization_counts_among_the_kernels_the_name_may_mean(name):
    """The launch of ``k<float>`` runs the specialization, which writes ``x``; the
    primary template's ``const T*`` alone made it read-only (a dropped dependency).
    A specialization for another type counts too: more intents, never fewer."""
    code = ("template<typename T> __global__ void k(const T* x, T* y) { y[0] = x[0]; }\n"
            "template<> __global__ void k<float>(float* x, float* y) { x[0] = 1; y[0] = 2; }\n"
            "template<> __global__ void k < short > (const short* x, short* y) {}\n")
    assert [p.const for p in parse_signature(code, name)] == [False, False]
    assert [p.const for p in parse_signature(code.split("\n")[0], name)] == [True, False]

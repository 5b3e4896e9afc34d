"""Reading cupy kernels' C signatures, and packing arguments as exact C types."""
import numpy as np
import pytest

import graphtrace as gt
from graphtrace.ir import Scalar
from graphtrace.ops._cupy import CupyAdapter, parse_signature
from helpers import FakeDeviceArray as A, line_of

SRC = r'''
// a comment with __global__ void saxpy(int nope)
extern "C" __global__ void saxpy(const float* __restrict__ x, float * y,
                                 float a, int n, /* inline */ unsigned long long m,
                                 float const* z, double* const w, bool flag,
                                 __half h, size_t count, int8_t tiny)
{ int i = blockIdx.x; }
template<typename T, int N>
__global__ void tmpl(const T* in, T* out, T scale) {}
'''


class FakeRawKernel:  # what graphtrace reads of a cupy RawKernel
    def __init__(self, code, name, options=()):
        self.code, self.name, self.options = code, name, options


def test_parameters_names_pointers_and_constness():
    ps = parse_signature(SRC, "saxpy")
    assert [p.name for p in ps] == ["x", "y", "a", "n", "m", "z", "w", "flag", "h",
                                    "count", "tiny"]
    assert [p.pointer for p in ps][:7] == [True, True, False, False, False, True, True]
    assert [p.const for p in ps if p.pointer] == [True, False, True, False]
    assert [str(p.dtype) for p in ps if not p.pointer] == [
        "float32", "int32", "uint64", "bool", "float16", "uint64", "int8"]


def test_template_parameters_take_the_instantiated_types():
    ps = parse_signature(SRC, "tmpl<double, 4>")
    assert [p.name for p in ps] == ["in", "out", "scale"]
    assert ps[0].const and not ps[1].const
    assert ps[2].dtype == np.float64


def test_missing_kernel_is_an_error():
    with pytest.raises(ValueError, match="no __global__ function 'nothere'"):
        parse_signature(SRC, "nothere")


def test_intents_follow_const():
    ad = CupyAdapter(FakeRawKernel(SRC, "saxpy"))
    assert ad.intents[:2] == ["r", "rw"] and ad.intents[5:7] == ["r", "rw"]


def test_arguments_are_packed_as_their_exact_c_types():
    ad = CupyAdapter(FakeRawKernel(SRC, "saxpy"))
    x, y, z, w = A(4), A(4), A(4), A(4, "float64")
    from graphtrace.arrays import as_buffer
    args = [as_buffer(x), as_buffer(y), 2.5, 7, 2**40, as_buffer(z), as_buffer(w), True,
            0.5, 3, -3]
    packed = ad.pack(None, args, lambda v: v)
    assert packed[0] == x.ptr and packed[1] == y.ptr
    assert type(packed[2]) is np.float32 and packed[2] == 2.5
    assert type(packed[3]) is np.int32 and type(packed[4]) is np.uint64
    assert type(packed[7]) is np.bool_ and type(packed[8]) is np.float16
    assert type(packed[10]) is np.int8 and packed[10] == -3


def test_dynamic_scalars_are_packed_from_their_current_value():
    ad = CupyAdapter(FakeRawKernel(SRC, "tmpl<float, 2>"))
    from graphtrace.arrays import as_buffer
    s = Scalar("a", 1.0, 0)
    packed = ad.pack(None, [as_buffer(A(4)), as_buffer(A(4)), s],
                     lambda v: 3.0 if v is s else v)
    assert type(packed[2]) is np.float32 and packed[2] == 3.0


@pytest.mark.parametrize("args, message", [
    ((1.5,), "needs a device array"),
    ((None, None, "x"), "needs a number, not str"),
    ((None, None, 1.0, 2**40), "does not fit parameter int n"),
])
def test_unpackable_arguments_name_the_parameter(args, message):
    ad = CupyAdapter(FakeRawKernel(SRC, "saxpy"))
    with pytest.raises(gt.KernelArgumentError, match=message):
        ad.validate(_fill(list(args) + [None] * (11 - len(args))))


def _fill(args):
    """Complete an argument list with valid values after the ones under test."""
    from graphtrace.arrays import as_buffer
    good = [as_buffer(A(4)), as_buffer(A(4)), 1.0, 1, 1, as_buffer(A(4)),
            as_buffer(A(4, "float64")), True, 0.5, 1, 1]
    return [g if a is None else a for a, g in zip(args, good)]


def test_cupy_raw_kernel_in_a_trace():
    cp = pytest.importorskip("cupy")
    k = cp.RawKernel(SRC, "saxpy")

    @gt.graph
    def f(s, x, y, z, w, a):
        s.launch(k, 1, 32, x, y, a, 4, 5, z, w, False, 0.5, 4, 1)
    g = f.trace(A(4), A(4), A(4), A(4, "float64"), 2.0)
    assert "in(x, z)  inout(y, w)" in str(g)
    with pytest.raises(gt.KernelArgumentError, match="takes 11 arguments"):
        f2 = gt.graph(lambda s, x: s.launch(k, 1, 1, x))
        f2.trace(A(4))


# What eager cupy compiles: attributes, macros, typedefs and qualifiers around the name.
VARIANTS = [
    ('__global__ void __launch_bounds__(256) k(const float* x, float* y, int n) {}', "k"),
    ('extern "C" __global__ void __launch_bounds__(256, 2) k(const float* __restrict__ x, '
     'float* __restrict__ y, int n) {}', "k"),
    ('extern "C" __global__ __launch_bounds__(128) void k(const float* x, float* y, int n) {}',
     "k"),
    ('#define LB(n) __launch_bounds__(n)\n#define REAL float\n'
     'extern "C" __global__ void LB(256) k(const REAL* x, REAL* y, int n) {}', "k"),
    ('#define KERNEL extern "C" __global__ \\\n    void\n'
     'KERNEL k(const float* x, float* y, int n) {}', "k"),
    ('typedef float real_t;\nusing idx_t = int;\n'
     'extern "C" __global__ void k(const real_t* x, real_t* y, idx_t n) {}', "k"),
    ('template<typename T, int BLOCK = 256>\n__global__ void __launch_bounds__(BLOCK) '
     'k(const T* __restrict__ x, T* y, int n) {}', "k<float>"),
    ('namespace ns {\ntemplate<class T> __global__ void __launch_bounds__(256, 2)\n'
     'k(const T* __restrict__ const x, T* __align__(16) y, int n) {}\n}', "ns::k<float>"),
    ('extern "C" __global__ void k(const float*, float*, int);\n'
     'extern "C" __global__ void __attribute__((noinline)) k(const float* x, float* y, int n)'
     ' {}', "k"),
    ('extern "C" {\n__global__ void\n__launch_bounds__(1024)\n'
     'k(const float* x, float* y, [[maybe_unused]] int n) {}\n}', "k"),
]


@pytest.mark.parametrize("code, name", VARIANTS, ids=[f"v{i}" for i in range(len(VARIANTS))])
def test_signatures_with_attributes_macros_and_qualifiers(code, name):
    ps = parse_signature(code, name)
    assert [p.name for p in ps] == ["x", "y", "n"]
    assert [p.pointer for p in ps] == [True, True, False]
    assert [p.const for p in ps] == [True, False, False]
    assert ps[2].dtype == np.int32
    ad = CupyAdapter(FakeRawKernel(code, name))
    assert ad.intents == ["r", "rw", "r"]
    packed = ad.pack(None, _buffers(2) + [7], lambda v: v)
    assert type(packed[2]) is np.int32 and packed[2] == 7


def _buffers(n):
    from graphtrace.arrays import as_buffer
    return [as_buffer(A(4)) for _ in range(n)]


def test_unnamed_and_struct_parameters():
    code = ('struct __align__(16) P { float a; };\n'
            'extern "C" __global__ void k(const __grid_constant__ P p, float* out, int) {}')
    ps = parse_signature(code, "k")
    assert [p.name for p in ps] == ["p", "out", "#2"]
    assert ps[0].dtype is None and not ps[0].pointer and ps[2].dtype == np.int32


def test_template_default_arguments_apply():
    code = 'template<typename T = double> __global__ void k(T* y, T a) {}'
    assert [str(p.dtype) for p in parse_signature(code, "k<>")] == ["None", "float64"]


def test_raw_kernel_with_launch_bounds_in_a_trace():
    cp = pytest.importorskip("cupy")
    k = cp.RawKernel(VARIANTS[1][0], "k")

    @gt.graph
    def f(s, x, y):
        s.launch(k, 1, 256, x, y, 4)
    g = f.trace(A(4), A(4))
    assert "in(x)  inout(y)" in str(g)


def _pool():
    from graphtrace.arrays import as_buffer
    return [as_buffer(A(4)), as_buffer(A(4, "float64")), 1.5, 7, -3, 2**40, 2**70, True,
            None, "x", np.float32(2.0), np.float64(2.0), np.int32(5), np.uint64(9),
            np.int8(-1), np.bool_(False), np.float16(0.5), Scalar("s", 1.0, 0),
            Scalar("t", 2**40, 1)]


def test_validating_accepts_and_refuses_what_packing_does():
    """``validate`` checks the usual cases by type alone: it must agree with
    ``pack`` (raise the same error, or pass) on every kind of value in every
    parameter, the others valid."""
    ad = CupyAdapter(FakeRawKernel(SRC, "saxpy"))

    def outcome(fn, args):
        try:
            fn(args)
        except gt.KernelArgumentError as e:
            return str(e).split(": ", 1)[1]   # without the line that raised
        return None

    def pack(args):
        ad.pack(None, args, lambda v: v._value if isinstance(v, Scalar) else v)

    refused = 0
    with np.errstate(over="ignore"):   # 2**40 for a __half: inf, both ways
        for i in range(11):
            for value in _pool():
                args = _fill([None] * 11)
                args[i] = value
                assert outcome(ad.validate, args) == outcome(pack, args), (i, value)
                refused += outcome(pack, args) is not None
    assert 0 < refused < 11 * len(_pool())


def test_launches_skip_validation_only_for_types_it_passed_on_types_alone():
    """A launch whose recorded arguments have types ``validate`` passed by type
    alone skips it (views made at every launch); an int, checked against its
    parameter's range by value, is validated at every launch."""
    ad = CupyAdapter(FakeRawKernel(
        'extern "C" __global__ void k(const float* x, float* y, float a, int n) {}', "k"))
    seen = []
    check = ad.validate
    ad.validate = lambda args: (seen.append(tuple(map(type, args))), check(args))

    @gt.graph
    def f(s, x, y):
        for i in range(4):   # new views each launch: no launch is recorded again
            s.launch(ad, 1, 32, x[i:i + 2], y[i:i + 2], np.float32(2.0), np.int32(5))
        for i in range(3):
            s.launch(ad, 1, 32, x[i:i + 2], y[i:i + 2], 2.0, 5)
    f.trace(A(8), A(8))
    assert len(seen) == 1 + 3   # np.int32 by its type, once; a Python int each time

    @gt.graph
    def g(s, x, y):
        for i in range(2):
            s.launch(ad, 1, 32, x[i:i + 2], y[i:i + 2], 2.0, 5 if i == 0 else 2**40)
    with pytest.raises(gt.KernelArgumentError, match="does not fit parameter int n"):
        g.trace(A(8), A(8))


NAMESPACED = r"""
namespace fwd { __global__ void apply(const float* x, float* y, int n) {} }
namespace bwd { __global__ void apply(float* x, const float* y, int n) {} }
namespace a { namespace b { __global__ void apply(const float* x, const float* y, int n) {} } }
namespace c::d { template<class T> __global__ void apply(T* x, const T* y, T n) {} }
"""


def test_a_namespaced_name_means_the_kernel_of_that_namespace():
    """Bug: the namespace of ``bwd::apply`` was dropped and the first ``apply``
    of the source (``fwd::apply``, const the other way round) taken."""
    for name, intents in [("fwd::apply", ["r", "rw", "r"]), ("bwd::apply", ["rw", "r", "r"]),
                          ("::bwd::apply", ["rw", "r", "r"]), ("a::b::apply", ["r", "r", "r"]),
                          ("c::d::apply<float>", ["rw", "r", "r"])]:
        assert CupyAdapter(FakeRawKernel(NAMESPACED, name)).intents == intents, name
    assert parse_signature(NAMESPACED, "c::d::apply<float>")[2].dtype == np.float32


@pytest.mark.parametrize("name", ["apply", "e::apply"])
def test_a_name_that_does_not_tell_kernels_apart_makes_them_all_writable(name):
    """Bug: of several kernels the name may mean, the first was taken; a
    pointer is read-only only if it is in each of them."""
    assert CupyAdapter(FakeRawKernel(NAMESPACED, name)).intents == ["rw", "rw", "r"]


@pytest.mark.parametrize("code, name", [
    ('typedef float* fptr;\nextern "C" __global__ void k(const fptr y, const float* x) {}',
     "k"),
    ('using fptr = float*;\nextern "C" __global__ void k(const fptr y, const float* x) {}',
     "k"),
    ('typedef float* fptr; typedef fptr fptr2;\n'
     'extern "C" __global__ void k(const fptr2 y, const float* x) {}', "k"),
    ('template<class T> __global__ void k(const T y, const float* x) {}', "k<float*>"),
    ('typedef float* fptr;\n'
     'template<class T> __global__ void k(const T y, const float* x) {}', "k<fptr>"),
])
def test_const_on_an_alias_of_a_pointer_makes_the_pointer_const_not_the_data(code, name):
    """Bug: ``const fptr y`` (``typedef float* fptr``, a ``using``, or ``const T``
    of ``k<float*>``) was read by replacing the text, ``const float* y``: but it
    is ``float* const y``, whose floats the kernel may write."""
    ps = parse_signature(code, name)
    assert [p.pointer for p in ps] == [True, True]
    assert ps[0].ctype == "float* const"
    assert CupyAdapter(FakeRawKernel(code, name)).intents == ["rw", "r"]


def test_aliases_of_pointers_inside_other_declarators():
    """Bug: a pointer to ``const fptr`` (a ``float* const``) points to const
    data, and an alias of ``const float*`` keeps its data const; the last
    pointer's target decides (``cfptr* y`` may write the pointers)."""
    for alias, decl, intent in [
            ("typedef const float* cfptr;", "cfptr y", "r"),
            ("typedef const float* cfptr;", "const cfptr y", "r"),
            ("typedef const float* cfptr;", "cfptr* y", "rw"),
            ("typedef float* fptr;", "const fptr* y", "r"),
            ("typedef float* fptr;", "fptr const y", "rw"),
            ("typedef float real;", "const real* y", "r")]:
        code = f'{alias}\nextern "C" __global__ void k({decl}) {{}}'
        assert CupyAdapter(FakeRawKernel(code, "k")).intents == [intent], decl


def test_only_the_outermost_pointers_target_makes_a_parameter_read_only():
    """Bug: a ``const`` anywhere before the last ``*`` made the parameter
    read-only, though through ``const float** t`` a kernel writes ``t[i]``."""
    for decl, intent in [
            ("const float** t", "rw"), ("const float* const* t", "r"), ("float* const* t", "r"),
            ("const float* t", "r"), ("float const* t", "r"), ("float* const t", "rw"),
            ("const float* const t", "r"), ("float const* const* __restrict__ t", "r"),
            ("const float* t[]", "rw"), ("const float* const t[]", "r"),
            ("const float t[]", "r"), ("Box<const float*>* t", "rw")]:
        code = f'extern "C" __global__ void k({decl}) {{}}'
        assert CupyAdapter(FakeRawKernel(code, "k")).intents == [intent], decl


INPLACE = r"""
#ifdef INPLACE
#define XQ
#else
#define XQ const
#endif
extern "C" __global__ void k(XQ float* x, float* y, int n) {
#ifdef INPLACE
    x[threadIdx.x] *= 2.0f;
#endif
}"""


def test_ifdef_follows_the_define_options_of_the_kernel():
    """Bug: ``#ifdef``/``#else`` and the ``-D`` options were ignored: the last
    ``#define XQ`` of the text (``const``) won, though ``-DINPLACE`` leaves
    ``XQ`` empty and ``x`` written."""
    for options, intent in [((), "r"), (("-DINPLACE",), "rw"), (("-D", "INPLACE"), "rw"),
                            (("--define-macro=INPLACE",), "rw"),
                            (("-DINPLACE", "-UINPLACE"), "r")]:
        ad = CupyAdapter(FakeRawKernel(INPLACE, "k", options))
        assert ad.intents == [intent, "rw", "r"], options


def test_a_raw_modules_options_reach_the_signature():
    """Bug: a RawModule's ``options`` (``-DINPLACE``) did not reach the parser."""
    from graphtrace.ops._cupy import raw_module_function

    class FakeModule:
        code, options = INPLACE, ("-DINPLACE",)

        def get_function(self, name):
            return None

    assert raw_module_function(FakeModule(), "k").intents == ["rw", "rw", "r"]


def test_a_kernel_left_out_by_if_0_is_not_read():
    """Bug: the first definition of the kernel in the text won, even a stale
    const one inside ``#if 0``."""
    code = ('#if 0\nextern "C" __global__ void k(const float* x, float* y) {}\n#endif\n'
            'extern "C" __global__ void k(float* x, const float* y) { x[0] = y[0]; }\n')
    assert CupyAdapter(FakeRawKernel(code, "k")).intents == ["rw", "r"]
    kept = code.replace("#if 0", "#if 1").replace("{ x[0] = y[0]; }", ";")
    assert CupyAdapter(FakeRawKernel(kept, "k")).intents == ["r", "rw"]


def test_if_expressions_are_evaluated():
    """Bug: ``#if``/``#elif`` expressions were ignored, the last ``#define``
    of the text taken."""
    code = ('#if defined(MODE) && MODE == 2 && !defined PLAIN\n#define Q const\n'
            '#elif (MODE + 1) * 2 > 3\n#define Q\n#else\n#define Q const\n#endif\n'
            '#if MODE != 2\n#undef Q\n#define Q\n#endif\n'
            'extern "C" __global__ void k(Q float* x) {}')
    for options, intent in [(("-DMODE=2",), "r"), (("-DMODE=3",), "rw"),
                            (("-DMODE=0x2u",), "r"), (("-DMODE",), "rw"), ((), "rw"),
                            (("-DMODE=2", "-DPLAIN"), "rw")]:
        assert CupyAdapter(FakeRawKernel(code, "k", options)).intents == [intent], options


@pytest.mark.parametrize("code", [
    # a condition on the compiler's value: either definition may be compiled
    '#if __CUDA_ARCH__ >= 800\nextern "C" __global__ void k(const float* x, float* y) {}\n'
    '#else\nextern "C" __global__ void k(float* x, float* y) {}\n#endif\n',
    # a macro that a header may define: either definition of XQ
    '#include "config.h"\n#ifdef INPLACE\n#define XQ\n#else\n#define XQ const\n#endif\n'
    'extern "C" __global__ void k(XQ float* x, float* y) {}',
    # defined twice, the kernel between: which one it sees is not read here
    '#define XQ\nextern "C" __global__ void k(XQ float* x, float* y) {}\n'
    '#undef XQ\n#define XQ const\n',
    # an alias of several definitions
    '#if __CUDA_ARCH__ >= 800\ntypedef float* P;\n#else\ntypedef const float* P;\n#endif\n'
    'extern "C" __global__ void k(P x, float* y) {}',
])
def test_what_the_preprocessor_leaves_open_makes_a_pointer_writable(code):
    """Bug: of definitions the preprocessor may choose between, one was taken
    (the first kernel, the last macro or typedef); a pointer is read-only only
    if it is with each."""
    assert CupyAdapter(FakeRawKernel(code, "k")).intents == ["rw", "rw"]


def test_conditions_on_the_compilers_own_macros_are_evaluated():
    """Bug: ``#if``/``#else`` on the macros NVRTC defines were ignored (the
    last definition taken); the preprocessor's caution is only for branches
    that cannot be told apart and disagree."""
    code = ('#if defined(__CUDACC__) && !defined(__HIPCC__)\n#define Q const\n'
            '#else\n#define Q\n#endif\n'
            '#if __CUDA_ARCH__ >= 800\n#define R float\n#else\n#define R float\n#endif\n'
            'extern "C" __global__ void k(Q R* x, float* y) {}')
    assert CupyAdapter(FakeRawKernel(code, "k")).intents == ["r", "rw"]

# Comments, strings and characters, as the compiler tells them apart (the bodies
# of literals never count; a comment is a space; a spliced line is one line).
LITERALS = [
    # "/*" in a string and a real */ later: the comment ran over the kernel to it,
    # and the stale const kernel of the #if 0 was read instead
    'void note() { printf("writing out/*.bin\\n"); }\n'
    'extern "C" __global__ void k(float* x, const float* y) { x[0] = y[0]; }\n'
    '#if 0   /* previous version, kept for reference */\n'
    'extern "C" __global__ void k(const float* x, const float* y) {}\n#endif\n',
    # "//" in a string: the rest of its line was dropped, the kernel with it
    'const char* u = "http://x"; extern "C" __global__ void k(float* x, const float* y) {}',
    # a declaration, braces, quotes and commas inside literals
    'const char* s = "extern \\"C\\" __global__ void k(const float* x, const float* y);}";\n'
    "const char q = '\"'; const char* r = R\"x(/* \" // ( )\" )x\";\n"
    'extern "C" __global__ void k(float* x, const float* y, const char* m = "a,(b") {}',
    # a digit separator is no quote; a comment spanning lines inside a directive
    "constexpr int N = 1'024; extern \"C\" __global__ void k(float* x, const float* y) "
    "{ x[0] = 'a'; }",
    '#define Q /* the data\n   is only read */ const\n'
    'extern "C" __global__ void k(float* x, Q float* y) {}',
]


@pytest.mark.parametrize("code", LITERALS, ids=[f"l{i}" for i in range(len(LITERALS))])
def test_comments_are_told_from_string_and_character_literals(code):
    """Bug: comments were removed before literals were recognised: a ``/*``
    or ``//`` in a string hid the kernel (refused) or took a stale const one."""
    assert CupyAdapter(FakeRawKernel(code, "k")).intents[:2] == ["rw", "r"]


@pytest.mark.parametrize("code", ["a \\\nb /* c\nd */ e\nf", "s = R\"x(\n)\" )x\"; t\nu",
                                  "c = '\\\\\n}\\", 'x = "a\\\\\n/* \n */'])
def test_read_source_keeps_its_lines(code):
    """Lines joined into one (spliced, a comment or raw string over several)
    leave empty lines after them; an unclosed literal ends at its line."""
    from graphtrace.ops._cpp import plain_source
    assert plain_source(code).count("\n") == code.count("\n")


@pytest.mark.parametrize("condition, kept", [
    ("-1 < 0u", "no"), ("-1 < 0", "yes"), ("0u - 1 > 0", "yes"), ("-1 > 0u", "yes"),
    ("~0u == 18446744073709551615u", "yes"), ("-1 / 2 == 0 && -7 % 3 == -1", "yes"),
    ("(0u - 2) / 2 == 9223372036854775807", "yes"), ("0xFFFFFFFFFFFFFFFF > 0", "yes"),
    ("-1 >> 1 == -1 && -1u >> 63 == 1", "yes"),
    ("1 << 63 != 0", "yes no"), ("9223372036854775807 + 1 > 0", "yes no"),
])
def test_if_arithmetic_with_an_unsigned_operand_is_unsigned(condition, kept):
    """Bug: ``#if -1 < 0u`` held (computed signed); C converts -1 to unsigned.
    What C leaves undefined (signed overflow) or is not read here keeps both."""
    from graphtrace.ops._cpp import preprocess
    code = f"#if {condition}\nyes\n#else\nno\n#endif"
    assert " ".join(preprocess(code)[1].split()) == kept


def test_a_view_with_gaps_passed_as_a_bare_address_is_refused_unless_opaque(monkeypatch):
    """A cupy kernel gets an array's address alone: through a 2-D block of a larger
    array it may touch the bytes between the rows, which no access records."""
    from graphtrace import trace
    monkeypatch.setattr(trace, "_MEMO_MISSES", 1)   # soon a kernel no longer remembered
    ad = CupyAdapter(FakeRawKernel(
        'extern "C" __global__ void k(float* p, int ld, int n) {}', "k"))
    base = A(64)
    ptr = base.ptr

    def block(i):   # a 4x4 block of an 8x8 array
        return A((4, 4), ptr=ptr + 4 * i, strides=(32, 4))

    def rows(i):    # two whole rows: no gaps
        return A(16, ptr=ptr + 32 * (i % 6))

    @gt.graph(static=("gappy", "opaque"))
    def f(s, a, gappy, opaque):
        for i in range(300):   # new views each launch, the kernel no longer remembered
            s.launch(ad, 1, 32, rows(i), 8, 16)
        if opaque:
            s.launch(ad, 1, 32, block(3) if gappy else rows(1), 8, 16, opaque=True)
        else:
            s.launch(ad, 1, 32, block(3) if gappy else rows(1), 8, 16)   # gappy
    f.trace(base, False, False)
    f.trace(base, True, True)

    @gt.graph
    def windows(s, a):   # rows that touch cover their range: no gaps
        s.launch(ad, 1, 32, A((2, 8), ptr=ptr, strides=(32, 4)), 8, 16)
        s.launch(ad, 1, 32, A((4, 1), ptr=ptr, strides=(4, 4)), 8, 16)
    assert len(windows.trace(base).nodes) == 2

    @gt.graph
    def overlapping(s, a):   # rows that overlap: no gaps, but 12 floats in 24 bytes
        s.launch(ad, 1, 32, A((3, 4), ptr=ptr, strides=(4, 4)), 8, 16)
    with pytest.raises(gt.KernelArgumentError, match="view whose elements overlap"):
        overlapping.trace(base)
    with pytest.raises(gt.KernelArgumentError, match="view with gaps between its elements") as e:
        f.trace(base, True, False)
    assert e.value.source[1] == line_of(__file__, "gappy")
    assert "opaque=True" in str(e.value)


def test_a_view_laid_out_backward_or_repeating_passed_as_a_bare_address_is_refused():
    """A cupy kernel gets the address alone and reads forward from it: through
    x[::-1] (whose address is its last element's) or a broadcast (a zero stride)
    it touches bytes the view does not have, which no access records."""
    ad = CupyAdapter(FakeRawKernel(
        'extern "C" __global__ void k(const float* x, float* y, int n) {}', "k"))
    base = A(64)
    ptr = base.ptr
    forward, backward = A(8, ptr=ptr), A(8, ptr=ptr + 28, strides=(-4,))
    repeating, one = A(8, ptr=ptr, strides=(0,)), A(1, ptr=ptr, strides=(-4,))

    @gt.graph(static=("which", "opaque"))
    def f(s, a, which, opaque):
        y = {"backward": backward, "repeating": repeating, "one": one}[which]
        s.launch(ad, 1, 32, forward, y, 8, opaque=opaque)                  # odd view
    for which in ("backward", "repeating"):
        with pytest.raises(gt.KernelArgumentError, match="laid out backward or repeating") as e:
            f.trace(base, which, False)
        assert e.value.source[1] == line_of(__file__, "odd view")
        assert len(f.trace(base, which, True).nodes) == 1   # opaque: ordered with everything
    assert len(f.trace(base, "one", False).nodes) == 1   # one element: any stride


CUT = r'''extern "C" __global__ void cut(const float* x, float* y, int n, bool flag, float a) {}'''


@pytest.mark.parametrize("i, value, message", [
    (2, 2.5, "does not fit parameter int n of cupy kernel cut, which takes whole numbers"),
    (2, np.float32(2.5), "pass an int"),
    (2, -0.5, "does not fit parameter int n"),
    (2, np.float64("nan"), "does not fit parameter int n"),
    (4, np.complex64(1 + 2j), "is complex, and parameter float a of cupy kernel cut is real"),
    (4, np.complex128(1 + 0j), "pass a real number"),
])
def test_a_number_the_c_conversion_would_change_is_refused(i, value, message):
    """int n <- 2.5 was packed as 2, and float a <- np.complex64(1+2j) as 1.0."""
    ad = CupyAdapter(FakeRawKernel(CUT, "cut"))
    args = _cut_args()
    args[i] = value
    with pytest.raises(gt.KernelArgumentError, match=message):
        ad.validate(args)
    with pytest.raises(gt.KernelArgumentError, match=message):
        ad.pack(None, args, lambda v: v)


def _cut_args():
    from graphtrace.arrays import as_buffer
    return [as_buffer(A(4)), as_buffer(A(4)), 1, True, 1.0]


@pytest.mark.parametrize("value", [0.5, -0.5, 1e-50, np.float32(0.25), 2])
def test_a_bool_parameter_takes_any_nonzero_number_as_true(value):
    """As C converts it: 0.5 was packed as False (bool(int(0.5)))."""
    ad = CupyAdapter(FakeRawKernel(CUT, "cut"))
    args = _cut_args()
    args[3] = value
    ad.validate(args)
    assert ad.pack(None, args, lambda v: v)[3] == np.True_
    args[3] = 0.0
    assert ad.pack(None, args, lambda v: v)[3] == np.False_


def test_a_later_calls_number_the_c_conversion_would_change_is_refused_before_it_runs():
    """At the launch's line, at the trace and when a later call rebinds it (the
    simulator's stand-in got 2.5 unconverted, the GPU 2)."""
    from numba import cuda
    ad = CupyAdapter(FakeRawKernel(CUT, "cut"))
    runs = []

    @gt.reference(ad)
    def _cut(grid, block, x, y, n, flag, a):
        runs.append(n)

    @gt.graph(backend="sim")
    def f(s, x, y, n):
        s.launch(ad, 1, 32, x, y, n, True, 1.0)   # cut-launch
    x, y = cuda.to_device(np.zeros(4, np.float32)), cuda.to_device(np.zeros(4, np.float32))
    where = f"test_cupy_signature.py:{line_of(__file__, 'cut-launch')}:"
    with pytest.raises(gt.KernelArgumentError, match="which takes whole numbers") as e:
        f(x, y, 2.5)
    assert str(e.value).startswith(where)
    f(x, y, 3.0)
    with pytest.raises(gt.KernelArgumentError, match="which takes whole numbers") as e:
        f(x, y, 2.5)
    assert str(e.value).startswith(where) and runs == [3.0]

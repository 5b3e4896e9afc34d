"""Which __global__ function of a cupy kernel's source its name means: an extern "C"
function's symbol is its plain name whatever namespace holds it, and a name may be
written through an object-like macro (#define KNAME k)."""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace.ops._cupy import CupyAdapter, parse_signature
from helpers import line_of

cp = pytest.importorskip("cupy")

# cupy's RawKernel(code, "k") loads the symbol k: the extern "C" impl::k, which writes
# x; the C++ k at global scope has a mangled symbol
BESIDE = r'''
namespace impl {
extern "C" __global__ void k(float* x, float* y, int n)
{ int i = threadIdx.x; if (i < n) { y[i] = x[i] + 1; x[i] = 0; } }
}
__global__ void k(const float* x, float* y, int n) {}
'''


@pytest.mark.parametrize("code", [
    BESIDE,
    BESIDE.replace('extern "C" __global__ void k(float* x, float* y, int n)\n{',
                   'extern "C" {\n__global__ void k(float* x, float* y, int n)\n{')
          .replace("}\n}\n", "}\n}\n}\n", 1),
    '#define KERNEL extern "C" __global__\n' + BESIDE.replace('extern "C" __global__', "KERNEL"),
    BESIDE.replace("namespace impl {", "namespace a { inline namespace b {")
          .replace("}\n}\n", "}\n}\n}\n", 1)],
    ids=["namespace", "extern block", "macro", "inline namespace"])
def test_a_plain_name_means_an_extern_c_kernel_of_any_namespace_too(code):
    """Bug: the C++ k at global scope alone was read, const float* x made x read-only,
    and a later reader of x got no edge after the launch (a race on a GPU)."""
    assert [p.const for p in parse_signature(code, "k")] == [False, False, False]
    assert CupyAdapter(cp.RawKernel(code, "k")).intents == ["rw", "rw", "r"]


def test_extern_c_plus_plus_or_a_qualified_name_keeps_to_its_scope():
    cpp = BESIDE.replace('extern "C"', 'extern "C++"')
    assert [p.const for p in parse_signature(cpp, "k")] == [True, False, False]
    assert [p.const for p in parse_signature(BESIDE, "::k")] == [False, False, False]
    other = BESIDE.replace("namespace impl", "namespace other") + \
        "namespace impl { __global__ void k(const float* x, const float* y, int n) {} }\n"
    assert [p.const for p in parse_signature(other, "impl::k")] == [True, True, False]


def test_the_reader_after_an_extern_c_kernel_in_a_namespace_waits_for_it():
    k = cp.RawKernel(BESIDE, "k")

    @gt.reference(k)
    def k_ref(grid, block, x, y, n):
        y[:n] = x[:n] + 1
        x[:n] = 0

    @cuda.jit
    def copy(src, dst):
        i = cuda.grid(1)
        if i < dst.size:
            dst[i] = src[i]

    @gt.graph
    def g(s, x, y, z):
        s.launch(k, 1, 4, x, y, 4)
        copy[1, 4, s](x, z)
    x, y, z = (cuda.to_device(np.arange(4, dtype=np.float32)) for _ in range(3))
    nodes = g.trace(x, y, z).nodes
    assert [m for _, m in nodes[0].accesses] == ["rw", "rw"]
    g(x, y, z)
    assert z.copy_to_host().tolist() == [0.0] * 4


def test_kernels_a_name_may_mean_taking_other_arguments_are_refused():
    """Which one is launched tells how to pass n: a RawKernel's symbol k is the
    extern "C" one; never pick one silently."""
    code = BESIDE.replace("int n) {}", "long n) {}")
    with pytest.raises(ValueError, match="rename one of them"):
        parse_signature(code, "k")
    k = cp.RawKernel(code, "k")

    @gt.graph
    def f(s, x, y):
        s.launch(k, 1, 4, x, y, 4)                           # ambiguous
    x, y = (cuda.to_device(np.zeros(4, np.float32)) for _ in range(2))
    with pytest.raises(gt.KernelArgumentError, match=r"extern \"C\" __global__ function k "
                       r"\(its symbol, what a RawKernel loads\) or the C\+\+ one") as e:
        f.trace(x, y)
    assert e.value.source[1] == line_of(__file__, "ambiguous")
    assert "plain declaration" not in str(e.value)


NESTED = r'''
namespace impl { __global__ void k(float* x, const float* y, int n) {} }
namespace other { __global__ void k(const float* x, const float* y, int n) {} }
__global__ void k(const float* x, float* y, int n) {}
'''


@pytest.mark.parametrize("symbol, intents", [
    ("_ZN4impl1kEPfPKfi", ["rw", "r", "r"]), ("_ZN5other1kEPKfS1_i", ["r", "r", "r"]),
    ("_Z1kPKfPfi", ["r", "rw", "r"])])
def test_a_namespaced_kernels_mangled_symbol_means_that_kernel(symbol, intents):
    """Bug: the symbol of impl::k (RawKernel(code, "_ZN4impl1kEPfPKfi"), or what a
    RawModule's get_function names it by) was read as no kernel of the source."""
    assert CupyAdapter(_Symbol(NESTED, symbol)).intents == intents


class _Symbol:   # what graphtrace reads of a RawKernel named by a symbol (not compiled here)
    def __init__(self, code, name):
        self.code, self.name, self.options = code, name, ()


@pytest.mark.parametrize("code", [
    '#define KNAME k\nextern "C" __global__ void KNAME(const float* x, float* y, int n) {}\n',
    '#define KNAME k\n#define NAME KNAME\n'
    'extern "C" __global__ void NAME(const float* x, float* y, int n) {}\n',
    '#define KNAME k\ntemplate<class T> __global__ void KNAME(const T* x, T* y, int n) {}\n'],
    ids=["macro", "macro of a macro", "template"])
def test_a_kernel_named_through_an_object_like_macro_is_read(code):
    """Bug: nvrtc compiles it and cupy finds k, but the launch was refused: no
    __global__ function 'k' ... (a name made by a macro, T##_name, is not expanded)."""
    name = "k<float>" if "template" in code else "k"
    ps = parse_signature(code, name)
    assert [(p.name, p.const) for p in ps] == [("x", True), ("y", False), ("n", False)]
    assert ps[2].dtype == np.int32
    k = cp.RawKernel(code, name)

    @gt.graph
    def f(s, x, y):
        s.launch(k, 1, 4, x, y, 4)
    x, y = (cuda.to_device(np.zeros(4, np.float32)) for _ in range(2))
    assert [m for _, m in f.trace(x, y).nodes[0].accesses] == ["r", "rw"]


def test_a_missing_kernel_blames_token_pasting_only_where_the_source_uses_it():
    code = '#define KNAME j\nextern "C" __global__ void KNAME(const float* x) {}\n'
    k = cp.RawKernel(code, "k")

    @gt.graph
    def f(s, x):
        s.launch(k, 1, 4, x)                                 # missing
    x = cuda.to_device(np.zeros(4, np.float32))
    with pytest.raises(gt.KernelArgumentError, match="no __global__ function 'k'") as e:
        f.trace(x)
    assert e.value.source[1] == line_of(__file__, "missing")
    assert "##" not in str(e.value) and "plain declaration" in str(e.value)
    pasted = cp.RawKernel('#define K(T) extern "C" __global__ void k_##T(const T* x) {}\n'
                          'K(float)\n', "k_double")
    with pytest.raises(gt.KernelArgumentError, match=r"a name made by a macro's ##"):
        gt.graph(lambda s, x: s.launch(pasted, 1, 4, x)).trace(x)

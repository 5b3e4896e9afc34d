"""Which overload of a cupy kernel's source a mangled symbol means: the one whose
parameter types the symbol spells (impl::k(float*, const float*, long) for
_ZN4impl1kEPfPKfl), packed as its own types; where the symbol does not tell and the
overloads take their arguments differently, the launch is refused."""
import numpy as np
import pytest

import graphtrace as gt
from graphtrace.ops._cupy import CupyAdapter
from graphtrace.ops._mangled import mangled_params

cp = pytest.importorskip("cupy")

NAMESPACED = r'''
namespace impl {
__global__ void k(const float* x, float* y, int n) {}
__global__ void k(float* x, const float* y, long n) {}
}
'''
GLOBAL = r'''
__global__ void k(const float* x, float* y, int n) {}
__global__ void k(float* x, const float* __restrict__ y, long n) {}
__global__ void k(const double* x, double* y, unsigned long long n) {}
'''


class _Symbol:   # what graphtrace reads of a RawKernel named by a symbol (not compiled here)
    def __init__(self, code, name):
        self.code, self.name, self.options = code, name, ()


@pytest.mark.parametrize("code, symbol, intents, n", [
    (NAMESPACED, "_ZN4impl1kEPKfPfi", ["r", "rw", "r"], np.int32),
    (NAMESPACED, "_ZN4impl1kEPfPKfl", ["rw", "r", "r"], np.int64),
    (GLOBAL, "_Z1kPKfPfi", ["r", "rw", "r"], np.int32),
    (GLOBAL, "_Z1kPfPKfl", ["rw", "r", "r"], np.int64),
    (GLOBAL, "_Z1kPKdPdy", ["r", "rw", "r"], np.uint64)])
def test_a_mangled_symbol_means_the_overload_of_its_parameter_types(code, symbol, intents, n):
    """Bug: _ZN4impl1kEPfPKfl (the long overload) was read as impl::k with the
    overloads merged: n packed as a 4-byte int32 where the kernel takes a long."""
    a = CupyAdapter(_Symbol(code, symbol))
    assert a.unread is None
    assert a.intents == intents
    assert a.signature[2].dtype == n


@pytest.mark.parametrize("symbol, types", [
    ("_ZN4impl1kEPfPKfl", ["float*", "const float*", "long"]),
    ("_ZN5other1kEPKfS1_i", ["const float*", "const float*", "int"]),
    ("_Z6axpy_tIfEvPKT_S0_PS0_i", ["const float*", "float", "float*", "int"]),
    ("_Z1kPPKfS0_m", ["const float**", "const float*", "unsigned long"]),
    ("_Z1kPhPsPcPbPdPxPj", ["unsigned char*", "short*", "char*", "bool*", "double*",
                           "long long*", "unsigned int*"]),
    ("_Z1kv", []), ("_ZN4impl1kEPN2ns1SEl", None), ("k", None)])
def test_the_parameter_types_a_symbol_spells(symbol, types):
    assert mangled_params(symbol) == types


UNREAD = r'''
namespace ns { struct S { float v; }; }
namespace impl {
__global__ void k(ns::S* x, int n) {}
__global__ void k(ns::S* x, long n) {}
}
'''


def test_overloads_a_symbol_does_not_tell_apart_are_refused_at_the_launch():
    a = CupyAdapter(_Symbol(UNREAD, "_ZN4impl1kEPN2ns1SEl"))
    with pytest.raises(gt.KernelArgumentError, match="one of the overloads of k in the "
                       "kernel source, whose parameters differ") as e:
        a.validate([object(), 4])   # what a launch checks when it is recorded
    assert "give the overloads different names" in str(e.value)


def test_overloads_packed_alike_stay_merged_where_the_symbol_does_not_tell():
    code = UNREAD.replace("long n", "int n").replace("ns::S* x, int", "const ns::S* x, int", 1)
    a = CupyAdapter(_Symbol(code, "_ZN4impl1kEPN2ns1SEi"))
    assert a.unread is None and a.intents == ["rw", "r"]

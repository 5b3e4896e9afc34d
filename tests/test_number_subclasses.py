"""Numbers of subclasses of int, float and complex reach a numba kernel as eager numba
takes them: an enum's member (an ``IntEnum``'s, an ``IntFlag``'s) is baked into the
graph, keyed by the member; a program's own int or float subclass is a dynamic number
that rebinds. Numbers of other classes are refused with the conversion to use."""
import enum
import fractions
import decimal

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt


class Mode(enum.IntEnum):
    NEG = 0
    POS = 1


class Perm(enum.IntFlag):
    R = 1
    W = 2


class Meters(float):
    pass


class Count(int):
    pass


@cuda.jit
def times(x, m, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * m


@cuda.jit
def pick(x, mode, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] if mode == 1 else -x[i]


def run(kernel):
    @gt.graph(backend="sim")
    def g(s, x, m, out):
        kernel[1, 32, s](x, m, out)
    return g


X = np.arange(1.0, 5.0)


def test_an_int_enum_member_runs_as_eagerly_and_is_baked_in():
    g = run(pick)
    x, out = cuda.to_device(X), cuda.device_array(4)
    g(x, Mode.POS, out)
    assert np.array_equal(out.copy_to_host(), X)
    g(x, Mode.NEG, out)
    assert np.array_equal(out.copy_to_host(), -X)
    assert g.cache_info().misses == 2   # one graph per member, as the README says
    g(x, Mode.POS, out)
    assert g.cache_info().misses == 2 and np.array_equal(out.copy_to_host(), X)


def test_an_int_flag_member_runs_as_eagerly():
    g = run(times)
    x, out = cuda.to_device(X), cuda.device_array(4)
    g(x, Perm.R | Perm.W, out)
    assert np.array_equal(out.copy_to_host(), 3 * X)


@pytest.mark.parametrize("kind, a, b", [(Meters, 2.5, 0.5), (Count, 3, 4)])
def test_a_number_of_an_int_or_float_subclass_is_dynamic(kind, a, b):
    g = run(times)
    x, out = cuda.to_device(X), cuda.device_array(4)
    g(x, kind(a), out)
    assert np.array_equal(out.copy_to_host(), a * X)
    g(x, kind(b), out)   # rebinds
    assert np.array_equal(out.copy_to_host(), b * X)
    assert g.cache_info().misses == 1


@pytest.mark.parametrize("value, hint", [
    (fractions.Fraction(1, 3), r"a Fraction \(float\(x\) passes it as a float\)"),
    (decimal.Decimal("1.5"), r"a Decimal \(float\(x\) passes it as a float\)")])
def test_a_number_of_another_class_is_refused_with_its_conversion(value, hint):
    g = run(times)
    with pytest.raises(gt.KernelArgumentError, match=hint):
        g(cuda.to_device(X), value, cuda.device_array(4))


class _Twisted(int):
    def __int__(self):
        return 99


def test_an_int_subclass_is_packed_by_its_own_value_not_its_int_method():
    """ctypes packs an int subclass by the value it holds (as eager numba passes it);
    the packing asked ``int(v)``, which a subclass's ``__int__`` answers otherwise."""
    from numba.core import types
    from graphtrace.ops._numba import _integer
    assert _integer(types.int64, _Twisted(5), None, 0) == 5
    assert _integer(types.int32, True, None, 0) == 1

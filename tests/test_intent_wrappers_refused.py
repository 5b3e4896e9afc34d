"""Intent wrappers around what they cannot describe are refused at the user's line:
a number (an op only reads it) and a wrapper inside another (two intents for one
argument)."""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of


@cuda.jit
def _scale(x, a, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i]


def _dev(v):
    return cuda.to_device(np.asarray(v, dtype=np.float64))


@pytest.mark.parametrize("wrap", [gt.In, gt.Out, gt.InOut])
def test_a_dynamic_number_wrapped_in_an_intent_is_refused_at_its_line(wrap):
    """Bug: scale[1, 32, s](x, gt.In(a), y) was taken silently."""
    @gt.graph(backend="sim")
    def f(s, x, y, a):
        _scale[1, 32, s](x, wrap(a), y)                       # wrapped number
    with pytest.raises(gt.ArgumentError) as e:
        f(_dev(np.arange(4)), _dev(np.zeros(4)), 2.0)
    assert e.value.source[1] == line_of(__file__, "wrapped number")
    name = wrap.__name__
    assert f"gt.{name}(a) wraps a number" in str(e.value)
    assert f"pass it bare: a, not gt.{name}(a)" in str(e.value)


@pytest.mark.parametrize("number", [2.0, 3, np.float32(1.5), True])
def test_a_plain_number_wrapped_in_an_intent_is_refused(number):
    with pytest.raises(gt.ArgumentError, match=r"gt.In\(.*\) wraps a number") as e:
        gt.In(number)                                          # plain number
    assert e.value.source[1] == line_of(__file__, "plain number")


@pytest.mark.parametrize("outer, inner", [(gt.In, gt.Out), (gt.Out, gt.InOut),
                                          (gt.InOut, gt.In)])
def test_an_intent_wrapped_in_another_is_refused_where_an_op_takes_it(outer, inner):
    """Bug: gt.In(gt.Out(x)) was taken as gt.In(x), silently."""
    @gt.graph(backend="sim")
    def f(s, x, y):
        _scale[1, 32, s](outer(inner(x)), 2.0, y)             # nested
    with pytest.raises(gt.ArgumentError) as e:
        f(_dev(np.arange(4)), _dev(np.zeros(4)))
    assert e.value.source[1] == line_of(__file__, "nested")
    assert f"gt.{outer.__name__}(gt.{inner.__name__}(...)) wraps an intent in another" \
        in str(e.value)


def test_a_nested_wrapper_in_a_captured_regions_arguments_is_refused():
    @gt.graph(backend="sim")
    def f(s, x, y):
        s.captured(lambda a, b: None, [gt.In(gt.In(x))], y)   # nested in a list
    with pytest.raises(gt.ArgumentError, match=r"gt.In\(gt.In\(...\)\)") as e:
        f(_dev(np.arange(4)), _dev(np.zeros(4)))
    assert e.value.source[1] == line_of(__file__, "nested in a list")


def test_single_wrappers_still_take_arrays_and_views():
    @gt.graph(backend="sim")
    def f(s, x, y):
        _scale[1, 32, s](gt.In(x[1:3]), 2.0, gt.Out(y[1:3]))
    y = _dev(np.zeros(4))
    f(_dev(np.arange(4)), y)
    assert y.copy_to_host().tolist() == [0.0, 2.0, 4.0, 0.0]

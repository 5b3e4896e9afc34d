"""What ``s.captured`` refuses of its function and arguments at its line: a graph
function, the proxy stream as an argument, and gt.In/gt.Out that reads=/writes=
contradict."""
import functools

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of

F = __file__


@cuda.jit
def addc(y, c):
    i = cuda.grid(1)
    if i < y.size:
        y[i] += c


@gt.graph
def inner(s, x):
    addc[1, 32, s](x, 1.0)


def fill(x):
    x[...] = 1


def copy(x, y):
    y[...] = x


def dev():
    return cuda.to_device(np.zeros(4))


@pytest.mark.parametrize("wrap", [lambda g: g, lambda g: functools.partial(g)])
def test_a_graph_function_given_to_s_captured_is_refused_naming_s_child(wrap):
    @gt.graph
    def f(s, x):
        s.captured(wrap(inner), x)   # region of a graph

    with pytest.raises(gt.ArgumentError) as e:
        f(dev(), backend="sim")
    assert e.value.source == (F, line_of(F, "region of a graph"))
    assert "inner is a @gt.graph function" in e.value.message
    assert "s.child(inner, ...)" in e.value.message and "inner(s, ...)" in e.value.message


def test_the_proxy_stream_given_to_a_region_is_refused_at_the_s_captured_line():
    @gt.graph
    def f(s, x):
        s.captured(fill, s)   # the stream

    with pytest.raises(gt.ArgumentError) as e:
        f(dev(), backend="sim")
    assert e.value.source == (F, line_of(F, "the stream"))
    assert "argument 0 of captured region fill is the graph's proxy stream" in e.value.message
    assert "s.captured(fill, x, y)" in e.value.message


def test_an_in_wrapped_argument_named_in_writes_is_refused():
    @gt.graph
    def f(s, x, y):
        s.captured(copy, gt.In(x), y, reads=[x], writes=[x, y])   # conflicting

    with pytest.raises(gt.ArgumentError) as e:
        f(dev(), dev(), backend="sim")
    assert e.value.source == (F, line_of(F, "conflicting"))
    assert "given x wrapped in gt.In, but writes= names it too" in e.value.message


def test_an_out_wrapped_argument_named_in_reads_is_refused():
    @gt.graph
    def f(s, x, y):
        s.captured(copy, x, gt.Out(y), reads=[x, y])   # out read

    with pytest.raises(gt.ArgumentError) as e:
        f(dev(), dev(), backend="sim")
    assert e.value.source == (F, line_of(F, "out read"))
    assert "given y wrapped in gt.Out, but reads= names it too" in e.value.message


def test_wrappers_that_agree_with_reads_and_writes_are_fine():
    @gt.graph
    def f(s, x, y):
        s.captured(copy, gt.In(x), gt.Out(y), reads=[x], writes=[y])

    x, y = cuda.to_device(np.arange(4.0)), dev()
    f(x, y, backend="sim")
    assert y.copy_to_host().tolist() == [0.0, 1.0, 2.0, 3.0]


@gt.graph
def addk(s, x, c):
    addc[1, 32, s](x, c)


def test_s_child_takes_a_partial_of_a_graph_function_as_calling_it_inline_does():
    @gt.graph
    def child(s, x, g):
        s.child(g, x)

    x0 = np.arange(4.0)
    for c in (1.0, 2.0, 1.0):
        x = cuda.to_device(x0)
        child(x, functools.partial(addk, c=c), backend="sim")
        np.testing.assert_allclose(x.copy_to_host(), x0 + c)
    assert "child addk" in str(child.trace(dev(), functools.partial(addk, c=1.0)))

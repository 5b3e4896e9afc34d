"""Mistakes a new user makes are refused by graphtrace errors that name the user's
line and say what to do, not by exceptions of graphtrace's internals."""
import os

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of


def here(marker):
    return (os.path.abspath(__file__), line_of(__file__, marker))


@pytest.mark.parametrize("op", ["while_loop", "if_then", "if_else"])
def test_a_body_that_is_no_function_is_refused_at_its_line(op):
    @gt.graph(backend="sim")
    def f(s, x, c):
        extra = {"max_iterations": 5} if op == "while_loop" else {}
        getattr(s, op)(gt.cond(c) > 0, body=3, **extra)   # body
    with pytest.raises(gt.ArgumentError, match=rf"s.{op}\(..., body=3\): body= takes a "
                       r"function.*or leave body= out and write the body in a with block") \
            as info:
        f(cuda.to_device(np.zeros(4)), cuda.to_device(np.array([2], np.int32)))
    assert info.value.source == here("body")


def test_a_node_an_explanation_lacks_is_a_graphtrace_error_listing_the_nodes():
    @gt.graph
    def one(s, x):
        s.memset(x, 0)
    e = gt.explain(one, cuda.to_device(np.zeros(4)))
    with pytest.raises(gt.GraphtraceError) as info:
        e.why(0, 5)   # why
    assert isinstance(info.value, KeyError)
    assert str(info.value) == f"test_mistake_messages.py:{here('why')[1]}: 5 is no node of " \
        "graph one: name one by its index, as the listing shows it (0 or '%0', from %0 to " \
        "%0), or pass the Node"


@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1.0


@gt.graph(backend="sim")
def endless(s, x):
    add_one[1, 32, s](x)
    endless(s, x)   # itself


@gt.graph(backend="sim", static=("depth",))
def counted_down(s, x, depth):
    add_one[1, 32, s](x)
    if depth > 1:
        counted_down(s, x, depth - 1)


def test_a_graph_function_calling_itself_without_end_is_named_at_its_line():
    x = cuda.to_device(np.zeros(4))
    with pytest.raises(gt.TraceError, match=r"endless calls itself with the proxy stream "
                       r"\d+ calls deep, where Python's recursion limit stopped the trace.*"
                       r"give the recursion an end.*sys.setrecursionlimit") as info:
        endless(x)
    assert info.value.source == here("itself")
    counted_down(x, 3)   # a recursion with an end is a graph as before, and traces run on
    assert np.array_equal(x.copy_to_host(), np.full(4, 3.0))


@cuda.jit
def scale(x, a, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i]


def test_a_stream_parameter_put_last_is_named_with_the_signature_to_write():
    @gt.graph(backend="sim")
    def f(x, y, s):
        scale[1, 32, s](x, 2.0, y)   # last
    with pytest.raises(gt.StreamError, match=r"numba kernel scale launched on parameter s "
                       r"of f, which holds a \w+, not a stream: graphtrace passes the proxy "
                       r"stream to the first parameter \(x\).*def f\(s, x, y\)") as info:
        f(cuda.to_device(np.arange(4.0)), cuda.device_array(4))
    assert info.value.source == here("last")


def test_a_real_stream_inside_a_trace_is_still_named_as_one():
    stream = cuda.stream()

    @gt.graph(backend="sim")
    def f(s, x, y):
        scale[1, 32, stream](x, 2.0, y)
    with pytest.raises(gt.StreamError, match="launched on a real stream inside a trace"):
        f(cuda.to_device(np.arange(4.0)), cuda.device_array(4))


def test_a_misspelt_keyword_is_named_with_the_missing_parameter():
    @gt.graph(backend="sim")
    def step(s, x, y, a):
        scale[1, 32, s](x, a, y)
    with pytest.raises(gt.ArgumentError, match=r"missing a required argument: 'a'; got an "
                       r"unexpected keyword argument 'alpha' \(meant 'a'\?\)"):
        step(cuda.to_device(np.arange(4.0)), cuda.device_array(4), alpha=2.0)


@pytest.mark.parametrize("value", [np.array(2.0), np.array([2.0])])
def test_a_memset_value_given_as_an_array_says_to_pass_its_number(value):
    @gt.graph(backend="sim")
    def ms(s, d, v):
        s.memset(d, v)   # memset
    with pytest.raises(gt.ArgumentError, match=r"memset value is an? (0-d )?array, not a "
                       r"number.*pass its number as the argument instead \(f\(..., "
                       r"float\(v\)\)") as info:
        ms(cuda.device_array(10), value)
    assert "TracedHostArray" not in str(info.value)
    assert info.value.source == here("memset")

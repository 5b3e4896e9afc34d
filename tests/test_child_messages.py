"""How child graphs' refusals read: ``s.child`` of a plain function says to
decorate it, and a host callback of a child graph a loop body records is
refused at the callback's line naming the ``body.child(...)`` lines it is
recorded through (the callback's line alone did not say which body made it a
body's)."""
import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev
from helpers import line_of


def _plain_part(s, x):
    add[1, 4, s](x, 1.0)


def test_a_child_of_a_plain_function_says_to_decorate_it():
    @gt.graph(backend="sim")
    def f(s, x):
        s.child(_plain_part, x)   # plain child

    with pytest.raises(gt.ArgumentError) as info:
        f(dev(0, 0, 0, 0))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, "plain child"), e
    assert "_plain_part" in e and "decorate it with @gt.graph" in e, e


def _noted(*_):
    pass


@gt.graph
def _part_with_host(s, x):
    add[1, 4, s](x, 1.0)
    s.host(_noted, 1)   # the child's host


@gt.graph
def _part_calling_part(s, x):
    s.child(_part_with_host, x)   # the inner child


def test_a_host_callback_of_a_child_in_a_loop_body_names_the_child_call():
    """``s.host`` in a child graph recorded in a loop body is refused at the
    callback's line, and the message names the ``body.child(...)`` line of the
    body (each one, for a child's child)."""
    @gt.graph(backend="sim")
    def f(s, x, n):
        with s.while_loop(gt.cond(n) < 3) as body:
            body.child(_part_with_host, x)   # the body's child
            body.child(_part_calling_part, x)
            count[1, 1, body](n)

    with pytest.raises(gt.TraceError) as info:
        f(dev(0, 0, 0, 0), dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, "the child's host"), e
    assert f"line {line_of(__file__, 'the body' + chr(39) + 's child')}" in e, e

    @gt.graph(backend="sim")
    def g(s, x, n):
        with s.while_loop(gt.cond(n) < 3) as body:
            body.child(_part_calling_part, x)   # the outer child
            count[1, 1, body](n)

    with pytest.raises(gt.TraceError) as info:
        g(dev(0, 0, 0, 0), dev(0, dtype=np.int32))
    e = str(info.value)
    assert f"line {line_of(__file__, 'the outer child')}" in e, e
    assert f"line {line_of(__file__, 'the inner child')}" in e, e


class _Layer:
    def __init__(self, c):
        self.c = c

    @gt.graph
    def __call__(self, s, x):
        add[1, 4, s](x, self.c)


LAYER = _Layer(2.0)


def test_a_child_of_an_object_whose_call_is_a_graph_function_records_it():
    """``s.child(layer, x)`` where ``_Layer.__call__`` is ``@gt.graph``: recorded as
    ``s.child(layer.__call__, x)`` is, as ``layer(s, x)`` runs it inline (it was
    refused: "s.child() takes a @gt.graph function, not _Layer"); the layer's
    setting changed between calls is used, as eager code does."""
    @gt.graph(backend="sim")
    def f(s, x):
        s.child(LAYER, x)

    x = dev(0, 0, 0, 0)
    LAYER.c = 2.0
    try:
        f(x)
        assert "child" in str(f.trace(x))
        LAYER.c = 5.0
        f(x)
    finally:
        LAYER.c = 2.0
    assert x.copy_to_host().tolist() == [7.0] * 4

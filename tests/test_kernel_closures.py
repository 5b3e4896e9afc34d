"""Numba kernels holding what they use by closure names (made inside the graph
function, or by a factory it calls): the graph's arrays and numbers so held are
refused at the launch's line, since the kernel keeps this call's (the node was
opaque, and a later call with new arrays replayed the first ones); what the
program holds of its own (a table made once, a kernel made before the call)
stays the kernel's."""
from collections import namedtuple

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of


def _doubler(src):   # a kernel factory, closing over an array
    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = src[i] * 2
    return k


def _via_device_function(src):
    @cuda.jit(device=True)
    def read(i):
        return src[i]

    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = read(i) * 2
    return k


def _scaler(a):
    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a
    return k


@gt.graph(backend="sim")
def _factory(s, x, y):
    _doubler(x)[1, 8, s](y)   # factory


@gt.graph(backend="sim")
def _inline(s, x, y):
    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = x[i] * 2
    k[1, 8, s](y)   # inline


@gt.graph(backend="sim")
def _device(s, x, y):
    _via_device_function(x[2:])[1, 6, s](y)   # device function


@gt.graph(backend="sim")
def _number(s, y, a):
    _scaler(a)[1, 8, s](y)   # number


@pytest.mark.parametrize("f, marker, held", [(_factory, "factory", "holds x"),
                                             (_inline, "inline", "holds x"),
                                             (_device, "device function", "holds x"),
                                             (_number, "number", "the number a")])
def test_a_kernel_holding_the_graphs_array_or_number_by_closure_is_refused(f, marker, held):
    x, y = cuda.to_device(np.arange(8.0)), cuda.to_device(np.zeros(8))
    with pytest.raises(gt.KernelArgumentError) as e:
        f(y, 2.0) if f is _number else f(x, y)
    assert e.value.source[1] == line_of(__file__, marker), str(e.value)
    assert held in str(e.value) and "launch argument" in str(e.value)


_KEPT = cuda.to_device(np.arange(8.0))   # top-level code keeps its arrays in globals


@pytest.mark.parametrize("f, marker", [(_factory, "factory"), (_device, "device function")])
def test_a_kernel_made_in_the_call_is_refused_where_a_global_holds_the_array_too(f, marker):
    """A global name of the kernel's module holding the argument too (top-level
    script code) changes nothing: a later call's array would not reach the kernel
    made during this one, and every later call replayed the first one's."""
    with pytest.raises(gt.KernelArgumentError) as e:
        f(_KEPT, cuda.to_device(np.zeros(8)))
    assert e.value.source[1] == line_of(__file__, marker), str(e.value)
    assert "holds x" in str(e.value) and "launch argument" in str(e.value)


def test_a_kernel_made_in_the_call_over_a_global_not_passed_runs():
    """Not an argument: a global array the kernel reads, watched by its name."""
    @gt.graph(backend="sim")
    def f(s, y):
        _doubler(_KEPT)[1, 8, s](y)
    for _ in range(2):
        y = cuda.to_device(np.zeros(8))
        f(y)
        assert y.copy_to_host().tolist() == (np.arange(8.0) * 2).tolist()


TABLE = cuda.to_device(np.arange(8.0) * 10)   # the program's own, made once
_from_table = _doubler(TABLE)
_half = _scaler(0.5)


@cuda.jit
def _doubled_into(src, dst):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] += src[i] * 2


def test_a_kernel_holding_the_programs_own_array_or_a_constant_runs():
    """Also where the graph is given that array too (a kernel made at import over
    a table holds the program's own, which later calls use as eager code does)."""
    @gt.graph(backend="sim")
    def f(s, y, z, table):
        _from_table[1, 8, s](y)
        _half[1, 8, s](z)
        _doubled_into[1, 8, s](table, z)
    for _ in range(2):
        y, z = cuda.to_device(np.zeros(8)), cuda.to_device(np.zeros(8))
        f(y, z, TABLE)
        assert y.copy_to_host().tolist() == (np.arange(8.0) * 20).tolist()
        assert z.copy_to_host().tolist() == [0.5 + 20.0 * i for i in range(8)]


@cuda.jit
def _fill(a, v):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = v


class _Model:
    def __init__(self, table):
        self.k = _doubler(table)   # made once, with the object

    @gt.graph(backend="sim")
    def step(self, s, t, out, v):
        _fill[1, 8, s](t, v)
        self.k[1, 8, s](out)


def test_a_kernel_made_before_the_call_reads_the_array_it_holds_at_every_call():
    """A kernel made once (before the graph function, held by a closure name, by
    self, or passed) over a table the graph is given too reads that very table at
    every call, as eagerly run code does, whatever table a later call passes:
    opaque, after the launches before it."""
    table = cuda.to_device(np.zeros(8))
    k = _doubler(table)   # made once, up front

    def step(s, t, out, v):
        _fill[1, 8, s](t, v)
        k[1, 8, s](out)

    def passed(s, kernel, t, out, v):
        _fill[1, 8, s](t, v)
        kernel[1, 8, s](out)
    model = _Model(table)
    runs = {"closure": (gt.graph(step, backend="sim"), step, ()),
            "passed": (gt.graph(passed, backend="sim"), passed, (k,)),
            "self": (model.step, _Model.step.__wrapped__.__get__(model), ())}
    other = cuda.to_device(np.zeros(8))
    for graphed, eager, lead in runs.values():
        got, expected = [], []
        for run, into in ((graphed, got), (lambda *a: eager(0, *a), expected)):
            table.copy_to_device(np.zeros(8))
            other.copy_to_device(np.zeros(8))
            for v, t in enumerate([table, other, table, other], 1):
                out = cuda.to_device(np.zeros(8))
                run(*lead, t, out, float(v))
                into.append(out.copy_to_host().tolist())
        assert got == expected == [[2.0] * 8, [2.0] * 8, [6.0] * 8, [6.0] * 8]
        g = graphed.trace(*lead, table, out, 1.0)
        assert g.nodes[1].opaque and g.nodes[0] in g.nodes[1].deps


_Grid = namedtuple("_Grid", "size h")


@cuda.jit
def _by_grid(g, out):
    i = cuda.grid(1)
    if i < g.size:   # a namedtuple's field, not an array's size
        out[i] = i * g.h


def test_a_namedtuple_with_a_field_named_like_an_array_attribute_is_passed():
    """``g.size`` made it an array parameter: refused as a tuple used as an array."""
    @gt.graph(backend="sim")
    def f(s, g, out):
        _by_grid[1, 8, s](g, out)
    for h in (0.5, 2.0):
        out = cuda.to_device(np.zeros(8))
        f(_Grid(8, h), out)
        assert out.copy_to_host().tolist() == (np.arange(8) * h).tolist()

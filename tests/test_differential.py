"""Differential testing: random programs run eagerly and as graphs in random orders.

Programs are drawn from a family of numba kernels over random views
(overlapping, disjoint, strided) of three buffers, with copies and memsets.
Data are small integers in float32, so every result is exact and the
comparison is bit for bit. Each graph runs on the simulator in several
random topological orders; every order must give the eager answer, and
``gt.check`` must find no unordered conflict.

``pytest --hypothesis-show-statistics`` shows how many programs ran and,
as events, how many graphs had concurrent nodes and how many distinct
orders each ran in.
"""
import itertools

import numpy as np
from hypothesis import assume, event, given, settings, strategies as st
from numba import cuda

import graphtrace as gt

N_BUF, SIZE, ORDERS = 3, 24, 3


@cuda.jit
def double_plus_one(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 2 * a[i] + 1


@cuda.jit
def add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


@cuda.jit
def increment(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


KERNELS = {"double_plus_one": (double_plus_one, 1), "add": (add, 2),
           "increment": (increment, 0)}


@st.composite
def view(draw, length, contiguous=False):
    step = 1 if contiguous else draw(st.sampled_from([1, 1, 2, 3]))
    span = (length - 1) * step + 1
    start = draw(st.integers(0, SIZE - span))
    return (draw(st.integers(0, N_BUF - 1)), start, step)


@st.composite
def op(draw):
    kind = draw(st.sampled_from(["double_plus_one", "add", "increment", "copy", "memset"]))
    length = draw(st.integers(1, 8))
    contiguous = kind in ("copy", "memset")
    n_views = {"double_plus_one": 2, "add": 3, "increment": 1, "copy": 2, "memset": 1}[kind]
    views = [draw(view(length, contiguous)) for _ in range(n_views)]
    value = draw(st.integers(0, 9)) if kind == "memset" else None
    return (kind, length, views, value)


def elements(v, length):
    b, start, step = v
    return {(b, start + k * step) for k in range(length)}


def well_formed(prog):
    """Within one op, the output view equals each input view or is disjoint from it
    (for a copy: is disjoint, since graphtrace refuses overlapping copies)."""
    for kind, length, views, _ in prog:
        out = views[-1]
        for inp in views[:-1]:
            if (inp != out or kind == "copy") and elements(inp, length) & elements(out, length):
                return False
    return True


def slice_of(arrays, v, length):
    b, start, step = v
    return arrays[b][start:start + (length - 1) * step + 1:step]


def run_op(s, arrays, o):
    """Issue one op on ``s`` (a proxy stream) or run it eagerly (``s`` is None)."""
    kind, length, views, value = o
    vs = [slice_of(arrays, v, length) for v in views]
    if kind in KERNELS:
        k = KERNELS[kind][0]
        if s is None:
            k[1, 16](*vs)
        else:
            k[1, 16, s](*vs)
    elif kind == "copy":
        if s is None:
            vs[0].copy_to_device(vs[1])
        else:
            s.copy(vs[0], vs[1])
    elif s is None:
        vs[0][:] = value
    else:
        s.memset(vs[0], value)


programs = st.lists(op(), min_size=1, max_size=8)


def setup(prog, data_seed):
    """``(initial data, eager result, device arrays, graph function)`` of a program."""
    assume(well_formed(prog))
    init = np.random.default_rng(data_seed).integers(0, 10, (N_BUF, SIZE)).astype(np.float32)
    eager = [cuda.to_device(init[b].copy()) for b in range(N_BUF)]
    for o in prog:
        run_op(None, eager, o)

    @gt.graph
    def f(s, bufs):
        for o in prog:
            run_op(s, bufs, o)
    dev = [cuda.to_device(init[b].copy()) for b in range(N_BUF)]
    return init, [e.copy_to_host() for e in eager], dev, f


def shape_event(g) -> None:
    """Whether the DAG leaves any freedom (deps are reduced, so a chain is exactly
    a graph whose every node follows the one recorded before it)."""
    chain = all(g.nodes[j - 1] in g.nodes[j].deps for j in range(1, len(g.nodes)))
    event("graph: a chain" if chain else "graph: some nodes concurrent")


def same_bits(dev, expected) -> bool:
    return all(np.array_equal(d.copy_to_host().view(np.uint32), e.view(np.uint32))
               for d, e in zip(dev, expected))


@settings(max_examples=200, deadline=None)
@given(programs, st.integers(0, 2**32 - 1))
def test_graph_in_random_orders_equals_eager(prog, data_seed):
    init, eager, dev, f = setup(prog, data_seed)
    g = f.trace(dev)
    assert gt.check(g) == []
    shape_event(g)
    orders = set()
    for seed in range(ORDERS):
        for b in range(N_BUF):
            dev[b].copy_to_device(init[b])
        orders.add(tuple(n.index for n in gt.simulate(g, seed=seed)))
        assert same_bits(dev, eager), f"order {seed} differs from eager\n{g}"
    event(f"distinct orders run: {len(orders)} of {ORDERS}")

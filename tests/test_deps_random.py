"""Random programs: the DAG orders every conflicting pair, and holds no needless edge.

Byte sets are enumerated by brute force, an oracle independent of
``Buffer.overlaps``.
"""
import itertools

import numpy as np
from hypothesis import example, given, settings, strategies as st

import graphtrace as gt
from graphtrace.buffers import as_buffer
from graphtrace.deps import Reduction
from helpers import FakeDeviceArray, any_kernel

K = any_kernel()
ALLOCS = [FakeDeviceArray(64, "uint8") for _ in range(3)]  # three 64-byte allocations


def byte_set(a) -> frozenset:
    b = as_buffer(a)
    out = set()
    for idx in itertools.product(*(range(n) for n in b.shape)):
        start = b.ptr + sum(i * s for i, s in zip(idx, b.strides))
        out.update(range(start, start + b.dtype.itemsize))
    return frozenset(out)


@st.composite
def views(draw):
    base = draw(st.sampled_from(ALLOCS))
    itemsize = draw(st.sampled_from([1, 2, 4]))
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    strides = tuple(draw(st.integers(-3, 4)) * itemsize for _ in range(ndim))
    # place the view so that every element lies inside the allocation
    lo = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides))
    hi = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides)) + itemsize
    if hi - lo > 64:
        shape, strides, lo, hi = (1,) * ndim, strides, 0, itemsize
    offset = draw(st.integers(-lo, 64 - hi))
    return base.view(offset, shape, strides, dtype=f"u{itemsize}")


programs = st.lists(st.lists(st.tuples(views(), st.sampled_from(["r", "w", "rw"])),
                             min_size=0, max_size=3), min_size=1, max_size=12)
WRAP = {"r": gt.In, "w": gt.Out, "rw": gt.InOut}


def reaches(g):
    """reach[i] = set of nodes reachable from node i."""
    reach = {n.index: set() for n in g.nodes}
    for n in g.nodes:                      # recording order is topological
        for d in n.deps:
            reach[d.index].add(n.index)
    for n in reversed(g.nodes):
        for s in list(reach[n.index]):
            reach[n.index] |= reach[s]
    return reach


def conflict(a, b) -> bool:
    return any(("w" in ma or "w" in mb) and (sa & sb)
               for sa, ma in a for sb, mb in b)


@settings(max_examples=300, deadline=None)
@given(programs, st.sampled_from(["plain", "opaque-sometimes"]))
def test_random_program_orders_exactly_the_conflicts(prog, flavor):
    opaque = [flavor != "plain" and i % 5 == 3 for i in range(len(prog))]

    @gt.graph
    def f(s):
        for ops, op_opaque in zip(prog, opaque):
            s.launch(K, 1, 1, *[WRAP[m](v) for v, m in ops], opaque=op_opaque)

    g = f.trace()
    sets = [[(byte_set(v), m) for v, m in ops] for ops in prog]
    reach = reaches(g)

    def must_order(i, j):
        return opaque[i] or opaque[j] or conflict(sets[i], sets[j])

    for i, j in itertools.combinations(range(len(prog)), 2):
        if must_order(i, j):
            assert j in reach[i], f"conflicting nodes {i} and {j} are unordered\n{g}"
    for i, j in g.edges():
        assert must_order(i, j), f"edge {i}->{j} joins nodes that do not conflict\n{g}"
        others = [d.index for d in g.nodes[j].deps if d.index != i]
        assert not any(o in reach[i] for o in others), \
            f"edge {i}->{j} is implied by another path\n{g}"


@settings(max_examples=500, deadline=None)
@given(views(), views())
@example(ALLOCS[0].view(0, (2, 2), (5, 1), "u1"),   # runs [0,2) [5,7) and [2,5) [7,10):
         ALLOCS[0].view(2, (2, 3), (5, 1), "u1"))   # they touch, and share no byte
@example(ALLOCS[0].view(0, (2, 2), (3, 8)),   # bytes 0 3 8 11 around one run [4,8)
         ALLOCS[0].view(4, (4,), (1,)))
def test_overlaps_agrees_with_brute_force(a, b):
    """Views this small are compared run by run: no false yes (a needless edge)
    and no false no (a race)."""
    ba, bb = as_buffer(a), as_buffer(b)
    truth = bool(byte_set(a) & byte_set(b))
    assert ba.overlaps(bb) == bb.overlaps(ba) == truth
    if ba.covers(bb):
        assert byte_set(b) <= byte_set(a)


class Vertex:
    def __init__(self, index):
        self.index = self.pos = index
        self.deps = []


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sets(st.integers(1, 6), max_size=4), min_size=1, max_size=40))
@example([set(), set(), set(), {2}, {2, 1}, {5, 4, 1}])   # a middle predecessor is reached
def test_reduction_keeps_exactly_the_predecessors_no_other_one_reaches(back):
    """``Reduction`` against brute force, on any DAG: node i follows i - d for each d in back[i]."""
    red, nodes, reach = Reduction(), [], []   # reach[i]: the nodes that reach node i
    for i, ds in enumerate(back):
        preds = [nodes[i - d] for d in sorted(ds, reverse=True) if d <= i]
        v = Vertex(i)
        v.deps = red.reduce(preds)
        red.place(v)
        covered = set().union(*(reach[p.index] for p in preds))
        assert sorted(d.index for d in v.deps) == \
            sorted(p.index for p in preds if p.index not in covered)
        reach.append(covered | {p.index for p in preds})
        nodes.append(v)


@settings(max_examples=500, deadline=None)
@given(views(), views())
@example(ALLOCS[0].view(0, (4, 4), (1, 1)),    # runs that overlap
         ALLOCS[0].view(0, (7,), (1,)))
@example(ALLOCS[0].view(0, (2, 2), (2, 3)),    # runs [2,3) and [3,4) touch
         ALLOCS[0].view(2, (2,), (1,)))
def test_contains_agrees_with_brute_force(a, b):
    """``contains`` decides which argument a view moves with on rebinding; views this
    small are compared run by run, so it is never unknown, even where runs overlap
    or touch."""
    assert as_buffer(a).contains(as_buffer(b)) == (byte_set(b) <= byte_set(a))


@settings(max_examples=300, deadline=None)
@given(views(), views())
def test_covers_is_exact_when_the_covering_view_is_one_run(a, b):
    """A write that covers a view hides the view's older accesses from later ones;
    a one-run view must be seen to cover what lies in it (and nothing else)."""
    ba, bb = as_buffer(a), as_buffer(b)
    if ba.step == 0 and bb.nbytes:
        assert ba.covers(bb) == (byte_set(b) <= byte_set(a))


@settings(max_examples=300, deadline=None)
@given(views())
def test_contiguous_means_the_bytes_form_one_gapless_run(a):
    """``contiguous`` decides whether a view is named as a plain byte range."""
    nbytes = sorted(byte_set(a))
    one_run = len(nbytes) == as_buffer(a).nbytes and nbytes[-1] - nbytes[0] + 1 == len(nbytes)
    assert as_buffer(a).contiguous == one_run


def test_overlaps_is_exact_for_common_layouts():
    x = FakeDeviceArray((8, 8), "float32")
    cases = [(x.view(0, (8, 4), (32, 4)), x.view(16, (8, 4), (32, 4))),  # column blocks
             (x.view(0, (32,), (8,)), x.view(4, (32,), (8,))),            # interleaved
             (x.view(0, (4, 8), (64, 4)), x.view(32, (4, 8), (64, 4)))]  # alternate rows
    for a, b in cases:
        assert not as_buffer(a).overlaps(as_buffer(b))
        assert not byte_set(a) & byte_set(b)

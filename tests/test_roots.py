"""A trace's named arrays (roots) found by address: ``Tracer.root_holding`` (an int
that points into an argument) and ``Tracer._root`` use one index sorted by address;
``root_holding`` answers what the first root in naming order whose bytes' hull
holds the address is."""
from hypothesis import given, settings, strategies as st

from graphtrace.trace import Tracer
from helpers import FakeDeviceArray

BASE = 1 << 44


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 60), st.integers(0, 12)), min_size=1, max_size=25),
       st.lists(st.integers(-2, 80), min_size=1, max_size=20), st.data())
def test_root_holding_is_the_first_root_whose_hull_holds_the_address(spans, probes, data):
    t = Tracer("f", [], "data")
    arrays = [FakeDeviceArray(n, "uint8", ptr=BASE + at) for at, n in spans]
    added = 0
    for k, a in enumerate(arrays):
        t.add_argument(f"a{k}", a)
        added += 1
        if data.draw(st.booleans()):   # asked between namings too: the index is made again
            address = BASE + data.draw(st.integers(-2, 80))
            roots = t._roots[:added]
            expect = next((r for r in roots if r.lo <= address < r.hi), None)
            assert t.root_holding(address) is expect
    for p in probes:
        address = BASE + p
        expect = next((r for r in t._roots if r.lo <= address < r.hi), None)
        assert t.root_holding(address) is expect


def test_temporary_names_see_every_root_named_since():
    t = Tracer("f", [], "data")
    t.add_argument("tmp0", FakeDeviceArray(4))
    assert t._labels() == {"tmp0"}
    t.add_arguments([("tmp1", FakeDeviceArray(4)), ("x", FakeDeviceArray(4))])
    assert t._labels() == {"tmp0", "tmp1", "x"}


def test_a_temporary_takes_a_name_no_root_has():
    import numpy as np
    import graphtrace as gt
    from helpers import any_kernel
    k = any_kernel("k")
    tmp0, tmp1 = FakeDeviceArray(4), FakeDeviceArray(4)   # names reached by the function

    @gt.graph
    def f(s, x):
        t = s.empty(4, np.float32)
        s.launch(k, 1, 32, tmp0, t)
        s.launch(k, 1, 32, tmp1, x)
        s.launch(k, 1, 32, x, s.empty(4, np.float32))
    listing = str(f.trace(FakeDeviceArray(4)))
    assert "tmp2" in listing and "tmp3" in listing, listing


def test_a_view_of_two_overlapping_blocks_of_a_tall_matrix_lies_in_the_first():
    """``f(m[:, 0:4], m[:, 2:6])`` with a kernel on ``a[:, 2:4]`` of a matrix of more
    rows than ``EXACT_RUNS``: both arguments hold the view, but neither could tell
    (too many runs to list), so no root was chosen and the view was refused as an
    array the function does not reach."""
    import graphtrace as gt
    from graphtrace.buffers import EXACT_RUNS
    from helpers import any_kernel
    k = any_kernel()
    rows = EXACT_RUNS + 8
    m = FakeDeviceArray(rows * 8, "float32", ptr=BASE)

    def block(first, last):   # m[:, first:last] of a (rows, 8) float32 matrix
        return m.view(4 * first, (rows, last - first), (32, 4))

    @gt.graph
    def f(s, a, b):
        s.launch(k, 1, 32, a.view(8, (rows, 2), (32, 4)))   # a[:, 2:4]
        s.launch(k, 1, 32, b)
    g = f.trace(block(0, 4), block(2, 6))
    assert [n.args[0].base.label for n in g.nodes] == ["a", "b"]

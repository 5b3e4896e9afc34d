"""A memset of a value that is no repeated 4-byte pattern (a float64's 2.5) writes
one node per 4-byte word of an element: each writes its own word of every element,
no byte in common, so they are independent; what reads or writes the array later
is ordered after each, and what wrote it before, before each."""
import numpy as np
from numba import cuda

import graphtrace as gt
from step_kernels import add


@cuda.jit
def fill(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v


@gt.graph
def words(s, x):
    s.memset(x, 2.5)


def edges(g) -> set:
    return set(g.edges())


def test_the_word_memsets_of_one_memset_are_independent():
    """They were chained by an edge ``WAW x`` though their bytes are disjoint."""
    x = cuda.to_device(np.zeros(64))
    g = words.trace(x)
    assert [n.attrs.get("lane") for n in g.nodes] == [0, 1] and not g.edges(), str(g)
    why = gt.explain(words, x).why(0, 1)
    assert not why.ordered and not why.hazards and \
        "independent: their bytes do not overlap" in str(why), why
    words(x)
    assert (x.copy_to_host() == 2.5).all()


def test_what_reads_or_writes_the_array_around_them_is_ordered_with_each_word():
    @gt.graph
    def f(s, x, y, z):
        fill[1, 64, s](x, 7.0)     # %0: before both words
        s.memset(x, 2.5)           # %1, %2: word 0, word 1
        add[1, 64, s](x, y)        # %3: reads x after both words
        s.memset(x[4:], 0.0)       # %4: a pattern, after the reader (WAR)
        s.memset(z, 2.5)           # %5, %6: another array, unordered with x's
    x, y, z = (cuda.to_device(np.zeros(64)) for _ in range(3))
    g = f.trace(x, y, z)
    assert [(n.kind, n.attrs.get("lane")) for n in g.nodes] == [
        ("kernel", None), ("memset", 0), ("memset", 1), ("kernel", None), ("memset", None),
        ("memset", 0), ("memset", 1)], str(g)
    assert edges(g) == {(0, 1), (0, 2), (1, 3), (2, 3), (3, 4)}, str(g)
    f(x, y, z)
    assert (y.copy_to_host() == 2.5).all()
    assert (x.copy_to_host()[:4] == 2.5).all() and (x.copy_to_host()[4:] == 0.0).all()
    assert (z.copy_to_host() == 2.5).all()


def test_word_memsets_of_a_view_and_of_a_rebound_array_fill_their_bytes_alone():
    @gt.graph
    def f(s, x):
        s.memset(x[2:6], 1 + 2j)   # complex128: four words an element
        s.memset(x[6:], 2.5 - 1j)
    x = cuda.to_device(np.zeros(8, np.complex128))
    g = f.trace(x)
    assert [n.attrs.get("lane") for n in g.nodes] == [0, 1, 2, 3] * 2 and not g.edges()
    for a in (x, cuda.to_device(np.zeros(8, np.complex128))):   # the second: rebound
        f(a)
        assert list(a.copy_to_host()) == [0, 0] + [1 + 2j] * 4 + [2.5 - 1j] * 2

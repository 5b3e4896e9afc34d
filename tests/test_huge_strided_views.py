"""Which argument a view made inside the function lies in, where the arguments are
components of an interleaved field too large to list run by run (more than
65,536 runs in two outer dimensions: ``V[..., 0]`` of a 300 x 300 x 2 field).
``Buffer.contains`` answered "unknown" there, and ``Tracer._root`` took that
for yes where one argument's hull held the view, for no where two did."""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt

N = 300


@cuda.jit
def incr2(x, c):
    i, j = cuda.grid(2)
    if i < x.shape[0] and j < x.shape[1]:
        x[i, j] += c


class _State:
    pass


@gt.graph(backend="sim")
def _component_and_held(s, u, st):
    incr2[(1, 1), (4, 4), s](u, 1.0)
    incr2[(1, 1), (4, 4), s](st.v, 2.0)   # an array an argument object holds


def test_an_array_held_by_an_argument_object_inside_a_huge_argument_is_refused():
    """``st.v``, the other component of the field ``u`` is one of, was taken for a
    view of ``u``: a second call with another field's ``u`` wrote through ``st.v``
    into that field, silently. It is refused, as for a small field."""
    field = cuda.to_device(np.zeros((N, N, 2)))
    st = _State()
    st.v = field[:-1, :, 1]
    with pytest.raises(gt.ArgumentError, match="st.v"):
        _component_and_held(field[..., 0], st)


@gt.graph(backend="sim")
def _interiors(s, u, v):
    incr2[(1, 1), (4, 4), s](u, 1.0)
    incr2[(1, 1), (4, 4), s](v[1:-1, 1:-1], 2.0)   # a view of v made here


def test_a_view_of_one_of_two_interleaved_huge_arguments_moves_with_it():
    """Refused as "not an argument" of the function: both components' hulls hold
    the view, and neither was known to hold its bytes."""
    fields = [cuda.to_device(np.zeros((N, N, 2))) for _ in range(2)]
    for k in (0, 1, 0):
        _interiors(fields[k][..., 0], fields[k][..., 1])
    got = [f.copy_to_host() for f in fields]
    assert (got[0][0, 0, 0], got[0][1, 1, 1], got[0][0, 0, 1]) == (2.0, 4.0, 0.0)
    assert (got[1][0, 0, 0], got[1][1, 1, 1], got[1][0, 0, 1]) == (1.0, 2.0, 0.0)
    assert _interiors.cache_info().misses == 1

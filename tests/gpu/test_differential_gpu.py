"""Differential testing on the GPU: random programs as real graphs against eager runs.

The programs of tests/programs.py that numba compiles for a GPU, each
replayed, then called again with other arrays in its parameters, globals,
closure cells or ``self`` attributes.
"""
import pytest
from hypothesis import event, given, settings

cuda = pytest.importorskip("numba.cuda")
from programs import cases, describe, run_case  # noqa: E402

REPLAYS = 3


def check(case):
    out = run_case(case, backend="gpu", orders=REPLAYS)
    assert not out.failures and out.calls, describe(case, out)


@settings(max_examples=150, deadline=None)
@given(cases("views", gpu=True))
def test_real_graph_equals_eager(case):
    out = run_case(case, backend="gpu", orders=REPLAYS)
    event(f"runs checked against eager: {out.calls}")
    assert not out.failures and out.calls, describe(case, out)


@settings(max_examples=100, deadline=None)
@given(cases("indirect", gpu=True))
def test_real_graphs_of_kernels_writing_indirectly_equal_eager(case):
    check(case)


@settings(max_examples=60, deadline=None)
@given(cases("globals", gpu=True))
def test_real_graph_calls_see_reassigned_globals(case):
    check(case)


@settings(max_examples=40, deadline=None)
@given(cases("unset", gpu=True))
def test_real_graph_calls_see_arrays_put_where_a_global_held_none(case):
    check(case)


@settings(max_examples=60, deadline=None)
@given(cases("methods", gpu=True))
def test_real_graph_method_calls_see_reassigned_attributes(case):
    check(case)


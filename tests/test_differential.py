"""Differential testing: random programs run eagerly and as graphs in random orders.

Programs come from tests/programs.py: numba kernels over random 1-D and 2-D
views (overlapping, disjoint, strided) of arrays, with copies and memsets.
Each graph runs on the simulator in several random topological orders and
through the call path, where later calls rebind other arrays; every run
must give the eager answer bit for bit, and ``gt.check`` must find no
unordered conflict. The families differ in how kernels write and how the
graph function reaches its arrays (see tests/programs.py);
``python3 tools/fuzz.py`` runs many more of them outside CI.
"""
from hypothesis import event, given, settings

from programs import cases, describe, run_case



def check(case):
    out = run_case(case)
    assert not out.failures and out.calls, describe(case, out)


@settings(max_examples=200, deadline=None)
@given(cases("views"))
def test_graph_in_random_orders_equals_eager(case):
    out = run_case(case)
    event(f"runs checked against eager: {out.orders}")
    assert not out.failures and out.calls, describe(case, out)


@settings(max_examples=100, deadline=None)
@given(cases("indirect"))
def test_kernels_writing_through_device_functions_rows_and_tuples_equal_eager(case):
    check(case)


@settings(max_examples=60, deadline=None)
@given(cases("globals"))
def test_calls_see_reassigned_globals_global_list_items_and_closure_cells(case):
    check(case)


@settings(max_examples=40, deadline=None)
@given(cases("unset"))
def test_calls_see_arrays_put_where_a_global_held_none_at_the_first_call(case):
    check(case)


@settings(max_examples=60, deadline=None)
@given(cases("methods"))
def test_method_calls_see_reassigned_array_attributes(case):
    check(case)


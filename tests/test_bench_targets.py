"""The tracing targets of bench/RESULTS.md: numba views new over the limit reads
"its floor is over too" only where, at every size it is over, the floor program
of bench/numba_floor.py (the work of views new beside numba's slicing) is over
as well, in that run."""
import os
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")
sys.path.insert(0, BENCH)   # bench/ is scripts, not a package; its modules import each other
try:
    run = pytest.importorskip("run")
finally:
    sys.path.remove(BENCH)


def _row(program, ops, traced, user):
    return {"program": program, "ops": ops, "us_per_op": traced, "user_us_per_op": user,
            "pure_us_per_op": traced * 2}


def _floor(program, ops, share, rest=3.0, trace=60.0):
    return {"program": program, "ops": ops, "share": share, "rest_share": rest, "trace": trace}


def _target(rows, numba_rows):
    (_, measured, met), = [t for t in run.trace_targets(rows, None, numba_rows)
                           if "new views" in t[0]]
    return measured, met


ROWS = [_row("views new", 10_000, 3.0, 1.0), _row("numba views new", 10_000, 60.0, 53.0),
        _row("numba views new", 100_000, 61.0, 55.0)]


def test_met_where_under_the_limit():
    rows = [_row("views new", 10_000, 3.0, 1.0), _row("numba views new", 10_000, 56.0, 53.0)]
    assert _target(rows, [_floor("beside numba slicing", 10_000, 5.0)])[1] is True


def test_at_its_floor_when_the_floor_is_over_at_every_size():
    floors = [_floor("beside numba slicing", 10_000, 5.0), _floor("numba views new", 10_000, 6.5),
              _floor("beside numba slicing", 100_000, 4.5, trace=63.5),
              _floor("numba views new", 100_000, 6, trace=61.25)]
    measured, met = _target(ROWS, floors)
    assert met == "floor" and run._MET[met].startswith("no")
    assert ("100000 ops: numba views new 6.00 (rest 3.00; traced in 61.25), its floor 4.50 "
            "(rest 3.00; traced in 63.50)") in measured


@pytest.mark.parametrize("floors", [
    [_floor("beside numba slicing", 10_000, 5.0), _floor("numba views new", 10_000, 6.5),
     _floor("beside numba slicing", 100_000, 3.5), _floor("numba views new", 100_000, 6)],
    [_floor("beside numba slicing", 10_000, 5.0), _floor("numba views new", 10_000, 6.5)],
    None])
def test_not_met_where_a_size_has_no_floor_over_the_limit(floors):
    assert _target(ROWS, floors)[1] is False


def test_not_met_where_another_program_is_over():
    rows = ROWS + [_row("cupy views new", 10_000, 12.0, 6.0)]
    floors = [_floor("beside numba slicing", n, 5.0) for n in (10_000, 100_000)] + \
        [_floor("numba views new", n, 6.0) for n in (10_000, 100_000)]
    assert _target(rows, floors)[1] is False

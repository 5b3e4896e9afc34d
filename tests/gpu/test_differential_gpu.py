"""Differential testing on the GPU: random programs as real graphs against eager runs."""
import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import graphtrace as gt

cuda = pytest.importorskip("numba.cuda")
from test_differential import N_BUF, SIZE, programs, run_op, well_formed  # noqa: E402

STATS = {"programs": 0, "replays": 0, "mismatches": 0}
REPLAYS = 3


@settings(max_examples=150, deadline=None)
@given(programs, st.integers(0, 2**32 - 1))
def test_real_graph_equals_eager(prog, data_seed):
    assume(well_formed(prog))
    init = np.random.default_rng(data_seed).integers(0, 10, (N_BUF, SIZE)).astype(np.float32)
    eager = [cuda.to_device(init[b].copy()) for b in range(N_BUF)]
    for o in prog:
        run_op(None, eager, o)
    eager = [e.copy_to_host() for e in eager]

    dev = [cuda.to_device(init[b].copy()) for b in range(N_BUF)]

    @gt.graph
    def f(s, bufs):
        for o in prog:
            run_op(s, bufs, o)
    STATS["programs"] += 1
    for _ in range(REPLAYS):
        for b in range(N_BUF):
            dev[b].copy_to_device(init[b])
        f(dev)
        cuda.synchronize()
        got = [d.copy_to_host() for d in dev]
        same = all(np.array_equal(x.view(np.uint32), y.view(np.uint32))
                   for x, y in zip(got, eager))
        STATS["replays"] += 1
        STATS["mismatches"] += not same
        assert same, f"replay differs from eager\n{f.trace(dev)}"


def test_report_counts():
    print(f"\nGPU differential testing: {STATS}")
    assert STATS["mismatches"] == 0

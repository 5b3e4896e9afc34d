"""Differential testing on the GPU: random programs as real graphs against eager runs."""
import pytest
from hypothesis import given, settings, strategies as st

cuda = pytest.importorskip("numba.cuda")
from test_differential import N_BUF, programs, same_bits, setup  # noqa: E402

STATS = {"programs": 0, "replays": 0, "mismatches": 0}
REPLAYS = 3


@settings(max_examples=150, deadline=None)
@given(programs, st.integers(0, 2**32 - 1))
def test_real_graph_equals_eager(prog, data_seed):
    init, eager, dev, f = setup(prog, data_seed)
    STATS["programs"] += 1
    for _ in range(REPLAYS):
        for b in range(N_BUF):
            dev[b].copy_to_device(init[b])
        f(dev)
        cuda.synchronize()
        same = same_bits(dev, eager)
        STATS["replays"] += 1
        STATS["mismatches"] += not same
        assert same, f"replay differs from eager\n{f.trace(dev)}"


def test_report_counts():
    print(f"\nGPU differential testing: {STATS}")
    assert STATS["mismatches"] == 0

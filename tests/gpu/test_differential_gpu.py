"""Differential testing on the GPU: random programs as real graphs against eager runs.

``--hypothesis-show-statistics`` shows how many programs ran and how many
graphs had concurrent nodes.
"""
import pytest
from hypothesis import given, settings, strategies as st

cuda = pytest.importorskip("numba.cuda")
from test_differential import N_BUF, programs, same_bits, setup, shape_event  # noqa: E402

REPLAYS = 3


@settings(max_examples=150, deadline=None)
@given(programs, st.integers(0, 2**32 - 1))
def test_real_graph_equals_eager(prog, data_seed):
    init, eager, dev, f = setup(prog, data_seed)
    shape_event(f.trace(dev))
    for _ in range(REPLAYS):
        for b in range(N_BUF):
            dev[b].copy_to_device(init[b])
        f(dev)
        cuda.synchronize()
        assert same_bits(dev, eager), f"replay differs from eager\n{f.trace(dev)}"

"""A graph function with a parameter of its own named ``stream`` (README: it is
the function's own; launch on another stream with ``f.compile(...).launch(st)``)
handed a stream, by position or as ``stream=``: the refusal says so and how to
launch on it, not to call ``f(..., stream=...)``, which fills that same
parameter and was refused again; the advice given works."""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of

F = __file__


@cuda.jit
def addc(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += a


@gt.graph(backend="sim")
def step(s, y, stream):
    addc[1, 32, s](y, 1.0)


@pytest.mark.parametrize("by", ["position", "keyword"])
def test_a_stream_handed_to_a_parameter_named_stream_gets_advice_that_works(by):
    y, st = cuda.to_device(np.zeros(4)), cuda.stream()
    with pytest.raises(gt.ArgumentError) as e:
        if by == "position":
            step(y, st)                    # by position
        else:
            step(y, stream=st)             # by keyword
    msg = str(e.value)
    assert e.value.source == (F, line_of(F, f"by {by}"))
    assert "its parameter stream is step's own" in msg, msg
    assert "rename or remove that parameter" in msg, msg
    assert "step.compile(...).launch(st)" in msg, msg
    assert "to launch the graph on a stream of yours, pass it as" not in msg, msg
    step.compile(y, None).launch(st)       # what it says works
    st.synchronize()
    assert y.copy_to_host()[0] == 1.0

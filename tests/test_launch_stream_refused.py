"""A compiled graph's ``launch(stream)`` given what no launch can take (``1.5``)
is refused at the user's line, an ``ArgumentError`` and a ``TypeError`` both, as
a call's ``stream=`` is; a stream it can take launches."""
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


@gt.graph
def f(s, x):
    addc[1, 32, s](x, 1.0)


@pytest.mark.parametrize("bad", [1.5, "s", [0]])
def test_a_compiled_graph_launched_on_no_stream_is_refused_at_the_users_line(bad):
    x = cuda.to_device(np.zeros(4))
    handle = f.compile(x)
    with pytest.raises(gt.ArgumentError) as e:
        handle.launch(bad)   # the launch
    assert isinstance(e.value, TypeError)
    assert e.value.source == (F, line_of(F, "the launch"))
    assert f"cannot launch on {type(bad).__name__}" in str(e.value)
    assert x.copy_to_host()[0] == 0.0
    handle.launch(cuda.stream())
    assert x.copy_to_host()[0] == 1.0

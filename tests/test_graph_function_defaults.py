"""The defaults of a graph function, read and set through the decorated object as
on a plain function (``f.__kwdefaults__["k"] = 8.0``, ``f.__defaults__ =
(5.0,)``, as the README shows): the first raised AttributeError, and the second
was stored on the wrapper, which no call read, so calls kept the old default."""
import numpy as np
from numba import cuda

import graphtrace as gt


@cuda.jit
def addc(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += a


def _make():
    @gt.graph(backend="sim")
    def f(s, x, c=2.0, *, k=1.0):
        addc[1, 4, s](x, c)
        addc[1, 4, s](x, k)
    return f


def _added(f) -> float:
    x = cuda.to_device(np.zeros(4))
    f(x)
    return float(x.copy_to_host()[0])


def test_defaults_set_through_the_graph_function_are_its_functions():
    f = _make()
    assert _added(f) == 3.0
    assert f.__defaults__ == (2.0,) and f.__kwdefaults__ == {"k": 1.0}
    f.__kwdefaults__["k"] = 8.0   # changed in place: traces anew
    assert _added(f) == 10.0
    f.__defaults__ = (5.0,)
    assert f.fn.__defaults__ == (5.0,)
    assert _added(f) == 13.0
    f.__kwdefaults__ = {"k": 0.5}
    assert _added(f) == 5.5

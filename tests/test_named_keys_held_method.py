"""A flag a held object's own method (or a global object's) keeps in its dict,
under a key its module names (``self.cfg.mark()`` doing ``self.state[KEY] =
True``): keyed by the items the trace found and refilled by each replay, as a
flag set in place. It was state, with a StateWarning, and after the user
cleared it the first call's work never ran again."""
import warnings

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from keyed_base_module import Base

KEY = "other"   # not the key the held object's methods read


@cuda.jit
def add(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += a


class _Holder:
    def __init__(self):
        self.cfg = Base()

    @gt.graph(backend="sim")
    def step(self, s, x):
        if not self.cfg.started():
            add[1, 2, s](x, 100.0)   # the first call's work alone
            self.cfg.mark()
        add[1, 2, s](x, 1.0)


GLOBAL = Base()


@gt.graph(backend="sim")
def _on_a_global(s, x):
    if not GLOBAL.started():
        add[1, 2, s](x, 100.0)
        GLOBAL.mark()
    add[1, 2, s](x, 1.0)


@pytest.mark.parametrize("where", ["held", "global"])
def test_a_flag_a_held_object_method_sets_in_its_dict_is_set_again(where):
    if where == "held":
        h = _Holder()
        obj, step = h.cfg, h.step
    else:
        obj, step = GLOBAL, _on_a_global
        GLOBAL.state.clear()
    x = cuda.to_device(np.zeros(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # (nothing to say: every call is exact)
        for i in range(9):
            if i in (3, 6):
                obj.state.clear()
            step(x)
            assert obj.state == {"init": True}
    assert float(x.copy_to_host()[0]) == 3 * 100.0 + 9 * 1.0

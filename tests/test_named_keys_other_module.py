"""A flag a base class's methods keep under a key their own module's global names
(``self.state[KEY]`` in ``keyed_base_module``), read and set through a method
of a class derived from it here. The key's name was read by the names of the
graph function's module, which has no such ``KEY`` (or one of another value):
the flag was keyed, but no replay set it again, so after the user cleared it the
first call's graph replayed at every call without its work, silently."""
import warnings

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from keyed_base_module import Base, ByMember

KEY = "other"   # not the key the base class's methods read


@cuda.jit
def add(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += a


class _ByModuleKey(Base):
    @gt.graph(backend="sim")
    def step(self, s, x):
        if not self.started():
            add[1, 2, s](x, 100.0)   # the first call's work alone
            self.mark()
        add[1, 2, s](x, 1.0)


class _ByEnumMember(ByMember):
    @gt.graph(backend="sim")
    def step(self, s, x):
        if not self.started():
            add[1, 2, s](x, 100.0)
            self.mark()
        add[1, 2, s](x, 1.0)


@pytest.mark.parametrize("cls, key", [(_ByModuleKey, "init"), (_ByEnumMember, None)],
                         ids=["module constant", "enum member"])
def test_a_flag_under_a_key_named_in_the_base_class_module_is_set_again(cls, key):
    m, x = cls(), cuda.to_device(np.zeros(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # (nothing to say: every call is exact)
        for i in range(9):
            if i in (3, 6):
                m.state.clear()   # eager: the first call's work runs again
            m.step(x)
            assert list(m.state.values()) == [True]
    assert float(x.copy_to_host()[0]) == 3 * 100.0 + 9 * 1.0
    if key is not None:
        assert set(m.state) == {key}   # not this module's KEY
    assert type(m).step.cache_info().misses == 2

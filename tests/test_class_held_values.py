"""Values a class holds, read through an instance. A ``functools.cached_property``
the traced code reads is followed as a property
is: what its function reads keys the graph, so after the user changes that and
invalidates the cache (``del obj.scale``, as its documentation says), the next
call computes the new value, as eager code does, on self, on an object self
holds and on an argument object. A list the class holds, read whole through an
instance (``for a in self.scales``), is keyed by its items, as an instance's is;
and settings read by constant keys off a global ``ChainMap`` or mapping proxy are
watched as a dict's are."""
import collections
import functools
import types

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt


@cuda.jit
def add(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += a


class _Cfg:
    def __init__(self):
        self.base = 1.0

    @functools.cached_property
    def scale(self):
        return self.base * 2.0


class _Model(_Cfg):
    def __init__(self):
        super().__init__()
        self.opt = _Cfg()

    @gt.graph(backend="sim")
    def on_self(self, s, x):
        add[1, 2, s](x, self.scale)

    @gt.graph(backend="sim")
    def on_held(self, s, x):
        add[1, 2, s](x, self.opt.scale)


@gt.graph(backend="sim")
def _on_argument(s, x, cfg):
    add[1, 2, s](x, cfg.scale)


def _forms():
    m, h, c = _Model(), _Model(), _Cfg()
    return {"self": (m.on_self, m), "held": (h.on_held, h.opt),
            "argument": (lambda x: _on_argument(x, c), c)}


@pytest.mark.parametrize("form", ["self", "held", "argument"])
def test_a_cached_property_invalidated_by_the_user_is_computed_anew(form):
    """Keyed by the property not yet computed, the first call's graph replayed the
    first value, and wrote it back into the object's dict."""
    call, obj = _forms()[form]
    x = cuda.to_device(np.zeros(2))
    call(x)
    call(x)
    obj.base = 5.0
    del obj.scale   # as functools' documentation says: computed anew when next read
    call(x)
    assert float(x.copy_to_host()[0]) == 2.0 + 2.0 + 10.0
    assert obj.__dict__["scale"] == 10.0


class _Opt:
    scales = [2.0]   # a class's list, read whole through an instance


class _Trainer:
    scales = [2.0]

    def __init__(self):
        self.opt = _Opt()

    @gt.graph(backend="sim")
    def on_self(self, s, x):
        for a in self.scales:
            add[1, 2, s](x, a)

    @gt.graph(backend="sim")
    def on_held(self, s, x):
        for a in self.opt.scales:
            add[1, 2, s](x, a)


@pytest.mark.parametrize("form", ["on_self", "on_held"])
def test_a_list_the_class_holds_read_whole_through_an_instance_is_watched(form):
    """Kept on the class, not the instance, the list was not in the key: the user's
    appended setting was never seen."""
    _Trainer.scales, _Opt.scales = [2.0], [2.0]
    t = _Trainer()
    x = cuda.to_device(np.zeros(2))
    getattr(t, form)(x)
    (_Trainer.scales if form == "on_self" else _Opt.scales).append(3.0)
    getattr(t, form)(x)
    assert float(x.copy_to_host()[0]) == 2.0 + 2.0 + 3.0


OPT = _Opt()   # a global object whose list is its class's


@gt.graph(backend="sim")
def _on_global(s, x):
    for a in OPT.scales:
        add[1, 2, s](x, a)


def test_a_list_the_class_holds_read_through_a_global_object_is_watched():
    """An object holding no value of its own was taken for settings alone, whose
    chains watch no list: the appended setting was never seen."""
    _Opt.scales = [2.0]
    x = cuda.to_device(np.zeros(2))
    _on_global(x)
    _Opt.scales.append(3.0)
    _on_global(x)
    assert float(x.copy_to_host()[0]) == 2.0 + 2.0 + 3.0


_DEFAULTS = {"lr": 1.0}
_OVERRIDES: dict = {}
LAYERED = collections.ChainMap(_OVERRIDES, _DEFAULTS)   # overrides over defaults
VIEW = types.MappingProxyType(_DEFAULTS)                # a read-only view


@gt.graph(backend="sim")
def _reads_layered(s, x):
    add[1, 2, s](x, LAYERED["lr"])


@gt.graph(backend="sim")
def _reads_view(s, x):
    add[1, 2, s](x, VIEW["lr"])


@pytest.mark.parametrize("f", [_reads_layered, _reads_view], ids=["ChainMap", "mappingproxy"])
def test_a_setting_read_off_a_global_chainmap_or_mapping_proxy_is_watched(f):
    """Keyed by identity alone, the changed override or default was never seen."""
    _OVERRIDES.clear()
    _DEFAULTS["lr"] = 1.0
    x = cuda.to_device(np.zeros(2))
    f(x)
    _DEFAULTS["lr"] = 3.0   # seen through both
    f(x)
    _OVERRIDES["lr"] = 5.0  # through the ChainMap only
    f(x)
    want = 1.0 + 3.0 + (5.0 if f is _reads_layered else 3.0)
    assert float(x.copy_to_host()[0]) == want

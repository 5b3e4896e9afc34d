"""A method's repeated call launches at once while nothing its key reads changed
(``guard.py``): random changes to a model between calls, each call's result
held to the same arithmetic done in Python. A change the guard missed would
replay the graph of before it (an old value) and fail here."""
import collections
import types

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from numba import cuda

import graphtrace as gt
from graphtrace.guard import Guard

FACTOR = 1.0
SETTINGS = types.ModuleType("guard_test_settings")   # a module of the program's own
SETTINGS.LR = 1.0


@cuda.jit
def axpy(a, x, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] += a * x[i]


def dev(v):
    return cuda.to_device(np.full(2, v, np.float64))


def bump(layer):
    return layer.scale * FACTOR


class Opt:
    def __init__(self, lr):
        self.lr = lr


class Layer:
    bias = 0.0   # a class-level setting

    def __init__(self, scale):
        self.scale, self.x = scale, dev(1.0)

    def __call__(self, s, w, opt):
        axpy[1, 2, s](bump(self) * opt.lr + self.bias, self.x, w)


class Model:
    def __init__(self):
        self.opt = Opt(1.0)
        self.layers = [Layer(1.0), Layer(2.0)]
        self.coef = {"k": 1.0}
        self.extra = collections.deque([Layer(0.5)])
        self.w = dev(0.0)
        self.epoch = 0   # read by nothing the graph does

    @gt.graph(backend="sim")
    def step(self, s):
        for layer in self.layers:
            layer(s, self.w, self.opt)
        for layer in self.extra:
            axpy[1, 2, s](layer.scale * self.coef["k"] * SETTINGS.LR, layer.x, self.w)


def expected(m) -> float:
    return sum(l.scale * FACTOR * m.opt.lr + l.bias for l in m.layers) + \
        sum(l.scale * m.coef["k"] * SETTINGS.LR for l in m.extra)


def _set_global(m, v):
    global FACTOR
    FACTOR = v


CHANGES = {
    "lr": lambda m, v: setattr(m.opt, "lr", v),
    "new opt": lambda m, v: setattr(m, "opt", Opt(v)),
    "scale": lambda m, v: setattr(m.layers[0], "scale", v),
    "new layer": lambda m, v: m.layers.__setitem__(1, Layer(v)),
    "append": lambda m, v: m.layers.append(Layer(v)),
    "coef": lambda m, v: m.coef.__setitem__("k", v),
    "deque item": lambda m, v: setattr(m.extra[0], "scale", v),
    "class bias": lambda m, v: setattr(Layer, "bias", v),
    "global": _set_global,
    "module attribute": lambda m, v: setattr(SETTINGS, "LR", v),
    "epoch": lambda m, v: setattr(m, "epoch", m.epoch + 1),
    "nothing": lambda m, v: None,
}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(CHANGES)), st.sampled_from([0.5, 2.0, 3.0])),
                min_size=1, max_size=8))
def test_random_changes_between_calls_are_never_missed(changes):
    global FACTOR
    m, total = Model(), 0.0
    try:
        m.step()
        total += expected(m)
        for name, v in changes:
            CHANGES[name](m, v)
            m.step()
            m.step()   # the second call takes the guard where nothing changed
            total += 2 * expected(m)
            assert m.w.copy_to_host().tolist() == pytest.approx([total] * 2), name
    finally:
        FACTOR, Layer.bias, SETTINGS.LR = 1.0, 0.0, 1.0
        Model.step.clear_cache()


def test_an_unchanged_call_launches_without_the_full_check(monkeypatch):
    m = Model()
    m.step()
    m.step()
    calls = []
    full = type(Model.step)._compiled
    monkeypatch.setattr(type(Model.step), "_compiled",
                        lambda *a, **k: calls.append(1) or full(*a, **k))
    m.step()
    m.step()
    assert calls == []
    m.opt.lr = 2.0
    m.step()
    assert calls == [1]
    Model.step.clear_cache()


def test_what_computes_a_value_when_read_gets_no_guard():
    class WithProperty:
        @property
        def lr(self):
            return FACTOR

    class WithGetattr:
        def __getattr__(self, name):
            return 1.0

    class Slotted:
        __slots__ = ("lr",)

    def fn(self, s):
        pass

    assert Guard.of(Model(), Model.step.fn) is not None
    for cls in (WithProperty, WithGetattr, Slotted):
        assert Guard.of(cls(), fn) is None, cls
    lib = types.SimpleNamespace(lr=1.0)
    assert Guard.of(lib, fn) is not None   # an attribute bag of the standard library


RATE = 1.0


@__import__("functools").wraps(__import__("json").dumps)   # __module__ says "json"
def _wrapped_rate():
    return RATE


class Holding:
    """Values reached other ways than plain attributes, changed in place between calls."""

    def __init__(self, kind):
        self.mod = SETTINGS if kind == "module held" else types.SimpleNamespace(LR=1.0)
        self.host = np.array([1.0]) if kind == "host array" else [1.0]
        self.raw = bytearray([1]) if kind == "bytearray" else [1]
        self.w, self.x = dev(0.0), dev(1.0)

    @gt.graph(backend="sim")
    def step(self, s):
        a = self.mod.LR * float(self.host[0]) * self.raw[0] * _wrapped_rate()
        axpy[1, 2, s](a, self.x, self.w)


def _set_rate(v):
    global RATE
    RATE = v


CHANGED_IN_PLACE = {
    "module held": lambda h: setattr(SETTINGS, "LR", 3.0),   # a module of the program's own
    "host array": lambda h: h.host.__setitem__(0, 3.0),
    "bytearray": lambda h: h.raw.__setitem__(0, 3),
    "wrapped helper": lambda h: _set_rate(3.0),   # a global of a helper whose __module__ lies
}


@pytest.mark.parametrize("kind", sorted(CHANGED_IN_PLACE))
def test_values_reached_through_modules_host_memory_and_wrapped_helpers_are_seen(kind):
    change = CHANGED_IN_PLACE[kind]
    h = Holding(kind)
    try:
        h.step()
        h.step()
        change(h)
        h.step()
        assert h.w.copy_to_host().tolist() == [5.0, 5.0]
    finally:
        SETTINGS.LR = 1.0
        _set_rate(1.0)
        Holding.step.clear_cache()


def _swap_class(m, v):
    class Other(Opt):
        pass
    m.opt.__class__ = Other


def _new_code(m, v):
    Layer.__call__.__code__ = Layer.__call__.__code__.replace()


MORE_CHANGES = {**CHANGES, "class of a held object": _swap_class, "method's code": _new_code,
                "key added": lambda m, v: m.coef.__setitem__("j", v),
                "deque grown": lambda m, v: m.extra.append(Layer(v)),
                "item deleted": lambda m, v: m.layers.pop()}


@pytest.mark.parametrize("name", sorted(MORE_CHANGES))
def test_the_compiled_check_tells_what_the_python_one_does(name):
    """guard.py's unchanged runs _buffers.c's guard_unchanged where tracing is
    compiled: it must tell every change (and no change) as the Python check does,
    and tell it itself for a model of plain objects (no fallback)."""
    from graphtrace import guard
    global FACTOR
    m, code = Model(), Layer.__call__.__code__
    try:
        g = Guard.of(m, Model.step.fn)
        assert g.unchanged() and g.unchanged_here()
        if guard._COMPILED is not None:
            assert guard._COMPILED(g.mappings, g.sequences, g.names, g.cells, g.functions,
                                   g.calls, g.types, guard._MISSING) is True
        MORE_CHANGES[name](m, 4.0)
        changed = name not in ("nothing",)
        assert g.unchanged_here() is not changed and g.unchanged() is not changed
    finally:
        FACTOR, Layer.bias, SETTINGS.LR = 1.0, 0.0, 1.0
        Layer.__call__.__code__ = code


class _HoldsDevice:
    def __init__(self):
        self.x = cuda.to_device(np.zeros(4))


def test_a_device_array_reshaped_in_place_is_a_change(monkeypatch):
    """A cupy array's geometry changes with the object kept (``x.shape = (2, 2)``):
    the snapshots held device arrays by identity alone, and such a change went
    unseen. (No cupy array without a GPU: a simulator array is given a geometry
    reader that reads a value the test changes.)"""
    from graphtrace import guard
    geometry = {"shape": (4,)}
    monkeypatch.setattr(guard, "geometry_reader", lambda a: lambda a: geometry["shape"],
                        raising=False)
    o = _HoldsDevice()
    g = Guard.of(o, _HoldsDevice.__init__)
    assert g is not None and g.unchanged() and g.unchanged_here()
    geometry["shape"] = (2, 2)
    assert not g.unchanged() and not g.unchanged_here()


GLOBAL_MODEL = None


@gt.graph(backend="sim")
def _global_step(s):
    m = GLOBAL_MODEL
    for layer in m.layers:
        layer(s, m.w, m.opt)
    for layer in m.extra:
        axpy[1, 2, s](layer.scale * m.coef["k"] * SETTINGS.LR, layer.x, m.w)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(CHANGES)), st.sampled_from([0.5, 2.0, 3.0])),
                min_size=1, max_size=8))
def test_random_changes_to_what_a_functions_names_hold_are_never_missed(changes):
    """The same model held by a global name, stepped by a function: its repeated
    calls are checked by the same snapshots (not by the full check: a repeated
    call with nothing changed takes them)."""
    global FACTOR, GLOBAL_MODEL
    GLOBAL_MODEL, total = Model(), 0.0
    m, cls, full = GLOBAL_MODEL, type(_global_step), type(_global_step)._reached_same
    checks: list = []
    try:
        cls._reached_same = lambda *a, **k: checks.append(1) or full(*a, **k)
        _global_step()
        _global_step()
        assert checks == []
        cls._reached_same = full
        total += 2 * expected(m)
        for name, v in changes:
            CHANGES[name](m, v)
            _global_step()
            _global_step()   # the second call takes the guard where nothing changed
            total += 2 * expected(m)
            assert m.w.copy_to_host().tolist() == pytest.approx([total] * 2), name
    finally:
        cls._reached_same = full
        FACTOR, Layer.bias, SETTINGS.LR, GLOBAL_MODEL = 1.0, 0.0, 1.0, None
        _global_step.clear_cache()


def test_an_unchanged_call_of_a_function_launches_without_the_full_check(monkeypatch):
    global GLOBAL_MODEL
    GLOBAL_MODEL = Model()
    try:
        _global_step()
        _global_step()
        calls = []
        full = type(_global_step)._reached_same
        monkeypatch.setattr(type(_global_step), "_reached_same",
                            lambda *a, **k: calls.append(1) or full(*a, **k))
        _global_step()
        _global_step()
        assert calls == []
        GLOBAL_MODEL.opt.lr = 2.0
        _global_step()
        assert calls == [1]
    finally:
        GLOBAL_MODEL = None
        _global_step.clear_cache()

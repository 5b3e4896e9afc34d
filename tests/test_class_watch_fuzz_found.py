"""Class state a decorated method reads that changes between calls, found by a
differential fuzzer of the host Python state (each replayed the first trace's
graph, with no warning): a method or property of ``self``'s class that a
plain helper handed ``self`` calls or reads, put on the class anew
(``Model.rate = ...``)."""
import sys

import numpy as np
from numba import cuda

import graphtrace as gt

_LR = 1.0


@cuda.jit
def add(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += a


def _run(fn) -> float:
    x = cuda.to_device(np.zeros(2))
    fn(x)
    return float(x.copy_to_host()[0])


# --- a method of self's class a helper handed self calls

def _call_rate(s, o, x):
    add[1, 2, s](x, float(o.rate()))


def _two_deep(s, o, x):   # a helper calling another, which calls the method
    _call_rate(s, o, x)


def _read_scale(s, o, x):
    add[1, 2, s](x, float(o.scale))


def _call_coef(s, o, x):
    add[1, 2, s](x, float(o.coef()))


def _call_lr(s, o, x):
    add[1, 2, s](x, float(o.lr()))


class _Base:
    def rate(self):
        return 1.0


class _Model(_Base):
    @property
    def scale(self):
        return 1.0

    @classmethod
    def coef(cls):
        return 1.0

    def lr(self):   # reads a global
        return _LR

    @gt.graph(backend="sim")
    def rate_step(self, s, x):
        _call_rate(s, self, x)

    @gt.graph(backend="sim")
    def deep_step(self, s, x):
        _two_deep(s, self, x)

    @gt.graph(backend="sim")
    def scale_step(self, s, x):
        _read_scale(s, self, x)

    @gt.graph(backend="sim")
    def coef_step(self, s, x):
        _call_coef(s, self, x)

    @gt.graph(backend="sim")
    def lr_step(self, s, x):
        _call_lr(s, self, x)


def test_a_method_a_helper_handed_self_calls_put_on_the_class_anew(monkeypatch):
    """The class was not watched by the names of the methods the helper called."""
    m = _Model()
    assert _run(m.rate_step) == _run(m.deep_step) == 1.0
    monkeypatch.setattr(_Model, "rate", lambda self: 3.0, raising=False)   # an override
    assert _run(m.rate_step) == _run(m.deep_step) == 3.0
    monkeypatch.setattr(_Base, "rate", lambda self: 4.0)   # the base's, overridden
    assert _run(m.rate_step) == 3.0
    monkeypatch.undo()
    assert _run(m.rate_step) == _run(m.deep_step) == 1.0
    monkeypatch.setattr(_Base, "rate", lambda self: 4.0)   # the base's, run
    assert _run(m.rate_step) == _run(m.deep_step) == 4.0


def test_a_property_or_class_method_a_helper_reads_put_on_the_class_anew(monkeypatch):
    m = _Model()
    assert _run(m.scale_step) == _run(m.coef_step) == 1.0
    monkeypatch.setattr(_Model, "scale", property(lambda self: 3.0))
    monkeypatch.setattr(_Model, "coef", classmethod(lambda cls: 3.0))
    assert _run(m.scale_step) == _run(m.coef_step) == 3.0


def test_a_global_a_method_a_helper_calls_reads(monkeypatch):
    """The method's globals were not the graph's: a new ``_LR`` was not seen."""
    m = _Model()
    assert _run(m.lr_step) == 1.0
    monkeypatch.setattr(sys.modules[__name__], "_LR", 3.0)
    assert _run(m.lr_step) == 3.0


# --- a class value read through the class where the instance holds one of its own

class _Sub:
    N = 3.0


class _Shadowed:
    N = 3.0

    def __init__(self):
        self.sub = _Sub()

    @classmethod
    def n(cls):
        return cls.N

    @gt.graph(backend="sim")
    def by_type(self, s, x):
        add[1, 2, s](x, float(type(self).N))

    @gt.graph(backend="sim")
    def by_dunder(self, s, x):
        add[1, 2, s](x, float(self.__class__.N))

    @gt.graph(backend="sim")
    def by_local(self, s, x):
        cls = type(self)
        add[1, 2, s](x, float(cls.N))

    @gt.graph(backend="sim")
    def by_classmethod(self, s, x):
        add[1, 2, s](x, float(self.n()))

    @gt.graph(backend="sim")
    def by_held_type(self, s, x):
        add[1, 2, s](x, float(type(self.sub).N))

    @gt.graph(backend="sim")
    def by_self(self, s, x):   # the instance's own
        add[1, 2, s](x, float(self.N))


_THROUGH_CLASS = ("by_type", "by_dunder", "by_local", "by_classmethod", "by_held_type")


def test_a_class_value_read_through_the_class_an_instance_value_hides(monkeypatch):
    """The key held the instance's value (``m.N``) by the name alone: ``Model.N = 0``
    replayed the class's first value."""
    m = _Shadowed()
    assert [_run(getattr(m, f)) for f in _THROUGH_CLASS] == [3.0] * 5
    m.N, m.sub.N = 1.0, 1.0   # the instance's own: the class's still read
    assert [_run(getattr(m, f)) for f in _THROUGH_CLASS] == [3.0] * 5
    assert _run(m.by_self) == 1.0
    monkeypatch.setattr(_Shadowed, "N", 0.0)
    monkeypatch.setattr(_Sub, "N", 0.0)
    assert [_run(getattr(m, f)) for f in _THROUGH_CLASS] == [0.0] * 5
    assert _run(m.by_self) == 1.0
    m.N, m.sub.N = 2.0, 2.0   # the instance's changed alone: the class's read
    assert [_run(getattr(m, f)) for f in _THROUGH_CLASS] == [0.0] * 5
    assert _run(m.by_self) == 2.0

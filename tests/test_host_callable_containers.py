"""A graph method whose object holds a callable container (a namedtuple, a
dataclass or a list subclass with a ``__call__``) and hands one of its methods
to ``s.host`` (``s.host(self.sink.read, t)``).

Before, the cache key held such an attribute as itself, compared by its own
``__eq__`` and hashed by its contents: a namedtuple holding an array raised
``TypeError: unhashable type: 'numpy.ndarray'`` at the first call, a dataclass
or a list subclass ``TypeError: unhashable type``. It is held by identity now:
another one put in its place traces the graph anew.
"""
import collections
import dataclasses

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt

SEEN = []


class _Tuple(collections.namedtuple("_Tuple", "buf")):
    __slots__ = ()

    def read(self, _tick):
        SEEN.append(float(self.buf[0]))

    def __call__(self, tick):
        self.read(tick)


@dataclasses.dataclass
class _Data:
    buf: object

    def read(self, _tick):
        SEEN.append(float(self.buf[0]))

    def __call__(self, tick):
        self.read(tick)


class _List(list):
    def read(self, _tick):
        SEEN.append(float(self[0][0]))

    def __call__(self, tick):
        self.read(tick)


class _Model:
    def __init__(self, sink):
        self.sink = sink

    @gt.graph(backend="sim")
    def step(self, s, x, h, tick):
        s.copy(h, x)
        s.host(self.sink.read, tick)


class _Whole(_Model):
    @gt.graph(backend="sim")
    def step(self, s, x, h, tick):
        s.copy(h, x)
        s.host(self.sink, tick)


_MAKERS = {"namedtuple": _Tuple, "dataclass": _Data}


@pytest.mark.parametrize("kind", sorted(_MAKERS))
def test_a_callable_container_held_by_self_keys_the_graph_by_identity(kind):
    make = _MAKERS[kind]
    tick, a, b = gt.pinned_empty(1), gt.pinned_empty(4), gt.pinned_empty(4)
    m = _Model(make(a))
    m.step(cuda.to_device(np.full(4, 7.0)), b, tick)   # traced: no error
    m.sink = make(b)   # another one, holding the array the calls hand as h
    for i in range(10):
        a[:] = -2.0
        SEEN.clear()
        m.step(cuda.to_device(np.full(4, float(i))), b, tick)
        assert SEEN == [float(i)]


@pytest.mark.parametrize("kind", sorted(_MAKERS) + ["list"])
def test_a_callable_container_handed_whole_keys_the_graph_by_identity(kind):
    make = _MAKERS.get(kind, lambda buf: _List([buf]))
    tick, a, b, h = (gt.pinned_empty(1), gt.pinned_empty(4), gt.pinned_empty(4),
                     gt.pinned_empty(4))
    a[:], b[:] = 1.0, 2.0
    m = _Whole(make(a))
    SEEN.clear()
    m.step(cuda.to_device(np.full(4, 7.0)), h, tick)   # traced: no error
    m.sink = make(b)
    m.step(cuda.to_device(np.full(4, 7.0)), h, tick)
    assert SEEN == [1.0, 2.0]   # the one it holds now


@dataclasses.dataclass
class _Counter:
    n: int = 0

    def __call__(self, _h):
        self.n += 1


class _Tally(list):
    def __call__(self, h):
        self.append(float(h[0]))


COUNT = _Counter()
TALLY = _Tally()


def _global_counter(s, x, h):
    s.copy(h, x)
    s.host(COUNT, h)


def _global_tally(s, x, h):
    s.copy(h, x)
    s.host(TALLY, h)


def _closure_counter():
    count = _Counter()

    def f(s, x, h):
        s.copy(h, x)
        s.host(count, h)
    return f, count


@pytest.mark.parametrize("form", ["global", "closure"])
def test_a_callable_dataclass_a_name_holds_handed_whole_to_s_host_runs(form):
    """``s.host(COUNT, h)`` with a global (or closure) callable dataclass: its
    class compares its fields and does not hash, and the cache lookup of the
    first call raised ``TypeError: unhashable type``. Keyed by identity now."""
    if form == "global":
        body, count = _global_counter, COUNT
    else:
        body, count = _closure_counter()
    count.n = 0
    f = gt.graph(body, backend="sim")
    h = gt.pinned_empty(4)
    for _ in range(3):
        f(cuda.to_device(np.ones(4)), h)
    assert count.n == 3
    assert f.cache_info().misses == 1


def test_a_callable_list_subclass_a_global_holds_handed_whole_to_s_host_runs():
    TALLY.clear()
    f = gt.graph(_global_tally, backend="sim")
    h = gt.pinned_empty(4)
    for i in range(3):
        f(cuda.to_device(np.full(4, float(i))), h)   # (raised TypeError: unhashable)
    assert TALLY == [0.0, 1.0, 2.0]

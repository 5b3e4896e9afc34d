"""A host callback that is a method of a list, tuple or dict subclass of the
program's own holding device arrays as its items (``class Bufs(list)`` whose
``dump`` reads ``self[0].copy_to_host()``) is refused at its ``s.host`` line, as
one holding them by an attribute is; one that only reads its items' shape, or reads an
item holding no device array, runs."""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of

SEEN = []


class _ListBufs(list):
    def dump(self):
        SEEN.append(self[0].copy_to_host())

    def looped(self):
        for d in self:
            SEEN.append(d.copy_to_host())

    def sized(self):
        SEEN.append(self[0].shape[0])

    def other(self):   # an item holding numbers
        SEEN.append(self[1] * 2)


class _TupleBufs(tuple):
    def dump(self):
        SEEN.append(self[0].copy_to_host())


class _DictBufs(dict):
    def dump(self):
        SEEN.append(self["d"].copy_to_host())

    def other(self):
        SEEN.append(self["n"] * 2)


_MADE = {"list": lambda d: _ListBufs([d, 1.0]), "tuple": lambda d: _TupleBufs((d, 1.0)),
         "dict": lambda d: _DictBufs(d=d, n=1.0)}


@pytest.mark.parametrize("kind,method", [("list", "dump"), ("list", "looped"),
                                         ("tuple", "dump"), ("dict", "dump")])
def test_a_container_subclass_callback_reading_its_device_items_is_refused(kind, method):
    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(getattr(_MADE[kind](d), method))               # subclass-device-items
    with pytest.raises(gt.ArgumentError) as e:
        f(cuda.to_device(np.ones(8)))
    assert e.value.source[1] == line_of(__file__, "subclass-device-items"), str(e.value)
    assert "holds device memory (d) by item" in str(e.value), str(e.value)
    assert "a callback cannot touch the GPU" in str(e.value), str(e.value)


@pytest.mark.parametrize("kind,method", [("list", "sized"), ("list", "other"),
                                         ("dict", "other")])
def test_a_container_subclass_callback_not_reading_its_device_items_runs(kind, method):
    held = _MADE[kind](cuda.to_device(np.ones(8)))
    SEEN.clear()

    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(getattr(held, method))
    f(cuda.to_device(np.ones(8)))
    assert SEEN[-1] in (8, 2.0), SEEN


class _Last(list):
    def dump(self):
        SEEN.append(self[-1].copy_to_host())

    def first(self):   # an item holding numbers, by its index from the end
        SEEN.append(self[-2] * 2)


class _Named(list):
    def dump(me):
        SEEN.append(me[0].copy_to_host())

    def last(this):
        SEEN.append(this[-1].copy_to_host())


@pytest.mark.parametrize("cls,method", [(_Last, "dump"), (_Named, "dump"), (_Named, "last")])
def test_a_callback_reading_its_device_item_from_the_end_or_by_another_name_is_refused(
        cls, method):
    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(getattr(cls([1.0, d]) if cls is _Last else cls([d]), method))   # by-end
    with pytest.raises(gt.ArgumentError) as e:
        f(cuda.to_device(np.ones(8)))
    assert e.value.source[1] == line_of(__file__, "by-end"), str(e.value)
    assert "holds device memory (d) by item" in str(e.value), str(e.value)


def test_a_callback_reading_a_number_item_from_the_end_runs():
    held = _Last([1.0, cuda.to_device(np.ones(8))])
    SEEN.clear()

    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(held.first)
    f(cuda.to_device(np.ones(8)))
    assert SEEN[-1] == 2.0, SEEN

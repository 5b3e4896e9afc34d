"""graphtrace's own ``getattr_static`` finds what ``inspect.getattr_static`` finds,
without comparing classes by ``==`` or keeping them (Python 3.12's does both)."""
import collections
import gc
import inspect
import weakref

import pytest

from graphtrace.static_attrs import getattr_static


_RAN = []   # what of the objects' own code ran


class _Meta(type):
    tag = "meta"


class _Data:
    def __get__(self, obj, owner=None):
        return "descriptor"

    def __set__(self, obj, value):
        pass


class _Plain(metaclass=_Meta):
    kept = 1
    data = _Data()

    def __init__(self):
        self.__dict__.update(own=2, data="shadowed", kept=3)

    def method(self):
        pass

    @property
    def prop(self):
        _RAN.append("prop")

    def __getattr__(self, name):
        _RAN.append(name)
        raise AttributeError(name)


class _Slotted:
    __slots__ = ("a",)

    def __init__(self):
        self.a = 1


class _Sub(_Plain):
    pass


_CASES = [(_Plain(), n) for n in ("kept", "own", "data", "method", "prop", "tag", "none")] + \
    [(_Plain, n) for n in ("kept", "data", "tag", "mro", "none")] + \
    [(_Sub(), "kept"), (_Sub, "tag"), (_Slotted(), "a"), (_Slotted(), "none"),
     (3, "real"), (int, "from_bytes"), (type, "mro"), (collections, "OrderedDict")]


@pytest.mark.parametrize("obj, name", _CASES)
def test_it_finds_what_inspect_finds(obj, name):
    missing, ran = object(), len(_RAN)
    assert getattr_static(obj, name, missing) is inspect.getattr_static(obj, name, missing)
    assert len(_RAN) == ran
    if inspect.getattr_static(obj, name, missing) is missing:
        with pytest.raises(AttributeError):
            getattr_static(obj, name)


class _Symbolic(type):
    def __eq__(cls, other):
        raise TypeError("no truth value")

    __hash__ = type.__hash__


class _Odd(metaclass=_Symbolic):
    x = 1


def test_a_class_comparing_oddly_is_not_compared():
    assert getattr_static(_Odd(), "x") == 1 and getattr_static(_Odd, "x") == 1


def test_a_class_looked_at_is_not_kept():
    def made():
        t = collections.namedtuple("T", "a")
        getattr_static(t(1), "a")
        getattr_static(t, "a")
        return weakref.ref(t)
    ref = made()
    gc.collect()
    assert ref() is None

"""The forms in which a cache key holds values by value (``_typed``): each value with
its type, as ``scalar.value_key`` holds a number (1, 1.0 and True apart, -0.0 apart
from 0.0, a NaN equal to itself), a long run of values of one type (a lookup table
of a million floats) made at once, in a few passes at C speed (``_run``); and the
tuples and containers held by names so (``_Held``, ``Unwatched``).
"""
from __future__ import annotations

import operator
from array import array

from . import regions as _regions
from .scalar import value_key

__all__ = ["Unwatched"]


def _typed(v):
    """``v`` with the type of every value in it (a long run of values of one type
    at once: ``_run``)."""
    if type(v) is tuple:
        run = _run(v) if len(v) >= _RUN else None
        return run if run is not None else (tuple, tuple(map(_typed, v)))
    if type(v) is frozenset:
        run = _run(v) if len(v) >= _RUN else None
        return run if run is not None else (frozenset, frozenset(map(_typed, v)))
    return (type(v), value_key(v))


_RUN = 32   # from this many values on, a tuple or frozenset of one type is a _Run


def _run(v, kind=None):
    """``_typed``'s form of a tuple or frozenset ``v`` of values of one type (a lookup
    table of a million floats read by index), made in a few passes at C speed: the
    type, and the values as they are (those whose ``value_key`` is the value
    itself: ints, strings...) or, for floats, their bits, which tell -0.0 from 0.0
    and keep a NaN equal to itself as ``value_key`` does; of pairs (a dict's items),
    the ``_typed`` forms of their keys and of their values. None where the values
    are of several types or of another (the per-value form then: either way, two
    tuples of typed values are equal where every value and its type are).
    ``kind``: the one type of the values, where already told."""
    if type(v) is tuple:
        t = kind or _one_type(v)
    else:   # a frozenset
        t = type(next(iter(v)))
        if operator.countOf(map(type, v), t) != len(v):
            return None
    if t is tuple and type(v) is tuple:   # pairs (a dict's items): keys and values apart
        if operator.countOf(map(len, v), 2) != len(v):
            return None
        return tuple, _Run(tuple, (_typed(tuple(map(_KEY, v))), _typed(tuple(map(_VALUE, v)))))
    if t is float and type(v) is tuple or t in _AS_IS:
        return type(v), _Run(t, _float_bits(v) if t is float else v)
    return None   # (a set of floats: its order, which the bits follow, is no value)


def _one_type(v):
    """The one exact type of the items of an exact list or tuple; None where it is
    empty or they are of several types (``_buffers.c``'s ``one_type`` where built:
    a pointer read per item)."""
    fast = _regions.TAKE[0]
    if fast is not None:
        return fast.one_type(v)
    t = type(v[0]) if v else None
    return t if t is not None and operator.countOf(map(type, v), t) == len(v) else None


def _float_bits(v) -> bytes:
    """The doubles of an exact tuple or list of floats, as bytes (``_buffers.c``'s
    ``float_bits`` where built)."""
    fast = _regions.TAKE[0]
    return fast.float_bits(v) if fast is not None else array("d", v).tobytes()


_AS_IS = frozenset({int, bool, str, bytes, type(None)})   # value_key(x) is x
_KEY, _VALUE = operator.itemgetter(0), operator.itemgetter(1)


class _Run:
    """Many values of one type, as ``_run`` keeps them: compared whole at C speed,
    hashed by their count and their ends (a key hashed at every call does not hash
    a million numbers; equal runs hash the same)."""

    __slots__ = ("kind", "items")

    def __init__(self, kind, items):
        self.kind, self.items = kind, items

    def __eq__(self, other):
        return type(other) is _Run and other.kind is self.kind and other.items == self.items

    def __hash__(self):
        items = self.items
        ends = (items[:64], items[-64:]) if type(items) is not frozenset else items
        return hash((self.kind, len(items), ends))


class _Held:
    """A tuple or frozenset held by a name, as the cache key holds it: equal to
    another where every value in it has the same type too (1, 1.0 and True are
    equal but pack differently, so each is a graph of its own)."""

    __slots__ = ("value", "_typed")

    def __init__(self, value, typed=None):
        self.value, self._typed = value, typed if typed is not None else _typed(value)

    def __eq__(self, other):
        return type(other) is _Held and other._typed == self._typed

    def __hash__(self):
        return hash(self._typed)

    def __repr__(self):
        return repr(self.value)


class Unwatched(_Held):
    """The items of a list, set or dict (``pure_values``' form) compared before and
    after a trace where the key does not hold the container by itself (an item
    of a dict the code stores in, ``self.box["seen"]``; a global set the code
    changes in place): a change the trace made as a flag (``container_flags``)
    keys it and is made again by each replay, any other is left alone."""

    __slots__ = ()

    def __eq__(self, other):
        return type(other) is Unwatched and other._typed == self._typed

    def __hash__(self):
        return hash(self._typed)

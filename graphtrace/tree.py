"""One walk over argument trees: lists, tuples (namedtuples too) and dicts.

These are the containers a graph function's arguments may nest in (the cache
key walks them, ``function.walk``); everything else is a leaf. Recording,
binding, emission, simulation and printing walk recorded arguments with
these two functions, so a new kind of leaf is taught in one place.
"""
from __future__ import annotations

from .buffers import Buffer
from .probe import _has
from .scalar import Scalar

__all__ = ["tree_map", "leaves", "children", "rebuild", "materialize"]


def children(value) -> list | None:
    """``(key, child)`` pairs of a container (index or dict key); None for a leaf."""
    if isinstance(value, (list, tuple)):
        return list(enumerate(value))
    if isinstance(value, dict):
        return list(value.items())
    return None


def rebuild(value, items):
    """A container like ``value`` holding ``items`` (a dict gets ``value``'s keys)."""
    if isinstance(value, dict):
        return dict(zip(value.keys(), items))
    return type(value)(*items) if _has(value, "_fields") else type(value)(items)


def tree_map(fn, value):
    """``value`` with ``fn`` applied to every leaf, containers rebuilt alike."""
    if isinstance(value, (list, tuple)):
        return rebuild(value, [tree_map(fn, v) for v in value])
    if isinstance(value, dict):
        return {k: tree_map(fn, v) for k, v in value.items()}
    return fn(value)


def leaves(value, _within=None):
    """Every leaf of ``value``, depth first, in order; a container inside itself
    (a list appended to itself) is not walked again."""
    if isinstance(value, (list, tuple, dict)):
        within = set() if _within is None else _within
        if id(value) in within:
            return
        within.add(id(value))
        for v in value.values() if isinstance(value, dict) else value:
            yield from leaves(v, within)
        within.discard(id(value))
    else:
        yield value


def _traced(v):
    if isinstance(v, Buffer):
        return v.obj
    return v._value if isinstance(v, Scalar) else v


def materialize(value):
    """The Python value a recorded argument stood for when it was traced."""
    return tree_map(_traced, value)

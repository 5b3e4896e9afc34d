"""The contents of a list, set or dict a trace left, put back in place by a replay.

A trace that changed a container as a flag (``if not self.log: ...;
self.log.append("started")``: ``container_flags.py``) ran that Python once; each
call replaying its graph finds the container as the trace found it (the key
holds its items) and fills it as the trace left it (``Contents.refill``),
keeping the container itself, and the lists, sets and dicts it holds where they
are of the same type, as the eager code changing them in place would.
"""
from __future__ import annotations

import copy
from collections import deque

from .values import _Held, pure_values

__all__ = ["Contents", "contents_of"]

_FILLED = (list, dict, set, deque)


class Contents:
    """A copy of a container of values (``pure_values``), compared by its items."""

    __slots__ = ("copy", "form")

    def __init__(self, v, form):
        self.copy, self.form = copy.deepcopy(v), _Held(form)

    def __eq__(self, other):
        return type(other) is Contents and other.form == self.form

    def __hash__(self):
        return hash(self.form)

    def __repr__(self):
        return f"Contents({self.copy!r})"

    def refill(self, target) -> None:
        """Make ``target`` (a container of the type copied) hold what the copy holds,
        in place; TypeError where it is another kind of object."""
        if type(target) is not type(self.copy):
            raise TypeError(f"{type(target).__name__} is not {type(self.copy).__name__}")
        _refill(target, self.copy)


def contents_of(v):
    """``Contents`` of ``v`` where it is a list, set, dict or deque of values alone
    (a subclass too: ``OrderedDict``, ``defaultdict``), else None."""
    if not isinstance(v, _FILLED):
        return None
    form = pure_values(v)
    return None if form is None else Contents(v, form)


def _refill(target, source) -> None:
    if isinstance(target, dict):
        items = [(k, _kept(target.get(k, _NO), x)) for k, x in source.items()]
        target.clear()   # (in the copy's order: the key holds a dict's items in order)
        target.update(items)
    elif isinstance(target, set):
        target.clear()
        target.update(source)
    elif isinstance(target, list):
        target[:] = [_kept(target[i] if i < len(target) else _NO, x)
                     for i, x in enumerate(source)]
    else:   # a deque
        items = [_kept(target[i] if i < len(target) else _NO, x) for i, x in enumerate(source)]
        target.clear()
        target.extend(items)


def _kept(old, new):
    """What a refilled container holds where the copy holds ``new``: ``old``, refilled,
    where it is a container of the same type, else a copy of ``new``."""
    if type(old) is type(new) and isinstance(old, _FILLED):
        _refill(old, new)
        return old
    return copy.deepcopy(new)


_NO = object()

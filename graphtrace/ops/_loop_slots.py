"""The slots a block's snapshots hold, for ``_loop_state.py``.

``_slots`` lists, nearest first, the slots under one name: numbers, arrays,
strings, slices, Enum members, None, kernels and functions (``work_callable``:
by their identity) it reaches through the containers (a
numpy object array's items too), the objects and the classes and modules of the
program's own it holds, ``_DEPTH`` levels deep, with the lengths of those
containers, a dict's order and what an iterator has left (``_left``);
``_shadowed`` the attributes a body gave an object over its class's value.
``LoopState`` compares two such snapshots. ``Slots`` keeps, for a trace, the
slots of each name with what the walk read of the mutable things on its way
(``_noted``), and walks the name anew only where that has changed.
"""
from __future__ import annotations

import enum
import operator
import sys
import types
import zlib
from collections import deque
from itertools import chain

import numpy as np

from ..arrays import as_buffer, is_array
from ..chains import MISSING
from ..owners import (_PLAIN_BASES, _attr, _attributes, _graph_class, held_attributes,
                      own_holder, own_object)
from ..scalar import Scalar
from ..static_attrs import getattr_static
from ..values import _is_number
from ._loop_paths import _ITEMS, _LEN, _MAX_ITEMS, _NEXT, _ORDER, _resolve
from ._loop_work import work_callable


_DEPTH = 4          # names, then three levels of containers and objects
_PER_ROOT = 1024    # nor more items of containers than this under one name
_BY_VALUE = 4096    # a host array of this many bytes at most: compared by its values,
_BY_DIGEST = 1 << 26   # one of this many by a digest of them


def _indices(v) -> bool:
    """A small host array of numbers (indices the body picks arrays by, a time
    ``t[0]`` or ``t[()]`` it hands a kernel, ``_BY_VALUE`` bytes at most):
    compared by its values."""
    return type(v) is np.ndarray and v.nbytes <= _BY_VALUE and v.dtype.kind in "iubfc"


def _contents(v):
    """What a host array of numbers holds: its bytes where it is small
    (``_indices``), a digest of them up to ``_BY_DIGEST`` bytes (told changed,
    not which values), else None (not watched)."""
    if _indices(v):
        return v.tobytes()
    if type(v) is np.ndarray and v.nbytes <= _BY_DIGEST and v.dtype.kind in "iubfc":
        return ("crc32", zlib.crc32(np.ascontiguousarray(v).view(np.uint8)))
    return None


def _slots(root, name: str, probes=None, at=((), None)) -> dict:
    """The slots under ``root`` (held by ``name``), nearest first: ``path -> (value,
    its bytes (a slice's bounds) where compared by value, (id of the container,
    step) or None)``. Every attribute of the objects, classes and modules on the
    way is taken; the items of containers, ``_PER_ROOT`` at most (a container
    whose items would pass that is measured, not looked into: the slots are
    then a ``_Cut``). ``probes``, a list, is given what the walk read of each
    mutable thing on its way (``_unchanged`` tells whether all still holds).
    ``at``: the steps from ``name`` to ``root`` and where it is held, for a
    walk from within another's (``_with_named``)."""
    out: dict = {}
    holders: set = set()   # the classes and modules walked (one imports another)
    level, items = [(root, (name,) + at[0], at[1])], 0
    while level:
        below = []
        for v, path, where in level:
            t = type(v)
            if t is str or t is bytes:   # mode = "b": by its value; tag = tag + "x": its length
                out[path] = (v, None, where)
                out[path + (_LEN,)] = (len(v), None, None)
                continue
            if t is Scalar:   # a dynamic number of the call: told by its identity
                out[path] = (v, None, where)
                continue
            if t is slice:   # a[sl]: by its bounds
                if all(type(x) is int or x is None for x in (v.start, v.stop, v.step)):
                    out[path] = (v, (v.start, v.stop, v.step), where)
                continue
            if t is np.ndarray and v.dtype.kind == "O":   # arrays in a numpy object array:
                if len(path) < _DEPTH and v.size <= _MAX_ITEMS and \
                        _fits(out, items, v.size):   # its items, as a list's
                    items += v.size
                    _probe(probes, v, _shape)
                    _probe(probes, v, _flat)
                    keys = range(v.size) if v.ndim == 1 else np.ndindex(v.shape)
                    below += [(x, path + (("[]", k),), (id(v), ("[]", k)))
                              for k, x in zip(keys, v.flat)]
                continue
            try:
                kept = _is_number(v) or is_array(v)
            except Exception:  # noqa: BLE001  (an object's own interface raising: none)
                continue
            if kept:
                out[path] = (v, _contents(v), where)
                if t is np.ndarray:   # (its values changed in place)
                    _probe(probes, v, _contents)
                continue
            left = _left(v)
            if left is not None:   # next(it): by what it has left
                out[path + (_NEXT,)] = (left, None, (id(v), _NEXT))
                _probe(probes, v, _left)
                continue
            if v is None or isinstance(v, enum.Enum):   # prev = a, ph = Phase.RUN: by
                out[path] = (v, None, where)   # its identity
                continue
            if work_callable(v):   # kern = mul, step = mul_step: by its identity
                out[path] = (v, None, where)
                if t is not types.FunctionType and not _graph_class(t):
                    continue   # (a function's own attributes: below)
            if len(path) >= _DEPTH:
                continue
            if t is types.FunctionType:   # step.i = 1 - step.i: a function's own attributes
                if _own_code(v):
                    _probe(probes, v, _function)
                    below += [(x, path + ((".", k),), (id(v), (".", k)))
                              for k, x in v.__dict__.items() if k[:2] != "__"]
                continue
            if _graph_class(t):   # a @gt.graph function's: those graphtrace does not keep
                if _own_code(_attr(v, "fn")):
                    _probe(probes, v, _graph_attributes)
                    held = _graph_attributes(v)
                    below += [(held[n + 1], path + ((".", held[n]),), (id(v), (".", held[n])))
                              for n in range(0, len(held), 2)]
                continue
            kind = _container(v)
            if kind is not None:   # lst.append(0) with x[:len(lst)]
                out[path + (_LEN,)] = (len(v), None, (id(v), _LEN))
                if t is not tuple:
                    _probe(probes, v, tuple)   # (its items; a dict's keys, and values:)
                    if kind is dict:
                        _probe(probes, v, _values)
            if kind is dict and 1 < len(v) <= _MAX_ITEMS:   # d["a"] = d.pop("a") with
                out[path + (_ORDER,)] = (tuple(v), None, (id(v), _ORDER))   # d.values()
            if kind is list or kind is dict:
                if len(v) <= _MAX_ITEMS and _fits(out, items, len(v)):
                    items += len(v)
                    below += [(x, path + (("[]", k),), (id(v), ("[]", k))) for k, x in (
                        v.items() if kind is dict else enumerate(v))]
                elif len(v) > _MAX_ITEMS:   # (too long to look into: those the code
                    out[_CUT] = True        # names, d["new"], are walked: _with_named)
            elif kind is set:   # unordered: its items compared as a whole
                if len(v) <= _MAX_ITEMS and all(type(x) is str or type(x) is bytes or _is_number(x)
                                                for x in v):
                    out[path + (_ITEMS,)] = (frozenset(v), None, (id(v), _ITEMS))
            elif isinstance(v, tuple) and isinstance(_attr(t, "_fields"), tuple):
                below += [(x, path + ((".", k),), (id(v), (".", k)))   # a namedtuple's
                          for k, x in zip(t._fields, v)]                # items, by name
            elif own_object(v):
                _probe(probes, v, _object)
                mine = _attributes(v)
                below += [(x, path + ((".", k),), (id(v), (".", k))) for k, x in mine]
                cls, own = type(v), {k for k, _ in mine}
                if own_holder(cls):   # c.t read through it, held by its class: Ctr.t's slot
                    _probe(probes, cls, _holder)
                    below += [(x, path + ((".", k),), (id(cls), (".", k)))
                              for k, x in held_attributes(cls) if k not in own]
            elif own_holder(v) and id(v) not in holders:   # Bufs.cur, bufstate.cur: a class's
                holders.add(id(v))                         # or a module's, once a name
                _probe(probes, v, _holder)
                below += [(x, path + ((".", k),), (id(v), (".", k)))
                          for k, x in held_attributes(v)]
        level = below
    return _Cut(out) if out.pop(_CUT, False) else out


_CUT = ("*", "cut")   # (a key of the slots while walked: some items left out)


class _Cut(dict):
    """The slots of a name whose walk left out the items of a container past
    ``_PER_ROOT``: those the body's code names are walked too (``_with_named``)."""


def _fits(out: dict, items: int, more: int) -> bool:
    """Whether ``more`` items fit in a walk that took ``items``; if not, it is
    noted as cut (``_CUT`` in ``out``, taken out when it ends)."""
    if items + more <= _PER_ROOT:
        return True
    out[_CUT] = True
    return False


def _with_named(slots: dict, root, name: str, paths) -> dict:
    """``slots`` (a ``_Cut`` of ``root``, held by ``name``) with those under each of
    ``paths`` (steps the code names, ``mod.TABLES[4]``) that the walk left out."""
    out = dict(slots)
    for path in paths:
        if path[0] != name or len(path) < 2 or path in out or len(path) > _DEPTH:
            continue
        holder = _resolve({name: root}, path[:-1])
        v = _resolve({"": holder}, ("",) + path[-1:]) if holder is not MISSING else MISSING
        if v is not MISSING:
            for p, slot in _slots(v, name, None, (path[1:], (id(holder), path[-1]))).items():
                out.setdefault(p, slot)
    out.pop(_CUT, None)   # (a walk of one of them cut too)
    return out


def _probe(probes, v, what) -> None:
    """Note in ``probes`` (where a list) that the walk read ``what(v)``."""
    if probes is not None:
        probes.append((what, v))


def _noted(probes: list) -> tuple:
    """``probes`` as ``(what, the objects, what each held)`` by ``what``: for
    those compared by identity, the lengths of what each held and all of it
    in one tuple (a module's globals and a hundred lists of it: a few passes of
    Python's own code)."""
    by: dict = {}
    for what, v in probes:
        by.setdefault(what, []).append(v)
    out = []
    for what, objs in by.items():
        held = list(map(what, objs))
        out.append((what, objs, held if what in _BY_VALUE_PROBES else
                    (tuple(map(len, held)), tuple(chain.from_iterable(held)))))
    return tuple(out)


def _unchanged(noted: tuple) -> bool:
    """Whether each thing a walk noted (``_noted``) still holds what it held: the
    same objects (by identity), the same values (``_BY_VALUE_PROBES``)."""
    for what, objs, was in noted:
        try:
            held = list(map(what, objs))
        except Exception:  # noqa: BLE001  (an object's own lookup raising now)
            return False
        if what in _BY_VALUE_PROBES:
            if held != was:
                return False
        elif tuple(map(len, held)) != was[0] or \
                not all(map(operator.is_, chain.from_iterable(held), was[1])):
            return False
    return True


def _values(v) -> tuple:
    return tuple(dict.values(v))


def _flat(v) -> tuple:
    return tuple(v.flat)


def _shape(v) -> tuple:
    return v.shape


def _object(v) -> tuple:
    """What an object of the program's own holds: its class, its attributes' names
    and values."""
    return (type(v),) + tuple(x for pair in _attributes(v) for x in pair)


def _function(v) -> tuple:
    """What a function's own attributes hold: their names and values."""
    return tuple(x for pair in v.__dict__.items() for x in pair)


def _graph_attributes(v) -> tuple:
    """What a ``@gt.graph`` function's own attributes that graphtrace does not
    keep (``_fields``) hold: the program's (``step.i``), names and values."""
    kept = _attr(v, "_fields", frozenset())
    return tuple(x for pair in vars(v).items() if pair[0] not in kept and pair[0][:2] != "__"
                 for x in pair)


def _own_code(fn) -> bool:
    """Whether ``fn`` is a function of a module of the program's own (its
    attributes hold the program's state, ``step.calls``), not a library's."""
    module = sys.modules.get(_attr(fn, "__module__"))
    return module is None or own_holder(module)


def _holder(v) -> tuple:
    """What a module's globals, or a class's and its bases' dictionaries, hold."""
    if isinstance(v, types.ModuleType):
        d = _attr(v, "__dict__", {})
        return tuple(d) + tuple(d.values())
    return v.__mro__ + tuple(x for c in v.__mro__ if c not in _PLAIN_BASES
                             for d in (c.__dict__,) for x in (*d, *d.values()))


class Slots(dict):
    """The slots of the names loop and branch bodies began or ended with, in one
    trace: ``name -> (the value it held, the probes of its walk, its slots)``,
    taken again only where the name holds another value or something the walk
    read has changed (``taken``): a body reading a setting off a module of many
    globals costs a look at what the module holds, not a walk of it, at each
    block. ``regions``: what the code of the helpers the blocks call reads
    (``_loop_held._region``), kept for the trace as well."""

    def __init__(self):
        super().__init__()
        self.regions: dict = {}   # a helper's code -> (the globals it names, its _Region)

    def taken(self, v, name: str) -> dict:
        hit = self.get(name)
        if hit is not None and hit[0] is v and _unchanged(hit[1]):
            return hit[2]
        probes: list = []
        out = _slots(v, name, probes)
        self[name] = (v, _noted(probes), out)
        return out


def grown(before: dict, after: dict, now: dict, named=frozenset()) -> list:
    """The paths of the slots under a name that ``after`` holds and ``before`` did
    not, where the body gave an object an attribute, or a dict a key, that it
    did not have (``st.v = 3.0``, ``d["k"] = 3.0``; what such a new one holds,
    ``st.sub = Sub(v=1.0)``: ``st.sub.v``, ``st.l = [1.0]``: ``st.l[0]``; an
    object an item of a sequence of the same length holds, ``objs[0].v = 3.0``).
    Not an item of a list, a tuple or another sequence that was there before
    (its places shift), a length or an order, nor a key of a dict whose walk
    before left some of its items out, but one of ``named`` (the paths the
    code names, ``d["new"]``) that no slot was taken under before."""
    out = []
    for p in after:
        if p in before or len(p) < 2 or any(k != "." and k != "[]" for k, _ in p[1:]):
            continue
        if all(p[n][0] != "[]" or _keyed_before(before, p[:n], now) or
               _same_places(before, after, p[:n], now) or
               p[:n + 1] in named and not any(q[:n + 1] == p[:n + 1] for q in before)
               for n in range(1, len(p))):
            out.append(p)
    return out


def _same_places(before: dict, after: dict, path: tuple, now: dict) -> bool:
    """Whether the sequence at ``path`` (not a dict) had as many items before as
    after: an item of it holds what stands in its place (``objs[0]``)."""
    old, new = before.get(path + (_LEN,)), after.get(path + (_LEN,))
    return old is not None and new is not None and old[0] == new[0] and \
        not isinstance(_resolve(now, path), dict)


def _keyed_before(before: dict, path: tuple, now: dict) -> bool:
    """Whether a key new under the container at ``path`` is a new slot: the
    container is new (no length before), or a dict whose walk before took a slot
    under each of the keys it held then (its length, and as many keys)."""
    size = before.get(path + (_LEN,))
    if size is None:
        return True
    n = len(path)
    keys = {q[n] for q in before if len(q) > n and q[:n] == path and q[n][0] == "[]"}
    return isinstance(_resolve(now, path), dict) and size[0] == len(keys)


def _shadowed(before: dict, after: dict, now: dict) -> dict:
    """The attributes the body gave an object of the program's own, through
    attributes from a name, that its class holds a value for (``st.k += 1`` with
    ``class State: k = 0``): path -> the class's value, as the slot held it before."""
    out = {}   # (attributes are never cut: one missing before is new)
    for p, (_, _, where) in after.items():
        if p in before or len(p) < 2 or any(k != "." for k, _ in p[1:]):
            continue
        holder = _resolve(now, p[:-1])
        old = MISSING if holder is MISSING else \
            getattr_static(type(holder), p[-1][1], MISSING)
        leaf = _slots(old, p[0]).get((p[0],)) if old is not MISSING else None
        if leaf is not None:
            out[p] = leaf[:2] + (where,)
    return out


_ITERATORS = frozenset({"builtins", "_collections"})


def _left(v):
    """How many items an iterator of Python's own over a container (a list's, a
    tuple's, a range's, a dict's, a deque's) has left, or where a generator
    stands (the instruction it waits at, and what its names hold: numbers by
    value, else by identity), else None: told without running code of the
    program's."""
    t = type(v)
    if t is types.GeneratorType:
        f = v.gi_frame
        return None if f is None else (f.f_lasti, tuple(
            (k, x if _is_number(x) else id(x)) for k, x in f.f_locals.items()))
    if t.__module__ not in _ITERATORS or not hasattr(t, "__next__") or \
            not hasattr(t, "__length_hint__"):
        return None
    try:
        return operator.length_hint(v, -1)
    except Exception:  # noqa: BLE001  (one that cannot tell: not watched)
        return None


_PLAIN_METHODS = ("__iter__", "__len__", "__getitem__", "items", "keys", "values")


def _container(v):
    """``list`` (also a tuple, a deque, a bytearray), ``dict`` or ``set`` (also a
    frozenset) where ``v`` is one whose length and items are watched: of the
    type itself, or of a subclass whose reading runs no Python code of its own
    (``Counter``, ``defaultdict``, ``OrderedDict``; not a class defining
    ``__iter__`` or ``__getitem__``), else None."""
    t = type(v)
    if t is tuple:   # (a namedtuple's items are its attributes: not looked into)
        return list
    for base, kind in _KINDS:
        if isinstance(v, base):
            return kind if t is base or not any(
                isinstance(getattr_static(t, m, None), types.FunctionType)
                for m in _PLAIN_METHODS) else None
    return None


_KINDS = ((list, list), (deque, list), (bytearray, list), (dict, dict), (set, set),
          (frozenset, set))


def _changed(before: tuple, after: tuple) -> bool:
    (old, old_bytes, _), (new, new_bytes, _) = before, after
    if old is new:
        return old_bytes != new_bytes
    if is_array(old) and is_array(new):
        try:   # the same view made again (a = a.reshape(n), self.inner = self.u[1:-1])
            return not as_buffer(old).same_view(as_buffer(new)) or old_bytes != new_bytes
        except Exception:  # noqa: BLE001  (an array answering oddly: another one)
            return True
    if is_array(old) or is_array(new) or type(old) is not type(new) or type(old) is Scalar:
        return True
    if type(old) is frozenset:   # a set's items (their order is no change)
        return old != new
    try:
        return bool(old != new) or str(old) != str(new)   # -0.0 and 0.0: not the same
    except Exception:  # noqa: BLE001  (a number of a library's class answering oddly)
        return True


def _changed_values(old, old_bytes, new_bytes) -> list:
    """``(was, now)`` of the values a small host array held that the body changed
    (``t[0] += dt``), as numpy's numbers and as Python's."""
    if type(old_bytes) is not bytes or type(new_bytes) is not bytes or \
            len(old_bytes) != len(new_bytes):
        return []
    was, now = np.frombuffer(old_bytes, old.dtype), np.frombuffer(new_bytes, old.dtype)
    return [(v, w) for x, y in zip(was, now) if x.tobytes() != y.tobytes()
            for v, w in ((x, y), (x.item(), y.item()))]   # (float(t[0]) taken: either)


_BY_VALUE_PROBES = frozenset({_contents, _left, _shape})   # (the rest: by identity)

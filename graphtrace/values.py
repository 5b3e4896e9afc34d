"""What names and objects hold, as a cache key holds it: the arrays in lists,
tuples and dicts (``_leaves``) and the objects they depend on
(``identities``, ``unchanged``: compared by identity), the values held beside
them and by an object's attributes (``held_values``, ``instance_values``:
compared by value, ``_Held``), and kernels and functions (``callable_key``,
``_Same``: by identity).

``reach.py`` and ``holding.py`` build their keys from these; which objects
are the program's own, walked by ``held.py`` instead, is ``owners.py``'s to
tell. ``_MAX_DEPTH`` is how deep every walk of graphtrace goes.
"""
from __future__ import annotations

import enum
import operator
import types
from collections import deque
from functools import partial
from itertools import chain, repeat

import numpy as np

from . import regions as _regions
from .arrays import _kinds, is_array
from .chains import MISSING, NoKey
from .owners import _ARRAY_KINDS, _OWN, _PLAIN_CONTAINERS, _attributes, _has, own_object
from .scalar import value_key
from .tree import children as _children, more_children
from .typed_forms import _RUN, Unwatched, _Held, _one_type, _run, _typed


def children(v) -> list | None:
    """``(key, item)`` of a list, tuple or dict (``tree.children``), or of a deque
    (``RING = deque([a, b])``, ``self.ring``): a ring of buffers held by a name is
    walked as a list is, its items by index (``RING[0]``)."""
    items = _children(v)
    if items is None and isinstance(v, deque):
        return more_children(v)
    return items


__all__ = ["Identity", "bakes_values", "callable_key", "held_values", "identities", "instance_arrays",
           "instance_chains", "instance_held", "instance_values", "unchanged"]


_MAX_DEPTH = 8


def _leaves(v, label: str, depth: int = 0) -> list:
    """``(label, array)`` for the arrays in ``v``: an array, or lists, tuples and
    dicts of them (the containers an argument may be too, ``tree.children``)."""
    if is_array(v):
        return [(label, v)]
    out: list = []
    _collect(v, label, depth, out)
    return out


def _collect(v, label: str, depth: int, out: list) -> None:
    """Append to ``out`` the leaves of a value that is no array (``_leaves``).
    Items whose type is known to be of arrays are taken without a call: a list of
    a million arrays is walked in one loop (in compiled code where built:
    ``_buffers.c``'s ``leaves``, switched with ``regions.use_compiled_buffers``)."""
    if _plain_items(v):   # numbers alone (a lookup table): no leaves
        return
    fast = _regions.TAKE[0]
    if fast is not None and type(v) in _PLAIN_CONTAINERS:
        fast.leaves(v, label, depth, out, _item, _MAX_DEPTH)
        return
    items = children(v) if depth <= _MAX_DEPTH else None
    if items is None:
        return
    kinds = _kinds
    for k, x in items:
        if kinds.get(type(x)) in _ARRAY_KINDS:
            out.append((f"{label}[{k!r}]", x))
        else:
            _item(x, f"{label}[{k!r}]", depth + 1, out)


def held_values(v, label: str) -> tuple:
    """``(label, typed value)`` for the values (``_is_value``: numbers, strings...)
    held next to arrays in a list, tuple or dict reached by name or held by
    ``self``: a trace may read them besides the arrays (``PARAMS = (W, 2.0)``,
    ``STATE["lr"]``) and bake them in, so the cache key holds them by value. Only
    a container that holds an array, itself or deeper (a torch-style
    ``[{"params": [w], "lr": 0.1}]``), gives its values: a list of numbers beside
    it (a loss history a program appends to) gives none, as a list of numbers
    alone does not. Kernels and functions held at any depth
    (``LAYERS = [k1, k2]``) are held by identity: a trace launches or calls
    them, and bakes them in too."""
    found: list = []
    _held(v, label, 0, found)
    return tuple(found)


def _held(v, label: str, depth: int, found: list) -> bool:
    """``held_values``' walk of ``v``: whether it holds an array, at any depth (a
    torch-style ``[{"params": [w], "lr": 0.1}]`` gives its "lr")."""
    items = children(v) if depth <= _MAX_DEPTH else None
    if not items:
        return False
    kinds = _kinds
    if type(v) is not dict and all(kinds.get(t) in _ARRAY_KINDS for t in set(map(type, v))):
        return True   # arrays alone (a list of a million: types read at C speed)
    values: list = []
    arrays = False
    for k, x in items:
        if kinds.get(type(x)) in _ARRAY_KINDS:
            arrays = True
        elif _OWN.get(type(x)) and own_object(x):
            continue   # an object of the program's own: held.py's
        elif isinstance(x, (list, tuple, dict)) and not _is_value(x):
            arrays = _held(x, f"{label}[{k!r}]", depth + 1, found) or arrays
        elif _is_value(x):
            values.append((f"{label}[{k!r}]", _typed(x)))
        elif is_array(x):
            arrays = True
        elif _is_callable_object(x):
            found.append((f"{label}[{k!r}]", callable_key(x)))
    if arrays:
        found += values
    return arrays


class _Same:
    """A kernel or function in a cache key: equal only to itself (its own
    ``__eq__``, a cupy kernel's or a ``gt.kernel`` declaration's, is not asked)."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return type(other) is _Same and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)

    # the same for the same object: the retrace warning compares keys by their reprs,
    # so an object argument passed again is not one that keeps changing
    def __repr__(self):
        return f"<{type(self).__name__} of {type(self.obj).__name__} at {id(self.obj):#x}>"


class Identity(_Same):
    """An object the cache key holds by identity (a method's ``self``, what an
    argument object holds that is no value): the very object, whatever its
    ``__eq__``, kept alive by the key, so that no other object is given its id
    while a graph keyed by it is cached; equal to no ``_Same`` of the same
    object (a kernel in a key)."""

    __slots__ = ()
    __hash__ = _Same.__hash__

    def __eq__(self, other):
        return type(other) is Identity and other.obj is self.obj


def callable_key(v):
    """A kernel or function in a cache key: itself (``_Same``); a
    ``functools.partial`` holding arguments, itself and the values in them too
    (``partial(mix, coefs)``, ``partial(f, alpha=1.0)``): a trace bakes them in, and
    its list or keywords dict may be changed in place (``coefs[1] = 5.0``,
    ``p.keywords["alpha"] = 3.0``). Objects of the program's own in them are
    held.py's to walk; anything else by identity."""
    if type(v) is not partial or not (v.args or v.keywords):
        return _Same(v)
    return (_Same(v),) + tuple((k, _Held(x) if _is_value(x) or x is None else
                                _Held(form) if (form := pure_values(x)) is not None else
                                own_object(x) or _Same(x))
                               for k, x in list(enumerate(v.args)) + list(v.keywords.items()))


def bakes_values(v) -> bool:
    """Whether ``callable_key`` reads values that may change in place: a partial
    holding keywords or a container among its arguments."""
    return type(v) is partial and (bool(v.keywords) or any(
        isinstance(x, (list, dict)) for x in v.args))


def _holds_callables(v, depth: int = 0) -> bool:
    """A list, tuple or dict holding kernels or functions (``LAYERS = [k1, k2]``),
    which a trace bakes in: watched by identity as a container of arrays is."""
    if _plain_items(v):   # numbers alone (a lookup table): told at C speed
        return False
    items = children(v) if depth <= _MAX_DEPTH else None
    return items is not None and any(
        _is_callable_object(x) or _holds_callables(x, depth + 1)
        for _, x in items)


def _callables(v, depth: int = 0):
    """The kernels and functions a list, tuple or dict holds, nested ones too."""
    items = children(v) if depth <= _MAX_DEPTH else None
    for _, x in items or ():
        if _is_callable_object(x):
            yield x
        else:
            yield from _callables(x, depth + 1)


def _keyed_callables(v):
    """``(key, callable)`` of the kernels and functions a list, tuple or dict holds,
    nested ones too, each by the key of the item of ``v`` it lies in."""
    for key, x in children(v) or ():
        if _is_callable_object(x):
            yield key, x
        else:
            for inner in _callables(x):
                yield key, inner


def _plain_items(v) -> bool:
    """Whether ``v`` is an exact list, tuple or dict whose items (a dict's values) are
    plain values alone (``_PLAIN_VALUES``: numbers, strings, None), told by their
    types in one pass at C speed: a lookup table of a million floats holds no array,
    kernel or class, and is not walked item by item. False, at once, where its first
    item is none (a list of arrays)."""
    t = type(v)
    if t is dict:
        v = v.values()
    elif t is not list and t is not tuple:
        return False
    kind = type(next(iter(v), None))
    return kind in _PLAIN_VALUES and (t is not dict and _one_type(v) is kind or
                                      set(map(type, v)) <= _PLAIN_VALUES)


def _item(x, label: str, depth: int, out: list) -> None:
    """An item of a container, at ``depth``: a leaf, or walked into (an object of
    the program's own is held.py's to walk)."""
    if _OWN.get(type(x)) and own_object(x):
        return
    if is_array(x):
        out.append((label, x))
    else:
        _collect(x, label, depth, out)


# identities' marks: a list, a tuple, a dict opens; END closes
_MARKS = (object(), object(), object(), object())
_OPENS = {list: _MARKS[0], tuple: _MARKS[1], dict: _MARKS[2]}


def identities(v, out: list, depth: int = 0) -> bool:
    """Append to ``out`` every object ``v``'s leaves (``_leaves``) depend on, in
    order: each exact list, tuple or dict as a mark of its type, its items (and
    a dict's keys) and an end mark; any other object itself. Two values whose
    identities are the same objects have the same leaves under the same labels
    (a label is made of keys, compared by identity here). False (``out`` then
    unfinished) where ``v`` holds a subclass of one of those containers or
    nests deeper than the walk goes: the caller compares labels instead.
    ``_buffers.c``'s ``identities`` where built."""
    fast = _regions.TAKE[0]
    if fast is not None:
        return fast.identities(v, out, depth, _MAX_DEPTH, _MARKS)
    return _identities(v, out, depth)


def _identities(v, out: list, depth: int) -> bool:
    mark = _OPENS.get(type(v))
    if mark is None:   # a set, a deque, a bytearray change in place unseen: no vouching
        out.append(v)
        return not isinstance(v, _CONTAINERS) and type(v) not in _CHANGING
    if depth > _MAX_DEPTH:
        return False
    out.append(mark)
    if _plain_items(v):   # values alone (a lookup table): no container among them
        out.extend(chain.from_iterable(v.items()) if mark is _MARKS[2] else v)
        out.append(_MARKS[3])
        return True
    for k, x in (v.items() if mark is _MARKS[2] else zip(_NO_KEYS, v)):
        if k is not _NO_KEY:
            out.append(k)
        if isinstance(x, _CONTAINERS):
            if not _identities(x, out, depth + 1):
                return False
        else:
            out.append(x)
    out.append(_MARKS[3])
    return True


_CONTAINERS = (list, tuple, dict)
_CHANGING = frozenset({set, deque, bytearray})   # (exact types, as _buffers.c checks)
_NO_KEY = object()
_NO_KEYS = repeat(_NO_KEY)   # a list or tuple item has no key


def unchanged(v, held: list) -> bool:
    """Whether ``identities(v)`` would give the very objects of ``held`` (compiled:
    without making the list)."""
    fast = _regions.TAKE[0]
    if fast is not None:
        return fast.unchanged(v, held, 0, _MAX_DEPTH, _MARKS)
    now: list = []
    return _identities(v, now, 0) and len(now) == len(held) and all(map(operator.is_, now, held))


def _may_hold_arrays(v, depth: int = 0) -> bool:
    """None, or containers of nothing else: a place where an array may be put
    later (``BIAS = None``, ``EXTRAS = []``)."""
    if v is None:
        return True
    t = type(v)
    if t in _PLAIN_CONTAINERS:   # (lazily: a lookup table's first number answers)
        return depth <= _MAX_DEPTH and all(
            _may_hold_arrays(x, depth + 1) for x in (v.values() if t is dict else v))
    items = children(v) if depth <= _MAX_DEPTH else None
    return items is not None and all(_may_hold_arrays(x, depth + 1) for _, x in items)


def instance_arrays(obj, skip=frozenset()) -> list:
    """``(label, array)`` for the arrays an object holds in its attributes
    (``self.weights`` of a decorated method), lists and dicts of them too; but
    those of ``skip`` (a history its host callbacks keep: ``self_changes``)."""
    out = []
    for name, v in _attributes(obj):
        if name not in skip:
            out += _leaves(v, f"self.{name}")
    return out


def instance_held(obj) -> tuple:
    """``held_values`` of each attribute of ``obj`` (a decorated method's ``self``)."""
    return tuple(h for name, v in _attributes(obj) for h in held_values(v, f"self.{name}"))


def instance_chains(obj, chains) -> tuple:
    """The cache key's entries of ``self_chains`` read off ``obj`` now."""
    out = []
    for label, steps in chains:
        v = _followed(obj, steps, MISSING)   # (the key gone, another object: no value)
        out.append((label, type(v), _Held(v) if type(v) in _GROUPS else value_key(v))
                   if _is_value(v) else (label, None))
    return tuple(out)


def stored_chains(obj, chains) -> tuple:
    """The entries of the chains off ``obj`` the traced code stores (``self_chains``'
    ``kept``: ``self.state["init"]``), read before and after a trace
    (``Holdings.note_traced``): a value by value and type, one not there as
    ``NoKey.NONE`` (set later, as from None), a list, set or dict of values by
    its items (``Unwatched``: ``self.box["seen"].add("w")``), anything else by its
    type."""
    out = []
    for label, steps in chains:
        v = _followed(obj, steps, NoKey.NONE)   # (the key not there yet: NONE)
        form = pure_values(v) if isinstance(v, _WHOLES) else None
        out.append((label, type(v), _Held(v) if type(v) in _GROUPS else value_key(v))
                   if _is_value(v) or v is NoKey.NONE else (label, type(v), Unwatched(form))
                   if form is not None else (label, type(v)))
    return tuple(out)


def _followed(obj, steps, missing):
    """What the calls ``steps`` (``Chain.calls``) find off ``obj``; ``missing`` where
    one raises."""
    try:
        for step in steps:
            obj = step(obj)
    except Exception:  # noqa: BLE001  (whatever the object raises)
        return missing
    return obj


def instance_values(obj, names, by_keys=frozenset(), callbacks=frozenset(),
                    classed=frozenset()) -> tuple:
    """``(label, type, value)`` for the values an object holds in its attributes
    of ``names`` (``self.lr`` read by a decorated method: ``attribute_names``),
    watched by value as numbers reached by name are (``Reach.functions``); an
    attribute the method does not name (a call counter) is not; a partial by
    the values it holds (``callable_key``) but where the method hands it to
    ``s.host`` (``callbacks``: it reads them when it runs). ``classed``: the
    names the code reads through the class (``type(self).N``: ``class_reads``),
    whose class values are keyed too where the object's own hide them."""
    own, found, kernels = set(), [], []
    for name, v in _attributes(obj):
        own.add(name)
        if name in names and _is_value(v):
            found.append((name, v))
        elif name in names and (isinstance(v, _WHOLES) or _record(v)) and \
                name not in by_keys and (form := pure_values(v)) is not None:
            # for a in self.scales: baked; a namedtuple of values (self.rs.started,
            # replaced whole: self.rs = self.rs._replace(started=True)) by value too
            kernels.append((f"self.{name}", type(v), _Held(form)))
        elif name in names and _is_callable_object(v):   # self.kernel: by identity (a
            kernels.append((f"self.{name}", type(v),   # partial: its values too)
                            callable_key(v) if type(v) is partial and name not in callbacks
                            else _callable_identity(v)))
    mro = type(obj).__mro__
    for name in sorted(names - own):   # a class's value read through self (Model.lr)
        v = next((c.__dict__[name] for c in mro if name in c.__dict__), _ABSENT)
        if v is not _ABSENT and _is_value(v):
            found.append((name, v))
        elif v is not _ABSENT and name[:2] != "__" and isinstance(v, _WHOLES) and \
                name not in by_keys and (form := pure_values(v)) is not None:
            kernels.append((f"self.{name}", type(v), _Held(form)))   # Model.scales = [2.0]
        elif v is not _ABSENT and (_has(v, "py_func") or _is_callable_object(v)) and \
                not isinstance(v, (types.FunctionType, staticmethod, classmethod, property)):
            kernels.append((f"self.{name}", type(v),   # a class's kernel (step_kernel)
                            _callable_identity(v)))
    hidden = []   # type(self).N where the object holds an N of its own (m.N = 1)
    for name in sorted(classed & own) if classed else ():
        v = next((c.__dict__[name] for c in mro if name in c.__dict__), _ABSENT)
        if v is not _ABSENT and _is_value(v) and not isinstance(v, type):
            hidden.append((f"type(self).{name}", type(v),
                           _Held(v) if type(v) in _GROUPS else value_key(v)))
    return tuple((f"self.{name}", type(v), _Held(v) if type(v) in _GROUPS else value_key(v))
                 for name, v in found) + tuple(kernels) + tuple(hidden)


_ABSENT = object()


def _callable_identity(v):
    """A callable attribute in a cache key by identity: a bound method as itself
    (equal to another of the same function and object, made anew at each lookup),
    anything else in ``_Same``: an object of a class of its own ``__eq__`` (a
    namedtuple, a dataclass, a list subclass with a ``__call__``) compares its
    contents, which may not hash (an array it holds), and where its methods are
    host callbacks, read those when they run."""
    return v if type(v) is types.MethodType else _Same(v)


def helper_key(v):
    """A helper a function reaches by name in its cache key (``Reach.functions``):
    as itself, but one that does not hash, by identity (``_callable_identity``):
    an object of a class comparing its contents (a callable dataclass, a list or
    dict subclass with a ``__call__``, handed whole to ``s.host``)."""
    try:
        hash(v)
    except Exception:  # noqa: BLE001  (unhashable: TypeError; an object's own error)
        return _callable_identity(v)
    return v


def _is_callable_object(v) -> bool:
    """A kernel or function object a trace may call, watched by identity: anything
    callable but a class or an array (``gt.kernel(k, ...)``, a cupy ``RawKernel``,
    ``functools.partial``, a function held by an attribute)."""
    if isinstance(v, type) or is_array(v):
        return False
    return callable(v) or _has(v, "kernel") and _has(v, "intents")   # gt.kernel's


# containers of values a name or an attribute may hold, read whole (for c in COEFS,
# "x" in FLAGS) and keyed by value (pure_values); tuples and frozensets are values
_WHOLES = (list, dict, set, deque)


def _record(v) -> bool:
    """A tuple of a subclass (a namedtuple's): no value itself (``_is_value``), but
    read whole by value where it holds values alone (``pure_values``)."""
    return isinstance(v, tuple) and type(v) is not tuple


def _is_number(v) -> bool:
    return isinstance(v, (int, float, complex, np.number, np.bool_))


def _is_value(v, depth: int = 0) -> bool:
    """A value a trace may read and bake in, watched by value: a number, a
    string, bytes, an enum member, a dtype, a class (``DTYPE = np.float32``, a
    config class defined again in a notebook), or a tuple or frozenset of
    values (and None)."""
    if _is_number(v) or isinstance(v, (str, bytes, enum.Enum, np.dtype, type)) or \
            v is None and depth:
        return True
    return type(v) in _GROUPS and depth <= _MAX_DEPTH and \
        all(_is_value(x, depth + 1) for x in v)


_GROUPS = frozenset({tuple, frozenset})   # (a set: found by identity, not by ==)


def whole_key(v):
    """``_Held(pure_values(v))``, or None where ``pure_values`` gives None; for an
    exact list, tuple or deque of many values of one type (a lookup table read by
    index, keyed whole at every call), the types of its values are read once."""
    t = type(v)
    if (t is list or t is tuple or t is deque) and len(v) >= _RUN and \
            (kind := type(v[0])) in _PLAIN_VALUES and (
                _one_type(v) is kind if t is not deque else
                operator.countOf(map(type, v), kind) == len(v)):
        items = tuple(v)
        run = _run(items, kind)
        if run is not None:   # (as _typed((t, items)) is)
            return _Held((t, items), (tuple, ((type, t), run)))
    form = pure_values(v)
    return None if form is None else _Held(form)


def pure_values(v):
    """A list, tuple, dict, set or deque (a subclass too: ``OrderedDict``,
    ``defaultdict``) holding values alone (``_is_value``: numbers, strings, None;
    and such containers of them, nested), as a tuple that ``_Held`` keys by value
    and by the type of every value in it (1 and 1.0 apart, NaN equal to itself):
    ``(type, items)``, a dict's items as ``(key, value)`` pairs, in their order, a
    set's as a frozenset. A trace that reads one (``for lr in self.lrs``,
    ``self.coef.items()``) bakes its values in. None where it holds anything else
    (an array, an object) or nests deeper than ``_MAX_DEPTH``."""
    if not isinstance(v, _PURE):
        return None
    t = type(v)
    if t in _FLAT and _flat(v.values() if t is dict else v) and (t is not dict or _flat(v)):
        # values alone (a lookup table of a million floats): their types told at C speed
        return t, tuple(v.items()) if t is dict else frozenset(v) if t in _SETS else tuple(v)
    out = _pure(v, 0)
    return None if out is MISSING else out


_FLAT = frozenset({list, tuple, dict, set, frozenset, deque})   # (exact types)
_SETS = frozenset({set, frozenset})


def _flat(items) -> bool:
    """Whether ``items`` are plain values alone (``_PLAIN_VALUES``), as ``_pure``
    keeps them as they are (of one type: told by ``_one_type``)."""
    return (type(items) is list or type(items) is tuple) and \
        _one_type(items) in _PLAIN_VALUES or set(map(type, items)) <= _PLAIN_VALUES


_PURE = (list, tuple, dict, set, frozenset, deque)


_PLAIN_VALUES = frozenset({int, float, complex, bool, str, bytes, type(None)})


def _pure(x, depth: int):
    if type(x) in _PLAIN_VALUES:   # at once
        return x
    if isinstance(x, _PURE):
        if depth > _MAX_DEPTH:
            return MISSING
        if isinstance(x, dict):
            items = tuple((_pure(k, depth + 1), _pure(y, depth + 1)) for k, y in x.items())
            if any(k is MISSING or y is MISSING for k, y in items):
                return MISSING
        elif isinstance(x, (set, frozenset)):
            items = [_pure(y, depth + 1) for y in x]
            return MISSING if any(y is MISSING for y in items) else (type(x), frozenset(items))
        else:
            items = tuple(_pure(y, depth + 1) for y in x)
            if any(y is MISSING for y in items):
                return MISSING
        return type(x), items
    return x if x is None or _is_value(x) else MISSING

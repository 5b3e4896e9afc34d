"""Arguments of a call: the walk over their trees, the cache key, the aliasing
pattern, and the snapshots the repeated-call shortcut compares by identity.

Arguments are flattened like a pytree: arrays, numbers, and lists, tuples
and dicts of them (deques, UserDicts, UserLists and ChainMaps too: ``tree.py``). Arrays are traced as they are; numbers become dynamic
``Scalar`` parameters unless named in ``static=``; bools, slices and sets (by
value) and any other hashable value are static; an object of the program's own (a config) is keyed
by what the code reads off it (``object_keys.py``). The cache key is the abstract signature: per
array its type, shape, strides, dtype and device; per number its type; per
static value the value itself; which arrays share memory, and how; and the
address of every array the function reaches by name (``reach.py``).
"""
from __future__ import annotations

import collections.abc
import copyreg
import enum
import io
import numbers
import operator
import types
from functools import partial

import numpy as np

from .argument_items import host_items, item_chains
from .arrays import as_buffer, geometry_reader, is_array
from .buffers import _Intent
from .errors import ArgumentError, GraphtraceError, format_source, raised_by_program
from .first_reads import read_first
from .hosted_bindings import hosted_bindings
from .made_functions import function_key, held_value
from .object_keys import _TOO_DEEP, Identity, _entry, _function_values, _namespace_values, \
    _object_key, _valued, key_objects, made_reads
from .owners import _library, own_class, own_object
from .probe import _attr, _has
from .scalar import same_value, value_key
from .temporary import dead_temporary
from .tree import Attribute, Uncopyable, children, leaves, more_children, rebuild, wrapped
from .values import _Held

__all__ = ["walk", "path_str", "Call", "Identity", "cache_entry", "odd_object", "key_objects",
           "snapshot", "same_call", "geometry_check", "named_geometries", "alias_pattern", "copies",
           "changed_copies"]


def _is_number(v) -> bool:
    """A dynamic number: not a bool, nor an enum member (an IntEnum's, tested with
    ``is``: static, as a plain Enum's)."""
    try:
        return isinstance(v, (numbers.Number, np.number)) and \
            not isinstance(v, (bool, np.bool_, enum.Enum))
    except Exception:  # noqa: BLE001  (an ABC's cache compares classes with ==, which
        return False   # a metaclass may define to raise: an object of such a class)


def _hashable(v) -> bool:
    try:
        hash(v)
        return True
    except (TypeError, ValueError):   # a writable memoryview raises ValueError
        return False


def path_str(path: tuple) -> str:
    """``("xs", 0, "k")`` -> ``"xs[0]['k']"``: the user's name for a leaf (an
    ``Attribute`` as one: ``cm.maps[0]['k']``)."""
    name, *rest = path
    return name + "".join(f".{k}" if type(k) is Attribute else f"[{k!r}]" for k in rest)


def _tagged(value, items, factory=None):
    """A hashable stand-in for a container (lists, tuples and dicts kept apart, and
    each subclass from its base: a Config or an OrderedDict is not a dict);
    ``factory`` keys a defaultdict's ``default_factory`` (``_state``)."""
    t = type(value)
    if t is dict:   # keys as numbers are keyed (-0.0 is not 0.0, 1 not 1.0)
        return ("dict", tuple(zip(_dict_keys(value), items)))
    if t is list or t is tuple or t is partial:
        return (t, tuple(items))
    state = _state(value, factory)   # a subclass's instance attributes (ring.i)
    if wrapped(t) is not None:   # a deque, a UserDict...: (type, items, state) as a list's
        return (t, tuple(items), state)
    if isinstance(value, dict):
        return ("dict", tuple(zip(_dict_keys(value), items)), (t, state))
    return (t, tuple(items), state) if state else (t, tuple(items))


def _state(value, factory=None) -> tuple:
    """``(name, entry)`` of each instance attribute of a container subclass's
    object, in its ``__dict__`` or its slots (``object_keys._entry``), and of a
    defaultdict's ``default_factory``, keyed by ``factory`` (``Call._factory``: as
    a function argument is) or else by identity: the function may read them
    (``bufs[bufs.i]``, ``d["missing"]``), so another value traces anew; () where
    it has none."""
    state, kind = _attr(value, "__dict__"), wrapped(type(value))
    out = tuple((k, _entry(x, None, 0, set())) for k, x in state.items() if k != kind) \
        if type(state) is dict and state else ()   # (but what holds a UserDict's items)
    if kind == "deque" and value.maxlen is not None:   # appending drops the first item
        out += (("maxlen", value.maxlen),)
    if _has(type(value), "__slots__"):   # (a class of C, a defaultdict's, has none)
        slots = ((k, _attr(value, k, _UNSET)) for k in copyreg._slotnames(type(value)))
        out += tuple((k, _entry(x, None, 0, set())) for k, x in slots if x is not _UNSET)
    if isinstance(value, collections.defaultdict) and value.default_factory is not None:
        out += (("default_factory", (factory or Identity)(value.default_factory)),)
    return out


_UNSET = object()   # a slot not set


def walk(value, path: tuple, static: bool, leaf, build=rebuild):
    """Rebuild ``value`` with ``leaf(kind, path, v)`` applied to every leaf.

    ``kind`` is ``"array"``, ``"scalar"`` or ``"static"``; ``path`` a tuple
    (``path_str`` names it); ``build(container, items)`` makes each container.
    """
    if is_array(value):
        return leaf("array", path, value)
    if type(value) is partial and any(is_array(a) for a in leaves(
            (value.args, value.keywords))):   # partial(addk, y=y): y as an argument's
        built = [leaf("static", path + (Attribute("func"),), value.func)] + [
            walk(v, path + (Attribute(k),), static, leaf, build)
            for k, v in (("args", value.args), ("keywords", value.keywords))]
        return build(value, built)
    items = children(value)   # the containers of tree.py
    if items is not None:
        built = [walk(v, path + (k,), static, leaf, build) for k, v in items]
        try:
            return build(value, built)
        except Uncopyable as e:   # a subclass of the program's own (tree.rebuild)
            raise ArgumentError(f"argument {path_str(path)} is {e.message}") from e.__cause__
    if _is_number(value) and not static:
        return leaf("scalar", path, value)
    if isinstance(value, _Intent):
        raise ArgumentError(
            f"argument {path_str(path)} is wrapped in gt.{type(value).__name__}: that wraps "
            "an argument of one op where it is launched (k[grid, block, s](gt.In(x), y)); "
            "pass the array itself to the graph function")
    # a deque, a UserDict, a UserList, a ChainMap (none hashes: other values are not asked)
    items = more_children(value) if type(value).__hash__ is None else None
    if items is not None:
        built = [walk(v, path + (k,), static, leaf, build) for k, v in items]
        try:
            return build(value, built)
        except Uncopyable as e:
            raise ArgumentError(f"argument {path_str(path)} is {e.message}") from e.__cause__
    if own_object(value):   # a config, hashable or not (a dataclass): keyed by Call
        return leaf("static", path, value)
    if isinstance(value, _ONE_SHOT) and not isinstance(value, io.IOBase):   # (a file, a log)
        raise ArgumentError(
            f"argument {path_str(path)} is a {type(value).__name__}: what it yields is "
            "read once, by the trace, and a later call replays the graph without reading "
            "it; pass a list or tuple instead (list(...), or the dict itself)")
    by_value = _BY_VALUE.get(type(value))
    if by_value is not None and _hashable(by_value(value)):   # a slice, a set: by value
        return leaf("static", path, value)
    if not _hashable(value):
        if isinstance(value, np.void):
            raise ArgumentError(
                f"argument {path_str(path)} is a numpy record (np.void): a kernel takes one, "
                "but a graph cannot pass it (a record needs a device copy per launch) nor "
                "bind a later call's; pass a one-element record array instead "
                "(cuda.to_device(np.array([r])), read as r[0] in the kernel)")
        raise ArgumentError(
            f"argument {path_str(path)} of type {type(value).__name__} cannot be traced: "
            "pass arrays, numbers, or lists/tuples/dicts of them; any other value must be "
            "hashable, and is then static (a new value traces a new graph)")
    return leaf("static", path, value)


# iterators (generators, map, zip, iter(), itertools') and a dict's views: never keys
_ONE_SHOT = (collections.abc.Iterator, collections.abc.KeysView, collections.abc.ValuesView,
             collections.abc.ItemsView)

# static values keyed by value where Python does not hash them (a slice, before 3.12;
# a set, read anew at every call: the call shortcut never takes one, ``snapshot``):
# the values they hold, each by value and type (``_Held``)
_BY_VALUE = {slice: lambda v: (v.start, v.stop, v.step), set: frozenset}


def copies(value, path: tuple, out: list) -> list:
    """Append to ``out`` ``(path, container, its work)`` for each list and dict in
    ``value``, an argument as ``walk`` rebuilt it: the traced function is handed
    these copies, so what it changes in them reaches no caller (``changed_copies``)."""
    if isinstance(value, (list, dict)) or wrapped(type(value)) == "deque":
        out.append((path, value, _work(value)))
    for k, v in children(value) or more_children(value) or ():
        if isinstance(v, (list, tuple, dict)) or wrapped(type(v)) is not None:
            copies(v, path + (k,), out)
    return out


_PLAIN = (str, bytes, int, float, complex, bool, type(None), np.generic, enum.Enum)


def _work(c):
    """A snapshot of a container copy: a dict's items, a list's."""
    return dict(c) if isinstance(c, dict) else list(c)


def _same_item(a, b) -> bool:
    """Arrays, dynamic numbers and containers by identity; plain values (static
    numbers, text, None) by type and value (``opts["mode"].lower()`` of "fast")."""
    if isinstance(a, _PLAIN) and isinstance(b, _PLAIN):
        return type(a) is type(b) and same_value(a, b)
    return a is b


def _changed(before, now, functions) -> bool:
    """Whether a trace changed a copy's work: a list's items rebound, added, removed
    or reordered; a dict's values rebound, or keys holding more than a plain value
    added or removed, or a key added that the code (``functions``) read first
    (``if "init" not in state``, ``k = memo.get("n", 0); memo["n"] = k + 1``:
    ``first_reads``), which an eager later call would find there;
    ``opts.setdefault("block", 32)`` (its value kept or not), ``opts.pop("verbose",
    False)`` change no work: the graph computes the same from the caller's dict."""
    if isinstance(before, list):
        return len(before) != len(now) or not all(map(_same_item, before, now))
    for k in before.keys() | now.keys():
        if k in before and k in now:
            if not _same_item(before[k], now[k]):
                return True
        elif not isinstance(before[k] if k in before else now[k], _PLAIN):
            return True
        elif k in now and read_first(functions, f"[{k!r}]", filled=True):
            return True
    return False


def changed_copies(found: list, functions=()) -> list:
    """The paths of the ``copies`` whose work a trace changed (``_changed``; the
    functions the trace may run: ``Reach.walked``)."""
    return [path for path, c, before in found if _changed(before, _work(c), functions)]


def odd_object(name: str, e: Exception):
    """The ``ArgumentError`` refusing a call of graph function ``name`` whose
    inspection ran an object's own code that raised ``e`` (the program's:
    ``raised_by_program``), or None where graphtrace itself raised it."""
    where = raised_by_program(e)
    if where is None:
        return None
    return ArgumentError(
        f"{name}(...): an object this call reaches (an argument, or one its code reads "
        f"by name or off self) raised {type(e).__name__}: {e} in its {where[2]} "
        f"({format_source(where[:2])}) when graphtrace asked it what Python asks of any "
        "object (its class, its attributes, its hash or ==) to key the graph by it; have "
        "it raise AttributeError for an attribute it lacks and answer the rest, or pass "
        "what the graph reads off it as arguments")


def cache_entry(cache, key, name: str):
    """``cache.get(key)`` of graph function ``name``: a key holding a value whose own
    ``__hash__`` or ``==`` raises (a class whose metaclass's does) is refused at the
    call's line (``odd_object``)."""
    try:
        return cache.get(key)
    except Exception as e:  # noqa: BLE001  (told apart by where it was raised)
        refusal = odd_object(name, e)
        if refusal is None:
            raise
        raise refusal from e


def _reached_buffer(fn, label, v):
    """``as_buffer(v)`` of an array ``fn`` reaches by ``label``; refused where it is
    a temporary of an ended trace still kept there (``dead_temporary``)."""
    dead = dead_temporary(v, label, fn.__name__)
    if dead is not None:
        raise dead
    return as_buffer(v)


class Call:
    """One call's arguments, split into what the cache key and the binding need."""

    __slots__ = ("objs", "bufs", "svals", "key", "reached", "stale", "_holdings", "_keyed")

    def __init__(self, fn, bound):
        """``fn``: the GraphFunction; ``bound``: the call's ``inspect.BoundArguments``.
        An error an object's own code raises while the call is inspected (what
        Python runs on any object: ``isinstance`` asking its ``__class__``, a hash,
        an ``==``) is refused at the call's line (``odd_object``)."""
        try:
            self._inspect(fn, bound)
        except GraphtraceError:
            raise
        except Exception as e:  # noqa: BLE001  (told apart by where it was raised)
            refusal = odd_object(fn.__name__, e)
            if refusal is None:
                raise
            raise refusal from e

    def _inspect(self, fn, bound) -> None:
        self.objs, self.bufs, self.svals = [], [], []
        self.stale = False   # keyed by values its trace then changed: the next call
        # computes its key in full (GraphFunction._compiled)
        holdings = self._holdings = fn._holdings   # what it reaches beyond its parameters
        held = holdings.holds(bound.arguments)   # the objects self (or a name) holds: walked once
        reached_by_name = holdings.reached(bound.arguments, held)
        build = partial(_tagged, factory=self._factory)
        parts = tuple(Identity(bound.arguments[k]) if k is fn.self_param else
                      walk(bound.arguments[k], (k,), k in fn.static, self._leaf, build)
                      for k in fn.params)
        # Arrays reached by global or closure name are baked into the graph: the
        # key holds their addresses, so rebinding such a name traces anew.
        reached = [(name, v, _reached_buffer(fn, name, v)) for name, v in reached_by_name]
        # helpers, kernels and numbers reached by name (and a method's self values)
        self_obj = bound.arguments[fn.self_param] if fn._lead else None
        functions = holdings.functions(self_obj, held)
        fixed = tuple((name, type(v), b.signature(), b.ptr) for name, v, b in reached) \
            + functions + host_items(item_chains(fn.fn.__code__, tuple(
                p for p in fn.params if p != fn.self_param)), bound.arguments, fn.fn) \
            + hosted_bindings(fn.fn, fn.self_param, self_obj)   # cfg.lr[0]; the object of
        # a callback handed as s.host(self.sink.read): the graph runs the one it was handed
        # Arrays host callbacks read themselves: how they share memory with the
        # call's arrays (a callback reading what a copy of the graph writes runs after it)
        hosted = holdings.callback_arrays(self_obj, held)
        # and the callbacks the call passes reach (s.host(cb) of a parameter cb)
        argued = holdings.argument_callbacks(bound.arguments)
        regional = holdings.regional   # what captured regions reached (m.W): as names
        self.reached = (tuple(reached_by_name), functions, tuple(hosted), tuple(argued),
                        named_geometries(v for _, v, _ in reached),   # (H.shape = ...: another)
                        tuple(regional.values()) if regional else ())
        hosted += argued
        objs = self.objs + [v for _, v, _ in reached] + [v for _, v in hosted]
        bufs = self.bufs + [b for _, _, b in reached] + \
            [_reached_buffer(fn, name, v) for name, v in hosted]
        self._keyed = (bufs, objs)
        self.key = (parts, fixed, alias_pattern(bufs, objs)) + self._regions()

    def _regions(self) -> tuple:
        """The key's part of the places captured regions reached arrays through
        (``region_places.py``): what they hold, and how it shares memory with the
        call's arrays and those reached by name, as a key's fourth item; () where
        there are none (the key then has three)."""
        regional = self._holdings.regional
        if not regional:
            return ()
        entries, objs, bufs = regional.key()
        base_bufs, base_objs = self._keyed
        return ((entries, alias_pattern(base_bufs + bufs, base_objs + objs)),)

    def add_regions(self) -> None:
        """Key the places its trace found captured regions reaching arrays through
        (the key before the trace knew of none of them)."""
        self.key = self.key[:3] + self._regions()
        regional = self._holdings.regional
        self.reached = self.reached[:5] + (tuple(regional.values()) if regional else (),)

    def _leaf(self, kind, path, v):
        if kind == "array":
            b = as_buffer(v)
            self.objs.append(v)
            self.bufs.append(b)
            return (type(v), b.signature())
        if kind == "scalar":
            self.svals.append(v)
            return type(v)
        if own_object(v):   # an object of the program's own: itself, and what it holds
            seen: set = set()
            key = ("object", type(v)) + _object_key(v, self._holdings.loaded, seen)
        elif type(v) is partial:
            key, seen = self._partial_key(kind, path, v)
        elif type(v) is types.MethodType and path[0] in self._holdings.hosted_params:
            # s.host(sk.notify): it reads sk when it runs; sk.notify is made anew each call
            return ("function", type(v), (v.__func__, Identity(v.__self__)), ())
        else:
            by_value = _BY_VALUE.get(type(v))
            if by_value is not None:   # x[sl] of slice(0, 8), "fast" in {"fast"}
                return ("static", type(v), _Held(by_value(v)))
            values = _function_values(v, path[0] in self._holdings.hosted_params)
            if values:   # a function reading values a trace bakes in: them too
                return ("function", type(v), function_key(v), values)
            values = _namespace_values(v, self._holdings.loaded)
            if values:   # step(out, Cfg) reading cfg.lr: Cfg.lr too
                return ("namespace", type(v), value_key(v), values)
            if type(v) is frozenset:   # {-0.0} apart from {0.0}, {1} from {1.0}: each
                return ("static", frozenset, _Held(v))   # item by value and type
            if type(v) is types.FunctionType:   # a lambda made anew at every call: by
                return ("static", type(v), function_key(v))   # its code and cells
            return ("static", type(v), value_key(v))
        if _TOO_DEEP in seen:
            self._holdings.warn_deep([f"an object argument {path_str(path)} holds"])
        return key

    def _factory(self, f) -> tuple:
        """The key's entry of a defaultdict's ``default_factory``, whose value a trace
        reading a missing key bakes in: a function argument's (``_leaf``): a function
        by the values it reads by global and closure names, a bound method's object,
        a partial's function and what it holds, a callable object by what its
        ``__call__`` reads off it, a class by what making an instance reads."""
        return self._leaf("static", ("default_factory",), f)

    def _partial_key(self, kind, path, v) -> tuple:
        """``(key, seen)`` of a partial: its function (as an argument's), the objects
        of the program's own it holds by identity, and what it holds by index and
        keyword like an object's attributes (``partial(f, coefs, cfg=cfg)``): one
        made anew at every call finds its graph."""
        seen: set = set()
        held = [*enumerate(v.args), *v.keywords.items()]
        mine = tuple(Identity(y) for _, x in held for y in leaves(x)
                     if own_object(y) and not _valued(y))
        if path[0] in self._holdings.hosted_params:   # s.host(cb): the cached graph runs
            # the first partial, with what it holds: a list made anew is another
            return ("object", partial, (self._leaf(kind, path, v.func), mine), tuple(
                (k, held_value(x)) for k, x in held)), seen
        return ("object", partial, (self._leaf(kind, path, v.func), mine), tuple(
            (k, _entry(x, self._holdings.loaded, 0, seen)) for k, x in held)), seen


_IMMUTABLE = (int, float, complex, bool, str, bytes, type(None), np.generic)


class _Snap:
    """What a container argument held at the last call, by identity."""

    __slots__ = ("type", "keys", "typed", "items")

    def __init__(self, value):
        self.type = type(value)
        self.keys = tuple(value.keys()) if isinstance(value, dict) else None
        self.typed = _dict_keys(value) if isinstance(value, dict) else None   # by sign too
        items = value.values() if isinstance(value, dict) else value
        self.items = tuple(snapshot(v) for v in items)


def _dict_keys(d: dict) -> tuple:
    """A dict's keys as the cache key holds them (``_tagged``): 0.0 is not -0.0, nor
    1 1.0 or True, in a tuple key too."""
    return tuple(map(_typed, d))


def _typed(k):
    return (tuple, tuple(map(_typed, k))) if type(k) is tuple else (type(k), value_key(k))


def untyped(k):
    """A dict key as the user wrote it, from ``_typed``'s tagged form (for messages):
    ``(str, 'w')`` -> ``'w'``, a tuple key's items too."""
    t, v = k
    if t is tuple:
        return tuple(map(untyped, v))
    if type(v) is tuple:   # value_key's zero with the signs of its parts, or a NaN
        return t(np.frombuffer(v[1], f"f{len(v[1])}")[0]) if isinstance(v[0], str) else v[0]
    return v


def snapshot(value):
    """What the call shortcut compares an argument with next time; an array whose
    geometry can change in place by its ``_Geometry``; an object of the
    program's own (a config, ``_settings``), a class or module of its own (``Cfg.lr``
    set anew), a set or a partial holding arguments (a list changed in place), a
    function reading values (a global number: ``_function_values``, of a partial's
    function too) never compares the same: the full check reads its values again."""
    if isinstance(value, (list, tuple, dict)):   # a subclass's object holding attributes:
        return _CHANGED if type(value) not in _EXACT and _state(value) else _Snap(value)
    read = geometry_reader(value)
    if read is not None:
        return _Geometry(value, read)
    return _CHANGED if own_object(value) or type(value) is set or \
        type(value).__hash__ is None and wrapped(type(value)) or type(value) is partial and \
        (value.args or value.keywords or _function_values(value.func)) or \
        callable(value) and _function_values(value) \
        or isinstance(value, type) and (own_class(value) or made_reads(value)) or \
        isinstance(value, types.ModuleType) and not _library(value) else value


_CHANGED = object()
_EXACT = (list, tuple, dict)


class _Geometry:
    """An array the call shortcut compares by identity and by the geometry the key
    read (``geometry_reader``): one reshaped in place (``h.shape = (2, 8)``, the
    same object) is another call."""

    __slots__ = ("obj", "read", "was")

    def __init__(self, obj, read):
        self.obj, self.read, self.was = obj, read, read(obj)

    def holds(self, x) -> bool:
        return x is self.obj and self.read(x) == self.was


def geometry_check(snaps, named=()):
    """``(reads, was)``: for the call shortcut to compare at once, a read of each
    array the snapshots hold whose geometry can change in place (``_Geometry``, at
    any depth), and of each such array of ``named`` (what names the function
    reaches hold: ``H.shape = (2, 4)`` of a global), and what each gave; None where
    there is none."""
    found = _geometries(snaps, []) + named_geometries(named)
    return (tuple(partial(g.read, g.obj) for g in found), tuple(g.was for g in found)) \
        if found else None


def named_geometries(values) -> list:
    """A ``_Geometry`` of each array of ``values`` whose geometry can change in
    place."""
    return [_Geometry(v, read) for v in values if (read := geometry_reader(v)) is not None]


def _geometries(snaps, out: list) -> list:
    for snap in snaps:
        if type(snap) is _Geometry:
            out.append(snap)
        elif type(snap) is _Snap:
            _geometries(snap.items, out)
    return out


def changeable(snap) -> bool:
    """Whether a snapshot holds an object of the program's own (``_CHANGED``), at
    any depth: its call cannot take the shortcut."""
    if snap is _CHANGED:
        return True
    return type(snap) is _Snap and any(map(changeable, snap.items))


def _same(x, snap) -> bool:
    """Whether ``x`` holds exactly the objects (or equal numbers) ``snap`` recorded."""
    if type(snap) is _Snap:
        if type(x) is not snap.type or len(x) != len(snap.items):
            return False
        if snap.keys is not None:
            keys = tuple(x.keys())
            if keys != snap.keys or not all(map(operator.is_, keys, snap.keys)) and \
                    tuple(map(_typed, keys)) != snap.typed:   # equal keys, not the same
                return False
            x = tuple(x.values())
        if all(map(operator.is_, x, snap.items)):   # the usual case, checked in C
            return True
        return all(_same(a, b) for a, b in zip(x, snap.items))
    if type(snap) is _Geometry:
        return snap.holds(x)
    return x is snap or (isinstance(x, _IMMUTABLE) and type(x) is type(snap) and
                         same_value(x, snap))


def same_call(args: tuple, kwargs: dict, snap) -> bool:
    """``_same`` for a whole call, with the common flat case kept cheap."""
    sargs, skw = snap
    if len(args) != len(sargs) or (kwargs or skw) and not _same(kwargs, skw):
        return False
    for x, y in zip(args, sargs):
        if x is y:
            continue   # never true for a container: its snapshot is a new object
        if type(y) is _Snap or type(y) is _Geometry:
            if not _same(x, y):
                return False
        elif not (isinstance(x, _IMMUTABLE) and type(x) is type(y) and same_value(x, y)):
            return False
    return True


def alias_pattern(bufs, objs) -> tuple:
    """Which array arguments share memory, and how: part of the cache key.

    A graph traced with two distinct arrays has no edges between their users;
    called with one array twice it would race, so such a call traces anew. Two
    arguments sharing memory may be one object (``objs``, parallel to ``bufs``)
    or two views of it, which the function can tell apart (``out is x``).
    """
    out, active, empty = [], [], []
    for i in sorted(range(len(bufs)), key=lambda k: bufs[k].lo):  # sweep by address
        b = bufs[i]
        if b.lo == b.hi:   # shares no byte, but may be one object twice
            empty.append(i)
        active = [j for j in active if bufs[j].hi > b.lo]
        for j in active:
            if b.overlaps(bufs[j]):
                lo, hi = min(i, j), max(i, j)
                out.append((hi, lo, bufs[hi].ptr - bufs[lo].ptr, objs[hi] is objs[lo]))
        active.append(i)
    first: dict = {}
    for i in sorted(empty):
        j = first.setdefault(id(objs[i]), i)
        if j != i:
            out.append((i, j, 0, True))
    return tuple(sorted(out))

"""What the cache key holds of the program's own objects a graph reaches
(``held.py``: ``self.opt``, ``OPT``) and what it reads off them
(``Watched``): each one's class and the values of the attributes the traced
code loads (``held_key``), but the state it keeps there, which a trace tells
apart from a setting (``state_changed``, ``set_from_none``).
"""
from __future__ import annotations

import ast
import enum
from collections import deque

from .chains import NoKey
from .named_keys import named_key, resolved
from .names import EVERY, chain_heads
from .owners import _attributes, class_attribute, own_object
from .scalar import value_key
from .values import _GROUPS, Unwatched, _Held, _is_callable_object, _is_value, callable_key, \
    held_values, instance_chains, pure_values

__all__ = ["Watched", "every_name", "held_key", "set_from_none", "set_within", "state_changed"]

_SKIPPED = frozenset({int, float, complex, bool, str, bytes, type(None)})


class Watched:
    """What the cache key reads off held objects (``held_methods``): ``names``, the
    attribute names the traced code loads; ``state``,
    class -> the attributes its walked methods change (``self.t += 1``; ``_ALL``
    for the whole object); ``chains``, class -> ``(label suffix, steps' calls)``
    its methods read by constant keys and attributes (``self.cfg["m"]``,
    ``self.lrs[0]``); ``callbacks``, the functions of the methods reached only as
    host callbacks (``s.host(SINK.report)``: they read when they run); ``reached``,
    the names the code of those callbacks loads (``self.sink`` of ``s.host(self.notify)``
    calling ``self.sink.read()``): the objects they hold are walked, for the arrays
    the callbacks read (``callback_arrays``), not keyed by value; ``selfs``, the
    names the functions ``self`` holds that run on it read off it (``self.fn =
    self.update`` reading ``self.lr``), keyed as the method's own reads; ``whole``,
    what that code reads whole of the objects it is handed (``names.reads_fields``:
    ``astuple(self.cfg)``, whose fields ``names`` holds; ``vars(CFG)``, ``EVERY``:
    every attribute of every object is keyed); ``classed``, the names the code
    reads through an object's class (``type(self.sub).N``: ``class_reads``),
    whose class values are keyed where the object's own hide them."""

    __slots__ = ("names", "state", "chains", "callbacks", "reached", "selfs", "whole",
                 "classed")

    def __init__(self, names=frozenset(), state=None, chains=None,
                 callbacks=frozenset(), reached=frozenset(), selfs=frozenset(), whole=""):
        self.names = names
        self.state, self.chains, self.callbacks = state or {}, chains or {}, callbacks
        self.reached, self.selfs, self.whole = reached, selfs, whole
        self.classed = frozenset()   # the names read through their class (type(o).N)

    @property
    def read(self) -> frozenset | None:
        """The attribute names of held objects the graph reads: ``names``, or None for
        all where its code reads them whole (``vars(CFG)``, ``getattr(self, k)``)."""
        return None if self.whole == EVERY else self.names


def every_name(self_obj, objects) -> frozenset:
    """The names of every attribute of ``self_obj`` (None: none) and of the held
    ``objects`` (``held_objects``): all the code may read where it reads them whole."""
    return frozenset(name for _, _, attributes in objects for name, _ in attributes).union(
        name for name, _ in (_attributes(self_obj) if self_obj is not None else ()))


def held_key(objects, watched: Watched, traced=frozenset()) -> tuple:
    """What the cache key holds of the objects of ``held_objects``: each one's
    class, and its attributes of ``watched.names``: values by value, kernels and
    functions by identity, lists, tuples and dicts of values alone by value and
    type (``pure_values``: ``for lr in self.lrs``), the values held beside arrays
    in its lists, tuples and dicts (``held_values``); the values of those names its class holds
    (``lr = 1.0`` in the class body); the values its methods read off it by
    constant keys (``self.cfg["m"]``); but the state its host callbacks keep in
    it (``Watched.state``), and the labels ``traced`` of what a trace was seen to
    change (``state_changed``)."""
    names, every = watched.names, watched.whole == EVERY   # vars(CFG): all it holds
    out: list = []
    classes: dict = {}   # class -> its values of names (once a call)
    keyed: dict = {}   # class -> the attributes its methods read by constant keys
    for label, o, attributes in objects:
        t = type(o)
        out.append((label, t))
        state = watched.state.get(t, ())
        by_keys = keyed.get(t)
        if by_keys is None:
            by_keys = keyed[t] = chain_heads(suffix for suffix, _ in watched.chains.get(t, ()))
        if _ALL in state:
            continue
        own = set()
        for name, v in attributes:
            own.add(name)
            if name not in names and not every or name in state:
                continue
            at = f"{label}.{name}"
            if at in traced:
                continue
            k = type(v)
            if k in _SKIPPED:   # a number, a string, None: at once
                out.append((at, k, value_key(v)))
            elif v is None or _is_value(v):
                out.append((at, type(v), _Held(v) if type(v) in _GROUPS else value_key(v)))
            elif own_object(v):
                continue   # walked itself
            elif _is_callable_object(v):   # a partial: the values it holds too
                out.append((at, callable_key(v)))
            elif isinstance(v, (list, tuple, dict)):
                # for lr in self.lrs: its values baked in; one read by constant keys
                # (self.state["lr"]) is keyed by those (watched.chains), not whole
                pure = pure_values(v) if name not in by_keys else None
                if pure is not None:
                    out.append((at, k, _Held(pure)))
                else:
                    out += [h for h in held_values(v, at) if h[0] not in traced]
            elif isinstance(v, (set, frozenset, deque)):   # sum(self.opt.tags): whole
                pure = pure_values(v)
                if pure is not None:
                    out.append((at, k, _Held(pure)))
        values = classes.get(t)
        if values is None:
            values = classes[t] = _class_values(t, names)
        out += [(f"{label}.{name}", k, v) for name, k, v in values
                if name not in own and name not in state]
        if watched.classed:   # type(self.sub).N where the object holds an N of its own
            out += [(f"type({label}).{name}", k, v) for name, k, v in values
                    if name in own and name in watched.classed and name not in state]
        for suffix, calls in watched.chains.get(t, ()):
            if label + suffix not in traced:
                out += instance_chains(o, ((label + suffix, calls),))
    return tuple(out)


def state_changed(before: tuple, after: tuple) -> set:
    """The labels of the attributes of held objects whose entries in the key
    (``held_key``) a trace changed: state the traced code keeps (a loop over
    layers doing ``layer.calls += 1``), which the key then leaves out; else every
    call would trace anew. Only what was there before and after counts: an
    object the trace made (``if self.opt is None: self.opt = SGD(0.1)``) holds
    settings, watched from then on; so does an attribute it set from None
    (``set_from_none``)."""
    old, new = _by_label(before), _by_label(after)
    return {label for label, e in new.items()
            if label in old and old[label] != e and not _settled(old[label], e)}


def set_from_none(before: tuple, after: tuple) -> set:
    """The labels of the entries a trace set from None (or absent) to something else
    (``if self.clip is None: self.clip = 10.0``), or to an equal value of another type
    (``self.lr = float(self.lr)``, ``self.betas = tuple(self.betas)``): settings
    made once, watched from then on (the key holds their values after the
    trace), not state; so is a flag the trace sets (``if not self.built: self.built
    = True``)."""
    old, new = _by_label(before), _by_label(after)
    return {label for label, e in new.items()
            if label in old and old[label] != e and _settled(old[label], e)}


def set_within(before: tuple, after: tuple, changed: set, settled: set, scope) -> set:
    """The labels of ``changed`` naming dicts (``self.cfg.state``, ``OPT.state``) whose
    items the trace changed only by settings made of them (``settled``:
    ``self.cfg.state['init']``, ``self.cfg.state[Phase.A]`` set from absent, a flag
    raised; a key written by its name read by the names of ``scope``): the keys
    holding those are keyed by value and set again by each replay, so the dict is
    no state (a counter kept beside them is)."""
    old, new, out = _by_label(before), _by_label(after), set()
    for label in changed:
        was, now = _items(old.get(label)), _items(new.get(label))
        if was is None or now is None:
            continue
        moved = {k for k in was.keys() | now.keys() if was.get(k, _NO) != now.get(k, _NO)}
        below = {b: b[len(label) + 1:-1] for b in changed | settled
                 if b.startswith(label + "[") and b.endswith("]") and
                 "[" not in b[len(label) + 1:]}   # (its items alone)
        if moved and set(below) <= settled and moved <= {_key(k, scope) for k in below.values()}:
            out.add(label)
    return out


def _key(text: str, scope):
    """The key a label writes as ``text`` (``'init'``; ``Phase.A``, read by the names of
    ``scope``); ``_NO`` where none is told."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        steps = resolved((("item", named_key(text)),), scope) if named_key(text) else None
        return steps[0][1] if steps else _NO


_NO = object()


def _items(entries) -> dict | None:
    """key -> (type, value) of the dict an entry of the key holds whole (``pure_values``'
    form), None for anything else."""
    if not entries or len(entries) != 1:
        return None
    (e,) = entries
    form = e[2].value if len(e) == 3 and isinstance(e[2], _Held) else None
    if type(form) is not tuple or len(form) != 2 or not isinstance(form[0], type) or \
            not issubclass(form[0], dict):
        return None
    return {k: (type(v), v) for k, v in form[1]}


def _settled(old: set, new: set) -> bool:
    """Whether entries ``old`` became ``new`` by a setting made once: from None,
    to a value equal to the old one, a flag set (``self.built = True``), or a value
    removed (``del GONE``, ``del STATE["init"]``: no such name or key now)."""
    if _none(old) or _gone(new):
        return True
    if len(old) != 1 or len(new) != 1:
        return False
    (a,), (b,) = old, new
    if len(a) != 3 or len(b) != 3:
        return False
    if a[1] is bool and b[1] is bool:   # a flag the first trace raises: if not self.built:
        return True                     # self.built = True (lowered again: traced anew)
    x, y = (v.value if isinstance(v, _Held) else v for v in (a[2], b[2]))
    return _settled_value(x, y)


def _settled_value(x, y) -> bool:
    """Whether value ``x`` became ``y`` by settings made once: equal, or an immutable
    record replaced by one whose fields differ only so (``self.rs =
    self.rs._replace(started=True)``, ``self.t = (True, self.t[1])``: a flag raised
    or lowered, a field set from None; a member of an enum for another, a string for another),
    or a frozenset given members (``self.tags =
    self.tags | {"init"}``). A record whose other fields changed (a counter) is state."""
    if type(x) is bool and type(y) is bool or x is None:
        return True
    if isinstance(x, enum.Enum) and type(x) is type(y) or \
            type(x) is str and type(y) is str:   # a phase moved on: if self.mode is
        return True   # Phase.A: ...; self.mode = Phase.B (or "warm" to "run")
    if isinstance(x, tuple) and type(x) is type(y) and len(x) == len(y) and not (
            x and isinstance(x[0], type) and issubclass(x[0], _CHANGING)):
        return all(map(_settled_value, x, y))   # (a record's key: (class, its fields))
    if type(x) is frozenset and type(y) is frozenset:
        return x <= y
    try:
        return bool(x == y)
    except Exception:  # noqa: BLE001  (a value's own __eq__ raising: changed)
        return False


def _by_label(entries) -> dict:
    out: dict = {}
    for e in entries:   # not an object's class, nor a container's items the key does
        if not (len(e) == 2 and isinstance(e[1], type) or   # not hold by itself
                len(e) == 3 and type(e[2]) is Unwatched):   # (container_flags reads them)
            out.setdefault(e[0], set()).add(e)
    return out


def _none(entries: set) -> bool:
    """None, or no such key or attribute (``CFG.get("lr")``, ``getattr(CFG, "lr", 1.0)``)."""
    return all(len(e) == 3 and (e[1] is type(None) or e[1] is NoKey) for e in entries)


def _gone(entries: set) -> bool:
    """No such name, key or attribute (``stored_entries`` of one deleted)."""
    return bool(entries) and all(len(e) == 3 and e[1] is NoKey for e in entries)


def _class_values(t: type, names: frozenset) -> list:
    """``(name, type, value)`` of the values ``t`` (or a base) holds by ``names``, and of
    the containers of values it holds (``scales = [2.0]``: ``for a in self.scales``)
    by their items."""
    out = []
    for name in sorted(names):
        v = class_attribute(t, name)
        if v is not None and _is_value(v) and not isinstance(v, type):
            out.append((name, type(v), _Held(v) if type(v) in _GROUPS else value_key(v)))
        elif name[:2] != "__" and isinstance(v, (list, tuple, dict, set, frozenset, deque)) \
                and (pure := pure_values(v)) is not None:   # (not __mro__, __bases__)
            out.append((name, type(v), _Held(pure)))
    return out


_ALL = object()   # a method changes the whole object (setattr(self, k, v))
# the containers changed in place, whose key (pure_values: (class, items)) no record's is
_CHANGING = (list, dict, set, deque, bytearray)

"""Flags a trace read and then set, set again by each replay of their graph.

A graph keyed by a value its trace read and then set (``first_reads``: ``if
not self.started: ...; self.started = True``; a parity flag, ``self.odd = not
self.odd``) holds the work that value decided, but not the store: Python ran
once, when traced. A later call finding the value as it was before that trace
(the user reset the flag; the code toggles it every call) replays that graph,
and eager code would set the flag again there: so the graph keeps the values
its trace left (``stores_of``), and each call replaying it sets them first
(``apply``), as the traced Python did; the next call, finding the new value,
takes the other graph.

Only values are set again (numbers, strings, None, enum members, and immutable
records of them: tuples, namedtuples, frozensets, frozen dataclasses; a record
replaced whole, ``self.rs = self.rs._replace(started=True)``, is put whole, and a
field of one found by its own label, ``self.fd.started``, by a copy of the record
with it set): an object the trace made (``self.opt = SGD(0.1)``) stays as the trace
left it. A value is found by its label (``self.started``, ``self.opt.started``,
``st.init`` of an argument object, ``STATE['init']``, ``box[0]``, ``STARTED``),
off the call's arguments or off the name of the function that holds it, at each
call: another instance of the class, or an object the name holds now, is the
one set; a value the instance reads off its class (``type(self).started =
True``), the class.

A trace that only inspects (``f.trace``, ``gt.explain``) or builds a graph a
later call replays (``f.compile``) is no call: what it set is put back
(``values_of`` before it, ``put_back`` after).
"""
from __future__ import annotations

import ast
import copy
import dataclasses
import enum
import re
import weakref

from .chains import MISSING, chain as _chain, defined, lookup, value_chains
from .named_keys import named_key, resolved
from .owners import _attributes, own_object
from .probe import _attr, _has
from .refill import Contents, contents_of

__all__ = ["apply", "argument_values", "put_back", "roots", "stores_of", "values_of"]

_STEP = re.compile(r"\.(\w+)|\[([^\[\]]+)\]")
_VALUES = frozenset({bool, int, float, complex, str, bytes, type(None)})
_ABSENT = object()   # a key or attribute not there (put back as not there)
_ARGUMENT = None   # the function of a store off one of the call's arguments (self.x)
_ATTRIBUTES = frozenset({"attr", "default", "has"})   # Chain's steps reading attributes


def roots(params, reaches, places, scope=None, named=None) -> dict:
    """label -> ``(function, name, steps)`` of what values are found off: the chains
    the ``Reach``-es ``reaches`` store (``STATE['init']``, ``STARTED``), the objects
    of ``places`` held by names (``(function, name, label)``: ``OPT``), and the
    function's parameters ``params`` (self, an argument object), whose keys read by
    a name (``self.state[Phase.A]``) are read by the names of ``scope``, the graph
    function, but those of ``named`` (label -> ``(parameter, steps)``), whose keys
    were read where the code storing them is (a base class's method in another module)."""
    out: dict = {}
    for fn, name, label in places:
        out.setdefault(label, (fn, name, ()))
    for r in reaches:
        for fn, chain in r.stored:
            out.setdefault(str(chain), (fn, chain.head, tuple(chain.steps)))
    for name in params:
        out[name] = (_ARGUMENT, name, (), scope)
    for label, (name, steps) in (named or {}).items():
        out[label] = (_ARGUMENT, name, steps, scope)
    return out


def stores_of(labels, roots: dict, arguments, own=(), filled=()) -> tuple:
    """``(function or None, name, steps, value)`` for each of ``labels`` whose
    value is a value (module docstring), or is not there (a key or attribute the
    trace deleted: ``_ABSENT``, deleted again), and is found from ``roots``
    (``roots()``; a function of None: off the call's ``arguments``, name -> value).
    ``own``: the labels of the attributes the call's objects held themselves before
    the trace (``argument_values``): one its class holds now was deleted (``del
    self.pending``, a class default seen again), not set on the class. ``filled``:
    the labels of the lists, sets and dicts the trace changed in place as a flag
    (``container_flags``), whose items each replay puts back in them
    (``refill.Contents``)."""
    stores = (_store(label, roots, arguments, label in own, label in filled)
              for label in sorted(labels))
    return tuple(s for s in stores if s is not None)   # (_ABSENT: deleted, del STATE["k"])


def _store(label: str, roots: dict, arguments, owned=False, fill=False):
    """``label``'s store (``stores_of``), one of ``_ABSENT`` where the last step finds
    nothing (a key not there yet) or where an attribute the object held itself
    (``owned``) is its class's now, or None; ``fill``: a container of values by
    its ``Contents``."""
    where = _parse(label, roots)
    if where is None:
        return None
    fn, name, steps = where
    try:   # (whatever the objects raise: not set again)
        if not steps and fn is not _ARGUMENT and not defined(fn, name):
            return fn, name, steps, _ABSENT   # del GONE: deleted again
        o = _read(fn, name, steps[:-1], arguments)
        if not steps:
            return (fn, name, steps, o) if _is_value(o) else \
                (fn, name, steps, contents_of(o)) if fill and contents_of(o) else None
        how, key = steps[-1]
        try:
            v = getattr(o, key) if how == "attr" else o[key]
        except (AttributeError, LookupError):
            v = _ABSENT if _plain(o) else None
        if how == "attr" and _on_class(o, key):   # type(self).started = True; but
            if owned:                              # del self.pending of an instance's
                v = _ABSENT                        # own, its class's default seen now
            else:
                steps = steps[:-1] + (("class", key),)
    except Exception:  # noqa: BLE001
        return None
    if fill and v is not _ABSENT and contents_of(v) is not None:   # self.log, refilled
        return fn, name, steps, contents_of(v)
    return (fn, name, steps, v) if v is _ABSENT or _is_value(v) else None


def _on_class(o, key: str) -> bool:
    """Whether attribute ``key`` of ``o`` is a value its class holds, not ``o``
    itself: set there (``type(self).started = True``)."""
    if isinstance(o, type) or key in _attr(o, "__dict__", (key,)):
        return False
    held = vars(type(o)).get(key, _ABSENT)
    return held is not _ABSENT and not hasattr(type(held), "__set__")


def apply(stores, arguments) -> None:
    """Set the values of ``stores`` again (off the call's ``arguments`` for those of
    its parameters)."""
    for fn, name, steps, v in stores:
        try:
            _put(fn, name, steps, v, arguments)
        except Exception:  # noqa: BLE001  (gone since, or refused: the next call's key
            pass           # finds what is there)


def _put(fn, name, steps, v, arguments) -> None:
    """Set ``v`` at ``steps`` off ``name`` (``_ABSENT``: take it away); a field of an
    immutable record (a frozen dataclass's, ``self.fd.started`` of ``self.fd =
    replace(self.fd, started=True)``) by a copy of the record holding it, put where
    the record is."""
    if type(v) is Contents:   # a container's items, put in it (LOG, self.seen)
        v.refill(_read(fn, name, steps, arguments))
        return
    if not steps:
        if fn is not _ARGUMENT:   # (an argument itself is the caller's)
            _set_name(fn, name, v)
        return
    o = _read(fn, name, steps[:-1], arguments)
    how, key = steps[-1]
    if how == "class":   # type(self).started = True
        o, how = type(o), "attr"
    if v is _ABSENT:   # put back as not there (put_back)
        delattr(o, key) if how == "attr" else o.pop(key, None)
    elif _frozen(o):
        _put(fn, name, steps[:-1], _replaced(o, how, key, v), arguments)
    elif how == "attr":
        setattr(o, key, v)
    else:
        o[key] = v


def _frozen(o) -> bool:
    """A tuple (a namedtuple too) or a frozen dataclass: its fields are not set."""
    return isinstance(o, tuple) or _frozen_dataclass(o)


def _frozen_dataclass(o) -> bool:
    params = _attr(type(o), "__dataclass_params__")
    return params is not None and params.frozen and not isinstance(o, type)


def _replaced(o, how: str, key, v):
    """A copy of record ``o`` with its field ``key`` (an attribute, or an index) ``v``."""
    if isinstance(o, tuple):
        if how == "attr":
            return o._replace(**{key: v})   # a namedtuple's field
        items = list(o)
        items[key] = v
        return type(o)(*items) if hasattr(o, "_fields") else type(o)(items)
    try:   # as the code replaced it (its __post_init__ run)
        return dataclasses.replace(o, **{key: v})
    except (TypeError, ValueError):   # a field made by __post_init__ (init=False)
        new = copy.copy(o)
        object.__setattr__(new, key, v)
        return new


def values_of(labels, roots: dict, arguments) -> dict:
    """label -> its store now (``stores_of``'s; ``_ABSENT`` for a key or attribute not
    there; a container of values by its ``Contents``), for putting back (``put_back``)."""
    found = ((label, _store(label, roots, arguments, fill=True)) for label in labels)
    return {label: s for label, s in found if s is not None}


def put_back(before: dict, roots: dict, arguments, deciding) -> None:
    """Put back what ``before`` (``values_of``) read where another value is there
    now (what a trace set, added or took away), of the labels ``deciding(labels)``
    keeps (``f.compile``: those its replays set again)."""
    now = values_of(before, roots, arguments)
    moved = {label for label, s in before.items()   # (one holding no value now, or a
             if label in now and not _same(now[label][3], s[3]) and   # container made
             (type(now[label][3]) is Contents) is (type(s[3]) is Contents)}   # anew: left)
    kept = deciding(moved) if moved else ()
    apply(tuple(before[label] for label in sorted(kept)), arguments)


def argument_values(arguments, own, fn=None) -> dict:
    """label -> value of the attributes holding values of the objects of the
    program's own among the call's ``arguments``: ``st.init`` of ``step(s, y,
    st)``; and, a level deeper, those of the objects and the dicts' keys they hold
    (``st.opt.init``, ``st.d['init']``), and their lists, sets and other dicts of
    values by their ``Contents`` (``st.log``); but of ``own`` (self) its values
    alone (``Holdings`` reads the objects it holds): ``self.started`` a helper sets,
    ``mark(self)``; and the items the code of ``fn`` stores off them but ``own``
    (``st.d[Phase.A] = True``, a key read by a name; ``st.d[("a", 1)] = True``:
    ``item_stores``)."""
    out: dict = {}
    for name, v in arguments.items():
        if own_object(v):
            _values_in(v, name, out, 0 if name == own else 1, name != own)
    for c in item_stores(fn.__code__) if fn is not None else ():
        steps = resolved(c.steps, fn) if c.head != own and own_object(
            arguments.get(c.head)) else None
        try:   # (a key not there: no value, as _values_in finds none)
            v = _read(_ARGUMENT, c.head, steps, arguments) if steps is not None else None
        except Exception:  # noqa: BLE001  (whatever the objects raise)
            continue
        if steps is not None and _is_value(v):
            out[str(c)] = v
    return out


_ITEMS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def item_stores(code) -> tuple:
    """The chains of items ``code`` stores off its parameters (``st.d[Phase.A] =
    True``, ``del st.d[KEY]``, ``st.d[("a", 1)] = True``), found once per code object."""
    hit = _ITEMS.get(code)
    if hit is None:
        params = frozenset(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
        hit = _ITEMS[code] = tuple(_chain(head, steps) for head, steps in value_chains(
            code, roots=params, callbacks=False)[1]
            if head in params and steps and steps[-1][0] == "item")
    return hit


def _values_in(o, label: str, out: dict, deeper: int, boxes: bool = False) -> None:
    items = o.items() if type(o) is dict else _attributes(o)
    for key, a in items:
        if type(o) is dict and type(key) not in (str, int):
            continue
        at = f"{label}[{key!r}]" if type(o) is dict else f"{label}.{key}"
        if _is_value(a):
            out[at] = a
        elif deeper and (type(a) is dict or own_object(a)):
            _values_in(a, at, out, deeper - 1, boxes)
        elif boxes and (box := contents_of(a)) is not None:   # st.log (a dict of
            out[at] = box                                        # values: its keys)


def changed(before: dict, after: dict) -> set:
    """The labels of ``after`` (``argument_values``) whose values ``before`` lacks
    or holds another of."""
    return {label for label, v in after.items()
            if label not in before or not _same(before[label], v)}


def _same(a, b) -> bool:
    return a is b or type(a) is type(b) and a == b


def _parse(label: str, roots: dict):
    """``(function, name, steps)`` of ``label``: the longest root it starts with,
    then ``.attribute`` and ``[constant]`` steps, a key written by its name
    (``[Phase.A]``) read now; None where it cannot be told."""
    best = None
    for head in roots:
        if label.startswith(head) and (len(label) == len(head) or label[len(head)] in ".[") \
                and (best is None or len(head) > len(best)):
            best = head
    if best is None:
        return None
    fn, name, steps, *scope = roots[best]
    rest, at, out = label[len(best):], 0, list(steps)
    while at < len(rest):
        m = _STEP.match(rest, at)
        if m is None:
            return None
        if m.group(1) is not None:
            out.append(("attr", m.group(1)))
        else:
            try:
                out.append(("item", ast.literal_eval(m.group(2))))
            except (ValueError, SyntaxError):
                key = named_key(m.group(2))   # self.state[Phase.A]
                if key is None:
                    return None
                out.append(("item", key))
        at = m.end()
    out = resolved(tuple(out), scope[0] if scope else fn)
    return None if out is None else \
        (fn, name, tuple(("attr" if how in _ATTRIBUTES else "item", key) for how, key in out))


def _read(fn, name, steps, arguments):
    o = arguments[name] if fn is _ARGUMENT else lookup(fn, name)
    for how, key in steps:
        o = o[key] if how == "item" else getattr(o, key)   # (class: the instance's)
    if o is MISSING:
        raise LookupError(name)
    return o


def _set_name(fn, name: str, v) -> None:
    code = fn.__code__
    if name in code.co_freevars:
        cell = fn.__closure__[code.co_freevars.index(name)]
        if v is not _ABSENT:
            cell.cell_contents = v
        elif defined(fn, name):   # del x of a nonlocal x
            del cell.cell_contents
    elif v is _ABSENT:
        fn.__globals__.pop(name, None)
    else:
        fn.__globals__[name] = v


def _plain(o) -> bool:
    """An object a key or attribute not there can be put back as not there in: a
    dict's, or one of the program's own."""
    return type(o) is dict or own_object(o)


def _is_value(v) -> bool:
    """A value, or an immutable record of values alone: a tuple (a namedtuple, no
    ``__dict__`` of its own) or a frozenset of them, a frozen dataclass's fields."""
    if type(v) in _VALUES or isinstance(v, enum.Enum):
        return True
    if isinstance(v, tuple) and not _has(v, "__dict__") or type(v) is frozenset:
        return all(map(_is_value, v))
    if _frozen_dataclass(v):
        names = [f.name for f in dataclasses.fields(v)]
        return set(_attr(v, "__dict__", names)) <= set(names) and \
            all(_is_value(getattr(v, name)) for name in names)
    return False

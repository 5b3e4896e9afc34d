"""The program's own objects a graph method's ``self`` holds (``self.opt``,
``self.layers[0]``, and those they hold in turn), and those a graph function
reaches by a global or closure name (``OPT``, ``STATE``: ``Reach.objects``).

Such an object is part of what the method computes with. Its arrays are the
graph's, named ``self.opt.v`` and rebound as ``self``'s own are; what its
methods read off it when traced (``self.lr`` of ``self.opt.update(s, g, w)``)
is baked into the graph. So its arrays join the method's reached arrays, and
the cache key holds each object's class and the values it holds by the names
the traced code reads: ``m.opt.lr = 0.1``, or another optimizer put in
``m.opt``, traces anew.

Those names are the attributes the method's code (and that of the methods of
its class it calls) loads, and those the methods of the held objects' classes
it names load in turn; methods handed to ``s.host`` are left out (a callback
reads what it reads when it runs: its counter is state, not a setting).

Objects of a library's class (numpy's, cupy's, torch's, the standard
library's) are not walked; nor are containers beyond ``_MAX_DEPTH`` levels.
An object held by a name whose methods the graph does not call and that holds
no array (settings alone: ``CFG.lr``) is left to ``Reach``'s chains, and the
function's call keeps its shortcut; one that does makes every call take the
full check.
"""
from __future__ import annotations

import types

from .buffers import _kinds
from .chains import chain, self_callbacks, value_chains
from .reach import _ARRAY_KINDS, _GROUPS, _MAX_DEPTH, _Held, _Same, _attributes, \
    _is_callable_object, _is_value, _leaves, _methods_named, _python_function, class_attribute, \
    held_values, own_class
from .scalar import value_key
from .tree import children

__all__ = ["held_objects", "held_arrays", "held_key", "held_methods", "own_class"]

def held_objects(obj, label: str | None = None, seen: set | None = None) -> list:
    """``(label, object)`` for each object of the program's own (``own_class``)
    that ``obj`` (a method's ``self``) holds in its attributes, directly or in
    lists, tuples and dicts, and those these hold in turn; each object once,
    under the first label found (``self`` itself never). With ``label``, ``obj``
    is such an object held by a global or closure name (``OPT``): itself and
    what it holds, not those in ``seen`` (ids, updated)."""
    out: list = []
    seen = set() if seen is None else seen
    if label is not None:
        _walk(obj, label, 0, seen, out)
        return out
    seen.add(id(obj))
    for name, v in _attributes(obj):
        _walk(v, f"self.{name}", 0, seen, out)
    return out


_SKIPPED = frozenset({int, float, complex, bool, str, bytes, type(None)})


def _walk(v, label: str, depth: int, seen: set, out: list) -> None:
    if depth > _MAX_DEPTH:
        return
    t = type(v)
    if t in _SKIPPED or _kinds.get(t) in _ARRAY_KINDS:
        return
    if own_class(t):
        if id(v) in seen:
            return
        seen.add(id(v))
        out.append((label, v))
        for name, x in _attributes(v):
            k = type(x)
            if k not in _SKIPPED and _kinds.get(k) not in _ARRAY_KINDS:   # (at once)
                _walk(x, f"{label}.{name}", depth + 1, seen, out)
        return
    items = children(v)
    if not items:
        return
    if not isinstance(v, dict) and not any(   # a list of numbers or of arrays: at C speed
            own_class(k) or issubclass(k, (list, tuple, dict)) for k in set(map(type, v))):
        return
    for k, x in items:
        _walk(x, f"{label}[{k!r}]", depth + 1, seen, out)


def held_arrays(objects) -> list:
    """``(label, array)`` for the arrays the objects of ``held_objects`` hold in
    their attributes (lists, tuples and dicts of them too)."""
    return [leaf for label, o in objects for name, v in _attributes(o)
            if type(v) not in _SKIPPED   # numbers: at once
            for leaf in _leaves(v, f"{label}.{name}")]


def held_key(objects, names: frozenset, kept=(frozenset(), {})) -> tuple:
    """What the cache key holds of the objects of ``held_objects``: each one's
    class, and its attributes of ``names`` (``held_methods``' names): values by
    value, kernels and functions by identity, and the values held beside arrays
    in its lists, tuples and dicts (``held_values``); but the state the traced
    code keeps in them (``kept``, ``held_methods``' too)."""
    labels, by_class = kept
    out: list = []
    for label, o in objects:
        out.append((label, type(o)))
        state = by_class.get(type(o), ())
        if _ALL in state:
            continue
        for name, v in _attributes(o):
            if name not in names or name in state:
                continue
            at = f"{label}.{name}"
            if at in labels:
                continue
            if v is None or _is_value(v):
                out.append((at, type(v), _Held(v) if type(v) in _GROUPS else value_key(v)))
            elif own_class(type(v)):
                continue   # walked itself
            elif _is_callable_object(v):
                out.append((at, _Same(v)))
            elif isinstance(v, (list, tuple, dict)):
                out += held_values(v, at)
    return tuple(out)


_ALL = object()   # a method changes the whole object (setattr(self, k, v))


def held_methods(functions, heads: frozenset, classes) -> tuple:
    """``(names, methods, kept)`` for the held objects of ``classes``: the
    attribute names the code of ``functions`` (a method and the methods of its
    class it calls; a function and its helpers) and of the methods of
    ``classes`` it names loads (those of the methods named in turn too); those
    methods, as ``(class, name, what the class holds by that name, function)``;
    and the state that code keeps in held objects, which the key leaves out as
    ``self``'s own counters: ``(labels of what ``functions`` change off the
    names of ``heads``, self.state.step += 1 or OPT.t += 1; class -> the
    attributes its walked methods change, self.t += 1)``. An object's
    ``__call__`` is followed (``layer(s, x)``); methods ``functions`` hand to
    ``s.host`` off a head (``s.host(self.log.record, h)``) are not."""
    todo = [(f, None) for f in functions]
    found, seen, names = [], set(), set()
    for cls in classes:   # an object called (layer(s, x)) runs its __call__
        call = _python_function(class_attribute(cls, "__call__"))
        if call is not None:
            seen.add((cls, "__call__"))
            found.append((cls, "__call__", class_attribute(cls, "__call__"), call))
            todo.append((call, cls))
    labels: set = set()
    by_class: dict = {}
    while todo:
        f, owner = todo.pop()
        code = f.__code__
        names |= _loaded(code)
        first = frozenset(code.co_varnames[:1])
        roots = heads | first if owner is None else first
        for head, steps in value_chains(code, roots=roots)[1]:
            if owner is None and head in heads and steps:   # self.state.step += 1
                labels.add(str(chain(head, steps)))
            elif owner is not None and head in first:   # an optimizer's self.t += 1
                by_class.setdefault(owner, set()).add(steps[0][1] if steps else _ALL)
        skip = frozenset().union(*(self_callbacks(code, h) for h in heads)) \
            if owner is None else frozenset()
        for cls in classes:
            for name, method, _ in _methods_named(code, cls, skip):
                if (cls, name) not in seen:
                    seen.add((cls, name))
                    found.append((cls, name, class_attribute(cls, name), method))
                    todo.append((method, cls))
    return frozenset(names), tuple(found), (frozenset(labels), by_class)


def _loaded(code) -> set:
    """The names ``code`` and the code nested in it load (``co_names``)."""
    out, todo = set(), [code]
    while todo:
        c = todo.pop()
        out.update(c.co_names)
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return out

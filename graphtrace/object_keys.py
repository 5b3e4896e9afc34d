"""What the cache key holds of objects, classes, modules and functions passed
as arguments (``arguments.Call``): an object of the program's own by what the
code reads off it (``_object_key``: its attributes, and what its class and the
methods named read), a function by the values it reads by global and closure
name (``_function_values``), a class or module of the program's own by what
its names hold (``_namespace_values``); ``Identity`` for what is held by
identity.
"""
from __future__ import annotations

import dataclasses
import dis
import types
import weakref
from functools import partial

import numpy as np

from .chains import value_chains
from .class_reach import made
from .held import _runs_on, held_functions, loaded_names
from .holding import Holdings, Loaded
from .bases import _explicit_bases, _super_methods, _with_wrapped
from .names import EVERY, _names, reads_fields, widest
from .owners import _attributes, _bound_class, _bound_to, _dunders, _followed, _graph_class, \
    _library, _own_module, _python_function, class_attribute, container, contents, own_class, \
    own_object
from .probe import _attr, _has
from .scalar import value_key
from .stand_in import stand_in, stands_for
from .weak_types import store
from .tree import children
from .values import Identity
from .values import _GROUPS, _MAX_DEPTH, _PLAIN_VALUES, _Held, _Same, _is_value, pure_values

__all__ = ["Identity", "key_objects"]


def _object_key(obj, names: frozenset, seen: set) -> tuple:
    """``(identity, values)``: what the cache key holds of an object of the program's
    own passed as an argument (``step(w, cfg)`` reading ``cfg.lr``). Where its class
    says equal objects are interchangeable (``_valued``: a frozen dataclass) and
    every attribute holds values alone, the values of all its attributes (and of
    those its class holds by the names read, ``_reads``): an equal config made
    anew at every call finds its graph (all of them: its methods may read what
    the function's code does not name). Otherwise the object itself and
    ``_settings`` of ``names`` (``_TOO_DEEP`` put in ``seen`` where one lies
    deeper than ``_MAX_DEPTH``: values alone lie no deeper)."""
    if _valued(obj):
        values = _settings(obj, None, 0, set())
        if _values_alone(values):   # and the values its class holds (Cfg.scale)
            names, held, methods = _reads(type(obj), names)
            mine = {name for name, _ in values}
            return None, values + tuple((name, _entry(class_attribute(type(obj), name), names,
                                                      0, set())) for name in held
                                        if name not in mine) + _methods_read(methods) + \
                _called(methods) + _remade(obj, names)
    return Identity(obj), _settings(obj, names, 0, seen) + _remade(obj, names)


def _remade(obj, names) -> tuple:
    """What making another object of ``obj``'s class runs reads (``type(x)()``,
    ``x.__class__()``: its ``__init__`` reading a global ``LR``), where the code
    names ``type`` or ``__class__``; empty otherwise."""
    if names is None or "type" not in names and "__class__" not in names:
        return ()
    functions = tuple(made(type(obj)))
    return _methods_read(functions) + _called(functions)


def _settings(obj, names, depth: int, seen: set) -> tuple:
    """``(name, entry)`` of an object's attributes of ``names`` (those the
    function's code loads, not a history or counter the program keeps on it;
    all where None), ``_entry`` of each: a trace bakes them in, so a change made
    in place (``cfg.lr = 0.1``, ``cfg.hp["lr"] = 0.1``) traces anew rather than
    replaying the old value. One deeper than ``_MAX_DEPTH`` by identity
    (``_TOO_DEEP`` put in ``seen``)."""
    if depth > _MAX_DEPTH or id(obj) in seen:
        if depth > _MAX_DEPTH:
            seen.add(_TOO_DEEP)
        return (Identity(obj),)
    seen.add(id(obj))   # the objects above it: a cycle
    if names is not None:   # (what the code hands to s.host off the argument itself)
        handed = getattr(names, "handed", None) if depth == 0 else None
        attributes = _attributes(obj)
        names, kept = _kept(obj, names, handed, attributes)
        names, held, methods = _reads(type(obj), names)
        if names.fields == EVERY:   # vars(cfg): every attribute it holds
            names = Loaded(names.union(name for name, _ in _attributes(obj)), names.hosted,
                           EVERY)
        out = [(name, _entry(v, names, depth, seen, handed.get(f"self.{name}") if handed
                             else None)) for name, v in attributes
               if name in names] + list(_methods_read(
                   tuple(dict.fromkeys(methods + kept[0])) if kept else methods)) + \
            list(_called(methods))
        out += [(f"{f.__name__}()", ("names", _global_values(f))) for f in kept[1:]]
    else:
        held, out = (), [(name, _entry(v, None, depth, seen)) for name, v in _attributes(obj)]
    if held:   # the values its class holds by those names (Cfg.scale = 2.0)
        mine = {name for name, _ in out}
        out += [(name, _entry(class_attribute(type(obj), name), names, depth, seen))
                for name in held if name not in mine]
    seen.discard(id(obj))
    return tuple(out)


def _kept(obj, names, handed, attributes) -> tuple:
    """``(names, (functions, *closures))``: the Python functions ``obj`` holds by ``names`` (but
    those only handed to ``s.host``), as a bound method, a partial's, a lambda's, in
    lists and dicts (``o.fn = o.update``, ``o.fns = {"u": o.update}``): the graph
    calls them, so what they read by global and closure names is keyed as its
    methods' is (``_methods_read``); and ``names`` with the names those of them
    that run on ``obj`` (bound to it, a partial or closure holding it) load: what
    they read off it (``self.lr`` of ``update``) is read by the call; but the
    callbacks the code only hands to ``s.host`` (``handed``: ``held_functions``')."""
    hosted = getattr(names, "hosted", _NONE)
    for name, v in attributes:   # (at once where it holds values alone)
        t = type(v)
        if t in _PLAIN_VALUES or name not in names or name in hosted:
            continue
        if t in _KEPT or isinstance(v, (list, tuple, dict)) or _bound_class(t) or \
                _graph_class(t) or container(t):
            break
    else:
        return names, ()
    for _ in range(_MAX_DEPTH):   # (self.fn = lambda s: self.fns["u"](s): fns, then update)
        mine: list = []
        found = held_functions(obj, [], names - hosted if hosted else names, mine, handed)
        more = names.union(*(loaded_names(f) - _stored(f.__code__) for f in mine))
        if len(more) == len(names):
            break
        names = Loaded(more, hosted, getattr(names, "fields", ""),   # (not a counter)
                       getattr(names, "handed", None))
    # a closure holding obj (lambda s: self.update(s)): the values its code reads by global
    # names alone (its Holdings would walk obj as a name's object, its counters too)
    closures = tuple(f for f in found if _runs_on(f, obj))
    return names, (tuple(f for f in found if f not in closures),) + closures if found else ()


def _global_values(f) -> tuple:
    """``(name, entry)`` of the values function ``f``'s code reads by global names."""
    scope = f.__globals__
    return tuple((n, _entry(v, frozenset(), 0, set())) for n in _names(f.__code__)
                 if (v := scope.get(n)) is not None and (_is_value(v) or pure_values(v) is not None))


_KEPT = frozenset({types.FunctionType, partial})


_READS: dict = {}   # (class, names, names.hosted) -> _reads
_NONE = frozenset()


def _reads(t: type, names: frozenset) -> tuple:
    """``(names, held, methods)``: ``names`` (those the function's code loads) and
    those the methods and properties of ``t`` it names load in turn (``cfg.rate()`` reading
    ``self.base``; and the bases' they call, ``super().rate()``, ``Base.rate(self)``;
    every field of a dataclass where the code or such a method reads it whole,
    ``names.fields``: ``astuple(cfg)``, ``astuple(self)``), but what they store (a counter a method keeps), and not those
    of a method only handed to ``s.host`` (``names.hosted``: ``s.host(rec.add, h)``,
    which reads what it reads when it runs) unless another calls it; and those of
    them by which ``t`` (or a base) holds values (``Cfg.scale``, read through an
    object that does not hold it); and the functions of the methods followed
    (``_methods_read``). Found once per class and names, and again where the
    class holds another object by the name of a method followed (``P.rate =
    new_rate`` in a notebook's cell)."""
    hosted, fields = getattr(names, "hosted", _NONE), getattr(names, "fields", "")
    hit = _READS.get((t, names, hosted, fields))
    if hit is not None and hit[3] and not all(class_attribute(t, n) is v for n, v in hit[3]):
        hit = None   # a method replaced on the class since (P.rate = new_rate): found anew
    if hit is None:
        out, skipped, methods, whole = set(names), set(hosted), {}, fields
        followed: list = []   # (name, what the class holds by it) of the methods followed
        todo = [n for n in names if n not in skipped] + [name for name, _ in _dunders(t)]
        found: list = []   # functions to read: the methods named, the bases' they call
        while todo or found:   # and the dunders syntax runs (op(s, x): __call__; cfg[0])
            if not found:
                name = todo.pop()
                f = class_attribute(t, name)
                if f is not None and not _is_value(f):
                    followed.append((name, f))
                f = f.fget if isinstance(f, property) else _attr(f, "__func__", f)
                f = _python_function(f) if f is not None else None   # a graph method too
                found += [f] + _super_methods(t, name, f) if f is not None else []
                continue
            for g in _with_wrapped(found.pop()):   # behind a decorator
                if g in methods:
                    continue
                methods[g] = None   # and the bases' it calls: Opt.update(self, s, g, w)
                found += [h for at, n, e, _ in _explicit_bases(g, t)
                          for h in [e] + _super_methods(t, n, e, at)]
                loads = loaded_names(g)   # (a method reading its object whole: astuple(self))
                whole = widest((whole, reads_fields(g)))
                new, again = loads - _stored(g.__code__) - out, loads & skipped
                skipped -= again   # a method calling one handed to s.host: followed
                out |= new
                todo += new | again
        if whole and dataclasses.is_dataclass(t):   # astuple(cfg): every field read
            out |= {f.name for f in dataclasses.fields(t)}
        held = tuple(sorted(n for n in out if not n.startswith("__") and (   # None too:
            _is_value(v := class_attribute(t, n)) or pure_values(v) is not None or   # a
            v is None and _class_holds(t, n))))   # value set there later traces anew
        hit = store(_READS, (t, names, hosted, fields), (
            Loaded(out, skipped, whole), held, tuple(methods), tuple(followed)), t)
    return hit[:3]


def _class_holds(t: type, name: str) -> bool:
    """Whether ``t`` or a base of the program's own holds ``name`` itself (``lr =
    None``), not only the attribute lookup's None of a name it lacks."""
    return any(name in vars(c) for c in t.__mro__ if own_class(c))


def _called(methods) -> tuple:
    """The key's entry of the functions of the methods followed, by identity: one
    replaced on the class (``P.rate = new_rate``) is another graph."""
    return (("()", methods),) if methods else ()


def _methods_read(methods) -> tuple:
    """``(label, values)`` for each method of ``_reads``: what it reads by global
    and closure names, and what the helpers it calls and the objects its names
    hold read (``_reached``, as for a function passed as an argument):
    ``cfg.rate()`` or ``op(s, x)`` reading a global ``BASE``; none for a method
    reaching nothing by name (``self.k * 2``: a call reads nothing more)."""
    return tuple((f"{f.__name__}()", ("reads", values)) for f in methods
                 if _names_any(f) and (values := _reached(f, named=True)))


def _names_any(f) -> bool:
    """Whether function ``f`` may read anything by a global or closure name (its
    code's or nested code's, ``_names``) or a default: found once per code object,
    so that a method reaching nothing costs a call no ``Holdings``."""
    code = _attr(f, "__code__")
    if code is None:
        return True
    hit = _NAMES_ANY.get(id(code))
    if hit is None or hit[0] is not code:
        hit = _NAMES_ANY[id(code)] = (code, bool(_names(code)))
    return hit[1] or f.__defaults__ is not None or f.__kwdefaults__ is not None


_NAMES_ANY: dict = {}   # id(code) -> (code, whether it names any global or free name)


def _stored(code) -> set:
    """The attribute names a code object (and the code nested in it) stores or
    deletes."""
    out, todo = set(), [code]
    while todo:
        c = todo.pop()
        todo += [x for x in c.co_consts if isinstance(x, types.CodeType)]
        out.update(i.argval for i in dis.get_instructions(c)
                   if i.opname in ("STORE_ATTR", "DELETE_ATTR"))
    return out


def _entry(v, names, depth: int, seen: set, hand=None):
    """The key's entry for a value an argument object holds: numbers, strings and
    containers of them (``pure_values``: sets, deques, ``OrderedDict`` too) by
    value; the objects of the program's own it holds by their ``_settings`` in
    turn (with ``names`` None: only those of ``_valued`` classes), and the
    containers holding them (a list, tuple or dict, or another of
    ``owners.contents``: a deque, a set of them) item by item; anything else by
    identity (held, so that a freed object's id, given to a new one, finds no
    stale graph). A container deeper than ``_MAX_DEPTH`` by identity (``_TOO_DEEP``).
    What the code only hands to ``s.host`` (``hand``: ``handed.Hand`` of the
    attribute, ``s.host(cfg.fn, h)``, ``s.host(cfg.hooks["log"], h)``) by identity:
    a callback reads what it reads when it runs."""
    t = type(v)
    if hand is not None and hand.whole_callback:
        return Identity(v)
    if t in _PLAIN_VALUES:   # at once
        return t, value_key(v)
    if isinstance(v, type) and own_class(v):   # cfg.cls(): what its objects' code reads
        return t, value_key(v), _namespace_values(v, names if names is not None else _NONE)
    if _is_value(v):
        return t, _Held(v) if t in _GROUPS else value_key(v)
    if own_object(v):
        if names is None and not _valued(v):
            return Identity(v)
        return t, _settings(v, names, depth + 1, seen)
    if names is not None and (t is partial or _bound_class(t)):
        return _runner_entry(v, names, depth, seen)
    form = pure_values(v)
    if form is not None:
        return t, _Held(form)
    items = children(v)
    if items is None and container(t):
        items = contents(v, "")
    if items is None:
        return Identity(v)
    if depth >= _MAX_DEPTH:
        seen.add(_TOO_DEEP)
        return Identity(v)
    return t, tuple((type(k), value_key(k), Identity(x) if hand is not None and
                     hand.callback(k) else _entry(x, names, depth + 1, seen))
                    for k, x in items)


def _runner_entry(v, names, depth: int, seen: set):
    """The key's entry for a bound method or partial an argument object holds: itself,
    the objects of the program's own it runs on (``o.fn = other.update``,
    ``partial(Opt.update, other)``) by what its function reads off them as well
    (``other.lr``; ``seen`` ends a cycle: one bound to the object holding it, whose
    reads ``_kept`` adds), and what its function reads by global and closure names."""
    bound = _bound_to(v)
    if bound is not None:
        owner, fn, held = bound[0], bound[1], [bound[0]]
    else:
        owner, fn = _bound_to(v.func), v.func
        fn = owner[1] if owner is not None else fn
        held = ([owner[0]] if owner is not None else []) + list(v.args) + \
            list(v.keywords.values())
    fn = _python_function(fn)
    objects = [o for o in held if own_object(o)] if fn is not None else []
    if not objects:
        return Identity(v)
    reads = names | loaded_names(fn)   # and what it reads by global names (other.update's)
    return type(v), Identity(v), tuple(_settings(o, reads, depth + 1, seen) for o in objects), \
        _methods_read((fn,))


_TOO_DEEP = object()   # in _settings' seen: an object lay too deep to key by its values


_VALUED: dict = {}   # class -> whether its objects are values (_valued)


def _valued(obj) -> bool:
    """Whether ``obj``, of a class of the program's own, compares by value and
    hashes (a frozen dataclass, one defining ``__eq__`` and ``__hash__``): equal
    ones are interchangeable, and stay so (a hashable object is not changed). Its
    class says so, and the object itself must hash: a frozen dataclass holding a
    list (a results sink) raises TypeError, and is an object kept by identity."""
    t = type(obj)
    hit = _VALUED.get(t)
    if hit is None:
        hit = store(_VALUED, t, t.__eq__ is not object.__eq__ and t.__hash__ is not None)
    if not hit:
        return False
    try:
        hash(obj)
    except TypeError:
        return False
    return True


def _values_alone(entries) -> bool:
    """Whether ``_settings`` entries hold no object by identity."""
    return all(type(e) is not Identity and (type(e) is not tuple or _values_alone(e))
               for e in entries)


def key_objects(key) -> frozenset:
    """The ids of the objects a cache key holds, by identity (``Identity``,
    ``values._Same``) or as themselves (a kernel reached by name): a later call
    holding another object there has another key."""
    out, todo = set(), [key]
    while todo:
        x = todo.pop()
        t = type(x)   # (by identity: a class's metaclass may define ==)
        if t is tuple or t is list or t is frozenset:
            todo.extend(x)
        else:
            out.add(id(x.obj if t is Identity or t is _Same else x))
    return frozenset(out)


def _function_values(f, hosted: bool = False) -> tuple:
    """What a function passed as an argument (a graph function too, and a method
    bound to its object: ``_function_of``) reads that its trace bakes in: the
    values (numbers, strings, containers of them) its code reads by global and
    closure names, and those it reads off the object of a bound method of the
    program's own (``apply(model.op, x)`` reading ``self.c``); empty for anything
    else (a builtin, a kernel, a class). ``hosted``: one the graph function hands
    to ``s.host``, whose code changes what it keeps when it runs (``SEEN.append(x)``):
    those names are left out (else a history it appends to traces anew each call)."""
    owner, func = _function_of(f)
    if not isinstance(func, types.FunctionType) or isinstance(f, type):
        return ()
    names, out = loaded_names(func), []
    kept = {head for head, _ in value_chains(func.__code__)[1]} if hosted else set()
    if owner is not None and own_object(owner):
        out.append(("self",) + _object_key(owner, names, set()))
    code, scope = func.__code__, func.__globals__
    cells = []
    for name, cell in zip(code.co_freevars, func.__closure__ or ()):
        try:
            cells.append((name, cell.cell_contents))
        except ValueError:   # not yet bound
            continue
    if owner is None:   # and what the helpers it calls and the objects its names
        reached = _reached(func)   # hold read, as a graph function's are read
        if hosted:   # but items of host arrays (LOG[0]): a callback reads them when it
            reached = tuple(e for e in reached if not _host_item(e, scope))   # runs
        if reached:
            out.append(("reached", reached))
    for name, v in cells + [(n, scope[n]) for n in sorted(names) if n in scope]:
        if name in kept:
            continue
        if isinstance(v, (list, tuple, dict, set, frozenset)) and len(v) > _MOST_VALUES:
            continue   # a table of values: read whole at every call, it would cost more
        if _is_value(v) or pure_values(v) is not None:   # than the trace it saves
            out.append((name, _entry(v, frozenset(), 0, set())))
    return tuple(out)


_MOST_VALUES = 4096   # items of a container _function_values keys by value


def _host_item(entry, scope) -> bool:
    """Whether a ``Reach.functions`` entry is an item read off a host numpy array a
    global name holds (``("LOG[0]", np.float64, 0.5)``)."""
    label = str(entry[0]) if type(entry) is tuple and entry and isinstance(entry[0], str) \
        else ""   # (a chains.Chain: a str)
    head = label.split("[", 1)[0]
    return head != label and type(scope.get(head)) is np.ndarray


def _reached(func, named: bool = False) -> tuple:
    """``Holdings.functions`` of a function of the program's own (found once while
    it lives): the values its names, its helpers' and the objects they hold read;
    ``named``: empty where its names reach nothing (its code alone)."""
    holdings = _HOLDINGS.get(func)
    if holdings is None or not stands_for(holdings.function, func):   # (not func itself:
        holdings = _HOLDINGS[func] = Holdings(stand_in(func), None)   # it would never die)
    if named and not holdings.reach.places and not holdings.reach.objects:
        return ()
    return holdings.functions()


def _function_of(f) -> tuple:
    """``(the object it is bound to or None, function)`` of a callable passed as an
    argument: a bound method's (a graph method's bound to its instance too), a
    graph function's (``@gt.graph``: the function it traces), else ``f`` itself
    (its ``__func__`` where it has one)."""
    bound = _bound_to(f)
    if bound is not None:
        return bound
    return None, _python_function(f) if _graph_class(type(f)) else _attr(f, "__func__", f)


def _namespace_values(v, names: frozenset) -> tuple:
    """What a class or module of the program's own passed as an argument holds by
    the names the code, and the code of the class's own methods, loads (values
    and containers of them): ``step(out, Cfg)`` reading ``cfg.lr``, or
    ``cfg.rate()`` reading ``cls.LR``; and what the class's methods (the module's
    functions) the code names read by global and closure names
    (``_methods_read``); empty for anything else."""
    methods = ()
    if isinstance(v, type):
        if not own_class(v):   # class Num(float) making itself from a global: that code
            return made_reads(v)
        methods = tuple(dict.fromkeys(_reads(v, names)[2] + tuple(made(v))))   # and cls()'s
        names = names | frozenset().union(*(
            loaded_names(f) for f in (_python_function(_attr(x, "__func__", x))
                                      for c in v.__mro__ for x in vars(c).values())
            if f is not None))
        read = [(n, class_attribute(v, n)) for n in sorted(names)]
    elif isinstance(v, types.ModuleType) and not _library(v):
        scope = vars(v)
        read = [(n, scope[n]) for n in sorted(names) if n in scope]
        methods = tuple(f for _, x in read if not _has(x, "py_func") and   # not a kernel
                        (f := _followed(x)) is not None)   # mod.helper(s, x)
    else:
        return ()
    return tuple((n, _entry(x, frozenset(), 0, set())) for n, x in read
                 if x is not None and (_is_value(x) or pure_values(x) is not None)) + \
        _methods_read(methods) + _called(methods)


def made_reads(cls) -> tuple:
    """What making an instance of ``cls``, a program's own subclass of a value type
    or another class ``own_class`` leaves (``class Num(float)`` with a ``__new__``),
    reads by global and closure names; empty for a library's class."""
    functions = tuple(made(cls)) if _own_module(cls) else ()
    return _methods_read(functions) + _called(functions) if functions else ()


_HOLDINGS = weakref.WeakKeyDictionary()   # a function passed as an argument -> its Holdings
# (of its stand_in: a value holding its key would keep it alive for good)

"""The names code loads, found in its bytecode: the global and closure names
of a function and of the code nested in it (``_names``), the attribute
chains read off them (``name_chains``), those it stores (``_stored``) and
hands to host callbacks (``_nested_callback_codes``, ``_hosted``); the
methods of a class that code names (``_methods_named``, with the functions a
decorator wraps, those ``super()`` reaches and the bases' it calls explicitly:
``bases.py``), whether it reads a dataclass whole (``reads_fields``),
the attributes a method reads off ``self`` (``attribute_names``,
``self_chains``), and what a trace may have stored under the names
(``named_values``).

``reach.py`` walks these names for the arrays and values they hold
(``values.py``), going into the helpers and objects of the program's own
(``owners.py``); ``holding.py`` and ``held.py`` read what ``self`` holds by them.
"""
from __future__ import annotations

import dataclasses
import dis
import operator
import re
import types
import weakref
from functools import partial

from .arrays import is_array
from .bases import _explicit_bases, _super_methods, _with_wrapped
from .chains import MISSING, NAME_LOADS as _NAME_LOADS, Chain as _Chain, chain as _chain, \
    Slot, attribute_loads, callback_codes, changes, default_of, imported, lookup as _lookup, \
    own_methods, value_chains
from .dynamic_names import by_names
from .global_keys import by_globals
from .self_stores import set_by_name
from .host_chains import host_callbacks, host_chains, self_callbacks
from .named_keys import by_name, keys_read_by
from .owners import _PLAIN_BASES, _dunders, _followed, _library, _python_function, \
    _python_helper, class_attribute, class_of, held_at, own_holder, own_object
from .probe import _answers_oddly, _attr
from .static_attrs import getattr_static
from .values import _MAX_DEPTH
from .whole_reads import read_attribute_whole

__all__ = ["attribute_names", "class_methods", "name_chains", "named_values", "reads_fields",
           "self_chains", "self_changes"]


def _names(code, live: bool = True) -> list[str]:
    """Global and free names of a code object and of the functions nested in it;
    ``live`` False: not those of the host callbacks defined in it (``callback_codes``),
    which read what they read when they run."""
    out = list(code.co_freevars) + _global_names(code) + \
        [head for head, _ in imported(code).values()]   # import kmod inside: "<kmod>"
    skip = frozenset() if live else callback_codes(code)
    for c in code.co_consts:
        if isinstance(c, types.CodeType) and c not in skip:
            out += [n for n in _names(c, live) if n not in c.co_freevars]
    return list(dict.fromkeys(out))


_GLOBAL_OPS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "DELETE_GLOBAL",
                         "STORE_NAME", "DELETE_NAME", "LOAD_FROM_DICT_OR_GLOBALS"})
_GLOBALS_OF: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _global_names(code) -> list[str]:
    """The names ``code`` itself loads, stores or deletes as globals: not all of
    ``co_names``, which holds the attribute names too (``self.epoch`` would watch
    a global ``epoch``, a loop variable, and trace at every call); and those it
    looks up in ``globals()`` by constant keys (``by_globals``)."""
    hit = _GLOBALS_OF.get(code)
    if hit is None:
        hit = _GLOBALS_OF[code] = list(dict.fromkeys(
            [ins.argval for ins in dis.get_instructions(code) if ins.opname in _GLOBAL_OPS] +
            sorted(set().union(*by_globals(code)))))
    return hit


def _filled(cell) -> bool:
    """Whether a closure cell holds a value (not one its function has yet to set)."""
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _stored(code) -> frozenset:
    """Global and free names a code object (or code nested in it) assigns or deletes:
    state the function keeps (``global calls; calls += 1``), not a setting it reads."""
    out, todo = set(), [code]
    while todo:
        c = todo.pop()
        todo += [x for x in c.co_consts if isinstance(x, types.CodeType)]
        out.update(ins.argval for ins in dis.get_instructions(c) if ins.opname in
                   ("STORE_GLOBAL", "DELETE_GLOBAL", "STORE_DEREF", "DELETE_DEREF")
                   and (ins.opname.endswith("GLOBAL") or ins.argval in c.co_freevars))
        out.update(by_globals(c)[1])   # globals()["A"] = True
    return frozenset(out)


def name_chains(code, scope: dict, loads=("LOAD_GLOBAL", "LOAD_NAME")) -> list:
    """``(dotted name, value)`` for each name ``code`` (and the code nested in it)
    loads by one of ``loads`` and each attribute chain read off one (``STATE.buf``,
    ``module.ARR``): values looked up in ``scope`` and read statically (no
    property's code runs), ``MISSING`` where absent. Attribute names alone, which
    ``co_names`` holds too, are not names loaded."""
    out, codes = [], [code]
    while codes:
        c = codes.pop()
        held = None   # the name or chain just loaded
        local = imported(c)   # from kmod import kk: kk[...] reads "<kmod>.kk"
        for ins in dis.get_instructions(c):
            if ins.opname in loads:
                held = (ins.argval, scope.get(ins.argval, MISSING))
            elif ins.opname.startswith("LOAD_FAST") and ins.argval in local:
                head, steps = local[ins.argval]
                held = (head + "".join(f".{k}" for _, k in steps), MISSING)
            elif ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and held is not None:
                held = (f"{held[0]}.{ins.argval}",
                        getattr_static(held[1], ins.argval, MISSING))
            else:
                held = None
                continue
            out.append(held)
        codes.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return out


_cell_contents = operator.attrgetter("cell_contents")


def _getter(fn, name):
    """A call without arguments that does ``_lookup(fn, name)``, in C for a plain
    name (an empty cell raises ValueError)."""
    code = fn.__code__
    if type(name) is _Chain:   # constant attributes and items read off a name
        return name.getter(fn, _getter(fn, name.head))
    if type(name) is Slot:   # what a class holds itself by a method's name
        return name.getter()
    if name[:1] == "=":   # a parameter's default (cfg=CFG)
        return partial(default_of, fn, name[1:])
    if "." in name or name[:1] == "<":   # an attribute chain, a module imported
        return partial(_lookup, fn, name)       # inside: looked up in Python
    if name in code.co_freevars:
        return partial(_cell_contents, fn.__closure__[code.co_freevars.index(name)])
    return partial(fn.__globals__.get, name)


def self_changes(functions) -> frozenset:
    """The attributes of their object that methods ``functions`` change, in place
    or by a store (``self.snaps.append(h.copy())``, ``self.n += 1``)."""
    out = set()
    for f in functions:
        first = f.__code__.co_varnames[:1]
        out.update(steps[0][1] for h, steps in value_chains(f.__code__, roots=frozenset(first))[1]
                   if (h,) == first and steps and steps[0][0] == "attr")
    return frozenset(out)


def self_chains(fn, self_param: str, cls=None) -> tuple:
    """``((label, steps), ...), stored, hosted, kept, named``: the values a method reads off ``self``
    by two or more constant attributes and items (``self.cfg.lr``,
    ``self.cfg["lr"]``; one attribute is ``instance_values``'), but those it, or a
    method, property or helper of ``cls`` it names, changes in place
    (``self._tick()`` doing ``self.state.step += 1``): each step one call
    (``Chain.calls``); the attributes of ``self`` they store (``self.calls += 1``,
    ``self.scale = 1.0``: run by the trace, which tells state from settings,
    ``Holdings.note_traced``); and those only the host callbacks it hands out
    store (``def tick(): self.n += 1; s.host(tick)``: state, run between calls,
    which ``instance_values`` leaves out); and the chains deeper than one
    attribute the traced code stores (``self.state["init"] = True``), as those
    ``(label, steps)``, read before and after a trace (``Holdings.entries``); and
    label -> the chain's steps of those whose keys a name gives (``self.state[KEY]``),
    each read by the names of the code that reads it (``keys_read_by``)."""
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    if code is None:
        return (), frozenset(), frozenset(), (), {}
    methods = _methods_named(code, cls, self_callbacks(code, self_param), supers=True,
                             fn=getattr(fn, "__func__", fn)) if cls is not None else []
    own = {self_param: frozenset(name for name, _, _ in methods)}   # self.update()
    chains, changed = value_chains(code, roots=frozenset({self_param}), own=own)
    chains = [steps for h, steps in chains if h == self_param]
    changed = [c for h, c in changed if h == self_param]
    _, traced = value_chains(code, roots=frozenset({self_param}), own=own, callbacks=False)
    traced = [c for h, c in traced if h == self_param]
    named = [(("attr", n),) for n in set_by_name(code, self_param)]   # setattr(self, "on", v)
    changed, traced = changed + named, traced + named
    setters = [(name, p.fset, True) for name, p in _setters(cls, changed)]   # self.on = v
    for _, other, takes_self in methods + setters:   # of a property: its setter's code
        first = other.__code__.co_varnames[:1]
        read, change = value_chains(other.__code__, roots=frozenset(first),
                                    own={first[0]: own[self_param]} if first else None)
        changed += [c for h, c in change if (h,) == first]   # (a key read by a name:
        traced += [keys_read_by(c, other) for h, c in change if (h,) == first]   # other's)
        if takes_self:   # self.update(s, x) reading self.cfg["lr"]: read for the method
            chains += [keys_read_by(steps, other) for h, steps in read if (h,) == first]
    found = {}
    stored = frozenset(c[0][1] for c in changed if len(c) == 1 and c[0][0] == "attr")
    hosted = stored - {c[0][1] for c in traced if len(c) == 1 and c[0][0] == "attr"}
    roots = [(code, self_param)] + [(o.__code__, o.__code__.co_varnames[0]) for _, o, mine in
                                    methods + setters if mine and o.__code__.co_varnames]
    # an item of a constant key stored in what the code reads whole (if self.d: ...;
    # self.d["init"] = True): self.d changed, as self.d.update(init=True) changes it
    stored |= {c[0][1] for c in traced if len(c) == 2 and c[0][0] == "attr" and
               c[1][0] == "item" and any(read_attribute_whole(k, root, c[0][1])
                                         for k, root in roots)}
    for steps in chains:
        if len(steps) >= 2 and not any(changes(steps, c) for c in changed):
            label = _chain("self", steps)
            found[str(label)] = label.calls(getattr(fn, "__func__", fn))
    kept, named = {}, {}   # self.state["init"] = True: read before and after a trace
    # (note_traced), and what reads it by another key's name (self.state[KEY], KEY = "init")
    for steps in traced + [s for s in chains if any(changes(s, c) and by_name(s + c)
                                                    for c in traced)]:
        if len(steps) >= 2 and all(how in ("attr", "item") for how, _ in steps):
            label = _chain("self", steps)
            kept[str(label)] = label.calls(getattr(fn, "__func__", fn))
            if by_name(steps):   # its key's name read where the code reading it is
                named[str(label)] = steps   # (a base class's module: set again by it)
    return tuple(found.items()), stored - hosted, hosted, tuple(kept.items()), named


def _setters(cls, changed) -> list:
    """``(name, property)`` of the properties of ``cls`` with a Python setter that
    the ``changed`` chains store by name (``self.initialized = True``)."""
    out = []
    for c in changed if cls is not None else ():
        if len(c) == 1 and c[0][0] == "attr":
            p = next((k.__dict__[c[0][1]] for k in cls.__mro__ if c[0][1] in k.__dict__), None)
            if isinstance(p, property) and isinstance(p.fset, types.FunctionType):
                out.append((c[0][1], p))
    return out


def class_methods(fn, self_param: str, cls) -> list:
    """``(name, function)`` for the Python functions of the methods, properties and
    static or class methods of ``cls`` that method ``fn`` calls (and those they
    call), but host callbacks (``s.host(self.report, h)``, which read when they
    run): what they reach by global and closure names is the method's too."""
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    if code is None:
        return []
    return [(name, f) for name, f, _ in _methods_named(
        code, cls, _hosted(code, self_param), supers=True, fn=getattr(fn, "__func__", fn))]


def callback_methods(fn, self_param: str, cls) -> list:
    """``(name, function)`` for the Python functions of the methods of ``cls`` that
    method ``fn`` hands to ``s.host`` (``s.host(self.report)``, also through
    ``partial`` or a lambda calling it), and those they call: what they read by
    global and closure names they read when they run (``Reach`` not baked)."""
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    if code is None:
        return []
    hosted = self_callbacks(code, self_param).union(
        *(_self_loads(c, self_param) for c in _nested_callback_codes(code)))
    return [(name, f) for name, f, _ in
            _methods_named(code, cls, only=hosted, supers=True)] if hosted else []


def _object_steps(code, obj, depth: int = 0, own=()) -> list:
    """The attributes the methods of ``obj`` (an object of the program's own) that
    ``code`` names read off their self (``sink.notify()`` reading ``self.buf``), each
    as a chain's steps, and those of the objects they hold whose methods those call
    (``self.sink.read()``): but those they change in place (a history). ``own``:
    ``(function, parameter)`` of a function handed ``obj`` by that parameter, read
    as a method (``partial(Sink.notify, sink)``: notify's self). ``obj`` may be a
    class of the program's own, read by its class methods (``cls.buf``)."""
    if depth > 2 or not (own_holder(obj) if isinstance(obj, type) else own_object(obj)):
        return []
    on_class = isinstance(obj, type)   # a class: its class methods, whose cls it is
    methods = list(own) + [(f, f.__code__.co_varnames[0]) for name, f, takes_self in
                           _methods_named(code, class_of(obj)) if f.__code__.co_argcount and (
                               isinstance(class_attribute(obj, name), classmethod)
                               if on_class else takes_self)]
    reads, changed = [], []
    for f, param in methods:
        read, change = value_chains(f.__code__, roots=frozenset({param}))
        reads += [steps[:1] for h, steps in read if h == param and steps]
        changed += [c for h, c in change if h == param]
    out = []
    for steps in dict.fromkeys(s for s in reads if s[0][0] == "attr"):
        if not any(changes(steps, c) for c in changed):
            held = held_at(obj, steps[0][1])
            out += [steps] + [steps + more for f, _ in methods
                              for more in _object_steps(f.__code__, held, depth + 1)]
    return list(dict.fromkeys(out))


def _nested_callback_codes(code) -> set:
    """The code objects ``code`` (and the code nested in it) hands to ``.host(...)``."""
    out, todo = set(), [code]
    while todo:
        c = todo.pop()
        out |= callback_codes(c)
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return out


_CHAINS_OF: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _code_chains(code) -> list:
    """The chains ``value_chains`` finds ``code`` reads (a host callback's own code:
    ``lambda: HOLDER["sink"].read()``), found once per code object."""
    hit = _CHAINS_OF.get(code)
    if hit is None:
        hit = _CHAINS_OF[code] = value_chains(code)[0]
    return hit


def _hosted(code, self_param: str) -> frozenset:
    """The names ``code`` hands to ``s.host`` that are not self's methods it calls:
    self's callbacks (``s.host(self.report, h)``) and the methods of the objects it
    holds or a name does (``s.host(self.log.record, h)``, ``s.host(LOG.record, h)``
    beside a ``Model.record`` it never calls)."""
    return self_callbacks(code, self_param) | (frozenset(
        steps[-1] for head, steps in host_chains(code) if head != self_param or len(steps) > 1) -
        _self_loads(code, self_param))


def _methods_named(code, cls, skip=frozenset(), supers: bool = False, only=None,
                   fn=None) -> list:
    """``(name, function, takes_self)`` for the Python functions of the methods,
    properties and static or class methods of ``cls`` that ``code`` names (but
    ``skip``; ``only``, where given: those names instead), and those they name in
    turn; ``takes_self``: its first parameter is the object (a method or a
    property's getter). Also those of the bases they call explicitly
    (``_explicit_bases``: ``Base.step(self, s, x)``; for ``code`` itself where
    ``fn``, its function, is given). With ``supers``, also the same-named methods
    of the bases they reach through ``super()`` (``_super_methods``; held.py
    finds those itself, with the class of each)."""
    out, todo, seen = [], [(code, fn)], set()
    while todo:
        c, f_of = todo.pop()
        codes, names = [c], set()
        while codes:
            k = codes.pop()
            names.update(attribute_loads(k))
            if not _DYNAMIC.isdisjoint(k.co_names):   # getattr(OPT, "update")(s, w),
                names.update(x for x in k.co_consts   # methodcaller("update", s, w)
                             if type(x) is str and x.isidentifier())
            if by_names(k):   # getattr(self.layer, self.layer.mode)(s, x): any of them
                names.update(_method_names(cls))
            live = callback_codes(k)   # a lambda handed to s.host reads when it runs
            codes.extend(x for x in k.co_consts if isinstance(x, types.CodeType) and
                         x not in live)
        if c is code:
            names = set(only) if only is not None else names - skip
        found = []
        for name in names:
            attr = getattr_static(cls, name, None)
            f = attr.fget if isinstance(attr, property) else _attr(attr, "__func__", attr)
            f = _python_function(f) if f is not None else None
            if f is not None:
                found.append((cls, name, f, not isinstance(attr, (staticmethod, classmethod))))
        if f_of is not None and (c is not code or only is None):
            found += [e for e in _explicit_bases(f_of, cls) if c is not code or e[1] not in skip]
        for at, name, f, takes_self in found:
            for g in [f] + (_super_methods(cls, name, f, at) if supers else []):
                for h in _with_wrapped(g):   # a decorated method: the method too
                    if id(h) not in seen:
                        seen.add(id(h))
                        out.append((name, h, takes_self))
                        todo.append((h.__code__, h))
    return out


def _method_names(cls) -> list:
    """The names of the methods and properties (not dunders) ``cls`` and its bases
    of the program's own define: those a name known only when code runs may pick."""
    return [name for c in cls.__mro__ if c not in _PLAIN_BASES for name, v in c.__dict__.items()
            if name[:2] != "__" and (isinstance(v, property) or
                                     _python_function(_attr(v, "__func__", v)) is not None)]


# what names a method by a string (getattr(OPT, "update"), operator.attrgetter("update"))
_DYNAMIC = frozenset({"getattr", "attrgetter", "methodcaller"})


# dataclasses' functions that read every field of the object they are handed
_FIELD_READERS = (dataclasses.astuple, dataclasses.asdict, dataclasses.fields, dataclasses.replace)
FIELDS, EVERY = "fields", "every"   # reads_fields: a dataclass's fields; every attribute


def reads_fields(fn) -> str:
    """What ``fn``'s code reads whole of the objects it is handed, where no attribute
    name it loads says: ``FIELDS`` where it names one of dataclasses' functions
    that read every field (``lr, beta = astuple(cfg)``, ``dataclasses.asdict(cfg)``,
    ``fields``, ``replace``) by a global or closure name or off the module;
    ``EVERY`` where it reads an object's attributes as a dict (``vars(cfg)``,
    ``cfg.__dict__``) or by names known only when it runs (``getattr(self, name)``,
    ``attrgetter(key)``: ``dynamic_names.by_names``); else the empty string."""
    code = fn.__code__
    loaded = _loaded(code)
    if "__dict__" in loaded or "vars" in _global_names_all(code) and \
            ((v := _lookup(fn, "vars")) is None or v is vars) or by_names(code):
        return EVERY
    for name in _names(code):
        v = _lookup(fn, name)
        if any(v is f for f in _FIELD_READERS) or v is dataclasses and \
                not loaded.isdisjoint(f.__name__ for f in _FIELD_READERS):
            return FIELDS
    return ""


def widest(reads) -> str:
    """The widest of ``reads_fields``' answers ``reads``."""
    reads = set(reads)
    return EVERY if EVERY in reads else FIELDS if FIELDS in reads else ""


def _global_names_all(code) -> set:
    """``_global_names`` of ``code`` and of the code nested in it."""
    out, todo = set(), [code]
    while todo:
        c = todo.pop()
        out.update(_global_names(c))
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return out


def _loaded(code) -> set:
    """The names ``code`` and the code nested in it load (``co_names``), and the
    strings it holds that could be one (``getattr(self, "lr")``)."""
    out, todo = set(), [code]
    while todo:
        c = todo.pop()
        out.update(c.co_names)
        out.update(k for k in c.co_consts if type(k) is str and k.isidentifier())
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return out


def chain_heads(labels) -> frozenset:
    """The attributes that chain labels index by a constant key first
    (``self.hp["lr"]``, ``.lrs[0]``): containers the code reads by constant keys,
    keyed by those reads alone (a loop writing ``hp["loss"]`` traces nothing
    anew); one it iterates (``self.coef.items()``) is keyed whole."""
    return frozenset(m.group(1) for m in map(_HEAD.match, labels) if m)


_HEAD = re.compile(r"(?:self)?\.(\w+)\[")


def attribute_names(fn, cls=None, self_param: str | None = None, into=None) -> frozenset:
    """The names ``fn``'s code (and the code nested in it) loads as globals or
    attributes: those ``self.name`` may be; with ``cls``, also those of the
    methods and properties of ``cls`` it names, and theirs in turn (``self.lr``
    a property reading ``self._lr``, ``self.rate()`` reading ``self.k``; the
    bases' same-named methods they call through ``super()``; the methods behind
    a decorator's wrapper, ``_with_wrapped``; the bases' it calls explicitly,
    ``Base.step(self, s, x)``: ``_explicit_bases``), and of
    the helper functions it calls by a global name, which may be handed ``self``
    (``apply(self, s, x)`` reading ``model.lr``). With ``self_param``, not those of
    the host callbacks: the methods of self handed to ``s.host`` and the code
    handed to it (``s.host(self.report, h)``, ``s.host(lambda h: ...)``) read
    when they run. ``into``, a list, gets the code objects so read."""
    out: set = set()
    todo, seen = [fn], set()
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    hosted = _hosted(code, self_param) if self_param and code else frozenset()
    if cls is not None:   # what syntax runs on self (self(s, x), self[0], float(self))
        todo += [f for _, f in _dunders(cls)]
    while todo:
        f = todo.pop()
        f = getattr(f, "__func__", f)
        code = getattr(f, "__code__", None)
        if code is None or id(code) in seen:
            continue
        seen.add(id(code))
        if isinstance(f, types.FunctionType):   # a decorated method: the method too
            todo += _with_wrapped(f)[1:]
            if cls is not None:   # and the bases' it calls explicitly: Base.step(self, s)
                todo += [g for at, name, h, _ in _explicit_bases(f, cls)
                         for g in [h] + _super_methods(cls, name, h, at)]
        codes, names, handed = [code], set(), set()
        while codes:
            c = codes.pop()
            if into is not None:
                into.append(c)
            names.update(c.co_names)
            names.update(k for k in c.co_consts if type(k) is str and k.isidentifier())
            live = callback_codes(c) if self_param else ()
            handed |= host_callbacks(c) if self_param else set()   # s.host(tick): not read
            codes.extend(k for k in c.co_consts if isinstance(k, types.CodeType) and
                         k not in live)
        scope = getattr(f, "__globals__", {})
        for name in names - out - handed if cls is not None else ():   # a helper it calls by
            helper = _python_helper(scope.get(name))   # name, may be handed self: apply(self, s, x)
            if helper is not None:
                todo.append(helper)
        for name in names - out - hosted if cls is not None else ():
            try:
                attr = getattr_static(cls, name)
            except AttributeError:
                continue
            if isinstance(attr, property):
                todo.extend(x for x in (attr.fget,) if x is not None)
                continue
            f = _python_function(_attr(attr, "__func__", attr))   # a decorated one too
            if f is not None:   # and the bases' it calls through super()
                todo += [f] + _super_methods(cls, name, f)
        out |= names
    return frozenset(out)


def _self_loads(code, self_param: str) -> frozenset:
    """The attribute names ``code`` (and the code nested in it) reads directly off
    ``self_param`` (``self.record``)."""
    out, codes = set(), [code]
    while codes:
        c = codes.pop()
        codes.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        last = None
        for ins in dis.get_instructions(c):
            if ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and last == self_param:
                out.add(ins.argval)
            last = ins.argval if ins.opname.startswith("LOAD_FAST") or \
                ins.opname == "LOAD_DEREF" else None
    return frozenset(out)


def _reads(fn, code) -> tuple:
    """``value_chains`` of a walked function's code, its objects' own methods known,
    and the changes its host callbacks' code makes."""
    hosted: set = set()
    return value_chains(code, own=_owners(fn, code), hosted=hosted) + (hosted,)


def _owners(fn, code) -> dict:
    """name -> ``own_methods`` of the class of the object it holds, for the names
    ``fn``'s code loads that hold an instance of a class of the program's own
    (``M.update(s, x)`` calling ``Model.update`` changes nothing by itself)."""
    out = {}
    for name in _names(code):
        v = _lookup(fn, name)
        if v is not None and not isinstance(v, (type, types.ModuleType)) and \
                not _library(type(v)) and not _answers_oddly(v) and not callable(v):
            out[name] = own_methods(type(v))
    return out


def _held_dotted(fn, code, name: str, memo: list) -> list:
    """``(dotted name, what it holds now)`` for each dotted name ``code`` loads off
    ``name`` (``K.step``, ``devops.op``: a module, class or namespace of the
    program's own); ``memo`` keeps the code's dotted names (empty: not found yet)."""
    if not memo:
        memo.append([n for n, _ in name_chains(code, {}, _NAME_LOADS) if "." in n])
    return [(d, _lookup(fn, d)) for d in memo[0] if d.startswith(name + ".")]


def named_values(root) -> list[tuple[str, object]]:
    """``(label, value)`` of every global and closure name of ``root`` and of the
    helpers it calls by name, looked up now, defined or not: where a trace may
    have stored something (``global KEEP; KEEP = x``)."""
    out, seen, todo = [], set(), [(root, 0)]
    while todo:
        fn, depth = todo.pop()
        if id(fn) in seen or depth > _MAX_DEPTH:
            continue
        seen.add(id(fn))
        for name in _names(fn.__code__):
            v = _lookup(fn, name)
            out.append((name if fn is root else f"{fn.__name__}.{name}", v))
            try:
                inner = None if is_array(v) else _followed(v)
            except ReferenceError:   # a dead weak proxy
                inner = None
            if inner is not None:
                todo.append((inner, depth + 1))
    return out

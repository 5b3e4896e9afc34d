"""The bases' methods a method runs beside its class's own: those it calls
explicitly (``Base.update(self, ...)``, ``_explicit_bases``), through
``super()`` (``_super_bases``), and the method a decorator's wrapper runs
(``_with_wrapped``); ``_holder`` tells the class of the MRO holding one.

An override calling its base's version reads what that reads off ``self``, so
``names.py`` (``_methods_named``, ``attribute_names``), ``held.py`` and
``object_keys.py`` follow these too. The base may be named any way a program
names a class: by a global or closure name, off a module or another class
(``basemod.Base.update(self)``, ``Outer.Base``), through a local alias
(``B = basemod.Base``, ``import basemod as bm`` inside), a class attribute
(``self.parent.update(self)`` of ``parent = Base``), ``getattr(Base,
"update")`` or ``Base.__dict__["update"]``. Code that finds its base at run
time (``type(self).__bases__[0].update(self)``) is taken to call every base's
method of each name it loads.
"""
from __future__ import annotations

import dis
import types
import weakref

from .chains import MISSING, NAME_LOADS, imported, lookup
from .owners import _attr, _python_function
from .static_attrs import getattr_static
from .values import _MAX_DEPTH

__all__ = []


def _among(cls, classes) -> bool:
    """Whether ``cls`` is one of ``classes``, by identity: ``in`` compares with
    ``==``, which a metaclass may define to build a symbolic expression or to raise
    (an ORM's, a symbolic library's)."""
    return any(c is cls for c in classes)


_SELF = object()   # a chain's head: the method's first parameter, an object of its class
_MRO_READS = frozenset({"__bases__", "__base__", "__mro__", "mro"})   # a base found at run time
_STORES = frozenset({"STORE_FAST", "STORE_DEREF", "STORE_NAME"})
_CHAINS_OF: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _chains(code) -> tuple:
    """``(chains, loaded, by_mro)`` of ``code`` and the code nested in it, found once
    per code object: each chain ``(head, steps, store)`` read off a name in code
    order (``head``: ``("name", name)`` for a global or closure name, a local's
    name, or a module imported inside, as ``lookup`` reads it; ``("self", None)``
    for the first parameter; ``steps``: ``("attr", name)`` and then perhaps one
    ``("const", string)``; ``store``: the local it is stored in, else None;
    ``with_self``: the first parameter is loaded next, as a call handing it on
    does, ``X.update(self, ...)``); the names all of it loads; whether it reads
    a class's bases (``__bases__``)."""
    hit = _CHAINS_OF.get(code)
    if hit is not None:
        return hit
    first = code.co_varnames[0] if code.co_argcount else None
    chains, loaded, by_mro, todo = [], set(), False, [code]
    while todo:
        c = todo.pop(0)
        todo += [k for k in c.co_consts if isinstance(k, types.CodeType)]
        loaded.update(c.co_names)
        loaded.update(k for k in c.co_consts if type(k) is str and k.isidentifier())
        local = imported(c)   # import basemod as bm inside: bm is "<basemod>"
        held = None   # [head, steps] read so far
        for ins in dis.get_instructions(c):
            op, arg = ins.opname, ins.argval
            name = (arg[-1] if arg else None) if isinstance(arg, tuple) else arg
            if op in NAME_LOADS or op.startswith("LOAD_FAST") and op != "LOAD_FAST_AND_CLEAR":
                if held is not None and held[1]:   # (a call handing it self next: X.m(self))
                    chains.append((held[0], tuple(held[1]), None, name == first))
                if name == first:
                    head = ("self", None)
                elif name in local and op.startswith("LOAD_FAST"):
                    mod, steps = local[name]
                    head = ("name", mod + "".join(f".{k}" for _, k in steps))
                else:
                    head = ("name", name)
                held = [head, []]
                continue
            if op in ("LOAD_ATTR", "LOAD_METHOD"):
                by_mro = by_mro or name in _MRO_READS   # (off anything: type(self).__bases__)
            if held is None:
                continue
            if op in ("LOAD_ATTR", "LOAD_METHOD"):
                held[1].append(("attr", name))
                continue
            if op == "LOAD_CONST" and type(arg) is str:
                held[1].append(("const", arg))   # getattr(Base, "update"), Base.__dict__["update"]
                chains.append((held[0], tuple(held[1]), None, False))
            elif op in _STORES:
                chains.append((held[0], tuple(held[1]), name, False))   # B = basemod.Base
            elif held[1]:
                chains.append((held[0], tuple(held[1]), None, False))
            held = None
        if held is not None and held[1]:
            chains.append((held[0], tuple(held[1]), None, False))
    hit = _CHAINS_OF[code] = (tuple(chains), frozenset(loaded), by_mro)
    return hit


def _base_reads(fn, cls, mro) -> dict:
    """base -> the attribute names ``fn``'s code reads off it (``_explicit_bases``)."""
    chains, loaded, by_mro = _chains(fn.__code__)
    out: dict = {}
    if by_mro:   # type(self).__bases__[0].update(self): any base, any name it loads
        for base in mro[1:]:
            if base is not object:
                out[base] = set(loaded)
    aliases: dict = {}   # local -> the class or module a chain stored there
    for _ in range(2):   # (an alias stored after its use in code order: a loop's)
        for head, steps, store, with_self in chains:
            kind, name = head
            v = _SELF if kind == "self" else aliases[name] if name in aliases else \
                lookup(fn, name)
            via = None   # the base whose __dict__ the last step read
            for how, at in steps:
                base = v if isinstance(v, type) and v is not object and _among(v, mro) \
                    else None
                if how == "const":   # getattr(Base, "update"), Base.__dict__["update"]
                    if base is not None or via is not None:
                        out.setdefault(base or via, set()).add(at)
                    break
                if base is not None:
                    out.setdefault(base, set()).add(at)
                via = base if at == "__dict__" else None
                last, holder = v, cls if v is _SELF else v   # self.parent: a class attribute
                v = getattr_static(holder, at, MISSING) if isinstance(
                    holder, (type, types.ModuleType, types.SimpleNamespace)) else MISSING
            if store is not None and isinstance(v, (type, types.ModuleType)):
                aliases[store] = v
            if with_self and steps[-1][0] == "attr" and last is not _SELF and not isinstance(
                    last, (type, types.ModuleType, types.SimpleNamespace)):
                for base in mro[1:]:   # X.update(self, ...) of an X not known here (a loop's,
                    if base is not object:   # an attribute of self's object): any base's
                        out.setdefault(base, set()).add(steps[-1][1])
    return out


def _explicit_bases(fn, cls) -> list:
    """``(base, name, function, takes_self)`` of the methods (properties' getters,
    static and class methods) of the classes of ``cls``'s MRO whose attributes
    ``fn``'s code reads off them (``Base.step(self, s, x)``, ``Mixin.update(self, s,
    g, w)``, ``getattr(Opt, "update")``, ``basemod.Base.update``; the module's
    docstring lists the ways): an override calling its base's version explicitly
    reads what that reads off self, though ``cls`` holds its own by that name.
    Only the names read off a base (naming it, ``isinstance(self, Base)``, follows
    none). ``base``: the class of the MRO that defines it."""
    code = getattr(fn, "__code__", None)
    mro = getattr(cls, "__mro__", ())
    if code is None or not isinstance(fn, types.FunctionType) or len(mro) < 3:
        return []   # (a class of no base but object calls none)
    out = []
    for base, names in _base_reads(fn, cls, mro).items():
        for name in sorted(names):
            at = next((c for c in base.__mro__ if name in c.__dict__), None)
            attr = at.__dict__[name] if at is not None else None
            f = attr.fget if isinstance(attr, property) else _attr(attr, "__func__", attr)
            f = _python_function(f) if f is not None else None
            if f is not None:
                out.append((at, name, f, not isinstance(attr, (staticmethod, classmethod))))
    return out


def _with_wrapped(f) -> list:
    """``f`` and the functions it wraps, in turn: the wrapper of a decorated
    method runs the method, whose code reads what the call reads. Those behind
    ``__wrapped__`` (``functools.wraps``), else the functions its closure holds
    (a wrapper made without it); each once (a chain that comes back on itself
    ends), ``_MAX_DEPTH`` deep at most."""
    out, todo, seen = [], [(f, 0)], set()
    while todo:
        g, depth = todo.pop()
        if id(g) in seen or depth > _MAX_DEPTH:
            continue
        seen.add(id(g))
        out.append(g)
        inner = getattr(g, "__wrapped__", None)
        if inner is not None:
            inner = _python_function(inner)
            todo += [(inner, depth + 1)] if inner is not None else []
            continue
        for cell in g.__closure__ or ():
            try:
                v = cell.cell_contents
            except ValueError:   # an empty cell
                continue
            if isinstance(v, types.FunctionType):
                todo.append((v, depth + 1))
    return out


def _super_methods(cls, name: str, method, start=None) -> list:
    """The functions of the same-named methods along ``cls``'s MRO that ``method``
    (what ``start``, ``cls`` or a base, holds by ``name``) reaches through
    ``super()``, and they in turn: what ``super().forward(s)`` reads off self is
    read by the call too."""
    return [f for _, f in _super_bases(cls, name, method, start)]


def _super_bases(cls, name: str, method, start=None) -> list:
    """``(base, function)`` of ``_super_methods``: the class that defines each
    (held.py watches what it holds by ``name``); those after ``start`` in
    ``cls``'s MRO (after ``cls`` where None), as ``super()`` in ``start``'s
    method goes on from there."""
    out, mro = [], cls.__mro__
    at = next((i for i, c in enumerate(mro) if c is start), 0)
    for base in mro[at + 1:]:
        if not any("super" in g.__code__.co_names for g in _with_wrapped(method)):
            break
        f = base.__dict__.get(name)
        f = _python_function(_attr(f, "__func__", f)) if f is not None else None
        if f is not None and f is not method:
            out.append((base, f))
            method = f
    return out


def _holder(cls, name: str, method):
    """``cls`` where it holds ``method`` (a method's function, a property's getter)
    by ``name``, its own or inherited; else the base of its MRO whose own attribute
    ``name`` is ``method`` (the base's version an override calls,
    ``Base.step(self, s, x)``); else ``cls``."""
    first = True
    for c in cls.__mro__:
        attr = c.__dict__.get(name)
        if attr is None:
            continue
        f = attr.fget if isinstance(attr, property) else _attr(attr, "__func__", attr)
        if f is method or f is not None and _python_function(f) is method:
            return cls if first else c
        first = False
    return cls

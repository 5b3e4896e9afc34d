"""Telling the program's own objects from libraries' (``own_class``,
``own_object``: a class defined in the program, or a bag of attributes), and
reading an object's attributes without running more of its code than a
lookup does (``_attributes``, ``class_attribute``; ``_attr`` and ``_has`` of
``probe.py``, which every probe of a program's object goes through).

``reach.py`` walks the helpers and objects of the program's own and leaves
libraries alone (``_library``, ``_followed``); ``held.py`` and
``arguments.py`` walk what such objects hold (``contents`` for the containers
of the standard library). The lowest of the modules ``reach.py`` builds on:
``values.py`` and ``names.py`` import it; it imports neither.
"""
from __future__ import annotations

import abc
import collections
import collections.abc
import enum
import functools
import os
import sys
import sysconfig
import types
import typing
import weakref
from functools import partial

from .arrays import _kinds
from .chains import MISSING
from .probe import _attr, _has, _repr
from .weak_types import store

__all__ = ["class_attribute", "class_held", "container", "contents", "holds_state", "own_class",
           "own_holder", "own_object"]


def _python_function(obj):
    """The plain Python function behind a helper or a nested graph function (or a
    class's ``functools.partialmethod``: ``fa = partialmethod(_fwd, which="a")``)."""
    if isinstance(obj, types.FunctionType):
        return obj
    t = type(obj)   # (by identity: a metaclass may answer == oddly)
    if t is functools.partialmethod or t is functools.cached_property:
        return _python_function(obj.func)   # (a cached_property's code runs as a
        #                                     property's getter does)
    inner = _attr(obj, "__wrapped__")   # a GraphFunction, a decorated helper
    return inner if isinstance(inner, types.FunctionType) else None


def _bound_to(v):
    """``(object, function)`` of a method bound to its object: a bound method
    (``act.apply``) or a graph method bound to its instance (``model.step``,
    ``gt.graph(model.run)``: a ``BoundGraphFunction``, told by its class); None
    for anything else."""
    t = type(v)
    if t is types.MethodType:
        return v.__self__, v.__func__
    if _attr(t, "_graphtrace_bound", False) is True:   # (a metaclass's __getattr__ may raise)
        return v.instance, v.function.fn
    return None


def _bound_class(t: type) -> bool:
    """Whether ``t`` is one of ``_bound_to``'s."""
    return t is types.MethodType or _attr(t, "_graphtrace_bound", False) is True


def _graph_class(t: type) -> bool:
    """Whether ``t`` is ``GraphFunction``'s (a function ``@gt.graph`` made)."""
    return _attr(t, "_graphtrace_graph", False) is True


# array kinds of arrays._kind: an object of a type known as one of these is an array
_ARRAY_KINDS = frozenset({"own", "sim", "host", "cupy", "numba", "cai"})


_PLAIN_CONTAINERS = frozenset({list, tuple, dict})


def class_attribute(cls, name: str):
    """What ``cls`` (or the first class of its MRO that has it) holds by ``name``,
    without running a descriptor; None where none does."""
    for c in cls.__mro__:
        v = c.__dict__.get(name, MISSING)
        if v is not MISSING:
            return v
    return None


def class_of(obj) -> type:
    """The class whose methods code naming them on ``obj`` finds: a class's own
    (a classmethod's ``cls.flush()``), else the object's class."""
    return obj if isinstance(obj, type) else type(obj)


def held_at(obj, name: str):
    """What ``obj`` holds by attribute ``name`` without running its code (in its
    ``__dict__`` or a slot; a class: its own or a base's); None where nothing does."""
    if isinstance(obj, type):
        return class_attribute(obj, name)
    return next((v for k, v in _attributes(obj) if k == name), None)   # (or a slot's)


_OWN: dict = {}   # type -> whether it is a class of the program's own (weak_types.store)

_NOT_OWN = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
            types.MethodType, partial, list, tuple, dict, set, frozenset, str, bytes,
            int, float, complex, bool, enum.Enum, BaseException)


def _installed() -> tuple:
    """The folders of the standard library and of installed packages."""
    paths = sysconfig.get_paths()
    found = {os.path.realpath(paths[k]) + os.sep
             for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    found |= {os.path.realpath(p) + os.sep for p in sys.path
              if p and ("site-packages" in p or "dist-packages" in p)}
    return tuple(found)


_LIBRARY_PATHS = _installed()


def own_class(t: type) -> bool:
    """Whether instances of ``t`` are objects of the program's own, walked for
    what they hold: a class defined in the program (a script, a notebook, a
    package of its own), or a bag of attributes (``types.SimpleNamespace``,
    ``argparse.Namespace``, and the program's classes on them); not an array's, a
    container's, a function's, an enum's or an exception's, nor any other class
    of the standard library or of an installed package, nor a subclass of one."""
    hit = _OWN.get(t)
    if hit is None:
        hit = store(_OWN, t, _own(t))
    return hit


def _own(t: type) -> bool:
    if _bag(t):
        return True
    if issubclass(t, _NOT_OWN) or _kinds.get(t) in _ARRAY_KINDS or _library(t) or \
            _has(t, "__cuda_array_interface__") or _has(t, "__dlpack_device__"):
        return False
    # a subclass of a library's class (a torch Module's) holds that library's parts
    return _own_module(t) and all(b in _PLAIN_BASES or _bag(b) or _own_module(b)
                                  for b in t.__mro__[1:])


def _bag(t: type) -> bool:
    """A library's class whose objects hold attributes alone, as the program sets
    them (``SimpleNamespace(lr=0.1)``, ``parser.parse_args()``)."""
    return t is types.SimpleNamespace or \
        t.__module__ == "argparse" and t.__qualname__ in ("Namespace", "_AttributeHolder")


# bases that say nothing of what an object holds: an abstract base, a generic
_PLAIN_BASES = frozenset({object, abc.ABC, typing.Generic, getattr(typing, "Protocol", object)})


_NOT_RUN = frozenset({
    "__init__", "__new__", "__del__", "__post_init__", "__init_subclass__", "__set_name__",
    "__class_getitem__", "__subclasshook__", "__instancecheck__", "__subclasscheck__",
    "__repr__", "__str__", "__format__", "__dir__", "__sizeof__", "__hash__",
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
    "__setattr__", "__delattr__", "__getstate__", "__setstate__", "__reduce__",
    "__reduce_ex__", "__getnewargs__", "__getnewargs_ex__", "__copy__", "__deepcopy__",
    "__replace__"})


def _dunders(cls) -> list:
    """``(name, function)`` of the dunder methods ``cls`` and its bases of the
    program's own define (not ``object``'s, an abstract base's) that syntax runs
    in a traced call (``layer(s, x)``: ``__call__``; ``for layer in self.seq``:
    ``__iter__``; ``cfg.lr``: ``__getattr__``; ``with``, ``len``, ``if``, ``in``,
    indexing, arithmetic): no code names them, yet what they read off the
    object is read by the call."""
    out, names = [], set()
    for c in cls.__mro__:
        if c in _PLAIN_BASES:
            continue
        for name, v in c.__dict__.items():
            if name[:2] == "__" == name[-2:] and name not in _NOT_RUN and name not in names:
                names.add(name)
                f = _python_function(_attr(v, "__func__", v))
                if f is not None:
                    out.append((name, f))
    return out


def _own_module(t: type) -> bool:
    """Whether class ``t`` is defined in the program's own code."""
    module = sys.modules.get(t.__module__)
    path = _attr(module, "__file__")   # (a module's __getattr__ may raise)
    if path is None:   # a notebook's or a script's __main__, code run by exec
        return module is None or t.__module__ == "__main__"
    return not _in_library(path)


def own_object(x) -> bool:
    """An object of a class of the program's own (``own_class``) that is no array
    itself (an interface set on the object, not its class): held.py walks it."""
    t = type(x)
    own = _OWN.get(t)
    if own is None:
        own = own_class(t)
    if not own:
        return False
    try:
        d = x.__dict__
    except Exception:  # noqa: BLE001  (no __dict__: slots, which the class shows)
        return True
    return "__cuda_array_interface__" not in d and "__dlpack_device__" not in d


def own_holder(v) -> bool:
    """A class or a module of the program's own, whose attributes hold its state
    as an object's do (``Bufs.cur`` of ``class Bufs: cur = None``, ``bufstate.cur``
    of a module of its code): a class ``own_class`` takes (not a bag's, an enum's
    or an exception's), a module of the program's code (not a library's nor the
    standard library's, nor one built into Python), a namespace package (a folder
    with no ``__init__.py``) one of whose folders is the program's."""
    if isinstance(v, type):
        return own_class(v) and not _bag(v)
    if not isinstance(v, types.ModuleType) or _library(v):
        return False
    path = _attr(v, "__file__")
    if isinstance(path, str):
        return not _in_library(path)
    if v.__name__ == "__main__" or _attr(v, "__spec__") is None:
        return True   # a script's or notebook's __main__, one made in code
    folders = _attr(v, "__path__")   # a namespace package (a folder with no __init__.py):
    try:                             # by its folders, one of them the program's
        folders = [f for f in folders if isinstance(f, str)] if folders is not None else []
    except Exception:  # noqa: BLE001  (a path object of a loader's own, raising)
        return False
    return any(not _in_library(f) for f in folders)


@functools.lru_cache(maxsize=4096)
def _in_library(path: str) -> bool:
    """Whether ``path`` (a file, a folder) lies in the standard library or an
    installed package."""
    return os.path.realpath(path).startswith(_LIBRARY_PATHS)


def held_attributes(v) -> list:
    """``(name, value)`` of what a class or a module of the program's own
    (``own_holder``) holds, as its attributes read it: a class's own and its
    bases' of the program's (the nearest first), a module's globals; not
    dunders, nor functions, methods and properties, which hold no state."""
    if isinstance(v, types.ModuleType):
        spaces = (_attr(v, "__dict__", _NO_DICT),)
    else:
        spaces = [c.__dict__ for c in v.__mro__ if c not in _PLAIN_BASES and
                  (c is v or own_class(c) and not _bag(c))]
    out, seen = [], set()
    for space in spaces:
        for name, x in list(space.items()):
            if name in seen or not holds_state(name, x):
                continue
            seen.add(name)
            out.append((name, x))
    return out


def class_held(obj, attributes=None) -> list:
    """``(name, value)`` of what the class of ``obj`` (an object of a class of the
    program's own) holds, its own and its bases' of the program's (``held_attributes``),
    that code reads off ``obj`` as its own (``self.BUF`` of ``class Sink: BUF = h``):
    not what ``obj`` holds by that name itself, nor a descriptor (a method, a
    property, a slot), which ``self.name`` runs rather than reads. ``attributes``:
    ``_attributes(obj)``, where known."""
    t = type(obj)
    if not (own_class(t) and not _bag(t) or issubclass(t, tuple) and _own_module(t)):
        return []   # (a namedtuple's subclass: its class's values too)
    own = {name for name, _ in (_attributes(obj) if attributes is None else attributes)}
    return [(name, v) for name, v in held_attributes(t)
            if name not in own and not _has(type(v), "__get__")]


def holds_state(name: str, x) -> bool:
    """Whether ``held_attributes`` takes attribute ``name`` holding ``x`` (a
    module's globals may hold a key other than a name: ``globals()[42] = x``)."""
    return isinstance(name, str) and not (
        name[:2] == "__" == name[-2:] or isinstance(x, _CODE))


_CODE = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, staticmethod,
         classmethod, property, types.MemberDescriptorType, types.GetSetDescriptorType)


def _holds_own(v, depth: int = 0) -> bool:
    """An object of the program's own, or a list, tuple or dict (a subclass, an
    ``OrderedDict`` too, or another container of ``contents``), a bound method (a
    graph method's too) or a partial holding one (or of one: ``partial(OPT.update)``);
    or such a container holding such a bound method or partial, or such a container
    in turn (``TABLE = {"sgd": OPT.update}``, ``HOOKS = [("sgd", OPT.update)]``)."""
    if own_object(v):
        return True
    if type(v) in _PLAIN_CONTAINERS or isinstance(v, (list, tuple, dict)):
        items = v.values() if isinstance(v, dict) else v
    elif type(v) is partial:   # FN = partial(apply, gain), FN = gain.apply
        if _bound_class(type(v.func)) and _holds_own(v.func, depth + 1):
            return True   # FN = partial(OPT.update)
        items = v.args + tuple(v.keywords.values())
    elif (bound := _bound_to(v)) is not None:   # FN = gain.apply, gt.graph(gain.apply)
        items = (bound[0],)
    elif container(type(v)):
        items = [x for _, x in contents(v, "")]
    else:
        return False
    kinds = set(map(type, items))
    if any(own_class(t) for t in kinds) and any(own_object(x) for x in items):
        return True
    if depth < 3 and type(v) is not partial and _bound_to(v) is None and any(
            issubclass(t, (list, tuple, dict)) for t in kinds) and any(
            _holds_own(x, depth + 1) for x in items if isinstance(x, (list, tuple, dict))):
        return True   # {"opt": {"sgd": OPT.update}}, [("sgd", OPT.update)]
    return type(v) is not partial and _bound_to(v) is None and any(
        t is partial or _bound_class(t) for t in kinds) and any(
        _holds_own(x, depth + 1) for x in items if type(x) is partial or
        _bound_class(type(x)))


def container(t: type):
    """How ``contents`` reads a container of the standard library other than a
    list, tuple or dict (their subclasses are ``tree.children``'): ``"seq"``
    (a deque, a UserList), ``"map"`` (a mapping: ChainMap, UserDict, a weak
    dictionary, a mapping proxy), ``"set"`` (a set, a frozenset, a WeakSet, a
    dict's keys, values or items), ``"ref"`` (a weak reference); None for anything else."""
    hit = _CONTAINER.get(t, MISSING)
    if hit is MISSING:
        hit = store(_CONTAINER, t, None if issubclass(t, (list, tuple, dict, str, bytes)) or
                    own_class(t) else "ref" if issubclass(t, weakref.ref) else
                    "seq" if issubclass(t, (collections.deque, collections.UserList)) else
                    "map" if issubclass(t, collections.abc.Mapping) else
                    "set" if issubclass(t, (collections.abc.Set, collections.abc.ValuesView))
                    else None)
    return hit


_CONTAINER: dict = {}   # type -> container(type)


def contents(v, label: str) -> list:
    """``(label, item)`` of what a container ``container`` knows holds, in its
    order: ``label[0]`` of a deque, ``label['k']`` of a mapping, ``list(label)[0]``
    of a set, ``label()`` of a weak reference (none where it is dead, or the
    container changes while read)."""
    kind = container(type(v))
    try:
        if kind == "ref":
            return [(f"{label}()", v())]
        if kind == "map":
            return [(f"{label}[{_repr(k)}]", x) for k, x in list(v.items())]
        items = list(v)
    except Exception:  # noqa: BLE001  (a dict changed size while read, its own lookup)
        return []
    if kind == "seq":
        return [(f"{label}[{i}]", x) for i, x in enumerate(items)]
    return [(f"list({label})[{i}]", x) for i, x in enumerate(items)] if kind else []


def _library(v) -> bool:
    """A module (or a class or namespace of one) of the libraries reach leaves alone."""
    name = v.__name__ if isinstance(v, types.ModuleType) else _attr(v, "__module__", "")
    return (name if isinstance(name, str) else "").split(".")[0] in _LIBRARY_MODULES


def _attributes(obj) -> list:
    """``(name, value)`` of an object's attributes: its ``__dict__`` and its slots
    (a slot the object's own lookup raises for is left out, ``_attr``; none
    where asking for them all raises)."""
    try:
        return _attributes_of(obj)
    except Exception:  # noqa: BLE001  (the object's own lookup, whatever it raises)
        return []


def _attributes_of(obj) -> list:
    out = list(_attr(obj, "__dict__", _NO_DICT).items())
    slots = _SLOTS.get(type(obj))
    if slots is None:
        slots = store(_SLOTS, type(obj), tuple(
            name for cls in type(obj).__mro__
            for name in _slot_names(cls.__dict__.get("__slots__", ()))
            if name not in ("__dict__", "__weakref__")))
    for name in slots:
        v = _attr(obj, name, MISSING)   # an empty slot of an attribute dict: KeyError
        if v is not MISSING:
            out.append((name, v))
    return out


_NO_DICT: dict = {}
_SLOTS: dict = {}   # type -> the names of its slots, its bases' too (weak_types.store)


def _slot_names(slots) -> tuple:
    return (slots,) if isinstance(slots, str) else tuple(slots)


def _followed(v):
    """The Python function of a helper the walk goes into (not a library's, nor the
    standard library's: ``dataclasses.astuple`` reads no name of the program's, and
    walking what it reaches cost each call a millisecond), or None."""
    inner = _python_function(v)
    if inner is None or (inner.__module__ or "").split(".")[0] in _LIBRARY_MODULES or \
            _standard(inner.__code__.co_filename):
        return None
    return inner


def _python_helper(v):
    """``_followed`` of a helper the code calls by name, which may be handed the
    program's objects (``apply(self, s, x)`` reading ``model.lr``); None for a
    jitted kernel or device function (numba's, with a ``py_func``): it runs on the
    device and reads no attribute of a Python object, so the names its code loads
    (``math.log``, ``cuda.grid``) are no attributes of self or of a held object."""
    return None if _has(v, "py_func") else _followed(v)


def _standard(path: str) -> bool:
    """Whether a code object's file is the standard library's (not an installed
    package's, which may be the program's own)."""
    hit = _STANDARD.get(path)
    if hit is None:
        real = os.path.realpath(path)
        hit = _STANDARD[path] = real.startswith(_STDLIB_PATHS) and \
            not real.startswith(_PACKAGE_PATHS)
    return hit


_STANDARD: dict = {}   # a code object's file -> whether it is the standard library's
_STDLIB_PATHS = tuple({os.path.realpath(p) + os.sep for k, p in sysconfig.get_paths().items()
                       if k in ("stdlib", "platstdlib")})
_PACKAGE_PATHS = tuple({os.path.realpath(p) + os.sep for k, p in sysconfig.get_paths().items()
                        if k in ("purelib", "platlib")} |
                       {os.path.realpath(p) + os.sep for p in sys.path
                        if p and ("site-packages" in p or "dist-packages" in p)})


# Library functions hold no user arrays; walking them would only cost time.
_LIBRARY_MODULES = frozenset({"graphtrace", "numba", "numba_cuda", "cupy", "cupyx",
                              "numpy", "torch", "cuda", "functools", "builtins"})

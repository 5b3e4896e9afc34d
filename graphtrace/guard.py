"""A method's repeated call, checked at once: identity snapshots of what its key reads.

A cached call of a decorated method takes the full check (``Holdings.functions``
and the held arrays, ``GraphFunction._reached_same``): it walks ``self`` and
the objects it holds at every call, some 100 us for a model of a few layers,
where a function's call compares identities in a few us; so does a function's
whose names hold objects of the program's own it calls methods of
(``TABLE["sgd"](s, w)``, ``OPT.update(s, w)``). After a full check,
``Guard.of(self_obj, function)`` (``self_obj`` None for a function) takes
identity snapshots of everything that
check reads, and more: every attribute of ``self`` and of each object of the
program's own reached from it, the containers among them (their items), the
dictionaries of those objects' classes, and the globals, defaults and closure
cells of every Python function involved (the method, its class's methods, the
functions held, and those these name), each walked the same way. While
``unchanged()`` holds, no value the full check reads can differ, so the call
launches at once; any change (``m.opt.lr = 0.1``, ``m.scales[0] = 2.0``,
``Model.lr = 0.2``, a global rebound) takes the full check.

It vouches only for what plain attributes hold: where a value is computed when
read (a property, ``__getattr__``, ``__getattribute__``, another descriptor,
slots), where an object's class is a library's, or where the snapshots would
be large (``_LIMIT``), ``of`` returns None and every call takes the full check.
Objects of no class of the program's own are snapshotted by identity, with their
``__dict__`` where they have one; arrays, modules and immutable values by identity
(and a device array by the geometry it can change in place: a cupy array's shape).
"""
from __future__ import annotations

import array
import collections
import ctypes
import dis
import functools
import operator
import os
import sys
import types
import weakref

import numpy as np

from ._compiled import buffers as _compiled_buffers
from .arrays import _kind, geometry_reader
from .chains import _module as _imported_module, nested_codes
from .names import _global_names
from .owners import _LIBRARY_PATHS, _PLAIN_BASES, container, own_class
from .probe import _attr, _has

__all__ = ["Guard"]

_LIMIT = 4096          # snapshotted entries; a larger model takes the full check
_DEPTH = 24            # objects, containers and functions deep
_MISSING = object()    # a global the function names that does not exist (a builtin)
_ATOMS = frozenset({int, float, complex, bool, str, bytes, type(None), range, slice,
                    types.BuiltinFunctionType, np.dtype})
# changed in place without attributes to snapshot: the full check at every call
_MUTABLE = (bytearray, array.array, memoryview, np.ndarray, ctypes._SimpleCData,
            ctypes.Structure, ctypes.Union, ctypes.Array)
_SEQUENCES = frozenset({list, tuple, collections.deque, set, frozenset})
_MAPPINGS = frozenset({dict, collections.OrderedDict, collections.defaultdict})
# arrays._kind of device arrays whose address never changes ("cai", another type
# answering the interface, may be a handle pointed elsewhere: the full check); a
# cupy array's shape and strides may (geometry_reader: snapshotted too)
_DEVICE_KINDS = frozenset({"own", "sim", "cupy", "numba"})
_PLAIN_SLOTS = frozenset({"__dict__", "__weakref__"})   # a class's own getset descriptors
_BAG_MODULES = frozenset({"types", "argparse"})   # SimpleNamespace, argparse.Namespace
_is = operator.is_


# Guard.unchanged compiled (_buffers.c's guard_unchanged), or None
_COMPILED = getattr(_compiled_buffers(), "guard_unchanged", None)


class _GiveUp(Exception):
    pass


class Guard:
    """Identity snapshots; ``unchanged()`` says whether all still hold."""

    __slots__ = ("mappings", "sequences", "names", "cells", "calls", "types", "functions",
                 "geometries")

    def __init__(self):
        self.mappings: list = []    # (dict or mappingproxy, its keys, its values)
        self.sequences: list = []   # (container, its items)
        self.names: list = []       # (globals or a module's dict, names, values or _MISSING)
        self.cells: list = []       # (cells, their contents or _MISSING)
        self.calls: list = []       # (weak reference, what it gave)
        self.functions: list = []   # (function, its defaults, keyword defaults, code)
        self.types: list = []       # (object of the program's own, its class)
        self.geometries: list = []  # (read, device array, what it read): h.shape = ... of
        # a cupy array changes it in place

    @classmethod
    def of(cls, self_obj, function) -> "Guard | None":
        """The snapshots of a method's call on ``self_obj`` (None: a function's call);
        None where they cannot vouch for it (module docstring)."""
        if type(function) is types.FunctionType and \
                not _program(function.__globals__.get("__name__")):
            return None   # a library's function: the walk would snapshot none of its names
        g = cls()
        walk = _Walk(g)
        try:
            walk.value(self_obj, 0)
            walk.function(function, 0)
        except (_GiveUp, RecursionError):
            return None
        except Exception:  # noqa: BLE001  (a container changed while read, its own code)
            return None
        return g

    def unchanged(self) -> bool:
        if _COMPILED is not None:   # _buffers.c's, where it can tell
            same = _COMPILED(self.mappings, self.sequences, self.names, self.cells,
                             self.functions, self.calls, self.types, _MISSING)
            if same is not None:
                return same and (not self.geometries or self._same_geometries())
        return self.unchanged_here()

    def _same_geometries(self) -> bool:
        return all(read(a) == was for read, a, was in self.geometries)

    def unchanged_here(self) -> bool:
        """``unchanged`` in Python."""
        for m, keys, values in self.mappings:
            if len(m) != len(keys) or not all(map(_is, m, keys)) or \
                    not all(map(_is, m.values(), values)):
                return False
        for c, items in self.sequences:
            if len(c) != len(items) or not all(map(_is, c, items)):
                return False
        for g, names, values in self.names:
            if not all(map(_is, map(g.get, names, [_MISSING] * len(names)), values)):
                return False
        for cells, contents in self.cells:
            if not all(map(_is, map(_contents, cells), contents)):
                return False
        for f, defaults, kwdefaults, code in self.functions:   # rebound on the function
            if f.__defaults__ is not defaults or f.__kwdefaults__ is not kwdefaults or \
                    f.__code__ is not code:
                return False
        return all(ref() is target for ref, target in self.calls) and \
            all(type(o) is t for o, t in self.types) and self._same_geometries()


def _kernel_function(v):
    """The Python function of a numba kernel (``py_func``), or None."""
    f = _attr(v, "py_func") if _has(type(v), "py_func") or \
        "py_func" in (_own_dict(v) or ()) else None
    return f if type(f) is types.FunctionType else None


def _program(module_name) -> bool:
    """Whether a module is the program's own (a script's, a notebook's, its package),
    not a library's or the standard library's: what it holds may change."""
    module = sys.modules.get(module_name) if isinstance(module_name, str) else module_name
    path = _attr(module, "__file__")   # (a module's __getattr__ may raise)
    return path is None or not _installed(path)


@functools.lru_cache(maxsize=4096)
def _installed(path: str) -> bool:
    return os.path.realpath(path).startswith(_LIBRARY_PATHS)


def _ours(t: type) -> bool:
    return t.__module__.split(".")[0] == __name__.split(".")[0]


def _own_dict(v):
    """``v``'s own ``__dict__`` (no code of its class run), or None."""
    try:
        return object.__getattribute__(v, "__dict__")
    except (AttributeError, TypeError):
        return None


def _contents(cell):
    try:
        return cell.cell_contents
    except ValueError:   # empty
        return _MISSING


def _attribute_names(code, out: list) -> list:
    """Every name ``code`` and the code nested in it holds (attributes among them)."""
    out.extend(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _attribute_names(c, out)
    return out


def _imports(code) -> list:
    """The names of the modules ``code`` and the code nested in it import
    (``import kmod``, ``from .sub import x``: ``.sub``), each once."""
    hit = _IMPORTS.get(code)
    if hit is not None:
        return hit
    out = []
    for c in nested_codes(code):
        level = 0
        for ins in dis.get_instructions(c):
            if ins.opname == "IMPORT_NAME":
                out.append("." * (level or 0) + ins.argval)
            level = ins.argval if ins.opname == "LOAD_CONST" and type(ins.argval) is int \
                else level if ins.opname == "LOAD_CONST" else 0
    hit = _IMPORTS[code] = list(dict.fromkeys(out))
    return hit


_IMPORTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _code_names(code, out: list) -> list:
    """Every global name ``code`` and the code nested in it loads (or stores)."""
    out.extend(_global_names(code))
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _code_names(c, out)
    return out


class _Walk:
    def __init__(self, guard: Guard):
        self.g = guard
        self.seen: set = set()   # ids of the objects walked (held by the snapshots)
        self.functions: set = set()
        self.classes: set = set()
        self.modules: set = set()   # (id of a module, the names read off it)
        self.count = 0

    def _room(self, n: int, depth: int) -> None:
        self.count += n
        if self.count > _LIMIT or depth > _DEPTH:
            raise _GiveUp

    def _mapping(self, m, depth: int) -> None:
        keys, values = tuple(m), tuple(m.values())
        self._room(len(keys), depth)
        self.g.mappings.append((m, keys, values))
        for x in keys + values:
            self.value(x, depth + 1)

    def _sequence(self, v, depth: int) -> None:
        items = tuple(v)
        self._room(len(items), depth)
        self.g.sequences.append((v, items))
        for x in items:
            self.value(x, depth + 1)

    def value(self, v, depth: int) -> None:
        t = type(v)
        if t in _ATOMS or isinstance(v, np.generic) or id(v) in self.seen:
            return
        self.seen.add(id(v))
        if t is types.ModuleType:
            if _program(v):   # reached other than as a function's global (self.cfg = mod)
                raise _GiveUp
        elif _kind(v) in _DEVICE_KINDS:   # a device array: by identity, and what of its
            read = geometry_reader(v)       # geometry can change in place (a cupy array's)
            if read is not None:
                self._room(1, depth)
                self.g.geometries.append((read, v, read(v)))
        elif _kind(v) == "cai":
            raise _GiveUp   # its interface, read anew, may point at another buffer
        elif isinstance(v, _MUTABLE):
            raise _GiveUp   # a host array, a bytearray: values read off it change in place
        elif t in _SEQUENCES:
            self._sequence(v, depth)
        elif t in _MAPPINGS:
            self._mapping(v, depth)
        elif t is types.FunctionType:
            self.function(v, depth)
        elif t is functools.partial:   # func and args are read-only; keywords a dict
            for x in (v.func, v.args, v.keywords):
                self.value(x, depth + 1)
        elif t is types.MethodType:
            self.value(v.__self__, depth + 1)
            self.value(v.__func__, depth + 1)
        elif isinstance(v, type):
            if own_class(v):   # a library's class: by identity
                self.klass(v, depth)
        elif own_class(t):
            self.klass(t, depth)
            d = _own_dict(v)
            if type(d) is not dict:
                raise _GiveUp   # slots: read through descriptors
            self.g.types.append((v, t))   # (obj.__class__ = Other)
            self._mapping(d, depth)
        elif (f := _kernel_function(v)) is not None:
            self.function(f, depth + 1)   # a numba kernel: the device functions it names
        elif _ours(t):   # a graph function (its Python function), gt.kernel(...)
            d = _own_dict(v)
            if type(d) is dict and type(d.get("fn")) is types.FunctionType:
                self.function(d["fn"], depth + 1)
            elif type(d) is dict:
                self._mapping(d, depth)
            else:   # a decorated method bound to its instance
                for name in getattr(t, "__slots__", ()):
                    self.value(getattr(v, name, None), depth + 1)
        elif isinstance(v, weakref.ref):
            target = v()
            self.g.calls.append((v, target))
            self.value(target, depth + 1)
        elif container(t) == "map":   # a ChainMap, a UserDict, a mapping proxy
            self._mapping(v, depth)
        elif container(t) is not None:   # a dict's view, a weak set, a UserList
            self._sequence(v, depth)
        elif _own_dict(v) is not None:
            raise _GiveUp   # a library's object with attributes: what reads them is not seen
        # else a library's object of no attributes (a cupy kernel, an RNG): by identity

    def klass(self, t: type, depth: int) -> None:
        """The dictionaries of ``t`` and its bases of the program's own (the others
        are plain bases and the standard library's attribute bags:
        ``owners.own_class``), with no attribute computed when read."""
        for c in t.__mro__[:-1]:
            if c in self.classes or c in _PLAIN_BASES or c.__module__ in _BAG_MODULES:
                continue
            self.classes.add(c)
            d = c.__dict__
            if "__getattribute__" in d or "__getattr__" in d:
                raise _GiveUp
            for name, x in d.items():
                k = type(x)
                if k is staticmethod or k is classmethod:
                    self.function(x.__func__, depth + 1)
                elif k is not types.FunctionType and _has(k, "__get__") and \
                        name not in _PLAIN_SLOTS and not _ours(k):   # (@gt.graph: ours)
                    raise _GiveUp   # a property, slots, another descriptor
            self._mapping(d, depth)

    def function(self, f, depth: int) -> None:
        if type(f) is not types.FunctionType:
            self.value(f, depth + 1)
            return
        if f in self.functions or not _program(f.__globals__.get("__name__")):
            return   # a library's function (told by its globals: wraps copies __module__)
        self.functions.add(f)
        names = tuple(dict.fromkeys(_code_names(f.__code__, [])))
        g = f.__globals__
        values = tuple(g.get(n, _MISSING) for n in names)
        self._room(len(names), depth)
        self.g.names.append((g, names, values))
        if f.__closure__:
            cells = f.__closure__
            contents = tuple(map(_contents, cells))
            self.g.cells.append((cells, contents))
            for x in contents:
                self.value(x, depth + 1)
        attrs = tuple(dict.fromkeys(_attribute_names(f.__code__, [])))
        for x in values:   # a module's attributes the code may read (settings.LR)
            if type(x) is types.ModuleType and _program(x):
                self._module(x, attrs, depth + 1)
        for name in _imports(f.__code__):   # and those of a module it imports itself
            mod = _imported_module(f, name)   # (import kmod as km; km.LR)
            if type(mod) is not types.ModuleType:
                raise _GiveUp   # not imported yet: what the import gives is not seen
            self._room(1, depth)
            self.g.names.append((sys.modules, (mod.__name__,), (mod,)))
            if _program(mod):
                self._module(mod, attrs, depth + 1)
        self.g.functions.append((f, f.__defaults__, f.__kwdefaults__, f.__code__))
        kw = f.__kwdefaults__
        if kw:   # changed in place too (helper.__kwdefaults__["a"] = 8.0)
            self._room(len(kw), depth)
            self.g.mappings.append((kw, tuple(kw), tuple(kw.values())))
        for x in values + (f.__defaults__ or ()) + tuple((kw or {}).values()):
            if x is not _MISSING and type(x) is not types.ModuleType:   # (modules: _module)
                self.value(x, depth + 1)

    def _module(self, mod, attrs: tuple, depth: int) -> None:
        """What ``mod`` holds by the names ``attrs`` (every attribute name the
        function's code holds), and the modules among them in turn."""
        if (id(mod), attrs) in self.modules:
            return
        self.modules.add((id(mod), attrs))
        d = mod.__dict__
        values = tuple(d.get(n, _MISSING) for n in attrs)
        self._room(len(attrs), depth)
        self.g.names.append((d, attrs, values))
        for x in values:
            if type(x) is types.ModuleType:
                if _program(x):
                    self._module(x, attrs, depth + 1)
            elif x is not _MISSING:
                self.value(x, depth + 1)

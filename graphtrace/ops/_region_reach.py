"""What a captured region reaches beyond the names its code loads.

``captured._reached`` orders a region with the nodes using the device arrays of
the graph it reaches by a global name or holds (``host._names_of``). Some ways
to reach an array name no global: ``globals()["W"]``, ``sys.modules[__name__].W``,
an attribute of a module or class the region is handed (``s.captured(fn, wmod,
y)`` with ``fn`` reading ``m.W``) or gets from a helper (``get().W``), an item
of a numpy object array (``OBJ[0]``). ``Reads`` finds them: it is handed to
``_names_of`` as its ``more`` (the extra globals of each code walked), and
``reached_values`` looks into the modules, classes and object arrays so reached
(``holder_arrays``). Each such place is kept (``Places``): a new array put there
between calls is no new argument, so ``Places.moved`` tells the launch to
capture the region again (``CapturedOp.moved``), as a torch module given a new
parameter does.

Code that reaches globals by names known only when it runs (``globals()[k]``,
``vars(mod)``, ``eval``, ``getattr(mod, name)``, ``sys.modules[k]``) cannot be
seen: ``Reads.unseen`` says so, and the region is ordered as ``opaque=True``
(after everything before it and before everything after it).
"""
from __future__ import annotations

import dis
import importlib.util
import sys
import types

import numpy as np

from ..arrays import is_array
from ..chains import imported
from ..dynamic_names import by_names
from ..names import _global_names, by_globals
from ..region_places import place_label
from ..owners import _LIBRARY_MODULES, _attr, _in_library, _library, own_class, own_object
from ..tree import leaves
from ..values import identities

__all__ = ["Places", "Reads", "holder_arrays", "reached_named", "reached_values"]

_SKIP = frozenset({"CACHE", "PRECALL", "PUSH_NULL", "NOP", "EXTENDED_ARG", "KW_NAMES"})
_DYNAMIC = frozenset({"vars", "eval", "exec", "__import__", "import_module"})


def _own_holder(v) -> bool:
    """A module or class of the program's own (not a library's, not the standard
    library's), whose attributes a region may read arrays from."""
    if isinstance(v, types.ModuleType):
        if _library(v):
            return False
        path = _attr(v, "__file__")
        return v.__name__ == "__main__" if not isinstance(path, str) else not _in_library(path)
    return isinstance(v, type) and own_class(v) and not _library(v)


def _is_device_array(x) -> bool:
    """An array that is no numpy array (pinned host memory is one too)."""
    if isinstance(x, (np.ndarray, str, int, float, types.FunctionType, type)):
        return False
    try:
        return is_array(x)
    except Exception:  # noqa: BLE001  (an object's own lookup, whatever it raises)
        return False


def holder_arrays(v):
    """``(holder, how, key, array)`` for the device arrays module or class ``v`` holds
    by its attributes (a class: also its own bases'), by themselves or in a list,
    tuple or dict; and those the items of numpy object array ``v`` are."""
    if isinstance(v, np.ndarray):
        if v.dtype != object:
            return
        for i, item in enumerate(v.ravel()):
            for x in leaves(item):
                if _is_device_array(x):
                    yield v, "item", np.unravel_index(i, v.shape), item
                    break
        return
    yield from _held(v, 0, set())


def _held(v, depth: int, seen: set):
    """``holder_arrays`` of module, class or object ``v``: its attributes holding
    device arrays; and, a few levels deep, those of the modules (a package's
    ``p.sub.W``), classes and objects of the program's own it holds (``c.state.w``),
    whose own places are kept too (a new object there is another signature)."""
    if depth > 3 or id(v) in seen:
        return
    seen.add(id(v))
    if _own_holder(v):
        spaces = [v] if isinstance(v, types.ModuleType) else \
            [c for c in v.__mro__ if c is not object and not _library(c)]
    elif depth and own_object(v):
        spaces = [v]
    else:
        return
    for space in spaces:
        attributes = _attr(space, "__dict__", {})
        if not isinstance(attributes, (dict, types.MappingProxyType)):
            continue
        for k, x in list(attributes.items()):
            if isinstance(k, str) and k.startswith("__"):
                continue
            try:
                found = any(_is_device_array(y) for y in leaves(x))
            except Exception:  # noqa: BLE001  (a dead weak proxy, an odd object)
                continue
            if found:
                yield v, "attr", k, x
            elif _own_holder(x) and (not isinstance(x, types.ModuleType) or
                                     x.__name__.startswith(_attr(v, "__name__", "") + ".")) \
                    or own_object(x):
                inner = list(_held(x, depth + 1, seen))
                if inner:
                    yield v, "attr", k, x
                    yield from inner


def _read(holder, how: str, key):
    if how == "attr":
        return getattr(holder, key, None)
    if how == "item":
        return holder[key]
    return holder.get(key)   # "global": a module's namespace


def _inside(value) -> list:
    """The objects a list, tuple or dict ``value`` holds, nested (``identities``:
    marks, keys and items; ``leaves`` where it cannot vouch), compared by identity;
    nothing for another object."""
    if not isinstance(value, (list, tuple, dict)):
        return []
    out: list = []
    if identities(value, out):
        return out
    try:
        return list(leaves(value))
    except Exception:  # noqa: BLE001  (an odd container's own lookup)
        return [value]


class Places:
    """The places through which a region reached device arrays that no argument
    shows, with what each held when it was captured (and, for a list, tuple or
    dict, the objects inside it, nested): ``moved`` tells whether one holds
    another object now, or its container another item (``rmod.Ws[0] = new``,
    ``rmod.D["w"] = new``, ``OBJ[0][0] = new``), so the region is captured again."""

    __slots__ = ("entries", "inside")

    def __init__(self, entries=()):
        seen, out = set(), []
        for holder, how, key, value in entries:
            k = (id(holder), how, repr(key))
            if k not in seen:
                seen.add(k)
                out.append((holder, how, key, value))
        self.entries = tuple(out)
        self.inside = tuple(_inside(e[3]) for e in out)

    def __bool__(self) -> bool:
        return bool(self.entries)

    def moved(self) -> bool:
        for (holder, how, key, value), inside in zip(self.entries, self.inside):
            try:
                now = _read(holder, how, key)
            except Exception:  # noqa: BLE001  (gone: captured again, which then tells)
                return True
            if now is not value:
                return True
            if inside:
                held = _inside(now)
                if len(held) != len(inside) or any(
                        a is not b for a, b in zip(held, inside)):
                    return True
        return False


class Reads:
    """``more`` for ``host._names_of``: the globals code reads by constant keys of
    ``globals()`` and through ``sys.modules[__name__]`` (``(label, value)``), the
    places they lie in (``places``), and why a region's reads cannot all be
    seen (``unseen``: a reason, or None)."""

    def __init__(self):
        self.places: list = []
        self.unseen: str | None = None

    def __call__(self, code, scope) -> list:
        module = scope.get("__name__")
        if isinstance(module, str) and module.split(".")[0] in _LIBRARY_MODULES or \
                _in_library(code.co_filename):
            return []   # a library's code (graphtrace's NCCL collective): its own names
        out = []
        for name in sorted(by_globals(code)[0]):
            if name in scope:
                out.append((f"globals()[{name!r}]", scope[name]))
                self.places.append((scope, "global", name, scope[name]))
        out += self._modules(code, scope) + self._imports(code, scope)
        if self.unseen is None:
            self.unseen = _dynamic(code)
        return out

    def _modules(self, code, scope) -> list:
        """``sys.modules[__name__].W`` (and ``sys.modules["mod"]``): the module's
        attribute where one is read at once, else the module (looked into whole)."""
        ins = [i for i in dis.get_instructions(code) if i.opname not in _SKIP]
        out = []
        for n, i in enumerate(ins[:-3]):
            if i.opname not in ("LOAD_GLOBAL", "LOAD_NAME"):
                continue
            if scope.get(i.argval) is sys.modules:   # from sys import modules
                n -= 1
            elif not (scope.get(i.argval) is sys and ins[n + 1].opname == "LOAD_ATTR" and
                      ins[n + 1].argval == "modules"):
                continue
            key, sub = ins[n + 2], ins[n + 3]
            if key.opname == "CONTAINS_OP":   # "torch" in sys.modules: no lookup
                continue
            if key.opname in ("LOAD_ATTR", "LOAD_METHOD") and key.argval == "get" and \
                    sub.opname == "LOAD_CONST" and type(sub.argval) is str:
                module = sys.modules.get(sub.argval)   # sys.modules.get("mod")
                if module is not None:
                    out.append(("sys.modules[...]", module))   # (looked into whole)
                continue
            if sub.opname != "BINARY_SUBSCR" and not (   # sys.modules.get(k) and others
                    sub.opname == "BINARY_OP" and "[" in sub.argrepr):
                if self.unseen is None:
                    self.unseen = "it looks modules up in sys.modules"
                continue
            if key.opname in ("LOAD_GLOBAL", "LOAD_NAME") and key.argval == "__name__":
                module = sys.modules.get(scope.get("__name__"))
            elif key.opname == "LOAD_CONST" and type(key.argval) is str:
                module = sys.modules.get(key.argval)
            else:
                if self.unseen is None:
                    self.unseen = "it looks a module up in sys.modules by a computed name"
                continue
            if module is None:
                continue
            after = ins[n + 4] if n + 4 < len(ins) else None
            name = after.argval if after is not None and \
                after.opname in ("LOAD_ATTR", "LOAD_METHOD") else None
            if name is not None and name in vars(module):
                out.append((f"sys.modules[...].{name}", vars(module)[name]))
                self.places.append((vars(module), "global", name, vars(module)[name]))
            else:   # (its __dict__["W"] too): looked into whole
                out.append(("sys.modules[...]", module))
        return out

    def _imports(self, code, scope) -> list:
        """The modules ``code`` imports itself (``import rmod as m``, ``from rmod import
        W``: ``chains.imported``), looked into whole; a module not imported yet (the
        region would import it when captured) cannot be seen."""
        out = []
        for local, (head, steps) in imported(code).items():
            name = head[1:-1]
            try:
                name = importlib.util.resolve_name(name, scope.get("__package__"))
            except (ImportError, ValueError):
                pass
            module = sys.modules.get(name)
            if module is None:
                if self.unseen is None:
                    self.unseen = f"it imports {name}, which is not imported yet"
                continue
            holder = module
            for how, k in steps:   # import pkg.sub as s; from pkg import sub
                v = getattr(holder, k, None) if how == "attr" else None
                if isinstance(v, (types.ModuleType, type)):
                    holder = v
            out.append((f"import {name}", holder))
        return out


def _dynamic(code) -> str | None:
    """Why ``code`` (or code nested in it) may reach globals by names it does not hold
    as constants, or None. ``vars``, ``eval`` and the like count where loaded as
    global names (not ``co_names``, which holds attribute names too: ``model.eval()``,
    ``cfg.vars``); ``import_module`` as an attribute of ``importlib`` too."""
    todo = [code]
    while todo:
        c = todo.pop()
        todo += [k for k in c.co_consts if isinstance(k, types.CodeType)]
        hit = sorted(set(_global_names(c)) & _DYNAMIC | (
            {"import_module"} if "importlib" in _global_names(c) and
            "import_module" in c.co_names else set()))
        if hit:
            return f"it calls {hit[0]}"
        if "globals" in c.co_names and _keyed_otherwise(c):
            return "it reads globals() by keys computed when it runs"
    if by_names(code):
        return "it reads attributes by names computed when it runs (getattr)"
    return None


def _keyed_otherwise(code) -> bool:
    """Whether ``code`` calls ``globals()`` other than as ``by_globals`` reads it."""
    ins = [i for i in dis.get_instructions(code) if i.opname not in _SKIP]
    for n, i in enumerate(ins[:-2]):
        if i.opname not in ("LOAD_GLOBAL", "LOAD_NAME") or i.argval != "globals":
            continue
        after = ins[n + 2:n + 5]
        before = ins[n - 1] if n else None
        if before is not None and before.opname == "LOAD_CONST" and \
                type(before.argval) is str and after and after[0].opname == "CONTAINS_OP":
            continue   # "C" in globals()
        if len(after) >= 2 and after[0].opname == "LOAD_CONST" and type(after[0].argval) is str:
            continue   # globals()["A"]
        if len(after) >= 2 and after[0].opname in ("LOAD_METHOD", "LOAD_ATTR") and \
                after[0].argval in ("get", "setdefault", "pop") and \
                after[1].opname == "LOAD_CONST" and type(after[1].argval) is str:
            continue   # globals().get("B")
        return True
    return False


def reached_values(fn, args) -> tuple:
    """``(values, places, unseen)``: what region ``fn`` handed ``args`` reaches by
    names and holders (``host._names_of`` with ``Reads``; the device arrays of the
    modules, classes and object arrays among them and among ``args``), the
    ``Places`` of those no name the cache key watches shows, and why some of its
    reads cannot be seen (or None)."""
    named, places, unseen = reached_named(fn, args)
    return [v for _, v in named], places, unseen


def reached_named(fn, args) -> tuple:
    """``reached_values`` with each value as ``(label, value)``: how the user names
    where the region reaches it (``W``, ``sys.modules[...].W``, ``rmod.T``)."""
    from .host import _names_of   # (host imports nothing of regions)
    reads = Reads()
    named = [(name, v) for name, v, _ in _names_of(fn, more=reads)
             if v is not sys.modules]   # (its lookups are Reads'; walked, it grows)
    places = list(reads.places)
    # the holders named (not those of a container a name holds: sys.modules)
    for x in [v for _, v in named] + list(leaves(args)):
        for holder, how, key, item in holder_arrays(x):
            places.append((holder, how, key, item))
            named.append((place_label(holder, how, key), item))
    return named, Places(places), reads.unseen

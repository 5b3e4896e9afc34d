"""A numba kernel's own code, and what the names in it hold, for the intent
analysis of ``_intents.py`` and the numba adapter (``_numba.py``): the ``def``
of the code that runs, read off its source where the file still holds that code
(``_parse``), the object a dotted name refers to (``resolve_dotted``), the
global and closure names that hold device arrays (``_device_globals``) and what
the closure cells of a kernel and its device functions hold (``closure_values``).
"""
from __future__ import annotations

import ast
import builtins
import dis
import inspect
import itertools
import linecache
import re
import textwrap
import types
import unicodedata
import weakref

import numpy as np

from ..arrays import is_array
from ..chains import MISSING, lookup as _lookup
from ..names import name_chains
from ..owners import _library
from ..probe import _attr, _has
from ..static_attrs import getattr_static
from ..tree import children
from ..values import _MAX_DEPTH

__all__ = ["closure_values", "held_now", "reached_globals", "resolve_dotted"]


def resolve_dotted(py_func, dotted: str, quick: bool = False):
    """The object a dotted name in a kernel's source refers to, or None. ``quick``:
    the closure cell of that name, else the global, looked up alone."""
    head, *rest = dotted.split(".")
    if quick and getattr(py_func, "__code__", None) is not None:
        obj = _lookup(py_func, head)   # (attributes read as the analysis reads them)
        for name in rest:   # (a module's, a metaclass's __getattr__ may raise anything)
            obj = _attr(obj, name)
        return obj
    try:
        closure = inspect.getclosurevars(py_func)
        scope = {**closure.globals, **closure.nonlocals}
    except (TypeError, ValueError):
        scope = getattr(py_func, "__globals__", {})
    obj = scope.get(head, getattr(py_func, "__globals__", {}).get(head))
    for name in rest:
        obj = _attr(obj, name)
    return obj


def _parse(py_func):
    """The ``def`` of ``py_func``'s own code: read through its code object, since
    ``inspect.getsource`` of a function follows ``__wrapped__`` (a kernel made by
    a decorator with ``functools.wraps`` would be read as the function it wraps)."""
    code = getattr(py_func, "__code__", None)
    try:
        src = textwrap.dedent(inspect.getsource(code if code is not None else py_func))
        tree = ast.parse(src)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    name = code.co_name if code is not None else py_func.__name__
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node if code is None or _same_code(code) else None
    return None


# loads of names (a store's position can be another name's: a match pattern's)
_NAMED_OPS = frozenset({"LOAD_FAST", "LOAD_GLOBAL", "LOAD_DEREF", "LOAD_ATTR", "LOAD_METHOD",
                        "LOAD_NAME"})


def _same_code(code) -> bool:
    """Whether the source file still holds ``code``: each name it loads is where
    its positions say. A file edited since its module was loaded holds
    other code than the one that runs (read as it is, it would give the new code's
    intents to the old code)."""
    lines = linecache.getlines(code.co_filename)
    if not lines:
        return True   # cannot tell
    todo = [code]
    while todo:
        c = todo.pop()
        todo += [x for x in c.co_consts if hasattr(x, "co_code")]
        for ins in dis.get_instructions(c):
            at = getattr(ins, "positions", None)
            if ins.opname not in _NAMED_OPS or at is None or at.lineno is None or \
                    at.lineno != at.end_lineno or at.col_offset is None or \
                    not str(ins.argval).isidentifier():   # a comprehension's .0
                continue
            if at.lineno > len(lines):
                return False
            text = lines[at.lineno - 1].encode()[at.col_offset:at.end_col_offset]
            if not _names_in(str(ins.argval), text.decode("utf-8", "replace")):
                return False
    return True


def _names_in(name: str, text: str) -> bool:
    """Whether source ``text`` spells ``name`` as the compiler stores it: identifiers
    are NFKC-normalised (``µ`` is ``μ``), and ``__x`` in a class body is
    ``_Class__x``."""
    if name in text or name in unicodedata.normalize("NFKC", text):
        return True
    mangled = re.fullmatch(r"_[A-Za-z0-9_]*?[A-Za-z0-9](__\w+)", name)
    return mangled is not None and mangled.group(1) in unicodedata.normalize("NFKC", text)


def _device_globals(py_func, depth: int = 0, seen=None) -> frozenset:
    """The global and closure names of ``py_func`` (and of the numba device
    functions it names) that hold device arrays (a numpy array is a constant numba
    compiles in), directly, through attributes (``NS.M``, ``module.ARR``,
    ``module.device_function``) or in lists, tuples and dicts, nested ones too
    (``NEST[0][0]``, ``FUNCS[0](i)`` calling a device function that reads one):
    dotted where so. A value deeper than graphtrace walks counts as one."""
    code = getattr(py_func, "__code__", None)
    if code is None:
        return frozenset()
    seen = set() if seen is None else seen
    seen.add(id(py_func))
    scope = _scope(py_func, code)
    out = set()
    by_getattr = "getattr" in code.co_names   # getattr(mod, "G"): a constant name
    for name, v in name_chains(code, scope, _LOADS):
        if _has(v, "py_func") and id(v.py_func) not in seen and depth < _MAX_DEPTH:
            out |= _device_globals(v.py_func, depth + 1, seen)   # a device function
        elif _holds_device_arrays(v, depth, seen) or by_getattr and any(
                _holds_device_arrays(x, depth + 1, seen) for x in _attributes_of(v)):
            out.add(name)
    return frozenset(out)


def reached_globals(py_func) -> frozenset:
    """``_device_globals`` of ``py_func`` now, and those it was found to reach before:
    where a device function it calls was defined again without its read of one, numba
    runs the old version where it compiled the kernel before (either counts)."""
    reached = _device_globals(py_func)
    try:
        before = _reached.get(py_func, frozenset())
        if not reached <= before:
            _reached[py_func] = before | reached
        return before | reached
    except TypeError:   # (a function that takes no weak reference)
        return reached


_reached: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # py_func -> names


def _scope(py_func, code) -> dict:
    """The global names of ``py_func``, and its bound closure cells by their names."""
    scope = dict(getattr(py_func, "__globals__", {}))
    for name, cell in zip(code.co_freevars, getattr(py_func, "__closure__", None) or ()):
        try:
            scope[name] = cell.cell_contents
        except ValueError:
            pass
    return scope


def held_now(py_func) -> tuple | None:
    """What the global and closure names ``py_func`` loads (and attribute chains off
    them), and those of the numba device functions it names, hold now: each value by
    its type and identity, a list's, tuple's or dict's items too (``LUTS = ()`` then
    ``(dev,)``). Compared with what it held at the last look, it tells whether
    ``_device_globals`` may answer otherwise now (``LUT = np.zeros(0)`` or None till
    ``init()`` puts a device array there; a device function defined further down)
    without reading the code again: the names are found once per code object. None
    where the kernel names nothing but builtins, libraries' objects (``cuda.grid``,
    ``math.sin``) and numbers (``SCALE = 2.0``, a factory's closure cell), which
    numba compiles in as they are: no placeholder of a device array."""
    out: list = []
    return tuple(out) if _held(py_func, 0, set(), out) else None


def _held(py_func, depth: int, seen: set, out: list) -> bool:
    """Add to ``out`` what ``held_now`` compares of ``py_func``; whether any of it is
    the program's own (no library's object, no builtin)."""
    code = getattr(py_func, "__code__", None)
    if code is None or depth > _MAX_DEPTH or id(py_func) in seen:
        return False
    seen.add(id(py_func))
    own = False
    cells = dict(zip(code.co_freevars, getattr(py_func, "__closure__", None) or ()))
    scope = getattr(py_func, "__globals__", {})
    by_getattr = "getattr" in code.co_names   # getattr(mod, "G"): its attributes
    for head, steps in _loaded(code):
        v = _value(cells, scope, head)
        for step in steps:   # numba's cuda.grid and kin, read dynamically; np.newaxis
            if v is MISSING or _library(v):
                break
            v = getattr_static(v, step, MISSING)
        else:
            if by_getattr and v is not MISSING and not _library(v):   # getattr(mod, "G")
                held = _attributes_of(v)
                out.extend((type(x), id(x)) for x in held)
                own = own or bool(held)
            if not (v is MISSING and not steps and hasattr(builtins, head) or _settled(v)):
                own = _identities(v, depth, seen, out) or own
    return own


def _settled(v) -> bool:
    """Whether ``v`` is a module, a class, a builtin function or another library's
    object (``math``, ``cuda``, ``float32``), which does not come to hold a device
    array (what a chain off a module of the program's reads is looked at itself)."""
    return isinstance(v, (types.ModuleType, type, types.BuiltinFunctionType)) or \
        not is_array(v) and not isinstance(v, (list, tuple, dict)) and _library(v)


def _value(cells: dict, scope: dict, name: str):
    """What closure cell or global ``name`` holds, ``MISSING`` where nothing."""
    cell = cells.get(name)
    if cell is None:
        return scope.get(name, MISSING)
    try:
        return cell.cell_contents
    except ValueError:   # not bound yet
        return MISSING


def _identities(v, depth: int, seen: set, out: list) -> bool:
    """Add ``(type, id)`` of ``v`` to ``out``, then of the items of a list, tuple or
    dict (nested ones too, as deep as graphtrace walks containers; the first
    ``_ITEMS`` of a long one, a table of numbers numba compiles in: a tuple rebuilt
    in the place of a freed one may take its id), and what a device function there
    names (``FUNCS = (get,)``). Whether ``v`` may come to be or hold a device array:
    not a number (a factory's kernel of a closure number), nor a container of
    numbers alone; an empty one may (``LUTS = ()`` till ``init()``)."""
    out.append((type(v), id(v)))
    if _has(v, "py_func"):   # a device function: what it names
        return _held(v.py_func, depth + 1, seen, out)
    if not isinstance(v, (list, tuple, dict)) or is_array(v):
        return not isinstance(v, _CONSTANTS)
    out.append(len(v))
    own = not v or depth >= _MAX_DEPTH
    for x in itertools.islice(v.values() if isinstance(v, dict) else v,
                              _ITEMS if depth < _MAX_DEPTH else 0):
        own = _identities(x, depth + 1, seen, out) or own
    return own


_CONSTANTS = (int, float, complex, str, bytes, np.generic)   # bool too
_ITEMS = 64


def _loaded(code) -> tuple:
    """``(name, attributes)`` of each global or closure name ``code`` (and the code
    nested in it) loads, and of each attribute chain read off one: once per code."""
    hit = _LOADED.get(code)
    if hit is None:
        hit = _LOADED[code] = tuple(dict.fromkeys(
            (lambda parts: (parts[0], tuple(parts[1:])))(name.split("."))
            for name, _ in name_chains(code, {}, _LOADS) if not name.startswith("<")))
    return hit


_LOADED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # code -> _loaded's


def _attributes_of(v) -> list:
    """The values of a module's or another object's own attributes (what
    ``getattr(v, "name")`` in a kernel may take), none of a number's or array's."""
    if is_array(v) or isinstance(v, (int, float, complex, str, bytes, bool, type(None))):
        return []
    try:
        return list(vars(v).values())
    except Exception:  # noqa: BLE001  (none; or what the object's own lookup raises)
        return []


def _holds_device_arrays(v, depth: int, seen: set) -> bool:
    """Whether ``v`` is a device array, a device function reaching one (not one
    of ``seen``), or a list, tuple or dict holding one of those, nested ones too,
    as deep as graphtrace walks containers (``values._MAX_DEPTH``): deeper, one
    that may hold anything is taken to hold one."""
    if is_array(v):   # numba-cuda's managed and mapped arrays are numpy arrays with
        return not isinstance(v, np.ndarray) or \
            _has(type(v), "__cuda_array_interface__")   # its device pointer compiled in
    if _has(v, "py_func"):
        return id(v.py_func) not in seen and (
            depth >= _MAX_DEPTH or bool(_device_globals(v.py_func, depth + 1, seen)))
    items = children(v)
    return bool(items) and (depth >= _MAX_DEPTH or any(
        _holds_device_arrays(x, depth + 1, seen) for _, x in items))


_LOADS = ("LOAD_GLOBAL", "LOAD_DEREF", "LOAD_NAME", "LOAD_CLASSDEREF")


def closure_values(py_func, depth: int = 0) -> tuple:
    """``(name, value)`` for what the closure cells of ``py_func`` hold, and those of
    the numba device functions it names in turn: a kernel made inside a graph
    function, or by a factory it calls, may hold the graph's arrays or numbers
    there (functions, classes and modules left out)."""
    code = getattr(py_func, "__code__", None)
    if code is None or depth > 8:
        return ()
    out, scope = [], dict(getattr(py_func, "__globals__", {}))
    for name, cell in zip(code.co_freevars, getattr(py_func, "__closure__", None) or ()):
        try:
            v = cell.cell_contents
        except ValueError:   # not yet bound
            continue
        scope[name] = v
        if not callable(v) and not inspect.ismodule(v):
            out.append((name, v))
    for name, v in name_chains(code, scope, _LOADS):
        if _has(v, "py_func") and v.py_func is not py_func:   # a device function
            out += closure_values(v.py_func, depth + 1)
    return tuple(out)

"""Whether a call a loop body makes may store under an object it is handed,
for ``_Region._call`` (``_loop_code.py``) and ``received`` (``_loop_alias.py``).

A body that sets a slot (``opts.alpha = 0.5``) and then hands its object to a
call keeps the slot's set mark where the call cannot store there: a builtin or a
library's callable (``print(opts)``, ``log.debug("%r", opts)``,
``json.dumps(cfg)``, ``len``, ``float``), but a container's method changing it
in place (``cfg.update(...)``) or ``setattr``; a function or a method of the
program's own whose code (and the code of the program's own it calls, a few
calls deep) stores no attribute or item under the parameter taking the object
(``describe(opts)`` reading ``opts.alpha``), a partial of one such. A callee the
code cannot tell (one computed, ``f(*args)``, an object with no code) may store.
A call reaches objects it is not handed too (``reached_stores``): a bound
method's object held before the loop (``setter = m.set``), a partial's
arguments (``partial(fill, m)``), a closure's cells, the globals its code stores
under; their marks drop where its code may store under them.
"""
from __future__ import annotations

import builtins
import types
from functools import partial

from ..bytecode import instructions
from ..chains import MISSING
from ..names import _global_names
from ..owners import _followed, _in_library, own_class, own_holder, own_object
from ..static_attrs import getattr_static
from ..values import _is_number
from ._loop_operands import _CALLS, _parameters, _taken
from ._loop_paths import _resolve
from ._loop_stack import _ATTR_LOADS, _ATTR_STORES, _ITEM_STORES, _LOADS, _begin, _chain, \
    _holder

SELF = "self"   # the key of the object a method is called on (``m.set(v)``: m)
_DEPTH = 4      # calls of the program's own followed from the body's
_BUILTINS = (types.BuiltinFunctionType, types.BuiltinMethodType, types.MethodWrapperType,
             types.WrapperDescriptorType, types.MethodDescriptorType,
             types.ClassMethodDescriptorType)
# a builtin type's method taken off the type: its first argument is the object
_UNBOUND = (types.MethodDescriptorType, types.WrapperDescriptorType)
# a container's methods changing it in place (on the object they are called on)
_CHANGING = frozenset({"append", "extend", "insert", "pop", "popitem", "remove", "clear",
                       "update", "setdefault", "add", "discard", "appendleft", "extendleft",
                       "popleft", "rotate", "sort", "reverse", "fill", "put", "itemset",
                       "resize", "__setitem__", "__delitem__", "difference_update",
                       "intersection_update", "symmetric_difference_update", "move_to_end",
                       "__setattr__", "__delattr__", "__init__", "__setstate__"})
# library functions changing what they are handed
_MUTATORS = frozenset({"setattr", "delattr", "setitem", "delitem", "shuffle", "heappush",
                       "heappop", "heapify", "heappushpop", "heapreplace", "insort",
                       "insort_left", "insort_right", "copyto", "put", "place", "putmask",
                       "fill_diagonal", "iadd", "isub", "imul", "itruediv", "ior", "iand",
                       "__setitem__", "__delitem__", "__setattr__", "__delattr__"})


def may_store(callee, key, depth: int = 0) -> bool:
    """Whether calling ``callee`` may store under the object it is handed at
    ``key`` (a position, a keyword, ``SELF`` for the object of a bound method,
    None where unknown)."""
    if depth > _DEPTH or key is None:
        return True
    if isinstance(callee, _BUILTINS):
        name = getattr(callee, "__name__", "")
        if key == 0 and isinstance(callee, _UNBOUND):   # dict.update(cfg, ...): on cfg
            key = SELF
        return name in (_CHANGING if key == SELF else _MUTATORS)
    if isinstance(callee, type):   # a library's class keeps what it is handed
        return own_class(callee)
    if isinstance(callee, (staticmethod, classmethod)):
        return may_store(callee.__func__, key, depth)
    if isinstance(callee, types.MethodType):
        f, bound = callee.__func__, callee.__self__
        return _function_stores(f, 0 if key == SELF else key + 1 if type(key) is int else key,
                                bound if key == SELF else MISSING, depth, bound)
    if isinstance(callee, types.FunctionType):
        return _function_stores(callee, key, MISSING, depth)
    if type(callee) is partial and key != SELF:   # partial(fill, m)(v): v is fill's 1
        if type(key) is int:
            key += len(callee.args)
        return may_store(callee.func, key, depth)
    if own_object(callee):   # an object of the program's, called: its __call__
        call = getattr_static(type(callee), "__call__", None)
        if isinstance(call, types.FunctionType):
            at = 0 if key == SELF else key + 1 if type(key) is int else key
            return _function_stores(call, at, callee if key == SELF else MISSING, depth, callee)
    return True


def reached_stores(callee, depth: int = 0) -> list:
    """The objects ``callee`` reaches without being handed them and whose code
    may store under: a bound method's object (``setter = m.set``), a partial's
    arguments (``partial(fill, m)``), a function's closure cells (``def upd(v):
    m.v = v``) and the globals its code stores under, and what the functions it
    holds that way reach (``def outer(v): inner(v)``, ``inner`` storing under
    ``m``); an object of the program's own called (its ``__call__``'s self)."""
    out = []
    if depth > _DEPTH:
        return out
    if type(callee) is partial:
        out += reached_stores(callee.func, depth + 1)
        out += [a for k, a in enumerate(callee.args) if may_store(callee.func, k, depth)]
        out += [a for k, a in callee.keywords.items() if may_store(callee.func, k, depth)]
    elif isinstance(callee, types.MethodType):
        if may_store(callee, SELF, depth):
            out.append(callee.__self__)
        out += reached_stores(callee.__func__, depth + 1)
    elif isinstance(callee, types.FunctionType):
        if _library(callee):
            return out
        code = callee.__code__
        held = {}
        for name, cell in zip(code.co_freevars, callee.__closure__ or ()):
            try:
                held[name] = cell.cell_contents
            except ValueError:
                pass
        held.update((g, callee.__globals__[g]) for g in _global_names(code)
                    if g in callee.__globals__ and g not in held)
        out += [v for name, v in held.items() if not (_is_number(v) or isinstance(
            v, (str, bytes, types.ModuleType, types.FunctionType, type))) and
            _code_stores(callee, name, v, depth)]
        for v in held.values():   # def outer(v): inner(v), inner storing under m
            if v is not callee and isinstance(v, (types.FunctionType, types.MethodType,
                                                  partial)):
                out += reached_stores(v, depth + 1)
    elif own_object(callee):
        call = getattr_static(type(callee), "__call__", None)
        if isinstance(call, types.FunctionType):
            out += reached_stores(types.MethodType(call, callee), depth + 1)
    return [v for v in out if v is not None and not _is_number(v)]


def method_stores(holder, name: str, key, depth: int = 0) -> bool:
    """``may_store`` for ``holder.name(...)``: a function its class holds called
    with ``holder`` first, a container's method, a module's or a class's function."""
    f = getattr_static(holder, name, MISSING)
    if f is MISSING:
        return True
    if isinstance(holder, (type, types.ModuleType)):   # json.dumps(cfg), Cls.make(m)
        if key == SELF:
            return own_holder(holder)
        return may_store(getattr(holder, name, MISSING) if isinstance(
            f, (staticmethod, classmethod)) else f, key, depth)
    if isinstance(f, staticmethod):
        return key != SELF and may_store(f.__func__, key, depth)
    if isinstance(f, _BUILTINS):   # cfg.update(v), log.append(v)
        return f.__name__ in (_CHANGING if key == SELF else _MUTATORS)
    if not isinstance(f, types.FunctionType):
        return True
    return _function_stores(f, 0 if key == SELF else key + 1 if type(key) is int else key,
                            holder if key == SELF else MISSING, depth, holder)


def _library(f) -> bool:
    return _followed(f) is None or _in_library(f.__code__.co_filename)


def _function_stores(f, key, value, depth: int, bound=MISSING) -> bool:
    """Whether the Python function ``f`` may store under what its parameter at
    ``key`` (a position counting self, or a keyword) takes."""
    if _library(f):
        return f.__name__ in _MUTATORS
    code = f.__code__
    named = code.co_argcount + code.co_kwonlyargcount
    if type(key) is int:
        if key < code.co_argcount:
            name = code.co_varnames[key]
        elif code.co_flags & 0x04:   # *args
            name = code.co_varnames[named]
        else:
            return True
    elif key in code.co_varnames[code.co_posonlyargcount:named]:
        name = key
    elif code.co_flags & 0x08:   # **kwargs
        name = code.co_varnames[named + bool(code.co_flags & 0x04)]
    else:
        return True
    return _code_stores(f, name, value, depth, bound)


def _code_stores(f, name: str, value, depth: int, bound=MISSING) -> bool:
    code = f.__code__
    if name in code.co_cellvars:   # a function made here may store through it
        return True
    code_ins = list(instructions(code))
    aliases, lines = {name}, {}
    for k, ins in enumerate(code_ins):
        if ins.positions is not None:
            lines.setdefault(ins.positions.lineno, []).append(k)
    grown = True
    while grown:   # x = p.inner, for q in p.items: what the name reaches
        grown = False
        for ks in lines.values():
            if any(_loads(code_ins[k], aliases) for k in ks):
                for k in ks:
                    if code_ins[k].opname in ("STORE_FAST", "STORE_DEREF") and \
                            code_ins[k].argval not in aliases:
                        aliases.add(code_ins[k].argval)
                        grown = True
    scope = _scope(f)
    for k in [k for k in scope if k in aliases]:
        del scope[k]   # (a parameter's name, not the global it hides)
    if value is not MISSING:
        scope[name] = value
    if bound is not MISSING and code.co_argcount and code.co_varnames[0] not in aliases:
        scope[code.co_varnames[0]] = bound   # self, in a method of an object known
    for k, ins in enumerate(code_ins):
        op = ins.opname
        if op in _ATTR_STORES or op in _ITEM_STORES:
            h = _holder(code_ins, k)
            path = _chain(code_ins, h) if h >= 0 else None
            if path is None and _line_loads(code_ins, lines, ins, aliases) or \
                    path is not None and path[0] in aliases:
                return True
        elif op == "CALL_FUNCTION_EX":
            if _line_loads(code_ins, lines, ins, aliases):
                return True
        elif op in _CALLS and code_ins[k - 1].opname != "PRECALL":
            if _call_stores(code_ins, k, aliases, scope, depth):
                return True
    return False


def _loads(ins, names) -> bool:
    return ins.opname in _LOADS and (ins.argval[-1] if isinstance(ins.argval, tuple)
                                     else ins.argval) in names


def _line_loads(code_ins, lines, ins, names) -> bool:
    if ins.positions is None:
        return True
    return any(_loads(code_ins[k], names) for k in lines.get(ins.positions.lineno, ()))


def _scope(f) -> dict:
    scope = dict(vars(builtins))
    scope.update(f.__globals__)
    for cell_name, cell in zip(f.__code__.co_freevars, f.__closure__ or ()):
        try:
            scope[cell_name] = cell.cell_contents
        except ValueError:
            pass
    return scope


def _known(path: tuple, aliases: set, scope: dict):
    """The value at ``path`` (names and attributes) where the code knows it."""
    v = MISSING if path[0] in aliases and path[0] not in scope else \
        scope.get(path[0], MISSING)
    for step in path[1:]:
        if v is MISSING or step[0] != ".":
            return MISSING
        v = getattr_static(v, step[1], MISSING)
    return v


def _call_stores(code_ins, i, aliases, scope, depth) -> bool:
    """Whether the call ``code_ins[i]`` of a function's code, handed what the
    parameter ``name`` (and the names ``aliases`` it reaches) holds, may store there."""
    n = _taken(code_ins[i])
    j = _begin(code_ins, i, n)[0]
    if j <= 0:
        return True
    keys, begin = [], j
    for key, end in _parameters(code_ins, i, n):
        if any(_loads(c, aliases) for c in code_ins[begin:end]):
            keys.append(key)
        begin = end
    callee = code_ins[j - 1]
    path = _chain(code_ins, j - 1)
    if callee.opname in _ATTR_LOADS and path is not None and path[0] in aliases:
        keys.append(SELF)   # p.set(v), p.items.append(v)
    if not keys:
        return False
    if path is None and callee.opname not in _ATTR_LOADS:   # k[grid, block, st](m.v)
        h = _holder(code_ins, j - 1)
        kernel = _chain(code_ins, h) if h >= 0 else None
        return kernel is None or not hasattr(_known(kernel, aliases, scope), "py_func")
    if path is None or any(s[0] != "." for s in path[1:]):
        return True
    holder = _known(path[:1], aliases, scope)
    for step in path[1:-1]:
        holder = MISSING if holder is MISSING else getattr_static(holder, step[1], MISSING)
    if holder is MISSING:
        return True
    if len(path) == 1:
        return any(may_store(holder, key, depth + 1) for key in keys)
    return any(method_stores(holder, path[-1][1], key, depth + 1) for key in keys)


def callee_may(scope: dict, targets: list, method: bool):
    """``key -> whether the call may store under what it hands at key`` for a
    body's call of the functions at the paths ``targets`` of ``scope`` (``method``:
    called as ``holder.name(...)``)."""
    found = _found(scope, targets, method)

    def may(key) -> bool:
        return any(v is MISSING or (may_store(v, key) if name is None else
                                    method_stores(v, name, key)) for v, name in found)
    return may


def _found(scope: dict, targets: list, method: bool) -> list:
    """``(value, None)``, or ``(holder, name)`` for ``holder.name(...)``, of each target."""
    found = []
    for path in targets:
        if method and len(path) > 1 and path[-1][0] == ".":
            found.append((_value(scope, path[:-1]), path[-1][1]))
        else:
            found.append((_value(scope, path), None))
    return found


def reached_names(scope: dict, targets: list, method: bool, stored) -> set:
    """The names of ``scope`` holding, or whose stored slots (``m.inner.v``) pass
    through, an object a body's call of ``targets`` reaches and may store under
    without being handed it (``reached_stores``: ``setter(v)``, ``setter = m.set``)."""
    objs = set()
    for v, name in _found(scope, targets, method):
        if name is not None:
            v = getattr_static(v, name, MISSING) if v is not MISSING else MISSING
        if v is not MISSING:
            objs.update(id(x) for x in reached_stores(v))
    if not objs:
        return set()
    out = {k for k, v in scope.items() if id(v) in objs}
    for p in stored:
        if len(p) > 2 and p[0] not in out and any(
                id(_resolve(scope, p[:k])) in objs for k in range(2, len(p))):
            out.add(p[0])
    return out


def _value(scope: dict, path: tuple):
    v = scope.get(path[0], MISSING)
    if v is MISSING and len(path) == 1:
        v = vars(builtins).get(path[0], MISSING)
    for kind, key in path[1:]:
        if v is MISSING:
            break
        if kind == ".":
            v = getattr_static(v, key, MISSING)
            if isinstance(v, (staticmethod, classmethod)) or v is not MISSING and \
                    isinstance(v, _BUILTINS) and not isinstance(v, types.BuiltinFunctionType):
                return MISSING   # (bound by the lookup: not followed here)
        elif type(v) in (list, tuple, dict):
            try:
                v = v[key]
            except (LookupError, TypeError):
                return MISSING
        else:
            return MISSING
    return v

"""Functions a block's code holds in names, and the state they reach, for
``_loop_state.py`` and ``_loop_after.py``.

A body reaches state not only by its own names but through the functions it
holds: a closure's cells, a bound method's object, a ``functools.partial``'s
arguments, a function's globals (``cur, bump = c.cur, c.bump``; ``pk =
partial(pick, st, bufs)``; ``cur, bump = make_counter()``). It calls them
(``bufs[cur() % 2]``, ``src, dst = pk()``), or hands them to a helper of the
program's that calls them (``step(body, bufs, cur, bump)``), and the code
after a block may do the same (``get()`` reading what the body's ``set_("b")``
set). ``_helper_roots`` takes, beside a function's cells and globals, the object a
bound method holds and a partial's arguments, where no name of the block
holds them already (``cur.__self__``, ``pk.args[0]``); ``binding`` tells a
callable's code and what it binds to its parameters; ``reached`` the paths by
which that code reaches a slot; ``handed`` the functions a helper is handed
and calls that read a slot (``handed_reads``: for what they return or do
with it); ``handed_use`` whether what they read reaches the helper's work
(its kernels take it, index or size by it, decide by it which work runs, or
return it to the body's work), or their own work.
"""
from __future__ import annotations

import inspect
import sys
import types
import weakref
from functools import partial

from ..chains import MISSING
from ..names import _global_names
from ..owners import _attr, _bound_to, _graph_class, own_holder, own_object
from ..values import _is_number
from ._loop_code import _Region
from ._loop_names import _lines, _named
from ._loop_paths import _MAX_ITEMS, _WHOLE, _found, _reads, _resolve

_NONE = (None, {}, 0)
_FIXED = frozenset({str, bytes, bool, type(None)})   # (held by value: no slot of their own)
_HOLDERS = frozenset({list, tuple, dict})


def _function(body):
    """``(function, bound object or None, extra roots)`` of a ``body=`` callable."""
    if isinstance(body, partial):
        fn, bound, extra = _function(body.func)
        names = fn.__code__.co_varnames[:fn.__code__.co_argcount] if fn is not None else ()
        extra = {**extra, **dict(zip(names[1 if bound is not None else 0:], body.args)),
                 **body.keywords}
        return fn, bound, extra
    if isinstance(body, types.MethodType):
        return body.__func__, body.__self__, {}
    fn, obj = graph_code(body)   # a @gt.graph function or method as the body: its code
    if fn is not None:
        return fn, obj, {}
    if isinstance(body, types.FunctionType):
        inner = inspect.unwrap(body)   # a decorator's wrapper (functools.wraps): the body's
        return (inner if isinstance(inner, types.FunctionType) else body), None, {}
    call = _attr(type(body), "__call__")
    if isinstance(call, types.FunctionType):   # an object of the program's own
        return call, body, {}
    return None, None, {}


def graph_code(v) -> tuple:
    """``(the Python function, the instance or None)`` of a ``@gt.graph`` function
    (``GraphFunction``: its ``fn``) or of a graph method bound to its instance
    (``BoundGraphFunction``: ``model.step``); ``(None, None)`` for anything
    else. A body's helpers of either kind are walked as the plain function or
    method would be: their code runs inline, or as a child graph recorded once
    for the block, as a plain helper's does."""
    t = type(v)
    if _graph_class(t):
        fn = _attr(v, "fn")
        return (fn, None) if type(fn) is types.FunctionType else (None, None)
    if t is not types.MethodType:
        got = _bound_to(v)
        if got is not None and type(got[1]) is types.FunctionType:
            return got[1], got[0]
    return None, None


def binding(v) -> tuple:
    """``(function, {parameter: what it is bound to}, how many positions are bound)``
    of a callable: a function, a bound method (its object as its first
    parameter), a partial (its arguments, over what its function binds), an
    object of the program's own with a ``__call__``; ``(None, {}, 0)`` for
    another (told by type: a weak proxy's may be dead)."""
    t = type(v)
    if t is types.FunctionType:
        return v, {}, 0
    if t is types.MethodType:
        fn = v.__func__
        if type(fn) is not types.FunctionType or not fn.__code__.co_argcount:
            return _NONE
        return fn, {fn.__code__.co_varnames[0]: v.__self__}, 1
    fn, obj = graph_code(v)   # @gt.graph: step(body, x), model.step(body, x)
    if fn is not None:
        if obj is None:
            return fn, {}, 0
        if not fn.__code__.co_argcount:
            return _NONE
        return fn, {fn.__code__.co_varnames[0]: obj}, 1
    if issubclass(t, partial):
        fn, bound, skip = binding(v.func)
        if fn is None:
            return _NONE
        code = fn.__code__
        names = code.co_varnames[:code.co_argcount]
        bound = {**bound, **dict(zip(names[skip:], v.args))}
        bound.update((k, x) for k, x in v.keywords.items()
                     if k in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
        return fn, bound, skip + len(v.args)
    if own_object(v):
        call = _attr(t, "__call__")
        if type(call) is types.FunctionType and call.__code__.co_argcount:
            return call, {call.__code__.co_varnames[0]: v}, 1
    return _NONE


def _own_function(v) -> bool:
    """Whether ``v`` (a function, a method) is of a module of the program's own."""
    name = _attr(_attr(v, "__func__", v), "__module__")
    hit = _OWN_MODULES.get(name) if type(name) is str else None
    if hit is None:
        module = sys.modules.get(name) if type(name) is str else None
        if module is None:
            return True
        hit = _OWN_MODULES[name] = own_holder(module)
    return hit


_OWN_MODULES: dict = {}   # a module's name -> own_holder (asked of each helper, each block)


def _cell(fn, name: str):
    """The closure cell of ``fn`` by the name ``name``, or None."""
    code = fn.__code__
    return dict(zip(code.co_freevars, fn.__closure__ or ())).get(name) if \
        name in code.co_freevars else None


def _kept(v, out: dict) -> bool:
    """Whether ``v`` is held by a name in ``out`` already (an object or a container
    by its identity; a number, a string, by none: another slot)."""
    return not (_is_number(v) or type(v) in _FIXED) and any(v is x for x in out.values())


def _helper_roots(fn, name: str, out: dict, owners: dict, shared=()) -> None:
    """The closure cells and the globals of a function the body calls by ``name``
    (a function, a bound method, a partial; ``owners``: root -> (the function,
    its name there)), and what a bound
    method or a partial of the program's own binds (``name.__self__``,
    ``name.args[0]``, ``name.keywords['k']``) where no name holds it yet
    (``shared``: the names of the block's code's own cells, which a function
    made there shares)."""
    for label, v in _bound_roots(fn, name):
        if not _kept(v, out):
            out.setdefault(label, v)
    fn = binding(fn)[0] if type(fn) is not types.FunctionType else fn
    if fn is None:
        return
    code = fn.__code__
    seen = {id(c) for r in out if r in owners for c in (_cell(*owners[r]),)
            if c is not None} if code.co_freevars else ()
    for cell_name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            v = cell.cell_contents
        except ValueError:   # a cell not yet filled
            continue
        if _kept(v, out) or id(cell) in seen or \
                cell_name in shared and out.get(cell_name, MISSING) is v:
            continue   # one the body's names hold, or another function's cell: once
        out.setdefault(f"{name}.<{cell_name}>", v)
        owners.setdefault(f"{name}.<{cell_name}>", (fn, cell_name))
    for g in _global_names(code):
        if g in fn.__globals__:
            out.setdefault(g, fn.__globals__[g])
            owners.setdefault(g, (fn, g))
    for label, param, v in _defaults(fn, name):   # def step(body, bufs, _st={"i": 0})
        if not _kept(v, out):
            out.setdefault(label, v)
            owners.setdefault(label, (fn, param))


def _defaults(fn, name: str) -> list:
    """``(label, parameter, value)`` of the defaults of ``fn`` (held by ``name``)
    that may hold state: not a number, a string, None (``_st={"i": 0}``:
    ``name.__defaults__[0]``, ``name.__kwdefaults__['_st']``)."""
    code, out = fn.__code__, []
    held = fn.__defaults__ or ()
    params = code.co_varnames[code.co_argcount - len(held):code.co_argcount]
    out += [(f"{name}.__defaults__[{i}]", p, v) for i, (p, v) in enumerate(zip(params, held))]
    out += [(f"{name}.__kwdefaults__[{k!r}]", k, v) for k, v in (fn.__kwdefaults__ or {}).items()]
    return [(label, p, v) for label, p, v in out if not (_is_number(v) or type(v) in _FIXED)]


def defaulted(label: str) -> bool:
    """Whether a root's ``label`` names a default of a parameter (``_defaults``)."""
    return ".__defaults__[" in label or ".__kwdefaults__[" in label


def _bound_roots(v, name: str) -> list:
    """``(label, value)`` of what a bound method or a partial of the program's own
    binds: its object, its arguments (and those of a partial or method within)."""
    t = type(v)
    if t is types.MethodType and _own_function(v):
        return [(f"{name}.__self__", v.__self__)]
    fn, obj = graph_code(v)   # a graph method bound to its instance: model.step
    if obj is not None and _own_function(fn):
        return [(f"{name}.__self__", obj)]
    fn = binding(v)[0] if issubclass(t, partial) else None
    if fn is None or not _own_function(fn):
        return []
    return [(f"{name}.args[{i}]", x) for i, x in enumerate(v.args)] + \
        [(f"{name}.keywords[{k!r}]", x) for k, x in v.keywords.items()] + \
        _bound_roots(v.func, f"{name}.func")


_BOUND = (".__self__", ".args[", ".keywords[")   # (the roots _bound_roots names)


def named_directly(hits: list, before: dict) -> list:
    """``hits`` (``(path, ...)``) but those reached through what a bound method or a
    partial binds (``cur.__self__.k``) where another hit is the same slot
    (``before``: path -> (value, bytes, where it is held)) named otherwise."""
    where = [before.get(h[0], (None, None, None))[2] for h in hits]
    bound = [any(m in h[0][0] for m in _BOUND) for h in hits]
    plain = {w for w, b in zip(where, bound) if w is not None and not b}
    return [h for h, w, b in zip(hits, where, bound) if not (b and w in plain)]


def reached(fn, bound: dict, path: tuple, now: dict, owners: dict) -> list:
    """The paths by which the code of ``fn`` (a function, ``bound`` its parameters
    bound to values) reaches the slot at ``path`` (from the names the block
    began with, holding ``now``): a global of its own by the same name, a
    closure cell the root is (``owners``: the cell's function), or an object or
    a container on the path it holds by a parameter bound, a cell or a global
    (``self`` of ``c.cur`` with ``c.k``; ``st`` of ``partial(pick, st)`` with
    ``st['i']``)."""
    out = []
    named = _named(fn)
    owner = owners.get(path[0])
    if owner is not None and owner[0] is not None and owner[1] in owner[0].__code__.co_freevars:
        cell = _cell(*owner)
        out += [(n,) + path[1:] for n in fn.__code__.co_freevars if _cell(fn, n) is cell]
    elif path[0] in named and path[0] not in fn.__code__.co_freevars and \
            fn.__globals__.get(path[0], MISSING) is now.get(path[0], MISSING):
        out.append(path)
    if len(path) > 1:   # the objects and containers on its way (the first from the name)
        on_way = {id(_found(now, path[:n])): n for n in range(len(path) - 1, 0, -1)}
        for name, v in [*bound.items(), *named.items()]:
            n = on_way.get(id(v))
            if n is not None and _found(now, path[:n]) is v:
                out.append((name,) + path[n:])
    return list(dict.fromkeys(out))


def _region(state, fn) -> _Region:
    """The ``_Region`` of all the code of ``fn``, built once a code (``state.helpers``:
    for the trace, each block asking it of the same helpers) while the globals
    its code names hold the same objects."""
    code, scope = fn.__code__, fn.__globals__
    held = (id(scope),) + tuple(id(scope.get(g)) for g in _global_names(code))
    hit = state.helpers.get(code)
    if hit is None or hit[0] != held:
        hit = state.helpers[code] = (held, _Region((code, -1, 1 << 62), dict(scope)))
    return hit[1]


def handed(state, region, path: tuple):
    """``(line, the helper's path, the helper, its region, the path its code calls,
    the function called, its region, the paths it reads the slot at path by)``
    for each function of the program's that a call of ``region`` hands a
    callable (or a container of them, by a name: ``step(body, bufs, cur,
    bump)``) that it calls, or hands on to another that calls it (the helper's
    path then None; ``_DEPTH`` helpers deep), and that reads the slot at
    ``path`` before storing it, by what it holds (``reached``)."""
    hit = _HANDED.get(region)   # (the same calls for each slot the block changed)
    if hit is None or hit[0] is not state:
        hit = _HANDED[region] = (state, list(_handed_calls(state, region, 0, None)))
    for line, callee, fn, own, called, inner, bound, mine in hit[1]:
        held = [q for q in reached(inner, bound, path, state.now, state.owners)
                if mine.carried(q) is True]
        if held:
            yield line, callee, fn, own, called, inner, mine, held


_HANDED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # region -> (state, calls)


def handed_reads(state, region, path: tuple):
    """The line of the first call of ``region`` handing a function that reads the
    slot at ``path`` (``handed``) for what it returns or for what it does with
    it (takes it to a call, indexes or sizes by it, decides by it: not
    ``self.trips += 1``), else None."""
    for line, *_, mine, held in handed(state, region, path):
        if any(_reads(mine.returned(), q) or mine.indexes_with(q) or mine.sizes_with(q) or
               any(_reads(read, q) for read, _ in mine.decisions) or
               any(_reads(read, q) for read in mine.takes.values()) for q in held):
            return line
    return None


def _handed_calls(state, region, depth: int, lookup):
    """``(line, the helper's path, the helper, its region, the path its code calls,
    the function called, what that binds, its region)`` of ``handed`` for any
    slot (``lookup``: the values a path of the code may hold; of the names the
    block began with, where None)."""
    lookup = lookup or (lambda q: (_found(state.now, q),))
    for line, callee, args, _ in region.passes:
        fn, _, skip = binding(_resolve(region.scope, callee))
        if fn is None or not _own_function(fn):
            continue
        code = fn.__code__
        names = code.co_varnames[skip:code.co_argcount + code.co_kwonlyargcount]
        values = _handed_values(lookup, args, names)
        if not values:
            continue
        own = _region(state, fn)
        for _, called, _, _ in own.passes:
            for v in values.get(called[0], ()):
                inner, bound, _ = binding(_found({called[0]: v}, called))
                if inner is not None and _own_function(inner):
                    yield line, callee, fn, own, called, inner, bound, _region(state, inner)
        if depth + 1 < _DEPTH:   # step(body, bufs, cur) handing cur on to sweep(...)
            def deeper(q, values=values):
                return [_found({q[0]: v}, q) for v in values.get(q[0], ())]
            for _, _, *rest in _handed_calls(state, own, depth + 1, deeper):
                yield (line, None, *rest)


_DEPTH = 3   # helpers handing a function on: this many deep


def _handed_values(lookup, args: dict, names: tuple) -> dict:
    """parameter -> the callables (or small containers holding some) a call's
    arguments hand it, where an argument is one name or path (``cur``,
    ``self.fns``; ``lookup``: what it may hold); where the keywords are unknown
    (``None``: 3.11's), each one handed to any parameter."""
    out: dict = {}
    for key, reads in args.items():
        paths = [q for q in reads if q[-1] != _WHOLE]
        if key is not None and len(paths) != 1:
            continue
        found = [v for q in paths for v in lookup(q) if _calls(v)]
        if not found:
            continue
        name = key if type(key) is str else names[key] if \
            type(key) is int and key < len(names) else None
        for n in (names if key is None else (name,) if name in names else ()):
            out.setdefault(n, []).extend(found)
    return out


def _calls(v) -> bool:
    """Whether ``v`` is a callable ``binding`` reads, or a list, tuple or dict of at
    most ``_MAX_ITEMS`` items holding one."""
    if v is MISSING:
        return False
    if type(v) in _HOLDERS:
        return len(v) <= _MAX_ITEMS and any(
            binding(x)[0] is not None for x in (v.values() if type(v) is dict else v))
    return binding(v)[0] is not None


_SOURCES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # graph -> its lines


def recorded_lines(regions) -> frozenset:
    """The ``(file, line)`` sources of the nodes of the graphs ``regions`` (their
    regions' too): walked once a graph, which is not added to once recorded (a
    trace's end asks it of the whole graph for each block's later reads)."""
    out = frozenset()
    for r in regions:
        got = _SOURCES.get(r)
        if got is None:
            got = _SOURCES[r] = frozenset(n.source for n in r.walk())
        out = got if not out else out | got
    return out


def handed_use(state, region, path: tuple, regions):
    """What a function handed to a helper the code calls (``handed``) reads of the
    slot at ``path`` reaches: ``"flow"`` where the helper decides by what it
    returns which of its work runs, ``"number"`` where the helper's work takes
    it or indexes or sizes by it, or returns it to the code's work, or where its
    own recorded work does so; else None."""
    sources = work = None   # (found once one is handed: a walk of the recorded work)
    for _, callee, fn, own, called, inner, mine, held in handed(state, region, path):
        if sources is None:
            sources = recorded_lines(regions)
            work = state._work(region, regions)
        if any(_reads(mine.returned(), q) for q in held):   # src, dst = pick() there
            lines = {line for f, line in sources if f == fn.__code__.co_filename}
            if own.decides_with(called, lines | own.launches):
                return "flow"
            if own.takes_on(lines, called) or own.indexes_with(called) or \
                    own.sizes_with(called) or callee is not None and _reads(
                        own.returned(), called) and (region.takes_on(work, callee) or
                                                     region.decides_with(callee, work)):
                return "number"   # (k = read(cur) then bufs[k % 2]: returned to the work)
        inside = {line for f, line in sources & _lines(inner, 1)}
        if inside and any(mine.takes_on(inside, q) or mine.indexes_with(q) or
                          mine.sizes_with(q) or mine.decides_with(q, inside | mine.launches)
                          for q in held):
            return "number"
    return None

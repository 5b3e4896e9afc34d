"""Access intents of a numba kernel, read off its Python source.

The rule: a parameter is written when anything that may alias it (be it, a
view of it, or a tuple holding either) may be written; where the analysis
cannot tell, it assumes written and read. Over-approximation costs
parallelism, a missed write is a silent race.

What may alias a parameter: the parameter; views and elements of an alias
(``p[1:]``, ``p[i]``, ``p.T``); tuples, lists and comprehensions holding an
alias; either branch of ``a if c else b`` / ``a or b``; the items of a loop
over an alias (``for row in p``, ``enumerate(p)``, ``zip(p, q)``,
``literal_unroll(t)``, tuple unpacking and starred targets included);
``with p as q``; ``(q := p)``; and the result of any call given an alias (as
argument, starred, by keyword, or as the receiver of a method), except calls
known to return something new: scalar intrinsics, ``math``/``cmath``, ``len``,
``range``, casts, ``cuda.local.array`` and atomics. A numba device function is
read for what it returns: only the parameters its ``return`` statements may
alias come back (tuples position by position). Array metadata (``p.shape``,
``p.size``...) is no alias for an in-place ``+=``, and ``p.shape[0]`` reads no
element of a ``p`` stored into as ``p[i] = v`` (of another it may be a namedtuple's
field). Storing into an element
never makes an alias: numba arrays hold numbers and records, and a kernel has
no other mutable container.

What writes: a store or ``del`` through an alias (``q[i] = v``, ``q.x = v``,
``q[i] += v``, ``for q[i] in ...``); ``q += v`` on a name that may be an array
view (one bound to ``p[i, j]`` or a loop item of ``p``, sure integer indices
taking every dimension of an array ``p`` of numbers, is a number: ``Intents.numbers``
says which, and a launch's arrays decide, ``modes_for``); atomics and cache-hinted stores (``cuda.stcg``) on their first argument;
a device function whose own analysis writes the parameter it is given; any
other call given an alias; and whatever escapes the analysis: a parameter
mentioned inside a nested function or lambda, bound to a ``global`` or
``nonlocal`` name, used as a ``with`` context, yielded or raised. An alias
only loaded from is read. Without source, everything is read and written.

API: ``infer_intents(py_func)`` gives one intent per positional parameter
(None without source); ``vararg_intent(py_func)`` the intent that applies to
every element of ``*args`` (None when there is no ``*args``); ``analyze``
returns an ``Intents`` whose ``for_args(n)`` gives the intents of a launch
with ``n`` positional arguments. Keyword-only parameters are analysed too
(``Intents.kwonly``), though a numba launch passes arguments by position.

The kinds of alias, the shapes made of them, what builtins and numba.cuda's
functions do to their arguments and ``Intents`` are ``_aliases.py``'s; reading a
kernel's source and what its names hold, ``_kernel_source.py``'s.
"""
from __future__ import annotations

import ast
import builtins
import collections
import functools
import inspect
import threading
import weakref

import numpy as np

from ._aliases import (_A, _BUILTINS, _CUDA_INTS, _E, _M, _METADATA, _NONE, _P, _T, _TUPLES,
                       _VIEW_METHODS, Intents, _cuda_kind, _cuda_name, _dotted, _elem, _flat,
                       _full, _index, _is_element, _join, _loose, _names, _pack)
from ._kernel_source import _parse, reached_globals, resolve_dotted
from ..probe import _attr, _has

__all__ = ["analyze", "infer_intents", "vararg_intent", "writes_outside"]


class _Analysis:
    def __init__(self, py_func, fdef):
        a = fdef.args
        self.positional = [x.arg for x in a.posonlyargs + a.args]
        self.vararg = a.vararg.arg if a.vararg else None
        self.kwonly = [x.arg for x in a.kwonlyargs]
        params = self.positional + self.kwonly + ([self.vararg] if self.vararg else [])
        self.alias: dict[str, set] = {p: {(p, 0), (p, _P)} for p in params}
        if self.vararg:   # always a tuple
            self.alias[self.vararg] = {(self.vararg, _T)}
        self.nodes = [n for stmt in fdef.body for n in ast.walk(stmt)]
        self.local = set(params) | self._bound_names()
        try:
            closure = inspect.getclosurevars(py_func).nonlocals
        except (TypeError, ValueError):
            closure = {}
        self.scope = collections.ChainMap(closure, getattr(py_func, "__globals__", {}),
                                          vars(builtins))
        self.callees: dict = {}
        self.devices: list = []   # (dotted name, device function) of the calls resolved
        self.read, self.written, self.outside = set(), set(), set()
        # p read only as p.shape[0] (metadata: no element), and p stored as p[i] = v
        self.metadata, self.stored = set(), set()
        self.numbers: dict[str, int] = {}   # p -> n: ``q += v`` of a q that is p[i..] (n)
        self.ints = self._int_names()

    def _bound_names(self) -> set:
        """Names the function binds itself: calls through them are not resolved."""
        out = set()
        for n in self.nodes:
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                out.add(n.id)
            elif isinstance(n, ast.arg):
                out.add(n.arg)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(n.name)
            elif isinstance(n, ast.alias):
                out.add((n.asname or n.name).split(".")[0])
            elif isinstance(n, (ast.Global, ast.Nonlocal)):
                out.update(n.names)
            elif isinstance(n, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and n.name:
                out.add(n.name)
        return out

    # --- what an expression may alias -----------------------------------------
    def roots(self, e) -> frozenset:
        return _flat(self.shape(e))

    def shape(self, e):
        """What ``e`` may alias, position by position where it is a known tuple."""
        if isinstance(e, (ast.Tuple, ast.List)) and not any(isinstance(x, ast.Starred)
                                                            for x in e.elts):
            return tuple(self.shape(x) for x in e.elts)
        if isinstance(e, ast.IfExp):
            return _join(self.shape(e.body), self.shape(e.orelse))
        if isinstance(e, ast.NamedExpr):
            return self.shape(e.value)
        if isinstance(e, ast.Call):
            return self.call(e)[0]
        if isinstance(e, ast.Name):
            return frozenset(self.alias.get(e.id, ()))
        if isinstance(e, ast.Attribute):
            r = self.roots(e.value)
            return frozenset((p, _M) for p, _ in r) if e.attr in _METADATA else _elem(r)
        if isinstance(e, ast.Subscript):
            return _index(self.roots(e.value), self.taken(e.slice))
        if isinstance(e, ast.Starred):
            return self.roots(e.value)
        if isinstance(e, (ast.Tuple, ast.List, ast.Set)):
            return _pack(self.union(e.elts))
        if isinstance(e, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return _pack(self.roots(e.elt))
        if isinstance(e, ast.DictComp):
            return _pack(self.union([e.key, e.value]))
        if isinstance(e, ast.BinOp):   # arithmetic makes new arrays; + and * of tuples keep items
            return frozenset((p, _T) for p, k in self.union([e.left, e.right]) if k in _TUPLES)
        if isinstance(e, (ast.Constant, ast.Compare, ast.UnaryOp, ast.JoinedStr, ast.Slice)):
            return _NONE
        if isinstance(e, ast.Lambda):
            return self.mentions(e)
        # BoolOp, Dict, Await, Yield, ...: may be any of what it is made of
        return _full(self.union([c for c in ast.iter_child_nodes(e) if isinstance(c, ast.expr)]))

    def union(self, exprs) -> frozenset:
        return frozenset().union(*(self.roots(x) for x in exprs))

    def mentions(self, node) -> frozenset:
        """Every alias named anywhere inside ``node`` (a nested function or lambda)."""
        return _full(frozenset().union(*(self.alias.get(n.id, ()) for n in ast.walk(node)
                                         if isinstance(n, ast.Name))))

    def item(self, it):
        """The shape of one item of ``for ... in it``."""
        if isinstance(it, ast.Call) and not any(isinstance(a, ast.Starred) for a in it.args):
            obj = self.callee(it.func)[1]
            if obj is zip:
                return tuple(self.item(a) for a in it.args)
            if obj is enumerate and it.args:
                return (_NONE, self.item(it.args[0]))
        shape = self.shape(it)
        if isinstance(shape, tuple):   # a tuple literal: any of its items
            return functools.reduce(_join, shape, _NONE)
        return _index(shape, 1)

    # --- integer indices ---------------------------------------------------------
    def taken(self, idx) -> int | None:
        """How many dimensions index ``idx`` surely takes (slices none), or None."""
        elts = idx.elts if isinstance(idx, ast.Tuple) else [idx]
        if any(not isinstance(x, ast.Slice) and not self.is_int(x, self.ints) for x in elts):
            return None
        return sum(not isinstance(x, ast.Slice) for x in elts)

    def is_int(self, e, ints) -> bool:
        """Whether ``e`` is surely an int (not a tuple, slice, None or bool), the
        local names in ``ints`` taken to be."""
        if isinstance(e, ast.Constant):
            return type(e.value) is int
        if isinstance(e, ast.Name):
            v = self.scope.get(e.id) if e.id not in self.local else None
            return e.id in ints or type(v) is int
        if isinstance(e, ast.BinOp):   # (int * tuple repeats the tuple)
            left, right = self.is_int(e.left, ints), self.is_int(e.right, ints)
            return left and right or (left or right) and not isinstance(e.op, ast.Mult)
        if isinstance(e, ast.UnaryOp):
            return not isinstance(e.op, ast.Not) and self.is_int(e.operand, ints)
        if isinstance(e, ast.IfExp):
            return self.is_int(e.body, ints) and self.is_int(e.orelse, ints)
        if isinstance(e, ast.Subscript):   # p.shape[0]
            return isinstance(e.value, ast.Attribute) and e.value.attr in ("shape", "strides")
        if isinstance(e, ast.Attribute):   # p.size, cuda.threadIdx.x
            if e.attr in ("size", "ndim", "itemsize", "nbytes"):
                return True
            head, *rest = _dotted(e).split(".")
            rel = _cuda_name(self.scope.get(head), rest) if head not in self.local else None
            return rel in _CUDA_INTS
        if isinstance(e, ast.Call):
            return self.int_call(e)
        return False

    def int_call(self, e) -> bool:
        """Whether call ``e`` returns ints (``cuda.grid(2)``: a tuple of them)."""
        kind, obj = self.callee(e.func)
        if kind != "fresh":
            return False
        if any(obj is f for f in (len, int, round, abs, divmod, hash, ord)) or \
                isinstance(obj, type) and issubclass(obj, np.integer):
            return True
        head, *rest = _dotted(e.func).split(".")
        return head not in self.local and _cuda_name(self.scope.get(head), rest) in (
            "grid", "gridsize", "popc", "brev", "clz", "ffs")

    def _int_names(self) -> set:
        """The local names every binding of which is an int (``i = cuda.grid(1)``,
        ``i, j = cuda.grid(2)``, ``for j in range(n)``, ``i += 1``): the greatest
        such set, so that ``i = i + 1`` keeps ``i`` an int."""
        binds, handled = collections.defaultdict(list), set()

        def bind(t, value) -> None:   # value: an expression, or True (an int)
            if isinstance(t, ast.Name):
                binds[t.id].append(value)
                handled.add(id(t))
            elif isinstance(t, (ast.Tuple, ast.List)) and value is not True:
                if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(t.elts):
                    for x, v in zip(t.elts, value.elts):
                        bind(x, v)
                elif isinstance(value, ast.Call) and self.int_call(value):
                    for x in t.elts:
                        bind(x, True)
        for n in self.nodes:
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    bind(t, n.value)
            elif isinstance(n, (ast.AnnAssign, ast.NamedExpr)) and n.value is not None:
                bind(n.target, n.value)
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                bind(n.target, ast.BinOp(ast.Name(n.target.id, ast.Load()), n.op, n.value))
            elif isinstance(n, (ast.For, ast.comprehension)) and isinstance(n.iter, ast.Call) \
                    and self.callee(n.iter.func)[1] is range:
                bind(n.target, True)
        bad = {n.id for n in self.nodes if isinstance(n, ast.Name)
               and not isinstance(n.ctx, ast.Load) and id(n) not in handled}
        bad |= self.local - {n.id for n in self.nodes if isinstance(n, ast.Name)}  # except
        for n in self.nodes:   # ... as e, imports, defs, a nested function's parameters
            if isinstance(n, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.FunctionDef,
                              ast.AsyncFunctionDef, ast.ClassDef)) and n.name:
                bad.add(n.name)
            elif isinstance(n, ast.arg):
                bad.add(n.arg)
            elif isinstance(n, ast.alias):
                bad.add((n.asname or n.name).split(".")[0])
            elif isinstance(n, (ast.Global, ast.Nonlocal)):
                bad.update(n.names)
        ints = {name for name in binds if name not in bad and name not in self.alias}
        changed = True
        while changed:
            before = len(ints)
            ints = {name for name in ints
                    if all(v is True or self.is_int(v, ints) for v in binds[name])}
            changed = len(ints) != before
        return ints

    # --- calls -----------------------------------------------------------------
    def callee(self, func):
        """``(kind, object)`` of what a call calls; kind says what it does to arguments."""
        if isinstance(func, ast.Attribute) and self.roots(func.value):   # a method of an alias
            return ("view" if func.attr in _VIEW_METHODS else "unknown"), None
        hit = self.callees.get(id(func))
        if hit is None:
            hit = self.callees[id(func)] = self._resolve(func)
        return hit

    def _resolve(self, func):
        dotted = _dotted(func)
        head, *rest = dotted.split(".")
        if not dotted or head in self.local:
            return "unknown", None
        obj = top = self.scope.get(head)
        for name in rest:   # (a module's, a metaclass's __getattr__ may raise anything)
            obj = _attr(obj, name)
        if _attr(obj, "__name__") == "literal_unroll" \
                and str(_attr(obj, "__module__", "")).startswith("numba"):
            return "passing", obj
        if obj is not None and _has(obj, "py_func"):   # a numba device function
            self.devices.append((dotted, obj))
            summary = analyze(obj.py_func)
            if summary is not None:
                self.outside |= summary.outside
            return ("device", summary) if summary is not None else ("unknown", None)
        if id(obj) in _BUILTINS:
            return _BUILTINS[id(obj)], obj
        if callable(obj) and _attr(obj, "__module__") in ("math", "cmath"):
            return "fresh", obj
        if isinstance(obj, np.ufunc):
            return "ufunc", obj
        if (isinstance(obj, type) and issubclass(obj, np.generic)) \
                or type(obj).__module__.startswith("numba.core.types"):   # casts
            return "fresh", obj
        rel = _cuda_name(top, rest)
        return (_cuda_kind(rel) if rel is not None else "unknown"), obj

    def call(self, e):
        """``(shape of the result, [(roots, mode)] of what the call does to its arguments)``."""
        kind, info = self.callee(e.func)
        starred = any(isinstance(a, ast.Starred) for a in e.args) \
            or any(k.arg is None for k in e.keywords)
        if kind == "device":
            return self._device_call(e, info, starred)
        args = [*e.args, *(k.value for k in e.keywords)]
        every = self.union(args)
        if kind == "fresh":
            return _NONE, [(every, "r")]
        if kind == "passing":
            return _loose(every), [(every, "r")]
        if kind == "tuple":
            return frozenset((p, _T) for p, k in every if k in _TUPLES), [(every, "r")]
        if kind == "view":   # a view of the receiver
            return _loose(self.roots(e.func.value)), [(every, "r")]
        if kind == "store":   # the first argument is updated, the rest read
            first = e.args[0] if e.args and not starred and not e.keywords else None
            rest = [a for a in args if a is not first]
            return _NONE, [(self.roots(first) if first else every, "rw"), (self.union(rest), "r")]
        if kind == "ufunc" and not starred:   # inputs read, outputs written and returned
            ins, outs = e.args[:info.nin], [*e.args[info.nin:], *(k.value for k in e.keywords)]
            return _full(self.union(outs)), [(self.union(ins), "r"), (self.union(outs), "rw")]
        # unknown: it may write, and return, anything it is given (or closes over)
        every |= self.roots(e.func)
        return _full(every), [(every, "rw")]

    def _device_call(self, e, s: Intents, starred: bool):
        if starred:   # positions unknown: every argument may go to every parameter
            bound = [(None, a) for a in [*e.args, *(k.value for k in e.keywords)]]
        else:
            var = s.vararg[0] if s.vararg else None
            bound = [(s.params[i] if i < len(s.params) else var, a) for i, a in enumerate(e.args)]
            bound += [(k.arg, k.value) for k in e.keywords]
        effects, by_param = [], collections.defaultdict(set)
        modes = [*s.modes, *s.kwonly.values(), *([s.vararg[1]] if s.vararg else [])]
        joined = "".join(sorted(set("".join(modes)))) or "r"
        for name, a in bound:
            r = self.roots(a)
            mode = (s.mode(name) or "rw") if not starred else joined
            effects.append((r, mode))
            for q in ([name] if not starred else _names(_flat(s.returns))):
                by_param[q] |= r

        def substitute(shape):
            if isinstance(shape, tuple):
                return tuple(map(substitute, shape))
            out = set()
            for q, k in shape:
                out |= _pack(by_param[q]) if k in _TUPLES else _full(by_param[q])
            return frozenset(out)
        return substitute(s.returns), effects

    # --- aliases -----------------------------------------------------------------
    def grow(self, name, roots) -> bool:
        have = self.alias.setdefault(name, set())
        if roots - have:
            have |= roots
            return True
        return False

    def bind(self, target, shape) -> bool:
        """Let the names in ``target`` alias what a value of ``shape`` may; True if that grew."""
        if isinstance(target, ast.Name):
            return self.grow(target.id, _flat(shape))
        if isinstance(target, ast.Starred):
            return self.bind(target.value, shape)
        if not isinstance(target, (ast.Tuple, ast.List)):
            return False   # an element store (see the module docstring)
        elts = target.elts
        star = [i for i, t in enumerate(elts) if isinstance(t, ast.Starred)]
        if isinstance(shape, tuple) and (len(shape) == len(elts) if not star
                                         else len(star) == 1 and len(shape) >= len(elts) - 1):
            parts = shape
            if star:   # the starred name gets the middle items, as a list
                i, k = star[0], len(shape) - len(elts) + 1
                parts = shape[:i] + (shape[i:i + k],) + shape[i + k:]
            pairs = zip(elts, parts)
        else:
            item = _index(_flat(shape), 1)
            pairs = ((t, _pack(item) if isinstance(t, ast.Starred) else item) for t in elts)
        return any([self.bind(t, p) for t, p in pairs])

    def find_aliases(self) -> None:
        """Grow the alias sets to a fixed point (they only grow, so this ends)."""
        changed = True
        while changed:
            changed = False
            for n in self.nodes:
                if isinstance(n, ast.Assign):
                    for t in n.targets:
                        changed |= self.bind(t, self.shape(n.value))
                elif isinstance(n, (ast.AnnAssign, ast.NamedExpr)) and n.value is not None:
                    changed |= self.bind(n.target, self.shape(n.value))
                elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                    r = self.union([n.target, n.value])   # ``t += (p,)`` concatenates
                    changed |= self.grow(n.target.id, frozenset((p, _T) for p, k in r if k in _TUPLES))
                elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
                    changed |= self.bind(n.target, self.item(n.iter))
                elif isinstance(n, ast.withitem) and n.optional_vars is not None:
                    changed |= self.bind(n.optional_vars, _full(self.roots(n.context_expr)))
                elif isinstance(n, ast.Match):
                    r = _full(self.roots(n.subject))
                    for c in n.cases:
                        for p in ast.walk(c.pattern):   # capture names, ``**rest`` too
                            name = getattr(p, "name", None) or getattr(p, "rest", None)
                            if name:
                                changed |= self.grow(name, r)

    # --- reads and writes --------------------------------------------------------
    def escape(self, r) -> None:
        """Something the analysis does not follow: read and written."""
        self.read |= _names(r)
        self.written |= _names(r)

    def an_array(self, p) -> bool:
        """Whether parameter ``p`` is sure to be an array: stored into as ``p[i] = v``
        (no tuple is) and never rebound. Else ``p.shape[0]`` may be a namedtuple's
        field ``shape``, an array whose element it reads."""
        return p in self.stored and self.alias.get(p) == {(p, 0), (p, _P)}

    def run(self) -> Intents:
        self.find_aliases()
        for n in self.nodes:
            if isinstance(n, (ast.Subscript, ast.Attribute)) and not isinstance(n.ctx, ast.Load):
                self.written |= _names(self.roots(n.value))
                base = n.value
                while isinstance(base, (ast.Subscript, ast.Attribute)):
                    base = base.value
                if isinstance(base, ast.Name) and base.id not in self.local:
                    self.outside.add(base.id)   # ``G[i] = v``: an array held by a global
                if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name):
                    self.stored.add(n.value.id)
            elif isinstance(n, ast.Subscript) and _is_element(n):   # a view reads nothing yet
                r = self.roots(n)
                self.read |= {p for p, k in r if k != _M}
                self.metadata |= {p for p, k in r if k == _M}
            elif isinstance(n, ast.AugAssign):
                r = self.roots(n.target)
                self.read |= _names(r)
                for p, k in r if isinstance(n.target, ast.Name) else ():   # in place, if
                    if k == _A or k == 0:                                  # an array view
                        self.written.add(p)
                    elif type(k) is int or k == _E:   # p[i]: a number where p has as many
                        k = 64 if k == _E else k          # dimensions; an array in p: none
                        self.numbers[p] = min(k, self.numbers.get(p, k))
            elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):   # array items
                self.read |= {p for p, k in self.roots(n.iter) if k in (_A, _E) or type(k) is int}
            elif isinstance(n, ast.Assign) and any(isinstance(t, (ast.Tuple, ast.List))
                                                   for t in n.targets):   # a, b = t[0:2]:
                self.read |= {p for p, k in self.roots(n.value)           # its items read
                              if k in (_A, _E) or type(k) is int}
            elif isinstance(n, ast.Call):
                for r, mode in self.call(n)[1]:
                    if "r" in mode:
                        self.read |= _names(r)
                    if "w" in mode:
                        self.written |= _names(r)
            elif isinstance(n, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.escape(self.mentions(n))
            elif isinstance(n, (ast.Global, ast.Nonlocal)):
                self.escape(frozenset().union(*(self.alias.get(x, ()) for x in n.names)))
            elif isinstance(n, ast.withitem):
                self.escape(self.roots(n.context_expr))
            elif isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await, ast.Raise)):
                self.escape(self.union([c for c in ast.iter_child_nodes(n)
                                        if isinstance(c, ast.expr)]))
            elif isinstance(n, ast.Match):
                self.read |= _names(self.roots(n.subject))
        self.read |= {p for p in self.metadata if not self.an_array(p)}
        returns = _NONE
        for n in self.nodes:
            if isinstance(n, ast.Return) and n.value is not None:
                returns = _join(returns, self.shape(n.value))

        def mode(p, numbers=True):
            w, r = p in self.written or numbers and p in self.numbers, p in self.read
            return "rw" if w and r else "w" if w else "r"
        return Intents(self.positional, [mode(p) for p in self.positional],
                       (self.vararg, mode(self.vararg)) if self.vararg else None,
                       {p: mode(p) for p in self.kwonly}, returns, self.outside,
                       {p: (n, mode(p, False)) for p, n in self.numbers.items()
                        if p in self.positional and p not in self.written})


# py_func -> (Intents, the device functions it calls: ((dotted name, object), ...))
_done: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_busy = threading.local()   # functions under analysis in this thread


def analyze(py_func) -> Intents | None:
    """What ``py_func`` does to its parameters; None without source.

    Results are kept per function. A function met again while it is being
    analysed (recursion) counts as unknown there: every argument read and written.
    Where a device function it calls has been defined again since (a notebook
    cell run again), it is analysed again, and what either version does counts:
    numba keeps running the old code where it compiled the kernel before.
    """
    try:
        old = _done[py_func][0]
    except (KeyError, TypeError):
        old = None
    if old is not None and not stale(py_func):
        return old
    busy = _busy.__dict__.setdefault("ids", set())
    if id(py_func) in busy:
        return None
    fdef = _parse(py_func)
    if fdef is None:
        return None
    busy.add(id(py_func))
    try:
        analysis = _Analysis(py_func, fdef)
        result = analysis.run()
    finally:
        busy.discard(id(py_func))
    if old is not None:
        result = _either(old, result)
    try:
        _done[py_func] = (result, tuple(analysis.devices))
    except TypeError:
        pass
    return result


def stale(py_func, seen=None) -> bool:
    """Whether a device function ``py_func`` calls (or one those call) is no longer
    the one its analysis read."""
    try:
        _, devices = _done[py_func]
    except (KeyError, TypeError):
        return False
    seen = set() if seen is None else seen
    if id(py_func) in seen:
        return False
    seen.add(id(py_func))
    return any(resolve_dotted(py_func, dotted, quick=True) is not obj or
               stale(obj.py_func, seen) for dotted, obj in devices)


def calls_device_functions(py_func) -> bool:
    """Whether the analysis of ``py_func`` resolved calls of device functions."""
    try:
        return bool(_done[py_func][1])
    except (KeyError, TypeError):
        return False


def _either(a: Intents, b: Intents) -> Intents:
    """What a function does in either of two versions (the same parameters)."""
    if a.params != b.params or (a.vararg is None) != (b.vararg is None):
        return b
    return Intents(b.params, [_union(x, y) for x, y in zip(a.modes, b.modes)],
                   b.vararg and (b.vararg[0], _union(a.vararg[1], b.vararg[1])),
                   {k: _union(a.kwonly.get(k, m), m) for k, m in b.kwonly.items()},
                   _join(a.returns, b.returns), a.outside | b.outside)


def _union(x: str, y: str) -> str:
    both = set(x) | set(y)
    return "rw" if both >= {"r", "w"} else x


def infer_intents(py_func, arrays=None) -> list[str] | None:
    """Per positional parameter: ``"r"``, ``"w"`` or ``"rw"``; None without source.
    ``arrays``: per argument, ``(ndim, dtype)`` of an array or None (``modes_for``)."""
    result = analyze(py_func)
    if result is None:
        return None
    return list(result.modes) if arrays is None else result.modes_for(arrays)


def writes_outside(py_func) -> frozenset:
    """The global or closure names ``py_func`` stores into (``G[i] = v``), itself or
    through the device functions it calls, and those that hold device arrays it
    names at all (``H = G; H[i] = v``, ``cuda.atomic.add(G, i, v)``, ``dev(G)``: a
    device array a kernel reaches by name is memory it is not given, read or
    written): empty without source for the first."""
    result = analyze(py_func)
    return (frozenset() if result is None else result.outside) | reached_globals(py_func)


def vararg_intent(py_func) -> str | None:
    """The intent of every element of ``*args``; None when there is no ``*args``."""
    params = inspect.signature(py_func, follow_wrapped=False).parameters.values()
    if not any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    result = analyze(py_func)
    return "rw" if result is None else result.vararg[1]

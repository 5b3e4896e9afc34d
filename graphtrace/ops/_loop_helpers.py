"""What the functions of the program's a block's code calls do with a slot the
body changed, for ``_loop_state.py`` and ``_loop_after.py``.

A body hands what it changes to helpers (``step(body, x, k)``, ``st.step(body)``),
or a helper reaches it by its own global or closure name (``go(body, x)``
launching with ``K``): ``_callees`` tells, for a slot, the helpers a call of the
body makes that reach it and the paths they reach it by (the parameter a call
fills, a global, a closure's cell, the object a bound method binds); and on it
stand whether a helper's work takes it (``_hands_on``), indexes, sizes or
decides by it (``_handed``), returns it to the body's work (``_helper_returns``,
``_helper_picks``), and the lines of the body that record work (``_work``).
``LoopState`` (``_loop_state.py``) is a ``HelperUses``.
"""
from __future__ import annotations

import types

from ..chains import MISSING
from ..errors import ArgumentError
from ..owners import _attr
from ..scalar import Scalar
from ..tree import leaves
from ..values import _is_number
from ._loop_code import _Region
from ._loop_held import (_own_function, _region, binding, defaulted, graph_code, reached,
                         recorded_lines)
from ._loop_names import _lines, _named
from ._loop_paths import _WHOLE, _below, _found, _reads, _resolve, blind_message


class HelperUses:
    """What the helpers a block's code calls do with a slot (a mixin of
    ``LoopState``: ``scope``, ``now``, ``owners``, ``helpers`` and ``_code()``
    are its)."""

    def _stores_first(self, callee: tuple, key, rest: tuple) -> bool:
        """Whether the function of the program's at ``callee`` stores the slot at
        ``rest`` within what its parameter ``key`` (a position or a keyword) holds
        before it reads it, or does not name it."""
        fn = _resolve(self.scope, callee)
        bound = _method(fn)
        fn = binding(fn)[0] if bound or graph_code(fn)[0] is not None else fn
        if not isinstance(fn, types.FunctionType) or key is None:
            return False
        code = fn.__code__
        names = code.co_varnames[bound:code.co_argcount + code.co_kwonlyargcount]
        name = names[key] if type(key) is int and key < len(names) else key
        if name not in names:
            return False
        return not _region(self, fn).carried((name,) + rest)

    def _work(self, region, regions) -> set:
        """The lines of the body's code that record work: launches and calls
        where some was recorded, and calls of functions of the program's that
        recorded some."""
        sources = recorded_lines(regions)
        file = self._code()[0].co_filename
        out = {line for f, line in sources if f == file} | region.launches
        for line, callee, _, _ in region.passes:
            fn = binding(_resolve(self.scope, callee))[0]   # (a bound method's, a partial's)
            if fn is not None and sources & self._lines_of(fn):
                out.add(line)
        return out

    def _took(self, region, path: tuple, values: list, read, recorded: dict,
              regions=()) -> bool:
        """Whether the body's work took ``values``, what the body stored in the
        slot at ``path`` before using it (``t += dt`` then ``add(x, t)``): a node
        was recorded with one on a line whose call takes the slot; or, for a
        number not an int (an int may be a cached object), with that very object,
        where a call of the body takes the slot (``step(body, x, t)``) or where a
        helper the body calls sets it from itself (``global T; T += dt``)."""
        file = self._code()[0].co_filename
        if read is True and any(region.calls_with(line, path) for v in values
                                for f, line in recorded.get((type(v), v), ()) if f == file):
            return True
        if read is not False and self._handed(region, path, values, regions, recorded, read):
            return True
        if not any((_SAME, id(v)) in recorded for v in values if type(v) is not int and type(v) is not bool):
            return False
        return region.calls_with(None, path) if read is True else \
            read is None and self._helper_carries(path)

    def _hands_on(self, region, path: tuple, read, regions) -> bool:
        """Whether the body's work takes what is computed from the slot at ``path``
        however (``add(x, k * 2)``, ``add(x, float(k))``; not a clamp,
        ``min(k, 3)``): a call on a line where some of the body's work was
        recorded takes it, in the body's code, read first there (also ``add(x, K)``
        after ``bump()`` set the global ``K``), or in a function of the program's
        the body calls, which reads it first by the parameter a call of the body
        fills with it (``step(body, x, float(k))``) or by its own name for it (a
        global, a closure's cell: ``go(body, x)`` launching with ``K``)."""
        sources = recorded_lines(regions)
        file = self._code()[0].co_filename
        if read is True and region.takes_on({line for f, line in sources if f == file}, path):
            return True
        for _, _, fn, own, held in self._callees(region, path, sources, clamps=False):
            lines = {line for f, line in sources if f == fn.__code__.co_filename}
            if any(own.carried(q) is True and own.takes_on(lines, q) for q in held):
                return True
        return False

    def _callees(self, region, path: tuple, sources, clamps: bool = True):
        """``(line, the callee's path, function, its _Region, the paths it reads the
        slot at path by)`` of ``_reach``."""
        for line, callee, fn, own, held, _ in self._reach(region, path, sources, clamps):
            yield line, callee, fn, own, held

    def _reach(self, region, path: tuple, sources, clamps: bool = True):
        """``(line, the callee's path, function, its _Region, the paths it reads the
        slot at path by, whether what it returns is what the call returns)`` for
        the functions of the program's that calls of the body make (on ``line``,
        of the callee at that path), and those their calls make, ``_DEPTH``
        helpers deep (``sweep(body, st)`` calling ``step(body, st)``: the line
        and the callee of the body's call), that recorded some of its work (at
        ``sources``; all of them where that is None) and reach the slot: by the
        parameters a call fills with what it reads from the slot (``clamps``
        False: not through ``min(k, 3)``), by the object a method is called on
        (``st.step(body)``: its self), or by the function's own name for it (a
        global, a global of its module that the body reaches as the module's
        attribute, ``pp.T``, a closure's cell, a default of a parameter the call
        leaves out, an object on its way that it holds)."""
        calls, _ = self._walk(region, path, clamps)
        for line, callee, fn, own, held, back in calls:
            if sources is None or sources & self._lines_of(fn):
                yield line, callee, fn, own, held, back

    def _walk(self, region, path: tuple, clamps: bool) -> tuple:
        """``(_reach`` of all the helpers, ``_calls_of``'s blind calls``)``, once a
        region, slot and ``clamps`` for the block (each rule asks them)."""
        memo = self.__dict__.setdefault("_walks", {})   # (region: held, not by id)
        hit = memo.get((region, path, clamps))
        if hit is None:
            unknown: list = []
            hit = memo[region, path, clamps] = (list(self._calls_of(
                region, self.scope, (path,), path, None, clamps, 0, None, True, unknown)),
                unknown)
        return hit

    def _named_of(self, fn) -> dict:
        """``_named(fn)``, once a function for the block."""
        memo = self.__dict__.setdefault("_fn_names", {})
        hit = memo.get(fn)
        if hit is None:
            hit = memo[fn] = _named(fn)
        return hit

    def _lines_of(self, fn) -> set:
        """``_lines(fn, _DEPTH)``, once a function for the block."""
        memo = self.__dict__.setdefault("_fn_lines", {})
        hit = memo.get(fn)
        if hit is None:
            hit = memo[fn] = _lines(fn, _DEPTH)
        return hit

    def _calls_of(self, region, scope: dict, within, path: tuple, sources, clamps: bool,
                  depth: int, top, back: bool, blind=None):
        """``_reach`` of the calls of ``region`` (its names holding ``scope``; the
        slot reached by the paths ``within``; ``top``: the body's line and callee
        where ``region`` is a helper's, ``back`` whether what it returns is what
        that call returns); ``blind``, a list, is given the ``(file, line)`` of
        each call a helper reaching the slot makes of a function its parameter
        holds that graphtrace cannot tell (``sweep(body, st, lambda b, s: ...)``
        calling ``step(body, st)``)."""
        for line, callee, args, unclamped in region.passes:
            args = args if clamps else unclamped
            value = _resolve(scope, callee)
            fn, bound, skip = binding(value)   # (a bound method, a partial: what they bind)
            if fn is None or depth and not _own_function(fn):
                continue
            code = fn.__code__
            names = code.co_varnames[skip:code.co_argcount + code.co_kwonlyargcount]
            held = [q for p in within for q in _by_parameter(args, p, names)]
            if _method(value) and 1 < len(callee):   # st.step(body): its self
                held += [(code.co_varnames[0],) + p[len(callee) - 1:] for p in within
                         if p[:len(callee) - 1] == callee[:-1]]
            held = list(dict.fromkeys(held + self._by_name(fn, bound, path, callee, args,
                                                            names)))
            here = (line, callee) if top is None else top
            mine = back if top is None else back and _reads(region.returned(), callee)
            own = _region(self, fn)   # (once a code)
            if held and (sources is None or sources & self._lines_of(fn)):
                yield (*here, fn, own, held, mine)
            if depth + 1 < _DEPTH or blind is not None and held:
                inner = {**self._named_of(fn), **_defaulted(fn), **_known(scope, args, names),
                         **bound}
            if blind is not None and held:
                params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
                blind += [(code.co_filename, at) for at, called, _, _ in own.passes
                          if len(called) == 1 and called[0] in params and
                          _resolve(inner, called) is MISSING]
            if depth + 1 < _DEPTH:   # sweep(body, st) calling step(body, st) there
                yield from self._calls_of(own, inner, held, path, sources, clamps, depth + 1,
                                          here, mine, blind)

    def _by_name(self, fn, bound: dict, path: tuple, callee: tuple, args: dict,
                 names: tuple) -> list:
        """The paths by which ``fn`` reaches the slot at ``path`` by its own names
        (``_reach``): a global or a closure's cell holding it, an object on its
        way it holds, its module's global the body reaches as the module's
        attribute, its parameter's default that the call leaves out."""
        held = [(n,) + path[1:] for n, v in self._named_of(fn).items() if v is self.now.get(
            path[0], MISSING) and (n == path[0] or path[0] == f"{callee[0]}.<{n}>")]
        held += reached(fn, bound, path, self.now, self.owners)   # (cur = c.cur: self)
        held += [(path[n][1],) + path[n + 1:] for n in range(1, len(path))   # pp.go(body):
                 if path[n][0] == "." and _attr(_resolve(   # its module's global
                     self.now, path[:n]), "__dict__") is fn.__globals__][:1]
        owner, param = self.owners.get(path[0], (None, None))
        if owner is fn and defaulted(path[0]) and param not in bound and \
                None not in args and not any(
                    param == (k if type(k) is str else names[k] if k < len(names) else None)
                    for k in args):   # step(body, bufs) with def step(body, bufs, _st={...})
            held.append((param,) + path[1:])
        return held

    def _handed(self, region, path: tuple, values: list, regions, recorded: dict,
                read=True) -> bool:
        """Whether a call of the body hands the slot at ``path``, after the body
        stored it, to a function of the program's that recorded some of the
        body's work and took it there (or, ``read`` None, the body does not name
        it: one that reads it before storing it by its own name): with one of
        ``values`` (``k += 1`` then ``step(body, x, k)``), or by indexing or
        sizing with the parameter it fills (``bufs[k % 2]`` in the helper), or
        deciding by it which of its work runs, or how much (``if k % 2:``,
        ``for _ in range(k):`` there)."""
        sources = recorded_lines(regions)
        for _, _, fn, own, held in self._callees(region, path, sources):
            if read is not True:
                held = [q for q in held if own.carried(q) is True]
            inside = sources & self._lines_of(fn)
            if read is True and any(src in inside for v in values
                                    for src in recorded.get((type(v), v), ())):
                return True
            work = {line for _, line in inside} | own.launches   # (step(body, k): if k % 2
            named = self._named_of(fn)                           # there, or range(k); or
            for line, callee, _, _ in own.passes:                # a helper it calls)
                inner = binding(_resolve(named, callee))[0]
                if inner is not None and sources & self._lines_of(inner):
                    work.add(line)
            if any(own.indexes_with(q) or own.sizes_with(q) or own.decides_with(q, work)
                   for q in held):
                return True
        return False

    def _refuse_blind(self, region, paths: list, what: str, source) -> None:
        """Refuse a body that changes the slots at ``paths`` (not stored before it
        reads them) and calls a function graphtrace cannot tell, which may read
        them (``_blind``), at the line of that call."""
        for p in paths:
            at = self._blind(region, p)
            if at is not None:
                raise ArgumentError(blind_message(p, what, source, at), at)

    def _blind(self, region, path: tuple):
        """``(file, line)`` of a call of the body, or of a helper it calls that
        reaches the slot at ``path`` (``_callees``), of a function the code cannot
        tell (``_Region.blind``: a lambda made there, one a call returns; a
        method of an object it computes, handed what the slot is in), else None."""
        file = self._code()[0].co_filename
        for line, reads in region.blind:
            if reads is None or _below(reads, path) is not None:
                return file, line
        calls, unknown = self._walk(region, path, True)   # (unknown: a helper calling
        for _, _, fn, own, held, _ in calls:                # what its parameter holds)
            for line, reads in own.blind:
                if reads is None or any(_below(reads, q) is not None for q in held):
                    return fn.__code__.co_filename, line
        return unknown[0] if unknown else None

    def _helper_picks(self, region, path: tuple, regions) -> bool:
        """Whether a function of the program's that the body calls, and whose result
        the body's work takes (``src, dst = next_pair()`` then ``shift(src, dst)``),
        reads the slot at ``path``, its own global or closure's, before storing it,
        and indexes or sizes by it (``global K; K += 1; return BUFS[K % 2], ...``)."""
        fn, name = self.owners.get(path[0], (None, None))
        if fn is None:
            return False
        lines = self._work(region, regions)
        if not any(region.takes_on(lines, (n,)) for n, v in self.scope.items()
                   if (graph_code(v)[0] or _attr(v, "__func__", v)) is fn):
            return False
        own = _region(self, fn)
        held = (name,) + path[1:]
        return own.carried(held) is True and (own.indexes_with(held) or own.sizes_with(held))

    def _helper_returns(self, region, path: tuple, regions) -> bool:
        """Whether a function of the program's that the body calls, and whose result
        its work takes (``add(x, now())``) or decides by which work runs (``if
        cur() % 2:``), returns what it reads of the slot at ``path`` before storing
        it, by its own name for it (``return G``, ``return Ctr.t``, ``return
        cls.t``, ``return self.t``; a bound method's or a partial's, ``cur = c.cur``
        with ``return self.k``): changed by the body
        (``Ctr.t += 0.5``) or by a helper, each iteration would hand the work
        another number."""
        lines = None
        for _, callee, _, own, held, back in self._reach(region, path, None):
            if back and any(own.carried(q) is True and _reads(own.returned(), q) for q in held):
                lines = self._work(region, regions) if lines is None else lines
                if region.takes_on(lines, callee) or region.decides_with(callee, lines):
                    return True
        return False

    def _helper_carries(self, path: tuple) -> bool:
        """Whether the helper the slot at ``path`` was reached through reads it
        before storing it (``T += dt`` in ``def bump(): global T``)."""
        fn, name = self.owners.get(path[0], (None, None))
        return fn is not None and \
            _Region((fn.__code__, -1, 1 << 62), {}).carried((name,) + path[1:]) is True


_DEPTH = 3   # helpers followed: those the body calls, theirs and theirs


def _method(v) -> bool:
    """Whether ``v`` is a method bound to its object: a bound method, or a
    ``@gt.graph`` method bound to its instance (``st.step``)."""
    return type(v) is types.MethodType or graph_code(v)[1] is not None

_SAME = "is"   # _recorded_numbers' key of a number by its identity


def _recorded_numbers(regions) -> dict:
    """The numbers the body's nodes were recorded with (their arguments: a grid or
    block size is left out, a number too common to tell) -> the sources of those
    nodes: by ``(type, value)`` and by ``(_SAME, id)``, and the dynamic numbers of
    the call they were recorded with by ``(Scalar, id)``."""
    out: dict = {}
    for r in regions:
        for n in r.walk():
            for v in leaves(n.args):
                if type(v) is Scalar:
                    out.setdefault((Scalar, id(v)), set()).add(n.source)
                elif _is_number(v):
                    out.setdefault((type(v), v), set()).add(n.source)
                    out.setdefault((_SAME, id(v)), set()).add(n.source)
    return out


def _by_parameter(args: dict, path: tuple, names: tuple) -> list:
    """The parameters (with the rest of the path) of a callee with ``names`` that a
    call's ``args`` (``{parameter: what it reads}``) fill with what they read of
    the slot at ``path``; where the keywords are unknown, each one."""
    below = {key: _below(reads, path) for key, reads in args.items()}
    if None in below and below[None] is not None:   # keywords unknown: any
        return [(p,) for p in names]
    return [((key if type(key) is str else names[key]),) + rest
            for key, rest in below.items() if rest is not None and
            (type(key) is str or key < len(names))]


def _known(scope: dict, args: dict, names: tuple) -> dict:
    """parameter -> what the argument a call fills it with holds, where that is one
    name or path of ``scope`` (``sweep(body, st, step)``: what ``step`` holds), to
    tell what the callee's own calls call (``step(body, st)`` there)."""
    out = {}
    for key, reads in args.items():
        paths = [q for q in reads if q[-1] != _WHOLE]
        name = key if type(key) is str else names[key] if \
            type(key) is int and key < len(names) else None
        if name is not None and len(paths) == 1:
            v = _found(scope, paths[0])
            if v is not MISSING:
                out[name] = v
    return out


def _kernel_numbers(regions) -> dict:
    """The numbers the kernels of the body were recorded with (``(type, value)``)
    -> the sources of those kernels: a counter only reported whose value is one
    of them is refused, as graphtrace cannot tell that the kernel did not take
    it from the counter (a memset's value, a condition's number, do not count)."""
    out: dict = {}
    for r in regions:
        for n in r.walk():
            if n.kind == "kernel":
                for v in leaves(n.args):
                    if type(v) is not Scalar and _is_number(v):
                        out.setdefault((type(v), v), set()).add(n.source)
    return out


def _defaulted(fn) -> dict:
    """parameter -> its default, of ``fn``."""
    code, held = fn.__code__, fn.__defaults__ or ()
    out = dict(zip(code.co_varnames[code.co_argcount - len(held):code.co_argcount], held))
    out.update(fn.__kwdefaults__ or {})
    return out

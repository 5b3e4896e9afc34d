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
from ..owners import _attr
from ..scalar import Scalar
from ..tree import leaves
from ..values import _is_number
from ._loop_code import _Region
from ._loop_held import _region, binding, reached, recorded_lines
from ._loop_names import _lines, _named
from ._loop_paths import _below, _reads, _resolve


class HelperUses:
    """What the helpers a block's code calls do with a slot (a mixin of
    ``LoopState``: ``scope``, ``now``, ``owners``, ``helpers`` and ``_code()``
    are its)."""

    def _stores_first(self, callee: tuple, key, rest: tuple) -> bool:
        """Whether the function of the program's at ``callee`` stores the slot at
        ``rest`` within what its parameter ``key`` (a position or a keyword) holds
        before it reads it, or does not name it."""
        fn = _resolve(self.scope, callee)
        bound = isinstance(fn, types.MethodType)
        fn = _attr(fn, "__func__", fn)
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
            if fn is not None and sources & _lines(fn):
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
        if read is True and self._handed(region, path, values, regions, recorded):
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
        slot at path by)``
        for the functions of the program's that calls of the body make (on
        ``line``) and that recorded some of its work (at ``sources``; all of
        them where that is None): the parameters the call fills with what it
        reads from the slot (``clamps`` False: not through ``min(k, 3)``), and
        the global or closure name it holds it by (a global of its module that
        the body reaches as the module's attribute: ``pp.T``)."""
        for line, callee, args, unclamped in region.passes:
            args = args if clamps else unclamped
            value = _resolve(self.scope, callee)
            fn, bound, skip = binding(value)   # (a bound method, a partial: what they bind)
            if fn is None or sources is not None and not sources & _lines(fn):
                continue
            code = fn.__code__
            names = code.co_varnames[skip:code.co_argcount + code.co_kwonlyargcount]
            below = {key: _below(reads, path) for key, reads in args.items()}
            if None in below and below[None] is not None:   # keywords unknown: any
                held = [(p,) for p in names]
            else:
                held = [((key if type(key) is str else names[key]),) + rest
                        for key, rest in below.items() if rest is not None and
                        (type(key) is str or key < len(names))]
            held += [(n,) + path[1:] for n, v in _named(fn).items() if v is self.now.get(
                path[0], MISSING) and (n == path[0] or path[0] == f"{callee[0]}.<{n}>")]
            held += reached(fn, bound, path, self.now, self.owners)   # (cur = c.cur: self)
            if type(value) is types.MethodType and 1 < len(callee) and \
                    path[:len(callee) - 1] == callee[:-1]:   # st.step(body): its self
                held.append((code.co_varnames[0],) + path[len(callee) - 1:])
            held += [(path[n][1],) + path[n + 1:] for n in range(1, len(path))   # pp.go(body):
                     if path[n][0] == "." and _attr(_resolve(   # its module's global
                         self.now, path[:n]), "__dict__") is fn.__globals__][:1]
            if held:
                yield line, callee, fn, _region(self, fn), held   # (once a code)

    def _handed(self, region, path: tuple, values: list, regions, recorded: dict) -> bool:
        """Whether a call of the body hands the slot at ``path``, after the body
        stored it, to a function of the program's that recorded some of the
        body's work and took it there: with one of ``values`` (``k += 1`` then
        ``step(body, x, k)``), or by indexing or sizing with the parameter it
        fills (``bufs[k % 2]`` in the helper), or deciding by it which of its work
        runs, or how much (``if k % 2:``, ``for _ in range(k):`` there)."""
        sources = recorded_lines(regions)
        for _, _, fn, own, held in self._callees(region, path, sources):
            inside = sources & _lines(fn)
            if any(src in inside for v in values for src in recorded.get((type(v), v), ())):
                return True
            work = {line for _, line in inside} | own.launches   # (step(body, k): if k % 2
            if any(own.indexes_with(q) or own.sizes_with(q) or   # there, or range(k))
                   own.decides_with(q, work) for q in held):
                return True
        return False

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
                   if _attr(v, "__func__", v) is fn):
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
        for _, callee, _, own, held in self._callees(region, path, None):
            if any(own.carried(q) is True and _reads(own.returned(), q) for q in held):
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

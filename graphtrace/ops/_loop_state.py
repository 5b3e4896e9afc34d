"""What a while loop's body changes in the Python state its next iteration reads.

Python runs a loop's body once, when it is recorded; the device runs that
recording every iteration. A body that changes what its own code reads next
time (``u, v = v, u``; ``bufs[0], bufs[1] = bufs[1], bufs[0]``;
``self.u, self.v = self.v, self.u``; ``k += 1`` with ``bufs[k % 2]``; ``t += dt``
handed to a kernel) would, run eagerly, work on other arrays or numbers in
each iteration, where the graph repeats the first. Such a body is refused.

``LoopState`` takes, when the body is entered, the slots it may read: the names
of the user's frame (for ``body=fn``, its closure, defaults and bound object),
the globals the code names, the closures and globals of the functions it calls
by name, and the items and attributes of the lists, tuples, deques, dicts (and their
subclasses that read as they do: ``Counter``, ``defaultdict``), sets (their
items as a whole) and objects of the program's own these hold, ``_DEPTH`` levels deep, where they
hold arrays or numbers (a host array of numbers, such as indices or a time
``t[0]``, by its values up to ``_BY_VALUE`` bytes, by a digest of them up to
``_BY_DIGEST``, and a slice, by its values), and the lengths of those containers, and the
strings and bytes they hold (by their values, and their lengths), and the
Enum members and None (by their identity: None set to an array counts only
where it decides the body's control flow). ``refuse``
compares them when the body is closed:

- an array slot changed (another array, not the same view made again) where
  the old or the new one is the trace's, which the body reads before it
  stores it: a name, an attribute or an item by a key the code names
  (``idx[0]``, ``d["k"]``) that its code loads first (``_Region``); for another
  item, or a slot the code never names (a helper changed it), where the new
  array was held elsewhere when the body began (a swap, a rotation); not one
  the code reads only within what it hands whole to functions of the
  program's that each set it before reading it or do not name it
  (``finish(st)`` with ``st.result = st.v``);
- a number changed that reached the recorded work: the old value is among the
  body's recorded numbers (``t += dt`` handed to a kernel, ``t[0]`` of a small
  host array; a dynamic number
  of the call, ``add(a, p)`` then ``p, q = q, p``, by its identity), or the code
  indexes with it, read first: a subscript's key loads it (``bufs[k % 2]``,
  ``a[k * 4:(k + 1) * 4]``; ``bufs[idx[0]]``: the item ``idx[0]``, not
  ``idx[1]``), or a name the body set from it first (``lo = k * 4``; a loop's
  or a comprehension's target, ``[a[o:o + 2] for o in offs]``); or it
  sizes a temporary the body makes (``body.zeros(m)``), one of whose sizes is
  its old value; an item within a container the code reads whole counts as
  read there (``body.zeros(shape)`` then ``shape[0] += 1``; ``k[grid, 4, body]``;
  ``body.launch(k, *cfg, x)``; ``a[slice(*lims)]``). A counter only reported
  (``n += 1``, ``log.debug(n)``; a subscript of text, ``PHASES[k % 3]``, picks
  no work) changes nothing on the device;
- the same where the body changes the number before its work takes it
  (``t += dt`` then ``add(x, t)``; ``k += 1`` then ``bufs[k % 2]``): its new
  value is among the numbers of a node that a call of the body taking it
  issued (or, not an int, the very object: one a helper the body calls sets
  from itself, ``global T; T += dt``), or it indexes or sizes by its new value;
  a number clamped (``blocks = min(blocks, 1)``) stays what it became. A call
  handing it to a function of the program's that records some of the body's
  work (``k += 1`` then ``step(body, x, k)``) takes it where that work holds its
  new value or the function indexes or sizes by the parameter it fills
  (``bufs[k % 2]`` there); a helper recording nothing (``log(f"it {k}")``) not.
  A number computed from it (``add(x, float(k))``, ``add(x, k * 2)``; not a
  clamp, ``min(k, 3)``) is taken where a call on a line of the body's work
  hands it on, in the body's code (also a global a helper changes,
  ``bump()`` then ``add(x, K)``), or in a helper the body calls that reads it
  by the parameter a call of the body fills with it (``step(body, x, k * 2)``)
  or by its own global or closure name (``go(body, x)`` launching with ``K``);
- a container's length changed (``lst.append(0)``) where the body sizes or
  indexes by it or its work takes it so (``body.zeros(len(lst))``,
  ``a[:len(lst)]``, ``k[len(lst), 32, body]``, ``add(x, len(lst))``);
- a slot changed that decides the body's control flow where that leads to
  lines recording work (launches, calls that recorded some): a for loop's or
  a comprehension's iterable by its length (``for _ in lst`` then
  ``lst.append(1)``), or a number it reads (``range(k)``), and what an if or
  a while test reads (``if k == 0``, ``while j < k``; ``k += 1``;
  ``if mode == "a"`` with ``mode = "b"``).
"""
from __future__ import annotations

import contextlib
import dis
import enum
import inspect
import sys
import types
import zlib
from collections import deque
from functools import partial

import numpy as np

from ..buffers import as_buffer, is_array
from ..errors import ArgumentError, user_frame_object
from ..chains import MISSING
from ..names import _global_names
from ..owners import _attributes, own_object
from ..scalar import Scalar
from ..tree import leaves
from ..values import _is_number
from ._loop_paths import (_ITEMS, _LEN, _MAX_ITEMS, _WHOLE, _message, _reads, _resolve, _text,
                          _within)

_DEPTH = 4          # names, then three levels of containers and objects
_PER_ROOT = 1024    # nor more slots than this under one name
_BY_VALUE = 4096    # a host array of this many bytes at most: compared by its values,
_BY_DIGEST = 1 << 26   # one of this many by a digest of them
_CONTEXTLIB = contextlib.__file__

_LOADS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_NAME", "LOAD_GLOBAL", "LOAD_DEREF",
                    "LOAD_CLASSDEREF", "LOAD_FAST_LOAD_FAST", "LOAD_CLOSURE",
                    "LOAD_FROM_DICT_OR_DEREF", "LOAD_FROM_DICT_OR_GLOBALS", "LOAD_FAST_BORROW",
                    "LOAD_FAST_BORROW_LOAD_FAST_BORROW"})
# (an inlined comprehension's LOAD_FAST_AND_CLEAR saves a name and puts it back: no read)
_STORES = frozenset({"STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF",
                     "STORE_FAST_STORE_FAST", "DELETE_FAST", "DELETE_NAME", "DELETE_GLOBAL",
                     "DELETE_DEREF"})
_ATTR_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR"})
_ATTR_STORES = frozenset({"STORE_ATTR", "DELETE_ATTR"})
_SUBSCRIPTS = {"BINARY_SUBSCR": 2, "BINARY_SLICE": 3}   # -> the values each takes
_ITEM_STORES = frozenset({"STORE_SUBSCR", "DELETE_SUBSCR"})
_CONSTS = frozenset({"LOAD_CONST", "LOAD_SMALL_INT"})
_CALLS = {"PRECALL": 0, "CALL": 0, "CALL_KW": 1}   # -> values beyond the arguments
_MAKERS = frozenset({"empty", "zeros"})   # s.empty(n), body.zeros((m, 4), np.float32)


def _indices(v) -> bool:
    """A small host array of numbers (indices the body picks arrays by, a time
    ``t[0]`` or ``t[()]`` it hands a kernel, ``_BY_VALUE`` bytes at most):
    compared by its values."""
    return type(v) is np.ndarray and v.nbytes <= _BY_VALUE and v.dtype.kind in "iubfc"


def _contents(v):
    """What a host array of numbers holds: its bytes where it is small
    (``_indices``), a digest of them up to ``_BY_DIGEST`` bytes (told changed,
    not which values), else None (not watched)."""
    if _indices(v):
        return v.tobytes()
    if type(v) is np.ndarray and v.nbytes <= _BY_DIGEST and v.dtype.kind in "iubfc":
        return ("crc32", zlib.crc32(np.ascontiguousarray(v).view(np.uint8)))
    return None


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
    inner = getattr(body, "fn", None)   # a @gt.graph function as the body: its code
    if type(body).__module__.startswith("graphtrace") and isinstance(inner, types.FunctionType):
        return inner, None, {}
    if isinstance(body, types.FunctionType):
        inner = inspect.unwrap(body)   # a decorator's wrapper (functools.wraps): the body's
        return (inner if isinstance(inner, types.FunctionType) else body), None, {}
    call = getattr(type(body), "__call__", None)
    if isinstance(call, types.FunctionType):   # an object of the program's own
        return call, body, {}
    return None, None, {}


def _user_frame():
    """The user's frame the block is written in: past contextlib's frames and the
    generator of a ``@contextmanager`` wrapping the block."""
    f = user_frame_object()
    while f is not None and (f.f_code.co_filename == _CONTEXTLIB or (
            f.f_code.co_flags & inspect.CO_GENERATOR and f.f_back is not None and
            f.f_back.f_code.co_filename == _CONTEXTLIB)):
        f = f.f_back
    return f


def _names(code, ops) -> list:
    out = []
    for ins in dis.get_instructions(code):
        if ins.opname in ops:
            out += ins.argval if isinstance(ins.argval, tuple) else [ins.argval]
    return out


def _helper_roots(fn, name: str, out: dict, owners: dict) -> None:
    """The closure cells and the globals of a function the body calls by ``name``
    (``owners``: root -> (the function, its name there))."""
    fn = getattr(fn, "__func__", fn)
    if not isinstance(fn, types.FunctionType):
        return
    code = fn.__code__
    for cell_name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            v = cell.cell_contents
        except ValueError:   # a cell not yet filled
            continue
        if not any(v is x for x in out.values()):   # one the body's names hold: once
            out.setdefault(f"{name}.<{cell_name}>", v)
            owners.setdefault(f"{name}.<{cell_name}>", (fn, cell_name))
    for g in _global_names(code):
        if g in fn.__globals__:
            out.setdefault(g, fn.__globals__[g])
            owners.setdefault(g, (fn, g))


class LoopState:
    """The slots a loop body may read, taken when it is entered (``body``: the
    ``body=`` callable, or None for a ``with`` block; ``made``: how many
    temporaries the trace had made then)."""

    def __init__(self, body=None, made: int = 0):
        self.frame, self.fn, self.bound, self.extra = None, None, None, {}
        self.made = made
        self.owners: dict = {}   # a helper's root -> (the helper, its name there)
        self.now: dict = {}      # the roots when the body is closed
        self.helpers: dict = {}  # a helper's code -> its _Region
        if body is not None:
            self.fn, self.bound, self.extra = _function(body)
        if self.fn is None:
            self.frame = _user_frame()
            self.entered_at = self.frame.f_lasti if self.frame is not None else -1
        self.scope = self._roots()   # what the names held when the body began
        self.before = self._snapshot(self.scope)

    def _code(self) -> tuple:
        if self.fn is not None:
            return self.fn.__code__, -1, 1 << 62
        return self.frame.f_code, self.entered_at, self.frame.f_lasti

    def _roots(self) -> dict:
        out: dict = {}
        if self.fn is not None:
            code, fn = self.fn.__code__, self.fn
            for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
                try:
                    out[name] = cell.cell_contents
                except ValueError:
                    continue
            params = code.co_varnames[:code.co_argcount]
            if self.bound is not None and params:
                out[params[0]] = self.bound
            for name, v in zip(params[len(params) - len(fn.__defaults__ or ()):],
                               fn.__defaults__ or ()):
                out[name] = v
            out.update(self.extra)
            scope = fn.__globals__
        elif self.frame is not None:
            code, scope = self.frame.f_code, self.frame.f_globals
            out.update(self.frame.f_locals)
        else:
            return out
        for name in _global_names(code):
            if name in scope:
                out.setdefault(name, scope[name])
        for name in _names(code, _LOADS):   # helpers the body calls: what they hold
            v = out.get(name)
            if type(v) in (types.FunctionType, types.MethodType):   # (type: a weak
                _helper_roots(v, name, out, self.owners)            # proxy's may be dead)
            elif type(v).__module__.startswith("graphtrace") and \
                    isinstance(getattr(v, "fn", None), types.FunctionType):
                _helper_roots(v.fn, name, out, self.owners)   # a @gt.graph function inline
        return out

    def _snapshot(self, roots: dict) -> dict:
        out: dict = {}
        for name, v in roots.items():
            out.update(_slots(v, name))
        return out

    def refuse(self, t, regions, what: str, source) -> None:
        """Refuse the body (its recorded ``regions``) if its Python changed a slot
        the next iteration reads (the module's rules)."""
        if self.fn is None and self.frame is None:
            return
        self.now = self._roots()   # what the names hold now
        after = self._snapshot(self.now)
        changed = [p for p, old in self.before.items() if p in after and
                   _changed(old, after[p])]
        if not changed:
            return
        region = _Region(self._code(), self.scope)
        held, reads = {}, {}
        for p, (v, _, where) in self.before.items():
            if v is not None:   # (an array's or a number's other slots: a swap)
                held.setdefault(id(v), []).append(p)
            if where is not None:   # one slot reached by several names: read as any
                reads.setdefault(where, set()).add(self._carried(region, p))   # of them is
        recorded = _recorded_numbers(regions)
        sizes = {d for tmp in t.temporaries[self.made:] for d in tmp.shape}   # the body's
        hits, work = [], self._work(region, regions)
        for p in changed:
            (old, old_bytes, where), (new, new_bytes, _) = self.before[p], after[p]
            read = self._carried(region, p)
            both = reads.get(where, ())   # (st = self.state; st.result = ...: stored)
            if read is False or False in both:
                continue
            read = True if True in both else read
            if region.decides_with(p, work):   # for _ in lst, if k == 0, range(k)
                hits.append((p, "flow"))
                continue
            if old_bytes is not None and new_bytes is not None and old_bytes != new_bytes:
                pairs = _changed_values(old, old_bytes, new_bytes)
                if read is True and (region.indexes_with(p) or   # indices changed: idx[0]
                                     any((type(x), x) in recorded for x, _ in pairs) or
                                     self._took(region, p, [y for _, y in pairs], read, recorded,
                                                    regions) or
                                     not pairs and (region.calls_with(None, p) or   # (a large
                                                    self._hands_on(region, p, read, regions))):
                    # one, its values not kept: a call of the body's work took it)
                    hits.append((p, "number"))
            elif type(old) is Scalar or type(new) is Scalar:   # p, q = q, p: p handed
                swapped = any(q != p for q in held.get(id(new), ()))   # to a kernel
                if (read is True or swapped) and any(
                        (Scalar, id(x)) in recorded for x in (old, new)):
                    hits.append((p, "number"))
            elif old is None or new is None:   # prev = a: only where it decides the flow
                continue
            elif is_array(old) or is_array(new):
                swapped = any(q != p for q in held.get(id(new), ()))   # held elsewhere
                if (read is True or swapped) and any(   # before: a swap, a rotation
                        is_array(x) and t.cached_buffer(x) is not None for x in (old, new)):
                    hits.append((p, "array"))
            elif p[-1] == _LEN:   # lst.append(0) then body.zeros(len(lst)), a[:len(lst)]
                if read is True and (region.sizes_with(p) or region.indexes_with(p)) or \
                        self._hands_on(region, p, read, regions):
                    hits.append((p, "size" if region.sizes_with(p) else "number"))
            elif read is True and (old in sizes or new in sizes) and region.sizes_with(p):
                hits.append((p, "size"))   # body.zeros(m)
            elif (type(old), old) in recorded or read is True and region.indexes_with(p) or \
                    self._took(region, p, [new], read, recorded, regions) or \
                    self._hands_on(region, p, read, regions):
                hits.append((p, "number"))
        if hits:
            raise ArgumentError(_message(hits, what), source)

    def _carried(self, region, path: tuple):
        """``region.carried(path)``, but False where the body's code reads the slot
        only within what it hands whole to functions of the program's that each
        store it before reading it, or do not name it (``finish(st)`` with
        ``st.result = st.v``): no iteration reads what the one before stored."""
        read = region.carried(path)
        if read is not True or path in region.first:
            return read
        handed = [(q, region.handed.get((id(ins), q))) for ins, q in region.read_whole
                  if _within(q, path)]
        if handed and all(to is not None and path[:len(q)] == q and
                          self._stores_first(*to, path[len(q):]) for q, to in handed):
            return False
        return read

    def _stores_first(self, callee: tuple, key, rest: tuple) -> bool:
        """Whether the function of the program's at ``callee`` stores the slot at
        ``rest`` within what its parameter ``key`` (a position or a keyword) holds
        before it reads it, or does not name it."""
        fn = _resolve(self.scope, callee)
        bound = isinstance(fn, types.MethodType)
        fn = getattr(fn, "__func__", fn)
        if not isinstance(fn, types.FunctionType) or key is None:
            return False
        code = fn.__code__
        names = code.co_varnames[bound:code.co_argcount + code.co_kwonlyargcount]
        name = names[key] if type(key) is int and key < len(names) else key
        if name not in names:
            return False
        if code not in self.helpers:
            self.helpers[code] = _Region((code, -1, 1 << 62), dict(fn.__globals__))
        return not self.helpers[code].carried((name,) + rest)

    def _work(self, region, regions) -> set:
        """The lines of the body's code that record work: launches and calls
        where some was recorded, and calls of functions of the program's that
        recorded some."""
        sources = {n.source for r in regions for n in r.walk()}
        file = self._code()[0].co_filename
        out = {line for f, line in sources if f == file} | region.launches
        for line, callee, _, _ in region.passes:
            fn = _resolve(self.scope, callee)
            fn = getattr(fn, "__func__", fn)
            if isinstance(fn, types.FunctionType) and sources & _lines(fn):
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
        if not any((_SAME, id(v)) in recorded for v in values if type(v) not in (int, bool)):
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
        sources = {n.source for r in regions for n in r.walk()}
        file = self._code()[0].co_filename
        if read is True and region.takes_on({line for f, line in sources if f == file}, path):
            return True
        for fn, own, held in self._callees(region, path, sources, clamps=False):
            lines = {line for f, line in sources if f == fn.__code__.co_filename}
            if any(own.carried(q) is True and own.takes_on(lines, q) for q in held):
                return True
        return False

    def _callees(self, region, path: tuple, sources: set, clamps: bool = True):
        """``(function, its _Region, the paths it reads the slot at path by)`` for
        the functions of the program's that calls of the body make and that
        recorded some of its work: the parameters the call fills with what it
        reads from the slot (``clamps`` False: not through ``min(k, 3)``), and
        the global or closure name it holds it by."""
        for _, callee, args, unclamped in region.passes:
            args = args if clamps else unclamped
            fn = _resolve(self.scope, callee)
            bound = isinstance(fn, types.MethodType)
            fn = getattr(fn, "__func__", fn)
            if not isinstance(fn, types.FunctionType) or not sources & _lines(fn):
                continue
            code = fn.__code__
            names = code.co_varnames[bound:code.co_argcount + code.co_kwonlyargcount]
            params = [key for key, reads in args.items() if any(
                q[:len(path)] == path or q[-1] == _WHOLE and _within(q[:-1], path)
                for q in reads)]
            held = [(p,) for p in (names if None in params else [
                p if type(p) is str else names[p] for p in params
                if type(p) is str or p < len(names)])]
            held += [(n,) + path[1:] for n, v in _named(fn).items() if v is self.now.get(
                path[0], MISSING) and (n == path[0] or path[0] == f"{callee[0]}.<{n}>")]
            if held:
                yield fn, _Region((code, -1, 1 << 62), dict(fn.__globals__)), held

    def _handed(self, region, path: tuple, values: list, regions, recorded: dict) -> bool:
        """Whether a call of the body hands the slot at ``path``, after the body
        stored it, to a function of the program's that recorded some of the
        body's work and took it there: with one of ``values`` (``k += 1`` then
        ``step(body, x, k)``), or by indexing or sizing with the parameter it
        fills (``bufs[k % 2]`` in the helper)."""
        sources = {n.source for r in regions for n in r.walk()}
        for fn, own, held in self._callees(region, path, sources):
            inside = sources & _lines(fn)
            if any(src in inside for v in values for src in recorded.get((type(v), v), ())):
                return True
            if any(own.indexes_with(q) or own.sizes_with(q) for q in held):
                return True
        return False

    def _helper_carries(self, path: tuple) -> bool:
        """Whether the helper the slot at ``path`` was reached through reads it
        before storing it (``T += dt`` in ``def bump(): global T``)."""
        fn, name = self.owners.get(path[0], (None, None))
        return fn is not None and \
            _Region((fn.__code__, -1, 1 << 62), {}).carried((name,) + path[1:]) is True


def _lines(fn, depth: int = 2) -> set:
    """The ``(file, line)`` of the code of ``fn``, of the functions and lambdas it
    makes, and of the functions it names (its helpers), ``depth`` levels deep."""
    out, codes = set(), [fn.__code__]
    while codes:
        c = codes.pop()
        out |= {(c.co_filename, line) for _, _, line in c.co_lines() if line is not None}
        codes += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    if depth > 1:
        cells = [c.cell_contents for c in fn.__closure__ or () if _filled(c)]
        for v in cells + [fn.__globals__.get(g) for g in _global_names(fn.__code__)]:
            if type(v) is types.FunctionType and v is not fn:
                out |= _lines(v, depth - 1)
    return out


def _named(fn) -> dict:
    """The globals and the filled closure cells the code of ``fn`` names: name ->
    what it holds."""
    code = fn.__code__
    out = {g: fn.__globals__[g] for g in _global_names(code) if g in fn.__globals__}
    out.update((name, cell.cell_contents) for name, cell in
               zip(code.co_freevars, fn.__closure__ or ()) if _filled(cell))
    return out


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _slots(root, name: str) -> dict:
    """The slots under ``root`` (held by ``name``), nearest first, ``_PER_ROOT`` at
    most: ``path -> (value, its bytes (a slice's bounds) where compared by
    value, (id of the container, step) or None)``."""
    out: dict = {}
    level = [(root, (name,), None)]
    while level and len(out) < _PER_ROOT:
        below = []
        for v, path, where in level:
            t = type(v)
            if t in (str, bytes):   # mode = "b": by its value; tag = tag + "x": its length
                out[path] = (v, None, where)
                out[path + (_LEN,)] = (len(v), None, None)
                continue
            if t is Scalar:   # a dynamic number of the call: told by its identity
                out[path] = (v, None, where)
                continue
            if t is slice:   # a[sl]: by its bounds
                if all(type(x) is int or x is None for x in (v.start, v.stop, v.step)):
                    out[path] = (v, (v.start, v.stop, v.step), where)
                continue
            try:
                kept = _is_number(v) or is_array(v)
            except Exception:  # noqa: BLE001  (an object's own interface raising: none)
                continue
            if kept:
                out[path] = (v, _contents(v), where)
                if len(out) >= _PER_ROOT:
                    break
                continue
            if v is None or isinstance(v, enum.Enum):   # prev = a, ph = Phase.RUN: by
                out[path] = (v, None, where)   # its identity
                continue
            if len(path) >= _DEPTH:
                continue
            kind = _container(v)
            if kind is not None:   # lst.append(0) with x[:len(lst)]
                out[path + (_LEN,)] = (len(v), None, (id(v), _LEN))
            if kind is list or kind is dict:
                items = (v.items() if kind is dict else enumerate(v)) \
                    if len(v) <= _MAX_ITEMS else ()
                below += [(x, path + (("[]", k),), (id(v), ("[]", k))) for k, x in items]
            elif kind is set:   # unordered: its items compared as a whole
                if len(v) <= _MAX_ITEMS and all(type(x) in (str, bytes) or _is_number(x)
                                                for x in v):
                    out[path + (_ITEMS,)] = (frozenset(v), None, (id(v), _ITEMS))
            elif own_object(v):
                below += [(x, path + ((".", k),), (id(v), (".", k))) for k, x in _attributes(v)]
        level = below
    return out


_PLAIN_METHODS = ("__iter__", "__len__", "__getitem__", "items", "keys", "values")


def _container(v):
    """``list`` (also a tuple, a deque, a bytearray), ``dict`` or ``set`` (also a
    frozenset) where ``v`` is one whose length and items are watched: of the
    type itself, or of a subclass whose reading runs no Python code of its own
    (``Counter``, ``defaultdict``, ``OrderedDict``; not a class defining
    ``__iter__`` or ``__getitem__``), else None."""
    t = type(v)
    if t is tuple:   # (a namedtuple's items are its attributes: not looked into)
        return list
    for base, kind in _KINDS:
        if isinstance(v, base):
            return kind if t is base or not any(
                isinstance(inspect.getattr_static(t, m, None), types.FunctionType)
                for m in _PLAIN_METHODS) else None
    return None


_KINDS = ((list, list), (deque, list), (bytearray, list), (dict, dict), (set, set),
          (frozenset, set))


def _changed(before: tuple, after: tuple) -> bool:
    (old, old_bytes, _), (new, new_bytes, _) = before, after
    if old is new:
        return old_bytes != new_bytes
    if is_array(old) and is_array(new):
        try:   # the same view made again (a = a.reshape(n), self.inner = self.u[1:-1])
            return not as_buffer(old).same_view(as_buffer(new)) or old_bytes != new_bytes
        except Exception:  # noqa: BLE001  (an array answering oddly: another one)
            return True
    if is_array(old) or is_array(new) or type(old) is not type(new) or type(old) is Scalar:
        return True
    if type(old) is frozenset:   # a set's items (their order is no change)
        return old != new
    try:
        return bool(old != new) or str(old) != str(new)   # -0.0 and 0.0: not the same
    except Exception:  # noqa: BLE001  (a number of a library's class answering oddly)
        return True


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


def _changed_values(old, old_bytes, new_bytes) -> list:
    """``(was, now)`` of the values a small host array held that the body changed
    (``t[0] += dt``), as numpy's numbers and as Python's."""
    if type(old_bytes) is not bytes or type(new_bytes) is not bytes or \
            len(old_bytes) != len(new_bytes):
        return []
    was, now = np.frombuffer(old_bytes, old.dtype), np.frombuffer(new_bytes, old.dtype)
    return [(v, w) for x, y in zip(was, now) if x.tobytes() != y.tobytes()
            for v, w in ((x, y), (x.item(), y.item()))]   # (float(t[0]) taken: either)


def _begin(code_ins: list, i: int, values: int) -> tuple:
    """``(where, beyond)``: the instruction where the code computing the
    ``values`` values that ``code_ins[i]`` takes off the stack begins, and how
    many values that one pushes before theirs (x of LOAD_FAST_LOAD_FAST x, k)."""
    j, depth, end = i, 0, code_ins[i].offset
    while j > 0 and (depth < values or _other_branch(code_ins, j - 1, end) != j - 1):
        j = _other_branch(code_ins, j - 1, end)   # (the walk stops in no branch)
        try:
            depth += dis.stack_effect(code_ins[j].opcode, code_ins[j].arg, jump=False)
        except ValueError:   # an instruction dis cannot tell: read no further
            return j + 1, 0
    return j, max(depth - values, 0)


_FORWARD = frozenset({"JUMP_FORWARD", "JUMP", "JUMP_NO_INTERRUPT"})
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)


def _other_branch(code_ins: list, j: int, end: int) -> int:
    """Walking back from ``end``: where ``code_ins[j]`` ends the first branch of a
    conditional expression (``1 if k else 0``: its jump past the second one,
    which the walk has counted), the jump on the condition, whose value the walk
    takes next; else ``j``."""
    ins = code_ins[j]
    if ins.opname not in _FORWARD or not ins.offset < ins.argval <= end or \
            j + 1 >= len(code_ins):
        return j
    target = code_ins[j + 1].offset
    for c in range(j - 1, -1, -1):
        if code_ins[c].opcode in _JUMPS and code_ins[c].argval == target:
            return c
    return j


def _read_by(code_ins: list, i: int, values: int, stored: set, made: dict) -> set:
    """The slots (paths: ``("k",)``, ``("st", (".", "k"))``, ``("idx", ("[]", 0))``)
    loaded to compute the ``values`` values the instruction ``code_ins[i]`` takes
    off the stack, not counting names the body stored before (for those, what
    they were computed from). A slot reached through something the code does not
    name from a name (``objs[i].k``, or a name the body set) is ``("*", step)``;
    one taken whole, not only for an item or attribute of it (``b.zeros(shape)``,
    ``slice(*lims)``), is also its path with ``_WHOLE`` after it."""
    out: set = set()
    start, beyond = _begin(code_ins, i, values)
    held = {_holder(code_ins, j) for j in range(start, i)}
    for j in range(start, i):
        ins = code_ins[j]
        if ins.opname in _LOADS:
            names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
            names = names[beyond:] if j == start else names
            out.update((n,) for n in names)
            out.update((n, _WHOLE) for n in (names[:-1] if j in held else names))
        elif ins.opname in _ATTR_LOADS or _reads_item(ins):
            path = _chain(code_ins, j)
            step = (".", ins.argval) if ins.opname in _ATTR_LOADS else \
                path[-1] if path is not None else None
            if path is not None and path[:1] not in stored:
                out.update((path,) if j in held else (path, path + (_WHOLE,)))
            elif step is not None:
                out.add(("*", step))
    kept = {p for p in out if p[:1] not in stored}
    for name in [p for p in out if p in stored]:   # (k += 1 then bufs[k % 2]: k itself)
        kept |= made.get(name, set())
    return kept


def _arguments(code_ins: list, i: int, n: int, stored: set, made: dict,
               clamps: bool = True) -> dict:
    """What each argument of the call ``code_ins[i]`` reads, by the parameter it
    fills: its position, or its keyword (None where the keywords are unknown);
    with ``clamps`` False, but those a clamp computes (``min(k, 3)``: past its
    bound, the number changes it no more)."""
    out: dict = {}
    for key, end in _parameters(code_ins, i, n):
        if clamps or not _settles(code_ins, end, _CLAMPS):
            out.setdefault(key, set()).update(_read_by(code_ins, end, 1, stored, made))
    return out


def _parameters(code_ins: list, i: int, n: int) -> list:
    """``(parameter, where its code ends)`` of each argument of the call
    ``code_ins[i]``: its position, or its keyword (None where the keywords are
    unknown)."""
    kw = next((c.argval for c in code_ins[max(i - 2, 0):i] if c.opname == "KW_NAMES"), ())
    if code_ins[i].opname == "CALL_KW":
        kw, n = code_ins[i - 1].argval, n - 1
    named = len(kw) if isinstance(kw, tuple) else n
    return [(m if m < n - named else kw[m - n + named] if isinstance(kw, tuple) else None,
             _begin(code_ins, i, n - m - 1)[0]) for m in range(n)]


def _handed_on(code_ins: list, i: int, n: int, stored: set, made: dict) -> set:
    """What the arguments of the call ``code_ins[i]`` read, but those a clamp
    computes."""
    if code_ins[i].opname == "CALL_FUNCTION_EX":
        return _read_by(code_ins, i, n, stored, made)
    return set().union(*_arguments(code_ins, i, n, stored, made, False).values())


def _iterated(code_ins: list, f: int, stored: set, made: dict) -> set:
    """What the iterable of the loop whose ``FOR_ITER`` is ``code_ins[f]`` reads
    (``for o in offs``: offs): the items its target takes."""
    if f > 0 and code_ins[f - 1].opname in _LOADS:   # a comprehension's .0
        return _read_by(code_ins, f, 1, stored, made)
    g = next((j for j in range(f - 1, -1, -1) if code_ins[j].opname == "GET_ITER"), None)
    return _read_by(code_ins, g, 1, stored, made) if g is not None else set()


_SETTLING = frozenset({"min", "max", "abs", "round", "int", "float", "bool"})
_CLAMPS = frozenset({"min", "max"})


def _taken(ins) -> int:
    """How many values below the callable the call ``ins`` takes: its arguments
    (and keyword names); for ``f(*args, **kw)``, the tuple and the dict."""
    if ins.opname == "CALL_FUNCTION_EX":   # (3.14: the dict or a NULL, always)
        return 2 if sys.version_info >= (3, 14) or ins.arg & 1 else 1
    return ins.arg + _CALLS[ins.opname]


def _settles(code_ins: list, i: int, builtins=_SETTLING) -> bool:
    """Whether the value ``code_ins[i]`` stores (or takes) is one of ``builtins``
    called on names and constants (``blocks = min(blocks, 1)``): set so again
    from what it became, it stays."""
    start = _begin(code_ins, i, 1)[0]
    return code_ins[start].opname == "LOAD_GLOBAL" and code_ins[start].argval in builtins \
        and code_ins[i - 1].opname in _CALLS and all(
            c.opname in _LOADS or c.opname in _CONSTS or c.opname in _ATTR_LOADS or
            c.opname in _CALLS or c.opname in ("KW_NAMES", "PUSH_NULL")
            for c in code_ins[start + 1:i])


def _holder(code_ins: list, j: int) -> int:
    """The index of the instruction that loads what the instruction
    ``code_ins[j]`` takes an attribute or an item of (``st`` of ``st.k``, ``d``
    of ``d[key]``, also to store it: ``st.k = v``, ``d[key] = v``), else -1."""
    op = code_ins[j].opname
    if op in ("LOAD_ATTR", "LOAD_METHOD") or op in _ATTR_STORES:
        below = j - 2 if j > 1 and _copy(code_ins[j - 1], 1) else j - 1
        return below if below >= 0 and code_ins[below].opname != "SWAP" else -1
    if op in _SUBSCRIPTS or op in _ITEM_STORES or _reads_item(code_ins[j]):
        at = j - 2 if j > 2 and _copy(code_ins[j - 1], 2) and _copy(code_ins[j - 2], 2) \
            else j   # (d[key] += 1: the holder and the key, copied)
        if code_ins[at - 1].opname == "SWAP":
            return -1
        start, beyond = _begin(code_ins, at, _SUBSCRIPTS.get(op, 2) - 1)   # the key's code
        return start - 1 if not beyond else -1
    return -1


def _chain(code_ins: list, j: int):
    """The path of the slot whose value the instruction ``code_ins[j]`` loads
    (``("st", (".", "k"))`` of ``st.k``, ``("d", ("[]", "k"))`` of ``d["k"]``),
    where the code names it all the way from a name, else None."""
    ins = code_ins[j]
    if ins.opname in _LOADS:
        return (ins.argval[-1] if isinstance(ins.argval, tuple) else ins.argval,)
    if ins.opname in ("LOAD_ATTR", "LOAD_METHOD"):
        below = j - 2 if j > 1 and _copy(code_ins[j - 1], 1) else j - 1   # st.k += 1
        holder = _chain(code_ins, below) if below >= 0 else None
        return holder + ((".", ins.argval),) if holder is not None else None
    if _reads_item(ins):
        key = j - 3 if j > 2 and _copy(code_ins[j - 1], 2) and _copy(code_ins[j - 2], 2) \
            else j - 1   # d["k"] += 1
        return _keyed(code_ins, key, "[]")
    return None


def _keyed(code_ins: list, key: int, kind: str):
    """``holder path + ((kind, key),)`` where ``code_ins[key]`` loads a constant
    key and the instruction before it the holder, else None."""
    if key < 1 or code_ins[key].opname not in _CONSTS:
        return None
    k = code_ins[key].argval
    try:
        hash(k)
    except TypeError:
        return None
    holder = _chain(code_ins, key - 1)
    return holder + ((kind, k),) if holder is not None else None


def _copy(ins, n: int) -> bool:
    return ins.opname == "COPY" and ins.arg == n


def _set(code_ins: list, i: int):
    """The path of the slot the instruction ``code_ins[i]`` stores or deletes
    (a name, ``st.k = ...``, ``d["k"] = ...``) where the code names it from a
    name, else None."""
    ins = code_ins[i]
    if ins.opname in _ATTR_STORES:
        holder = _chain(code_ins, i - 1) if i > 0 else None
        return holder + ((".", ins.argval),) if holder is not None else \
            _augmented(code_ins, i, 1)
    if ins.opname in _ITEM_STORES:
        return _keyed(code_ins, i - 1, "[]") or _augmented(code_ins, i, 2)
    return None


def _augmented(code_ins: list, i: int, swaps: int):
    """The path of the slot an augmented assignment stores (``st.k += 1``, after
    one SWAP; ``d["k"] += 1``, after two): the one its value was loaded from."""
    j = i - swaps
    if j < 1 or any(code_ins[x].opname != "SWAP" for x in range(j, i)):
        return None
    load = _begin(code_ins, j, 1)[0] + swaps   # past the COPYs of the holder (and key)
    ins = code_ins[load] if load < j else None
    if ins is None or not (_reads_item(ins) if swaps == 2 else
                           ins.opname == "LOAD_ATTR" and ins.argval == code_ins[i].argval):
        return None
    return _chain(code_ins, load)


def _reads_item(ins) -> bool:
    return ins.opname == "BINARY_SUBSCR" or ins.opname == "BINARY_OP" and ins.argrepr == "[]"


class _Region:
    """What a body's code (a code object, and the offsets it lies strictly
    between) reads before it stores it (slots by their path: a name, ``st.k``,
    ``d["k"]``, as ``_slots`` keys them), and what it reads to index by before
    it sets it: every slot a subscript's key loads (``bufs[k % 2]``,
    ``a[k * 4:(k + 1) * 4]``; a launch's ``k[grid, block, body]`` too, and the
    size of ``k.forall(n, stream=body)``), and what a name the body set before
    was computed from (``lo = k * 4`` then ``a[lo:lo + 4]``)."""

    def __init__(self, code: tuple, scope: dict):
        obj, lo, hi = code
        self.scope = scope           # what the names held when the body began
        code_ins = list(dis.get_instructions(obj))
        self.indexed: set = set()    # paths read to index by
        self.sized: set = set()      # those read to size a temporary by
        self.first: dict = {}        # path -> "load" or "store", whichever comes first
        self.calls: dict = {}        # line -> the stored paths its calls' arguments read
        self.whole: set = set()      # paths read whole before stored (b.zeros(shape))
        self.read_whole: list = []   # (instruction, path) of each of those reads
        self.handed: dict = {}       # (id of its instruction, path) -> (the callee's path,
        #                              the parameter): those read as a call's argument
        self.passes: list = []       # (line, callee's path, {parameter: what it reads},
        #                              the same but for the arguments clamps compute)
        self.takes: dict = {}        # line -> what its calls' arguments read (but a clamp's)
        self.decisions: list = []    # (what a for loop's or a test's outcome reads,
        #                              the lines it decides to run)
        self.launches: set = set()   # lines of kernel launches, k[grid, block, body](...)
        self.held = {_holder(code_ins, i) for i, ins in enumerate(code_ins)   # loads of
                     if lo < ins.offset < hi}                  # what a step takes (st of st.k)
        stored: set = set()          # the paths stored so far
        made: dict = {}              # a name stored -> what its value was computed from
        for i, ins in enumerate(code_ins):
            line = ins.positions.lineno if ins.positions is not None else None
            if lo < ins.offset < hi and line is not None:
                self._note(code_ins, i, stored, made)

    def _note(self, code_ins: list, i: int, stored: set, made: dict) -> None:
        ins = code_ins[i]
        names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
        op = ins.opname
        if op == "STORE_FAST_LOAD_FAST":   # one name stored, then one loaded
            stored.add(names[:1])
            self.first.setdefault(names[:1], "store")
            self.first.setdefault(names[-1:], "load")
        elif op in _STORES:
            if len(names) == 1 and op.startswith("STORE"):   # x = <what it reads>
                at = i - 1 if _copy(code_ins[i - 1], 1) else i   # (t := t + dt): its value
                made[names] = _iterated(code_ins, at - 1, stored, made) \
                    if code_ins[at - 1].opname == "FOR_ITER" else \
                    _read_by(code_ins, at, 1, stored, made)
                if _settles(code_ins, at):
                    made[names] -= {names, names + (_WHOLE,)}
            for n in names:
                stored.add((n,))
                self.first.setdefault((n,), "store")
        elif op in _LOADS:
            for n in names:
                self.first.setdefault((n,), "load")
            whole = [(n,) for n in (names[:-1] if i in self.held else names)
                     if (n,) not in stored]
            self.whole.update(whole)
            self.read_whole += [(ins, q) for q in whole]
        elif op in _ATTR_STORES or op in _ITEM_STORES:
            path = _set(code_ins, i)
            if path is not None and path[:1] not in stored:
                stored.add(path)
                self.first.setdefault(path, "store")
        else:
            path = _chain(code_ins, i)
            if path is not None and path[:1] not in stored:
                self.first.setdefault(path, "load")
                if i not in self.held:
                    self.whole.add(path)
                    self.read_whole.append((ins, path))
        if op == "GET_ITER":   # [x[o:o + 2] for o in offs]: (3.11) its own code
            self._comprehension(code_ins, i, stored, made)
        elif op == "FOR_ITER":   # for _ in lst, range(k): how many times it runs
            self.decisions.append((_trips(_iterated(code_ins, i, stored, made)),
                                   _controlled(code_ins, i)))
        elif "_IF_" in op and ins.opcode in _JUMPS:   # if k == 0, while j < k: which
            self.decisions.append((_read_by(code_ins, i, 1, stored, made),
                                   _controlled(code_ins, i)))
        if (op in _SUBSCRIPTS or _reads_item(ins)) and \
                not self._picks_text(code_ins, i, _SUBSCRIPTS.get(op, 2), stored):
            # its key read to index by (or to size a launch by, k[grid, block, body])
            self.indexed |= _read_by(code_ins, i, _SUBSCRIPTS.get(op, 2) - 1, stored, made)
        elif op in _CALLS and code_ins[i - 1].opname != "PRECALL" or \
                op == "CALL_FUNCTION_EX":   # (3.11: PRECALL, CALL)
            self._call(code_ins, i, stored, made)

    def _comprehension(self, code_ins: list, i: int, stored: set, made: dict) -> None:
        """Note the code of a comprehension (3.11: a function of its own, called
        on the iterator that ``code_ins[i]`` makes) as the body's, its ``.0``
        made from what the iterable reads (on 3.12 it is inlined)."""
        start = _begin(code_ins, i, 1)[0]
        if start < 2 or code_ins[start - 1].opname != "MAKE_FUNCTION" or \
                not isinstance(code_ins[start - 2].argval, types.CodeType):
            return
        inner = list(dis.get_instructions(code_ins[start - 2].argval))
        stored.add((".0",))
        made[(".0",)] = _read_by(code_ins, i, 1, stored, made)
        held, self.held = self.held, {_holder(inner, j) for j in range(len(inner))}
        for j, ins in enumerate(inner):
            if ins.positions is not None and ins.positions.lineno is not None:
                self._note(inner, j, stored, made)
        self.held = held

    def _call(self, code_ins: list, i: int, stored: set, made: dict) -> None:
        """Note the call ``code_ins[i]``: what its arguments read that the body
        stored first, and what a temporary's or a launch's size reads."""
        n = _taken(code_ins[i])
        self.calls.setdefault(code_ins[i].positions.lineno, set()).update(   # what the
            q for q in _read_by(code_ins, i, n, stored, made)            # body stored first
            if any(q[:m] in stored for m in range(1, len(q) + 1)) or
            q[-1] == _WHOLE and any(_within(q[:-1], p) for p in stored))
        j = _begin(code_ins, i, n)[0]
        callee = code_ins[j - 1] if j > 0 else None
        if callee is not None and _reads_item(callee):   # k[grid, block, body](x)
            self.launches.add(code_ins[i].positions.lineno)
        if callee is None or callee.opname != "LOAD_GLOBAL" or callee.argval not in _CLAMPS:
            self.takes.setdefault(code_ins[i].positions.lineno, set()).update(
                _handed_on(code_ins, i, n, stored, made))
        path = _chain(code_ins, j - 1) if j > 0 else None
        if path is not None and code_ins[i].opname != "CALL_FUNCTION_EX":
            for key, end in _parameters(code_ins, i, n):   # a slot taken whole: finish(st)
                self.handed[id(code_ins[end - 1]), _chain(code_ins, end - 1)] = (path, key)
            self.passes.append((code_ins[i].positions.lineno, path,
                                _arguments(code_ins, i, n, stored, made),
                                _arguments(code_ins, i, n, stored, made, False)))
        if callee is not None and callee.opname in _ATTR_LOADS:
            if callee.argval in _MAKERS and self._on_stream(code_ins, j - 1, stored):
                self.sized |= _read_by(code_ins, i, n, stored, made)
            elif callee.argval == "forall" or callee.argval == "launch" and \
                    self._on_stream(code_ins, j - 1, stored):
                # k.forall(m, stream=body), body.launch(k, *cfg, x): a launch's size
                self.indexed |= _read_by(code_ins, i, n, stored, made)

    def _picks_text(self, code_ins: list, i: int, values: int, stored: set) -> bool:
        """Whether the subscript ``code_ins[i]`` picks from a string, or a list,
        tuple or dict of strings, that the code names and the body has not set
        (``PHASES[k % 3]`` handed to a log): no work is picked by it."""
        start, beyond = _begin(code_ins, i, values - 1)   # the key's code
        path = _chain(code_ins, start - 1) if start > 0 and not beyond else None
        if path is None or any(path[:n] in stored for n in range(1, len(path) + 1)):
            return False
        return _text(_resolve(self.scope, path))

    def _on_stream(self, code_ins: list, j: int, stored: set) -> bool:
        """Whether the ``.zeros``/``.empty``/``.launch`` that ``code_ins[j]`` loads
        may be a graphtrace stream's (the body's, ``s``'s): not where it is a
        module's or another object's the body began with (``np.zeros(k)`` on the
        host)."""
        path = _chain(code_ins, j)
        if path is None or any(path[:n] in stored for n in range(1, len(path))):
            return True
        holder = _resolve(self.scope, path[:-1])
        return holder is MISSING or type(holder).__module__.startswith("graphtrace")

    def carried(self, path: tuple):
        """Whether the body reads the slot at ``path`` before storing it: True,
        False, or None where its code does not name it (a helper may)."""
        if self.first.get(path[:1]) is None:
            return None
        if any(self.first.get(path[:n]) == "store" for n in range(1, len(path) + 1)):
            return False   # it, or an object or container on its way, set anew first
        if path in self.first or len(path) == 1 or any(_within(q, path) for q in self.whole):
            return True   # (a container read whole: b.zeros(shape), [x + 1 for x in shape])
        return True if any(kind == "." for kind, _ in path[1:]) else None

    def indexes_with(self, path: tuple) -> bool:
        """Whether the body indexes by the slot at ``path`` (``bufs[k % 2]``,
        ``bufs[self.k]``, ``bufs[idx[0]]``), or sizes a launch by it
        (``k[level, 256, body]``)."""
        return _reads(self.indexed, path)

    def calls_with(self, line, path: tuple) -> bool:
        """Whether a call of the body on ``line`` (None: on any line) takes the
        slot at ``path`` after the body stored it, or a name set from it then
        (``t += dt`` then ``add(x, t)``; ``h[0]`` of a host array ``h``)."""
        lines = self.calls.values() if line is None else (self.calls.get(line, ()),)
        return any(q[:len(path)] == path or q[-1] == _WHOLE and _within(q[:-1], path)
                   for read in lines for q in read)   # (ts[0] += dt then add(x, *ts))

    def takes_on(self, lines: set, path: tuple) -> bool:
        """Whether a call of the code on one of ``lines`` takes what an argument
        computes from the slot at ``path`` (``add(x, K)``, ``add(x, k * 2)``,
        ``step(body, x, float(k))``; not a clamp, ``min(k, 3)``)."""
        return any(_reads(self.takes.get(line, ()), path) for line in lines)

    def decides_with(self, path: tuple, work: set) -> bool:
        """Whether the slot at ``path`` decides the body's control flow where it
        leads to ``work`` (lines recording some): a for loop's iterable or
        ``range()`` bound, an if or a while test, a comprehension's iterable."""
        return any(lines & work and _reads(read, path) for read, lines in self.decisions)

    def sizes_with(self, path: tuple) -> bool:
        """Whether the body sizes a temporary by the slot at ``path``
        (``body.zeros(m)``, ``s.empty((n, self.k))``)."""
        return _reads(self.sized, path)


def _trips(read: set) -> set:
    """What decides how many times a for loop over what reads ``read`` runs:
    the numbers it reads (``range(k)``), and the length (a set's items) of a
    container it iterates whole (``lst``, ``d.items()``), not its items."""
    out = {q for q in read if q[-1] != _WHOLE}
    for q in read - out:
        for c in (q[:-1], q[:-2]) if len(q) > 2 and q[-2][0] == "." else (q[:-1],):
            out |= {c + (_LEN,), c + (_ITEMS,)}
    return out


def _controlled(code_ins: list, i: int) -> set:
    """The lines the jump ``code_ins[i]`` (a for loop's, a test's) decides to run:
    those it jumps past or back over, and an ``else`` the part it enters jumps
    past."""
    ins = code_ins[i]
    lo, hi = sorted((ins.offset + 1, ins.argval))
    k = next((j for j, c in enumerate(code_ins) if c.offset == ins.argval), None)
    before = code_ins[k - 1] if k else None
    if ins.argval > ins.offset and before is not None and before.opname in _FORWARD and \
            before.argval > ins.argval:   # if ...: else: (its jump past the else)
        hi = before.argval
    return {c.positions.lineno for c in code_ins if lo <= c.offset < hi and
            c.positions is not None and c.positions.lineno is not None}

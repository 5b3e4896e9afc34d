"""What a while loop's body changes in the Python state its next iteration reads.

Python runs a loop's body once, when it is recorded; the device runs that
recording every iteration. A body that changes what its own code reads next
time (``u, v = v, u``; ``bufs[0], bufs[1] = bufs[1], bufs[0]``;
``self.u, self.v = self.v, self.u``; ``k += 1`` with ``bufs[k % 2]``; ``t += dt``
handed to a kernel) would, run eagerly, work on other arrays or numbers in
each iteration, where the graph repeats the first. Such a body is refused.

``LoopState`` takes, when the body is entered, the slots it may read: the names
of the user's frame (for ``body=fn``, its closure, defaults and bound object),
the globals the code names, the closures and globals of the functions of the
program's it calls, by name or through an attribute (``swap()``, ``pp.swap()``,
``Bufs.flip()``, ``st.step()``), what the bound methods and partials it holds
bind (``cur.__self__``, ``pk.args[0]``), and the items and attributes of the lists, tuples, deques, dicts (and their
subclasses that read as they do: ``Counter``, ``defaultdict``; a dict's order
too), numpy object arrays, sets (their
items as a whole), namedtuples (their fields, by name: ``sel.i``, also as ``sel[0]`` reads it), objects
of the program's own and its classes and modules (``Bufs.cur``, ``bufstate.cur``;
not a library's) these hold, ``_DEPTH`` levels deep, where they
hold arrays or numbers (a host array of numbers, such as indices or a time
``t[0]``, by its values up to ``_BY_VALUE`` bytes, by a digest of them up to
``_BY_DIGEST``, and a slice, by its values), and the lengths of those containers,
what an iterator of Python's own over one has left and where a generator
stands (``_left``), and the
strings and bytes they hold (by their values, and their lengths), and the
Enum members and None (by their identity: None set to an array counts only
where it decides the body's control flow); an attribute the body gives an
object that its class holds a value for (``st.k += 1`` over ``k = 0``) is
compared with the class's value (``_shadowed``); a name's slots are those
the trace took before where nothing they were read from has changed
(``Slots``). ``refuse`` compares them when the body is closed:

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
- a kernel or a function changed (``kern = mul`` after ``kern[1, 4, body](x)``;
  ``step = mul_step``; ``body.launch(k, ...)``, ``body.child(g, x)``, ``m.k``,
  ``ops.reverse()``) that the body's code loads, read first, on a line that
  recorded work or hands to a call there, or that a call there calls a value
  computed from (``go = kern[1, 4, body]`` then ``go(x)``; ``use = kern``:
  ``_Region.calls_by``), or that a helper recording work
  loads by its own name (``KERN`` set by ``flip()``): ``_launches``;
- anything the loop's own condition reads (``gt.cond(c) > lim`` with ``lim +=
  1``, or ``c = other``), tested again before each iteration, whether or not
  the body reads it (``_condition``, ``_loop_work.py``);
- a container's length changed (``lst.append(0)``) where the body sizes or
  indexes by it or its work takes it so (``body.zeros(len(lst))``,
  ``a[:len(lst)]``, ``k[len(lst), 32, body]``, ``add(x, len(lst))``; also
  ``x = stack.pop()`` then ``add(x, 1.0)``: a method of it read whole), and the
  same of an iterator advanced (``next(it)``);
- a slot changed that decides the body's control flow where that leads to
  lines recording work (launches, calls that recorded some): a for loop's or
  a comprehension's iterable by its length (``for _ in lst`` then
  ``lst.append(1)``), or a number it reads (``range(k)``), and what an if or
  a while test reads (``if k == 0``, ``while j < k``; ``k += 1``;
  ``if mode == "a"`` with ``mode = "b"``), also in a helper handed it
  (``step(body, k)`` testing ``k``); a value set where such a test decides
  (``if st.mode == 0: v = 1.0`` else ``v = 5.0``) holds what the test read,
  so work taking ``v`` takes ``st.mode`` (``st.flip()`` changing it).

A slot read through another name of its object (``h = m``, in the body or
before it, then ``add(x, h.v)``; an item of a container holding it, ``h =
tab[0]``, ``for h in tab``) is read as the object's (``m.v``), in the
order the code runs (``_loop_alias.py``).

Where the body reads an attribute or an item it set first (``st.w = 1.0 /
(it + 1)`` then ``add(x, st.w)``), it reads what that was computed from; where
it reads a property or calls a method of an object of the program's own
(``st.src``, ``st.pick()``), what their code reads off the object; a
classmethod of a class of its own or a function of a module of its own
(``Clock.pick(bufs)``, ``pp.next_pair()``), what their code reads off the
class or of the module's globals. A global that a helper called by name
changes and that the body reaches as its module's attribute too (``swap()``
and ``pp.CUR``) is named once, as the attribute (``named_once``).

A dict's order changed is read only where the body may read it by position
(``_loop_order.py``: not where a name of the frame alone holds it and the body
reads it by key, sorts its keys or does the same for each item in a for
loop over it, running none of the program's own code).

A function held in a name (a closure, a bound method, a partial: ``cur, bump =
c.cur, c.bump``), called by the body or handed to a helper of the program's
that calls it (``step(body, bufs, cur, bump)``), reads what its code reads of
what it holds: ``_loop_held.py``.

The helpers the body calls are followed three deep (``sweep(body, st)``
calling ``step(body, st)``; their globals, closures' cells, mutable defaults
and the functions' own attributes are taken with the names'), as called by
their names or through a name the body set to one or more of them
(``smoother = a if m == "j" else b``, ``TABLE[name](body, st)``: each; a
table in a table three deep, ``NESTED["g"]["a"]``, ``for name, g in PAIRS``,
one an attribute holds, ``H.table["a"]``, and ``getattr(NS, "a")`` as
``NS.a``). A body that changes a slot and calls a function its code cannot
tell (a lambda made there, one a call returns) is refused at that call (``_refuse_blind``):
it may read the slot again. A counter only reported is refused where the
value it held when the body was recorded is a number of the same type a
kernel of the body takes, which the message says (``_kernel_numbers``: not
a memset's value).

What the body's code reads is told by ``_Region`` (``_loop_code.py``), what it
names by ``_loop_names.py``, what the helpers it calls do with a slot by
``HelperUses`` (``_loop_helpers.py``); the slots' paths and the refusal's text are in
``_loop_paths.py``, the slots a snapshot holds (``_slots``, ``_shadowed``) in
``_loop_slots.py``.
"""
from __future__ import annotations

import contextlib
import inspect
import types
from functools import partial

from ..arrays import is_array
from ..chains import MISSING
from ..context import ProxyStream
from ..errors import ArgumentError, user_frame_object
from ..names import _filled, _global_names
from ..owners import _attr
from ..scalar import Scalar
from ._loop_code import _Region
from ._loop_grown import first_reads
from ._loop_helpers import _DEPTH, HelperUses, _kernel_numbers, _recorded_numbers
from ._loop_held import (_function, _helper_roots, _own_function, binding, graph_code, handed_use,
                         named_directly, recorded_lines)
from ._loop_names import _attribute_paths, _named_paths, _names, table_items
from ._loop_order import _instructions, reads_order
from ._loop_paths import (_LEN, _NEXT, _ORDER, _found, _label, _message, _reads, _resolve,
                          _within)
from ._loop_slots import (Slots, _Cut, _changed, _changed_values, _shadowed, _slots,
                          _with_named, grown)
from ._loop_stack import _LOADS, _STORES
from ._loop_work import loads_on, work_callable

_CONTEXTLIB = contextlib.__file__
_FUNCTIONS = frozenset({types.FunctionType, types.MethodType})   # (by identity, not ==)
_MAX_TABLE = 4096   # the functions of a longer table a body names are not watched


def _user_frame():
    """The user's frame the block is written in: past contextlib's frames and the
    generator of a ``@contextmanager`` wrapping the block."""
    f = user_frame_object()
    while f is not None and (f.f_code.co_filename == _CONTEXTLIB or (
            f.f_code.co_flags & inspect.CO_GENERATOR and f.f_back is not None and
            f.f_back.f_code.co_filename == _CONTEXTLIB)):
        f = f.f_back
    return f


class _Held:
    """What the names of a helper's code hold, looked up as asked: its parameters
    a bound method or a partial binds, its closure's filled cells, its globals."""

    __slots__ = ("fn", "bound")

    def __init__(self, fn, bound: dict):
        self.fn, self.bound = fn, bound

    def get(self, name: str, default=None):
        if name in self.bound:
            return self.bound[name]
        code = self.fn.__code__
        if name in code.co_freevars:
            cell = self.fn.__closure__[code.co_freevars.index(name)]
            return cell.cell_contents if _filled(cell) else default
        if name in code.co_varnames or name in code.co_cellvars:
            return default   # (a local: unknown here)
        return self.fn.__globals__.get(name, default)


class LoopState(HelperUses):
    """The slots a loop body may read, taken when it is entered (``body``: the
    ``body=`` callable, or None for a ``with`` block; ``t``: the trace)."""

    conditions = None   # (a _Caller's: none)

    def __init__(self, body, t, conditions=None):
        self.frame, self.fn, self.bound, self.extra = None, None, None, {}
        self.conditions = conditions   # condition_frames where the block was made
        self.made = len(t.temporaries)   # the temporaries the trace had made then
        if t.loop_slots is None:
            t.loop_slots = Slots()
        self.slots = t.loop_slots   # the names' slots the trace keeps (or None)
        self.owners: dict = {}   # a helper's root -> (the helper, its name there)
        self.now: dict = {}      # the roots when the body is closed
        self.after = None        # their slots then (closed)
        self.helpers = self.slots.regions   # a helper's code -> its _Region (the trace's)
        if body is not None:
            self.fn, self.bound, self.extra = _function(body)
        if self.fn is None:
            self.frame = _user_frame()
            self.entered_at = self.frame.f_lasti if self.frame is not None else -1
        self.scope = self._roots()   # what the names held when the body began
        self.taken = self._taken(self.scope)   # name -> its slots then
        self.before: dict = {}   # all their slots (closed, where some changed), and
        #                          those _shadowed adds
        self.changed: list = []
        self.grown: dict = {}    # slots new under a name the body began with (closed)

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
        shared = code.co_cellvars + code.co_freevars   # (t of a nested now(): the frame's t)
        self._helpers(code, out, out, shared, 0, set())
        return out

    def _helpers(self, code, names: dict, out: dict, shared: tuple, depth: int,
                 seen: set) -> None:
        """Add to ``out`` what the helpers ``code`` calls hold (its names holding
        ``names``), and those they call, ``_DEPTH`` helpers deep: their closures'
        cells, globals and defaults (``_helper_roots``)."""
        for name in _names(code, _LOADS):   # helpers the body calls: what they hold
            v = names.get(name)
            if type(v) in _FUNCTIONS or issubclass(type(v), partial):   # (type: a weak
                self._helper(v, name, out, shared, depth, seen)        # proxy's may be dead)
            elif graph_code(v)[0] is not None:   # a @gt.graph function or bound method
                self._helper(v, name, out, shared, depth, seen)
            else:   # TABLE["step"](body, x), TABLE[name](...), for g in STEPS: g(...)
                for steps, item in table_items(v, _MAX_TABLE):   # (one too long to read
                    #                    which it calls: a call refused if this changes)
                    self._helper(item, _label((name,) + steps), out, shared, depth, seen)
        for path in _attribute_paths(code):   # pp.swap(), Bufs.flip(), st.step(): the
            v = _found(names, path)           # globals of the program's functions they run
            fn = v if type(v) in _FUNCTIONS else graph_code(v)[0]   # (model.step: @gt.graph)
            if fn is not None and _own_function(fn):
                self._helper(v, _label(path), out, shared, depth, seen)
            for steps, item in table_items(v, _MAX_TABLE):   # H.table["a"](body, x)
                self._helper(item, _label(path + steps), out, shared, depth, seen)

    def _helper(self, v, name: str, out: dict, shared: tuple, depth: int, seen: set) -> None:
        _helper_roots(v, name, out, self.owners, shared)
        fn, bound, _ = binding(v)
        if depth + 1 < _DEPTH and fn is not None and fn.__code__ not in seen and \
                _own_function(fn):   # sweep(body, st) calling step(body, st)
            seen.add(fn.__code__)
            self._helpers(fn.__code__, _Held(fn, bound), out, shared, depth + 1, seen)

    def _taken(self, roots: dict) -> dict:
        """name -> its slots (those the trace's ``Slots`` kept where nothing they
        were read from has changed; where its walk left items out, with those
        under the paths the code names, ``_with_named``)."""
        taken = {name: _slots(v, name) if self.slots is None else
                 self.slots.taken(v, name) for name, v in roots.items()}
        for name, slots in taken.items():
            if type(slots) is _Cut:
                taken[name] = _with_named(slots, roots[name], name,
                                     _named_paths(self._code()[0]))
        return taken

    def _snapshot(self, roots: dict) -> dict:
        out: dict = {}
        for slots in self._taken(roots).values():
            out.update(slots)
        return out

    def refuse(self, t, regions, what: str, source) -> None:
        """Refuse the body (its recorded ``regions``) if its Python changed a slot
        the next iteration reads (the module's rules)."""
        if self.fn is None and self.frame is None:
            return
        after, changed = self.closed()
        if not changed and not self.grown:   # (st.v = 3.0 new: read before it, maybe)
            return
        region = _Region(self._code(), self.scope, now=self.now)   # (now: if FLAG: taken)
        held, reads = {}, {}
        for p, (v, _, where) in self.before.items():
            if v is not None:   # (an array's or a number's other slots: a swap)
                held.setdefault(id(v), []).append(p)
            if where is not None:   # one slot reached by several names: read as any
                reads.setdefault(where, set()).add(self._carried(region, p))   # of them is
        recorded, kernels = _recorded_numbers(regions), _kernel_numbers(regions)
        sizes = {d for tmp in t.temporaries[self.made:] for d in tmp.shape}   # the body's
        hits, work, equal, kept = [], self._work(region, regions), {}, []
        condition = self._condition()
        for p in changed:
            (old, old_bytes, where), (new, new_bytes, _) = self.before[p], after[p]
            if _reads(condition, p):   # gt.cond(c) > lim, then lim += 1: tested again
                hits.append((p, "condition"))   # before each iteration
                continue
            read = self._carried(region, p)
            both = reads.get(where, ())   # (st = self.state; st.result = ...: stored)
            if read is False or False in both:
                continue
            read = True if True in both else read
            if p[-1] == _ORDER and not self._reads_order(p, regions):
                continue   # sorted(d), d[k], a for loop doing the same for each item
            kept.append(p)
            via = handed_use(self, region, p, regions)   # step(body, bufs, cur, bump)
            if region.decides_with(p, work) or via == "flow":   # for _ in lst, if k == 0
                hits.append((p, "flow"))
                continue
            if old_bytes is not None and new_bytes is not None and old_bytes != new_bytes:
                pairs = _changed_values(old, old_bytes, new_bytes)
                if via or read is True and (region.indexes_with(p) or   # indices changed: idx[0]
                                     self._took(region, p, [y for _, y in pairs], read, recorded,
                                                    regions) or
                                     not pairs and (region.calls_with(None, p) or   # (a large
                                                    self._hands_on(region, p, read, regions))):
                    # one, its values not kept: a call of the body's work took it)
                    hits.append((p, "number"))
                elif read is True and any((type(x), x) in kernels for x, _ in pairs):
                    hits.append((p, "number"))   # (a value a kernel takes: t[0] handed)
                    equal[p] = next((x, kernels[type(x), x]) for x, _ in pairs
                                    if (type(x), x) in kernels)
            elif type(old) is Scalar or type(new) is Scalar:   # p, q = q, p: p handed
                swapped = any(q != p for q in held.get(id(new), ()))   # to a kernel
                if (read is True or swapped) and any(
                        (Scalar, id(x)) in recorded for x in (old, new)):
                    hits.append((p, "number"))
            elif old is None or new is None:   # prev = a: only where it decides the flow
                continue
            elif is_array(old) or is_array(new):
                swapped = any(q != p for q in held.get(id(new), ()))   # held elsewhere
                if (read is True or swapped or via) and any(   # before: a swap, a rotation
                        is_array(x) and t.cached_buffer(x) is not None for x in (old, new)):
                    hits.append((p, "array"))
            elif work_callable(old) or work_callable(new):   # kern = mul after kern[1, 4, body]
                if via or self._launches(region, p, read, work, regions):
                    hits.append((p, "work"))
            elif p[-1] == _ORDER:   # d["a"] = d.pop("a") then src, dst = d.values(): by
                # the position of its items (a length changed: told as the length)
                if p[:-1] + (_LEN,) not in changed and (
                        read is True and region.indexes_with(p) or
                        self._hands_on(region, p, read, regions)):
                    hits.append((p, "order"))
            elif p[-1] in (_LEN, _NEXT):   # lst.append(0) then body.zeros(len(lst)),
                # a[:len(lst)]; x = stack.pop(), next(it) then add(x, 1.0)
                if read is True and (region.sizes_with(p) or region.indexes_with(p)) or \
                        via or self._hands_on(region, p, read, regions) or \
                        self._helper_returns(region, p, regions):
                    hits.append((p, "size" if region.sizes_with(p) else "number"))
            elif read is True and (old in sizes or new in sizes) and region.sizes_with(p):
                hits.append((p, "size"))   # body.zeros(m)
            elif via or read is True and region.indexes_with(p) or \
                    self._took(region, p, [new], read, recorded, regions) or \
                    self._hands_on(region, p, read, regions) or \
                    read is None and self._helper_picks(region, p, regions) or \
                    read is not False and self._helper_returns(region, p, regions):
                hits.append((p, "number"))
            elif (type(old), old) in kernels:   # (n += 1; log.debug(n), but a kernel
                hits.append((p, "number"))      # takes a number that n held: which, untold)
                equal[p] = (old, kernels[type(old), old])
        hits += first_reads(self, region, work, recorded, regions)   # getattr(st, "v", 1.0)
        if hits:   # then st.v = 3.0, new to st
            raise ArgumentError(_message(self.named_once(hits), what, equal, source), source)
        self._refuse_blind(region, kept, what, source)

    def _condition(self) -> set:
        """What the condition of the ``with s.while_loop(...)`` block reads (its
        ``with`` line, before the body), tested again before each iteration; for
        ``s.while_loop(gt.cond(c) > lim, body=fn)``, what it reads in the caller's
        code that ``fn`` reaches by the same name: a closure's cell of the caller
        (``nonlocal lim``) or a global of the caller's module, its own or a
        helper's. (A condition built on an earlier line, ``cnd = gt.cond(c) > lim``,
        holds the bound it was built with, as it would run eagerly: the names it
        was built from are not its reads.) A ``with`` block made by a helper
        (``with looping(s, gt.cond(c) > lim) as body``) reads what the call in the
        block's frame hands it (``self.conditions``, taken where it was made), and
        the globals of the block's module the helper's code reads."""
        if self.fn is None:
            if self.frame is None or not self.conditions:
                return set()
            mine, names = self.frame, _global_names(self.frame.f_code)
            return {p for frame, reads in self.conditions for p in reads
                    if frame is mine or frame.f_globals is mine.f_globals and
                    p[0] in _global_names(frame.f_code) and p[0] in names}
        out: set = set()
        for frame, reads in self.conditions or ():
            code, mine = self.fn.__code__, frame.f_code   # (and each caller handing on
            shared = {n for n in code.co_freevars if n in mine.co_cellvars}   # its cond)
            shared |= {n for n in self.scope if n in _global_names(mine) and (
                n in _global_names(code) and self.fn.__globals__ is frame.f_globals or
                self.owners.get(n, (None,))[0] is not None and
                getattr(self.owners[n][0], "__globals__", None) is frame.f_globals)}
            out |= {p for p in reads if p[0] in shared}
        return out

    def _launches(self, region, path: tuple, read, work: set, regions, keep=None) -> bool:
        """Whether the body's work is done by the kernel or function at ``path``: its
        code loads it, read first, on a line that recorded work (``kern[1, 4,
        body](x)``, ``step(body, x)``, ``body.launch(k, ...)``, ``body.child(g,
        x)``), hands it to a call there (``run(body, kern, x)``) or calls there
        what it computed from it (``go = kern[1, 4, body]``, then ``go(x)``); or a helper
        the body calls that recorded work loads it so by its own name (``KERN``).
        ``keep``: the offsets of the code after a block, which ``region`` reads."""
        code, lo, hi = self._code() if keep is None else (self.frame.f_code, -1, 1 << 62)
        if read is True and (region.takes_on(work, path) or region.calls_by(work, path) or
                             loads_on(code, lo, hi, path, work, keep)):
            return True
        sources = recorded_lines(regions)
        if read is True and any(callee == path and any(   # step(s, x): the one it
                fn is not None and sources & self._lines_of(fn) for fn in (   # held or holds
                    binding(_resolve(names, path))[0] for names in (self.scope, self.now)))
                for _, callee, _, _ in region.passes):
            return True
        for _, _, fn, own, held in self._callees(region, path, sources):
            lines = {line for f, line in sources if f == fn.__code__.co_filename}
            if any(own.carried(q) is True and loads_on(fn.__code__, -1, 1 << 62, q, lines)
                   for q in held):
                return True
        return False

    def _reads_order(self, path: tuple, regions, offsets=None) -> bool:
        """Whether the block (``offsets``: the code after it, in the user's frame)
        may read the order of the dict at ``path`` (``_loop_order.py``): where a
        name of the user's frame alone holds it."""
        where = self.before[path][2]
        if self.frame is None or len(path) != 2 or any(
                w == where and q != path for q, (_, _, w) in self.before.items()):
            return True
        code, lo, hi = self._code()
        if offsets is None:
            offsets = {ins.offset for ins in _instructions(code) if lo < ins.offset < hi}
        return reads_order(code, offsets, path[0], self.before[path][0] + self.after[path][0],
                           self.now, self.frame.f_globals, regions)

    def named_once(self, hits: list) -> list:
        """``hits`` (``(path, ...)``) but a global of a helper the body calls by name
        that another names as its module's attribute (``CUR`` of ``swap()``, also
        ``pp.CUR``), or one reached through what a bound method or a partial binds
        that another names from a name of the block (``cur.__self__.k``, also
        ``m.c.k``): a refusal names each slot once."""
        def module_of(q: tuple, n: int):
            return _attr(_resolve(self.now, q[:n]), "__dict__") if n > 0 else None
        out = []
        for h in hits:
            fn, name = self.owners.get(h[0][0], (None, None))
            rest = ((".", name),) + h[0][1:]
            if fn is None or name != h[0][0] or not any(q[len(q) - len(rest):] == rest and module_of(
                    q, len(q) - len(rest)) is fn.__globals__ for q, *_ in hits):
                out.append(h)
        return named_directly(out, self.before)

    def closed(self) -> tuple:
        """``(the slots now, the paths of those the body changed)``, taken once, when
        the body is closed (``self.now``: what the names hold then)."""
        if self.after is None:
            self.now = self._roots()
            taken, self.after = self._taken(self.now), {}
            moved = [n for n, slots in taken.items() if self.taken.get(n) is not slots]
            # (a name whose slots are those taken before changed nothing)
            new = {p: v for n in moved for p, v in taken[n].items()}
            old = {p: v for n in moved for p, v in self.taken.get(n, {}).items()}
            shadowed = _shadowed(old, new, self.now)
            self.changed = [p for p, v in old.items() if p in new and _changed(v, new[p])]
            self.grown = {p: new[p] for n in moved if n in self.scope   # st.v = 3.0, first
                          for p in grown(self.taken.get(n, {}), taken[n], self.now,
                                         set(_named_paths(self._code()[0])))}
            self.changed += [p for p, v in shadowed.items() if _changed(v, new[p])]
            if self.changed:   # (else none is asked for)
                for slots in taken.values():
                    self.after.update(slots)
                for slots in self.taken.values():
                    self.before.update(slots)
                self.before.update(shadowed)
        return self.after, self.changed

    def first_set(self) -> list:
        """The paths of the slots under the names the body set first, that held
        nothing when it began (``v = 3.0`` in a branch; a global a ``body=fn``
        sets; names the block's code names, not a helper's globals), bar those
        holding a proxy stream (the block's ``as`` names, a
        nested block's), a module or a class: code after the block reading them
        would see what the one recorded pass left, where run eagerly they would
        be unset (a branch not taken, a loop run no time) or set by another arm
        or iteration. So are the slots an object or a dict the body began with
        has that it had not (``st.v = 3.0``, ``d["k"] = 3.0``: ``grown``). Their
        old value, in ``before``, is ``MISSING``."""
        self.closed()
        out, named = [], set(_names(self._code()[0], _LOADS | _STORES))   # (not a helper's)
        for name, v in self.now.items():
            if name in self.scope or name not in named or \
                    isinstance(v, (ProxyStream, types.ModuleType, type)) or \
                    isinstance(v, tuple) and v and \
                    all(isinstance(x, ProxyStream) for x in v):   # (then, otherwise); cases
                continue
            for p, slot in self._taken({name: v})[name].items():
                self.after[p], self.before[p] = slot, (MISSING, None, None)
                out.append(p)
        for p, slot in self.grown.items():   # st.v = 3.0, d["k"] = 3.0: new to an object
            self.after[p], self.before[p] = slot, (MISSING, None, None)
            out.append(p)
        return out

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

"""The arrays of a trace: its roots and the Buffers of the views lying in them.

``Tracer`` (``trace.py``) inherits ``_Roots``. A trace's roots are the
function's arguments, the arrays it reaches by name, its temporaries and the
state of libraries and of cooperative launches; every other array a node uses
must lie in one of them (``buffer``). Each Buffer has a slot, which access
codes name. ``Tracer.__init__`` makes the state these methods keep; the parts
every launch reads are ``_Hot``'s slots there.
"""
from __future__ import annotations

import types
from bisect import bisect_right

import numpy as np

from .object_keys import key_objects
from .owners import _attributes
from .arrays import as_buffer, device_buffer, interface_of, is_array, key_interface
from .buffers import Buffer
from .errors import ArgumentError, user_frame
from . import _driver, arrays as _arrays, placement as _placement, \
    regions as _regions, temporary as _temporary


class _Roots:
    """The buffers part of ``Tracer``'s recording API (``buffer``, ``cached_buffer``,
    ``root_holding``, ``temporary``, ``library_state``, ``cooperative``) and the
    roots, views and slots behind it."""

    __slots__ = ()

    def add_argument(self, label: str, obj) -> Buffer:
        """Name an array the function receives or reaches by a global name.

        Such an array is its own base: it moves only with itself when a later
        call rebinds the graph, whatever other argument it lies in.
        """
        hit = self._bufs.get(id(obj) >> 4)   # the same array under two names: the first
        if hit is not None:
            return hit[1]
        buf = as_buffer(obj)
        buf.label = label
        self._register(obj, buf)
        self._add_root(buf)
        return buf

    def mark_arguments(self) -> None:
        """The roots named so far are the function's arguments: a later call may
        rebind them without tracing again (``is_argument``)."""
        self._argument_roots = {id(b) for b in self._roots}

    def is_argument(self, buf: Buffer) -> bool:
        """Whether ``buf`` lies in an argument of the function (not in an array it
        reaches by name, which a later call cannot change without a new trace)."""
        return id(buf.base) in self._argument_roots

    def keyed(self, obj) -> bool:
        """Whether the call's cache key holds ``obj`` (``key_objects``): a kernel the
        function reaches by name, ``self`` holds or the call passes, which a later
        call holding another one there traces anew for."""
        if self._key_objects is None:
            self._key_objects = key_objects(self.key())
        return id(obj) in self._key_objects

    def add_arguments(self, items: list) -> None:
        """``add_argument(label, obj)`` for each ``(label, obj)`` pair, in order.
        ``_buffers.c``'s ``roots`` takes the plain device arrays on a host of one
        device (``regions.use_compiled_buffers``); ``add_argument`` the rest."""
        fast, i, n = _regions.TAKE[0], 0, len(items)
        device = None if fast is None or _arrays._sim_devices or \
            _driver.device_count() > 1 else 0
        while i < n:
            if device is not None:
                i = fast.roots(items, i, device, 2 << device, self._slots, self._bufs,
                               self._roots)
                self._root_index = None
                if i == n:
                    break
            self.add_argument(*items[i])
            i += 1

    def temporary(self, shape, dtype, name: str | None = None, device: int | None = None):
        """A graph-owned array named ``name`` (default ``tmp0``, ``tmp1``...): a
        root like an argument, at a virtual address until a graph places it, on
        GPU ``device`` (None: where the kernels using it run, ``placement.finish``).
        A name taken is refused in the traced function's own code; inside a graph
        function it calls (``self.nested``: inlined or a child graph, which may
        run more than once), or taken by a temporary made there, it becomes
        ``name_1``, ``name_2``... A name given wins over an automatic one: the
        temporary named so before (in a helper) takes the next free ``tmpK``."""
        taken = self._labels()
        if name is None:
            name = self._free("tmp", 0, taken)
            self._auto[name] = None   # its root, once made
        elif not isinstance(name, str) or not name:
            raise ArgumentError(f"a temporary's name must be a non-empty str, not {name!r}")
        elif name in self._auto:
            self._rename_automatic(name)
        elif name in taken and (self.nested or name in self._nested_names):
            name = self._free(f"{name}_", 1, taken)
        elif name in taken:
            raise ArgumentError(f"the name {name!r} is taken by another temporary, an "
                                f"argument of {self.name} or an array it reaches by that "
                                "global or closure name: give this temporary another one, "
                                "or leave name= out; a plain helper that runs twice makes its "
                                "temporary twice (decorated with @gt.graph, its temporaries "
                                f"are named {name}_1, {name}_2...)")
        if self.nested:
            self._nested_names.add(name)
        tmp, root = _temporary.make(self, shape, dtype, name, user_frame())
        if self._auto.get(name, root) is None:
            self._auto[name] = root
        root.device = device   # before it is registered: launches read it from there
        self._register(tmp, root)
        self._add_root(root)
        self._temps.append((tmp, root))
        return tmp

    def _free(self, stem: str, start: int, taken: set, but: str | None = None) -> str:
        """The first ``stem + k`` (from ``start``) that no root is labelled and that is
        not ``but``. Labels are never given back, so the search goes on from where the
        last one stopped: a trace making n temporaries looks at n names, not n * n."""
        k = self._free_from.get(stem, start)
        while f"{stem}{k}" in taken or f"{stem}{k}" == but:
            k += 1
        self._free_from[stem] = k
        return f"{stem}{k}"

    def _rename_automatic(self, name: str) -> None:
        """Give the temporary named ``name`` automatically the next free ``tmpK``
        (and its views their names in it), leaving ``name`` to one named so."""
        root = self._auto.pop(name)
        taken = self._labels()
        new = self._free("tmp", 0, taken, name)
        root.label = next(t for t, r in self._temps if r is root)._life.name = new
        taken.discard(name)
        taken.add(new)
        if name in self._nested_names:
            self._nested_names.discard(name)
            self._nested_names.add(new)
        self._auto[new] = root
        for b in self._slots:   # views name themselves after their root, when first asked
            if b.base is root and b is not root:
                b.label = None

    def library_state(self) -> Buffer:
        """The state libraries keep of their own (a handle's workspace, a module's
        weights a region holds deeper than graphtrace looks): one byte at an
        address no memory has, read and written by every captured region, so
        that regions run in the order they were recorded. Made at the first."""
        buf = self._library
        if buf is None:
            buf = self._library = self._state(_temporary.LIBRARY_STATE, "library state")
        return buf

    def host_order(self) -> Buffer:
        """What every host callback reads and writes, so that their Python runs in
        the order the code recorded them (a log's lines, a counter's steps), as
        it would one after another: one byte at an address no memory has. Made
        at the first."""
        buf = self._host_order
        if buf is None:
            buf = self._host_order = self._state(_temporary.HOST_ORDER, "host callbacks")
        return buf

    def cooperative(self) -> Buffer:
        """What every cooperative launch reads and writes, so that they run one at
        a time (two at once broke each other's grid syncs on an H200): one byte at
        an address no memory has. Made at the first."""
        buf = self._cooperative
        if buf is None:
            buf = self._cooperative = self._state(_temporary.COOPERATIVE,
                                                  "cooperative launches")
        return buf

    def _state(self, address: int, label: str) -> Buffer:
        buf = Buffer(address, (1,), None, np.uint8, None, None)
        buf.label = label
        self._register(None, buf)
        self._add_root(buf)
        return buf

    @property
    def temporaries(self) -> list:
        """The temporaries made so far, oldest first."""
        return [tmp for tmp, _ in self._temps]

    def cached_buffer(self, obj) -> Buffer | None:
        hit = self._bufs.get(id(obj) >> 4)   # the entry holds obj: no other object has its key
        if hit is not None:
            return hit[1]
        key, _ = interface_of(obj)   # a view made again (see _entry)
        try:
            same = self._views.get(key) if key is not None else None
        except TypeError:   # lists in the interface
            same = None
        return same[0] if same is not None else None

    def buffer(self, obj) -> Buffer:
        """The (labelled) ``Buffer`` of an array, cached for the trace.

        Every array a node uses must lie in an argument or in an array the
        function reaches by a global or closure name: those are the arrays a
        later call can change, and that the cache key watches. Any other array
        (a helper function's global, an object's attribute, an array made or
        uploaded during the trace) would be frozen into the graph unseen.
        """
        hit = self._bufs.get(id(obj) >> 4)
        if hit is not None:
            return hit[1]
        entry = self._entry(obj)
        if entry is None:
            as_buffer(obj)   # raises: no array
        return entry[0]

    def _entry(self, obj) -> tuple | None:
        """``(Buffer, slot << 2, its device bit)`` of an object not in the cache (see
        ``buffer``), or None if it is no array. A device array of the type and
        geometry of one seen before (a view made again) gets that one's Buffer,
        without a cache entry of its own: a program that makes views at every
        launch keeps none of them alive."""
        key, cai = interface_of(obj)
        if key is not None:   # an array: its type has the interface
            try:
                same = self._views.get(key)
            except TypeError:   # lists in the interface: not kept
                key = same = None
            if same is not None:
                return same
            if cai is None:   # a cupy or numba view of a new geometry: its interface now
                cai = key_interface(obj, key)
        elif cai is None and not is_array(obj):
            return None
        fast = self._fast_view
        if fast is not None and cai is not None and not fast[1]:
            entry = fast[0](obj, cai, key, *self._index(), self._roots, self._slots,
                            self._bufs, self._views, fast[2])
            if entry is not None:   # the common case, compiled (_buffers.c's view)
                return entry
        buf = device_buffer(obj, cai) if cai is not None else as_buffer(obj)
        root = self._root(buf)
        if root is None and buf.lo == buf.hi and not buf.is_host:
            # an empty view (a library may give it any address): no bytes; one of an
            # empty temporary lies in it (the roots' index leaves empty ones out)
            root = next((r for _, r in self._temps if r.lo == buf.lo), buf)
        if root is None:
            held = _held_by_argument(self.given, buf)
            own = self.self_param
            field = _field_of(self.given.get(own), held, own) if own is not None else None
            if field is not None:   # a namedtuple's self[0]: its field by name
                raise ArgumentError(
                    f"an array used here ({_describe(buf)}) is {own}.{field[1]}, a field of "
                    f"{own}, a namedtuple {type(self.given[own]).__name__}: graphtrace reads a "
                    "graph method's arrays off its object's attributes, and a namedtuple's "
                    "fields are items of a tuple, which it does not rebind; pass "
                    f"{own}.{field[1]} to {self.name} as an argument of its own, or make "
                    f"{type(self.given[own]).__name__} a class (or a dataclass) holding "
                    f"{field[1]} as an attribute")
            if held is not None and own is not None and \
                    held.split(".")[0].split("[")[0] == own:
                raise ArgumentError(
                    f"an array used here ({_describe(buf)}) is {held}, which {own} holds where "
                    f"graphtrace does not look: not among the arrays {own} held when the trace "
                    f"of {self.name} began, as graphtrace reads it. An array made or put there "
                    f"during the trace (if {held} is None: {held} = cuda.device_array(n)), "
                    f"or held by a name no code of {self.name} (nor a method of {own}'s class "
                    "it calls) names, such as one known only when code runs (getattr(o, name) "
                    "in a function passed as an argument), or inside a library's object, would "
                    "stay this one at every call, unseen: allocate it before the first call "
                    "(in __init__, or outside the function), make it scratch memory of the "
                    f"graph's own (s.empty(shape, dtype)), name the attribute in the code of "
                    f"{self.name} ({held}), or pass {held} to {self.name} as an argument of "
                    "its own")
            if held is not None:
                raise ArgumentError(
                    f"an array used here ({_describe(buf)}) is {held}, held by an argument "
                    f"object of {self.name}: only arrays passed as arguments (and in their "
                    "lists, tuples and dicts) or reached by a global or closure name, or "
                    "through self for a method, are rebound and watched, so the graph "
                    f"would keep using this one; pass {held} to {self.name} as an "
                    "argument of its own, or reach the object by a global name (LAYER = "
                    "Layer(...) at module level, read as LAYER in the function), or make "
                    f"{self.name} a graph method of the object's class, where it is self")
            raise ArgumentError(
                f"an array used here ({_describe(buf)}) is not an argument of {self.name} "
                "nor an array it reaches by a global or closure name, or, for a method, "
                "through self and the program's own objects self holds (self.opt.v). It may "
                "be an attribute of a module, of a class (Model.W, also read as self.W), of "
                "a library's object or of an argument (mod.BUF, cfg.buf), a global of a helper passed as an argument or of another "
                "object's method, an array nested in more than 9 levels of containers, or "
                "an array made during the trace: graphtrace cannot see when it changes, "
                f"so the graph would keep using this one; pass it to {self.name} as an "
                "argument, or make scratch memory with s.empty(shape, dtype)")
        buf.base = root   # it moves with that one on rebinding, and is named after it
        entry = self._register(obj, buf)[1:]   # holding obj keeps its id unique
        if key is not None:
            self._views[key] = entry
        return entry

    def _labels(self) -> set:
        """The names of the roots (arguments, names reached, temporaries), kept up
        to date from the roots added since the last call."""
        n, labels = self._root_labels
        if n < len(self._roots):
            labels.update(r.label for r in self._roots[n:])
            self._root_labels = (len(self._roots), labels)
        return labels

    def roots_overlapping(self, lo: int, hi: int) -> list:
        """The named arrays with bytes in ``[lo, hi)`` (their hulls'), in order."""
        return [r for r in self._roots if r.lo < hi and lo < r.hi]

    def root_holding(self, address: int) -> Buffer | None:
        """The first named array whose bytes' hull holds ``address``, or None."""
        los, ks, tops = self._index()
        first = None
        j = bisect_right(los, address) - 1
        while j >= 0 and tops[j] > address:   # no earlier root reaches the address
            k = ks[j]
            if self._roots[k].hi > address and (first is None or k < first):
                first = k
            j -= 1
        return None if first is None else self._roots[first]

    def _register(self, obj, buf: Buffer) -> tuple | None:
        """Give ``buf`` a slot, and unless ``obj`` is None cache it as obj's Buffer:
        the entry ``(obj, buf, slot << 2, placement.device_bit(buf))``."""
        slot = len(self._slots)
        self._slots.append(buf)
        if obj is None:
            return None
        entry = self._bufs[id(obj) >> 4] = (obj, buf, slot << 2, _placement.device_bit(buf))
        return entry

    def _slot(self, buf: Buffer) -> int:
        slots, slot_of = self._slots, self._slot_of
        for k in range(self._mapped, len(slots)):   # the slots added since the last call
            slot_of[id(slots[k])] = k
        self._mapped = len(slots)
        slot = slot_of.get(id(buf))
        if slot is None or self._slots[slot] is not buf:
            self._register(None, buf)
            slot = len(self._slots) - 1
        return slot

    def _add_root(self, buf: Buffer) -> None:
        self._roots.append(buf)
        self._root_index = None

    def _index(self) -> tuple:
        """``(lo, root, highest end)`` lists of the non-empty roots sorted by address:
        each root's start, its position in ``_roots``, and the highest end of it and
        every root before it in this order (made again after a root is added)."""
        index = self._root_index
        if index is None:
            order = sorted((r.lo, k) for k, r in enumerate(self._roots) if r.lo < r.hi)
            tops, top = [], -1
            for lo, k in order:
                top = max(top, self._roots[k].hi)
                tops.append(top)
            index = self._root_index = ([lo for lo, _ in order], [k for _, k in order], tops)
        return index

    def _root(self, buf: Buffer) -> Buffer | None:
        """The named array a view lies in: it moves with that one on rebinding.

        The array must hold every byte of the view; where that cannot be told
        (huge strided views) an array is chosen only if it is the one candidate.
        Of several, the first named wins.
        """
        los, ks, tops = self._index()
        found = []
        j = bisect_right(los, buf.lo) - 1
        while j >= 0 and tops[j] >= buf.hi:   # no earlier root reaches past the view
            if self._roots[ks[j]].hi >= buf.hi:
                found.append(ks[j])
            j -= 1
        if len(found) == 1:   # the usual case: one argument holds the view, or none
            root = self._roots[found[0]]
            if root.step == 0 and root.hi - root.lo == root.run:   # one run: it holds it
                return root
            return root if root.contains(buf) is not False else None
        candidates = [self._roots[k] for k in sorted(found)]
        return next((r for r in candidates if r.contains(buf)), None)


def _describe(buf: Buffer) -> str:
    where = "host" if buf.is_host else f"device {buf.device}"
    return f"{buf.dtype}{list(buf.shape)} on {where}"


def _field_of(obj, held, own: str):
    """``(index, field name)`` where ``held`` is an item of a namedtuple ``own``
    (``self[0]`` of ``class M(namedtuple("M", "buf"))``); None for anything else."""
    fields = getattr(type(obj), "_fields", None) if isinstance(obj, tuple) else None
    if not fields or held is None or not held.startswith(f"{own}[") or \
            not held.endswith("]") or not held[len(own) + 1:-1].isdigit():
        return None
    i = int(held[len(own) + 1:-1])
    return (i, fields[i]) if i < len(fields) else None


def _held_by_argument(given: dict, buf: Buffer, depth: int = 3) -> str | None:
    """Where an argument object (its attributes, and the lists, tuples and dicts it
    holds, ``depth`` levels deep) holds the array ``buf`` lies in: ``model.w``; None
    where none does. Only asked for the error of an array no root holds."""
    todo = [(name, v, 0) for name, v in given.items()]
    seen: set = set()
    while todo:
        path, v, d = todo.pop(0)
        if id(v) in seen or d > depth or isinstance(v, (str, bytes, int, float, complex)):
            continue
        seen.add(id(v))
        if is_array(v):
            if not d:   # an argument: a root already
                continue
            try:
                b = as_buffer(v)
            except Exception:  # noqa: BLE001  (an array library's object answering oddly)
                continue
            if b.lo <= buf.lo < max(b.hi, b.lo + 1) and b.is_host == buf.is_host:
                return path
            continue
        owner = v.__self__ if isinstance(v, types.MethodType) else \
            getattr(v, "instance", None) if type(v).__module__ == "graphtrace.function" \
            else None   # apply(model.op, x): model.op's object (a graph method's too)
        if owner is not None:
            todo.append((f"{path}.__self__", owner, d))
        elif isinstance(v, dict):
            todo += [(f"{path}[{k!r}]", x, d + 1) for k, x in v.items()]
        elif isinstance(v, (list, tuple)):
            todo += [(f"{path}[{i}]", x, d + 1) for i, x in enumerate(v)]
        elif not isinstance(v, type):   # (its __dict__ and slots)
            todo += [(f"{path}.{k}", x, d + 1) for k, x in _attributes(v)
                     if not k.startswith("__")]
    return None

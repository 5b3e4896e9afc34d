"""Regions: the runs of bytes the views a recording takes in touch, for the
dependency inference (``deps.py``). Views with the same bytes share a region
(one run of bytes: its hull; otherwise its exact geometry); each access code's
slot names its view, and ``Regions.update`` finds the regions of the slots new
since the last call, one by one or, for many, in one batch that numpy sorts.
New arrays and regions are taken in by ``_buffers.c`` where it is built
(``use_compiled_buffers``), else in Python: both make the same slots, Buffers
and regions.
"""
from __future__ import annotations

import itertools

import numpy as np

from ._compiled import buffers
from .buffers import Buffer

__all__ = ["BATCH", "Regions", "TAKE", "use_compiled_buffers"]


# New slots from which update() finds their regions in one batch (numpy sorts
# the hulls) rather than one dict lookup each: a dict of millions of regions
# costs a cache miss per slot (bench/STUDIES.md, "Regions in one batch"). A
# batch also sorts the regions so far, so it is taken only when it brings at
# least a quarter as many slots: many large updates cost a sort of each once.
BATCH = 2048


class Regions:
    """The region of every buffer slot of a trace: views of the same bytes share one.

    Kept by the tracer for all its scopes; ``update`` takes in the slots added
    since into the numpy columns the inference reads (grown by doubling, so
    that many small scopes cost nothing per region they do not touch). A large
    update of views of one run each finds their regions in numpy; the key of
    each region and the lists ``lo``, ``hi``, ``buf`` are then made when first
    asked for.
    """

    def __init__(self, slots: list):
        self.slots = slots
        self.count = 0                   # regions
        self._lo: list[int] = []         # region -> byte hull [lo, hi)
        self._hi: list[int] = []
        self._buf: list[Buffer] = []     # region -> one of its views
        self.beyond = False              # a hull ends at 2**64 (past uint64)
        self._keys: dict = {}
        self._pending: list = []         # (first region, its slots' indices): unlisted
        self._n = 0                      # slots taken in
        # slot -> region (-1: an empty view); region -> lo, hi, one run
        self._cols = [np.zeros(16, np.int64), np.zeros(16, np.uint64), np.zeros(16, np.uint64),
                      np.zeros(16, bool)]

    @property
    def of_slot(self):
        return self._cols[0][:self._n]

    @property
    def lo(self) -> list:
        return self._listed()._lo

    @property
    def hi(self) -> list:
        return self._listed()._hi

    @property
    def buf(self) -> list:
        return self._listed()._buf

    @property
    def keys(self) -> dict:
        """region key -> region: ``(lo, hi)`` of a view of one run, else its layout."""
        return self._listed()._keys

    def hulls(self) -> tuple:
        """``(lo, hi)`` of every region, as numpy arrays (uint64)."""
        return self._cols[1][:self.count], self._cols[2][:self.count]

    def columns(self, ids) -> tuple:
        """``(lo, hi, one run)`` of some regions, as numpy arrays."""
        return tuple(c[ids] for c in self._cols[1:])

    def update(self) -> None:
        """Take in the slots added since the last update: in one batch where many
        views of one run come (``_batch``), else one by one (``_buffers.c``'s
        ``regions`` takes views of one run, writing the columns, where built; this
        loop the rest, in slot order)."""
        i, n = self._n, len(self.slots)
        if i == n:
            return
        cols = self._cols   # room for every slot, and for a new region per new slot
        cols[0] = _room(cols[0], n)
        for c in (1, 2, 3):
            cols[c] = _room(cols[c], self.count + n - i)
        fast = TAKE[0]
        if n - i >= max(BATCH, self.count // 4) and not self.beyond:
            i = self._batch(fast, i, n)
        if i < n:
            self._one_by_one(fast, i, n)
        self._n = n

    def _one_by_one(self, fast, i: int, n: int) -> None:
        """Slots ``i`` to ``n``, each looked up by its key (the lists and keys of a
        batch made first)."""
        cols = self._listed()._cols
        at, of_slot, new, lo, hi, one = [], [], [], [], [], []   # this loop's, put at the end
        while i < n:
            if fast is not None:
                i = fast.regions(self.slots, i, self._keys, self._lo, self._hi, self._buf,
                                 *cols)
                if i == n:
                    break
            at.append(i)
            of_slot.append(self._take(self.slots[i], new, lo, hi, one))
            i += 1
        _put(cols[0], at, of_slot)
        for c, values in enumerate((lo, hi, one)):
            _put(cols[c + 1], new, values)
        self.count = len(self._lo)

    def _batch(self, fast, i: int, n: int) -> int:
        """Slots ``i`` on while each is empty or a view of one run (``_buffers.c``'s
        ``runs``), their regions found by sorting their hulls with those of the
        regions of one run so far: the same regions, numbered in the same order
        (by first view), as one lookup per slot makes. The first slot not taken."""
        lo, hi = np.empty(n - i, np.uint64), np.empty(n - i, np.uint64)
        j = (_runs if fast is None else fast.runs)(self.slots, i, lo, hi)
        if j == i:
            return i
        cols, k, m = self._cols, self.count, j - i
        lo, hi = lo[:m], hi[:m]
        views = np.flatnonzero(lo != hi)   # the rest are empty: no region
        cols[0][i:j] = -1
        if not len(views):
            return j
        old = np.flatnonzero(cols[3][:k])   # regions of one run so far (keyed by hull)
        all_lo = np.concatenate((cols[1][old], lo[views]))
        if (all_lo[1:] > all_lo[:-1]).all():   # starts that only rise: no hull twice
            cols[0][i + views] = np.arange(k, k + len(views))
            firsts = views
        else:
            all_hi = np.concatenate((cols[2][old], hi[views]))
            of_view, made = _same_hulls(all_lo, all_hi, old, k)
            cols[0][i + views] = of_view[len(old):]
            firsts = views[made]            # slot offset of each new region's first view
        cols[1][k:k + len(firsts)] = lo[firsts]
        cols[2][k:k + len(firsts)] = hi[firsts]
        cols[3][k:k + len(firsts)] = True
        if len(firsts):
            self._pending.append((k, i + firsts))
            self.count = k + len(firsts)
        return j

    def _listed(self) -> Regions:
        """Itself, with the lists and keys of regions a batch made filled in."""
        for k, slots in self._pending:
            lo = self._cols[1][k:k + len(slots)].tolist()
            hi = self._cols[2][k:k + len(slots)].tolist()
            self._lo += lo
            self._hi += hi
            self._buf += [self.slots[s] for s in slots.tolist()]
            self._keys.update(zip(zip(lo, hi), range(k, k + len(slots))))
        self._pending = []
        return self

    def _take(self, b: Buffer, new: list, lo: list, hi: list, one: list) -> int:
        """The region of a new slot's view (-1: empty); a new region's index, hull
        (clipped to uint64) and whether it is one run go to ``new``, ``lo``, ``hi``,
        ``one``."""
        if b.lo == b.hi:
            return -1
        run = b.step == 0 and b.hi - b.lo == b.run
        key = (b.lo, b.hi) if run else (b.ptr, b.shape, b.strides, b.dtype.itemsize)
        r = self._keys.get(key)
        if r is None:
            r = self._keys[key] = len(self._lo)
            self._lo.append(b.lo)
            self._hi.append(b.hi)
            self._buf.append(b)
            self.beyond = self.beyond or b.hi >= 1 << 64
            new.append(r)
            lo.append(b.lo)
            hi.append(min(b.hi, (1 << 64) - 1))
            one.append(run)
        return r


def _same_hulls(lo, hi, old, k: int) -> tuple:
    """``(region of each hull, index of each new region's first hull)`` where the
    first ``len(old)`` hulls are the regions ``old`` and the rest new views, in
    slot order: equal hulls share a region, new ones numbered from ``k``."""
    order = np.lexsort((hi, lo))   # stable: old regions first, then slot order
    s_lo, s_hi = lo[order], hi[order]
    head = np.ones(len(order), bool)
    head[1:] = (s_lo[1:] != s_lo[:-1]) | (s_hi[1:] != s_hi[:-1])
    first = order[head]                 # each hull's first occurrence
    region = np.empty(len(first), np.int64)
    known = first < len(old)
    region[known] = old[first[known]]
    made = first[~known] - len(old)     # index in views of each new region's first view
    rank = np.argsort(made)
    numbers = np.empty(len(made), np.int64)
    numbers[rank] = np.arange(k, k + len(made))
    region[~known] = numbers
    of_view = np.empty(len(order), np.int64)
    of_view[order] = region[np.cumsum(head) - 1]
    return of_view, made[rank]


def _runs(slots: list, i: int, lo, hi) -> int:
    """``_buffers.c``'s ``runs`` in Python: the hulls of ``slots[i:]`` into ``lo``
    and ``hi`` while each is a Buffer of one run, or empty, below 2**64; the index
    of the first slot not taken."""
    los, his, top = [], [], 1 << 64
    for b in itertools.islice(slots, i, None):
        if type(b) is not Buffer:
            break
        l, h = b.lo, b.hi
        if type(l) is not int or type(h) is not int or not 0 <= l <= h < top or \
                (h != l and (b.step != 0 or h - l != b.run)):
            break
        los.append(l)
        his.append(h)
    lo[:len(los)] = los
    hi[:len(his)] = his
    return i + len(los)


def _room(column, n: int):
    """``column``, or a larger copy (doubled) where it holds fewer than ``n`` items."""
    if n <= len(column):
        return column
    grown = np.zeros(max(2 * len(column), n), column.dtype)
    grown[:len(column)] = column
    return grown


def _put(column, at: list, values: list) -> None:
    """``column[at] = values``: a slice where ``at`` runs on by one (the usual case)."""
    if at and at[-1] - at[0] == len(at) - 1:
        column[at[0]:at[-1] + 1] = values
    elif at:
        column[at] = values


_BUFFERS = buffers()
TAKE = [_BUFFERS]   # new arrays and regions taken in by _buffers.c, or None: in Python


def use_compiled_buffers(on: bool) -> bool:
    """Take in new arrays (``Tracer.add_arguments``) and regions (``Regions.update``)
    by ``_buffers.c`` where built or, ``on=False``, in Python; whether it was on
    before. Both make the same slots, Buffers and regions."""
    was = TAKE[0] is not None
    TAKE[0] = _BUFFERS if on else None
    return was

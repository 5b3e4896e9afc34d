"""Dependency inference: accesses -> edges, then transitive reduction.

In ``deps="data"`` two nodes are ordered when their bytes overlap
(``Buffer.overlaps``) and one of them writes (read-after-write,
write-after-read, write-after-write), and an opaque node is ordered with
every other node. In ``deps="streams"`` the order is that of stream capture:
within each proxy stream, plus fork/join and event edges. In both, the
cooperative launches of a scope run one at a time, in recording order (they
all write one byte, ``Tracer.cooperative``; ``StreamDeps.serial``). Either way a
node's ``deps`` are the transitive reduction of that order: the predecessors
no other predecessor reaches. The reduction of a DAG is unique, so the edges
do not depend on how they are found.

They are found in batch when a scope's recording ends, from its flat access
codes (``columns.Recording``), so that recording an op only appends to lists:

1. Views with the same bytes share a *region* (one run of bytes: its hull;
   otherwise its exact geometry). Regions whose hulls meet no other region's,
   and groups of one-run regions cut into elementary segments at every
   boundary, are *simple*: all accesses to one segment touch the same bytes,
   so a read needs the last write before it and a write the reads since that
   write (or that write). numpy computes these for all segments at once.
2. Strided views whose hulls meet other regions go through ``_Exact``: live
   writes and reads per segment, checked with ``Buffer.overlaps``; a write
   kills the accesses it covers, since whatever conflicts with them later
   conflicts with the write too.
3. Opaque nodes cut the recording into epochs: a node with no other
   predecessor in its epoch follows the epoch's opening barrier, and a
   barrier follows the epoch's sinks.
4. ``reduction.reduce_pairs`` drops the redundant predecessors: a chain
   decomposition answers most questions with one comparison, a search the rest.
"""
from __future__ import annotations

import numpy as np

from . import deps_small
from .buffers import Buffer
from .reduction import _BUILT, _distinct, reduce_pairs
from .regions import Regions, use_compiled_buffers

__all__ = ["DataDeps", "StreamDeps", "make_tracker", "data_pairs",
           "EVERYTHING", "MODE_CODES", "MODE_NAMES", "Regions", "use_compiled_buffers"]

# What an opaque node touches: every byte of the (unified) address space.
EVERYTHING = Buffer(0, (1 << 64,), (1,), np.uint8, -2, None)
EVERYTHING.label = "*"

MODE_CODES = {"r": 1, "w": 2, "rw": 3}   # an access code is slot << 2 | mode code
MODE_NAMES = (None, "r", "w", "rw")
_NO_PAIRS = (np.zeros(0, np.int64), np.zeros(0, np.int64))


class DataDeps:
    """``deps="data"``: nothing happens per node; ``finish`` infers every edge."""

    def __init__(self, regions: Regions):
        self.regions = regions
        self.closers: list[int] = []   # nodes after everything before them (closes)

    def closes(self, pos: int) -> None:
        """Node ``pos`` follows every node recorded before it, and nothing has to
        follow it: an event recorded for work outside the graph, which sees all the
        work before its record done, while the work after it runs as its data allow."""
        self.closers.append(pos)

    def finish(self, rec) -> tuple:
        n = len(rec)
        extra = _closing_pairs(self.closers, rec.opaque) if self.closers else None
        if n <= deps_small.SMALL:   # numpy's calls would cost more than the work
            if _PAIRS[0] is not None and not rec.opaque:
                self.regions.update()
                found = _disjoint_pairs(rec.codes, rec.ends, None, self.regions)
                if found is not None:
                    if extra is not None:
                        found = (np.concatenate((found[0], extra[0])),
                                 np.concatenate((found[1], extra[1])))
                    return deps_small.reduce(n, deps_small.preds_of(n, *found))
            return deps_small.data_deps(n, rec.codes, rec.ends, rec.opaque, self.regions,
                                        extra)
        preds, ops = data_pairs(n, rec.codes, rec.ends, rec.opaque, self.regions)
        if extra is not None:
            preds, ops = np.concatenate((preds, extra[0])), np.concatenate((ops, extra[1]))
        return reduce_pairs(n, preds, ops)

    # Stream structure does not order anything in data mode.
    def fork(self, parent: int, child: int): pass
    def join(self, stream: int, other: int): pass
    def record(self, stream: int, pos: int) -> None: pass
    def wait(self, stream: int, pos: int) -> None: pass


class StreamDeps:
    """``deps="streams"``: edges as stream capture makes them, kept as nodes arrive."""

    def __init__(self):
        self._tail: dict[int, set] = {0: set()}   # what the next op on a stream waits for
        self._events: dict[int, set] = {}          # event node pos -> {pos}
        self._preds: list[int] = []
        self._ops: list[int] = []
        self._serial = None                         # the last node of serial()

    # A stream this tracker has not seen has nothing before it: a body of a loop or
    # branch (a tracker of its own) records on the index of the stream it was
    # opened on, which may be a forked one. Only events recorded here are waited
    # on (control.wait; bodies take no events).
    def add(self, pos: int, stream: int) -> None:
        tail = self._tail.get(stream, ())
        self._preds.extend(tail)
        self._ops.extend([pos] * len(tail))
        self._tail[stream] = {pos}

    def serial(self, pos: int) -> None:
        """Node ``pos`` (added) also follows the previous node given here, on any
        stream: cooperative launches run one at a time (in data mode the byte
        they all write orders them)."""
        if self._serial is not None:
            self._preds.append(self._serial)
            self._ops.append(pos)
        self._serial = pos

    def fork(self, parent: int, child: int):
        self._tail[child] = set(self._tail.get(parent, ()))

    def join(self, stream: int, other: int):
        self._tail[stream] = self._tail.get(stream, set()) | self._tail.get(other, set())

    def record(self, stream: int, pos: int) -> None:
        self._events[pos] = {pos}

    def wait(self, stream: int, pos: int) -> None:
        self._tail[stream] = self._tail.get(stream, set()) | self._events[pos]

    def finish(self, rec) -> tuple:
        return reduce_pairs(len(rec), np.array(self._preds, np.int64),
                            np.array(self._ops, np.int64))


def _closing_pairs(closers: list, opaque: list) -> tuple:
    """``(preds, ops)`` putting each closer after every node before it: after the
    nodes since the latest closer or barrier before it (and that one), which
    follows all the rest already."""
    marks = sorted(set(closers) | set(opaque))
    preds, ops, at = [], [], 0
    for m in marks:
        if m in closers:   # (few: an event record each)
            preds += range(at, m)
            ops += [m] * (m - at)
        at = m
    return np.array(preds, np.int64), np.array(ops, np.int64)


def make_tracker(mode: str, regions: Regions | None = None):
    if mode == "data":
        return DataDeps(regions or Regions([]))
    if mode == "streams":
        return StreamDeps()
    raise ValueError(f'deps must be "data" or "streams", not {mode!r}')


# --- data: accesses -> predecessor pairs ---------------------------------------------
def data_pairs(n: int, codes: list, ends: list, opaque: list, regions: Regions) -> tuple:
    """``(preds, ops)``: pairs, each a conflicting earlier node of a node, whose
    closure is the whole order of ``deps="data"`` (duplicates allowed)."""
    regions.update()
    is_barrier = np.zeros(n, bool)
    is_barrier[opaque] = True
    found = _disjoint_pairs(codes, ends, is_barrier if opaque else None, regions)
    epoch = np.cumsum(is_barrier) - is_barrier   # barriers before each node
    if found is not None:
        preds, ops = found
        if opaque:
            bp, bo = _barrier_pairs(n, preds, ops, is_barrier, epoch, opaque)
            preds, ops = np.concatenate((preds, bp)), np.concatenate((ops, bo))
        return preds, ops
    code = np.array(codes, np.int64)
    op = np.repeat(np.arange(n, dtype=np.int64), np.diff(np.array(ends, np.int64), prepend=0))
    region = regions.of_slot[code >> 2] if len(code) else code
    live = (region >= 0) & ~is_barrier[op]
    op, region, mode = op[live], region[live], code[live] & 3
    simple, exact = _split(region, regions)
    pairs = []
    if simple is not None:
        sel, seg = simple
        pairs.append(_simple_pairs(op[sel], seg, mode[sel], epoch))
    if exact is not None:
        pairs.append(_Exact(regions, exact[1]).run(op[exact[0]], region[exact[0]],
                                                    mode[exact[0]], epoch))
    preds = np.concatenate([p for p, _ in pairs] + [_NO_PAIRS[0]])
    ops = np.concatenate([o for _, o in pairs] + [_NO_PAIRS[1]])
    if opaque:
        bp, bo = _barrier_pairs(n, preds, ops, is_barrier, epoch, opaque)
        preds, ops = np.concatenate((preds, bp)), np.concatenate((ops, bo))
    return preds, ops


def _disjoint_pairs(codes: list, ends: list, barrier, regions: Regions):
    """``data_pairs``'s pairs before the barriers', by ``_reduce.c``'s ``pairs`` where
    it is built and the hulls of the regions touched do not overlap (each one then
    its own segment: ``_simple_pairs``'s walk, with no numpy call per scope); else
    None, and the batch path below infers them."""
    fast = _PAIRS[0]
    if fast is None or regions.beyond or not len(ends):
        return None
    lo, hi = regions.hulls()
    found = fast.pairs(codes, ends, regions.of_slot, lo, hi, barrier)
    return None if found is None else (np.frombuffer(found[0], np.int64),
                                       np.frombuffer(found[1], np.int64))


def _split(region, regions: Regions) -> tuple:
    """``(simple, exact)``: ``(access indices, segment of each)`` of the accesses
    whose elementary segment says all (a view across several segments is listed
    once per segment), and ``(mask, boundaries)`` of those the exact path takes;
    either None where there are none."""
    if not len(region):
        return None, None
    ids = _distinct(region)   # the regions of this scope
    k = region - ids[0] if ids[-1] - ids[0] == len(ids) - 1 else np.searchsorted(ids, region)
    if regions.beyond:   # hulls past uint64: the exact path does all
        return None, (np.ones(len(region), bool), _bounds(ids, regions))
    lo, hi, one = regions.columns(ids)
    order = np.argsort(lo, kind="stable")
    top = np.maximum.accumulate(hi[order])
    first = np.ones(len(ids), bool)
    first[1:] = lo[order][1:] >= top[:-1]   # a hull past every earlier one starts a cluster
    cluster = np.empty(len(ids), np.int64)
    cluster[order] = np.cumsum(first) - 1
    strided = np.bincount(cluster, weights=~one) > 0
    hard = (np.bincount(cluster)[cluster] > 1) & strided[cluster]   # strided among others
    exact, sel = None, np.arange(len(region))
    if hard.any():
        mask = hard[k]
        exact = (mask, _bounds(ids[hard], regions))
        if mask.all():
            return None, exact
        sel, k = np.flatnonzero(~mask), k[~mask]
    # each hull's start and end by start: in order already where hulls do not overlap
    bounds = _distinct(np.column_stack((lo[order], hi[order]))[~hard[order]].ravel())
    seg_lo = np.searchsorted(bounds, lo)
    n_seg = (np.searchsorted(bounds, hi) - seg_lo)[k]
    if n_seg.max() == 1:
        return (sel, seg_lo[k]), exact
    rows = np.repeat(np.arange(len(k)), n_seg)
    seg = seg_lo[k][rows] + (np.arange(len(rows)) - (np.cumsum(n_seg) - n_seg)[rows])
    return (sel[rows], seg), exact


def _bounds(ids, regions: Regions) -> list:
    """Sorted distinct hull boundaries of some regions (Python ints)."""
    return sorted({regions.lo[i] for i in ids} | {regions.hi[i] for i in ids})


def _simple_pairs(op, seg, mode, epoch) -> tuple:
    """Pairs from accesses whose segment says it all: within a segment (and
    epoch) a read follows the last write, a write the reads since it, else it."""
    if not len(op):
        return _NO_PAIRS
    group = seg * (int(epoch[-1]) + 1) + epoch[op]   # the last node has the largest epoch
    order = np.argsort(group, kind="stable")   # by group, then node (op is sorted)
    group, op, mode = group[order], op[order], mode[order]
    new = np.ones(len(op), bool)
    new[1:] = (group[1:] != group[:-1]) | (op[1:] != op[:-1])
    if not new.all():   # one node, one segment, several accesses: one entry
        starts = np.flatnonzero(new)
        mode = np.bitwise_or.reduceat(mode, starts)
        group, op = group[starts], op[starts]
    m = len(op)
    idx = np.arange(m)
    first = np.ones(m, bool)
    first[1:] = group[1:] != group[:-1]
    start = np.maximum.accumulate(np.where(first, idx, 0))   # first entry of the group
    write = (mode & 2) != 0
    last = np.maximum.accumulate(np.where(write, idx, -1))
    before = np.empty(m, np.int64)   # the group's last write strictly before
    before[0] = -1
    before[1:] = last[:-1]
    before[before < start] = -1
    r = np.flatnonzero(~write & (before >= 0))
    w = np.flatnonzero(write)
    since = np.maximum(before[w] + 1, start[w])   # the reads since that write
    count = w - since
    alone = w[(count == 0) & (before[w] >= 0)]
    w, since, count = w[count > 0], since[count > 0], count[count > 0]
    rows = np.repeat(np.arange(len(w)), count)
    readers = since[rows] + (np.arange(len(rows)) - (np.cumsum(count) - count)[rows])
    preds = np.concatenate((op[before[r]], op[before[alone]], op[readers]))
    ops = np.concatenate((op[r], op[alone], op[w[rows]]))
    return preds, ops


def _barrier_pairs(n, preds, ops, is_barrier, epoch, opaque) -> tuple:
    """A node with no predecessor in its epoch follows the barrier opening it;
    a barrier follows the nodes of the epoch before it that nothing follows."""
    barriers = np.array(opaque, np.int64)
    has_pred = np.zeros(n, bool)
    has_pred[ops] = True
    has_succ = np.zeros(n, bool)
    has_succ[preds] = True
    plain = ~is_barrier
    lead = np.flatnonzero(plain & ~has_pred & (epoch > 0))
    sinks = np.flatnonzero(plain & ~has_succ & (epoch < len(barriers)))
    busy = np.bincount(epoch[plain], minlength=len(barriers) + 1)[:len(barriers)]
    empty = np.flatnonzero(busy[1:] == 0) + 1   # barrier k right after barrier k - 1
    return (np.concatenate((barriers[epoch[lead] - 1], sinks, barriers[empty - 1])),
            np.concatenate((lead, barriers[epoch[sinks]], barriers[empty])))


class _Exact:
    """Accesses to strided views among others: each segment between boundaries
    keeps its live writes and reads, compared with ``Buffer.overlaps``."""

    def __init__(self, regions: Regions, bounds: list):
        self.regions = regions
        self._index = {b: i for i, b in enumerate(bounds)}   # boundary -> its segment
        self._overlap: dict = {}
        self._cover: dict = {}

    def overlaps(self, a: int, b: int) -> bool:
        key = (a, b) if a < b else (b, a)
        hit = self._overlap.get(key)
        if hit is None:
            bufs = self.regions.buf
            hit = self._overlap[key] = a == b or bufs[a].overlaps(bufs[b])
        return hit

    def covers(self, a: int, b: int) -> bool:
        hit = self._cover.get((a, b))
        if hit is None:
            bufs = self.regions.buf
            hit = self._cover[(a, b)] = a == b or bufs[a].covers(bufs[b])
        return hit

    def run(self, op, region, mode, epoch) -> tuple:
        preds, ops = [], []
        segs: dict[int, tuple] = {}   # segment -> (writes, reads): [node, region, dead]
        lo, hi, index = self.regions.lo, self.regions.hi, self._index
        era, found, epoch = -1, set(), epoch.tolist()
        merged = _merge(op.tolist(), region.tolist(), mode.tolist())
        for k, (node, r, m) in enumerate(merged):
            if epoch[node] != era:   # a barrier ordered everything before it
                era = epoch[node]
                segs = {}
            entry = [node, r, False]
            for s in range(index[lo[r]], index[hi[r]]):
                writes, reads = segs.get(s) or segs.setdefault(s, ([], []))
                if m & 2:
                    segs[s] = (self._scan_kill(writes, entry, found) + [entry],
                               self._scan_kill(reads, entry, found))
                else:
                    for a in writes:
                        if not a[2] and a[0] != node and self.overlaps(a[1], r):
                            found.add(a[0])
                    reads.append(entry)
            if k + 1 == len(merged) or merged[k + 1][0] != node:
                preds += found
                ops += [node] * len(found)
                found = set()
        return np.array(preds, np.int64), np.array(ops, np.int64)

    def _scan_kill(self, entries, entry, found) -> list:
        """Conflicts of a write with ``entries``; drop the ones it covers."""
        node, r = entry[0], entry[1]
        keep = []
        for a in entries:
            if a[2]:
                continue
            if a[0] != node and self.overlaps(a[1], r):
                found.add(a[0])
            if self.covers(r, a[1]):
                a[2] = True
            else:
                keep.append(a)
        return keep


def _merge(op: list, region: list, mode: list) -> list:
    """``(node, region, mode)`` per access, one per node and region (modes joined)."""
    out, at = [], {}
    for node, r, m in zip(op, region, mode):
        k = at.get((node, r))
        if k is None:
            at[(node, r)] = len(out)
            out.append((node, r, m))
        else:
            out[k] = (node, r, out[k][2] | m)
    return out


_PAIRS = [_BUILT if hasattr(_BUILT, "pairs") else None]   # _disjoint_pairs's, or None


def use_compiled_pairs(on: bool) -> bool:
    """Infer the pairs of scopes whose regions do not overlap by ``_reduce.c``
    (where built) or, ``on=False``, on the batch path; whether it was on before.
    Both give the same pairs (up to order and duplicates)."""
    was = _PAIRS[0] is not None
    _PAIRS[0] = _BUILT if on and hasattr(_BUILT, "pairs") else None
    return was

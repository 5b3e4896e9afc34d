"""Dependency inference of a small scope, in plain Python.

``deps.py``'s batch inference makes about a hundred numpy calls whatever a
scope's size: some 200 us, most of the cost of tracing a graph of a few
dozen nodes. A scope of at most ``SMALL`` nodes is inferred here instead,
walking its accesses once. The edges are the same: both paths find pairs
whose closure is the order of ``deps="data"`` and keep its transitive
reduction, which is unique; both decide whether two views meet with
``Buffer.overlaps`` (exact for runs of bytes, which is all the batch path's
segments hold). ``tests/test_deps_random.py`` runs its oracles on both.

The walk keeps, per region, the nodes whose accesses are still live: a
read follows the live writes of every region it meets, a write follows
their writes and reads too, and a write kills what it covers (anything
conflicting with that later conflicts with the write). An opaque node
follows every node since the previous one (or that one) and precedes the
next nodes that follow nothing else.
"""
from __future__ import annotations

import numpy as np

__all__ = ["SMALL", "data_deps", "preds_of", "reduce"]

SMALL = 64   # nodes; above this the batch path costs less (bench/STUDIES.md)


def data_deps(n: int, codes: list, ends: list, opaque: list, regions, extra=None) -> tuple:
    """``(ptr, deps)`` as ``reduction.reduce_pairs(n, *deps.data_pairs(...))`` gives them;
    ``extra``: more pairs ``(preds, ops)`` (numpy arrays) to keep in the order."""
    regions.update()
    region = regions.of_slot[np.array(codes, np.int64) >> 2].tolist() if codes else []
    used = set(region)
    used.discard(-1)   # empty views
    near = _near(used, regions)
    barriers, covers = set(opaque), _Covers(regions.buf)
    writes: dict = {}   # region -> nodes whose writes of it are live
    reads: dict = {}
    preds: list = [()] * n
    epoch, barrier, at = [], None, 0   # the nodes since the last opaque node
    for j in range(n):
        end = ends[j]
        if j in barriers:
            preds[j] = epoch if epoch or barrier is None else [barrier]
            writes, reads, epoch, barrier, at = {}, {}, [], j, end
            continue
        if end - at == 1:   # one access: no merging
            r = region[at]
            access = ((r, codes[at] & 3),) if r >= 0 else ()
        else:
            merged: dict = {}
            for k in range(at, end):
                r = region[k]
                if r >= 0:
                    merged[r] = merged.get(r, 0) | codes[k] & 3
            access = merged.items()
        at = end
        found: set = set()
        # One pass: what a write of r kills, the node found through r already, so
        # its other accesses lose nothing; its own entries it finds are dropped.
        for r, m in access:
            if m & 2:
                for r2 in near[r]:
                    if r2 in writes:
                        found.update(writes[r2])
                    if r2 in reads:
                        found.update(reads[r2])
                    if r2 == r or covers(r, r2):
                        writes.pop(r2, None)
                        reads.pop(r2, None)
                writes.setdefault(r, []).append(j)   # (a read of r too: as its write)
            else:
                for r2 in near[r]:
                    if r2 in writes:
                        found.update(writes[r2])
                reads.setdefault(r, []).append(j)
        found.discard(j)
        preds[j] = found if found or barrier is None else (barrier,)
        epoch.append(j)
    if extra is not None:
        for p, o in zip(extra[0].tolist(), extra[1].tolist()):
            preds[o] = [*preds[o], p]
    return reduce(n, preds)


def _near(used: set, regions) -> dict:
    """region -> the regions of ``used`` it overlaps, itself first (a sweep by hull)."""
    lo, hi, bufs = regions.lo, regions.hi, regions.buf
    near = {r: [r] for r in used}
    order = sorted(used, key=lo.__getitem__)
    for i, r in enumerate(order):
        top = hi[r]
        for k in range(i + 1, len(order)):
            r2 = order[k]
            if lo[r2] >= top:
                break
            if bufs[r].overlaps(bufs[r2]):
                near[r].append(r2)
                near[r2].append(r)
    return near


class _Covers:
    """``covers(a, b)``: whether region a holds every byte of region b, asked once."""

    def __init__(self, bufs: list):
        self.bufs, self.known = bufs, {}

    def __call__(self, a: int, b: int) -> bool:
        hit = self.known.get((a, b))
        if hit is None:
            hit = self.known[(a, b)] = self.bufs[a].covers(self.bufs[b])
        return hit


def preds_of(n: int, preds, ops) -> list:
    """Each node's earlier nodes, from pairs ``(preds[k], ops[k])`` (numpy arrays)."""
    out: list = [()] * n
    for p, o in zip(preds.tolist(), ops.tolist()):
        if out[o]:
            out[o].append(p)
        else:
            out[o] = [p]
    return out


def reduce(n: int, preds: list) -> tuple:
    """``(ptr, deps)`` of ``reduction.reduce_pairs`` from each node's earlier nodes
    ``preds[j]`` (any iterable): the predecessors no other one reaches, ascending.
    Nodes come in topological order, so taking them from the latest, one is
    redundant exactly when a kept later one reaches it (``reach``: bit sets)."""
    reach = [0] * n   # node -> its ancestors
    ptr, flat = [0], []
    for j in range(n):
        ps = preds[j]
        if len(ps) == 1:
            for p in ps:
                reach[j] = reach[p] | 1 << p
                flat.append(p)
        elif ps:
            covered, keep = 0, []
            for p in sorted(ps, reverse=True):
                if not covered >> p & 1:
                    keep.append(p)
                    covered |= reach[p] | 1 << p
            reach[j] = covered
            keep.reverse()
            flat += keep
        ptr.append(len(flat))
    return np.array(ptr, np.int64), np.array(flat, np.int64)

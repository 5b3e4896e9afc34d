"""Dependency inference: accesses -> edges, then transitive reduction.

``DataDeps`` orders two nodes only when their bytes overlap and one of them
writes (read-after-write, write-after-read, write-after-write). It keeps the
address space cut into segments at every access boundary; each segment lists
the live writes and reads that touch it. A read looks only at live writes, a
write at both; a write kills the accesses it covers, since anything that
would conflict with them now conflicts with the write, which is ordered
after them. Disjoint buffers therefore cost O(log n) per access.

``StreamDeps`` reproduces stream capture: order within each proxy stream,
plus fork/join and event edges.
"""
from __future__ import annotations

import numpy as np
from sortedcontainers import SortedList

from .buffers import Buffer

__all__ = ["DataDeps", "StreamDeps", "Reduction", "make_tracker", "EVERYTHING"]

# What an opaque node touches: every byte of the (unified) address space.
EVERYTHING = Buffer(0, (1 << 64,), (1,), np.uint8, -2, None)
EVERYTHING.label = "*"


class _Access:
    __slots__ = ("node", "buf", "dead")

    def __init__(self, node, buf):
        self.node, self.buf, self.dead = node, buf, False


class _Segment:
    """Bytes [start, end) and the live accesses that touch them."""

    __slots__ = ("end", "writes", "reads")

    def __init__(self, end, writes=(), reads=()):
        self.end = end
        self.writes = [a for a in writes if not a.dead] if writes else []
        self.reads = [a for a in reads if not a.dead] if reads else []


class Reduction:
    """Transitive reduction as nodes arrive, with chains to answer most questions.

    Every node joins a chain: it extends the chain of a predecessor that is
    that chain's last node, or starts a new one. Along a chain every node
    reaches every later one, so "does p reach q?" for p and q on one chain is a
    comparison of positions. Only the questions left open are answered by a
    search backwards from the newer predecessors, which stops as soon as every
    question is settled. A long chain of dependent work is then O(1) per node.

    Nodes are keyed by ``node.pos``, their position in their own graph.
    """

    def __init__(self):
        self.chain: list[int] = []   # node pos -> chain id
        self.rank: list[int] = []    # node pos -> position on its chain
        self.tail: list[int] = []    # chain id -> pos of its last node

    def reduce(self, preds) -> list:
        """Drop every predecessor that another one already reaches."""
        if len(preds) < 2:
            return list(preds)
        chain, rank = self.chain, self.rank
        ps = sorted(preds, key=lambda n: n.pos)
        open_, redundant = [], set()
        for i, p in enumerate(ps):
            c, k = chain[p.pos], rank[p.pos]
            if any(chain[q.pos] == c and rank[q.pos] > k for q in ps[i + 1:]):
                redundant.add(p)
            else:
                open_.append(p)
        if len(open_) > 1:
            self._search(open_, redundant)
        return [p for p in ps if p not in redundant]

    def _search(self, ps, redundant) -> None:
        """Settle "does p reach a later q?" by walking back from the q's."""
        chain, rank = self.chain, self.rank
        lo = ps[0].pos
        wanted = {p.pos: p for p in ps[:-1]}
        seen = set()
        for q in reversed(ps):
            wanted.pop(q.pos, None)
            if not wanted:
                return
            stack = list(q.deps)
            while stack and wanted:
                n = stack.pop()
                if n.pos < lo or n.pos in seen:
                    continue
                seen.add(n.pos)
                for w in [w for w in wanted.values()
                          if chain[w.pos] == chain[n.pos] and rank[w.pos] <= rank[n.pos]]:
                    redundant.add(w)
                    del wanted[w.pos]
                stack.extend(n.deps)

    def place(self, node) -> None:
        """Put a node whose ``deps`` are final on a chain."""
        for d in node.deps:
            c = self.chain[d.pos]
            if self.tail[c] == d.pos:
                self.chain.append(c)
                self.rank.append(self.rank[d.pos] + 1)
                self.tail[c] = node.pos
                return
        self.chain.append(len(self.tail))
        self.rank.append(0)
        self.tail.append(node.pos)


class DataDeps:
    """Edges from memory accesses (``deps="data"``)."""

    def __init__(self):
        top = 1 << 65
        self._at = {0: _Segment(top)}       # segment start -> segment
        self._starts = SortedList([0])      # the same starts, ordered
        self._barrier = None      # the latest opaque node
        self._untracked = []      # nodes since then that touch no memory
        self._reduction = Reduction()

    def _split(self, at: int) -> None:
        if at in self._at:
            return
        starts = self._starts
        prev = self._at[starts[starts.bisect_right(at) - 1]]
        self._at[at] = _Segment(prev.end, prev.writes, prev.reads)
        prev.end = at
        starts.add(at)

    def _touching(self, lo: int, hi: int) -> list:
        seg = self._at.get(lo)
        if seg is not None and seg.end == hi:   # the usual case: a known range
            return [seg]
        self._split(lo)
        self._split(hi)
        seg = self._at[lo]
        out = [seg]
        while seg.end < hi:
            seg = self._at[seg.end]
            out.append(seg)
        return out

    def add(self, node, stream: int = 0) -> list:
        """Compute ``node.deps`` from ``node.accesses``; record its accesses."""
        accesses = ((EVERYTHING, "rw"),) if node.opaque else node.accesses
        preds = set()
        if node.opaque:  # also after nodes that touch no memory
            preds.update(self._untracked)
            self._barrier, self._untracked = node, []
        elif all(b.lo == b.hi for b, _ in accesses):
            self._untracked.append(node)
            if self._barrier is not None:
                preds.add(self._barrier)
        for buf, mode in accesses:
            if buf.lo == buf.hi:
                continue
            entry = _Access(node, buf)
            if "w" in mode:
                for seg in self._touching(buf.lo, buf.hi):
                    seg.writes = self._scan_kill(seg.writes, node, buf, preds)
                    seg.reads = self._scan_kill(seg.reads, node, buf, preds)
                    seg.writes.append(entry)
            else:
                for seg in self._touching(buf.lo, buf.hi):
                    for a in seg.writes:
                        if not a.dead and a.node is not node and \
                                (a.buf is buf or a.buf.overlaps(buf)):
                            preds.add(a.node)
                    seg.reads.append(entry)
        node.deps = self._reduction.reduce(preds)
        self._reduction.place(node)
        return node.deps

    @staticmethod
    def _scan_kill(entries, node, buf, preds) -> list:
        """Conflicts of a write with ``entries``; drop the ones it covers."""
        keep = []
        for a in entries:
            if a.dead:
                continue
            if a.node is not node and (a.buf is buf or a.buf.overlaps(buf)):
                preds.add(a.node)
            if a.buf is buf or buf.covers(a.buf):
                a.dead = True
            else:
                keep.append(a)
        return keep

    # Stream structure does not order anything in data mode.
    def fork(self, parent: int, child: int): pass
    def join(self, stream: int, other: int): pass
    def record(self, stream: int, event_node) -> None: pass
    def wait(self, stream: int, event_node) -> None: pass


class StreamDeps:
    """Edges as stream capture makes them (``deps="streams"``)."""

    def __init__(self):
        self._tail: dict[int, set] = {0: set()}   # what the next op on a stream waits for
        self._events: dict[int, set] = {}          # id(event node) -> tail at record time
        self._reduction = Reduction()

    # Every stream is 0 or made by fork, and only recorded events are waited on
    # here (control.wait), so the lookups below cannot miss.
    def add(self, node, stream: int = 0) -> list:
        node.deps = self._reduction.reduce(self._tail[stream])
        self._reduction.place(node)
        self._tail[stream] = {node}
        return node.deps

    def fork(self, parent: int, child: int):
        self._tail[child] = set(self._tail[parent])

    def join(self, stream: int, other: int):
        self._tail[stream] |= self._tail[other]

    def record(self, stream: int, event_node) -> None:
        self._events[id(event_node)] = {event_node}

    def wait(self, stream: int, event_node) -> None:
        self._tail[stream] |= self._events[id(event_node)]


def make_tracker(mode: str):
    if mode == "data":
        return DataDeps()
    if mode == "streams":
        return StreamDeps()
    raise ValueError(f'deps must be "data" or "streams", not {mode!r}')

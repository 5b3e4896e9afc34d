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

__all__ = ["DataDeps", "StreamDeps", "reduce_preds", "make_tracker", "EVERYTHING"]

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


def reduce_preds(preds) -> list:
    """Drop every predecessor that another one already reaches."""
    if len(preds) < 2:
        return list(preds)
    lo = min(p.index for p in preds)
    redundant, seen = set(), set()
    for q in sorted(preds, key=lambda n: n.index, reverse=True):
        stack = list(q.deps)
        while stack:
            n = stack.pop()
            if n.index < lo or n in seen:
                continue
            seen.add(n)
            if n in preds:
                redundant.add(n)
            stack.extend(n.deps)
    return sorted((p for p in preds if p not in redundant), key=lambda n: n.index)


class DataDeps:
    """Edges from memory accesses (``deps="data"``)."""

    def __init__(self):
        top = 1 << 65
        self._at = {0: _Segment(top)}       # segment start -> segment
        self._starts = SortedList([0])      # the same starts, ordered
        self._barrier = None      # the latest opaque node
        self._untracked = []      # nodes since then that touch no memory

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
        node.deps = reduce_preds(preds)
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

    def add(self, node, stream: int = 0) -> list:
        tail = self._tail.setdefault(stream, set())
        node.deps = reduce_preds(tail)
        self._tail[stream] = {node}
        return node.deps

    def fork(self, parent: int, child: int):
        self._tail[child] = set(self._tail.get(parent, ()))

    def join(self, stream: int, other: int):
        self._tail.setdefault(stream, set()).update(self._tail.get(other, ()))

    def record(self, stream: int, event_node) -> None:
        self._events[id(event_node)] = {event_node}

    def wait(self, stream: int, event_node) -> None:
        self._tail.setdefault(stream, set()).update(self._events.get(id(event_node), ()))


def make_tracker(mode: str):
    if mode == "data":
        return DataDeps()
    if mode == "streams":
        return StreamDeps()
    raise ValueError(f'deps must be "data" or "streams", not {mode!r}')

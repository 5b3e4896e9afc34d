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
from sortedcontainers import SortedDict

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
    __slots__ = ("writes", "reads")

    def __init__(self, writes=(), reads=()):
        self.writes = [a for a in writes if not a.dead]
        self.reads = [a for a in reads if not a.dead]


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
        self._segs = SortedDict({0: _Segment()})
        self._barrier = None      # the latest opaque node
        self._untracked = []      # nodes since then that touch no memory

    def _split(self, at: int):
        segs = self._segs
        if at in segs:
            return
        i = segs.bisect_right(at) - 1
        prev = segs.peekitem(i)[1]
        segs[at] = _Segment(prev.writes, prev.reads)

    def _touching(self, buf: Buffer):
        self._split(buf.lo)
        self._split(buf.hi)
        return list(self._segs.irange(buf.lo, buf.hi, inclusive=(True, False)))

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
            entry, writes = _Access(node, buf), "w" in mode
            for key in self._touching(buf):
                seg = self._segs[key]
                lists = (seg.writes, seg.reads) if writes else (seg.writes,)
                for lst in lists:
                    for a in lst:
                        if not a.dead and a.node is not node and a.buf.overlaps(buf):
                            preds.add(a.node)
                if writes:
                    for lst in (seg.writes, seg.reads):
                        for a in lst:
                            if not a.dead and buf.covers(a.buf):
                                a.dead = True
                    seg.writes = [a for a in seg.writes if not a.dead]
                    seg.reads = [a for a in seg.reads if not a.dead]
                    seg.writes.append(entry)
                else:
                    seg.reads.append(entry)
        node.deps = reduce_preds(preds)
        return node.deps

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

"""First fit in a block whose byte ranges come and go (``temporary_memory.layout``).

A range laid on the block may overlap others (two temporaries that share
bytes can both be in the way of a third), so each stretch between cut points
counts the ranges over it; the stretches no range covers are kept merged into
free runs, in address order. Laying or lifting a range touches the stretches
under it, and first fit walks the free runs, not the ranges: with k ranges in
the way of each new one, as in a forward pass that keeps its activations for
the backward one, a sweep over the ranges made placing k of them take k*k
steps.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from math import inf

__all__ = ["FreeSpace"]


class FreeSpace:
    """Ranges ``[lo, hi)`` laid on ``[0, inf)``, each counted where it lies.

    >>> s = FreeSpace(); s.count(0, 256, 1); s.count(512, 768, 1); s.first_fit(256)
    256
    >>> s.first_fit(512)
    768
    >>> s.count(0, 256, -1); s.first_fit(512)
    0
    """

    def __init__(self):
        self.cuts = [0]      # stretch k is [cuts[k], cuts[k + 1]); the last one runs on
        self.covers = [0]    # ranges over stretch k
        self.starts = [0]    # free runs [starts[r], ends[r]), maximal, in address order
        self.ends = [inf]

    def first_fit(self, size: int) -> int:
        """The lowest address where ``size`` bytes cover no range laid."""
        for s, e in zip(self.starts, self.ends):
            if e - s >= size:
                return s
        raise AssertionError("the last free run is endless")

    def count(self, lo: int, hi: int, step: int):
        """Lay the range ``[lo, hi)`` (``step`` 1), or lift one laid (-1)."""
        a = self._cut(lo)
        b = self._cut(hi)    # after lo: a stays where it is
        cuts, covers = self.cuts, self.covers
        for k in range(a, b):
            c = covers[k] = covers[k] + step
            if c == 1 and step > 0:
                self._take(cuts[k], cuts[k + 1])
            elif c == 0:
                self._free(cuts[k], cuts[k + 1])
            elif c < 0:
                raise AssertionError("lifted a range never laid")

    def _cut(self, x: int) -> int:
        """The index of the stretch starting at ``x``, splitting the one around it."""
        cuts = self.cuts
        k = bisect_left(cuts, x)
        if k == len(cuts) or cuts[k] != x:
            cuts.insert(k, x)
            self.covers.insert(k, self.covers[k - 1])
        return k

    def _take(self, x: int, y: int):
        """``[x, y)``, free until now, is covered."""
        starts, ends = self.starts, self.ends
        r = bisect_right(starts, x) - 1
        s, e = starts[r], ends[r]
        if s < x:
            ends[r] = x
            if y < e:
                starts.insert(r + 1, y)
                ends.insert(r + 1, e)
        elif y < e:
            starts[r] = y
        else:
            del starts[r], ends[r]

    def _free(self, x: int, y: int):
        """``[x, y)``, covered until now, is free: merged with the runs it touches."""
        r = bisect_left(self.starts, x)
        first, last, s, e = r, r, x, y
        if r > 0 and self.ends[r - 1] == x:
            first, s = r - 1, self.starts[r - 1]
        if r < len(self.starts) and self.starts[r] == y:
            last, e = r + 1, self.ends[r]
        self.starts[first:last] = [s]
        self.ends[first:last] = [e]

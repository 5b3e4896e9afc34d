"""What a body's code was found to read, asked of ``_Region`` (``_loop_code.py``)
by ``LoopState`` and the checks beside it: whether the body reads a slot before
storing it (``carried``), indexes, sizes or launches by it, hands it to a call
on a line, calls what it computes, or decides its control flow by it."""
from __future__ import annotations

from ._loop_paths import _WHOLE, _reads, _within


class RegionQueries:
    """The questions ``_Region`` answers from what it noted of a body's code
    (``first``, ``whole``, ``indexed``, ``sized``, ``calls``, ``takes``,
    ``callees``, ``decisions``, ``returns``, ``return_lines``)."""

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

    def calls_by(self, lines: set, path: tuple) -> bool:
        """Whether a call of the code on one of ``lines`` calls what its callee
        computes from the slot at ``path`` (``go = k[1, 4, body]`` then ``go(x)``,
        ``use = k`` then ``use[1, 4, body](x)``, ``pair[0](body, x)``)."""
        return any(_reads(self.callees.get(line, ()), path) for line in lines)

    def decides_with(self, path: tuple, work: set) -> bool:
        """Whether the slot at ``path`` decides the body's control flow where it
        leads to ``work`` (lines recording some): a for loop's iterable or
        ``range()`` bound, an if or a while test, a comprehension's iterable."""
        return any(lines & work and _reads(read, path) for read, lines in self.decisions)

    def returned(self) -> set:
        """What the code reads for what it returns: its return statements, and the
        tests deciding which of them runs."""
        return self.returns.union(*(read for read, lines in self.decisions
                                    if lines & self.return_lines))

    def sizes_with(self, path: tuple) -> bool:
        """Whether the body sizes a temporary by the slot at ``path``
        (``body.zeros(m)``, ``s.empty((n, self.k))``)."""
        return _reads(self.sized, path)

"""What a graph function's host callbacks change that its graph reads, for the
cache key (``holding.py``).

A callback (``s.host(self.record, h)``) changes what it keeps when it runs,
between calls: a history (``self.log.append(...)``), a counter (``self.n += 1``).
What the graph's own code does not read is kept out of the key, else every call
would trace anew. ``attribute_names`` finds what the code may read off ``self``
by the names it loads, which hold the globals and modules' attributes too:
``math.log`` is no read of ``self.log`` (``global_only``). What the graph does
read stays in the key, so each call after a callback changed it traces anew, as
eager code would use the new value.
"""
from __future__ import annotations

import dis

__all__ = ["global_only"]

_GLOBAL_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})
_ATTRIBUTE_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})
_SKIPPED = frozenset({"CACHE", "NOP", "EXTENDED_ARG"})


def global_only(codes) -> frozenset:
    """The names ``codes`` load only as globals or as attributes read off a global
    (``math.log``, ``np.float32``, ``cuda.grid``, ``CFG.lr``): by no other load or
    store, nor as a constant string (``getattr(self, "log")``), so no attribute of
    ``self`` or of an object a parameter holds."""
    off_globals, other = set(), set()
    for code in codes:
        names = set(code.co_names)
        chained = False   # the value on top was loaded off a global
        for ins in dis.get_instructions(code):
            op = ins.opname
            if op in _SKIPPED:
                continue
            if op in _GLOBAL_LOADS or op in _ATTRIBUTE_LOADS and chained:
                off_globals.add(ins.argval)
                chained = True
                continue
            chained = False
            if type(ins.argval) is str and ins.argval in names:
                other.add(ins.argval)
        other.update(k for k in code.co_consts if type(k) is str)
    return frozenset(off_globals - other)

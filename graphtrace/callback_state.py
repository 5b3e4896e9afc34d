"""What a graph function's host callbacks change that its graph reads, for the
cache key (``holding.py``) and the ``StateWarning`` a call gives (``function.py``).

A callback (``s.host(self.record, h)``) changes what it keeps when it runs,
between calls: a history (``self.log.append(...)``), a counter (``self.n += 1``).
What the graph's own code does not read is kept out of the key, else every call
would trace anew. ``attribute_names`` finds what the code may read off ``self``
by the names it loads, which hold the globals and modules' attributes too:
``math.log`` is no read of ``self.log`` (``global_only``). What the graph does
read stays in the key, so each call after a callback changed it traces anew, as
eager code would use the new value; ``live_labels`` names those key entries.
"""
from __future__ import annotations

import dis

from .chains import chain, value_chains
from .values import _Same

__all__ = ["global_only", "live_labels", "self_changed"]

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


def self_changed(functions, names) -> frozenset:
    """The places of their object that methods ``functions`` (host callbacks) change,
    in place or by a store, as the key labels them (``self.step_count``,
    ``self.cfg.scale``, ``self.hp['lr']``): those under an attribute of ``names``
    (what the graph's code reads off self)."""
    out = set()
    for f in functions:
        first = f.__code__.co_varnames[:1]
        out.update(str(chain("self", steps)) for h, steps in value_chains(
            f.__code__, roots=frozenset(first))[1] if (h,) == first and steps and
            steps[0][0] == "attr" and steps[0][1] in names)
    return frozenset(out)


def live_labels(entries, changed) -> set:
    """The labels of the cache key's ``entries`` (``(label, type, value)``: ``self.n``,
    ``OBJ.scale``, ``self.cfg.hp['lr']``) that read a place of ``changed`` (what host
    callbacks change, as ``self.n``, ``OBJ.scale``), what it holds, or what holds it
    (``self.hp`` keyed whole, where ``self.hp['lr']`` changes); not what holds it
    by identity alone (``self.count`` of ``s.host(self.count, h)``, whose
    ``__call__`` changes ``self.count.n``): that key is the same object still."""
    if not changed:
        return set()
    entries = [e for e in entries   # values: not an object's class, (label, type)
               if type(e) is tuple and len(e) == 3 and isinstance(e[0], str)]
    labels = {str(e[0]) for e in entries}
    whole = labels - {str(e[0]) for e in entries if not _by_identity(e[2])}
    return {label for label in labels if any(
        _within(label, place) or label not in whole and _within(place, label)
        for place in changed)}


def _by_identity(v) -> bool:
    """Whether a key entry's value holds an object by identity alone (``_Same``, a
    callback's ``(function, Identity)``), not by what it holds."""
    return isinstance(v, _Same) or type(v) is tuple and len(v) == 2 and \
        isinstance(v[1], _Same)


def _within(label: str, place: str) -> bool:
    """Whether ``label`` is ``place`` or reads what it holds (``place.x``, ``place[k]``)."""
    return label == place or label.startswith(place) and label[len(place)] in ".["

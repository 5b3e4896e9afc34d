"""What code hands to ``s.host`` through a local taking its value off a name:
``for cb in HOOKS: s.host(cb, h)``, ``cb = self.cbs["log"]``. The callables
such a name holds are host callbacks, which read what they read when they
run: what they change is their state, not a setting the cache key watches
(``reach.py`` leaves such a name's objects out, ``holding.py`` the functions
``self`` holds there). ``chains.py`` finds what code hands there directly.
"""
from __future__ import annotations

import dis

from .chains import NAME_LOADS, _through_partial, nested_codes
from .host_chains import _TAKING

__all__ = ["host_taken"]


def host_taken(code) -> frozenset:
    """``(head, attributes)`` of each name (and attribute chain off it) whose value,
    or an item of it, ``code`` (and the code nested in it) hands to ``.host(...)``
    as the callback through a local taking it (``for cb in HOOKS: s.host(cb, h)``:
    ``("HOOKS", ())``; ``cb = self.cbs["log"]``: ``("self", ("cbs",))``, also
    through ``partial``)."""
    out = set()
    for c in nested_codes(code):
        taken: dict = {}   # local -> (head, attributes) it takes its value off
        source, phase = None, 0   # phase 0: attributes; 1: taking an item; 2: stores
        for ins in dis.get_instructions(c):
            op, name = ins.opname, ins.argval
            if op in NAME_LOADS or op.startswith("LOAD_FAST"):
                head, attrs = taken.get(name, (name, ())) if type(name) is str else (None, ())
                source, phase = (head, list(attrs)) if head is not None else None, 0
            elif source is None:
                continue
            elif phase == 0 and op in ("LOAD_ATTR", "LOAD_METHOD") and \
                    name not in ("values", "items"):
                source[1].append(name)
            elif phase < 2 and (op in _TAKING or op in ("LOAD_ATTR", "LOAD_METHOD")):
                phase = 1   # for cb in HOOKS (.values(), .items()), cb = CBS["log"]
            elif op.startswith("STORE_FAST") or op == "STORE_DEREF":
                taken[name], phase = (source[0], tuple(source[1])), 2
            else:
                source = None
        after = False   # just after .host (or its partial)
        for ins in dis.get_instructions(c):
            if after and _through_partial(ins):
                continue
            if after and (ins.opname.startswith("LOAD_FAST") or ins.opname == "LOAD_DEREF") \
                    and ins.argval in taken:
                out.add(taken[ins.argval])
            after = ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and ins.argval == "host"
    return frozenset(out)

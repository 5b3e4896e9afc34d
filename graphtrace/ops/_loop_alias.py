"""One object reached by two names, for ``_Region`` (``_loop_code.py``).

A body may read a slot through a name other than the one it changes it by:
``h = m`` (before the body or in it), then ``add(x, h.v)``, then ``m.v = 5.0``.
The next iteration reads ``5.0`` through ``h.v``, so the read of ``h.v`` is a
read of ``m.v``, before the body stores it. ``same_names`` groups the names
that held one object when the body began (by identity); ``through`` (in
``_loop_operands.py``) follows a name the body set back to the paths its
stores picked (``h = m``, ``h = m.sub``, ``d = D``; each of ``m if flag else
q``, ``m or q``, ``(m, q)[i]``, a store through which sets none of them for
sure), in the order the code
runs, so that a slot set first (``m.v = 5.0`` then ``add(x, h.v)``) stays set
first, and what a read through it takes is that slot, not all of ``m``.
"""
from __future__ import annotations

import types

_VALUES = (int, float, complex, bool, str, bytes, type(None), types.ModuleType, type,
           types.FunctionType, types.BuiltinFunctionType)   # (no slot under them changes)
_MAX_NAMES = 4096   # a scope with more names than this is not grouped


def same_names(scope: dict) -> dict:
    """name -> the other names of ``scope`` holding the very same object (a
    container or an object whose attributes or items a body may change)."""
    if len(scope) > _MAX_NAMES:
        return {}
    by_id: dict = {}
    for name, v in scope.items():
        if type(name) is str and not isinstance(v, _VALUES):
            by_id.setdefault(id(v), []).append(name)
    return {n: tuple(m for m in names if m != n)
            for names in by_id.values() if len(names) > 1 for n in names}


def others(same: dict, path: tuple) -> list:
    """The paths reaching the slot at ``path`` through another name of ``same``
    (``h.v`` for ``m.v`` where ``h`` and ``m`` held one object)."""
    if len(path) < 2 or type(path[0]) is not str:
        return []
    return [(n,) + path[1:] for n in same.get(path[0], ())]

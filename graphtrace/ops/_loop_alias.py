"""One object reached by two names, for ``_Region`` (``_loop_code.py``).

A body may read a slot through a name other than the one it changes it by:
``h = m`` (before the body or in it), then ``add(x, h.v)``, then ``m.v = 5.0``.
The next iteration reads ``5.0`` through ``h.v``, so the read of ``h.v`` is a
read of ``m.v``, before the body stores it. ``same_names`` groups the paths
that held one object when the body began (by identity): names, and the items
and attributes of the containers and objects they hold (``tab = (m, q)``:
``tab[0]`` is ``m``, so ``tab[0].v`` is ``m.v``; an item by a key computed,
``objs[i]``, is any item of ``objs``). ``through`` (in
``_loop_operands.py``) follows a name the body set back to the paths its
stores picked (``h = m``, ``h = m.sub``, ``d = D``; each of ``m if flag else
q``, ``m or q``, ``(m, q)[i]``, a store through which sets none of them for
sure; ``h = tab[0]``, ``h = objs[i]``, ``for h in tab``, ``h = getattr(tab,
"m")``), in the order the code
runs, so that a slot set first (``m.v = 5.0`` then ``add(x, h.v)``) stays set
first, and what a read through it takes is that slot, not all of ``m``.
"""
from __future__ import annotations

import types

from ..owners import own_object
from ._loop_operands import _parameters, through
from ._loop_receives import SELF
from ._loop_stack import _ANY_KEY, _ATTR_LOADS, _LOADS, _chain

_VALUES = (int, float, complex, bool, str, bytes, type(None), types.ModuleType, type,
           types.FunctionType, types.BuiltinFunctionType)   # (no slot under them changes)
_MAX_NAMES = 4096   # a scope with more names than this is not grouped
_MAX_PATHS = 16384  # nor the items of its containers past this many paths
_MAX_ITEMS = 256    # a container with more items than this is not looked into
_DEPTH = 3          # steps from a name into what its containers hold


def _held(v) -> list:
    """``(step, value)`` of what a container or an object holds: the items of a
    list, a tuple or a dict (a namedtuple's also by its fields' names), the
    attributes of an object of the program's own (read from its dictionary,
    running none of its code); none past ``_MAX_ITEMS``."""
    t = type(v)
    if t is list or isinstance(v, tuple) or t is dict:
        if len(v) > _MAX_ITEMS:
            return []
        out = [(("[]", k), x) for k, x in (v.items() if t is dict else enumerate(v))]
        fields = getattr(t, "_fields", None) if t is not tuple else None
        if isinstance(fields, tuple) and len(fields) == len(v):
            out += [((".", f), x) for f, x in zip(fields, v) if type(f) is str]
        return out
    if own_object(v):
        try:
            d = object.__getattribute__(v, "__dict__")
        except (AttributeError, TypeError):
            return []
        if type(d) is dict and len(d) <= _MAX_ITEMS:
            return [((".", k), x) for k, x in d.items() if type(k) is str]
    return []


def same_names(scope: dict) -> dict:
    """path -> the other paths of ``scope`` reaching the very same object (a
    container or an object whose attributes or items a body may change) when
    the body began: a name (``("m",)``), an item or an attribute of what a name
    holds, ``_DEPTH`` steps deep (``("tab", ("[]", 0))``); and a container's
    path with ``_ANY_KEY`` after it -> the paths of each object it holds (what
    ``objs[i]`` may be)."""
    if len(scope) > _MAX_NAMES:
        return {}
    by_id: dict = {}
    anys: dict = {}   # a container's path + _ANY_KEY -> the ids of what it holds
    level, count = [((name,), v) for name, v in scope.items() if type(name) is str], 0
    for depth in range(_DEPTH + 1):
        below = []
        for path, v in level:
            if isinstance(v, _VALUES) or count >= _MAX_PATHS:
                continue
            count += 1
            by_id.setdefault(id(v), []).append(path)
            items = _held(v) if depth < _DEPTH else []
            if items:
                anys[path + (_ANY_KEY,)] = [id(x) for _, x in items if not isinstance(x, _VALUES)]
                below += [(path + (step,), x) for step, x in items]
        level = below
    out = {p: tuple(q for q in paths if q != p)
           for paths in by_id.values() if len(paths) > 1 for p in paths}
    for p, ids in anys.items():
        held = tuple(dict.fromkeys(q for i in ids for q in by_id.get(i, ())))
        if held:
            out[p] = held
    return out


def others(same: dict, path: tuple, store: bool = False) -> list:
    """The paths reaching the slot at ``path`` through another path of ``same`` to
    an object on its way (``h.v`` for ``m.v`` where ``h`` and ``m`` held one
    object; ``m.v`` for ``tab[0].v`` where ``tab[0]`` is ``m``; each item's, for
    ``objs[i].v``). A ``store`` through an item by a key computed may set any of
    them, so it is none of them for sure: none then."""
    if len(path) < 2 or type(path[0]) is not str or not same or store and _ANY_KEY in path:
        return []
    out: list = []
    for n in range(1, len(path)):
        for q in same.get(path[:n], ()):
            out.append(q + path[n:])
    return [q for q in dict.fromkeys(out) if q != path]


def set_through(path: tuple, stored) -> bool:
    """Whether the slot at ``path``, under a name the body set (``h = m if flag
    else q``), was stored through that very path on every way to here (``h.v =
    7.0``), and no store since may have reached it another way: a read of it
    (``add(x, h.v)``) reads what the body set, whichever object ``h`` holds."""
    return len(path) > 1 and path[:1] in stored and path in stored


def _overlaps(a: tuple, b: tuple) -> bool:
    """Whether the slots at ``a`` and ``b`` may be one, or one lie under the other
    (an item by a key computed may be any item)."""
    return all(x == y or x == _ANY_KEY or y == _ANY_KEY for x, y in zip(a, b))


def forget_set(stored, made: dict, same: dict, paths) -> None:
    """Drop from ``stored`` the slots stored through a name the body set
    (``set_through``) that a store of the slots at ``paths`` may reach (``m.v =
    2.0`` after ``h.v = 7.0``; ``paths`` None: a store the code cannot follow)."""
    kept = [p for p in stored if len(p) > 1 and p[:1] in stored]
    hits = None if paths is None else [q for r in paths for q in [r] + others(same, r)]
    for p in kept:
        picks = through(p, stored, made)
        if hits is None or not picks or any(_overlaps(a, b) for a in picks for b in hits):
            set.discard(stored, p)


def forget_names(stored, names) -> None:
    """Drop from ``stored`` the slots stored through the names ``names`` the body
    set (``h.v``), which a store sets anew (``h = w``): called before it."""
    for p in [p for p in stored if len(p) > 1 and p[0] in names and p[:1] in stored]:
        set.discard(stored, p)


def received(code_ins: list, i: int, j: int, n: int, may=None):
    """The names whose objects the call ``code_ins[i]`` (its ``n`` arguments
    beginning at ``code_ins[j]``) is handed, as the self of its method (``h.set(v)``)
    or as an argument (``fill(m)``, ``fill([m])``), where its callee may store
    under them (``may``: ``key -> bool``, ``key`` a position, a keyword or
    ``SELF``; None: any may). None where it cannot tell (``f(*args)``)."""
    if code_ins[i].opname == "CALL_FUNCTION_EX":
        return None
    may = may or (lambda key: True)
    out, begin = set(), j
    if j > 0 and code_ins[j - 1].opname in _ATTR_LOADS and may(SELF):   # h.set(v): h
        holder = _chain(code_ins, j - 1)
        out |= {holder[0]} if holder is not None else _names_in(code_ins, 0, j)
    for key, end in _parameters(code_ins, i, n):
        path = _chain(code_ins, end - 1)
        if not may(key):
            pass
        elif path is not None:   # fill(m), fill(m.inner): what it holds
            out.add(path[0])
        elif any(c.opname.startswith(("BUILD_", "STORE", "DICT_", "LIST_", "SET_")) or
                 "JUMP" in c.opname for c in code_ins[begin:end]):   # fill([m]), m if c
            out |= _names_in(code_ins, begin, end)                    # else q
        begin = end
    return out


def _names_in(code_ins: list, begin: int, end: int) -> set:
    return {c.argval[-1] if isinstance(c.argval, tuple) else c.argval
            for c in code_ins[begin:end] if c.opname in _LOADS}


def forget_received(stored, made: dict, same: dict, names) -> None:
    """Drop from ``stored`` the slots stored (``m.v = 7.0``; ``h.v = 7.0`` through a
    name the body set) under an object a call is handed (``received``: ``names``,
    None for any): its code may store there (``m.set(st.v + 100.0)``), so a later
    read of the slot reads what it left, not the store seen."""
    roots = set() if names is not None else None
    for r in names or ():
        roots.add(r)
        if (r,) in stored:   # h = m if flag else q: m and q too
            picks = through((r, (".", "")), stored, made)
            if not picks:   # (h = make(): any object)
                roots = None
                break
            roots |= {q[0] for q in picks}
    for p in [p for p in stored if len(p) > 1]:
        if roots is None or roots & ({p[0]} | {q[0] for q in through(p, stored, made) +
                                               others(same, p)}):
            set.discard(stored, p)

"""What a block's code names, for ``_loop_state.py`` and ``_loop_held.py``.

Read off the code alone, not by what it does (what a body reads before it
stores it is ``_Region``'s, ``_loop_code.py``): ``_names`` lists the names a
code loads (the helpers a body calls), ``_attribute_paths`` the attributes it
loads off a name (the helpers it calls through them), ``_named_paths`` the
slots it loads or stores named all the way from a name (``st.cur``,
``mod.TABLES[4]``); ``_lines`` tells where the code of a function lies (with
the functions it makes and the helpers it names), ``_named`` what a function
holds by name (its globals and filled closure cells), ``table_items`` the
functions a table of them holds. ``LoopState`` asks these
of the slots its snapshots found changed.
"""
from __future__ import annotations

import dis
import functools
import types

from ..names import _filled, _global_names
from ..owners import _attr, _graph_class
from ._loop_paths import _MAX_ITEMS
from ._loop_stack import _ATTR_STORES, _CONSTS, _ITEM_STORES, _LOADS, _begin, _chain, _set


@functools.lru_cache(maxsize=512)   # (each block asks it of its frame's code)
def _names(code, ops) -> tuple:
    return tuple(n for ins in dis.get_instructions(code) if ins.opname in ops
                 for n in (ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)))


@functools.lru_cache(maxsize=512)
def _attribute_paths(code) -> tuple:
    """The paths of the attributes a code loads off a name, once each (``pp.swap``,
    ``Bufs.flip``, ``self.st.step``: the helpers a body calls through them)."""
    code_ins = list(dis.get_instructions(code))
    return tuple(dict.fromkeys(p for j, ins in enumerate(code_ins) for p in (
        _chain(code_ins, j) if ins.opname in ("LOAD_ATTR", "LOAD_METHOD") else
        _getattr_path(code_ins, j),) if p is not None))


def _getattr_path(code_ins: list, j: int):
    """The path ``getattr(NS, "step")`` spells, where ``code_ins[j]`` loads its
    constant name and the code names ``NS`` from a name (``("NS", (".",
    "step"))``), else None."""
    ins = code_ins[j]
    if ins.opname not in _CONSTS or type(ins.argval) is not str or \
            j + 1 >= len(code_ins) or code_ins[j + 1].opname not in ("PRECALL", "CALL") or \
            code_ins[j + 1].arg != 2:
        return None
    holder = _chain(code_ins, j - 1) if j > 1 else None
    h = _begin(code_ins, j + 1, 2)[0]   # (the two values the call takes)
    if holder is None or h < 1 or code_ins[h - 1].opname not in _LOADS or \
            code_ins[h - 1].argval != "getattr":
        return None
    return holder + ((".", ins.argval),)


@functools.lru_cache(maxsize=512)
def _named_paths(code) -> tuple:
    """The paths of the slots a code (and the code made in it) loads or stores,
    named all the way from a name (``st.cur``, ``mod.TABLES[4]``), once each."""
    out: dict = {}
    codes = [code]
    while codes:
        c = codes.pop()
        code_ins = list(dis.get_instructions(c))
        for j, ins in enumerate(code_ins):
            path = _set(code_ins, j) if ins.opname in _ATTR_STORES or \
                ins.opname in _ITEM_STORES else _chain(code_ins, j)
            if path is not None and len(path) > 1:
                out[path] = None
        codes += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    return tuple(out)


def _lines(fn, depth: int = 2) -> set:
    """The ``(file, line)`` of the code of ``fn``, of the functions and lambdas it
    makes, and of the functions it names (its helpers), ``depth`` levels deep."""
    out, codes = set(), [fn.__code__]
    while codes:
        c = codes.pop()
        out |= {(c.co_filename, line) for _, _, line in c.co_lines() if line is not None}
        codes += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    if depth > 1:
        cells = [c.cell_contents for c in fn.__closure__ or () if _filled(c)]
        for v in cells + [fn.__globals__.get(g) for g in _global_names(fn.__code__)]:
            for w in [v] + [x for _, x in table_items(v)]:   # (TABLE["step"](body, x))
                w = _attr(w, "fn") if _graph_class(type(w)) else w   # (a @gt.graph helper's)
                if type(w) is types.FunctionType and w is not fn:
                    out |= _lines(w, depth - 1)
    return out


TABLE_DEPTH = 3   # a table in a table in a table
_TABLES = frozenset({list, tuple, dict, types.SimpleNamespace})   # (by identity)


def table_items(v, most: int = _MAX_ITEMS, depth: int = TABLE_DEPTH, whole: bool = False):
    """``(steps, item)`` of each callable (not a class) that ``v``, a list, tuple or
    dict of at most ``most`` items, holds: a table of helpers, called by a key
    (``TABLE["step"](body, x)``, ``TABLE[name](body, x)``, ``STEPS[0](body, x)``)
    or in a for loop over it (``for g in STEPS: g(body, x)``), with ``steps`` the
    path to it from ``v`` (``(("[]", "step"),)``); else []. ``depth`` levels deep:
    a table in a table (``NESTED["g"]["a"](body, x)``), a list of ``(name, fn)``
    pairs (``for name, g in PAIRS: g(body, x)``), a namespace's functions
    (``NS.a``); ``most`` items in all (a table in it that would pass them is
    left out; ``whole``: None then, for a table too long to read whole)."""
    out: list = []
    left = [most, False]   # (items left to read; whether a table was left out)
    if type(v) in _TABLES:
        _table_walk(v, (), left, depth, out)
    return None if whole and left[1] else out


def _table_walk(v, steps: tuple, left: list, depth: int, out: list) -> None:
    """``table_items``'s walk of ``v`` (at ``steps``), ``left`` as there."""
    if type(v) is types.SimpleNamespace:
        pairs, kind = list(vars(v).items()), "."
    else:
        pairs, kind = list(v.items() if type(v) is dict else enumerate(v)), "[]"
    if len(pairs) > left[0]:
        left[1] = True
        return
    left[0] -= len(pairs)
    inner = []
    for k, x in pairs:
        if callable(x) and not isinstance(x, type):
            out.append((steps + ((kind, k),), x))
        elif type(x) in _TABLES and depth > 1:
            inner.append((k, x))
    for k, x in inner:   # (the table's own functions first)
        _table_walk(x, steps + ((kind, k),), left, depth - 1, out)


def _named(fn) -> dict:
    """The globals and the filled closure cells the code of ``fn`` names: name ->
    what it holds."""
    code = fn.__code__
    out = {g: fn.__globals__[g] for g in _global_names(code) if g in fn.__globals__}
    out.update((name, cell.cell_contents) for name, cell in
               zip(code.co_freevars, fn.__closure__ or ()) if _filled(cell))
    return out


def callable_items(holder, path: tuple, depth: int = 1):
    """The paths of the callable items of a list, tuple or dict at ``path`` (a
    table of functions, ``table_items``; ``depth`` levels deep: ``for name, g in
    PAIRS``), else []; None for one of over ``_MAX_ITEMS`` items in all, whose
    functions are not read (a call of one by a key computed, or in a for loop
    over it, is a call the code cannot tell)."""
    if type(holder) not in (list, tuple, dict):
        return []
    items = table_items(holder, _MAX_ITEMS, depth, whole=True)
    return None if items is None else [path + steps for steps, _ in items]

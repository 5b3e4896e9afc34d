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
from ._loop_stack import _ATTR_STORES, _ITEM_STORES, _chain, _set


@functools.lru_cache(maxsize=512)   # (each block asks it of its frame's code)
def _names(code, ops) -> tuple:
    return tuple(n for ins in dis.get_instructions(code) if ins.opname in ops
                 for n in (ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)))


@functools.lru_cache(maxsize=512)
def _attribute_paths(code) -> tuple:
    """The paths of the attributes a code loads off a name, once each (``pp.swap``,
    ``Bufs.flip``, ``self.st.step``: the helpers a body calls through them)."""
    code_ins = list(dis.get_instructions(code))
    return tuple(dict.fromkeys(p for j, ins in enumerate(code_ins) if ins.opname in
                               ("LOAD_ATTR", "LOAD_METHOD") for p in (_chain(code_ins, j),)
                               if p is not None))


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


def table_items(v, most: int = _MAX_ITEMS) -> list:
    """``(key, item)`` of each callable (not a class) that ``v``, a list, tuple or
    dict of at most ``most`` items, holds: a table of helpers, called by a
    key (``TABLE["step"](body, x)``, ``TABLE[name](body, x)``, ``STEPS[0](body,
    x)``) or in a for loop over it (``for g in STEPS: g(body, x)``); else []."""
    if type(v) not in (list, tuple, dict) or len(v) > most:
        return []
    pairs = v.items() if type(v) is dict else enumerate(v)
    return [(k, x) for k, x in pairs if callable(x) and not isinstance(x, type)]


def _named(fn) -> dict:
    """The globals and the filled closure cells the code of ``fn`` names: name ->
    what it holds."""
    code = fn.__code__
    out = {g: fn.__globals__[g] for g in _global_names(code) if g in fn.__globals__}
    out.update((name, cell.cell_contents) for name, cell in
               zip(code.co_freevars, fn.__closure__ or ()) if _filled(cell))
    return out

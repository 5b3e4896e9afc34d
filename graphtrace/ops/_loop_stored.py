"""The slots a branch's bodies store that end as they began, for ``_loop_after.py``.

``s.if_else`` and ``s.switch`` record their bodies one after the other, in one
run of their Python: what the last one stores is what the code after the
block sees. A slot one body sets and the last sets back (``v = 5.0`` before,
``v = 3.0`` in ``then``, ``v = 5.0`` in ``otherwise``) ends as it began, so
comparing its values before and after the block misses it, while run eagerly
it holds what the body taken set (3.0 where the flag holds). ``stored_slots``
tells the slots under the names the block began with that its code (or a
``body=fn``'s, through its closure's cells and its module's globals) stores,
whatever they hold after: the code after the block reading one is refused as
reading any slot the body changed.
"""
from __future__ import annotations

import dis
import functools

from ._loop_stack import _ATTR_STORES, _ITEM_STORES, _STORES, _set

_NAMED = frozenset({"STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF",
                    "DELETE_FAST", "DELETE_NAME", "DELETE_GLOBAL", "DELETE_DEREF"})


@functools.lru_cache(maxsize=256)
def _instructions(code) -> tuple:
    return tuple(dis.get_instructions(code))


def code_stores(code, lo: int = -1, hi: int = 1 << 62) -> set:
    """The paths the instructions of ``code`` strictly between the offsets ``lo``
    and ``hi`` store or delete: a name (``v = 3.0``; both of ``a, b = ...``), an
    attribute or an item the code names from a name (``st.w = 3.0``,
    ``d["k"] = 3.0``, ``st.k += 1``)."""
    code_ins, out = _instructions(code), set()
    for i, ins in enumerate(code_ins):
        if not lo < ins.offset < hi:
            continue
        if ins.opname in _STORES:
            names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
            out.update((n,) for n in names if type(n) is str)
        elif ins.opname in _ATTR_STORES or ins.opname in _ITEM_STORES:
            p = _set(code_ins, i)
            if p is not None:
                out.add(p)
    return out


def _shared(fn, frame) -> set:
    """The names ``fn``'s code and the code of ``frame`` both reach the same
    slot by: a closure's cell of the frame (``nonlocal v``, or read), a global
    of the same module."""
    code, mine = fn.__code__, frame.f_code
    cells = set(code.co_freevars) & set(mine.co_cellvars + mine.co_freevars)
    glob = set(code.co_names) if fn.__globals__ is frame.f_globals else set()
    return cells | glob


def stored_slots(state, changed: list, body=None) -> list:
    """The paths of the slots ``state`` (a ``LoopState`` of the user's frame,
    closed) took before and after the block, under a name it began with, that
    the block's code stores (``body``: the ``body=`` function, whose stores
    through names the frame shares count), not in ``changed``: each added to
    ``state.before`` and ``state.after`` as it was and is."""
    code, lo, hi = state._code()
    stores = code_stores(code, lo, hi)
    fn = getattr(body, "__func__", body)
    if getattr(fn, "__code__", None) is not None and state.frame is not None:
        shared = _shared(fn, state.frame)
        stores |= {p for p in code_stores(fn.__code__) if p[0] in shared}
    if not stores:
        return []
    names = {p[0] for p in stores}
    old = {n: state.taken[n] for n in names if n in state.taken}
    new = state._taken({n: state.now[n] for n in old if n in state.now})
    seen, out = set(changed), []
    for n, slots in new.items():
        for p, slot in slots.items():
            if p in seen or p not in old[n] or not any(p[:len(q)] == q for q in stores):
                continue
            state.before.setdefault(p, old[n][p])
            state.after.setdefault(p, slot)
            out.append(p)
    return out

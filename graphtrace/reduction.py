"""Transitive reduction: of the pairs ``(pred, node)`` whose closure is a
scope's order, the ones no path without them implies; a node's ``deps`` are
the predecessors no other predecessor reaches.

``deps.py`` finds the pairs (``data_pairs`` from the bytes nodes touch,
``StreamDeps`` from the streams they were recorded on) and ``reduce_pairs``
keeps what the closure needs. The reduction of a DAG is unique, so the edges
do not depend on how the pairs were found. A chain decomposition answers
most questions with one comparison; a search backwards from the newer
predecessors settles the rest (``_search``, or its compiled twin in
``_reduce.c`` where built: ``use_compiled_search``). ``deps_small.reduce``
does the same for scopes of a few dozen nodes, in plain Python.
"""
from __future__ import annotations

import numpy as np

from ._compiled import reducer

__all__ = ["reduce_pairs", "use_compiled_search"]


def reduce_pairs(n: int, preds, ops) -> tuple:
    """``(ptr, deps)``: node i's deps are ``deps[ptr[i]:ptr[i + 1]]``, ascending: of
    the pairs ``(preds[k], ops[k])`` (``preds[k] < ops[k]``), those whose closure
    still has a path without them are dropped.

    Every node joins a chain: the chain of its latest predecessor if it is that
    predecessor's first successor, else a new one. Along a chain each node
    reaches every later one, so of a node's predecessors on one chain only the
    latest can stay; predecessors left on several chains are settled by a
    search backwards from the newer ones, which stops once every question is.
    """
    key = _distinct(np.asarray(ops, np.int64) * n + np.asarray(preds, np.int64))
    ops = key // max(n, 1)
    preds = key - ops * n
    count = np.bincount(ops, minlength=n)
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(count, out=ptr[1:])
    if not len(count) or count.max() < 2:
        return ptr, preds
    head = _chains(n, ptr, preds, count)
    many = count[ops] >= 2   # keep one predecessor per (node, chain): the latest
    group = ops[many] * n + head[preds[many]]
    order = np.argsort(group, kind="stable")
    latest = np.ones(len(order), bool)
    latest[:-1] = group[order][:-1] != group[order][1:]
    keep = np.ones(len(ops), bool)
    drop = np.flatnonzero(many)[order[~latest]]
    keep[drop] = False
    ops, preds = ops[keep], preds[keep]
    count = np.bincount(ops, minlength=n)
    ptr[1:] = np.cumsum(count)
    if count.max() >= 2:
        fast = _SEARCH[0]
        keep = _search(n, ptr, preds, count, head) if fast is None else \
            np.frombuffer(fast.search(ptr, preds, head), bool)
        ops, preds = ops[keep], preds[keep]
        ptr[1:] = np.cumsum(np.bincount(ops, minlength=n))
    return ptr, preds


def _chains(n, ptr, preds, count) -> np.ndarray:
    """The first node of each node's chain."""
    has = np.flatnonzero(count)
    link = preds[ptr[has + 1] - 1]   # the latest predecessor
    order = np.argsort(link, kind="stable")
    first = np.ones(len(order), bool)
    first[1:] = link[order][1:] != link[order][:-1]
    child = has[order[first]]   # the first successor of each linked node
    up = np.arange(n, dtype=np.int64)
    up[child] = link[order[first]]   # each chain's link to the node before it
    # each node's first: links followed by doubling (log2 of the longest chain rounds)
    while True:
        far = up[up]
        if np.array_equal(far, up):
            return up
        up = far


def _distinct(a):
    """Sorted distinct values (np.unique hashes int64 slowly); values already in
    order (arrays taken in by address, as allocators hand them out) are not sorted."""
    if len(a) > 1 and not (a[1:] >= a[:-1]).all():
        a = np.sort(a)
    keep = np.ones(len(a), bool)
    keep[1:] = a[1:] != a[:-1]
    return a[keep]


_BUILT = reducer()
_SEARCH = [_BUILT]   # the search in use: compiled (_reduce.c), or None for _search


def use_compiled_search(on: bool) -> bool:
    """Settle ``reduce_pairs``'s open questions by the compiled search (where built)
    or, ``on=False``, by ``_search``; whether it was on before. Both keep the same
    pairs (the reduction is unique)."""
    was = _SEARCH[0] is not None
    _SEARCH[0] = _BUILT if on else None
    return was


def _search(n, ptr, preds, count, head) -> np.ndarray:
    """Mask of the pairs to keep: for nodes left with predecessors on several
    chains, drop those another predecessor reaches. (``_reduce.c`` is this and
    ``_latest_on`` compiled, used where built: ``use_compiled_search``.)

    A walk back from the newer predecessors settles most questions at once; it
    stops below the oldest one or once every question is settled. Where that
    walk would be long (independent predecessors far apart, which it can only
    prove by visiting everything between), ``_latest_on`` answers what is left,
    remembering per node and chain what it found for later questions.
    """
    keep = np.ones(len(preds), bool)
    ptr_l, preds_l, head_l = ptr.tolist(), preds.tolist(), head.tolist()
    memo: dict = {}
    for node in np.flatnonzero(count >= 2).tolist():
        a, b = ptr_l[node], ptr_l[node + 1]
        ps = preds_l[a:b]
        wanted = {head_l[p]: p for p in ps[:-1]}
        lo, seen, redundant = ps[0], set(), set()
        budget = 4 * len(ps)
        for q in reversed(ps):
            if q in redundant:
                continue   # its ancestors were walked from the one that reaches it
            if wanted.get(head_l[q]) == q:
                del wanted[head_l[q]]
            stack = preds_l[ptr_l[q]:ptr_l[q + 1]]
            while stack and wanted and budget:
                v = stack.pop()
                if v < lo or v in seen:
                    continue
                seen.add(v)
                budget -= 1
                w = wanted.get(head_l[v])
                if w is not None and w <= v:
                    redundant.add(w)
                    del wanted[head_l[v]]
                stack.extend(preds_l[ptr_l[v]:ptr_l[v + 1]])
            if not wanted or not budget:
                break
        for p in wanted.values():   # left open by a walk that ran too long
            if any(_latest_on(q, head_l[p], p, ptr_l, preds_l, head_l, memo) >= p
                   for q in ps if q > p):
                redundant.add(p)
        for k in range(a, b):
            if preds_l[k] in redundant:
                keep[k] = False
    return keep


def _latest_on(q, chain, lo, ptr, preds, head, memo) -> int:
    """The latest node of ``chain`` that is ``q`` or one of its ancestors, looking
    no further back than ``lo`` (-1 if none: then a node of the chain from ``lo``
    on cannot reach q).

    ``memo[(node, chain)]`` is ``(answer, lo it looked back to)``; an answer
    found is final (the chain's nodes before ``lo`` come earlier still).
    """
    stack = [q]
    while stack:
        u = stack[-1]
        hit = memo.get((u, chain))
        if hit is not None and (hit[0] >= 0 or hit[1] <= lo):
            stack.pop()
            continue
        if head[u] == chain:
            memo[(u, chain)] = (u, 0)
            stack.pop()
            continue
        ws = [w for w in preds[ptr[u]:ptr[u + 1]] if w >= lo]
        todo = [w for w in ws if not _known(memo.get((w, chain)), lo)]
        if todo:
            stack += todo
            continue
        memo[(u, chain)] = (max((memo[(w, chain)][0] for w in ws), default=-1), lo)
        stack.pop()
    return memo[(q, chain)][0]


def _known(hit, lo) -> bool:
    return hit is not None and (hit[0] >= 0 or hit[1] <= lo)

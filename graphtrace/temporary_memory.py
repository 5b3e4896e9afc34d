"""Where graph-owned temporaries' memory comes from (``temporary.py`` makes them).

Each compiled graph allocates one block for all
its temporaries when it is built and keeps it for its life. Temporaries share
bytes of it when the graph orders every use of one before every use of the
other (``layout``), as CUDA's graph alloc/free nodes would let them; two that
may be in use at once never do. Measured on an H200 (bench/RESULTS.md, a
chain of 100 kernels through 1 or 16 MB temporaries), a block packed this way
replays as fast as alloc/free nodes and holds what they hold (two
temporaries of the chain), where one byte range per temporary held all
100. Alloc/free nodes have costs the block has not: a graph holding them cannot be cloned or embedded,
allows one instantiation at a time (a captured region captured anew
instantiates the graph again), and CUDA refuses them in conditional bodies,
where temporaries are most useful (a loop's scratch). With the block, a
temporary made in a loop body is placed outside the body like any other, its
address is stable across launches, and rebinding the arguments never touches
it. The cost: its bytes are held between launches, and an ``empty`` temporary
starts each launch with whatever its bytes hold.

The memory is placed by ``Binding.allocate`` (``binding.py``): the compiled
graph (``emit.py``, ``device_memory``), the intent check (``debug.py``) and the
simulator (``sim.py``, ``host_memory``) each give the block one address.
"""
from __future__ import annotations

import numpy as np

from ._driver import current
from ._free_space import FreeSpace
from .buffers import Buffer
from .errors import ArgumentError, user_frame
from .temporary import _ALIGN, _aligned
from .tree import leaves

__all__ = ["device_memory", "host_memory", "layout", "owned_moves"]


def _touched(node, owned: dict) -> set:
    """The temporaries (indexes into ``owned``) a top-level node touches; a
    structured node touches what its regions touch."""
    found = set()
    for v in [*leaves(node.args), *(b for b, _ in node.accesses)]:
        i = owned.get(id(v.base)) if isinstance(v, Buffer) else None
        if i is not None:
            found.add(i)
    return found


def layout(graph, members=None) -> tuple[int, list[int]]:
    """``(bytes, offset of each temporary)`` (of those at the indexes ``members``,
    by default all): temporaries share bytes when the graph orders every user
    of one before every user of the other.

    ``anc[p]`` is the set (a bit mask) of nodes using temporaries that the node
    at position ``p`` depends on, transitively. Temporary ``a`` ends before ``b``
    begins when every user of ``a`` is in ``anc`` of every user of ``b``; two
    temporaries for which neither holds get disjoint bytes (first fit).
    """
    temps = graph.temporaries if members is None else [graph.temporaries[i] for i in members]
    owned = {id(t): i for i, t in enumerate(temps)}
    pos = {n.index: p for p, n in enumerate(graph.nodes)}
    users: list[list[int]] = [[] for _ in temps]
    anc: list[int] = []
    user_bit: dict[int, int] = {}
    for p, node in enumerate(graph.nodes):
        mask = 0
        for d in node.deps:
            q = pos[d.index]
            mask |= anc[q] | user_bit.get(q, 0)
        anc.append(mask)
        touched = _touched(node, owned)
        if touched:
            user_bit[p] = 1 << len(user_bit)
            for i in touched:
                users[i].append(p)
    before, last = [], []   # users preceding every user of temporary i; its last users
    for u in users:
        common, earlier = -1, 0
        for p in u:
            common &= anc[p]
            earlier |= anc[p]
        before.append(common if u else 0)
        last.append(sum(user_bit[p] for p in u) & ~earlier)

    # Placed in the order of their first users, a temporary j placed before i
    # begins no later than i; so they are ordered exactly when every user of j is
    # before every user of i: when its last users are (``before`` holds the
    # users' ancestors too). Temporaries placed at one range are tested at once:
    # the range is in use when one of the last users of those at it is not in
    # ``before`` (``lasts``). The ranges in use lie on ``space``; moving on to
    # the next temporary re-tests only the ranges whose last users entered or
    # left ``before``, so that a temporary kept alive while k others are placed
    # costs nothing per placement, and a chain of k temporaries reusing two
    # ranges costs nothing per range.
    offsets, total = [0] * len(temps), 0
    space, at_range, spans, lasts, live, watch = FreeSpace(), {}, [], [], [], {}
    watched = now = 0   # bits of the placed temporaries' last users; ``before`` of the last placed
    for i in sorted(range(len(temps)), key=lambda i: (users[i][:1] or [-1], i)):
        size = _aligned(temps[i].nbytes)
        if not users[i]:   # never used: ordered with every other, at 0
            total = max(total, size)
            continue
        changed, now = (before[i] ^ now) & watched, before[i]
        if changed:
            if changed & (changed - 1) == 0:   # one bit, as along a chain
                tested = watch[changed]
            elif changed.bit_count() > len(spans):
                tested = [r for r, m in enumerate(lasts) if m & changed]
            else:
                tested = set()
                while changed:
                    low = changed & -changed
                    changed ^= low
                    tested.update(watch[low])
            for r in tested:
                in_use = lasts[r] & ~now != 0
                if in_use != live[r]:
                    live[r] = in_use
                    space.count(*spans[r], 1 if in_use else -1)
        at = offsets[i] = space.first_fit(size)
        total = max(total, at + size)
        r = at_range.setdefault((at, at + size), len(spans))
        if r == len(spans):
            spans.append((at, at + size))
            lasts.append(0)
            live.append(False)
        live[r] = True   # not in use until now (first fit), and in use by i now
        space.count(at, at + size, 1)
        bits = last[i] & ~lasts[r]
        lasts[r] |= bits
        watched |= bits
        while bits:
            low = bits & -bits
            watch.setdefault(low, []).append(r)
            bits ^= low
    return total, offsets


def device_memory(nbytes: int, device) -> tuple[object, int]:
    """``(block, its address)``: one allocation on ``device`` (a cuda.core ``Device``),
    kept by the caller."""
    with current(device.device_id):
        block = device.allocate(max(nbytes, 1), stream=device.default_stream)
        device.default_stream.sync()
    return block, int(block.handle)


def host_memory(nbytes: int) -> tuple[np.ndarray, int]:
    """The simulator's block: host memory, filled with 0xFF bytes (NaN floats, -1
    ints) so that reading what was never written shows."""
    block = np.full(nbytes + _ALIGN, 0xFF, np.uint8)
    return block, -block.ctypes.data % _ALIGN + block.ctypes.data


def owned_moves(graph, allocate, home=None) -> dict[int, int]:
    """``id(temporary's root) -> its address - its virtual one``, its memory taken
    from ``allocate(nbytes, device) -> address`` (a binding's, kept for the
    binding's life): one block per device that holds temporaries; those placed
    on none share the block of ``home``, the graph's own device."""
    groups: dict = {}
    for i, t in enumerate(graph.temporaries):
        groups.setdefault(home if t.device is None else t.device, []).append(i)
    moves = {}
    for device, members in groups.items():
        total, offsets = layout(graph, members)
        try:
            base = allocate(total, None if device == home else device)
        except Exception as e:  # noqa: BLE001  (numpy's MemoryError, the driver's error)
            if not isinstance(e, MemoryError) and "OUT_OF_MEMORY" not in str(e):
                raise
            largest = max((graph.temporaries[i] for i in members), key=lambda t: t.nbytes)
            raise ArgumentError(
                f"the graph's temporaries need {total:,} bytes, which could not be "
                f"allocated ({type(e).__name__}); the largest is {largest.label} "
                f"({largest.nbytes:,} bytes): make them smaller, or split the work",
                user_frame()) from None
        for i, o in zip(members, offsets):
            t = graph.temporaries[i]
            moves[id(t)] = base + o - t.ptr
    return moves

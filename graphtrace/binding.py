"""Which recorded values come from which argument, and what they are now.

A graph is traced once with the first call's arguments; later calls with
the same signature bring other arrays and numbers. ``Binding`` maps every
recorded view to the argument it lies in (so that a view moves with its
argument) and every dynamic scalar to its slot, and tells which nodes a new
set of arguments changes. Views of the graph's temporaries move to the
memory the binding gives them (``allocate``) and never again. Both the
compiled GPU graph and the simulator's graph are bindings.
"""
from __future__ import annotations

import threading

from . import log
from .buffers import Buffer
from .ir import Graph
from .ops.base import Op
from .scalar import Scalar, same_value
from .temporary_memory import owned_moves
from .tree import leaves

__all__ = ["Binding", "changed_scalars"]

_NO_CHECK = Op.check_values   # an op that does not override it checks nothing


def changed_scalars(new: list, old: list) -> list[int]:
    """The slots whose number differs (a value of another type differs too, and
    -0.0 from 0.0)."""
    return [j for j, (v, was) in enumerate(zip(new, old))
            if v is not was and (type(v) is not type(was) or not same_value(v, was))]


def _like(a):
    """What a number check reads of a recorded argument: a dynamic number's slot, an
    array's dtype, another value's type."""
    if isinstance(a, Scalar):
        return "slot", a.slot
    if isinstance(a, Buffer):
        return "array", a.dtype.str
    return "value", type(a)


class Binding:
    """The current arguments of a recorded graph; keeps them alive."""

    def __init__(self, ir: Graph, arrays: list[Buffer], scalars: list[Scalar]):
        self.ir = ir
        self._lock = threading.Lock()
        self._roots = arrays                             # traced argument buffers
        self._slot: dict[int, int] = {}
        for i, b in enumerate(arrays):
            self._slot.setdefault(id(b), i)
        self._ptrs = [b.ptr for b in arrays]
        self._objs = [b.obj for b in arrays]
        self._svals = [s._value for s in scalars]
        self._bound = None                               # snapshot of the last call's args
        self.stores = ()   # values its trace read, then set: set again at each replay
        self.settle = False   # whether they change what the key reads (the next call
        # takes the full check), or lie off an argument the shortcuts do not bind
        self._moved: dict[int, Buffer] = {}              # id(recorded view) -> it, moved
        self.broken = False                              # a failed update left it unusable
        self._by_index = None   # node index -> node, regions' nodes too (_nodes_by_index)
        self._owned = owned_moves(ir, self.allocate, getattr(self, "_device_id", None)) \
            if ir.temporaries else {}
        self._user_lists = None   # (users of each array slot, of each scalar slot)
        self._checks = None   # per scalar slot, the nodes refuse_numbers asks

    @property
    def node_count(self) -> int:
        return len(self.ir.nodes)

    @property
    def edge_count(self) -> int:
        return sum(len(n.deps) for n in self.ir.nodes)

    def allocate(self, nbytes: int, device=None) -> int:
        """The address of ``nbytes`` for the temporaries on ``device`` (None: the
        graph's own), which ``self`` keeps for its life (``temporary_memory.py`` says
        why, and how they share it)."""
        raise NotImplementedError(f"{type(self).__name__} cannot hold temporaries")

    def value_of(self, x):
        """The value a recorded argument has in the current binding."""
        if isinstance(x, Buffer):
            i = self._slot.get(id(x.base))
            if i is not None:
                delta = self._ptrs[i] - x.base.ptr
            else:
                delta = self._owned.get(id(x.base))
                if delta is None:
                    return x
            if delta == 0:
                return x
            hit = self._moved.get(id(x))   # many nodes share one recorded view
            if hit is None or hit.ptr != x.ptr + delta:
                hit = self._moved[id(x)] = x.moved(delta)
            return hit
        if isinstance(x, Scalar):
            return self._svals[x.slot]
        return x

    def owner_of(self, x):
        """The object bound now to the argument that recorded view ``x`` lies in
        (None for a temporary's or a global's)."""
        i = self._slot.get(id(x.base)) if isinstance(x, Buffer) else None
        return None if i is None else self._objs[i]

    def users(self) -> tuple[list, list]:
        """The nodes (indices, sorted) that use each argument slot and each scalar
        slot; found when first asked for (a rebind), not while a graph is built."""
        if self._user_lists is None:
            self._user_lists = self._users(len(self._roots), len(self._svals))
        return self._user_lists

    def _users(self, n_arrays, n_scalars):
        users_a = [set() for _ in range(n_arrays)]
        users_s = [set() for _ in range(n_scalars)]
        slot_of, nested = self._slot.get, (tuple, list, dict)
        for n in self.ir.walk():   # once per node of the graph: kept lean
            index, slots = n.index, {slot_of(id(b.base)) for b, _ in n.accesses}
            for v in n.args:
                for v in leaves(v) if type(v) in nested else (v,):
                    if isinstance(v, Buffer):
                        slots.add(slot_of(id(v.base)))
                    elif isinstance(v, Scalar):
                        users_s[v.slot].add(index)
            for i in slots:
                if i is not None:
                    users_a[i].add(index)
        for i, b in enumerate(self._roots):   # an array passed twice shares a slot
            first = self._slot[id(b)]
            if first != i:
                users_a[i] = users_a[first]
        return [sorted(u) for u in users_a], [sorted(u) for u in users_s]

    def refuse_numbers(self, svals: list) -> None:
        """Raise, at the call and naming the op's line, where a new number cannot run
        a node that uses it (2**63 for a numba kernel's parameter that the traced 1 made
        an int64): the GPU's packing would refuse it while updating the graph, the
        simulator before it runs; asked here first, on every backend, before anything
        of the binding changes, so the graph stays usable."""
        changed = changed_scalars(svals, self._svals)
        if not changed:
            return
        if self._checks is None:
            self._checks = self._number_checks()
        value_of = lambda x: svals[x.slot] if isinstance(x, Scalar) else x   # noqa: E731
        for node in sorted({n for j in changed for n in self._checks[j]},
                           key=lambda n: n.index):
            node.op.check_values(value_of, node)

    def _number_checks(self) -> list:
        """Per scalar slot, the nodes ``refuse_numbers`` asks: of the nodes alike in
        what a check reads (op, kernel, each argument's slot or dtype, attributes), the
        first, which answers for them all (a launch repeated a thousand times is
        asked once per call)."""
        users, by_index = self.users()[1], self._nodes_by_index()
        out = []
        for nodes in users:
            seen, kept = set(), []
            for i in nodes:
                node = by_index[i]
                if type(node.op).check_values is _NO_CHECK:
                    continue
                key = (type(node.op), id(node.target), repr(node.attrs), tuple(
                    tuple(map(_like, leaves(a))) if type(a) in (tuple, list, dict) else
                    _like(a) for a in node.args))
                if key not in seen:
                    seen.add(key)
                    kept.append(node)
            out.append(kept)
        return out

    def bind(self, objs: list, ptrs: list[int], svals: list) -> list:
        """Take new arguments; return the nodes whose values changed."""
        changed, (users_a, users_s) = set(), self.users()
        self._changed_slots = [i for i, p in enumerate(ptrs) if p != self._ptrs[i]]
        for i in self._changed_slots:
            changed.update(users_a[i])
        self._changed_scalars = changed_scalars(svals, self._svals)
        for j in self._changed_scalars:
            changed.update(users_s[j])
        self._objs, self._ptrs, self._svals = objs, ptrs, svals
        self._bound = None   # the function's next call checks its arguments again
        by_index = self._nodes_by_index()
        log.rebound(self.ir.name, len(changed), len(by_index))
        return [by_index[i] for i in sorted(changed)]

    def _nodes_by_index(self) -> dict:
        if self._by_index is None:   # at the first rebind, not while a graph is built
            self._by_index = {n.index: n for n in self.ir.walk()}
        return self._by_index

"""The checks that let a repeated call of a graph function launch at once:
``Shortcuts``, mixed into ``GraphFunction`` (``function.py``), whose
``__call__`` takes the first that holds before the full check of its key.

- ``_fast_check``: what a function's call compares with the last call's to
  launch at once (the very argument objects, what the names it reaches hold,
  the backend), checked in a few C calls;
- ``_guard``/``_guarded``: identity snapshots (``guard.py``) of a method's
  ``self`` and what it reaches, or of what a function's names hold, taken
  after a full check;
- ``_reached_same``: whether what the last call reached by name (arrays,
  helpers, a method's ``self`` values) is the very same, so that the graph is
  bound to its arrays already.
"""
from __future__ import annotations

import operator
import weakref

from .arguments import changeable, geometry_check, same_call
from .guard import Guard
from .values import _CHANGING, identities

__all__ = ["Shortcuts", "is_", "call_of"]

is_ = operator.is_
call_of = getattr(operator, "call", None) or (lambda f: f())   # operator.call: Python 3.11
_GUARD_REST = 16     # full checks without a method's Guard after one failed


def _same_arrays(now, before) -> bool:
    """Whether two lists of ``(label, array)`` hold the very arrays, by the same labels."""
    return len(now) == len(before) and \
        all(a is b and la == lb for (la, a), (lb, b) in zip(now, before))


class Shortcuts:
    """The call path's shortcuts (mixed into ``GraphFunction``: ``self`` is the
    decorated function)."""

    def _guard(self, args):
        """``(Guard, weak reference to self)`` of a method's call (``guard.py``; a
        function's: ``(Guard, None)``), taken before the launch (a host callback may
        change what it snapshots);
        None after one failed (``self`` changed between calls: ``model.epoch = e``,
        or the arguments did: buffers alternating), for the next ``_GUARD_REST``
        full checks, which it would only slow."""
        if self._guard_skip:
            self._guard_skip -= 1
            return None
        try:   # (a function's: what its names hold, no self)
            ref = weakref.ref(args[0]) if self._lead else None
        except TypeError:   # slots without __weakref__
            return None
        guard = Guard.of(args[0] if self._lead else None, self.fn)
        return None if guard is None else (guard, ref)

    def _guarded(self, args, kwargs, last) -> bool:
        """Whether a method's call is on the last call's ``self`` and arguments (a
        function's on its arguments), and nothing its ``Guard`` snapshotted changed:
        the full check would find the same graph, its arrays bound already."""
        guard, ref = last[4]
        (sargs, skw) = last[0]
        lead = ref is not None   # (a function's: None)
        try:
            if (not lead or args and ref() is args[0]) and guard.unchanged() and \
                    same_call(args[lead:], kwargs, (sargs[lead:], skw)):
                return True
        except Exception:  # noqa: BLE001  (a container's own code raising: the full check)
            pass
        self._guard_skip = _GUARD_REST   # other arguments (buffers alternating), or a change
        self._last = last[:4] + (None,)   # (not asked again: the full check says)
        return False

    def _fast_check(self, args, snap, entry, backend):
        """What ``__call__`` compares a call with to launch at once: the last call's
        argument objects (and the geometry of those an array's own code can reshape
        in place: ``arguments._Geometry``), the objects the names it reaches held (helpers, values,
        arrays, and for a name holding a container of arrays what its leaves depend
        on: ``reach.watch``),
        its backend. Container arguments: the items of a flat list or tuple, what
        a dict's or nested containers' leaves depend on (``values.identities``).
        None where a call must take the full check: methods, containers
        ``identities`` cannot vouch for. ``backend``: the default backend now."""
        reach = self._holdings.reach
        if self._lead or reach.objects and self._holdings.walk(None)[0] or \
                reach.partials:   # objects of the program's own whose methods run or arrays
            return None   # are used; partials holding values (FN = partial(mix, coefs))
        getters, deep = reach.getters, ()
        if reach.has_arrays or reach.wholes or reach.callbacks:
            try:
                watched = reach.watch()
            except ValueError:   # an empty closure cell
                return None
            if watched is None:
                return None
            getters += watched[0]
            deep = watched[1]
        if self._holdings.regional:   # where captured regions reached arrays (m.W)
            watched = self._holdings.regional.watch()
            if watched is None:
                return None
            getters += watched[0]
            deep += watched[1]
        flat = []
        for i, a in enumerate(args):
            if changeable(snap[0][i]):   # a config object: its values read at every call
                return None
            if isinstance(a, (list, tuple)) and \
                    not any(isinstance(v, (list, tuple, dict)) for v in a):
                flat.append((i, type(a), tuple(a)))   # flat: its items
            elif isinstance(a, (list, tuple, dict)):
                items: list = []
                if not identities(a, items):
                    return None
                flat.append((i, None, items))
        try:
            held = tuple(map(call_of, getters))
        except ValueError:   # an empty closure cell
            return None
        if any(type(v) in _CHANGING for v in held):   # a set read off CFG["coefs"]:
            return None   # changed in place, the same object (the full check reads it)
        return (args, tuple(flat), getters, held, self.backend, backend,
                "stream" not in self._own_keywords, entry, snap, deep,
                geometry_check(snap[0], held))

    def _reached_same(self, args, reached) -> bool:
        """Whether the arrays and helpers reached by name (and a method's ``self``
        attributes), and the arrays host callbacks read, are the very objects of
        ``reached``, in the same places (an array moved to a place that held None
        is another graph)."""
        holdings = self._holdings
        reach = holdings.reach
        if reached[3]:   # callbacks passed reaching host arrays: what they hold now
            return False
        if (holdings.regional or reached[5]) and \
                not _same_arrays(holdings.regional.values(), reached[5]):
            return False   # a place a captured region reached an array through (m.W)
        if not self._lead and not reach.places and not reach.objects and not reach.callbacks:
            return not reached[0] and not reached[1] and not reached[2]
        self_obj = args[0] if self._lead else None
        held = holdings.walk(self_obj) if self._lead or reach.objects else None   # walked once
        if holdings.functions(self_obj, held) != reached[1] or \
                not _same_arrays(holdings.callback_arrays(self_obj, held), reached[2]):
            return False
        if not self._lead and not reach.has_arrays and not reach.objects:
            return not reached[0]
        arrays = holdings.arrays_of(self_obj, held) if self._lead else \
            holdings.named_arrays(held)
        return _same_arrays(arrays, reached[0]) and all(g.holds(g.obj) for g in reached[4])

"""Events: ``s.record(event)`` and ``s.wait(event)``.

An event recorded in the trace and waited on in the same trace is only an
ordering (``deps="streams"``: the waiting stream's next work comes after the
record; ``deps="data"``: data already orders the work). An event recorded
for the outside world becomes an event-record node, and waiting on an event
from outside becomes an event-wait node. In data mode both are opaque
barriers, since the memory the other side touches is unknown; in streams
mode their stream places them, and they touch no memory themselves, so they
are not opaque: ``gt.check`` would otherwise see them race with everything
their stream order leaves aside.
"""
from __future__ import annotations

from .base import Op, register, stream_method

__all__ = ["record", "wait"]


@stream_method
def record(self, event):
    """Record ``event`` (a cuda.core ``Event``) once the work issued so far is done."""
    t = self._check()
    node = self._record("event_record", event, (), (), opaque=t.mode == "data")
    t.events[id(event)] = node
    t.deps.record(self._index, node)
    return node


@stream_method
def wait(self, event):
    """Make later work wait for ``event``."""
    t = self._check()
    node = t.events.get(id(event))
    if node is not None and node.target is event:
        t.deps.wait(self._index, node)
        return node
    return self._record("event_wait", event, (), (), opaque=t.mode == "data")


def _event(node):
    from cuda.core import Event
    if not isinstance(node.target, Event):
        raise TypeError(f"graph event nodes need a cuda.core Event, not "
                        f"{type(node.target).__name__} (Device().create_event())")
    return node.target


def _nothing(sim, node):
    """On the simulator everything before has finished: events have nothing to do."""


register(Op("event_record", lambda n, nm: "event",
            lambda em, node, parent: parent.record(_event(node)), None, _nothing))
register(Op("event_wait", lambda n, nm: "event",
            lambda em, node, parent: parent.wait(_event(node)), None, _nothing))

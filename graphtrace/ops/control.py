"""Stream structure: ``s.fork()``/``s.join(...)``, ``s.record(event)``/``s.wait(event)``.

``fork`` and ``join`` only shape the order of work in ``deps="streams"``.

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

from ..errors import StreamError
from .base import Op

__all__ = ["fork", "join", "record_event", "wait_event", "EVENT_RECORD", "EVENT_WAIT"]


def fork(stream):
    """A new proxy stream that starts after the work issued on ``stream`` so far."""
    t = stream.tracer()
    return type(stream)(t, t.fork(stream.index, stream.scope), stream.scope)


def join(stream, others) -> None:
    """Make later work on ``stream`` wait for everything issued on ``others``."""
    t = stream.tracer()
    for other in others:
        if not isinstance(other, type(stream)) or other.tracer() is not t:
            raise StreamError("join() takes proxy streams of the same trace")
        if other.scope is not stream.scope:
            raise StreamError("join() takes proxy streams of the same region: a loop or "
                              "branch body cannot wait for work outside it, nor the "
                              "reverse")
        t.join(stream.index, other.index, stream.scope)


def record_event(stream, event):
    """Record ``event`` on ``stream`` once the work issued there so far is done."""
    t = stream.tracer()
    node = t.record(EVENT_RECORD, event, (), (), stream=stream.index, scope=stream.scope,
                    opaque=t.mode == "data")
    t.record_event(event, node, stream.index, stream.scope)
    return node


def wait_event(stream, event):
    """Make later work on ``stream`` wait for ``event``."""
    t = stream.tracer()
    node = t.event_node(event, stream.scope)
    if node is not None:
        t.wait_event(node, stream.index, stream.scope)
        return node
    return t.record(EVENT_WAIT, event, (), (), stream=stream.index, scope=stream.scope,
                    opaque=t.mode == "data")


def _event(node):
    from cuda.core import Event
    if not isinstance(node.target, Event):
        raise TypeError(f"graph event nodes need a cuda.core Event, not "
                        f"{type(node.target).__name__} (Device().create_event())")
    return node.target


class _EventOp(Op):
    """``target`` the event; no arguments, no accesses."""

    refused_in_conditional = "event records and waits"

    def describe(self, node, namer) -> str:
        return "event"

    def verify(self, node) -> str | None:
        return "an event node touches no memory" if node.accesses else None

    def simulate(self, sim, node) -> None:
        """On the simulator everything before has finished: events have nothing to do."""


class EventRecordOp(_EventOp):
    kind = "event_record"

    def emit(self, gpu, node, parent):
        return parent.record(_event(node))


class EventWaitOp(_EventOp):
    kind = "event_wait"

    def emit(self, gpu, node, parent):
        return parent.wait(_event(node))


EVENT_RECORD, EVENT_WAIT = EventRecordOp(), EventWaitOp()

"""Stream structure: ``s.fork()``/``s.join(...)``, ``s.record(event)``/``s.wait(event)``.

``fork`` and ``join`` only shape the order of work in ``deps="streams"``.

An event recorded in the trace and waited on in the same trace is only an
ordering (``deps="streams"``: the waiting stream's next work comes after the
record; ``deps="data"``: data already orders the work). Across a child graph
the child node stands for its inside: waiting outside on an event recorded in
it waits for the child node, and a child waiting on one recorded before it
outside follows that record as a whole. Each record is an event-record node
(work outside the graph may wait on the event too), and waiting on an event
from outside becomes an event-wait node. In data mode the record follows
every node recorded before it and nothing has to follow it (``closes``): an
outside waiter sees all the work before the record done, and the work after
it runs as its data allow; the wait is an opaque barrier, since the memory
the other side touches is unknown. In streams mode their stream places them,
and they touch no memory themselves, so they are not opaque: ``gt.check``
would otherwise see them race with everything their stream order leaves aside.
"""
from __future__ import annotations

from ..arrays import is_array
from ..errors import EmitError, StreamError
from ..scalar import Scalar
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
        if not isinstance(other, type(stream)):
            raise StreamError(f"join() takes proxy streams (made by s.fork()), not "
                              f"{_what(other)}: s.join(t) for t = s.fork()")
        if other.tracer() is not t:
            raise StreamError("join() takes proxy streams of the same trace: a stream of "
                              "another graph function's trace cannot be joined here")
        if other.scope is not stream.scope:
            raise StreamError("join() takes proxy streams of the same region: a loop or "
                              "branch body cannot wait for work outside it, nor the "
                              "reverse")
        t.join(stream.index, other.index, stream.scope)


def _what(v) -> str:
    return "None" if v is None else f"{type(v).__name__} {v!r}" if isinstance(
        v, (int, float, str, bytes)) else f"a {type(v).__name__}"


def _refuse_no_event(stream, event, word: str) -> None:
    """Numbers, text, arrays and streams are no events (a number passed to the graph
    function arrives as its dynamic Scalar)."""
    if isinstance(event, Scalar):
        event = event._value
    elif not (event is None or isinstance(event, (int, float, complex, str, bytes, type(stream)))
              or is_array(event)):
        return
    raise StreamError(f"{word}() takes an event, not {_what(event)}: make one with "
                      "cuda.core's Device().create_event() (cupy's and torch's events "
                      "cannot be put in a graph)")


def record_event(stream, event):
    """Record ``event`` on ``stream`` once the work issued there so far is done."""
    _refuse_no_event(stream, event, "record")
    t = stream.tracer()
    node = t.record(EVENT_RECORD, event, (), (), stream=stream.index, scope=stream.scope,
                    attrs=_CLOSES if t.mode_of(stream.scope) == "data" else None)
    t.record_event(event, node, stream.index, stream.scope)
    return node


_CLOSES = {"closes": True}   # read by Tracer.record (deps) and hazards.py (explain)


def wait_event(stream, event):
    """Make later work on ``stream`` wait for ``event``."""
    _refuse_no_event(stream, event, "wait")
    t = stream.tracer()
    node = t.wait_event(event, stream.index, stream.scope)
    if node is not None:
        return node
    return t.record(EVENT_WAIT, event, (), (), stream=stream.index, scope=stream.scope,
                    opaque=t.mode_of(stream.scope) == "data")


def _event(node):
    from cuda.core import Event
    if not isinstance(node.target, Event):
        raise EmitError(f"an event recorded or waited on in a graph must be a cuda.core "
                        f"Event, not {type(node.target).__name__}: make it with "
                        "cuda.core's Device().create_event()", source=node.source)
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

"""The thread state of tracing, below everything that records.

Which tracer is active in this thread, the hooks run as each trace starts,
and the base type of proxy streams: the op modules (numba's launch syntax)
and the host-access guards ask these without importing the tracer.
"""
from __future__ import annotations

import threading
from typing import Callable

__all__ = ["current_tracer", "set_tracer", "on_trace_start", "TRACE_HOOKS", "ProxyStream"]

_state = threading.local()
TRACE_HOOKS: list[Callable] = []   # run as each trace starts; idempotent and cheap


def current_tracer():
    """The tracer active in this thread, if any."""
    return getattr(_state, "tracer", None)


def set_tracer(tracer) -> None:
    _state.tracer = tracer


def on_trace_start(fn: Callable) -> Callable:
    """Run ``fn()`` as each trace starts (it installs something once)."""
    TRACE_HOOKS.append(fn)
    return fn


class ProxyStream:
    """Base of ``trace.Stream``: lets code below the tracer recognise a proxy."""

    __slots__ = ()

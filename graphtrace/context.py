"""The thread state of tracing, below everything that records.

Which tracer is active in this thread, the hooks run as each trace starts,
and the base type of proxy streams: the op modules (numba's launch syntax)
and the host-access guards ask these without importing the tracer.
"""
from __future__ import annotations

import gc
import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable

from .errors import GraphtraceError, user_frame

__all__ = ["STATE", "current_tracer", "set_tracer", "on_trace_start", "run_trace_hooks",
           "TRACE_HOOKS", "ProxyStream", "pause_gc", "gc_paused", "before_trace"]

class _State(threading.local):
    """Per thread: ``tracer``, the tracer active in it (``set_tracer``); ``callback``,
    whether a host callback of a graph runs in it. Defaults on the class: a thread
    that never set them reads them without an AttributeError raised and caught
    (0.5 us of every cached call)."""

    tracer = None
    callback = False


STATE = _State()
TRACE_HOOKS: list[Callable] = []   # run as each trace starts; idempotent and cheap
_IMPORT_HOOKS: list[Callable] = []  # run as a trace starts after a module was imported
_MODULES_SEEN = [-1]                # len(sys.modules) when those last ran


def current_tracer():
    """The tracer active in this thread, if any."""
    return getattr(STATE, "tracer", None)


@contextmanager
def in_callback():
    """While a host callback of a graph runs in this thread (``refuse_in_callback``)."""
    was = getattr(STATE, "callback", False)
    STATE.callback = True
    try:
        yield
    finally:
        STATE.callback = was


def refuse_in_callback(what: str) -> None:
    """A graph launched from a host callback is refused: CUDA allows no CUDA call in
    one (a launch there fails or waits forever, as the simulator's did)."""
    if getattr(STATE, "callback", False):
        raise GraphtraceError(
            f"{what} was called from a host callback of a graph: CUDA allows no CUDA "
            "call inside a host callback (the launch would fail, or wait for the graph "
            "that runs the callback forever); call it after the graph's launch returns, "
            "from your own code", user_frame())


def set_tracer(tracer) -> None:
    STATE.tracer = tracer


def on_trace_start(fn: Callable | None = None, *, on_import: bool = False):
    """Run ``fn()`` as each trace starts (it installs something once). With
    ``on_import=True``, only as the first trace after a module was imported:
    for what patches the libraries' modules, which changes only then."""
    def register(fn: Callable) -> Callable:
        (_IMPORT_HOOKS if on_import else TRACE_HOOKS).append(fn)
        _MODULES_SEEN[0] = -1
        return fn
    return register if fn is None else register(fn)


def run_trace_hooks() -> None:
    """The hooks of ``on_trace_start`` due as a trace starts (under the caller's lock)."""
    for hook in TRACE_HOOKS:
        hook()
    if len(sys.modules) != _MODULES_SEEN[0]:
        for hook in _IMPORT_HOOKS:
            hook()
        _MODULES_SEEN[0] = len(sys.modules)


class ProxyStream:
    """Base of ``stream.Stream``: lets code below the tracer recognise a proxy."""

    __slots__ = ()


_gc_lock = threading.Lock()
# pauses running; whether the collector was on before; until when (time.monotonic)
# the program is taken to keep objects frozen (0.0: asked at the next resume); how
# many frozen objects are the interpreter's own (CPython 3.12 keeps a few hundred
# of its own in the permanent generation, put back by every full collection)
_gc_pause = [0, False, 0.0, gc.get_freeze_count() if sys.version_info[:2] == (3, 12) else 0]
_FROZEN_RECHECK = 10.0   # seconds
# Objects moved to the oldest generation since the last full collection (told by
# the young generation's count), the count of full collections then, and the
# oldest generation's size since (0: not told yet; ``before_trace`` tells it once
# the objects moved could be a quarter of it).
_moved = [0, 0, 0]
_FULL_FLOOR = 10_000   # objects moved before a full collection is due at all


def pause_gc(step: int) -> None:
    """Pause (+1) or resume (-1) the cyclic collector, nested and across threads.

    Tracing and making a graph's nodes make many small objects and free none:
    the collector would only rescan them (a third of a 100,000-op trace). They
    live as long as the graph, so on resuming everything young is moved to the
    oldest generation (``gc.freeze`` then ``gc.unfreeze``) rather than scanned
    by two young collections first; the next full collection sees it all as
    usual. Not where the program keeps frozen objects of its own (``gc.freeze``
    before forking workers): ``unfreeze`` would thaw them. Counting them walks
    them all (``gc.get_freeze_count``: 6 ms for a million), so once some are
    found the count is asked again only after ``_FROZEN_RECHECK`` seconds. CPython
    3.12 keeps a few hundred objects of its own frozen (immortal ones, which every
    full collection moves there again): as many as there were when this module was
    imported are taken as the interpreter's, not the program's. Without that, every
    trace on 3.12 ended in a young collection of all it made (a quarter of a second
    after a million-op trace, 60 us after a 10-node one).

    Objects moved so are not counted by CPython towards its next full collection
    (and freezing zeroes the young generation's count), so a program tracing often
    would never collect again the cyclic garbage it had made by then (a request
    object holding itself, per call). The objects moved are counted here instead,
    and where they come to a quarter of the oldest generation, as CPython's rule
    has it, a full collection runs as the next trace starts (``before_trace``),
    unless one ran since."""
    with _gc_lock:
        if step > 0 and _gc_pause[0] == 0:
            _gc_pause[1] = gc.isenabled()
            gc.disable()
        _gc_pause[0] += step
        if _gc_pause[0] == 0 and _gc_pause[1]:
            now = time.monotonic()
            if now >= _gc_pause[2]:
                if gc.get_freeze_count() in (0, _gc_pause[3]):
                    young = gc.get_count()[0]
                    gc.freeze()
                    gc.unfreeze()
                    _count_moved(young)
                else:
                    _gc_pause[2] = now + _FROZEN_RECHECK
            gc.enable()


def before_trace() -> None:
    """As a trace starts (not nested in a pause): the full collection due for the
    objects pauses moved (``pause_gc``), else a collection of the young generation,
    as CPython would have run soon (the garbage the program made just before the
    call, which the trace's end would move out of its reach; a few us). Collected
    with no lock held: a finalizer it runs may trace in turn."""
    with _gc_lock:
        if _gc_pause[0] != 0 or not gc.isenabled():
            return
        _count_moved(0)
        due = _moved[0] > _FULL_FLOOR and _moved[0] > _moved[2] >> 2
    if due and not _moved[2]:   # the oldest generation's size, told once a cycle
        size = len(gc.get_objects(2))
        with _gc_lock:
            _moved[2] = size
            due = _moved[0] > size >> 2
    if due:
        gc.collect()
        with _gc_lock:
            _moved[0], _moved[1], _moved[2] = 0, _full_collections(), 0
    elif gc.get_count()[0] > 0:
        gc.collect(0)


def _full_collections() -> int:
    return gc.get_stats()[2]["collections"]


def _count_moved(young: int) -> None:
    full = _full_collections()
    if full != _moved[1]:   # a full collection ran since: counted anew, the oldest
        _moved[0], _moved[1], _moved[2] = 0, full, 0   # generation's size to be told
    _moved[0] += young


@contextmanager
def gc_paused():
    pause_gc(+1)
    try:
        yield
    finally:
        pause_gc(-1)

"""A host callback's runs in an executable graph (``HostOp.emit``): which launch's
binding each run takes, and the exceptions runs raise, which the driver's thread
running them can only print: the next launch of the graph raises the first
(``raise_failed``), as the simulator, which runs callbacks in the call, raises
it there."""
from __future__ import annotations

from collections import deque

from .._guards import raised_at
from ..context import in_callback
from ..errors import format_source
from .base import callable_name

__all__ = ["Calls", "raise_failed"]


class Calls:
    """A host node's arguments by launch. A rebinding takes effect from the next
    launch on (``clock[0]``: the executable graph's launches so far, counted by
    its launch); the callback runs once per launch, in launch order (launches of
    one executable graph run one after another), and takes its launch's binding,
    so a rebinding never reaches a launch in flight. A launch costs no work here
    but the clock's count."""

    __slots__ = ("fn", "clock", "runs", "ran", "failed", "source")

    def __init__(self, fn, args, clock, failed, source):
        self.fn, self.clock, self.ran = fn, clock, clock[0]   # the launch it runs for next
        self.runs = deque([(clock[0], args)])   # (first launch, arguments), oldest first
        self.failed, self.source = failed, source   # the graph's (exception, launch,
        # these Calls) of the runs that raised; where the callback was recorded

    @property
    def args(self):
        """The arguments the next launch gives the callback."""
        return self.runs[-1][1]

    def rebind(self, args) -> None:
        start, runs = self.clock[0], self.runs
        if runs[-1][0] == start:   # no launch since the last binding: none runs with it
            runs[-1] = (start, args)
        else:
            runs.append((start, args))

    def __call__(self):
        launch, runs = self.ran, self.runs
        self.ran = launch + 1
        while len(runs) > 1 and runs[1][0] <= launch:   # bindings of launches done
            runs.popleft()
        with in_callback():
            try:
                self.fn(*runs[0][1])
            except BaseException as e:   # (the driver's thread prints it, and goes on:
                self.failed.append((e, launch, self))   # the next launch raises it)
                raise


def raise_failed(failed: list, name: str) -> None:
    """Raise the first exception a host callback of graph ``name`` raised at an
    earlier launch: the launch asking launches nothing. The others are
    forgotten, as this one is once raised; the next launch runs."""
    e, launch, calls = failed[0]
    n = len(failed)
    failed.clear()
    at = format_source(raised_at(e) or calls.source)
    more = f"; {n - 1} more runs of host callbacks raised after it" if n > 1 else ""
    e.add_note(f"graphtrace: raised at {at} by host callback {callable_name(calls.fn)}, "
               f"recorded at {format_source(calls.source)}, while launch {launch + 1} of "
               f"graph {name} ran{more}. A callback runs on the driver's thread after the "
               "call that launched it has returned: its exception is raised at the next "
               "launch of the graph, which launches nothing; the launches in between ran")
    raise e

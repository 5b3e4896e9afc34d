"""Host callbacks: ``s.host(fn, *args)`` runs a Python function inside the graph.

The graph calls ``fn(*args)`` on a driver thread once everything it depends
on is done. Array arguments must be host memory (numpy arrays); they take
part in dependency inference like any other access (read and written unless
wrapped in ``gt.In``/``gt.Out``). The callback must not call CUDA.
"""
from __future__ import annotations

import warnings
from collections import deque

from ..buffers import Buffer, is_array, unwrap_intent
from ..errors import ArgumentError, user_frame
from ..scalar import Scalar
from ..tree import leaves, tree_map
from .base import Op, record_args, register, stream_method

__all__ = ["host"]


@stream_method
def host(self, fn, *args, opaque: bool = False):
    """Record a host callback ``fn(*args)``.

    Arguments may nest in lists, tuples and dicts; the callback receives
    them as recorded (arrays and dynamic numbers of the current call), in
    containers of its own: a list or dict it changes is not the caller's
    (a warning says so). Results belong in a pinned array, or in an object
    that is passed as itself (an instance of your own class). ``opaque=True``
    orders the callback after all earlier work and before all later work,
    for one that touches memory it is not given.
    """
    t = self._check()
    if not callable(fn):
        raise ArgumentError(f"host() needs a callable, not {type(fn).__name__}")
    _warn_copies(fn, args)
    rec, accesses = record_args(t, args, lambda i: "rw", _host_only(fn))
    return self._record("host", fn, rec, tuple(accesses), opaque=opaque)


def _holds_values(v) -> bool:
    """Whether a container holds arrays or dynamic numbers (what rebinding renews)."""
    return any(is_array(x) or isinstance(x, Scalar)
               for x in (unwrap_intent(x, "rw")[0] for x in leaves(v)))


def _warn_copies(fn, args) -> None:
    """A list or dict of constants handed to a callback looks like a place for results."""
    mutable = [i for i, a in enumerate(args)
               if isinstance(a, (list, dict)) and not _holds_values(a)]
    if mutable:
        file, line = user_frame(3)
        warnings.warn_explicit(
            f"host callback {getattr(fn, '__name__', fn)} receives argument {mutable[0]} as a "
            "list or dict that the graph rebuilds for every launch: what the callback "
            "appends or assigns to it is lost to the caller; keep results in a pinned "
            "numpy array, or in an object of your own class (passed as itself)",
            UserWarning, file, line)


def _host_only(fn):
    def check(i, buf):
        if not buf.is_host:
            raise ArgumentError(
                f"argument {i} of host callback {getattr(fn, '__name__', fn)} is device "
                f"memory ({buf.label or 'array'}): a callback cannot touch the GPU; copy it "
                "to pinned host memory with s.copy first and pass that")
    return check


def _describe(node, namer):
    name = getattr(node.target, "__qualname__", None) or namer.value(node.target)
    return f"{name}({', '.join(namer.value(a) for a in node.args)})"


def host_array(b: Buffer):
    """The callback's array for host view ``b``: the traced object, or one at its new address."""
    return b.obj if b.obj is not None else b.host_array()


def host_value(v, value_of):
    """Recorded callback arguments as the callback receives them now."""
    def now(x):
        x = value_of(x)
        return host_array(x) if isinstance(x, Buffer) else x
    return tree_map(now, v)


class _Calls:
    """A host node's arguments, per launch: each launch pushes the binding it
    ran with, and the callback takes the oldest (launches of one executable
    graph run in order), so a rebinding never reaches a launch in flight."""

    __slots__ = ("fn", "args", "queue")

    def __init__(self, fn, args):
        self.fn, self.args, self.queue = fn, args, deque()

    def push(self):
        self.queue.append(self.args)

    def unpush(self):
        self.queue.pop()

    def __call__(self):
        self.fn(*self.queue.popleft())


def _emit(em, node, parent):
    calls = _Calls(node.target, host_value(node.args, em.value_of))
    em.state[node.index] = calls
    em.on_launch.append(calls)
    return parent.callback(calls)


def _update(cg, node, gnode):
    cg.state[node.index].args = host_value(node.args, cg.value_of)


def _simulate(sim, node):
    node.target(*sim.value(node.args))


register(Op("host", _describe, _emit, _update, _simulate))

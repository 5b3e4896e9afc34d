"""The refusal of a host callback holding host memory a call hands the graph.

A callback may hold the very array the graph function is passed (a closure over
``h``, ``Sink(h).read``: a later call would still hand it this one), or an array
that argument lies in (``SINK.h`` being ``BIG`` where the call passes ``BIG[:4]``)
by a way the cache key does not follow (a helper returned the callback): the
message names what it holds, and where the argument lies, so that the advice
fits what the user wrote.
"""
from __future__ import annotations

from functools import partial

from ..arrays import as_buffer
from ..errors import ArgumentError, user_frame_object
from ..owners import _attr

__all__ = ["held_argument_error"]


def held_argument_error(t, shown: str, fn, name: str, x, buf) -> ArgumentError:
    """The error for callback ``fn`` (``shown``: its name in messages) holding host
    array ``x`` by ``name`` (``attribute 'h'``), where ``buf`` is the Buffer of the
    trace's argument it shares memory with."""
    arg = buf.label or "an array"
    try:
        held = as_buffer(x)
    except ArgumentError:
        held = None
    if held is None or (held.lo >= buf.lo and held.hi <= buf.hi):   # it, or a view of it
        return ArgumentError(
            f"host callback {shown} holds {arg} of this graph by {name}: a later call "
            f"with new arrays would still hand it this one; pass it to s.host as an "
            f"argument, which the callback receives as a parameter: s.host(fn, {arg})")
    array = _global_name(fn, x)
    what = array or f"an array ({x.dtype}{list(x.shape)})"
    where = f"in which {arg} of this graph lies" if held.lo <= buf.lo and buf.hi <= held.hi \
        else f"which overlaps {arg} of this graph"
    inner = fn.func if isinstance(fn, partial) else fn
    owner, method = _attr(inner, "__self__"), _attr(inner, "__name__", "read")
    by = _global_name(fn, owner) if owner is not None else None
    hand = f"s.host({by}.{method})" if by else \
        "s.host(SINK.read) of a global or closure name SINK"
    return ArgumentError(
        f"host callback {shown} holds {what} by {name}, {where}: {t.name} hands s.host "
        "the callback by a way the graph does not follow "
        f"(made by a call, or a helper hands it), so a later call reusing this graph "
        f"with other arrays in {array or 'it'} would run the callback ordered after the "
        f"nodes writing {arg} alone; hand it to s.host in {t.name} itself by a name it "
        f"reads ({hand}), whose arrays the graph follows, or pass "
        f"{array or 'that array'} to s.host as an argument, which the callback "
        f"receives as a parameter: s.host(fn, {array or 'h'})")


def _global_name(fn, v) -> str | None:
    """A global name of the callback's module or of the user's code calling
    ``s.host`` that holds ``v`` itself (``BIG``, ``SINK``), or None."""
    while isinstance(fn, partial):
        fn = fn.func
    fn = _attr(fn, "__func__", fn)
    frame = user_frame_object()
    for scope in (_attr(fn, "__globals__"), frame.f_globals if frame is not None else None):
        for k, held in list((scope or {}).items()):
            if held is v and k != "_" and not k.startswith("__") and \
                    not (k[0] == "_" and k[1:].isdigit()):   # (IPython's outputs)
                return k
    return None

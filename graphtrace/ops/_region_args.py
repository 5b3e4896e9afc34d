"""What ``s.captured(fn, *args, reads=, writes=)`` refuses of its function and
arguments before recording (``captured.record_captured``): a graph function,
which a child graph or an inline call records; the proxy stream as an argument,
which the region, captured on a stream of its own, cannot use; and an argument
wrapped in ``gt.In``/``gt.Out`` that ``reads=``/``writes=`` contradict."""
from __future__ import annotations

from functools import partial

from ..errors import ArgumentError
from ..owners import _attr
from ..tree import leaves
from .base import callable_name

__all__ = ["refuse_misuse", "refuse_conflicts"]


def _graph_function(fn) -> bool:
    """Whether ``fn`` is a ``@gt.graph`` function (a partial of one, a layer whose
    ``@gt.graph`` method ``__call__`` it is called by)."""
    while isinstance(fn, partial):
        fn = fn.func
    if _attr(fn, "_graphtrace_graph", False) is True:
        return True
    call = None if isinstance(fn, type) else _attr(type(fn), "__call__", None)
    return call is not None and _attr(call, "_graphtrace_graph", False) is True


def refuse_misuse(stream, fn, args) -> None:
    """An error for ``s.captured(g, x)`` of a graph function ``g``, and for the proxy
    stream given to a region as an argument."""
    name = callable_name(fn).rsplit(".", 1)[-1]
    if _graph_function(fn):
        raise ArgumentError(
            f"s.captured({name}, ...): {name} is a @gt.graph function, whose work is "
            "recorded by the trace, not captured from library code: call "
            f"s.child({name}, ...) to record it as a child-graph node, or {name}(s, ...) to "
            "record its work inline; s.captured is for library code (cupy expressions, "
            "torch) run when the graph is built")
    for i, a in enumerate(args):
        if any(isinstance(v, type(stream)) for v in leaves(a)):
            raise ArgumentError(
                f"argument {i} of captured region {name} is the graph's proxy stream: a "
                "region is captured apart from the trace, on a stream of its own (cupy's "
                "and torch's current stream are switched to it while it runs, so their "
                "calls need no stream), where the proxy stream is no stream: pass the "
                f"region only its arrays and numbers (s.captured({name}, x, y)), and let "
                "its library calls use their current stream, which is the capture's")


def refuse_conflicts(fn, given: list, declared: dict) -> None:
    """An error for an argument wrapped in ``gt.In`` that ``writes=`` names, or in
    ``gt.Out`` that ``reads=`` names (``given``: ``(Buffer, mode)`` of the
    arguments, ``declared``: id of a Buffer -> what ``reads=``/``writes=`` say)."""
    for buf, mode in given:
        said = declared.get(id(buf))
        if mode not in ("r", "w") or said is None or said == mode:
            continue
        wrapper, other = ("gt.In", "writes=") if mode == "r" else ("gt.Out", "reads=")
        label = buf.label or "an array"
        raise ArgumentError(
            f"captured region {callable_name(fn)} is given {label} wrapped in {wrapper}, "
            f"but {other} names it too: the two say different things of what the region "
            f"does with it. Say it once: drop the {wrapper}(...) wrapper and name {label} in "
            "reads= and writes= as the region uses it, or leave it out of " + other)

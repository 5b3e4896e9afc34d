"""Recording the nodes that own regions: loop and branch blocks, and child graphs.

``structured`` is the ``with`` block (or, given ``body=fn``, the call) of
``s.while_loop``, ``s.if_then``, ``s.if_else`` and ``s.switch``: it records the
condition (``gt.cond``'s one-element device array, which must be an array the
graph watches, and its right side), opens one region per body, recorded on
proxy streams of its own, and, when the block closes, refuses what the device
would not do as the recorded Python did: what the body changes that its next
iteration (``_loop_state.py``) or the code after the block (``_loop_after.py``)
reads, host state it stores that the next call's work reads
(``_body_stores.py``), an unbounded loop whose body never writes its condition,
a ``body=`` function that cannot take the bodies or that returns a value. Then
it records the node, whose accesses are the union of its bodies' and the
condition's. ``record_child`` records ``s.child(f, ...)``: the ops of a
``@gt.graph`` function ``f`` as a child-graph node. The ops these nodes hold
are ``conditional.py``'s.
"""
from __future__ import annotations

import functools

import inspect
import math
import types

import numpy as np

from ..arrays import as_buffer, is_array
from ..buffers import Buffer
from ..context import ProxyStream
from ..errors import ArgumentError, TraceError, user_frame, user_frame_object
from ..ir import Node
from ..probe import _attr, _has
from ..scalar import Scalar
from ..temporary import returned
from ..tree import leaves, tree_map
from ._body_stores import BodyStores
from ._conditions import C_TYPES, Condition
from ._loop_after import refuse_escapes
from ._loop_held import _function
from ._loop_state import LoopState
from ._loop_work import condition_frames
from .conditional import _NO_BOUND, CHILD, SWITCH, WHILE, rhs_value

__all__ = ["structured", "record_child", "touches_any", "dropped_value"]


def _condition_buffer(t, array, what: str) -> Buffer:
    if isinstance(array, Scalar):
        raise ArgumentError(
            f"the {what} of a device condition must be a one-element device array, not the "
            f"number argument {array.name!r}: a number's test is decided on the host; "
            f"compare it in Python (pass {array.param!r} in static=) or keep it in a device "
            "array")
    buf = as_buffer(array) if is_array(array) else None
    if buf is None or buf.is_host:
        kind = "a numpy array (host memory)" if isinstance(array, np.ndarray) else \
            type(array).__name__   # (a host argument is a guarded numpy subclass)
        raise ArgumentError(
            f"the {what} of a device condition must be a one-element device array "
            f"(cupy, numba, torch), not {kind}: the GPU reads it when the "
            "graph runs; copy host values to the device first")
    if math.prod(buf.shape) != 1:
        raise ArgumentError(
            f"the {what} of a device condition must hold one element, not "
            f"{math.prod(buf.shape)} ({buf.label or 'array'}{list(buf.shape)}): pass a "
            "one-element view such as x[0:1]")
    if buf.dtype not in C_TYPES:
        raise ArgumentError(f"a device condition cannot compare {buf.dtype} values: use a "
                            f"bool, integer or float32/float64 array")
    try:
        return t.buffer(array)   # the trace's view (refused if the graph cannot watch it)
    except ArgumentError:
        if t.root_holding(buf.lo) is not None:   # refused for another reason
            raise
        raise ArgumentError(
            f"the {what} of this device condition ({buf.dtype}{list(buf.shape)}) is not "
            f"an argument of {t.name}: a condition's arrays must be arguments (or arrays "
            f"{t.name} itself reaches by a global or closure name); a condition held by a "
            "name (STOP = gt.cond(c) < LIM) is read for its comparison, not for the arrays "
            f"in it, so the graph could not see them change; pass the array to {t.name} "
            "as an argument") from None


def _record_condition(t, condition) -> tuple[tuple, list]:
    """``((array, rhs), accesses)`` of a condition; rhs a number, Scalar or Buffer."""
    if not isinstance(condition, Condition):
        raise ArgumentError(
            f"a device condition is made with gt.cond(array) (optionally compared: "
            f"gt.cond(x) > tol), not {type(condition).__name__}")
    x = _condition_buffer(t, condition.array, "array")
    rhs, accesses = condition.rhs, [(x, "r")]
    if rhs is not None and not isinstance(rhs, (Scalar, int, float, bool, np.number,
                                                 np.bool_)):
        rhs = _condition_buffer(t, rhs, "right side")
        if rhs.dtype != x.dtype:
            raise ArgumentError(f"a device condition compares {x.dtype} with {rhs.dtype}: "
                                "give both arrays one dtype")
        accesses.append((rhs, "r"))
    elif rhs is not None:   # refused now, not when the graph is built or run
        rhs_value(x.dtype, rhs._value if isinstance(rhs, Scalar) else rhs)
    return (x, rhs), accesses


def _union(regions, first: list) -> list:
    """The accesses of everything in the regions, one entry per view, modes merged."""
    modes: dict = {}
    for b, m in first + [a for r in regions for n in r.walk() for a in n.accesses]:
        old = modes.get(id(b))
        modes[id(b)] = (b, m if old is None or old[1] == m else "rw")
    return list(modes.values())


class _Structured:
    """The ``with`` block of a structured op: opens its bodies, records the node."""

    state = escape = stores = body_fn = body = None

    def __init__(self, stream, op, condition, names, attrs, source):
        t = stream.tracer()
        self.stream, self.op, self.names, self.attrs, self.source = \
            stream, op, names, attrs, source
        self.args, self.accesses = _record_condition(t, condition) \
            if condition is not None else ((), [])
        if op is SWITCH and self.args[0].dtype.kind not in "iub":
            raise ArgumentError(f"switch takes gt.cond(k) of an integer array, not of "
                                f"{self.args[0].dtype}: the case is k's value; convert it to "
                                "an int32 array first")
        self.index = t.reserve_index()
        self.scopes = [t.open_region(name, stream.scope, op.conditional)
                       for name in names]
        self.bodies = [type(stream)(t, stream.index, scope, stream.target_device)
                       for scope in self.scopes]
        self.what = _what(op, names)
        caller = user_frame_object() if op is WHILE else None   # the call that made it,
        self.conditions = condition_frames(caller) if caller is not None else None   # and
        #  those handing its condition: with looping(s, gt.cond(c) > lim) as body
        t.unentered[id(self)] = (stream.scope, self.what, source, self)   # held: id kept

    def __enter__(self):
        t = self.stream.tracer()
        if t.unentered.pop(id(self), None) is None:   # entered before: its bodies are closed
            raise ArgumentError(
                f"this {self.what} block was entered before: a loop or branch records its "
                f"body once; call {self.what[:-5]}(...) again for each with block",
                user_frame())
        t.unexited[id(self)] = (self.what, self.source)
        if self.op is WHILE:   # what the body's Python changes: _loop_state
            self.state = LoopState(self.body, t, self.conditions)
        self.escape = self.state if self.state is not None and self.state.fn is None \
            else LoopState(None, t)   # what code after it reads of that
        self.stores = BodyStores(self.escape.frame, None if self.body is None else
                                 _function(self.body))   # what outlives the trace
        return self.op.bodies(self.bodies)

    def __exit__(self, kind, exc, tb):
        t = self.stream.tracer()
        regions = tuple(t.close_region(scope) for scope in self.scopes)
        state, escape, stores = self.state, self.escape, self.stores
        self.state = self.escape = self.stores = self.conditions = None
        t.unexited.pop(id(self), None)
        if kind is not None:   # caught later, the trace would go on without this node
            t.abandoned.append((f"the body of {self.what}" + (
                " (generator)" if kind is GeneratorExit else ""), self.source))
            return False
        if state is not None:
            state.refuse(t, regions, self.what, self.source)
        refuse_escapes(t, escape, self.what, self.source, self.body, len(self.names))
        stores.refuse(t, escape, self.what, self.source)
        if self.op is WHILE and self.attrs["max_iterations"] == _NO_BOUND:
            _refuse_endless(regions, self.args, self.source)
        t.record(self.op, None, self.args, _union(regions, self.accesses),
                 stream=self.stream.index, scope=self.stream.scope, attrs=self.attrs,
                 opaque=any(map(touches_any, (n for r in regions for n in r.walk()))),
                 regions=regions, source=self.source, index=self.index)
        return False


def touches_any(node) -> bool:
    """Whether an opaque node may touch any memory, as a block or child graph holding
    it does then: not a host callback opaque only to run in turn, handed nothing."""
    return node.opaque and not (node.attrs or {}).get("barrier")


def _refuse_endless(regions, args, source) -> None:
    """An unbounded loop whose body writes no byte its condition reads (device
    memory, which nothing else changes while the graph runs) would never end once
    the condition holds: refused, unless an opaque node in it may write anything."""
    watched = [a for a in args if isinstance(a, Buffer)]
    if any(a.is_host for a in watched):   # mapped host memory: the host may change it
        return
    for region in regions:
        for n in region.walk():
            if n.opaque or any("w" in mode and b.overlaps(a) for b, mode in n.accesses
                               for a in watched):
                return
    names = " or ".join(a.label or "the condition's array" for a in watched)
    raise ArgumentError(f"this while loop's body never writes {names}, which its condition "
                        "reads: once the condition holds it would run forever; update "
                        f"{names} in the body, or bound the loop with max_iterations=",
                        source)


def _what(op, names) -> str:
    """The op as the user spells it: ``s.while_loop(...)``, ``s.if_else(...)``."""
    api = {"while": "while_loop", "switch": "switch"}.get(
        op.kind, "if_else" if len(names) == 2 else "if_then")
    return f"s.{api}(...)"


def structured(stream, op, condition, names, attrs, source, body=None):
    """A structured op's ``with`` block, or with ``body``, its node at once
    (``body`` receives the body stream or streams)."""
    if body is not None and not callable(body):
        what, one = _what(op, names)[:-5], len(names) == 1
        raise ArgumentError(
            f"{what}(..., body={body!r}): body= takes a function, which gets "
            + ("the body's proxy stream (body=lambda b: ...)" if one else
               "one proxy stream per body (body=lambda " + ", ".join(
                   f"b{i}" for i in range(len(names))) + ": ...)")
            + f", or leave body= out and write the body in a with block (with {what}(...) "
            f"as {'b' if one else 'bodies'}: ...)", source)
    block = _Structured(stream, op, condition, names, attrs, source)
    if body is None:
        return block
    block.body_fn = _attr(body, "__func__", body) if _has(
        _attr(body, "__func__", body), "__code__") else None
    block.body = body
    _refuse_arity(body, names, block.what, source)
    with block as bodies:
        result = body(*bodies) if isinstance(bodies, tuple) else body(bodies)
        _refuse_result(body, result, block.what, source)
    return _Recorded(block.what)


def _refuse_result(body, result, what: str, source) -> None:
    """A body runs on the device, its Python only recorded: a value it returns
    would be dropped, so it is refused (as a graph function's result is). What
    recording returns (None, a node, a stream; a lambda's tuple of launches) is
    no value."""
    value = dropped_value(result)
    if value is None:
        return
    tmp = returned(value)
    thing = f"temporary {tmp.name}" if tmp is not None else \
        f"an array ({type(value).__name__})" if is_array(value) else type(value).__name__
    raise TraceError(
        f"{what[:-5]}(..., body={getattr(body, '__name__', 'fn')}) returned {thing}: a body "
        "runs on the device and returns nothing (the value would be dropped); write its "
        "results into arrays, or a temporary made outside the body", source)


def dropped_value(result):
    """What of a body's or a graph function's ``result`` would be a value dropped:
    None where it holds only what recording returns (None, a node of ``s.copy`` or
    ``s.memset``, a stream, a body given as ``body=``; a lambda's tuple of them)."""
    if result is None:
        return None
    kept = (Node, _Recorded, ProxyStream)
    return next((v for v in leaves(result) if v is not None and not isinstance(v, kept)),
                None)


def _refuse_arity(body, names, what: str, source) -> None:
    """``body=fn`` is called with one stream per body (a switch's cases, an if_else's
    two branches): a function that cannot take them is refused at the user's line."""
    try:
        sig = inspect.signature(body)
    except (TypeError, ValueError):   # a builtin: left to the call
        return
    try:
        sig.bind(*names)
    except TypeError:
        given = ", ".join(n.replace(" ", "") for n in names)
        # its parameters without their defaults (a partial's may hold a dynamic
        # number, which refuses to be shown as text while tracing)
        takes = str(sig.replace(parameters=[p.replace(default=inspect.Parameter.empty)
                                            for p in sig.parameters.values()]))[1:-1]
        raise ArgumentError(
            f"{what[:-5]}(..., body={getattr(body, '__name__', 'fn')}) calls it with "
            f"{len(names)} stream{'s' * (len(names) > 1)}, fn({given}), but it takes "
            f"({takes}): give it one parameter per body", source) from None


class _Recorded:
    """What a structured op given ``body=fn`` returns: recorded already, it is no
    with block (used as one, it says so)."""

    __slots__ = ("what",)

    def __init__(self, what: str):
        self.what = what

    def __enter__(self):
        raise ArgumentError(
            f"{self.what[:-5]}(..., body=fn) recorded fn as its body already: use "
            f"either body=fn or a with block, not both", user_frame())

    def __exit__(self, *exc):
        return False


def _graph_call(obj):
    """The ``@gt.graph`` method ``__call__`` of ``obj``'s class (``class Layer:
    @gt.graph def __call__(self, s, y)``), which ``obj(s, y)`` runs; None where its
    class has none (a class itself: calling it makes an object)."""
    if isinstance(obj, type):
        return None
    call = _attr(type(obj), "__call__", None)
    return call if _attr(call, "_graphtrace_graph", False) is True else None


def record_child(stream, function, args, kwargs, source, lead=()):
    """``s.child(f, *args)``: ``f``'s ops recorded into a child-graph node, their
    dependencies inferred in ``f``'s own mode (``deps``); ``lead``: what comes
    before the stream in the call (a method's object)."""
    while isinstance(function, functools.partial) and \
            _attr(function.func, "_graphtrace_graph", False) is True:   # as g(s, x) calls it:
        lead = (*lead, *function.args)                          # its arguments first, then
        kwargs = {**function.keywords, **kwargs}                # s; its keywords, the call's
        function = function.func
    if _attr(function, "_graphtrace_graph", False) is not True and \
            _graph_call(function) is not None:   # s.child(layer, y): Layer.__call__'s graph
        function = function.__call__
    if _attr(function, "_graphtrace_graph", False) is not True or not callable(function):
        name = _attr(function, "__name__", None)
        if isinstance(function, (types.FunctionType, types.MethodType)) and type(name) is str:
            raise ArgumentError(
                f"s.child() takes a @gt.graph function, not the plain function {name}: "
                f"decorate it with @gt.graph (or call {name}(s, ...) to record its work "
                "inline, with no child graph)")
        raise ArgumentError(f"s.child() takes a @gt.graph function, not "
                            f"{type(function).__name__}")
    t = stream.tracer()
    index = t.reserve_index()
    mode = getattr(function, "deps", None)
    scope = t.open_region(getattr(function, "__name__", "child"), stream.scope,
                          mode=mode if mode in ("data", "streams") else None)
    scope.called_at = (source,) + stream.scope.called_at if stream.scope is not None and \
        not stream.scope.body else (source,)   # (named where a body refuses what it records)
    others = [v.index for v in (*args, *kwargs.values()) if _caller_stream(v, stream)]
    try:
        function(*lead, *_inside(scope, stream, (stream, *args)),
                 **dict(zip(kwargs, _inside(scope, stream, kwargs.values()))))
    except BaseException:   # caught later, the trace would go on without this node
        t.abandoned.append(("s.child(...)", source))
        raise
    finally:
        region = t.close_region(scope)
    shown = tree_map(lambda v: t.cached_buffer(v) or v if is_array(v) else v,
                     (args, kwargs))
    t.before_child(scope, stream.index, others)
    accesses = _union((region,), [])   # in data mode host callbacks run as recorded,
    if t.mode_of(stream.scope) == "data" and any(n.kind == "host" for n in region.walk()):
        accesses = _union((), accesses + [(t.host_order(), "rw")])   # a streams child's too
    node = t.record(CHILD, function, shown[0], accesses, stream=stream.index,
                    attrs={"keywords": shown[1]} if kwargs else None, scope=stream.scope,
                    regions=(region,), source=source, index=index,
                    opaque=any(map(touches_any, region.walk())))
    t.after_child(scope, node, stream.index, others)
    return node


def _caller_stream(v, stream) -> bool:
    """Whether ``v``, an argument of a child graph recorded on ``stream``, is a proxy
    stream of the caller's region: the child records its work on it."""
    return isinstance(v, type(stream)) and v.scope is stream.scope and \
        v.tracer() is stream.tracer()


def _inside(scope, stream, values) -> list:
    """``values`` with each proxy stream of the caller's region made the same stream
    recording into the child's region ``scope``."""
    return [type(stream)(v.tracer(), v.index, scope, v.target_device)
            if _caller_stream(v, stream) else v for v in values]

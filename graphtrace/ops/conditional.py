"""Loops and branches on the device: ``while_loop``, ``if_then``, ``if_else``, ``switch``.

Each is a structured node: its bodies are regions (sub-graphs) recorded on
proxy streams of their own, with the same API as outside::

    with s.while_loop(gt.cond(residual) > tol, max_iterations=500) as body:
        step[blocks, threads, body](x, r, residual)
    with s.if_else(gt.cond(flag)) as (then, otherwise): ...
    with s.switch(gt.cond(k), 3) as cases: ...       # cases[0], cases[1], cases[2]

On the GPU each becomes a CUDA conditional node; a small kernel of
graphtrace (``_conditions.py``) reads the condition's array on the device and
sets the node's handle: before the node, and for a loop also as the last
node of its body, where it counts the iterations against the bound. The
node's accesses are the union of its bodies' and the condition's reads, so
dependencies outside are inferred as for any node; inside a body they are
inferred as everywhere, and one iteration ends before the next begins, so
what a loop carries from one iteration to the next is ordered by
construction. The simulator runs the same semantics on the CPU.
"""
from __future__ import annotations

import inspect

import math
import warnings

import numpy as np

from ..arrays import as_buffer, is_array
from ..buffers import Buffer
from ..context import ProxyStream
from ..errors import ArgumentError, EmitError, TraceError, user_frame
from ..ir import Node
from ..probe import _attr, _has
from ..scalar import Scalar, has_fraction
from ..temporary import returned
from ._conditions import C_TYPES, Condition, condition_kernel, evaluate
from ..tree import leaves, tree_map
from ._driver_nodes import node_handle
from ._body_stores import BodyStores
from ._loop_after import refuse_escapes
from ._loop_held import _function
from ._loop_state import LoopState
from .base import Op

__all__ = ["structured", "WHILE", "IF", "SWITCH", "CHILD", "record_child"]

_NO_BOUND = (1 << 32) - 1
# Conditional node kinds and the driver they need (CUDA 12.3: if, while; 12.8: if-else, switch)
_DRIVER_NEEDED = {"while": 12030, "if": 12030, "if_else": 12080, "switch": 12080}


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


def rhs_value(dtype: np.dtype, rhs, source=None):
    """The number ``rhs`` as a value of ``dtype``, the type the GPU compares the
    condition in; ``ArgumentError`` (at ``source``) where that value would differ
    from ``rhs`` itself, which would change the comparison: a fraction or a value
    out of range for an integer or bool array, a numpy number of a wider type that
    does not fit, a complex number. A float array takes any Python real number,
    rounded to its precision as numpy compares a float32 array with a Python float."""
    dtype = np.dtype(dtype)
    real = not isinstance(rhs, (complex, np.complexfloating))
    if dtype.kind == "f" and real:
        with np.errstate(over="ignore"):   # past the largest float32: inf, as numpy has it
            try:
                value = dtype.type(rhs)
            except OverflowError:   # an int past any float
                value = dtype.type(np.inf if rhs > 0 else -np.inf)
        # a numpy number is not rounded by numpy: of a wider type it must fit exactly
        if not isinstance(rhs, (np.number, np.bool_)) or value == rhs or rhs != rhs:
            return value
    # the integers the dtype holds ((0, -1): none, for a complex number and a float array)
    low, high = (0, 1) if dtype.kind == "b" else (0, -1) if dtype.kind == "f" else \
        (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
    if real and not has_fraction(rhs) and low <= int(rhs) <= high:
        return dtype.type(int(rhs))
    if not real:
        advice = "a complex number has no order; compare with a real number"
    elif dtype.kind == "f":
        advice = (f"a numpy {type(rhs).__name__} is compared as it is, so the test would "
                  f"change; pass float(x), rounded to {dtype} as numpy rounds a Python "
                  f"float, or np.{dtype}(x)")
    else:
        holds = "0 and 1" if dtype.kind == "b" else f"the integers from {low} to {high}"
        advice = (f"{dtype} holds {holds}, so the test would change; compare with such a "
                  "value (x < 3 rather than x < 2.5), or keep the condition in a float array")
    raise ArgumentError(f"a device condition on a {dtype} array cannot compare it with "
                        f"{rhs!r}: the GPU compares in {dtype}; {advice}", source)


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
        api = {"while": "while_loop", "switch": "switch"}.get(
            op.kind, "if_else" if len(names) == 2 else "if_then")
        self.what = f"s.{api}(...)"
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
            self.state = LoopState(self.body, t)
        self.escape = self.state if self.state is not None and self.state.fn is None \
            else LoopState(None, t)   # what code after it reads of that
        self.stores = BodyStores(self.escape.frame, None if self.body is None else
                                 _function(self.body))   # what outlives the trace
        return self.op.bodies(self.bodies)

    def __exit__(self, kind, exc, tb):
        t = self.stream.tracer()
        regions = tuple(t.close_region(scope) for scope in self.scopes)
        state, escape, stores = self.state, self.escape, self.stores
        self.state = self.escape = self.stores = None
        t.unexited.pop(id(self), None)
        if kind is not None:   # caught later, the trace would go on without this node
            t.abandoned.append((f"the body of {self.what}" + (
                " (generator)" if kind is GeneratorExit else ""), self.source))
            return False
        if state is not None:
            state.refuse(t, regions, self.what, self.source)
        refuse_escapes(t, escape, self.what, self.source)
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


def structured(stream, op, condition, names, attrs, source, body=None):
    """A structured op's ``with`` block, or with ``body``, its node at once
    (``body`` receives the body stream or streams)."""
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
    kept = (Node, _Recorded, ProxyStream)
    value = next((v for v in leaves(result) if v is not None and not isinstance(v, kept)),
                 None) if result is not None else None
    if value is None:
        return
    tmp = returned(value)
    thing = f"temporary {tmp.name}" if tmp is not None else \
        f"an array ({type(value).__name__})" if is_array(value) else type(value).__name__
    raise TraceError(
        f"{what[:-5]}(..., body={getattr(body, '__name__', 'fn')}) returned {thing}: a body "
        "runs on the device and returns nothing (the value would be dropped); write its "
        "results into arrays, or a temporary made outside the body", source)


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


class _ConditionalOp(Op):
    """A CUDA conditional node. ``args``: (condition array, right side or None);
    ``attrs['test']``: the comparison; regions: the bodies."""

    conditional = True
    handle_kind = "if"

    def describe(self, node, namer) -> str:
        x, rhs = node.args
        text = f"cond({namer.value(x)}) {node.attrs['test']}"
        if rhs is not None:
            text += f" {namer.value(rhs)}"
        return text + self._more(node)

    def _more(self, node) -> str:
        return ""

    def verify(self, node) -> str | None:
        if len(node.regions) != self.n_regions(node):
            return f"{self.kind} needs {self.n_regions(node)} regions"
        return None

    def n_regions(self, node) -> int:
        return 1

    def bodies(self, streams):
        return streams[0]

    # --- the GPU ---------------------------------------------------------------
    def _setter_args(self, gpu, node, handle, entry) -> tuple:
        x, rhs = (gpu.value_of(a) for a in node.args)
        dtype = x.dtype.type
        value = dtype(0) if isinstance(rhs, Buffer) or rhs is None else \
            rhs_value(x.dtype, rhs, node.source)
        at = rhs.ptr if isinstance(rhs, Buffer) else 0
        return (handle, x.ptr, value, at)

    def emit(self, gpu, node, parent):
        from cuda.core import Device, LaunchConfig
        _require_driver(self.kind, node)
        handle = parent.create_condition(default_value=0)
        kern = condition_kernel(self.handle_kind, node.args[0].dtype, node.attrs["test"],
                                Device())
        cfg = LaunchConfig(grid=1, block=1)
        extra = self._extra(gpu, node)
        setter = parent.launch(cfg, kern, *self._setter_args(gpu, node, handle, True), *extra)
        gpu.entry(parent, setter)   # the handle is set once everything before has run
        cnode, bodies = self._conditional(setter, handle, node)
        for region, body in zip(node.regions, bodies):
            gpu.emit_region(region, body)
        tail = self._tail(gpu, node, handle, bodies[0], cfg, kern, extra)
        gpu.state[node.index] = (cfg, kern, handle, setter, tail, extra)
        return cnode

    def _extra(self, gpu, node) -> tuple:
        return ()

    def _tail(self, gpu, node, handle, body, cfg, kern, extra):
        return None

    def _updates(self, gpu, node):
        cfg, kern, handle, setter, tail, extra = gpu.state[node.index]
        yield setter, (*self._setter_args(gpu, node, handle, True), *extra)
        if tail is not None:
            yield tail, (*self._setter_args(gpu, node, handle, False), *self._tail_extra(extra))

    def _tail_extra(self, extra) -> tuple:
        return extra

    @property
    def driver_update(self) -> bool:
        return True

    exec_update = True

    def update(self, gpu, node) -> None:
        self._set(gpu, node, gpu.graph.handle)

    def update_definition(self, gpu, node) -> None:
        self._set(gpu, node, None)

    def _set(self, gpu, node, executable) -> None:
        """The condition kernels (one block of one thread) take the binding's values."""
        kern, handle = gpu.state[node.index][1:3]
        for setter, args in self._updates(gpu, node):   # the condition as its 64-bit value
            args = [int(handle.handle) if a is handle else a for a in args]
            gpu.kernel_nodes.set(node_handle(setter), kern, False, (1, 1, 1), (1, 1, 1), 0,
                                 args, executable=executable)

    def check_values(self, value_of, node) -> None:
        x, rhs = node.args[:2]
        if isinstance(rhs, Scalar):
            rhs_value(x.dtype, value_of(rhs), node.source)

    # --- the simulator ---------------------------------------------------------
    def test(self, sim, node) -> bool:
        x, rhs = node.args
        value = sim.array(x).reshape(-1)[0]
        if isinstance(rhs, Buffer):
            rhs = sim.array(rhs).reshape(-1)[0]
        elif rhs is not None:
            rhs = rhs_value(value.dtype, sim.value_of(rhs), node.source)   # as the device does
        return evaluate(node.attrs["test"], value, rhs)


class WhileOp(_ConditionalOp):
    kind = "while"
    handle_kind = "loop"

    def _more(self, node) -> str:
        bound = node.attrs["max_iterations"]
        return "" if bound == _NO_BOUND else f", max_iterations={bound}"

    def _conditional(self, setter, handle, node):
        loop = setter.while_loop(handle)
        return loop, (loop.body,)

    def _extra(self, gpu, node) -> tuple:
        from cuda.core import Device
        trips = gpu.state.get(("trips", node.index))
        if trips is None:   # the iteration count, in device memory the graph keeps
            device = Device()
            trips = gpu.state[("trips", node.index)] = \
                device.allocate(8, stream=device.default_stream)
            device.default_stream.sync()
        return (int(trips.handle), np.uint32(node.attrs["max_iterations"]), np.int32(1))

    def _tail_extra(self, extra) -> tuple:
        return (*extra[:2], np.int32(0))

    def _tail(self, gpu, node, handle, body, cfg, kern, extra):
        """The loop's test again, after everything in its body."""
        region = node.regions[0]
        used = {d.index for n in region.nodes for d in n.deps}
        sinks = [gpu.handle(n) for n in region.nodes if n.index not in used]
        args = (*self._setter_args(gpu, node, handle, False), *self._tail_extra(extra))
        tail = body.launch(cfg, kern, *args)
        gpu.kernel_nodes.add_edges(body, sinks, node_handle(tail))
        return tail

    def simulate(self, sim, node) -> None:
        trips, bound = 0, node.attrs["max_iterations"]
        while trips < bound and self.test(sim, node):
            sim.run(node.regions[0])
            trips += 1
            if trips == _LONG_RUN and bound == _NO_BOUND:
                file, line = node.source
                warnings.warn_explicit(
                    f"while_loop has run {trips} times on the simulator and its condition "
                    "still holds: if it can never turn false, the loop runs forever (a "
                    "GPU's as well); bound it with max_iterations=, or interrupt and check "
                    "what its body writes into the condition", RuntimeWarning, file, line)


_LONG_RUN = 100_000   # trips of an unbounded loop on the simulator before a warning


class IfOp(_ConditionalOp):
    """``if_then`` (one region) and ``if_else`` (two: then, else)."""

    kind = "if"

    def n_regions(self, node) -> int:
        return 2 if node.attrs.get("else") else 1

    def bodies(self, streams):
        return streams[0] if len(streams) == 1 else tuple(streams)

    def _more(self, node) -> str:
        return ", else" if node.attrs.get("else") else ""

    def _conditional(self, setter, handle, node):
        if node.attrs.get("else"):
            branch = setter.if_else(handle)
            return branch, (branch.then, branch.else_)
        branch = setter.if_then(handle)
        return branch, (branch.then,)

    def simulate(self, sim, node) -> None:
        if self.test(sim, node):
            sim.run(node.regions[0])
        elif len(node.regions) == 2:
            sim.run(node.regions[1])


class _Cases(tuple):
    """The bodies of a switch, one per case: a case past them is an error that
    says how many there are."""

    __slots__ = ()

    def __getitem__(self, i):
        try:
            return super().__getitem__(i)
        except IndexError:
            need = i + 1 if isinstance(i, int) and i >= 0 else "n"
            raise ArgumentError(
                f"case {i} of a switch of {len(self)} cases (0 to {len(self) - 1}): give "
                f"s.switch the number of cases, s.switch(gt.cond(k), {need})",
                user_frame()) from None


class SwitchOp(_ConditionalOp):
    kind = "switch"
    handle_kind = "switch"

    def n_regions(self, node) -> int:
        return node.attrs["cases"]

    def bodies(self, streams):
        return _Cases(streams)

    def describe(self, node, namer) -> str:
        return f"{namer.value(node.args[0])} in {node.attrs['cases']} cases"

    def _setter_args(self, gpu, node, handle, entry) -> tuple:
        return (handle, gpu.value_of(node.args[0]).ptr)

    def _extra(self, gpu, node) -> tuple:
        return (np.uint32(node.attrs["cases"]),)

    def _conditional(self, setter, handle, node):
        branch = setter.switch(handle, node.attrs["cases"])
        return branch, tuple(branch.branches)

    def simulate(self, sim, node) -> None:
        k = int(sim.array(node.args[0]).reshape(-1)[0])
        if 0 <= k < len(node.regions):
            sim.run(node.regions[k])


def record_child(stream, function, args, kwargs, source, lead=()):
    """``s.child(f, *args)``: ``f``'s ops recorded into a child-graph node, their
    dependencies inferred in ``f``'s own mode (``deps``); ``lead``: what comes
    before the stream in the call (a method's object)."""
    if _attr(function, "_graphtrace_graph", False) is not True or not callable(function):
        raise ArgumentError(f"s.child() takes a @gt.graph function, not "
                            f"{type(function).__name__}")
    t = stream.tracer()
    index = t.reserve_index()
    mode = getattr(function, "deps", None)
    scope = t.open_region(getattr(function, "__name__", "child"), stream.scope,
                          mode=mode if mode in ("data", "streams") else None)
    others = [v.index for v in (*args, *kwargs.values()) if _caller_stream(v, stream)]
    try:
        function(*lead, *_inside(scope, stream, (stream, *args)),
                 **dict(zip(kwargs, _inside(scope, stream, kwargs.values()))))
    except BaseException:   # caught later, the trace would go on without this node
        t.abandoned.append(("s.child(...)", source))
        raise
    finally:
        region = t.close_region(scope)
    shown = tree_map(lambda v: t.cached_buffer(v) or v if is_array(v) else v, args)
    t.before_child(scope, stream.index, others)
    node = t.record(CHILD, function, shown, _union((region,), []), stream=stream.index,
                    scope=stream.scope, regions=(region,), source=source, index=index,
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


class ChildOp(Op):
    """A nested graph function recorded as a child-graph node: ``target`` the
    function, ``args`` its arguments as recorded, one region (its nodes)."""

    kind = "child"

    def describe(self, node, namer) -> str:
        return f"{node.target.__name__}({', '.join(namer.value(a) for a in node.args)})"

    def verify(self, node) -> str | None:
        return None if len(node.regions) == 1 else "a child node owns one region"

    def emit(self, gpu, node, parent):
        from cuda.core.graph import GraphDefinition
        child = parent.embed(GraphDefinition())
        # The embedded graph is the node's own (not a copy): nodes added to it
        # are updated in place when the graph is rebound.
        gpu.emit_region(node.regions[0], child.child_graph)
        return child

    def simulate(self, sim, node) -> None:
        sim.run(node.regions[0])


def _require_driver(kind: str, node) -> None:
    from .. import _driver
    version = _driver.driver_version()
    need = _DRIVER_NEEDED["if_else" if kind == "if" and node.attrs.get("else") else kind]
    if version and version < need:
        raise EmitError(
            f"{kind} nodes need a CUDA driver >= {need // 1000}.{need % 1000 // 10}; this "
            f"one is {version // 1000}.{version % 1000 // 10}: update the driver, or loop "
            "on the host", source=node.source)


WHILE, IF, SWITCH, CHILD = WhileOp(), IfOp(), SwitchOp(), ChildOp()

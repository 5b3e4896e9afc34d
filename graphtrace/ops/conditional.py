"""Loops and branches on the device (``while_loop``, ``if_then``, ``if_else``,
``switch``) and child graphs: their ops.

Each is a structured node: its bodies are regions (sub-graphs) recorded on
proxy streams of their own, with the same API as outside (``_structured.py``
records them)::

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
construction. The simulator runs the same semantics on the CPU. A child graph
(``s.child(f, ...)``) becomes a child-graph node holding ``f``'s nodes.
``rhs_value`` tells the value a condition's right side is compared as.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..buffers import Buffer
from ..errors import ArgumentError, EmitError, user_frame
from ..scalar import Scalar, has_fraction
from ._conditions import condition_kernel, evaluate
from ._driver_nodes import node_handle
from .base import Op

__all__ = ["rhs_value", "WHILE", "IF", "SWITCH", "CHILD"]

_NO_BOUND = (1 << 32) - 1
# Conditional node kinds and the driver they need (CUDA 12.3: if, while; 12.8: if-else, switch)
_DRIVER_NEEDED = {"while": 12030, "if": 12030, "if_else": 12080, "switch": 12080}


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
        if not has_fraction(rhs) and not isinstance(rhs, np.floating):   # out of range
            advice = (f"{dtype} holds {holds}, and a bound past them would be wrapped into "
                      "them; the test gives the same for every value the array holds: bring "
                      "the bound into that range before the call, keeping the test's meaning "
                      f"(x > n for an n past {high} is x > {high}), or keep the condition "
                      "in an array of a wider dtype")
    raise ArgumentError(f"a device condition on a {dtype} array cannot compare it with "
                        f"{rhs!r}: the GPU compares in {dtype}; {advice}", source)


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


class ChildOp(Op):
    """A nested graph function recorded as a child-graph node: ``target`` the
    function, ``args`` its arguments as recorded, one region (its nodes)."""

    kind = "child"

    def describe(self, node, namer) -> str:
        shown = [namer.value(a) for a in node.args] + \
            [f"{k}={namer.value(v)}" for k, v in node.attrs.get("keywords", {}).items()]
        return f"{node.target.__name__}({', '.join(shown)})"

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

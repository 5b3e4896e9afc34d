"""The op table, and what the op families share.

Each op family module registers, for its node kinds, how a node is described
in listings, emitted into a CUDA graph and simulated on the CPU, and adds its
proxy-stream methods. The tracer and the dependency inference never grow a
branch per op: they only call what this table holds.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..buffers import is_array, unwrap_intent
from ..errors import IntentError
from ..tree import leaves, tree_map

__all__ = ["Op", "OPS", "STREAM_METHODS", "register", "stream_method", "updaters",
           "intent_error", "record_args"]


@dataclass(frozen=True)
class Op:
    """How one node kind is described, emitted and simulated.

    ``describe(node, namer) -> str`` gives the listing text after the kind.
    ``emit(emitter, node, parent) -> GraphNode`` adds the node to a cuda.core
    graph definition, as a successor of ``parent`` (a node, or the definition
    itself for an entry node); ``emitter.value_of`` gives each recorded
    Buffer/Scalar its value in the binding, ``emitter.state`` keeps what
    updates need. ``update(compiled, node, graph_node)`` points the
    instantiated node at the compiled graph's new binding;
    ``update_definition`` does the same to the definition's node (None for
    nodes that need no driver call to rebind, like host callbacks).
    ``simulate(node, check)`` executes the node on the CPU.
    """

    kind: str
    describe: Callable
    emit: Callable | None = None
    update: Callable | None = None
    simulate: Callable | None = None
    update_definition: Callable | None = None


OPS: dict[str, Op] = {}
STREAM_METHODS: dict[str, Callable] = {}


def register(op: Op) -> Op:
    OPS[op.kind] = op
    return op


def stream_method(fn: Callable) -> Callable:
    """Make ``fn(stream, ...)`` a method of the proxy stream."""
    STREAM_METHODS[fn.__name__] = fn
    return fn


def updaters(params: Callable) -> tuple:
    """``(update, update_definition)`` for an op whose node parameters
    ``params(binding, node)`` gives as the keywords of cuda.core's ``update``."""
    def update(cg, node, gnode):
        cg.exec_node(node.index).update(**params(cg, node))

    def update_definition(cg, node, gnode):
        gnode.update(**params(cg, node))
    return update, update_definition


def _position(args, buf):
    """Index of the argument that holds ``buf`` (also inside a tuple, list or dict)."""
    return next((i for i, a in enumerate(args) if any(v is buf for v in leaves(a))), None)


def intent_error(node, buf, detail: str = ""):
    """The ``IntentError`` for ``node`` having written ``buf``, which it only reads."""
    i = _position(node.args, buf)
    what = buf.label or "an array"
    if node.kind == "kernel":
        param = f" (parameter {node.target.param_name(i)})" if i is not None else ""
        return IntentError(
            f"kernel {node.target.name} wrote to {what}{param}{detail}, which it was inferred "
            "or declared to only read: wrap the argument in gt.InOut(...) or declare the "
            "kernel with gt.kernel(k, intents)", source=node.source)
    name = getattr(node.target, "__qualname__", node.kind)
    arg = f" (argument {i})" if i is not None else ""
    return IntentError(f"{node.kind} {name} wrote to {what}{arg}{detail}, which it was "
                       "declared to only read: pass it as gt.InOut(...)", source=node.source)




def record_args(tracer, args, intent, check) -> tuple[tuple, list]:
    """``(recorded arguments, accesses)`` of an op's arguments.

    Every array leaf becomes the trace's ``Buffer`` for it, accessed as
    ``intent(i)`` says for argument ``i`` unless ``gt.In``/``Out``/``InOut``
    wrap it (or a container holding it); ``check(i, buf)`` refuses memory the
    op cannot take. Other leaves (numbers, dynamic scalars, handles) stay.
    """
    accesses: list = []

    def record(i, value, mode):
        def leaf(v):
            buf, m = tracer.cached_buffer(v), mode   # the usual case: an array seen before
            if buf is None:
                obj, m = unwrap_intent(v, mode)
                if obj is not v:   # a wrapper: what it holds takes its intent
                    return record(i, obj, m)
                if isinstance(obj, np.generic) or not is_array(obj):
                    return obj
                buf = tracer.buffer(obj)
            check(i, buf)
            accesses.append((buf, m))
            return buf
        return tree_map(leaf, value)

    return tuple(record(i, a, intent(i)) for i, a in enumerate(args)), accesses

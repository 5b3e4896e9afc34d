"""``Op``: what a node kind does, as named hooks with defaults.

Each op family module (``kernel``, ``memory``, ``host``, ``control``)
subclasses ``Op`` once per node kind and makes one instance of it; a
recorded ``Node`` holds that instance (``node.op``). The tracer, the
dependency inference, the binding and both executors only call these hooks,
so a new kind of node is its own module.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from ..arrays import is_array
from ..buffers import unwrap_intent
from ..errors import IntentError, SimulationError
from ..owners import _attr
from ..tree import leaves, tree_map

__all__ = ["Op", "record_args", "arg_position"]


class Op:
    """One kind of node. Override what the kind needs; the rest has defaults.

    The hooks, by the context they get (``gpu``: ``emit.GpuContext``;
    ``sim``: ``sim.SimContext``; ``namer``: ``ir.Namer``)::

        Op
          kind                          the node kind's name, shown in listings
          describe(node, namer)         listing text after the kind
          verify(node)                  what is wrong with the node, or None
          emit(gpu, node, parent)       add the node to a cuda.core graph definition
          emit_launch(gpu, target, args, attrs, index, parent, preds)
                                        the same from the columns a trace recorded
                                        for a launch (``Tracer.add``), without its
                                        Node (only the kernel op records so): the
                                        node's handle, added after the handles preds
          params(gpu, node)             keywords of cuda.core's node .update(), or None
          update(gpu, node)             point the executable node at the binding
          exec_update                   whether update() can (else whole-graph updates)
          update_definition(gpu, node)  the same for the definition's node
          plan_patches(gpu, node, patches, roots, ptrs)  let later rebinds rewrite the
                                        node's address words in place (_patch.py)
          driver_update                 whether rebinding calls the driver
          simulate(sim, node)           run the node on the CPU
          intent_error(node, buf, ...)  the IntentError for writing what it only reads
          refused_in_conditional        a name for the kind if a conditional body
                                        cannot hold it ("" if it can)

    Recording is not a hook: each family's functions record through the
    tracer's recording API (``trace.Tracer``), called from ``stream.Stream``.
    """

    kind = "?"
    refused_in_conditional = ""   # what to call the kind if CUDA refuses it in a body

    def describe(self, node, namer) -> str:
        """``target[attr=value, ...](args)``: the generic form, as JAX prints an
        equation; a kind with a notation of its own overrides it."""
        head = "" if node.target is None else namer.value(node.target)
        attrs = ", ".join(f"{k}={namer.value(v)}" for k, v in node.attrs.items())
        args = ", ".join(namer.value(a) for a in node.args)
        return f"{head}{f'[{attrs}]' if attrs else ''}({args})"

    def verify(self, node) -> str | None:
        """What breaks this kind's invariants in ``node`` (``Graph.verify`` reports it)."""
        return None

    def emit(self, gpu, node, parent):
        """Add ``node`` to ``parent`` (the cuda.core ``GraphDefinition`` it belongs
        to) and return its cuda.core node or ``CUgraphNode`` handle.

        The emitter puts the returned node after the node's predecessors, unless
        the op wires them itself (``gpu.take_preds()``, ``gpu.entry(...)``).
        Keep what updates need in ``gpu.state[node.index]``.
        """
        raise NotImplementedError(f"{self.kind} nodes cannot be put in a CUDA graph")

    def params(self, gpu, node) -> dict | None:
        """The keywords of cuda.core's ``.update(...)`` of this node for the current
        binding (``gpu.value_of``); None: nothing to update through the driver."""
        return None

    @property
    def driver_update(self) -> bool:
        """Whether rebinding the node calls the driver: a kind that has ``params`` does."""
        return type(self).params is not Op.params

    exec_update = False   # update() sets the executable node (else: a whole-graph update)

    def moved(self, gpu, node) -> bool:
        """For a node whose ``emit`` lists it in ``gpu.watched``, asked at each launch:
        whether memory its work reads that no argument brings has moved since it was
        emitted or updated (a library's tensors); it is then updated first."""
        return False

    def update(self, gpu, node) -> None:
        """Point the executable node at the current binding (where ``exec_update``;
        host nodes: their arguments, with no driver call). Nodes with nothing to
        update (events, child graphs: their own nodes are updated) do nothing."""
        if self.driver_update:
            raise NotImplementedError(f"{self.kind} nodes are updated with the whole graph")

    def update_definition(self, gpu, node) -> None:
        """Point the definition's node at the current binding (kept current for
        whole-graph updates)."""
        params = self.params(gpu, node)
        if params is not None:
            gpu.definition_node(node).update(**params)

    def plan_patches(self, gpu, node, patches, roots, ptrs) -> bool:
        """Plan the node in ``patches`` (``ops/_patch.py``) so that rebinds write
        its new addresses in place; False: it is updated by ``update*`` instead."""
        return False

    def check_values(self, value_of, node) -> None:
        """Raise where the numbers of a binding (``value_of`` maps a dynamic Scalar
        to its value) cannot run the node. The GPU finds out while updating the
        graph, before it runs; the simulator asks every node before it runs one."""

    def simulate(self, sim, node) -> None:
        """Run the node on the CPU, reading and writing through ``sim``."""
        raise SimulationError(f"the simulator cannot run {self.kind} nodes",
                              source=node.source)

    def intent_error(self, node, buf, detail: str = "") -> IntentError:
        """The ``IntentError`` for ``node`` having written ``buf``, which it only reads."""
        i = arg_position(node.args, buf)
        name = _attr(node.target, "__qualname__", self.kind)
        arg = f" (argument {i})" if i is not None else ""
        return IntentError(f"{self.kind} {name} wrote to {buf.label or 'an array'}{arg}"
                           f"{detail}, which it was declared to only read: pass it as "
                           "gt.InOut(...)", source=node.source)

    def __repr__(self):
        return f"<op {self.kind}>"


def callable_name(fn) -> str:
    """What a host callback or captured region runs, by name: a partial's function,
    a callable object's ``Type.__call__`` (a repr holds an address, and listings are
    compared as text)."""
    while isinstance(fn, partial):
        fn = fn.func
    return _attr(fn, "__qualname__") or _attr(fn, "__name__") or \
        f"{type(fn).__qualname__}.__call__"


def bound_arguments(fn) -> tuple[list, list]:
    """The arguments a ``partial`` (of a partial too) binds, as a listing shows them:
    those it passes before the node's own, and its keywords (``name=value``), which
    come after. A number, a string or None by its repr (cut short), anything else by
    its type (a repr may hold an address, and listings are compared as text)."""
    args: list = []
    keywords: dict = {}
    while isinstance(fn, partial):
        args[:0] = map(_bound, fn.args)   # an inner partial's come first
        keywords = {**fn.keywords, **keywords}   # an outer one's win
        fn = fn.func
    return args, [f"{k}={_bound(v)}" for k, v in keywords.items()]


_SHOWN = (type(None), bool, int, float, complex, str, bytes, np.generic)


def _bound(v) -> str:
    if not isinstance(v, _SHOWN) or isinstance(v, np.void):
        return f"<{type(v).__name__}>"
    text = repr(v.item() if isinstance(v, np.generic) else v)
    return text if len(text) <= 40 else text[:37] + "..."


def element_bytes(a) -> np.ndarray:
    """A copy of the bytes of array ``a``'s elements, in C order, as uint8: a
    record's padding too, which a copy of the record array itself (field by
    field) leaves as it finds it in new memory. An axis of stride 0 (a broadcast)
    repeats its elements: one of them stands for all, so that a view of a huge
    logical shape over a few bytes copies those few."""
    if a.size > 1 and 0 in a.strides:
        a = a[tuple(slice(0, 1) if st == 0 else slice(None) for st in a.strides)]
    whole = a.view(np.dtype((np.void, a.dtype.itemsize)))   # no fields: copied whole
    return whole.copy().reshape(-1).view(np.uint8)


def same_bytes(now, before) -> bool:
    """Whether array ``now`` holds the bytes ``before`` (``element_bytes``) holds
    (records, NaNs and -0.0 included): what a read-only check compares."""
    return np.array_equal(element_bytes(now), before)


def read_only_bytes(sim, node) -> list:
    """``(Buffer, copy of its bytes)`` of each view ``node`` only reads (no view it
    writes overlaps), where the simulator checks intents; else nothing."""
    if not sim.check:
        return []
    written = [b for b, m in node.accesses if "w" in m]
    return [(b, element_bytes(sim.array(b))) for b, m in node.accesses
            if m == "r" and not any(b.overlaps(w) for w in written)]


def changed(sim, kept: list):
    """The first Buffer of ``read_only_bytes`` whose bytes changed since, or None."""
    return next((b for b, before in kept if not same_bytes(sim.array(b), before)), None)


def arg_position(args, buf):
    """Index of the argument that holds ``buf`` (also inside a tuple, list or dict)."""
    return next((i for i, a in enumerate(args) if any(v is buf for v in leaves(a))), None)


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
            buf, m = tracer.cached_buffer(v), mode
            if buf is None:
                obj, m = unwrap_intent(v, mode)
                if obj is not v:   # a wrapper: what it holds takes its intent
                    v.refuse_nested()
                    return record(i, obj, m)
                if isinstance(obj, np.generic) or not is_array(obj):
                    return obj
                buf = tracer.buffer(obj)
            check(i, buf)
            accesses.append((buf, m))
            return buf
        return tree_map(leaf, value)

    out = []
    for i, a in enumerate(args):
        buf = tracer.cached_buffer(a)
        if buf is None:
            out.append(record(i, a, intent(i)))
        else:   # the usual case: an array seen before, passed as itself
            check(i, buf)
            accesses.append((buf, intent(i)))
            out.append(buf)
    return tuple(out), accesses

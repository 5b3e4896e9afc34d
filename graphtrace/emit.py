"""IR -> cuda.core ``GraphDefinition`` -> instantiated graph; rebinding.

The emitter is thin: each node is added by its op (``Op.emit``, with a
``GpuContext``) and wired after its predecessors by their ``CUgraphNode``
handles; kernel nodes go through the driver (``ops/_driver_nodes.py``), other
nodes through cuda.core, and the graph is instantiated through the driver
(``executable.py`` says why). Every driver failure is re-raised naming the
node and the user's line. ``CompiledGraph`` holds the definition, the
executable graph and the current binding of arguments; ``rebind`` updates
only the nodes whose arrays or scalars changed: kernel nodes by rewriting the
words of their packed arguments that hold addresses, or by packing them again
where numbers changed (``ops/_patch.py``), other nodes through their ops.
"""
from __future__ import annotations

import sys
import threading
from collections import deque

from . import log
from .backend import stream_error
from .binding import Binding, changed_scalars
from .buffers import Buffer
from .context import gc_paused
from .errors import ArgumentError, EmitError, KernelArgumentError, counted
from .executable import Executable
from .ir import Graph, describe
from .ops._driver_nodes import KernelNodes, node_handle
from .ops._patch import Patches, nodes_in, union
from .ops._devices import for_graph
from .ops._host_calls import raise_failed
from .probe import _attr, _has
from .scalar import Scalar
from .temporary_memory import device_memory

__all__ = ["CompiledGraph", "GpuContext", "as_stream", "instantiate"]

_tls = threading.local()
_streams: dict[int, tuple] = {}   # id(stream object) -> (it, its cuda.core Stream)

# Host cost of the two update routes through cuda.core on an H200 (bench/): one
# executable kernel node while launches of the graph are in flight (about 1 us
# on an idle graph, 40 us a node in flight), one definition node, and
# Graph.update(definition) per node the graph holds. The whole-graph route wins
# unless a handful of nodes change in a very large graph.
EXEC_NODE_UPDATE_US = 40.0
DEFINITION_NODE_UPDATE_US = 2.0
WHOLE_GRAPH_US_PER_NODE = 0.07


def as_stream(stream, device=None):
    """A cuda.core ``Stream`` for any stream object (None: the current one).

    ``device`` is the cuda.core ``Device`` made current in this thread (its
    instances are per thread).
    """
    hit = _streams.get(id(stream))          # the usual case: a stream seen before
    if hit is not None and hit[0] is stream:
        return hit[1]
    from cuda.core import Device, Stream
    device = device or Device()
    if isinstance(stream, Stream):
        return stream
    if stream is None:
        if "cupy" in sys.modules:
            stream = sys.modules["cupy"].cuda.get_current_stream()
        elif "torch" in sys.modules and sys.modules["torch"].cuda.is_initialized():
            stream = sys.modules["torch"].cuda.current_stream()
        else:
            return device.default_stream
    if isinstance(stream, int):
        return Stream.from_handle(stream)
    hit = _streams.get(id(stream))
    if hit is not None and hit[0] is stream:
        return hit[1]
    if _has(stream, "__cuda_stream__"):
        core = device.create_stream(stream)
        if len(_streams) >= 16:
            _streams.pop(next(iter(_streams)))
        _streams[id(stream)] = (stream, core)  # wrapping costs more than a launch
        return core
    handle = _attr(stream, "handle")  # numba streams: a ctypes c_void_p
    if handle is not None:
        return Stream.from_handle(int(getattr(handle, "value", handle) or 0))
    raise stream_error(stream)


def _failed(node, e: Exception) -> EmitError:
    """The error naming ``node`` and the user's line when adding it failed with ``e``."""
    return EmitError(f"failed to add {node.kind} node %{node.index} {describe(node)} "
                     f"({_why(e)})", source=node.source)


def _why(e: BaseException) -> str:
    """An inner failure for an outer message (without the inner one's source line)."""
    return f"{type(e).__name__}: {getattr(e, 'message', e)}"


class GpuContext:
    """What an op's GPU hooks get: the graph being built, and the binding's values.

    ``Op.emit`` adds nodes; ``Op.params``/``update``/``update_definition``
    point them at a new binding. One context serves a compiled graph for its
    whole life::

        GpuContext
          definition               the cuda.core GraphDefinition of the whole graph
          value_of(x)              a recorded Buffer or Scalar -> its value now
          owner_of(x)              the array bound now to the argument x lies in
          state[node.index]        what an op's emit kept for its updates
          clock                    [the executable graph's launches so far], which
                                   its launch counts: host callbacks take the
                                   binding of their launch by it (ops/host.py)
          failed                   (exception, launch, Calls) of each host callback
                                   run that raised (it runs on the driver's thread,
                                   which cannot raise it): the next launch does
          kernel_nodes             adds and sets kernel nodes through the driver
          definition_node(node)    the cuda.core node (or handle) emitted for node
          handle(node)             its CUgraphNode
          graph                    the Executable (executable.py), once instantiated
          emit_region(region, definition)  emit a region Graph into a definition,
                                   in order, after its dependencies (structured ops:
                                   a WhileNode's .body); the whole graph too
          emit_node(node, preds, definition=None)  one node, after the nodes of
                                   handles preds (edges added through the driver)
          take_preds() / entry(definition, gn)  for an op that wires its node's
                                   predecessors itself
          kernel_arguments(target, args)  a launch's compiled kernel and packed
                                   arguments (shared by the launches of one
                                   recorded argument tuple while the graph is
                                   first built)
          reshaped                 set by an update_definition whose node changed
                                   shape (a captured region captured anew): the
                                   executable graph is then instantiated again
          devices                  for a graph over several GPUs, which hooks emit
                                   and update each node (ops/_devices.py); None

    Maps are keyed by ``node.index``: cuda.core graph nodes hash alike, so a
    dict keyed by them costs a scan per lookup (100 us a node in a 1000-node graph).
    """

    def __init__(self, value_of):
        from cuda.core.graph import GraphDefinition
        self.definition = GraphDefinition()
        self.value_of = value_of
        self.owner_of = None                 # a Binding's owner_of, where one builds it
        self.state: dict[int, object] = {}
        self.clock = [0]
        self.failed: list = []               # host callbacks that raised (ops/_host_calls.py)
        self.graph = None                    # the executable graph, once instantiated
        self.reshaped = False
        self.devices = None
        self._nodes: dict[int, object] = {}  # node index -> its definition node
        self._handles: dict[int, object] = {}  # node index -> its CUgraphNode
        self._preds = None                     # handles the node being emitted comes after
        self.kernel_nodes = KernelNodes()
        self._handle_type = self.kernel_nodes.driver.CUgraphNode
        self.packings = None   # while a graph is first built: id(args) -> kernel_arguments

    def emit_region(self, region: Graph, definition) -> None:
        # a region emitted inside an op's emit (a child graph's nodes) leaves the
        # predecessors of that op's own node as they were: they are wired after it
        outer, self._preds = self._preds, None
        try:
            rec = region.recording() if self.devices is None else None
            if rec is not None:
                self._emit_recorded(rec, definition)
                return
            handles, emit = self._handles, self.emit_node
            for node in region.nodes:
                emit(node, [handles[d.index] for d in node.deps], definition)
        finally:
            self._preds = outer

    def _emit_recorded(self, rec, definition) -> None:
        """``emit_region`` from the columns a trace recorded, without making the
        Nodes of its launches (``columns.Recording``): each launch goes to its
        op's ``emit_launch``, which adds it after its predecessors; a node made
        while recording goes through ``emit_node``. A failure makes the launch's
        Node, to name it. This loop runs once per node of a build; where the
        compiled emitter is built, it takes the plain kernel launches
        (``_emitter.c``'s ``launches``) and hands the rest back here."""
        ptr, preds = rec.deps
        ptr, preds = ptr.tolist(), preds.tolist()
        entries, early, by_pos = rec.entries, rec.early(), []
        compiled, kn = self.kernel_nodes.compiled, self.kernel_nodes
        pos, n = 0, len(entries)
        while pos < n:
            if compiled is not None:
                pos = compiled.launches(entries, ptr, preds, by_pos, pos,
                                        int(kn.graph_of(definition)), early, self.packings,
                                        self.kernel_arguments, self.state, self._handles,
                                        self._nodes, kn.arguments.fill, kn.function_address)
                if pos == n:
                    break
            a, b = ptr[pos], ptr[pos + 1]
            after = [by_pos[preds[a]]] if b - a == 1 else [by_pos[p] for p in preds[a:b]]
            by_pos.append(self._emit_entry(rec, pos, early, after, definition))
            pos += 1

    def _emit_entry(self, rec, pos: int, early: dict, after: list, definition):
        """Entry ``pos`` of ``rec`` added after the handles ``after``; its handle."""
        op, target, args, attrs, _, _, _, index, _ = rec.entries[pos]
        node = early.get(pos) if early else None
        launch = getattr(op, "emit_launch", None) if node is None else None
        if launch is None:   # a node made while recording, or no launch: its Node
            self.emit_node(node if node is not None else rec.node(pos), after, definition)
            return self._handles[index]
        try:
            handle = launch(self, target, args, attrs, index, definition, after)
        except EmitError:
            raise
        except Exception as e:
            raise _failed(rec.node(pos), e) from e
        self._handles[index] = self._nodes[index] = handle
        return handle

    def _wired(self, gn, definition):
        """The handle of the node ``gn`` an op added, put after the emitted node's
        predecessors unless the op took them (``take_preds``)."""
        handle = gn if type(gn) is self._handle_type else node_handle(gn)
        if self._preds is not None:
            self.kernel_nodes.add_edges(definition, self.take_preds(), handle)
        return handle

    def emit_node(self, node, preds: list, definition=None):
        """Add ``node`` to ``definition`` after the nodes of handles ``preds``; a
        driver or packing failure is re-raised naming the node and the user's line.

        The op adds its node(s) with the definition as parent; it may take
        ``preds`` itself (``take_preds``: a kernel node gets them at creation;
        ``entry``: a node of its own that must come after them), else the
        node it returns gets them.
        """
        definition = self.definition if definition is None else definition
        self._preds = preds
        try:
            op = node.op if self.devices is None else self.devices.op(node)
            gn = op.emit(self, node, definition)
            handle = self._wired(gn, definition)
        except EmitError:
            raise
        except Exception as e:
            raise _failed(node, e) from e
        self._nodes[node.index], self._handles[node.index] = gn, handle
        return gn

    def kernel_arguments(self, target, args) -> tuple:
        """``(kernel, meta, packed values, whether the kernel needs a cooperative
        launch)`` of a launch of the kernel adapter ``target`` with these recorded
        arguments (``target.compile``, then ``target.pack``). While a graph is
        first built (one binding and one device throughout: ``packings`` set),
        launches of one kernel with the same recorded arguments (the tracer
        hands them one tuple) share them."""
        cache = self.packings
        if cache is not None:
            hit = cache.get(id(args))
            if hit is not None and hit[0] is args and hit[1] is target:
                return hit[2]
        kern, meta = target.compile(args)
        out = (kern, meta, target.pack(meta, args, self.value_of),
               target.compiled_cooperative(meta))
        if cache is not None:
            cache[id(args)] = (args, target, out)
        return out

    def take_preds(self) -> list:
        """The handles the node being emitted comes after (once: the op wires them)."""
        preds, self._preds = self._preds, None
        return preds

    def entry(self, definition, gn) -> None:
        """Put the cuda.core node ``gn`` of ``definition`` after the emitted node's
        predecessors (its first node, where that is not the one ``emit`` returns)."""
        self.kernel_nodes.add_edges(definition, self.take_preds(), node_handle(gn))

    def definition_node(self, node):
        return self._nodes[node.index]

    def handle(self, node):
        """The ``CUgraphNode`` emitted for ``node``."""
        return self._handles[node.index]

    def set_graph(self, graph) -> None:
        """Take a new executable graph of the definition."""
        self.graph, self.reshaped = graph, False


def instantiate(definition, ir: Graph, source=None) -> Executable:
    """The executable graph of a definition (``executable.py`` says why through the
    driver); a failure names the graph, at ``source`` (default: its first node's line)."""
    try:
        return Executable(definition)
    except Exception as e:
        if source is None and ir.count():
            source = ir.nodes[0].source
        raise EmitError(f"failed to instantiate graph {ir.name} ({_why(e)})",
                        source=source) from e


class CompiledGraph(Binding):
    """An instantiated CUDA graph for one signature of a decorated function.

    ``launch(stream)`` replays it; ``rebind(objs, ptrs, svals)`` points it at
    new arguments of the same signature (``GraphFunction`` calls both). It
    keeps every buffer it references alive: the arguments of its current
    binding, those of earlier bindings until their launches are done, and
    the arrays of its trace; it owns the memory of its temporaries.
    """

    def __init__(self, ir: Graph, arrays: list[Buffer], scalars: list[Scalar], device=None):
        from cuda.core import Device
        self.device = Device(device) if device is not None else Device()
        self.device.set_current()
        self._device_id = self.device.device_id
        super().__init__(ir, arrays, scalars)
        self._emit()

    def allocate(self, nbytes: int, device=None) -> int:
        from cuda.core import Device
        block, base = device_memory(nbytes, self.device if device is None else Device(device))
        self._scratch = [*getattr(self, "_scratch", []), block]
        return base

    # --- building ----------------------------------------------------------
    def _emit(self):
        gpu = self.gpu = GpuContext(self.value_of)
        gpu.owner_of = self.owner_of
        gpu.devices = for_graph(self.ir, self._device_id)
        gpu.packings, gpu.watched = {}, []
        try:
            with gc_paused():   # handles and their state live as long as the graph
                gpu.emit_region(self.ir, gpu.definition)
        finally:
            gpu.packings = None   # later packings follow later bindings
        self.definition = gpu.definition
        self.graph = gpu.graph = instantiate(gpu.definition, self.ir)
        self._uploaded = False
        self._launched = None          # the argument objects of the latest launch
        self._again = None             # what launch() repeats at once (its short way)
        self._held = deque()           # (event, objects) of earlier bindings still in use
        # nodes reading memory no argument brings, which may move between launches
        # (their emit() names them: walking the graph would make every launch's Node)
        self._watched = tuple(gpu.watched) or None

    # --- running -----------------------------------------------------------
    def _make_current(self):
        """Contexts are current per thread: make ours current in this one, once."""
        dev = getattr(_tls, "device", None)
        if dev is None or _tls.device_id != self._device_id:
            from cuda.core import Device
            dev = _tls.device = Device(self._device_id)
            _tls.device_id = self._device_id
            dev.set_current()
        return dev

    def launch(self, stream=None) -> None:
        """Replay the graph on ``stream`` (asynchronous). A host callback of an earlier
        launch that raised raises here first (``raise_failed``), launching nothing."""
        if self.gpu.failed:
            raise_failed(self.gpu.failed, self.ir.name)
        if self._watched is not None:
            self._update_moved()
        again = self._again   # the last launch's stream and binding again: one driver call
        if again is not None and again[0] is stream and self._objs is self._launched \
                and again[1] is self.graph and getattr(_tls, "device_id", None) == \
                self._device_id:
            err, = again[2](again[3], again[4])
            if not err:
                again[5][0] += 1
                return
        s = as_stream(stream, self._make_current())
        if not self._uploaded:
            self.graph.upload(s)
            self._uploaded = True
        self.graph.launch(s)
        self.gpu.clock[0] += 1
        self._hold(s)
        # a stream given by the caller (not the current one, which None means): the
        # next launch on it with this binding takes the short way
        self._again = None if stream is None else \
            (stream, self.graph, self.graph._driver.cuGraphLaunch, self.graph.handle,
             self.graph._stream(s), self.gpu.clock)

    def _update_moved(self) -> None:
        """Update first the nodes whose library memory moved (``Op.moved``:
        a captured region's torch module given a new parameter is captured again)."""
        moved = [n for n in self._watched if n.op.moved(self.gpu, n)]
        if not moved:
            return
        self._make_current()
        devices = self.gpu.devices
        for node in moved:
            op = node.op if devices is None else devices.op(node)
            self._update(node, op.update_definition)
            if not self.gpu.reshaped:
                self._update(node, op.update)
        how = "instantiated anew" if self.gpu.reshaped else "node by node"
        if self.gpu.reshaped:
            self._reinstantiate()
        log.route(self.ir.name, how, len(moved), "memory a captured region reads moved")

    def _hold(self, stream) -> None:
        """Keep the arrays of earlier bindings alive until their launches are done.

        Launches of one executable graph run one after another, so an event
        recorded after this launch tells when every earlier one has finished.
        Nothing is recorded while the binding stays the same.
        """
        held = self._held
        while held and held[0][0].is_done:
            held.popleft()
        if self._objs is not self._launched:
            if self._launched is not None:
                held.append((stream.record(), self._launched))
            self._launched = self._objs

    def wait(self) -> None:
        """Block until every launch of this graph so far has finished."""
        if self._launched is not None:
            self._make_current().sync()
        self._held.clear()

    def rebind(self, objs: list, ptrs: list[int], svals: list, route: str | None = None) -> int:
        """Point the graph at new arguments; returns how many nodes were updated.

        Kernel, copy and memset nodes take one of two routes: update each
        changed node of the executable graph (``"node"``), or update the
        definition and then the whole executable graph from it (``"whole"``).
        Either way the definition is kept current, so that a whole-graph
        update never brings back old values. By default the route is the
        cheaper one for this many nodes, by the costs measured in bench/;
        host callbacks need no driver call.
        """
        self._make_current()   # (a number no node can take: packing refuses it, and
        # the old binding is put back; refuse_numbers asks as much at ~10 us a call)
        self._bound = None   # the function's next call checks its arguments again
        done = self._rewrite_only(objs, ptrs, svals, route)
        if done is not None:
            return done
        before = self._objs, self._ptrs, self._svals
        nodes = self.bind(objs, ptrs, svals)
        if not nodes:
            return 0
        try:
            self._apply(nodes, route)
        except BaseException:
            # Put every node back on the old binding, so that the graph and the
            # binding agree again: the failed call changes nothing.
            self._objs, self._ptrs, self._svals = before
            try:
                self._apply(nodes, route)
            except BaseException:
                self.broken = True   # the function drops it from its cache
            raise
        return len(nodes)

    def _rewrite_only(self, objs, ptrs, svals, route) -> int | None:
        """The common rebind, done here: every node that uses the new arrays or
        numbers planned (``_patches``); else None (``_apply``)."""
        old_ptrs, old_svals = self._ptrs, self._svals
        numbers = changed_scalars(svals, old_svals)
        moved = [i for i, (p, q) in enumerate(zip(ptrs, old_ptrs)) if p != q]
        before = self._objs
        if not moved and not numbers:   # nothing to tell the driver
            self._objs, self._svals = objs, svals
            return 0
        patches = self._patches()
        if not all(patches.covers(i) for i in moved) or \
                not all(patches.covers_scalar(j) for j in numbers):
            return None
        self._objs, self._ptrs, self._svals = objs, ptrs, svals
        self._changed_slots, self._changed_scalars = moved, numbers
        try:
            images = union(patches.rewrite(moved, ptrs), patches.repack(numbers, self.value_of))
            count = nodes_in(images)
            whole = (route or self._route(count)) == "whole"
            patches.set_definition(images)
            if whole:
                self.graph.update(self.definition)
            else:
                patches.set_executable(images, self.graph.handle)
        except BaseException:
            # back to the old binding, so that the graph and the binding agree again
            self._objs, self._ptrs, self._svals = before, old_ptrs, old_svals
            try:
                patches.set_definition(union(patches.rewrite(moved, old_ptrs),
                                             patches.repack(numbers, self.value_of)))
                self.graph.update(self.definition)
            except BaseException:
                self.broken = True   # the function drops it from its cache
            raise
        log.rebound(self.ir.name, count, self.ir.count())
        log.route(self.ir.name, "the whole graph" if whole else "node by node", count,
                  "as asked" if route else "cheaper for this many nodes")
        return count

    def _apply(self, nodes, route) -> None:
        driven = [n for n in nodes if n.op.driver_update]
        for node in nodes:
            if not node.op.driver_update:   # host nodes: no driver call
                self._update(node, node.op.update)
        if not driven:
            return
        chosen = route or self._route(len(driven))
        pinned = next((n for n in driven if not n.op.exec_update), None)
        whole = chosen == "whole" or pinned is not None
        devices, patches = self.gpu.devices, self._patches()
        images = union(patches.rewrite(self._changed_slots, self._ptrs),
                       patches.repack(self._changed_scalars, self.value_of))
        for node in driven:
            if patches.has(node):   # its address words are rewritten in place
                continue
            op = node.op if devices is None else devices.op(node)
            self._update(node, op.update_definition)
            if not whole and not self.gpu.reshaped:
                self._update(node, op.update)
        patches.set_definition(images)
        if not whole and not self.gpu.reshaped:
            patches.set_executable(images, self.graph.handle)
        if self.gpu.reshaped:
            self._reinstantiate()
            how, why = "instantiated anew", "a captured region captured work of another shape"
        elif whole:
            self.graph.update(self.definition)
            how = "the whole graph"
            why = f"{pinned.kind} nodes are updated through the definition" \
                if pinned is not None and chosen != "whole" else \
                "as asked" if route else "cheaper for this many nodes"
        else:
            how, why = "node by node", "as asked" if route else "cheaper for this many nodes"
        log.route(self.ir.name, how, len(driven), why)

    def _patches(self) -> Patches:
        """The kernel nodes whose rebinds rewrite address words (``ops/_patch.py``),
        planned at the first rebind: nodes of the graph's own GPU only."""
        patches = self.__dict__.get("_planned")
        if patches is None:   # kept once whole (a failure leaves none: made again)
            patches = Patches(self.gpu.kernel_nodes.driver, self.gpu.kernel_nodes.compiled)
            devices = self.gpu.devices
            for node in self.ir.walk():
                if node.op.driver_update and (devices is None or
                                              devices.op(node) is node.op):
                    node.op.plan_patches(self.gpu, node, patches, self._slot, self._ptrs)
            patches.cover(*[[i for i, users in enumerate(group)
                             if all(k in patches.planned for k in users)]
                            for group in self.users()])
            self._planned = patches
        return patches

    def _reinstantiate(self) -> None:
        """A new executable graph from the definition, for a node whose shape changed
        (launches of the old one in flight finish; the driver frees it after them)."""
        self.graph = instantiate(self.definition, self.ir)
        self.gpu.set_graph(self.graph)
        self._uploaded = False

    def _update(self, node, how) -> None:
        try:
            how(self.gpu, node)
        except EmitError:
            raise
        except Exception as e:
            if isinstance(e, KernelArgumentError):   # as the patch route says it
                raise KernelArgumentError(
                    f"{getattr(e, 'message', e)} ({node.kind} node %{node.index} "
                    f"{describe(node)}, rebinding a new number)", source=node.source) from e
            if isinstance(e, ArgumentError):
                raise   # a number the node cannot take (a condition's, a memset's) at its
                #        line, as the simulator raises it
            raise EmitError(f"failed to update {node.kind} node %{node.index} "
                            f"{describe(node)} ({_why(e)})",
                            source=node.source) from e

    def _route(self, n_changed: int) -> str:
        """The cheaper update route, by the costs measured in bench/ (us)."""
        per_node = n_changed * (EXEC_NODE_UPDATE_US + DEFINITION_NODE_UPDATE_US)
        whole = n_changed * DEFINITION_NODE_UPDATE_US + self.ir.count() * WHOLE_GRAPH_US_PER_NODE
        return "node" if per_node <= whole else "whole"

    def __repr__(self):
        n = len(self.ir.nodes)
        return f"<graphtrace.CompiledGraph {self.ir.name}: {counted(n, 'node')}, " \
               f"{counted(len(self.ir.edges()), 'edge')} on {self.device}>"


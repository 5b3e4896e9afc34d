"""Captured regions: ordinary library code as one child-graph node.

``s.captured(fn, *args, reads=[...], writes=[...])`` records a node that
calls ``fn(*args)``; nothing runs while tracing. When the graph is built,
graphtrace calls ``fn`` with the arrays of the current binding while a
cuda.core graph builder captures its stream (cupy's and torch's current
stream switched to it), and embeds the captured graph as a child node. When
a later call rebinds the region's arrays or numbers, ``fn`` is captured
again with the new ones and only that child node is updated.

Regions run in the order they were recorded: each reads and writes the
trace's ``library_state``, for the state libraries keep that no argument
shows (a handle's workspace, a module's weights, an optimizer's moments).
The device arrays of the graph a region reaches by a global name or holds
are its accesses too, and those it reaches through ``globals()``,
``sys.modules``, a module or class (handed or reached) or an object array
(``_region_reach.py``: a new array there captures it again); one reading globals
by names computed when it runs is recorded as opaque. The libraries it reaches and the torch state it depends
on (a module's parameters and mode, an optimizer's settings and state) are
``_library_state.py``'s: a change between calls captures it again at the next
launch (``CapturedOp.moved``); one its own Python makes while captured is
refused.

Memory the libraries allocate during a capture (temporaries of
``cp.tanh(x) * 2``, a reduction's scratch) comes from a pool private to the
region (a cupy ``MemoryPool``; for torch a ``torch.cuda.MemPool``), which the
compiled graph keeps for its life: nothing else can be given that memory
while replays still use it. cupy's FFTs take their cuFFT plans from a cache
of the region's, kept as long (``_switching.py`` switches streams,
allocators and that cache for the capture).

A region whose arrays lie on several GPUs captures on a stream of each, joined
into one capture (``_devices.Joined``); ``capture_stream(device)`` hands the
function the stream of a device, and a ``before_capture()`` method of ``fn``
runs before each capture, outside it (``nccl.py`` makes communicators there).

On the simulator ``fn`` runs on the CPU with numpy views of the arrays, so
code written on the API numpy shares with cupy (``x @ w``, ``x.sum()``,
``y[...] = ...``) runs on both backends.
"""
from __future__ import annotations

import sys
import threading
from dataclasses import replace

import numpy as np

from ..arrays import as_buffer, is_array
from ..buffers import Buffer
from ..errors import (ArgumentError, CaptureError, EmitError, GraphtraceError, IntentError,
                      SimulationError, format_source)
from .._driver import current
from ..placement import place
from ..tree import leaves, tree_map
from ..scalar import Scalar
from ..temporary import holder_of
from ._devices import Joined
from ._region_args import refuse_conflicts, refuse_misuse
from ._region_reach import Places, reached_named, reached_values
from ._region_sim import (HostRead, device_views, host_read_error, plain_views,
                          simulation_error)
from ._region_words import not_given, temporary_label
from ._library_state import describe, first_change, grown, snapshot, torch_roots
from ._switching import _Libraries, _libraries, _temporaries_library
from .base import Op, callable_name, changed, read_only_bytes, record_args
from .host import _is_array_quietly, _names_of, _object_attributes, raised_in

__all__ = ["record_captured", "capture_stream", "CAPTURED"]

def _as_list(v) -> list:
    if v is None:
        return []
    return [v] if is_array(v) else list(v)


def record_captured(stream, fn, args, reads, writes, opaque, source):
    """``s.captured(fn, *args, reads=, writes=)``: one node running ``fn(*args)``."""
    t = stream.tracer()
    if not callable(fn):
        raise ArgumentError(f"captured() takes the function to capture first, then its "
                            f"arguments, not {type(fn).__name__}")
    refuse_misuse(stream, fn, args)
    _refuse_objects(fn, args)
    rec, accesses = record_args(t, args, lambda i: "rw", _device_only(fn))
    _refuse_held(t, fn, [b for b, _ in accesses])
    given = list(accesses)
    if opaque:   # what it reaches only refused where it is a temporary (rmod.T)
        _refuse_temporaries(t, fn, reached_named(fn, args)[0])
    reached, unseen = ([], None) if opaque else _reached(t, fn, args, accesses)
    if unseen is not None:   # globals()[k], getattr(mod, name): reads no code names
        opaque = True        # (what it reaches that is seen stays its: reads=[W])
    accesses = given + reached
    declared: dict[int, str] = {}
    for objs, mode, word in ((reads, "r", "reads"), (writes, "w", "writes")):
        for obj in _as_list(objs):
            buf = t.cached_buffer(obj) if is_array(obj) else None
            if buf is None and is_array(obj):   # a view made again that has no key (a
                made = as_buffer(obj)           # temporary's): the argument of its bytes
                buf = next((b for b, _ in accesses if b.same_view(made)), None)
            if buf is None or not any(b is buf for b, _ in accesses):
                raise ArgumentError(not_given(t, callable_name(fn), word, obj, buf,
                                               [b for b, _ in accesses]))
            old = declared.get(id(buf))
            declared[id(buf)] = mode if old in (None, mode) else "rw"
    refuse_conflicts(fn, given, declared)   # gt.In(x) and writes=[x]
    accesses = [(b, declared.get(id(b), m)) for b, m in accesses]   # the rest: "rw"
    if not opaque:   # libraries keep state of their own (a handle's workspace, a
        accesses.append((t.library_state(), "rw"))   # module's weights): in turn
    node = t.record(CAPTURED, fn, rec, tuple(accesses), stream=stream.index,
                    scope=stream.scope, opaque=opaque, source=source)
    if not reached:
        return place(stream, node)
    given_only = place(stream, replace(node, accesses=tuple(given)))
    node.device = given_only.device   # placed and captured by what it is given
    return node


def _refuse_objects(fn, args) -> None:
    """An error for an argument that is an object of the program's own holding an
    array or a number of the graph in its attributes (``Pair(x, y)``, a config
    holding ``lr``): the region reads them unseen, so it would be ordered with
    nothing that writes them and keep the first call's when a later call brings
    new ones. Lists, tuples and dicts are looked into as arguments are."""
    for i, a in enumerate(args):
        for obj in leaves(a):
            for what, v in _object_attributes(obj):
                x = next((x for x in leaves(v) if isinstance(x, Scalar) or
                          _is_array_quietly(x)), None)
                if x is None:
                    continue
                kind = "the number" if isinstance(x, Scalar) else "an array"
                raise ArgumentError(
                    f"argument {i} of captured region {callable_name(fn)} holds {kind} by its "
                    f"{what}: the region would read it unseen (ordered with nothing that writes it, "
                    "and kept as it is when a later call brings new arrays or numbers); pass "
                    "the arrays and numbers themselves to s.captured(...) as arguments (in a "
                    "list, tuple or dict if you like) and build the object inside the region")


def _reached(t, fn, args, given: list) -> tuple:
    """``(Buffer, "rw")`` for the device arrays of the graph that ``fn`` (or a
    helper it calls) reaches by a global name or holds (closure, a bound
    method's object: a library's scratch it writes, a table it reads), also
    through ``globals()``, ``sys.modules[__name__]``, a module or class it is
    handed or reaches and a numpy object array (``_region_reach``), and that no
    array it is given covers: the region is ordered with the nodes using them as
    with an argument (``reads=``/``writes=`` may name them). Second, why some of
    what it reads cannot be seen (``globals()[k]``), or None."""
    named, places, unseen = reached_named(fn, args)
    if places and t.regional is not None:   # keyed as names are (region_places.py)
        t.regional.note(places.entries)
    out, seen = [], [b for b, _ in given]
    _refuse_temporaries(t, fn, named)
    for _, v in named:
        for x in leaves(v):
            buf = _trace_buffer(t, x, make=True) if _is_array_quietly(x) else None
            if buf is None or buf.is_host or any(b is buf or b.covers(buf) for b in seen):
                continue
            seen.append(buf)
            out.append((buf, "rw"))
    return out, unseen


def _refuse_temporaries(t, fn, named: list) -> None:
    """An error for a temporary of this graph that region ``fn`` reaches (``named``:
    ``(label, value)``) through a module, class, object array or global
    (``rmod.T = s.empty(...)``): the region is captured apart from the trace, where
    the temporary is no memory; an argument is bound to the graph's memory."""
    for label, value in named:
        tmp = holder_of(value, t)
        if tmp is None:
            continue
        name = callable_name(fn)
        raise ArgumentError(
            f"captured region {name} reaches temporary {tmp._life.where()} of this graph "
            f"through {label}: a temporary is the graph's own memory, which exists only "
            "inside the traced function and which a module, class or global cannot hand "
            "the region; pass it to s.captured as an argument, which the region receives "
            f"as a parameter: s.captured({name.rsplit('.', 1)[-1]}, ..., "
            f"{temporary_label(tmp, tmp)})")


def _trace_buffer(t, x, make: bool = False) -> Buffer | None:
    """The trace's Buffer of array ``x``: cached, or where it lies in an array of
    the trace, that array (``make``: a Buffer of the view, made now); else None."""
    try:
        buf = t.cached_buffer(x)
        if buf is not None:
            return buf
        made = as_buffer(x)
        root = t.root_holding(made.lo) if made.hi > made.lo else None
        return None if root is None else t.buffer(x) if make else root
    except Exception:  # noqa: BLE001  (an object's own error: a tensor requiring grad)
        return None


def _refuse_held(t, fn, given: list) -> None:
    """A region that holds (closure, default or ``partial`` argument, a bound
    method's object) an argument's array, a view of one, a temporary or a number
    of this graph: a later call rebinds the graph without tracing again, and the
    region would be captured with the first call's array or a placeholder. Views
    it is also ``given`` (an optimizer keeping the parameters it is passed, an
    array held for its dtype) are left alone: the region receives them anew."""
    for name, v, held in _names_of(fn):
        if not held:
            continue   # globals: reach watches them
        tmp = holder_of(v, t)
        what = label = None
        if tmp is not None:
            what, label = f"temporary {tmp._life.where()}", temporary_label(v, tmp)
        for x in leaves(v) if what is None else ():
            if isinstance(x, Scalar):
                what, label = f"the number {x.name}", x.name
            elif is_array(x):
                buf = _of_an_argument(t, x)
                if buf is not None and not any(buf.same_view(b) for b in given):
                    what = label = buf.label or "x"
            if what is not None:
                break
        if what is not None:
            raise ArgumentError(
                f"captured region {callable_name(fn)} holds {what} of this graph by {name}: a "
                "later call with new arrays or numbers would still capture it with this "
                "one; pass it to s.captured as an argument, which the region receives as a "
                f"parameter: s.captured({callable_name(fn).rsplit('.', 1)[-1]}, ..., {label})")


def _of_an_argument(t, x) -> Buffer | None:
    """The Buffer of array ``x`` (or of the array of the trace it lies in) where it
    lies in an argument of the trace, or None."""
    buf = _trace_buffer(t, x)
    return buf if buf is not None and t.is_argument(buf) else None


def _device_only(fn):
    def check(i, buf):
        if buf.is_host:
            raise ArgumentError(
                f"argument {i} of captured region {callable_name(fn)} is host memory "
                f"({buf.label or 'array'}): a captured region works on device arrays; "
                "copy host data with s.copy before the region, or pass it as a device array")
    return check


# --- the GPU -------------------------------------------------------------------

class _Interface:
    """A view at a new address, for the library of the array traced there."""

    def __init__(self, b: Buffer):
        self.__cuda_array_interface__ = {
            "shape": b.shape, "typestr": b.dtype.str, "data": (b.ptr, False),
            "strides": b.strides, "version": 3}


def _library_array(b: Buffer, traced, default: str):
    """The array ``fn`` receives for recorded view ``traced`` now at ``b``: the traced
    object where it has not moved, else a view of the same library at the new
    address (a temporary's: of the library ``default``)."""
    if b.obj is not None:
        return b.obj
    lib = type(traced.obj).__module__.split(".")[0] if traced.obj is not None else default
    if lib == "cupy":
        return sys.modules["cupy"].asarray(_Interface(b))
    if lib == "torch":
        where = "cuda" if b.device is None else f"cuda:{b.device}"   # None: the current one
        return sys.modules["torch"].as_tensor(_Interface(b), device=where)
    if lib in ("numba", "numba_cuda"):
        from numba import cuda
        return cuda.as_cuda_array(_Interface(b))
    raise EmitError(f"a captured region cannot be handed a {type(traced.obj).__name__} at "
                    "a new address: pass cupy, torch or numba arrays to regions")


_capturing = threading.local()   # .streams: device -> stream handle, during a capture


def capture_stream(device: int) -> int:
    """The handle of the stream on which the region being captured records device
    ``device``'s work, for library calls that take a stream (NCCL's). Valid inside a
    region's function while the graph is built."""
    streams = getattr(_capturing, "streams", None)
    if streams is None:
        raise CaptureError("capture_stream() is for the function of a captured region, "
                           "while the graph is built")
    if device not in streams:
        raise CaptureError(f"this captured region runs on devices {sorted(streams)}, not "
                           f"{device}: pass it an array of device {device} too")
    return streams[device]


class _Region:
    """What a region keeps for the graph's life: its capture stream, on the first
    device it runs on, the streams of its other devices, and its pools."""

    def __init__(self, devices: tuple):
        from cuda.core import Device
        first = devices[0] if devices else Device().device_id
        with current(first):
            self.device = Device(first)
            self.stream = self.device.create_stream()
        self.others = Joined(first, devices[1:]) if len(devices) > 1 else None
        self.cupy_pool = self.torch_pool = None
        self.fft_plans: dict = {}   # device -> cupy's cuFFT plans its captures use
        self.latest = None   # the definition of the latest capture
        self.libraries = self.roots = None   # the libraries switched, the torch objects
        #                                      reached (_library_state): read at the first capture
        self.watched: list = []   # the state of those the latest capture depended on
        self.again_after = None   # captured again at a launch after this count of
        #                           launches (the capture made its first gradients)
        self.places = Places()   # where it reached arrays no argument shows (wmod.W
        #                          of a module handed to it): a new one, captured again

    def capture(self, gpu, node):
        """``node``'s function captured with the binding's values: a GraphDefinition.
        The streams of its other devices join the capture before the function runs
        and leave it after (one graph over all its devices)."""
        if self.libraries is None:
            self.libraries = libraries = _libraries(node)
            self.roots = torch_roots(node.target, [a for a in leaves(node.args) if not
                                                   isinstance(a, (Buffer, Scalar))]) \
                if "torch" in libraries else []
        libraries = self.libraries
        default = _temporaries_library(node, libraries)
        before = snapshot(self.roots)
        self.places = reached_values(node.target, node.args)[1]
        args = tree_map(lambda v: _library_array(gpu.value_of(v), v, default)
                        if isinstance(v, Buffer) else gpu.value_of(v), node.args)
        prepare = getattr(node.target, "before_capture", None)
        if prepare is not None:   # setup that cannot be captured (NCCL communicators)
            prepare()
        others = self.others
        with current(self.device.device_id):
            builder = self.stream.create_graph_builder()
            origin = int(builder.stream.handle)
            streams = {self.device.device_id: origin, **(others.streams if others else {})}
            with _Libraries(self, streams, libraries):
                builder.begin_building()
                _capturing.streams = streams
                try:
                    if others:
                        others.fork(origin)
                    result = node.target(*args)
                    if others:
                        others.join(origin)
                except Exception as e:
                    _abandon(builder, (lambda: others.join(origin)) if others else None)
                    raise _capture_error(node, e) from e
                finally:
                    _capturing.streams = None
                try:
                    builder.end_building()
                except Exception as e:
                    _abandon(builder, None)
                    raise _invalidated(node, e) from e
        self.latest = builder.graph_definition
        builder.close()
        changed = first_change(before, ours_only=True, given=[
            v for v in leaves(args) if isinstance(v, (int, float, np.number)) and
            not isinstance(v, (bool, np.bool_))])
        if changed is not None:
            raise CaptureError(
                f"captured region {callable_name(node.target)} changes {describe(changed)} "
                "from Python while it is captured: a replay runs only the GPU work captured, "
                "so later calls would not change it again as running the region does; keep "
                "that step outside the region, between calls (a scheduler's step(), a "
                "learning rate set), and make the state a library makes at its first use "
                "before the first call (one optimizer step run eagerly: a warm-up)",
                source=node.source)
        self.watched = snapshot(self.roots)
        # gradients it made (none before): the capture assigned them, which only a
        # first eager call does; the launch it was made for replays it, any later one
        # captures again (counted by the graph's launches: a capture made inside a
        # launch, for moved state, is replayed by that launch too)
        self.again_after = gpu.clock[0] if grown(before) else None
        _refuse_result(node, result, args, CaptureError)
        return self.latest


def _unnestable(definition) -> list:
    """The kinds of node in a captured graph that a child graph may not hold."""
    try:
        nodes = definition.nodes()
    except Exception:  # noqa: BLE001  (only the error's wording depends on it)
        return []
    return sorted({type(n).__name__ for n in nodes} & {
        "AllocNode", "FreeNode", "ConditionalNode", "IfNode", "IfElseNode", "SwitchNode",
        "WhileNode"})


def _abandon(builder, join) -> None:
    """End a capture that failed and free its builder. A call the capture forbids
    (a synchronise, ``.item()``) has invalidated it, so ending it and closing the
    builder report that again: the error already being raised says why."""
    for step in (join, builder.end_building, builder.close):
        if step is not None:
            try:
                step()
            except Exception:  # noqa: BLE001  (CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
                pass


def _invalidated(node, e: BaseException) -> CaptureError:
    """The error for a capture the driver ended as invalidated though the region's
    function returned: a library swallowed the failure of a call capture forbids."""
    return CaptureError(
        f"captured region {callable_name(node.target)} ran, but its capture was broken "
        f"({e}): something in it read device values on the host (.item(), float(x), a "
        "check a library makes, such as a GradScaler's or torch.linalg's), synchronised, "
        "or ran work on a stream outside the capture, or another thread used the GPU "
        "while the graph was built. Move host reads after the graph call or compute them "
        "on the device, and build the graph while no other thread launches work",
        source=node.source)


def _capture_error(node, e: BaseException) -> CaptureError:
    name = callable_name(node.target)
    if isinstance(e, GraphtraceError):
        why = e.message
    else:
        why = f"{type(e).__name__}: {e}"
    return CaptureError(
        f"captured region {name} (recorded at {format_source(node.source)}) could not be "
        f"captured into the graph ({why}){_library_hint(e)}. Everything in a region is "
        "recorded on a capturing stream, not run: it cannot read device values on the host (.get(), "
        ".item(), float(x), print), synchronise, upload host data, or call a library that "
        "refuses capture (cupy's matmul/dot through cuBLAS: use torch.matmul on the same "
        "memory, or a kernel). Move that call after the graph call, or compute it on the "
        "device", source=raised_in(e, node.source))


def _library_hint(e: BaseException) -> str:
    """What to do for a library call known to read the device on the host."""
    tb = e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.endswith("grad_scaler.py"):
            return ("; a GradScaler's step() and update() read on the host whether the "
                    "gradients are finite: keep the scaled backward in the region and call "
                    "scaler.step(opt) and scaler.update() after the graph call")
        tb = tb.tb_next
    return ""


def _refuse_result(node, result, args, error) -> None:
    """A region returns nothing, or only arrays it was given (what a library's
    ``out=`` returns): anything else it makes would be dropped by the graph."""
    given = [as_buffer(a) for a in leaves(args) if is_array(a)]
    for r in leaves(result):
        if r is None:
            continue
        if is_array(r):
            b = as_buffer(r)
            if any(g.device == b.device and g.lo <= b.lo and b.hi <= g.hi for g in given):
                continue
            what = f"a new array ({type(r).__name__} {b.dtype}{list(b.shape)})"
        else:
            what = f"a {type(r).__name__}"
        raise error(
            f"captured region {callable_name(node.target)} returned {what}, which the graph "
            "drops: a region's results are what it writes into the arrays it is given; "
            "write it into one (y[...] = np.tanh(x), or a library's out=: cupy.tanh(x, "
            "out=y)) and name that array in writes=", source=node.source)


def _shape(definition) -> tuple:
    """What a child graph update needs to stay the same: node kinds and edges."""
    nodes = definition.nodes()
    kinds = sorted(str(n.type) for n in nodes)
    edges = sorted((str(a.type), str(b.type)) for a, b in definition.edges())
    return tuple(kinds), tuple(edges)


class CapturedOp(Op):
    """A captured region: ``target`` the function, ``args`` its arguments as
    recorded. ``gpu.state`` keeps its ``_Region`` (capture stream, pools)."""

    kind = "captured"
    driver_update = exec_update = True

    def moved(self, gpu, node) -> bool:
        """Whether the torch state the latest capture depended on changed since
        (``model.weight = nn.Parameter(...)``, ``model.half()``, ``model.eval()``, a
        learning rate set: ``_library_state``): it is captured again."""
        region = gpu.state.get(node.index)
        if region is None:
            return False
        again = region.again_after
        if again is not None and gpu.clock[0] > again:   # a launch replayed the capture
            return True                                   # that made them
        places = getattr(region, "places", None)   # wmod.W = new_array: the region
        if places and places.moved():                # reads it through what it is handed
            return True
        return first_change(region.watched) is not None

    def describe(self, node, namer) -> str:
        return f"{callable_name(node.target)}({', '.join(namer.value(a) for a in node.args)})"

    def emit(self, gpu, node, parent):
        region = gpu.state.get(node.index)
        if region is None:
            device = node.device
            region = gpu.state[node.index] = _Region(
                () if device is None else device if isinstance(device, tuple) else (device,))
        definition = region.capture(gpu, node)
        watched = getattr(gpu, "watched", None)
        if watched is not None and (region.watched or region.again_after is not None or
                                    getattr(region, "places", None)):
            watched.append(node)   # Op.moved, asked at each launch
        try:
            return parent.embed(definition)
        except Exception as e:
            kinds = _unnestable(definition)
            if not kinds:
                raise
            raise CaptureError(
                f"captured region {callable_name(node.target)} was captured, but its graph "
                f"holds {' and '.join(kinds)} nodes, which CUDA does not allow in a child "
                f"graph ({type(e).__name__}: {e}): a library in it allocated or freed memory "
                "stream-ordered (cudaMallocAsync) or added device-side control flow while "
                "captured. Run that call outside the graph, between its calls",
                source=node.source) from e

    def update_definition(self, gpu, node) -> None:
        """Capture again with the binding's values; a capture of another shape (the
        library chose other kernels) needs the executable graph made anew."""
        child = gpu.definition_node(node)
        definition = gpu.state[node.index].capture(gpu, node)
        if _shape(definition) != _shape(child.child_graph):
            gpu.reshaped = True
        child.update(definition)

    def update(self, gpu, node) -> None:
        gpu.graph.set_child(gpu.handle(node), gpu.state[node.index].latest)

    # --- the simulator ---------------------------------------------------------
    def simulate(self, sim, node) -> None:
        """Run ``fn`` with numpy views; with ``sim.check``, prove its read-only
        arrays stay so."""
        kept = read_only_bytes(sim, node)
        args = device_views(sim.value(node.args))   # host reads refused as on a GPU
        try:
            result = node.target(*args)
        except HostRead as e:
            raise host_read_error(node, e) from None
        except GraphtraceError:
            raise
        except Exception as e:
            raise simulation_error(node, e) from e
        _refuse_result(node, plain_views(result), args, SimulationError)
        wrote = changed(sim, kept)
        if wrote is not None:
            raise self.intent_error(node, wrote)

    def intent_error(self, node, buf, detail: str = "") -> IntentError:
        return IntentError(
            f"captured region {callable_name(node.target)} wrote to {buf.label or 'an array'}"
            f"{detail}, which it was declared to only read: name it in writes= too",
            source=node.source)


CAPTURED = CapturedOp()

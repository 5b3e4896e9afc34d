"""Nodes on a GPU other than the graph's own: the driver path.

cuda.core's ``GraphDefinition`` adds every node in the current context and
takes no device: a device-1 kernel added through it runs in device 0's context
and faults. So in a graph whose work spans GPUs, the kernel, copy and memset
nodes of the other devices are added with ``cuGraphAddNode``
(``cuda.bindings.driver``) into the same ``CUgraph``, each naming its device's
primary context; the emitter wires every node by its handle, whoever added it. A graph on one device never
comes here (``for_graph`` returns None).

A kernel is loaded for the device it runs on: numba's and cuda.core's kernels
are ``CUkernel``s of a library, which the driver loads into the context the
node names; a cupy ``RawKernel`` is compiled and loaded by cupy for that device
(cupy keeps a module per device). Rebinding updates these nodes with
``cuGraphNodeSetParams`` (the definition) and ``cuGraphExecNodeSetParams`` (the
executable graph), with the same parameters as their emission, as
``ops/kernel.py`` and ``ops/memory.py`` update theirs.
"""
from __future__ import annotations

import sys
import weakref

from .._driver import call, current, driver, primary_context
from ..errors import EmitError, format_source

__all__ = ["for_graph", "Devices", "ON_DEVICE", "Joined"]

KINDS = ("kernel", "memcpy", "memset", "zeros")   # what the driver path adds


def for_graph(ir, home: int):
    """What ``GpuContext`` needs to emit ``ir`` on device ``home``: None when every
    node runs on ``home`` or is left to it (the usual case)."""
    if _all_home(ir, home):
        return None
    for device, kind, structured in _placed(ir):
        if _elsewhere(device, home) and (kind in KINDS or structured):
            return Devices(home)
    return None


def _elsewhere(device, home: int) -> bool:
    return isinstance(device, int) and device != home


def _all_home(ir, home: int) -> bool:
    """Whether every node of ``ir`` runs on ``home`` or is left to it, read from
    the devices its trace recorded (a set of them, not a walk node by node); False
    where that cannot say (no recording, regions, a device elsewhere)."""
    rec = ir.recording()
    if rec is None or any(n.regions or _elsewhere(n.device, home)   # placed since
                          for n in rec.early().values()):
        return False
    return not any(_elsewhere(d, home) for d in {e[8] for e in rec.entries})


def _placed(graph):
    """``(device, kind, whether it owns regions)`` of every node, regions' too,
    without making the Nodes of launches a trace recorded (``columns.Recording``)."""
    rec = graph.recording()
    if rec is None:
        for n in graph.walk():
            yield n.device, n.kind, bool(n.regions)
        return
    for pos, entry in enumerate(rec.entries):
        node = rec.made(pos)
        if node is None:   # a launch: its device is recorded with it
            yield entry[8], entry[0].kind, False
            continue
        yield node.device, node.kind, bool(node.regions)
        for region in node.regions:
            yield from _placed(region)


class Devices:
    """Which hooks emit and update each node of a graph over several GPUs built on
    device ``home``: its op's, or the driver path's."""

    def __init__(self, home: int):
        self.home = home

    def op(self, node):
        if not isinstance(node.device, int) or node.device == self.home:
            return node.op
        if node.kind in KINDS:
            return ON_DEVICE
        return REFUSED if node.regions else node.op


def _handle(obj, kind):
    """A cuda.core object's driver handle as a ``cuda.bindings`` object of ``kind``."""
    return kind(int(obj.handle))


class _OnDevice:
    """The hooks of a kernel, copy or memset node on another device (``Op``'s
    ``emit``/``update``/``update_definition``, through the driver)."""

    driver_update = True

    def emit(self, gpu, node, parent):
        """Add the node to ``parent`` (a ``GraphDefinition``) after its predecessors;
        its handle."""
        drv = driver()
        deps = gpu.take_preds()
        params, _keep = PARAMS[node.kind](gpu, node)
        return call(drv.cuGraphAddNode, gpu.kernel_nodes.graph_of(parent), deps, None,
                    len(deps), params)

    def update_definition(self, gpu, node) -> None:
        params, _keep = PARAMS[node.kind](gpu, node)
        call(driver().cuGraphNodeSetParams, gpu.handle(node), params)

    def update(self, gpu, node) -> None:
        drv = driver()
        params, _keep = PARAMS[node.kind](gpu, node)
        call(drv.cuGraphExecNodeSetParams, _handle(gpu.graph, drv.CUgraphExec),
             gpu.handle(node), params)


class _Refused:
    """A loop or branch placed on another device than the graph's."""

    def emit(self, gpu, node, parent):
        d, home = node.device, gpu.devices.home
        raise EmitError(
            f"the loop or branch at {format_source(node.source)} runs on device {d} (its "
            f"condition and body arrays are there), but the graph is built on device "
            f"{home}, the current one at its first call: CUDA runs a conditional in the "
            f"context that builds it; call the function with device {d} current "
            f"(cupy.cuda.Device({d}), cuda.core's Device({d}).set_current()), or keep the "
            f"loop's work on device {home}", source=node.source)


ON_DEVICE, REFUSED = _OnDevice(), _Refused()


# --- parameters per kind: (CUgraphNodeParams, what must live until the call) ---------

def _loaded(gpu, node):
    """``(handle, meta, owner)`` of the node's kernel on its device, once per node."""
    hit = gpu.state.get(node.index)
    if hit is None:
        drv, adapter = driver(), node.target
        kern, meta = adapter.compile(node.args)
        if adapter.library == "cupy":   # a CUfunction of the context cupy loaded it in
            with sys.modules["cupy"].cuda.Device(node.device):
                owner = adapter.kernel.kernel
            hit = (drv.CUfunction(owner.ptr), meta, owner)
        else:                           # a library's CUkernel: loaded per context
            hit = (_handle(kern, drv.CUkernel), meta, kern)
        gpu.state[node.index] = hit
    return hit


def _kernel(gpu, node):
    drv = driver()
    handle, meta, _ = _loaded(gpu, node)
    values = node.target.pack(meta, node.args, gpu.value_of)
    p = drv.CUgraphNodeParams()
    p.type = drv.CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL
    k = p.kernel
    k.gridDimX, k.gridDimY, k.gridDimZ = node.attrs["grid"]
    k.blockDimX, k.blockDimY, k.blockDimZ = node.attrs["block"]
    k.sharedMemBytes = node.attrs["shared_mem"]
    if isinstance(handle, drv.CUfunction):
        k.func = handle
    else:
        k.kern, k.ctx = handle, primary_context(node.device)
    k.kernelParams = gpu.kernel_nodes.arguments.fill(values)   # valid until the next fill
    return p, None


def _memcpy(gpu, node):
    drv = driver()
    p = drv.CUgraphNodeParams()
    p.type = drv.CUgraphNodeType.CU_GRAPH_NODE_TYPE_MEMCPY
    p.memcpy.copyCtx = primary_context(node.device)
    c = p.memcpy.copyParams
    for side, b in zip(("dst", "src"), node.args):
        b = gpu.value_of(b)
        if b.is_host:
            setattr(c, f"{side}MemoryType", drv.CUmemorytype.CU_MEMORYTYPE_HOST)
            setattr(c, f"{side}Host", b.ptr)
        else:
            setattr(c, f"{side}MemoryType", drv.CUmemorytype.CU_MEMORYTYPE_DEVICE)
            setattr(c, f"{side}Device", b.ptr)
    c.WidthInBytes, c.Height, c.Depth = node.attrs["nbytes"], 1, 1
    return p, None


def _memset(gpu, node):
    """From the op's own cuda.core parameters (memset and zeros alike)."""
    drv = driver()
    core = node.op.params(gpu, node)   # dst, value (a numpy word), width in words
    p = drv.CUgraphNodeParams()
    p.type = drv.CUgraphNodeType.CU_GRAPH_NODE_TYPE_MEMSET
    m = p.memset
    m.dst, m.value, m.elementSize = core["dst"], int(core["value"]), core["value"].itemsize
    m.width, m.height, m.pitch = core["width"], core.get("height", 1), core.get("pitch", 0)
    m.ctx = primary_context(node.device)
    return p, None


PARAMS = {"kernel": _kernel, "memcpy": _memcpy, "memset": _memset, "zeros": _memset}


# --- captured regions over several devices ----------------------------------------

class Joined:
    """Streams of a captured region's other devices, which join its capture.

    Stream capture spans devices when another device's stream waits on an event
    recorded on the capturing stream, and the capturing stream waits on events
    recorded on it before the capture ends (FACTS): the work issued between
    (an NCCL group call over all the GPUs) lands in one graph.
    """

    def __init__(self, first: int, devices: tuple):
        drv = driver()
        flags = drv.CUevent_flags.CU_EVENT_DISABLE_TIMING
        with current(first):
            self._forked = call(drv.cuEventCreate, flags)
        self._stream, self._event = {}, {}
        for d in devices:
            with current(d):   # a stream and an event of that device's context
                self._stream[d] = call(drv.cuStreamCreate,
                                       drv.CUstream_flags.CU_STREAM_NON_BLOCKING)
                self._event[d] = call(drv.cuEventCreate, flags)
        self.streams = {d: int(s) for d, s in self._stream.items()}
        weakref.finalize(self, _destroy, list(self._stream.values()),
                         [self._forked, *self._event.values()])

    def fork(self, origin: int) -> None:
        """The other streams start after what ``origin`` captured so far."""
        drv = driver()
        call(drv.cuEventRecord, self._forked, drv.CUstream(origin))
        for s in self._stream.values():
            call(drv.cuStreamWaitEvent, s, self._forked, 0)

    def join(self, origin: int) -> None:
        """``origin`` continues after everything the other streams captured."""
        drv = driver()
        for d, s in self._stream.items():
            call(drv.cuEventRecord, self._event[d], s)
            call(drv.cuStreamWaitEvent, drv.CUstream(origin), self._event[d], 0)


def _destroy(streams, events) -> None:
    drv = driver()
    for s in streams:
        drv.cuStreamDestroy(s)
    for e in events:
        drv.cuEventDestroy(e)

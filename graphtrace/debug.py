"""The intent check on the GPU: ``@graph(check_intents=True)``.

graphtrace orders nodes by what they are inferred or declared to read and
write; a kernel that writes an argument it was said to only read (a cupy
``const`` pointer written through a cast, a cuda.core kernel declared
``"in"``) races silently. The simulator catches that on the CPU, but only
for kernels it can run. This check runs the graph on the GPU one node at a
time, in recording order (a topological order), each node as a one-node
graph made by the same ops as the real one, with the stream synchronised
between nodes; around each node it copies the bytes the node only reads to
the host and raises ``IntentError`` if any changed.

``GRAPHTRACE_CHECK_INTENTS=1`` turns it on for every function without a
``check_intents=`` of its own. It is slow (a graph instantiation and two
copies per node per call): a debugging aid, not a mode to run in.
"""
from __future__ import annotations

import ctypes
import dataclasses
import functools
import os

import numpy as np

from . import _driver
from .binding import Binding
from .buffers import Buffer
from .errors import counted
from .emit import GpuContext, as_stream, instantiate
from .ops._devices import for_graph
from .ops._host_calls import raise_failed
from .temporary_memory import device_memory

__all__ = ["CheckedGraph", "checks_intents", "read_only_bytes", "guarded", "alone",
           "launch_alone", "read"]

_ON, _OFF = ("1", "true", "yes", "on"), ("", "0", "false", "no", "off")


def checks_intents(flag=None) -> bool:
    """``flag`` when given, else ``GRAPHTRACE_CHECK_INTENTS``."""
    if flag is not None:
        if not isinstance(flag, bool):
            raise TypeError(f"check_intents must be True, False or None, not {flag!r}")
        return flag
    value = os.environ.get("GRAPHTRACE_CHECK_INTENTS", "").strip().lower()
    if value not in _ON + _OFF:
        raise ValueError(f"GRAPHTRACE_CHECK_INTENTS must be 1 or 0, not {value!r}")
    return value in _ON


def _bytes_of(b: Buffer, lo: int, hi: int) -> np.ndarray:
    """Which bytes of ``[lo, hi)`` belong to the view ``b``, as a bool mask."""
    start, end = min(lo, b.lo), max(hi, b.hi)
    mask = np.zeros(end - start, bool)
    _as_elements(b, mask, start)[...] = True
    return mask[lo - start:hi - start]


def _as_elements(b: Buffer, hull: np.ndarray, start: int) -> np.ndarray:
    """``hull`` (one bool per byte from address ``start``) seen as ``b``'s
    elements, with a last axis over each element's bytes."""
    return np.ndarray(b.shape + (b.dtype.itemsize,), bool, hull, b.ptr - start,
                      b.strides + (1,))


def read_only_bytes(node, value_of) -> list:
    """``(recorded view, current view, mask over its hull)`` for each view the
    node only reads, masking out the bytes it also writes through another view."""
    written = [value_of(b) for b, m in node.accesses if "w" in m]
    out = []
    for b, m in node.accesses:
        v = value_of(b)
        if m != "r" or v.lo == v.hi:
            continue
        keep = _bytes_of(v, v.lo, v.hi)
        for w in written:
            if w.overlaps(v):
                keep &= ~_bytes_of(w, v.lo, v.hi)
        if keep.any():
            out.append((b, v, keep))
    return out


def guarded(node, value_of, read, run) -> None:
    """``run()`` the node; raise ``IntentError`` if it changed bytes it only reads.

    ``read(view)`` returns the bytes of the view's hull (a uint8 array); the
    node's work must be finished when ``run`` returns.
    """
    kept = [(b, v, keep, read(v)) for b, v, keep in read_only_bytes(node, value_of)]
    run()
    for b, v, keep, before in kept:
        changed = _as_elements(v, (read(v) != before) & keep, v.lo).any(-1)
        if changed.any():
            first = tuple(int(i) for i in np.argwhere(changed)[0])
            first = first[0] if len(first) == 1 else first
            total = int(_as_elements(v, keep, v.lo).any(-1).sum())
            raise node.op.intent_error(node, b, f": {int(changed.sum())} of its {total} "
                                               f"elements changed, the first at index {first}")


def read(v: Buffer) -> np.ndarray:
    """The bytes of the view's hull, copied to the host (synchronously)."""
    n = v.hi - v.lo
    if v.is_host:
        return np.frombuffer((ctypes.c_uint8 * n).from_address(v.lo), np.uint8).copy()
    out = np.empty(n, np.uint8)
    drv = _driver.driver()
    (err,) = drv.cuMemcpyDtoH(out.ctypes.data, v.lo, n)
    if err != drv.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuMemcpyDtoH of {v.label or 'an array'} failed: {err.name}")
    return out


def alone(node, value_of, ir, devices=None) -> tuple:
    """``(GpuContext, executable graph)`` of ``node`` as a one-node graph of its own,
    made by the same ops as the real one; it is emitted without its predecessors
    (a structured node's emit waits for those it is given). ``devices``: the
    graph's ``ops/_devices.py`` hooks when it spans GPUs."""
    gpu = GpuContext(value_of)
    gpu.devices = devices
    gpu.emit_node(dataclasses.replace(node, deps=[]), [])
    return gpu, instantiate(gpu.definition, ir, node.source)


def launch_alone(gpu, graph, stream) -> None:
    """Launch a graph made by ``alone`` on ``stream``."""
    graph.launch(stream)
    gpu.clock[0] += 1   # host callbacks take the binding of their launch by it


class CheckedGraph(Binding):
    """A recorded graph run on the GPU node by node, checking read-only arguments.

    Same interface as ``CompiledGraph``; ``launch`` returns once the graph has
    run. Rebinding only changes the values its nodes are emitted with.
    """

    def __init__(self, ir, arrays, scalars, device=None):
        from cuda.core import Device
        self.device = Device(device) if device is not None else Device()
        self._device_id = self.device.device_id
        self._devices = for_graph(ir, self._device_id)
        super().__init__(ir, arrays, scalars)

    def allocate(self, nbytes: int, device=None) -> int:
        from cuda.core import Device
        block, base = device_memory(nbytes, self.device if device is None else Device(device))
        self._scratch = [*getattr(self, "_scratch", []), block]
        return base

    def rebind(self, objs, ptrs, svals, route=None) -> int:
        self.refuse_numbers(svals)
        return len(self.bind(objs, ptrs, svals))

    def launch(self, stream=None) -> None:
        from cuda.core import Device
        dev = Device(self._device_id)
        dev.set_current()
        s = as_stream(stream, dev)
        s.sync()   # the stream's earlier work may write what the first nodes read
        for node in self.ir.nodes:
            guarded(node, self.value_of, read, functools.partial(self._run, node, s))

    def _run(self, node, stream) -> None:
        gpu, graph = alone(node, self.value_of, self.ir, self._devices)
        launch_alone(gpu, graph, stream)
        stream.sync()
        if gpu.failed:   # a host callback raised: in this call, as on the simulator
            raise_failed(gpu.failed, self.ir.name)

    def wait(self) -> None:
        """Launches finish before ``launch`` returns."""

    def __repr__(self):
        return f"<graphtrace.CheckedGraph {self.ir.name}: {counted(len(self.ir.nodes), 'node')} " \
               f"on {self.device}>"

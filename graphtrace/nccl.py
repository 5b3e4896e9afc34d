"""Collectives as graph nodes: NCCL all-reduce, broadcast and all-gather.

Each call records one captured region (``s.captured``) that makes the NCCL
calls: when the graph is built they are captured into it, ordered after what
writes the arrays they read and before what reads the arrays they write, as
any node. Two ways to run them:

- **One process, every GPU of the host**: ``comms`` is a list of cupy
  ``NcclCommunicator`` (``NcclCommunicator.initAll(n)``), one per device, or
  None, and graphtrace makes them for the arrays' devices (once per set of
  devices); ``sendbufs``/``recvbufs`` are lists, one array per device in the
  order of ``comms``. The calls form one NCCL group, captured over all the
  devices into one node::

      gt.nccl.all_reduce(s, comms, grads, grads, op="sum")    # in place

- **One process per GPU** (torchrun, mpirun): ``comms`` is this process's
  communicator, a cupy ``NcclCommunicator`` or a ``torch.distributed``
  process group, and ``sendbufs``/``recvbufs`` this rank's arrays. Every rank
  builds and launches the same graph (a launch of it is collective).

``recvbufs=None`` works in place. On the simulator a collective computes its
result with numpy over the arrays this process gives it (several simulated
devices: ``gt.sim_device``), so CPU tests check results; a process per GPU is
simulated as a world of one.
"""
from __future__ import annotations

import sys

import numpy as np

from .arrays import is_array
from .errors import ArgumentError, SimulationError
from .ops.captured import capture_stream
from .placement import device_of
from .scalar import Scalar
from .temporary import is_virtual

__all__ = ["all_reduce", "broadcast", "all_gather"]

OPS = ("sum", "prod", "max", "min", "avg")
_NCCL_TYPES = {"int8": "INT8", "uint8": "UINT8", "int32": "INT32", "uint32": "UINT32",
               "int64": "INT64", "uint64": "UINT64", "float16": "FLOAT16",
               "float32": "FLOAT32", "float64": "FLOAT64"}
_TORCH_OPS = {"sum": "SUM", "prod": "PRODUCT", "max": "MAX", "min": "MIN", "avg": "AVG"}
_made: dict[tuple, list] = {}   # devices -> the communicators graphtrace made for them


def all_reduce(s, comms, sendbufs, recvbufs=None, op: str = "sum"):
    """``recvbufs[i] = op(sendbufs[0], sendbufs[1], ...)`` elementwise, on every rank."""
    if op not in OPS:
        raise ArgumentError(f"all_reduce op must be one of {', '.join(OPS)}, not {op!r}")
    return _record(s, "all_reduce", comms, sendbufs, recvbufs, op=op)


def broadcast(s, comms, sendbufs, recvbufs=None, root: int = 0):
    """``recvbufs[i] = sendbufs[root]`` on every rank (``root``: a rank, the index in
    ``comms`` for a list)."""
    return _record(s, "broadcast", comms, sendbufs, recvbufs, root=root)


def all_gather(s, comms, sendbufs, recvbufs):
    """``recvbufs[i]`` = the ranks' ``sendbufs`` one after another, on every rank."""
    if recvbufs is None:
        raise ArgumentError("all_gather needs recvbufs, each as large as all the sendbufs "
                            "together")
    return _record(s, "all_gather", comms, sendbufs, recvbufs)


def _arrays(value, what: str) -> list:
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if not items or not all(is_array(a) for a in items):
        raise ArgumentError(f"{what} must be a device array or a list of them (one per "
                            "device)")
    return items


def _torch_group(comms) -> bool:
    return type(comms).__module__.startswith("torch")


def _record(s, kind, comms, sendbufs, recvbufs, op=None, root=0):
    sends = _arrays(sendbufs, "sendbufs")
    recvs = sends if recvbufs is None else _arrays(recvbufs, "recvbufs")
    t = s.tracer()
    send_b, recv_b = [t.buffer(a) for a in sends], [t.buffer(a) for a in recvs]
    grouped = comms is None or isinstance(comms, (list, tuple))
    if len(recvs) != len(sends) or grouped and comms is not None and len(comms) != len(sends):
        raise ArgumentError(f"{kind} takes one send and one receive array per communicator: "
                            f"{len(sends)} sendbufs, {len(recvs)} recvbufs"
                            + (f", {len(comms)} comms" if grouped and comms else ""))
    if not grouped and len(sends) != 1:
        raise ArgumentError(f"{kind} with one communicator (a process per GPU) takes this "
                            "rank's arrays, one send and one receive array")
    world = len(sends) if grouped else _world(comms)
    _check(kind, send_b, recv_b, world)
    _check_devices(kind, comms, send_b, recv_b, grouped)
    if isinstance(root, Scalar):
        raise ArgumentError(f"broadcast's root, {root!r}, is a dynamic scalar, which a later call "
                            "may change, but the root is fixed when the graph is built: name "
                            "its parameter in static= (@gt.graph(static=(\"root\",)))")
    if isinstance(root, (bool, np.bool_)) or not isinstance(root, (int, np.integer)) or \
            not 0 <= root < world:
        raise ArgumentError(f"broadcast root must be a rank below {world} (an int), "
                            f"not {root!r}")
    root = int(root)
    fn = _Collective(kind, comms, op, root, world, send_b, grouped)
    in_place = all(a is b for a, b in zip(sends, recvs))
    return s.captured(fn, *sends, *([] if in_place else recvs), reads=sends, writes=recvs)


def _world(comms) -> int:
    if _torch_group(comms):
        return sys.modules["torch"].distributed.get_world_size(comms)
    return comms.size()


def _check(kind, sends, recvs, world) -> None:
    """The arrays NCCL can take: device memory, one dtype NCCL knows, contiguous, sizes
    that fit the collective."""
    dtype = sends[0].dtype
    if dtype.name not in _NCCL_TYPES:
        raise ArgumentError(f"NCCL cannot reduce or move {dtype} arrays: use one of "
                            f"{', '.join(_NCCL_TYPES)}")
    for b in sends + recvs:
        if b.is_host:
            raise ArgumentError(f"{kind} of {b.label or 'an array'}: NCCL moves device "
                                "memory, not host memory")
        if b.dtype != dtype or not b.c_contiguous:
            raise ArgumentError(f"{kind} of {b.label or 'an array'} ({b.dtype}, strides "
                                f"{b.strides}): every array must be C-contiguous {dtype}")
    n = sends[0].nbytes
    for s_, r in zip(sends, recvs):
        want = n * world if kind == "all_gather" else n
        if s_.nbytes != n or r.nbytes != want:
            raise ArgumentError(
                f"{kind} of {s_.label or 'an array'} ({s_.nbytes} bytes) into "
                f"{r.label or 'an array'} ({r.nbytes} bytes): every send "
                f"array must be {n} bytes (as the first) and every receive array {want} bytes"
                + (f" (the {world} ranks' send arrays together)" if kind == "all_gather" else ""))


def _check_devices(kind, comms, sends, recvs, grouped, source=None) -> None:
    """Each rank's arrays on one device, its communicator's; one device per rank of a
    group. A temporary not placed yet (device None) is checked once placed, by
    ``_Collective.after_placement``."""
    devices = [device_of(b) for b in sends]
    for s_, r, d in zip(sends, recvs, devices):
        if None not in (d, device_of(r)) and d != device_of(r):
            raise ArgumentError(f"{kind}: {s_.label} is on device {d} but its receive "
                                f"array {r.label} on device {device_of(r)}: give each rank's "
                                "arrays on its device", source=source)
    known = [d for d in devices if d is not None]
    if grouped and len(set(known)) != len(known):
        raise ArgumentError(f"{kind} over one process's GPUs takes one array per device, but "
                            f"devices {devices} repeat: NCCL runs one rank per device",
                            source=source)
    for comm, b, d in zip(comms if grouped and comms else [], sends, devices):
        if d is not None and hasattr(comm, "device_id") and comm.device_id() != d:
            raise ArgumentError(f"{kind}: the communicator for {b.label} is on device "
                                f"{comm.device_id()} but the array on device {d}: "
                                "order the arrays as the communicators", source=source)


class _Collective:
    """The function of a collective's region: NCCL's calls on the GPU, numpy on the
    simulator (where it receives numpy arrays)."""

    def __init__(self, kind, comms, op, root, world, sends, grouped):
        self.kind, self.comms, self.op, self.root, self.world = kind, comms, op, root, world
        self.n, self.grouped = len(sends), grouped
        self.devices = tuple(device_of(b) for b in sends)   # None: see after_placement
        self.count, self.dtype = sends[0].nbytes // sends[0].dtype.itemsize, sends[0].dtype
        self.__qualname__ = self.__name__ = f"nccl.{kind}" + (f"[{op}]" if op else "")

    def __call__(self, *arrays):
        sends, recvs = arrays[:self.n], arrays[self.n:] or arrays[:self.n]   # or in place
        if all(isinstance(a, np.ndarray) for a in arrays):
            return self._simulate(sends, recvs)
        if self.comms is not None and _torch_group(self.comms):
            return self._torch(sends[0], recvs[0])
        return self._cupy(sends, recvs)

    def place_temporaries(self, node) -> bool:
        """A temporary no kernel placed goes on the device of its rank's other array
        (a rank's send and receive arrays share its device); whether one was placed."""
        sends = node.args[:self.n]
        placed = False
        for pair in zip(sends, node.args[self.n:] or sends):
            for a, b in (pair, pair[::-1]):
                if is_virtual(a) and a.base.device is None and device_of(b) is not None:
                    a.base.device, placed = device_of(b), True
        return placed

    def after_placement(self, node) -> None:
        """The devices of temporaries placed once the trace is over (by the kernels
        using them, ``placement.finish``), checked as the others were when recorded."""
        sends = node.args[:self.n]
        recvs = node.args[self.n:] or sends
        unplaced = next((b for b in sends + recvs if device_of(b) is None), None)
        if self.grouped and self.n > 1 and unplaced is not None:
            raise ArgumentError(
                f"{self.kind} over one process's GPUs is given {unplaced.label}, a temporary "
                "that no kernel places on a device, nor its rank's other array: make it on "
                "its rank's device, with s.on(d).empty(...)", source=node.source)
        _check_devices(self.kind, self.comms, sends, recvs, self.grouped, node.source)
        self.devices = tuple(device_of(b) for b in sends)

    def before_capture(self) -> None:
        """Communicators are made outside the capture (NCCL's setup cannot be captured)."""
        if self.comms is None and self.devices not in _made:
            from cupy.cuda import nccl
            if not nccl.available:
                raise RuntimeError("cupy finds no NCCL library (pip install nvidia-nccl-cu13), "
                                   "which gt.nccl uses to make communicators; or pass your "
                                   "own (a torch process group)")
            _made[self.devices] = nccl.NcclCommunicator.initAll(list(self.devices))

    # --- the GPU -------------------------------------------------------------------
    def _cupy(self, sends, recvs):
        from cupy.cuda import nccl
        comms = _made[self.devices] if self.comms is None else \
            self.comms if isinstance(self.comms, (list, tuple)) else [self.comms]
        dtype, count = getattr(nccl, "NCCL_" + _NCCL_TYPES[self.dtype.name]), self.count
        nccl.groupStart()
        try:
            for comm, a, b in zip(comms, sends, recvs):
                src, dst = _ptr(a), _ptr(b)
                stream = capture_stream(comm.device_id())
                if self.kind == "all_reduce":
                    op = getattr(nccl, "NCCL_" + self.op.upper())
                    comm.allReduce(src, dst, count, dtype, op, stream)
                elif self.kind == "broadcast":
                    comm.broadcast(src, dst, count, dtype, self.root, stream)
                else:
                    comm.allGather(src, dst, count, dtype, stream)
        finally:
            nccl.groupEnd()

    def _torch(self, send, recv):
        torch = sys.modules["torch"]
        dist, group = torch.distributed, self.comms
        device = torch.device("cuda", self.devices[0])
        send, recv = _tensor(torch, send, device), _tensor(torch, recv, device)
        stream = torch.cuda.ExternalStream(capture_stream(self.devices[0]), device=device)
        with torch.cuda.stream(stream):
            if self.kind == "all_gather":
                dist.all_gather_into_tensor(recv.view(-1), send.view(-1), group=group)
                return
            if recv.data_ptr() != send.data_ptr():
                recv.copy_(send)
            if self.kind == "all_reduce":
                dist.all_reduce(recv, op=getattr(dist.ReduceOp, _TORCH_OPS[self.op]),
                                group=group)
            else:
                dist.broadcast(recv, src=dist.get_global_rank(group, self.root), group=group)

    # --- the simulator ---------------------------------------------------------------
    def _simulate(self, sends, recvs):
        if self.world != len(sends):
            raise SimulationError(
                f"{self.__name__} over {self.world} processes: the simulator runs this "
                "process alone; simulate one process over several devices (a list of "
                "arrays tagged with gt.sim_device)", source=None)
        flat = np.stack([np.ravel(a) for a in sends])
        dtype = flat.dtype
        if self.kind == "all_reduce":
            if self.op in ("sum", "avg"):
                out = flat.sum(axis=0, dtype=dtype)
                if self.op == "avg":
                    out = (out / len(sends)).astype(dtype)
            else:
                out = {"prod": np.prod, "max": np.max, "min": np.min}[self.op](flat, axis=0)
        elif self.kind == "broadcast":
            out = flat[self.root]
        else:
            out = flat.reshape(-1)
        for r in recvs:
            r[...] = out.reshape(r.shape)


def _ptr(a) -> int:
    data_ptr = getattr(a, "data_ptr", None)   # torch (its interface refuses grad tensors)
    return data_ptr() if callable(data_ptr) else a.__cuda_array_interface__["data"][0]


def _tensor(torch, a, device):
    """A torch tensor over ``a``'s memory (no copy)."""
    return a if isinstance(a, torch.Tensor) else torch.as_tensor(a, device=device)

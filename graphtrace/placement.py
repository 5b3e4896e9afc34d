"""Which GPU each node runs on: placement while tracing.

A node runs on the device that holds its arrays. A proxy stream may name a
device instead (``s.on(1)``, ``s.fork(device=1)``, ``s.launch(..., device=1)``),
for work whose arrays do not say (a kernel given only numbers) and for the
graph-owned temporaries it makes. The rules, per kind of node:

- a kernel or a memset runs where all its arrays are: arrays of two devices
  in one launch are an error at the user's line (a kernel runs on one device;
  move data between devices with ``s.copy``, a peer copy node);
- a copy runs on its destination's device (its source's when the destination
  is host memory), or on the stream's; it may join two devices;
- a captured region runs on the devices of its arrays (an NCCL group call
  over several GPUs), the stream's device first;
- a loop or branch runs on the one device of its condition and bodies.

A temporary made on a stream that names a device lives there; one made on
any other stream lives where the kernels and memsets that use it run (else
where a collective given it puts it: its rank's device), which ``finish``
settles once the trace is over (with the nodes that only touched such
temporaries). Devices are compared by number: addresses are unique
across the GPUs of a process (unified addressing), so dependencies are
inferred across devices exactly as on one. ``Node.device`` None means the
device the graph is built on; the listing shows devices only when a graph
spans several.
"""
from __future__ import annotations

import numpy as np

from .buffers import HOST, Buffer
from .errors import ArgumentError, TraceError
from .scalar import Scalar
from .temporary import VIRTUAL_BASE, is_virtual
from .tree import leaves

__all__ = ["place", "device_bit", "ONE_DEVICE", "finish", "check_device", "device_name",
           "device_of"]

_ONE = ("kernel", "memset", "zeros")   # run where all their arrays are


def device_name(device) -> str:
    """``@cuda:1``, or ``@cuda:0,1`` for a node over several devices."""
    ids = device if isinstance(device, tuple) else (device,)
    return "@cuda:" + ",".join(map(str, ids))


def check_device(device) -> int | None:
    """A device as given to ``s.on``/``fork``/``launch``: a GPU's ordinal (an int, or a
    cuda.core ``Device``)."""
    if device is None:
        return None
    if isinstance(device, Scalar):
        raise ArgumentError(
            f"the device {device.name!r} is a number of the call, dynamic: later calls may "
            "change it, but a node's device is fixed when the graph is built; pass its "
            f"parameter in @graph(static=({device.param!r},)) to trace a graph per device")
    device = getattr(device, "device_id", device)
    if isinstance(device, bool) or not isinstance(device, (int, np.integer)) or device < 0:
        raise ArgumentError(f"a device is a GPU's ordinal, a non-negative int, not {device!r}")
    return int(device)


def device_of(b):
    """The device of a view: None for host memory and for a temporary not yet placed."""
    if is_virtual(b):
        return b.base.device
    return None if b.is_host else b.device


def _devices(node) -> list:
    """The devices of a node's arrays, in order of first use (run for every node)."""
    out = []
    for b, _ in node.accesses:
        d = b.base.device if b.lo >= VIRTUAL_BASE else b.device
        if d is not None and d != HOST and d not in out:
            out.append(d)
    return out


def _what(node) -> str:
    if node.kind == "kernel":
        return f"kernel {node.target.name}"
    return f"{node.kind} of {node.args[0].label or 'an array'}"


def _where(node, device) -> str:
    """Which arrays of ``node`` are on ``device``."""
    names = [b.label or "an array" for b, _ in node.accesses if device_of(b) == device]
    return f"{', '.join(dict.fromkeys(names))} on device {device}"


def _decide(node, explicit, source=None):
    """The device of ``node`` by the rules above (raises for a mixed launch, naming
    ``source``, else the user's line now)."""
    found = _devices(node)
    if node.kind in _ONE:
        others = [d for d in found if d != explicit] if explicit is not None else found[1:]
        if others:
            said = f"is placed on device {explicit} but is given" if explicit is not None \
                else f"is given {_where(node, found[0])} and"
            raise ArgumentError(
                f"{_what(node)} {said} {_where(node, others[0])}: a kernel, memset or "
                "zeros node runs on one device and touches that device's memory; copy the "
                "data over first (s.copy(dst, src) between devices is a peer copy node) "
                "and pass arrays of one device", source=source)
        return explicit if explicit is not None else (found[0] if found else None)
    if node.kind == "memcpy":
        if explicit is not None:
            return explicit
        if any(is_virtual(b) and b.base.device is None for b in node.args):
            return None   # decided with its temporary's device, by finish
        dst, src = (device_of(b) for b in node.args)
        return dst if dst is not None else src
    if node.kind == "captured":
        if explicit is not None:
            found = [explicit] + [d for d in found if d != explicit]
        return None if not found else found[0] if len(found) == 1 else tuple(found)
    return None


def place(stream, node):
    """Set ``node.device`` for work just recorded on ``stream``; returns the node."""
    node.device = _decide(node, stream.target_device)
    return node


def device_bit(b) -> int:
    """Where a view says a node using it runs, as a bit (what ``_devices`` reads): 1
    for host memory, ``2 << d`` for device d, 0 for a temporary not yet placed. The
    tracer keeps it per array, and places a launch from the bits of its arrays
    (``ONE_DEVICE``) without making its Node."""
    d = b.base.device if b.lo >= VIRTUAL_BASE else b.device
    return 0 if d is None else 1 if d == HOST else 2 << d


# The device bits of a kernel's arrays (and stream) -> where it runs, when they name
# one device or none (None: see finish); other bits go to ``place`` on its Node.
ONE_DEVICE = {0: None} | {2 << d: d for d in range(64)}


def finish(graph, temporaries) -> None:
    """Settle what only the whole trace tells: the device of each temporary made
    on a stream that names none (that of the kernels and memsets using it), and
    then of the nodes that touched only such temporaries.

    ``temporaries`` are ``(Temporary, root Buffer)`` of the trace. A structured
    node's bodies run on one device (CUDA runs a conditional's body in the
    context it was built in): the node takes that device.
    """
    unplaced = {id(root): (tmp, root) for tmp, root in temporaries if root.device is None}
    if not unplaced:
        _structured(graph)
        return
    users: dict[int, dict] = {}
    for n in graph.walk():
        if n.kind in _ONE and n.device is not None:
            for b, _ in n.accesses:
                if id(b.base) in unplaced:
                    users.setdefault(id(b.base), {}).setdefault(n.device, n)
    for key, (tmp, root) in unplaced.items():
        where = users.get(key, {})
        if len(where) > 1:
            (d0, n0), (d1, n1) = list(where.items())[:2]
            raise TraceError(
                f"temporary {tmp._life.where()} is used on device {d0} (line "
                f"{n0.source[1]}) and on device {d1} (line {n1.source[1]}): a temporary "
                "lives on one device; make one per device with s.on(d).empty(...)",
                source=n1.source)
        root.device = next(iter(where), None)
    _by_regions(graph, unplaced)
    for n in graph.walk():
        if any(id(b.base) in unplaced for b, _ in n.accesses):
            _settle(n)
    _structured(graph)


def _by_regions(graph, unplaced) -> None:
    """Temporaries no kernel placed that a captured region places itself, with a
    ``place_temporaries(node)`` of its own (a collective: each on the device of its
    rank's other array), until none places more."""
    regions = [n for n in graph.walk() if n.kind == "captured"
               and hasattr(type(n.target), "place_temporaries")
               and any(id(b.base) in unplaced for b, _ in n.accesses)]
    while any([n.target.place_temporaries(n) for n in regions]):
        pass


def _settle(node) -> None:
    """Place ``node``, which touched temporaries placed only now. A captured region
    runs on the devices it had and those of the temporaries it is given; its function
    checks them with an ``after_placement(node)`` of its own (a collective's)."""
    if node.kind != "captured":
        if node.device is None:
            node.device = _decide(node, None, node.source)
        return
    had = _ids(node.device)
    given = [device_of(b) for b in leaves(node.args) if isinstance(b, Buffer)]
    found = had + tuple(dict.fromkeys(d for d in given if d is not None and d not in had))
    node.device = None if not found else found[0] if len(found) == 1 else found
    check = getattr(type(node.target), "after_placement", None)   # (not the object's own
    if check is not None:                                         # lookup, which may raise)
        check(node.target, node)


def _ids(device) -> tuple:
    return () if device is None else device if isinstance(device, tuple) else (device,)


def _structured(graph) -> None:
    """A conditional node runs on the one device of its condition and bodies."""
    for n in graph.structured():
        for region in n.regions:
            _structured(region)
        if not getattr(n.op, "conditional", False):
            continue
        work = [(m, d) for r in n.regions for m in r.walk() for d in _ids(m.device)]
        work[:0] = [(n, device_of(b)) for b in n.args   # the condition's array and the
                    if isinstance(b, Buffer) and device_of(b) is not None]   # one it compares with
        found = list(dict.fromkeys(d for _, d in work))
        if len(found) > 1:
            node = next(m for m, d in work if d == found[1])
            compared = " (its condition compares arrays of both: copy one to the other's " \
                "device first)" if node is n else ""
            raise TraceError(
                f"the loop or branch at line {n.source[1]} holds work on devices {found[0]} "
                f"and {found[1]}{compared}: CUDA runs a conditional's condition and bodies "
                "on one device; issue the other device's work outside the loop or branch",
                source=node.source)
        n.device = found[0] if found else None

"""Copies and memsets.

``s.copy(dst, src)`` is a memcpy node between two views of the same shape
and dtype: device to device, or between device and pinned host memory.
``s.memset(dst, value)`` fills a device view with one value; the value is
converted to ``dst``'s dtype and repeated as a 1-, 2- or 4-byte pattern, or,
for an element of 8 or more bytes whose value is no such pattern (a float64's
1.0, any number a later call may pass), written a word at a time: one memset
node per 4-byte word of an element, each a 2-D fill of rows one word wide and
an element apart (``memset_words``).
``s.zeros(...)`` records a ``zeros`` node: its temporary's bytes set to zero.
"""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from ..arrays import is_array
from ..buffers import Buffer, _Intent
from ..errors import ArgumentError, PageableMemoryError, ShapeMismatchError, user_frame
from ..placement import place
from ..scalar import Scalar, has_fraction
from .base import Op

__all__ = ["record_copy", "record_memset", "record_zeros", "memset_pattern", "MEMCPY",
           "MEMSET", "ZEROS"]

_WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32}   # memset element size -> its word


def _describe_buf(b: Buffer) -> str:
    return f"{b.dtype}{list(b.shape)}" + (" on the host" if b.is_host else "")


def _contiguous(b: Buffer, role: str, op: str):
    """Refuse a view whose bytes are no one gapless run: a copy or memset node
    moves or fills the bytes from its lowest address on (any order of the axes
    is fine: C, Fortran, reversed)."""
    if not b.contiguous:
        size = b.dtype.itemsize
        span = size + sum((n - 1) * abs(st) for n, st in zip(b.shape, b.strides) if n > 0)
        what = "share bytes (a broadcast or overlapping view)" \
            if span < size * int(np.prod(b.shape)) else "leave gaps between them"
        raise ArgumentError(
            f"{op} {role} {b.label or 'array'} is not contiguous ({_describe_buf(b)}, "
            f"strides {b.strides}): its elements {what}, which a "
            f"{op} node cannot {'skip' if what.startswith('leave') else 'do'}; "
            f"{op} a contiguous view, or "
            f"{'move' if op == 'copy' else 'fill'} the data with a kernel")


def _laid_out(b: Buffer) -> tuple:
    """Where each element of ``b`` lies relative to its first byte: its strides
    along the axes of more than one element."""
    return tuple(s for n, s in zip(b.shape, b.strides) if n != 1)


def _same_layout(d: Buffer, s: Buffer):
    """Refuse a copy between views of one shape whose elements lie in another
    order (a C-ordered one into a Fortran-ordered one): a byte copy would
    transpose them."""
    if d.nbytes and _laid_out(d) != _laid_out(s):
        raise ArgumentError(
            f"copy from {s.label or 'src'} (strides {s.strides}) into {d.label or 'dst'} "
            f"(strides {d.strides}): their elements lie in another order, and a copy "
            "node moves bytes as they lie; copy views of one layout (both C-ordered "
            "or both Fortran-ordered), or move the data with a kernel")


def _writable(b: Buffer, op: str):
    if b.readonly:
        raise ArgumentError(f"{op} destination {b.label or 'array'} is read-only (its "
                            "array interface says so): pass a writable array")


def _refuse_values(op: str, **sides) -> None:
    """Refuse a side of ``s.copy``/``s.memset`` given a number, None or a container
    where an array goes, naming it (a dynamic number shows as graphtrace's
    ``Scalar``, which the user never wrote)."""
    for side, v in sides.items():
        if is_array(v):
            continue
        if isinstance(v, _Intent):
            name = type(v).__name__
            raise ArgumentError(
                f"s.{op}'s {side} is wrapped in gt.{name}(...), which tells a kernel "
                f"launch what it does with an array: s.{op} knows what it reads and "
                "writes; pass the array itself")
        what = "a number" if isinstance(v, (Scalar, numbers.Number)) else \
            "None" if v is None else f"a {type(v).__name__}"
        fill = " (to fill an array with a number: s.memset(dst, value))" \
            if op == "copy" and what == "a number" else ""
        raise ArgumentError(f"s.{op}'s {side} is {what}, not an array: s.{op} takes "
                            f"{'two arrays' if op == 'copy' else 'an array and a value'}"
                            f"{fill}")


def record_copy(stream, dst, src):
    """Record a copy of ``src`` into ``dst`` on a proxy stream (``Stream.copy``)."""
    t = stream.tracer()
    try:
        d, s = t.buffer(dst), t.buffer(src)
    except ArgumentError:
        _refuse_values("copy", dst=dst, src=src)
        raise
    if d.dtype != s.dtype:   # .view(dtype) would reinterpret the bytes: no advice
        raise ShapeMismatchError(
            f"copy from {s.label or 'src'} ({_describe_buf(s)}) into {d.label or 'dst'} "
            f"({_describe_buf(d)}): a copy moves bytes and converts no values, so both "
            f"sides must hold one dtype; convert {s.dtype} into {d.dtype} with a kernel")
    if d.shape != s.shape:
        raise ShapeMismatchError(
            f"copy from {s.label or 'src'} ({_describe_buf(s)}) into {d.label or 'dst'} "
            f"({_describe_buf(d)}): shapes must match; copy matching views (slice one "
            "side, or reshape it)")
    for b, role in ((d, "destination"), (s, "source")):
        _contiguous(b, role, "copy")
        if b.is_host and not b.pinned:
            raise PageableMemoryError(
                f"copy {role} {b.label or 'array'} is pageable host memory: a graph can "
                "only copy pinned host memory; allocate it with gt.pinned_empty(shape, "
                "dtype) (on a GPU, cupyx.empty_pinned and numba.cuda.pinned_array are "
                "pinned too; numba's simulator makes plain numpy arrays)")
    _same_layout(d, s)
    _writable(d, "copy")
    if d.overlaps(s):
        raise ArgumentError(
            f"copy from {s.label or 'src'} into {d.label or 'dst'}: the two views share "
            "bytes, and a device copy between overlapping ranges is undefined; copy "
            "through a temporary array")
    if not d.nbytes:   # nothing to copy: no node (a graph's copy node needs bytes)
        return None
    return place(stream, t.record(MEMCPY, None, (d, s), ((s, "r"), (d, "w")),
                                  stream=stream.index, scope=stream.scope,
                                  attrs={"nbytes": d.nbytes}))


def memset_pattern(dtype: np.dtype, value, source=None) -> tuple[int, int]:
    """``(element size, unsigned pattern)`` that fills ``dtype`` with ``value``;
    ``ArgumentError`` (at ``source``, the memset's line) where it does not fit."""
    dtype = np.dtype(dtype)
    v = _converted(dtype, value, source)
    size = next(n for n in (4, 2, 1) if dtype.itemsize % n == 0)   # (records of 6 bytes: 2)
    words = v.reshape(1).view(_WORDS[size])
    if (words == words[0]).all():
        return size, int(words[0])
    raise ArgumentError(
        f"memset cannot fill {dtype} with {value!r}: its bytes are no repeated 1-, 2- "
        "or 4-byte pattern; fill it with a kernel instead")


def memset_words(dtype: np.dtype, value, source=None) -> tuple:
    """The 4-byte words of one element of ``dtype`` (a multiple of 4 bytes) holding
    ``value``, lowest address first: a memset in lanes (``_LANES``) writes word
    ``j`` of every element; ``ArgumentError`` where it does not fit."""
    dtype = np.dtype(dtype)
    return tuple(int(w) for w in _converted(dtype, value, source).reshape(1).view(np.uint32))


def _converted(dtype: np.dtype, value, source) -> np.ndarray:
    """``value`` as a 0-d array of ``dtype``, refused where it does not fit."""
    if isinstance(value, (complex, np.complexfloating)) and dtype.kind != "c":
        if value.imag:   # (a later call's value too: the first call's was checked)
            raise ArgumentError(f"memset value {value!r} is complex, and the destination "
                                f"holds {dtype}: pass a real number", source)
        value = value.real   # 1+0j into a real array: its real part, quietly
    if isinstance(value, np.integer) and dtype.kind in "iub":
        value = int(value)   # np.int64(300) into uint8 would wrap: as 300 does, refused
    if dtype.kind == "b" and value not in (0, 1):
        raise ArgumentError(f"memset value {value!r} would be cut to fit {dtype}, which "
                            "holds 0 and 1 alone: pass False or True (bool(v) where any "
                            "nonzero value means True)", source)
    if dtype.kind in "iu" and has_fraction(value):
        advice = "round it yourself (int(v))" if math.isfinite(value) else \
            "a NaN or an infinity has no integer value: pick the integer meant"
        raise ArgumentError(f"memset value {value!r} would be cut to fit {dtype}, which "
                            f"holds whole numbers alone: {advice}, or keep the array in a "
                            "float dtype", source)
    if isinstance(value, np.floating) and dtype.kind in "iub":
        value = float(value)   # np.float64(-3.0) into uint16 would wrap: as -3.0, refused
    try:
        with np.errstate(over="raise", invalid="raise"):
            v = np.array(value).astype(dtype, casting="unsafe") \
                if dtype.kind in "fc" else np.array(value, dtype=dtype)
    except (OverflowError, FloatingPointError, ValueError, TypeError):
        raise ArgumentError(f"memset value {value!r} does not fit {dtype}: pass a value the "
                            f"array's dtype holds, or fill it with a kernel", source) from None
    return v


# elements past which a memset in word lanes warns (rows one word wide are slow:
# 20 ms for 2**24 float64 elements on an H200, where a fill kernel takes 42 us)
_SLOW_LANES = 1 << 16


def record_memset(stream, dst, value):
    """Record a fill of ``dst`` with ``value`` on a proxy stream (``Stream.memset``)."""
    t = stream.tracer()
    try:
        d = t.buffer(dst)
    except ArgumentError:
        _refuse_values("memset", dst=dst)
        raise
    if d.is_host:
        raise ArgumentError(f"memset destination {d.label or 'array'} is host memory: "
                            "memset nodes fill device memory; fill host arrays with numpy")
    _contiguous(d, "destination", "memset")
    _writable(d, "memset")
    current = value._value if isinstance(value, Scalar) else value
    if isinstance(current, (complex, np.complexfloating)) and current.imag \
            and d.dtype.kind != "c":
        raise ArgumentError(f"memset value {current!r} is complex, and "
                            f"{d.label or 'the destination'} holds {d.dtype}: pass a real "
                            "number")
    if d.dtype.kind in "SU":   # a number would be written as its digits' text
        raise ArgumentError(
            f"memset of {d.label or 'an array'}, which holds strings ({d.dtype}): a number "
            "would be written as its text; memset a view of its bytes instead "
            "(x.view(np.uint8)), or fill it with a kernel")
    if isinstance(current, np.ndarray) or is_array(current):
        zero_d = getattr(current, "ndim", None) == 0
        raise ArgumentError(
            f"memset value is {'a 0-d' if zero_d else 'an'} array, not a number: a memset "
            "node holds its value, which a later call's array or a change in place would "
            "not reach; pass its number as the argument instead (f(..., float(v)): a "
            "dynamic number, which each call rebinds), or fill with a kernel that reads "
            "the array")
    if not isinstance(current, (int, float, complex, bool, np.generic)):
        raise ArgumentError(f"memset value must be a number (int, float, bool, complex or "
                            f"a numpy scalar), not {type(current).__name__}")
    lanes = d.dtype.itemsize // 4 if d.dtype.itemsize > 4 and d.dtype.itemsize % 4 == 0 \
        else 0   # float64, complex: one node per word of an element where one pattern
    try:         # cannot do (1.0, or any number a later call may pass)
        element, pattern = memset_pattern(d.dtype, current)
    except ArgumentError as e:
        if not lanes and not isinstance(value, Scalar) or d.dtype.itemsize <= 4:
            raise
        element, unfit = None, e
    if isinstance(value, Scalar) and d.dtype.itemsize > 4 and not lanes:
        shown = current.item() if isinstance(current, np.generic) else current
        fits = "" if element is None else (f"pass {value.param!r} in static= if it is "
                                           f"always {shown!r} (which fits), or ")
        raise ArgumentError(
            f"memset of {d.dtype} {d.label or 'array'} with the dynamic scalar "
            f"{value.name}: most {d.dtype} values are no repeated 1-, 2- or 4-byte pattern "
            f"(this call's {shown!r} {'is one' if element is not None else 'is none'}), so "
            f"a later call could not be honoured; {fits}fill it with a kernel") \
            from (unfit if element is None else None)
    if not d.nbytes:   # nothing to fill: no node
        return None
    if element is not None and not (isinstance(value, Scalar) and lanes):
        return place(stream, t.record(MEMSET, None, (d, value), ((d, "w"),),
                                      stream=stream.index, scope=stream.scope,
                                      attrs={"element": element, "pattern": pattern}))
    memset_words(d.dtype, current)   # (refused above where it does not fit)
    if d.nbytes // d.dtype.itemsize > _SLOW_LANES:
        file, line = user_frame()
        warnings.warn_explicit(
            f"memset of {d.dtype} {d.label or 'array'} ({d.nbytes // d.dtype.itemsize} "
            f"elements) with {'a dynamic value' if isinstance(value, Scalar) else repr(current)}"
            f", which is no repeated 4-byte pattern, writes {lanes} memset nodes of rows one "
            "word wide: the driver fills those at about 1.2 ns per element on an H200 (7 GB/s, "
            "against 4 TB/s for a pattern such as 0.0); fill a large array with a kernel "
            "instead" + (f" (or pass {value.param!r} in static= if it is always {current!r}, "
                         "which one pattern fills)" if isinstance(value, Scalar) and
                         element is not None else ""), UserWarning, file, line)
    for lane in range(lanes):   # word `lane` of every element: a 2-D memset, one word wide
        node = place(stream, t.record(MEMSET, None, (d, value), ((_lane(d, lane), "w"),),
                                      stream=stream.index, scope=stream.scope,
                                      attrs={"element": 4, "lane": lane, "lanes": lanes}))
    return node


def _lane(d: Buffer, lane: int) -> Buffer:
    """The bytes a memset in word lanes writes of ``d`` (a gapless run of elements of
    8 or more bytes): word ``lane`` of each element, 4-byte runs an element apart, so
    that the lanes' nodes, which write no byte in common, are independent, and what
    reads or writes ``d`` later is ordered after each."""
    size = d.dtype.itemsize
    b = Buffer(d.lo + 4 * lane, (d.nbytes // size,), (size,), np.uint32, d.device, None,
               d.pinned, d.readonly)
    b.base = d.base   # moved with it on rebinding, and named after it
    return b


def record_zeros(stream, tmp):
    """Record the zeroing of a new temporary (``Stream.zeros``); none if it is empty."""
    t = stream.tracer()
    d = t.buffer(tmp)
    if d.nbytes:
        place(stream, t.record(ZEROS, None, (d,), ((d, "w"),), stream=stream.index,
                               scope=stream.scope))


class MemcpyOp(Op):
    """A copy: ``args = (dst, src)``, Buffers of equal byte size; ``attrs``: ``nbytes``."""

    kind = "memcpy"

    def describe(self, node, namer) -> str:
        dst, src = node.args
        return f"{namer.value(dst)} <- {namer.value(src)} ({node.attrs['nbytes']} B)"

    def verify(self, node) -> str | None:
        dst, src = node.args
        if not dst.nbytes == src.nbytes == node.attrs.get("nbytes"):
            return "source, destination and nbytes differ in size"
        return None

    def emit(self, gpu, node, parent):
        return parent.memcpy(**self.params(gpu, node))

    def params(self, gpu, node) -> dict:
        dst, src = node.args
        # from the lowest byte of each (a reversed view's pointer is its highest element)
        return {"dst": gpu.value_of(dst).lo, "src": gpu.value_of(src).lo,
                "size": node.attrs["nbytes"]}

    def simulate(self, sim, node) -> None:
        np.copyto(sim.array(node.args[0]), sim.array(node.args[1]))


class MemsetOp(Op):
    """A fill: ``args = (dst, value)``; ``attrs``: ``element`` (1, 2 or 4 bytes)
    and ``pattern`` (an unsigned int), as traced."""

    kind = "memset"

    def describe(self, node, namer) -> str:
        lanes = node.attrs.get("lanes")
        word = f" (word {node.attrs['lane']} of {lanes} of each)" if lanes else ""
        return f"{namer.value(node.args[0])} = {namer.value(node.args[1])}{word}"

    def emit(self, gpu, node, parent):
        return parent.memset(**self.params(gpu, node))

    def params(self, gpu, node) -> dict:
        dst = gpu.value_of(node.args[0])
        lanes = node.attrs.get("lanes")
        if lanes:   # rows of one word, an element apart
            word = memset_words(dst.dtype, gpu.value_of(node.args[1]), node.source)
            lane = node.attrs["lane"]
            return {"dst": dst.lo + 4 * lane, "value": np.uint32(word[lane]), "width": 1,
                    "height": dst.nbytes // dst.dtype.itemsize, "pitch": dst.dtype.itemsize}
        element, pattern = memset_pattern(dst.dtype, gpu.value_of(node.args[1]), node.source)
        return {"dst": dst.lo, "value": _WORDS[element](pattern),
                "width": dst.nbytes // element}

    def check_values(self, value_of, node) -> None:
        value = node.args[1] if len(node.args) > 1 else None   # zeros: no value
        if isinstance(value, Scalar):
            (memset_words if node.attrs.get("lanes") else memset_pattern)(
                node.args[0].dtype, value_of(value), node.source)

    def simulate(self, sim, node) -> None:
        view = sim.array(node.args[0])
        lanes = node.attrs.get("lanes")
        if lanes:   # byte-exact, like the driver: word `lane` of every element
            word = memset_words(view.dtype, sim.value(node.args[1]), node.source)
            lane = node.attrs["lane"]
            _bytes(view).view(np.uint32).reshape(-1, lanes)[:, lane] = word[lane]
            return
        element, pattern = memset_pattern(view.dtype, sim.value(node.args[1]), node.source)
        _bytes(view).view(_WORDS[element])[...] = pattern  # byte-exact, like the driver


class ZerosOp(MemsetOp):
    """A temporary set to zero bytes (``s.zeros``): ``args = (dst,)``, the whole
    temporary, whose memory never moves; a memset node of 4-byte words when
    the size allows (the graph aligns temporaries to 256 bytes)."""

    kind = "zeros"

    def describe(self, node, namer) -> str:
        return namer.value(node.args[0])

    def params(self, gpu, node) -> dict:
        dst = gpu.value_of(node.args[0])
        element = 4 if dst.nbytes % 4 == 0 else 1
        return {"dst": dst.ptr, "value": _WORDS[element](0), "width": dst.nbytes // element}

    def simulate(self, sim, node) -> None:
        sim.array(node.args[0]).reshape(-1).view(np.uint8)[...] = 0


def _bytes(view: np.ndarray) -> np.ndarray:
    """The bytes of a view that is one gapless run, in address order, as a 1-D
    uint8 view of the same memory (its axes turned to C order first)."""
    for axis, stride in enumerate(view.strides):
        if stride < 0:
            view = np.flip(view, axis)
    view = view.transpose(np.argsort(view.strides, kind="stable")[::-1])
    return view.reshape(-1).view(np.uint8)


MEMCPY, MEMSET, ZEROS = MemcpyOp(), MemsetOp(), ZerosOp()

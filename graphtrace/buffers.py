"""``Buffer`` views: pointer, byte range, dtype, shape, strides; and the intents
``In``, ``Out``, ``InOut`` a call site wraps an array in.

A ``Buffer`` describes the exact bytes an array view covers, so that
``deps.py`` can decide whether two accesses touch the same memory
(``overlaps``) and the tracer which argument a view lies in (``contains``).
Addresses live in one space (CUDA's unified virtual addressing), so host and
device buffers never alias by accident. ``arrays.py`` makes them of the
arrays a program passes.
"""
from __future__ import annotations

import ctypes
import math
import numbers

import numpy as np

from .errors import ArgumentError
from .scalar import Scalar

__all__ = ["Buffer", "In", "Out", "InOut", "unwrap_intent"]

HOST = -1  # ``Buffer.device`` of host memory


class Buffer:
    """One array view. Strides are in bytes; ``lo``/``hi`` is the byte hull.

    ``run`` is the length of the contiguous innermost run of bytes and
    ``step`` the gcd of the remaining strides (0 when the view is one run):
    every byte of the view lies at ``lo + k*step + [0, run)``, which lets
    ``overlaps`` separate interleaved views such as ``x[::2]`` and ``x[1::2]``.
    """

    __slots__ = ("ptr", "shape", "strides", "dtype", "device", "pinned",
                 "readonly", "obj", "lo", "hi", "run", "step", "_label", "base",
                 "_starts")

    def __init__(self, ptr, shape, strides, dtype, device, obj,
                 pinned=False, readonly=False):
        """``strides=None`` means C-contiguous (the usual case, laid out at once)."""
        self.ptr, self.shape = int(ptr), tuple(shape)
        self.dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        self.device, self.obj = device, obj
        self.pinned, self.readonly = pinned, readonly
        self._label = None  # set by the tracer: the user's name for this view
        self.base = self   # the argument (or closure) array this view lies in
        self._starts = None
        size = self.dtype.itemsize
        if len(self.shape) == 1 and (strides is None or tuple(strides) == (size,)):
            self.strides = (size,)   # 1-D contiguous, the most common view
            n = self.shape[0] * size
            self.lo, self.hi, self.run, self.step = self.ptr, self.ptr + n, n, 0
        elif strides is None:
            self.strides = _c_strides(self.shape, size)
            n = math.prod(self.shape) * size
            self.lo, self.hi, self.run, self.step = self.ptr, self.ptr + n, n, 0
        else:
            self.strides = tuple(strides)
            self._layout()

    @property
    def label(self) -> str | None:
        """The user's name for this view: an argument's name, or for a view inside
        one ``x[0B:256B]`` (its byte range in it), made when first asked for."""
        label = self._label
        if label is None and self.base is not self:
            label = self._label = _view_label(self, self.base)
        return label

    @label.setter
    def label(self, value) -> None:
        self._label = value

    def _layout(self):
        size = self.dtype.itemsize
        if 0 in self.shape:
            self.lo = self.hi = self.ptr
            self.run, self.step = 0, 0
            return
        lo = hi = self.ptr
        dims = []
        for n, s in zip(self.shape, self.strides):
            if n == 1 or s == 0:
                continue
            ext = (n - 1) * s
            lo, hi = (lo, hi + ext) if s > 0 else (lo + ext, hi)
            dims.append((abs(s), n))
        self.lo, self.hi = lo, hi + size
        run, step = size, 0
        dims.sort()
        i = 0
        while i < len(dims) and dims[i][0] == run:  # fold contiguous inner dims
            run *= dims[i][1]
            i += 1
        for s, _ in dims[i:]:
            step = math.gcd(step, s)
        self.run, self.step = run, step

    def moved(self, delta: int) -> "Buffer":
        """The same view ``delta`` bytes further on (a rebound argument)."""
        b = object.__new__(Buffer)
        b.ptr, b.lo, b.hi = self.ptr + delta, self.lo + delta, self.hi + delta
        b.shape, b.strides, b.dtype, b.device = self.shape, self.strides, self.dtype, self.device
        b.pinned, b.readonly, b.run, b.step = self.pinned, self.readonly, self.run, self.step
        b._label, b.base, b._starts = self.label, self.base, None
        b.obj = None  # the traced object describes the old address, not this one
        return b

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize

    @property
    def contiguous(self) -> bool:
        """True when the view's bytes form one run (any C/F-contiguous view)."""
        return self.step == 0 and self.hi - self.lo == self.nbytes

    @property
    def c_contiguous(self) -> bool:
        expect, ok = self.dtype.itemsize, True
        for n, s in zip(reversed(self.shape), reversed(self.strides)):
            if n != 1 and s != expect:
                ok = False
            expect *= n
        return ok

    @property
    def is_host(self) -> bool:
        return self.device == HOST

    def overlaps(self, other: "Buffer") -> bool:
        """Whether the two views share at least one byte (never a false 'no')."""
        if self.lo >= other.hi or other.lo >= self.hi or self.lo == self.hi \
                or other.lo == other.hi:
            return False
        if self.step == 0 and other.step == 0:
            return True  # two runs whose hulls meet
        g = math.gcd(self.step, other.step)
        if self.run < g and other.run < g:
            # every byte lies at lo + k*g + [0, run): compare the residues mod g
            d = (other.lo - self.lo) % g
            if not (d < self.run or (g - d) < other.run):
                return False
        return _runs_meet(self, other)

    def covers(self, other: "Buffer") -> bool:
        """Whether every byte of ``other`` is a byte of this view (may say no)."""
        if self.step == 0:
            return self.lo <= other.lo and other.hi <= self.hi \
                and self.hi - self.lo == self.run
        return (self.ptr, self.shape, self.strides, self.dtype.itemsize) == \
            (other.ptr, other.shape, other.strides, other.dtype.itemsize)

    def contains(self, other: "Buffer"):
        """Whether every byte of ``other`` is one of this view: True, False or None (unknown)."""
        if other.lo == other.hi:
            return True
        if not (self.lo <= other.lo and other.hi <= self.hi):
            return False
        if self.step == 0 and self.hi - self.lo == self.run:
            return True   # one run: the hull is the view
        spans, theirs = _spans(self), _run_starts(other)
        if spans is None or theirs is None:
            held = _lattice_holds(self, other)
            return _nested_holds(self, other) if held is None else held
        starts, ends = spans
        theirs = theirs + (other.ptr - self.ptr)
        # each run of other must lie in one span: the last one starting at or before it
        i = np.searchsorted(starts, theirs, side="right") - 1
        return bool(((i >= 0) & (theirs + other.run <= ends[np.maximum(i, 0)])).all())

    def host_array(self, owner=None) -> np.ndarray:
        """A numpy array over this view's bytes (host memory only: nothing checks),
        keeping ``owner`` (the array the bytes belong to) alive as long as it lives."""
        raw = (ctypes.c_uint8 * (self.hi - self.lo)).from_address(self.lo)
        if owner is not None:
            raw.owner = owner   # a callback may keep the array: its memory must stay
        return np.ndarray(self.shape, self.dtype, buffer=raw, offset=self.ptr - self.lo,
                          strides=self.strides)

    def same_view(self, other: "Buffer") -> bool:
        return (self.ptr, self.shape, self.strides, self.dtype) == \
            (other.ptr, other.shape, other.strides, other.dtype)

    def signature(self) -> tuple:
        """What the cache key holds of this view (no address; whether it is read-only,
        which copies and memsets into it refuse while tracing)."""
        dtype = self.dtype   # a record's fields and their order are not in its str ("|V16")
        return (self.shape, self.strides, dtype.str if dtype.kind != "V" else dtype,
                self.device, self.pinned, self.readonly)

    def __repr__(self):
        where = "host" if self.is_host else f"cuda:{self.device}"
        return (f"Buffer({self.label or hex(self.ptr)}, {self.dtype}{list(self.shape)}, "
                f"{where}, bytes [{self.lo:#x}, {self.hi:#x}))")


# Views with at most this many runs are compared run by run, exactly.
EXACT_RUNS = 1 << 16


def _outer(b: Buffer) -> list:
    """``(stride, count)`` of the view's dimensions past its contiguous run, in
    increasing stride (the ones ``run`` does not fold in)."""
    dims = sorted((abs(s), n) for n, s in zip(b.shape, b.strides) if n > 1 and s != 0)
    run, i = b.dtype.itemsize, 0
    while i < len(dims) and dims[i][0] == run:
        run *= dims[i][1]
        i += 1
    return dims[i:]


def _lattice_holds(root: Buffer, view: Buffer):
    """``root.contains(view)`` where the runs are too many to list (``EXACT_RUNS``):
    a root of one outer dimension holds the bytes ``lo + k*step + [0, run)`` for
    every k up to its last (rows of a larger matrix); a view within its hull whose
    runs repeat at multiples of that step lies at one place in each period, so it
    lies in the root if its runs fit in the root's run there. None where this does
    not tell (more outer dimensions, windows that overlap, other steps)."""
    outer = _outer(root)
    if len(outer) != 1 or outer[0][0] != root.step or root.step <= root.run or \
            view.step % root.step:
        return None
    return (view.lo - root.lo) % root.step + view.run <= root.run


NESTED_RUNS = 1 << 22   # the most runs of a view _nested_holds checks one by one
_CHUNK = 1 << 18


def _nested_holds(root: Buffer, view: Buffer):
    """``root.contains(view)`` where the runs are too many to list (``EXACT_RUNS``)
    and ``_lattice_holds`` cannot tell: for a root whose outer dimensions nest (each
    stride past the extent of the smaller ones: no two of its elements interleave,
    as of every slice of one array), each offset from its start names one place
    in it, read digit by digit from the largest stride (``_digits``); a view lies
    in it if each of its runs lands inside the root's run there. Its first and
    last runs are read so; a view whose every dimension steps along one of the
    root's without passing its end lies in it where its first run does; others
    are read a chunk of runs at a time (``NESTED_RUNS`` at most). Where a stride
    meets the extent of the smaller ones exactly, the root's runs touch there, and
    a view's run that leaves one root run may go on in the next: that is not told
    (None), but a run inside one still is. None where this does not tell."""
    outer, extent, touching = _outer(root), root.run, False
    for stride, n in outer:
        if stride < extent:   # (as_strided windows that interleave)
            return None
        touching |= stride == extent   # (columns 0, 2, 4 of rows of 5)
        extent += stride * (n - 1)
    outside = None if touching else False
    first = _digits(outer, np.array([view.lo - root.lo], np.int64))
    last = _digits(outer, np.array([view.hi - view.run - root.lo], np.int64))
    if not (_inside(first, root, view) and _inside(last, root, view)):
        return outside   # (the other component of interleaved ones: at once)
    dims = _outer(view)
    if _steps_along(outer, dims, first[1]):
        return True
    total = math.prod(n for _, n in dims)
    if total > NESTED_RUNS:
        return None
    strides = np.array([s for s, _ in dims], np.int64)
    counts = np.array([n for _, n in dims], np.int64)
    below = np.cumprod(np.concatenate(([1], counts[:-1]))).astype(np.int64)
    for at in range(0, total, _CHUNK):
        k = np.arange(at, min(at + _CHUNK, total), dtype=np.int64)
        x = view.lo - root.lo + ((k[:, None] // below) % counts * strides).sum(axis=1)
        if not _inside(_digits(outer, x), root, view):
            return outside
    return True


def _digits(outer: list, x):
    """``(remainders, digits)`` of the offsets ``x`` from a nested root's start, read
    along its ``outer`` dimensions from the largest (each digit at most its count
    less one: what is left past the last element stays in the remainder)."""
    x, digits = x.copy(), []
    for stride, n in reversed(outer):
        d = np.minimum(x // stride, n - 1)
        x -= d * stride
        digits.append(int(d[0]))
    return x, digits[::-1]


def _inside(found, root: Buffer, view: Buffer) -> bool:
    x = found[0]
    return bool(((x >= 0) & (x + view.run <= root.run)).all())


def _steps_along(outer: list, dims: list, digits: list) -> bool:
    """Whether each of the view's dimensions steps a whole number of elements along
    one of the root's (the largest whose stride divides its own), and the view's
    first run's digits plus every step stay within the root's counts: then each
    run's remainder is the first's."""
    reach = list(digits)
    for stride, n in dims:
        k = next((k for k in range(len(outer) - 1, -1, -1)
                  if outer[k][0] <= stride and stride % outer[k][0] == 0), None)
        if k is None:
            return False
        reach[k] += stride // outer[k][0] * (n - 1)
    return all(r <= n - 1 for r, (_, n) in zip(reach, outer))


def _run_starts(b: Buffer):
    """Sorted start addresses of the view's contiguous runs (None if too many)."""
    if b._starts is None:
        outer = _outer(b)
        if math.prod(n for _, n in outer) > EXACT_RUNS:
            b._starts = False
        else:
            starts = np.zeros(1, np.int64)
            for s, n in outer:
                starts = (starts[:, None] + np.arange(n, dtype=np.int64) * s).ravel()
            b._starts = np.sort(starts) + (b.lo - b.ptr)
    return None if b._starts is False else b._starts


def _spans(b: Buffer):
    """The view's bytes as sorted disjoint ranges ``(starts, ends)``, offsets from
    its pointer: runs that overlap or touch (``as_strided`` windows) are joined."""
    s = _run_starts(b)
    if s is None:
        return None
    e = s + b.run   # sorted too: every run has the same length
    first = np.ones(len(s), bool)
    first[1:] = s[1:] > e[:-1]   # a run past every earlier end starts a new span
    last = np.append(np.flatnonzero(first)[1:] - 1, len(s) - 1)
    return s[first], e[last]


def has_gaps(b: Buffer) -> bool:
    """Whether bytes between the view's first and last are none of its elements'
    (a 2-D block of a larger array, a step): windows that overlap or touch
    (``sliding_window_view``) cover their range. True where too many runs to tell."""
    if b.step == 0:
        return False
    spans = _spans(b)
    return spans is None or len(spans[0]) > 1


def _runs_meet(a: Buffer, b: Buffer) -> bool:
    """Exact byte overlap of two views made of runs (True if too large to tell)."""
    if a.step == 0:
        a, b = b, a
    sa = _run_starts(a)
    if sa is None:
        return True
    base = a.ptr  # run starts are offsets from the view's pointer
    if b.step == 0:  # one run: does any run of a meet [b.lo, b.hi)?
        lo, hi = _clamp(b.lo - base), _clamp(b.hi - base)
        return bool(((sa < hi) & (sa + a.run > lo)).any())
    sb = _run_starts(b)
    if sb is None:
        return True
    sb = sb + (b.ptr - base)
    # a run [x, x+ra) meets some run [y, y+rb) iff a y lies in (x - rb, x + ra)
    first = np.searchsorted(sb, sa - b.run, side="right")
    return bool(((first < len(sb)) & (sb[np.minimum(first, len(sb) - 1)] < sa + a.run)).any())


def _clamp(v: int) -> int:
    return max(-(1 << 62), min(1 << 62, v))


def _c_strides(shape, itemsize):
    strides, acc = [], itemsize
    for n in reversed(shape):
        strides.append(acc)
        acc *= n
    return tuple(reversed(strides))


def _view_label(buf: Buffer, root: Buffer) -> str:
    if buf.same_view(root):
        return root.label
    tail = "" if buf.contiguous else ":strided"
    return f"{root.label}[{buf.lo - root.lo}B:{buf.hi - root.lo}B{tail}]"


class _Intent:
    """A call-site override of what an op does with an array. A number is refused
    (an op only reads it); one wrapped in another keeps the outer's intent and the
    inner's name, which the op recording it refuses (``refuse_nested``)."""

    __slots__ = ("obj", "inner")
    mode = "rw"

    def __init__(self, obj):
        if type(obj) is Scalar or isinstance(obj, (numbers.Number, np.generic)):
            number = obj._name if type(obj) is Scalar else repr(obj)
            raise ArgumentError(
                f"gt.{type(self).__name__}({number}) wraps a number: gt.In, gt.Out and "
                "gt.InOut say what an op does to an array, and a number is passed by "
                f"value, which an op only reads; pass it bare: {number}, not "
                f"gt.{type(self).__name__}({number})")
        self.inner = type(obj).__name__ if isinstance(obj, _Intent) else None
        self.obj = obj.obj if isinstance(obj, _Intent) else obj

    def refuse_nested(self) -> None:
        """Raise (at the user's line) for an intent wrapped in another."""
        if self.inner is not None:
            outer = type(self).__name__
            raise ArgumentError(
                f"gt.{outer}(gt.{self.inner}(...)) wraps an intent in another, which says "
                f"two things of one argument: wrap it once, in gt.In (only read), gt.Out "
                "(only written) or gt.InOut (read and written)")

    def __repr__(self):
        return f"{type(self).__name__}({self.obj!r})"


class In(_Intent):
    """Wrap an argument the op only reads: ``gt.In(x)``.

    >>> @gt.graph
    ... def f(s, x, y, host):
    ...     s.launch(add, 1, 32, gt.In(x), gt.InOut(y))   # as inferred, said at the call
    ...     s.copy(host, y)
    ...     s.host(print, gt.In(host[:1]))     # a callback reads and writes unless told
    >>> g = f.trace(cuda.device_array(32), cuda.device_array(32), gt.pinned_empty(32))
    >>> [[mode for _, mode in n.accesses] for n in g.nodes]   # (and callbacks in turn)
    [['r', 'rw'], ['r', 'w'], ['r', 'rw']]
    """
    mode = "r"


class Out(_Intent):
    """Wrap an argument the op only writes: ``gt.Out(y)``."""
    mode = "w"


class InOut(_Intent):
    """Wrap an argument the op reads and writes: ``gt.InOut(z)``."""
    mode = "rw"


def unwrap_intent(value, default: str):
    """``(object, mode)`` of a possibly wrapped argument."""
    if isinstance(value, _Intent):
        return value.obj, value.mode
    return value, default

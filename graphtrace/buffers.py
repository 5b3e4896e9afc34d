"""User arrays -> ``Buffer`` views: pointer, byte range, dtype, shape, strides.

A ``Buffer`` describes the exact bytes an array view covers, so that
``deps.py`` can decide whether two accesses touch the same memory. Device
arrays come in through ``__cuda_array_interface__`` (cupy, numba, torch) or
DLPack (through cuda.core's ``StridedMemoryView``); host memory through
numpy's ``__array_interface__``. Addresses live in one space (CUDA's unified
virtual addressing), so host and device buffers never alias by accident.
"""
from __future__ import annotations

import ctypes
import inspect
import math
import operator
import sys
import weakref

import numpy as np

from . import _driver
from .errors import ArgumentError

__all__ = ["Buffer", "as_buffer", "interface_of", "device_buffer", "is_array", "pinned_empty",
           "sim_device", "In", "Out", "InOut", "unwrap_intent", "geometry_reader"]

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
            return _lattice_holds(self, other)
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


_dtypes: dict = {}   # typestr -> np.dtype: made once, not per view


def _is_record(descr) -> bool:
    """Whether an interface's ``descr`` describes a record dtype, whose fields its
    typestr ("|V8") leaves out: two entries or more, or one naming its field
    ([('a', '<f8')]); one unnamed entry ([('', '<f8')]) is a plain dtype."""
    return descr is not None and (len(descr) > 1 or (len(descr) == 1 and descr[0][0] != ""))


def _typestr_dtype(typestr, descr=None):
    if _is_record(descr):
        return np.dtype(descr)
    dtype = _dtypes.get(typestr)
    if dtype is None:
        dtype = _dtypes[typestr] = np.dtype(typestr)
    return dtype


def _interface_dtype(typestr, descr, obj):
    """The dtype of a view whose typestr is new or a void ("|V16"): a record's from
    its descr, or a numba array's own, whose interface leaves a record's fields out."""
    dtype = _typestr_dtype(typestr, descr)
    if dtype.kind == "V" and dtype.names is None and _kinds.get(type(obj)) == "numba":
        return obj.dtype
    return dtype


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


def _from_interface(iface, obj, device, pinned=False):
    descr = iface.get("descr")
    dtype = None if _is_record(descr) else _dtypes.get(iface["typestr"])
    if dtype is None or dtype.kind == "V":
        dtype = _interface_dtype(iface["typestr"], descr, obj)
    strides = iface.get("strides")  # None: C-contiguous
    ptr, readonly = iface["data"]
    shape = iface["shape"]
    if len(shape) == 1 and strides is None and type(ptr) is int:   # the most common view
        b = _new_buffer(Buffer)
        size = dtype.itemsize
        b.ptr, b.shape, b.strides, b.dtype, b.device, b.obj = ptr, tuple(shape), (size,), \
            dtype, device, obj
        b.pinned, b.readonly, b._label, b.base, b._starts = pinned, bool(readonly), None, b, None
        b.lo, b.hi, b.run, b.step = ptr, ptr + shape[0] * size, shape[0] * size, 0
        return b
    return Buffer(ptr or 0, shape, strides, dtype, device, obj, pinned, bool(readonly))


_new_buffer = object.__new__


# never arrays: numbers, strings, None, and the plain containers arguments nest in
# (a list, tuple or dict itself; its items are looked at one by one)
_SCALARS = (int, float, bool, complex, str, type(None), list, tuple, dict)
_kinds: dict = {}   # type -> how its objects are told apart: decided once per type


def _kind(obj) -> str:
    """``own`` (describes itself), ``sim`` (the simulator's device array), ``host``
    (a numpy array), ``scalar`` (never an array: ``_SCALARS``), ``cupy`` and
    ``numba`` (their device arrays, told apart by attributes), ``cai`` (another
    device array type) or ``other`` (asked object by object)."""
    t = type(obj)
    kind = _kinds.get(t)
    if kind is None:
        kind = _kinds[t] = "own" if hasattr(t, "__graphtrace_buffer__") else \
            "sim" if t.__name__ == "FakeCUDAArray" else "host" if t is np.ndarray else \
            "scalar" if t in _SCALARS else "cupy" if _is_cupy_array_type(t) else \
            "numba" if _is_numba_array_type(t) else \
            "cai" if hasattr(t, "__cuda_array_interface__") else "other"
    return kind


def _is_cupy_array_type(t) -> bool:
    """Whether ``t`` is ``cupy.ndarray`` itself (a subclass may describe itself otherwise)."""
    cupy = sys.modules.get("cupy")
    return cupy is not None and t is getattr(cupy, "ndarray", None)


def _is_numba_array_type(t) -> bool:
    """Whether ``t`` is numba-cuda's device array type, or a subclass that describes
    itself as numba's does: its interface and address properties numba's own.
    Told by the class itself (numba's simulator may stand in sys.modules)."""
    base = next((c for c in t.__mro__ if c.__name__ == "DeviceNDArray" and
                 c.__module__ == "numba.cuda.cudadrv.devicearray"), None)
    return base is not None and all(
        getattr(t, name, None) is getattr(base, name, None)
        for name in ("__cuda_array_interface__", "device_ctypes_pointer", "shape",
                     "strides", "dtype"))


# What of an array's geometry changes in place, read at once (C, no frame): a numpy
# array's shape, strides and dtype (set), a cupy array's shape (set, its strides with it)
_numpy_view = operator.attrgetter("shape", "strides", "dtype")
_cupy_geometry = operator.attrgetter("shape", "strides")


def _numpy_owner(a) -> tuple:
    """A numpy array's geometry, and the address of one owning its memory, which
    ``resize(refcheck=False)`` moves (the same shape may come back at another address
    after two resizes)."""
    at = _ADDRESS[0](a)
    return a.shape, a.strides, a.dtype, a.__array_interface__["data"][0] if at is None else at


# how _numpy_owner reads the address: _buffers.c's address once loaded (through the
# buffer protocol, an eighth of the time), else the array interface's
_ADDRESS = [lambda a: None]


def use_address_reader(read) -> None:
    """Have ``_numpy_owner`` read numpy addresses with ``read(a)`` (an int, or None
    where the array interface is to tell)."""
    _ADDRESS[0] = read


def _torch_geometry(t) -> tuple:
    """A torch tensor's address, shape, strides and dtype (``set_``, ``resize_``)."""
    return t.data_ptr(), t.shape, t.stride(), t.dtype


# another array type's (a handle of the program's own answering the interface of
# the buffer it points at now, which may be another at the next call): all of it
_interface_geometry = operator.attrgetter("__cuda_array_interface__")


def _geometry_reader_of(obj):
    t = type(obj)
    torch = sys.modules.get("torch")
    return _numpy_view if issubclass(t, np.ndarray) else \
        _cupy_geometry if _is_cupy_array_type(t) else \
        _torch_geometry if torch is not None and issubclass(t, torch.Tensor) else \
        _interface_geometry if _kind(obj) == "cai" else None


_geometry_readers: dict = {}   # type -> geometry_reader's function for it, decided once


def geometry_reader(obj):
    """The cheapest function reading what of array ``obj``'s geometry can change with
    the object kept (``h.shape = (2, 8)``, ``t.resize_(8)``, a handle pointed at
    another buffer): one of the above, the address only where numpy can move it;
    None where nothing can (numba's device arrays, the simulator's, an object that
    is no array)."""
    t = type(obj)
    read = _geometry_readers.get(t, False)
    if read is False:
        read = _geometry_readers[t] = _geometry_reader_of(obj)
    if read is None and _kinds.get(t) == "other" and _own_interface(obj) is not None:
        return _interface_geometry   # an interface set on the object itself
    return _numpy_owner if read is _numpy_view and obj.flags.owndata else read


def is_array(obj) -> bool:
    kind = _kind(obj)
    if kind != "other":   # "cai", "cupy", "numba": its type has the interface
        return kind != "scalar"
    try:
        if isinstance(obj, type):   # an array class (np.ndarray itself) is no array
            return False
        if isinstance(obj, np.ndarray):
            return True
        return _own_interface(obj) is not None or hasattr(type(obj), "__dlpack_device__")
    except ReferenceError:   # a weak proxy whose object is gone: none
        return False


def _own_interface(obj):
    """The ``__cuda_array_interface__`` dict an object holds itself (set on it, not
    its class), or None: an object answering every attribute (a logger stub's
    ``__getattr__``, an attribute dict's, which raises KeyError) is no array."""
    try:
        inspect.getattr_static(obj, "__cuda_array_interface__")
    except AttributeError:
        return None
    cai = getattr(obj, "__cuda_array_interface__", None)   # (an error of its own: raised)
    return cai if isinstance(cai, dict) else None


def as_buffer(obj) -> Buffer:
    """Describe ``obj`` as a ``Buffer``; raise ``ArgumentError`` if it is no array.

    An object whose type has ``__graphtrace_buffer__`` describes itself (a
    temporary, which has a virtual address and no array interface).
    """
    kind = _kinds.get(type(obj)) or _kind(obj)
    if kind == "own":
        return type(obj).__graphtrace_buffer__(obj)
    if kind == "sim":   # numba's CUDA simulator wraps numpy arrays that stand for device arrays
        return device_buffer(obj, obj._ary.__array_interface__)
    if kind != "scalar":
        cai = getattr(obj, "__cuda_array_interface__", None) if kind != "other" else \
            _own_interface(obj)
        if cai is not None:
            return device_buffer(obj, cai)
        if isinstance(obj, np.ndarray):
            iface = obj.__array_interface__
            return _from_interface(iface, obj, HOST, is_pinned(iface["data"][0]))
        if hasattr(type(obj), "__dlpack_device__"):
            return _from_dlpack(obj)
    raise ArgumentError(
        f"cannot use {type(obj).__name__} as an array: pass a device array "
        "(cupy, numba, torch: anything with __cuda_array_interface__ or DLPack) "
        "or a numpy array for host memory")


def interface_of(obj) -> tuple:
    """``(key, interface)`` of a device array whose type has the interface
    (cupy, numba, torch; and the simulator's): its ``__cuda_array_interface__``,
    and a key of its type and geometry (two arrays with one key have the same
    Buffer; None for structured dtypes); ``(None, None)`` for any other object.

    A ``cupy.ndarray``'s key is read from its attributes (address, shape, strides,
    dtype), which costs half of making its interface, and its interface is left
    to ``as_buffer`` (None): a view made again needs no interface at all. So is
    a numba device array's (a fifth of the cost: numba's interface is Python)."""
    t = type(obj)
    kind = _kinds.get(t) or _kind(obj)
    if kind == "cupy":
        return (t, obj.data.ptr, obj.shape, obj.strides, obj.dtype), None
    if kind == "numba":
        return (t, _numba_address(obj), obj.shape, obj.strides, obj.dtype), None
    if kind == "cai":
        cai = getattr(obj, "__cuda_array_interface__", None)
        if cai is None:
            return None, None
    elif kind == "sim":
        cai = obj._ary.__array_interface__   # what the simulator's array stands for
    else:
        return None, None
    if _is_record(cai.get("descr")):
        return None, cai
    return (t, cai["data"], cai["shape"], cai.get("strides"), cai["typestr"]), cai


def _numba_address(obj):
    """``obj.device_ctypes_pointer.value`` of a numba device array, read past
    numba's property (``self.gpu_data.device_ctypes_pointer``, or ``c_void_p(0)``
    where that raises AttributeError): numba's memory objects hold it as an
    attribute. As ``_speedups.c``'s ``numba_pointer`` reads it."""
    try:
        return obj.gpu_data.device_ctypes_pointer.value
    except AttributeError:
        return obj.device_ctypes_pointer.value


def key_interface(obj, key) -> dict:
    """The ``__cuda_array_interface__`` of a cupy or numba device array whose key
    ``interface_of`` made. A numba array's is made from its key as numba makes
    it (its type's interface is numba's own: ``_is_numba_array_type``): numba
    makes it in Python, reading the address again and walking the strides, at
    several times the cost. (The "stream" entry, which graphtrace never reads,
    is left out.)"""
    if _kinds.get(key[0]) != "numba":
        return obj.__cuda_array_interface__
    _, ptr, shape, strides, dtype = key
    size = dtype.itemsize   # numba's is_contiguous: C order, broadcast axes ignored
    contiguous = True
    for n, step in zip(reversed(shape), reversed(strides)):
        if n > 1 and step != 0:
            if step != size:
                contiguous = False
                break
            size *= n
    return {"shape": shape, "strides": None if contiguous else tuple(strides),
            "data": (0 if ptr is None else ptr, False), "typestr": dtype.str, "version": 3}


def device_buffer(obj, cai) -> Buffer:
    """The Buffer of a device array with interface ``cai`` (``interface_of``)."""
    if _sim_devices:   # arrays of the CPU simulator tagged with devices (sim_device)
        return _from_interface(cai, obj, _simulated_device(cai["data"][0]))
    one = _driver.device_count() <= 1 or _kinds.get(type(obj)) == "sim"   # device 0
    return _from_interface(cai, obj, 0 if one else _driver.device_of(cai["data"][0]))


def _from_dlpack(obj) -> Buffer:
    from cuda.core.utils import StridedMemoryView
    dev_type, dev_id = obj.__dlpack_device__()
    v = StridedMemoryView.from_dlpack(obj, stream_ptr=-1)
    itemsize = np.dtype(v.dtype).itemsize
    strides = tuple(s * itemsize for s in v.strides) if v.strides is not None else None
    device = dev_id if dev_type in (2, 13) else HOST  # kDLCUDA, kDLCUDAManaged
    return Buffer(v.ptr, v.shape, strides, v.dtype, device, obj,
                  pinned=dev_type == 3, readonly=v.readonly)


# Host memory graphtrace allocated as pinned where no driver could do it (the
# CPU simulator): address ranges of live arrays, so copies accept them.
_sim_pinned: dict[int, int] = {}


def _items(table: dict) -> list:
    """A copy of ``table``'s items. An array freed meanwhile drops its entry (its
    finalizer, run by a collection the copy itself may start, or another thread):
    then the copy is made again."""
    while True:
        try:
            return list(table.items())
        except RuntimeError:   # changed size during the copy
            continue


def is_pinned(ptr: int) -> bool:
    for lo, hi in _items(_sim_pinned):
        if lo <= ptr < hi:
            return True
    return _driver.is_pinned_host(ptr)


# Device arrays the simulator is told live on another (simulated) device:
# address ranges of live arrays -> (end, device). Without a GPU every array is
# on device 0 otherwise (numba's simulator has one device).
_sim_devices: dict[int, tuple[int, int]] = {}


def _simulated_device(ptr: int) -> int:
    for lo, (hi, device) in _items(_sim_devices):
        if lo <= ptr < hi:
            return device
    return 0


def sim_device(array, device: int):
    """Mark a device array of the simulator as living on simulated device ``device``.

    Without a GPU there is one device (numba's simulator has no other), so a
    graph over several GPUs is traced, listed, checked and simulated on the
    CPU with arrays tagged this way: graphtrace then places and keys them
    as arrays of that GPU, and views made of them are on it too. Returns
    ``array``. On a GPU an array's device is the one it was allocated on,
    and this is an error.

    >>> import graphtrace as gt
    >>> x1 = gt.sim_device(cuda.to_device(np.zeros(1024)), 1)   # doctest: +SKIP
    """
    if isinstance(device, bool) or not isinstance(device, (int, np.integer)) or device < 0:
        raise ArgumentError(f"device must be a non-negative int, not {device!r}")
    if _driver.available():
        raise ArgumentError("sim_device tags arrays of the CPU simulator; on a GPU an array "
                            "lives on the device it was allocated on (with cupy.cuda.Device(d) "
                            "or numba.cuda.gpus[d])")
    if isinstance(array, np.ndarray):   # the simulator's device arrays wrap one
        raise ArgumentError("sim_device takes a device array of the simulator "
                            "(cuda.to_device(a)); a numpy array is host memory")
    buf = as_buffer(array)
    if buf.is_host:
        raise ArgumentError("sim_device takes a device array, not host memory")
    hi = max(buf.hi, buf.lo + 1)
    for lo in [lo for lo, (end, _) in _sim_devices.items() if lo < hi and buf.lo < end]:
        del _sim_devices[lo]   # memory reused since, or tagged again
    _sim_devices[buf.lo] = (hi, int(device))
    weakref.finalize(_memory(array), _untag, buf.lo, hi)
    return array


def _memory(array):
    """What holds ``array``'s memory: the numpy array owning what the simulator's
    device array wraps (its views hold it too, after ``array`` is dropped), else
    ``array``."""
    a = getattr(array, "_ary", None)
    if not isinstance(a, np.ndarray):
        return array
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _untag(lo: int, hi: int) -> None:
    if _sim_devices.get(lo, (None,))[0] == hi:
        del _sim_devices[lo]


def pinned_empty(shape, dtype=np.float64) -> np.ndarray:
    """A numpy array in pinned (page-locked) host memory, usable in copies.

    Without a GPU driver (the CPU simulator) it is ordinary memory that
    graphtrace treats as pinned, so the same code runs in both places.

    >>> import graphtrace as gt
    >>> h = gt.pinned_empty((1024,), "float32")
    """
    try:
        shape = (operator.index(shape),) if not isinstance(shape, (tuple, list)) else \
            tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"pinned_empty's shape must be an int or a tuple of ints, not "
                        f"{shape!r}") from None
    if any(n < 0 for n in shape):
        raise ValueError(f"pinned_empty's shape {shape} has a negative size")
    dtype = np.dtype(dtype)
    nbytes = max(1, math.prod(shape) * dtype.itemsize)
    block = _driver.pinned_block(nbytes)
    if block is None:
        arr = np.empty(shape, dtype)
        lo = arr.__array_interface__["data"][0]
        _sim_pinned[lo] = lo + nbytes
        weakref.finalize(arr, _sim_pinned.pop, lo, None)
        return arr
    return np.frombuffer(block, dtype=np.uint8, count=nbytes)[: math.prod(shape) * dtype.itemsize] \
        .view(dtype).reshape(shape)


class _Intent:
    """A call-site override of what an op does with an array."""

    __slots__ = ("obj",)
    mode = "rw"

    def __init__(self, obj):
        self.obj = obj.obj if isinstance(obj, _Intent) else obj

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
    >>> [[mode for _, mode in n.accesses] for n in g.nodes]
    [['r', 'rw'], ['r', 'w'], ['r']]
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

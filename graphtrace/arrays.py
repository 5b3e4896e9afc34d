"""Objects -> ``Buffer`` views: which objects are arrays, and the bytes of each.

Device arrays come in through ``__cuda_array_interface__`` (cupy, numba,
torch) or DLPack (through cuda.core's ``StridedMemoryView``); host memory
through numpy's ``__array_interface__``. How an object is read is decided
once per type (``_kind``): cupy's and numba's device arrays by their
attributes, which costs less than making their interface (``interface_of``,
``key_interface``: the key of a view made again), the CPU simulator's by the
numpy array it wraps. ``geometry_reader`` reads what of an array's geometry
can change in place, for the call path. The memory an interface does not
describe lives here too: host memory treated as pinned where no driver can
pin it (``pinned_empty``, ``is_pinned``) and arrays of the simulator tagged
with another device (``sim_device``). ``_buffers.c`` takes in the common case
compiled, with this module's caches ``_kinds`` and ``_dtypes``
(``_compiled.buffers``).
"""
from __future__ import annotations

import math
import operator
import sys
import weakref

import numpy as np

from . import _driver
from .buffers import HOST, Buffer
from .errors import ArgumentError
from .probe import _attr, _has
from .static_attrs import getattr_static
from .weak_types import store

__all__ = ["as_buffer", "interface_of", "device_buffer", "is_array", "pinned_empty",
           "sim_device", "geometry_reader"]


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
# (sets: a type is found by identity, not by ``==``, which a metaclass may define)
_SCALARS = frozenset({int, float, bool, complex, str, type(None), list, tuple, dict})
_kinds: dict = {}   # type -> how its objects are told apart: decided once per type
# (weak_types.store: a class made at run time is not kept by it)


def _kind(obj) -> str:
    """``own`` (describes itself), ``sim`` (the simulator's device array), ``host``
    (a numpy array), ``scalar`` (never an array: ``_SCALARS``), ``cupy`` and
    ``numba`` (their device arrays, told apart by attributes), ``cai`` (another
    device array type) or ``other`` (asked object by object)."""
    t = type(obj)
    kind = _kinds.get(t)
    if kind is None:
        kind = store(_kinds, t, "own" if _has(t, "__graphtrace_buffer__") else \
            "sim" if t.__name__ == "FakeCUDAArray" else "host" if t is np.ndarray else \
            "scalar" if t in _SCALARS else "cupy" if _is_cupy_array_type(t) else \
            "numba" if _is_numba_array_type(t) else \
            "cai" if _has(t, "__cuda_array_interface__") else "other")
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
# array's shape, strides, dtype (set) and whether it is writeable (a graph writing a
# buffer made read-only since is refused, as a new one is), a cupy array's shape (set,
# its strides with it)
_numpy_view = operator.attrgetter("shape", "strides", "dtype", "flags.writeable")
_cupy_geometry = operator.attrgetter("shape", "strides")


def _numpy_owner(a) -> tuple:
    """A numpy array's geometry, and the address of one owning its memory, which
    ``resize(refcheck=False)`` moves (the same shape may come back at another address
    after two resizes)."""
    at = _ADDRESS[0](a)
    return a.shape, a.strides, a.dtype, a.flags.writeable, \
        a.__array_interface__["data"][0] if at is None else at


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


def _interface_geometry(obj):
    """Another array type's interface, all of it (a handle of the program's own
    answering that of the buffer it points at now, which may be another at the
    next call); None where it answers none now."""
    try:
        return obj.__cuda_array_interface__
    except AttributeError:
        return None


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
        read = store(_geometry_readers, t, _geometry_reader_of(obj))
    if read is None and t.__dictoffset__ and _kinds.get(t) == "other" and \
            isinstance(_attr(obj, "__dict__", {}).get("__cuda_array_interface__"), dict):
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
        return _own_interface(obj) is not None or _has(type(obj), "__dlpack_device__")
    except ReferenceError:   # a weak proxy whose object is gone: none
        return False


def _own_interface(obj):
    """The ``__cuda_array_interface__`` dict an object holds itself (set on it, not
    its class), or None: an object answering every attribute (a logger stub's
    ``__getattr__``, an attribute dict's, which raises KeyError) is no array."""
    try:
        getattr_static(obj, "__cuda_array_interface__")
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
        if _has(type(obj), "__dlpack_device__"):
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
    try:
        weakref.finalize(_memory(array), _untag, buf.lo, hi)
    except TypeError:   # (a graph's temporary: no memory of its own yet)
        raise ArgumentError(
            f"sim_device tags a device array allocated outside the graph function "
            f"(cuda.to_device, cuda.device_array), not {type(array).__name__}: a temporary "
            "lives on its stream's device, so make it there with s.on(d).empty(...) "
            "(or let the kernels using it place it)") from None
    for lo in [lo for lo, (end, _) in _sim_devices.items() if lo < hi and buf.lo < end]:
        del _sim_devices[lo]   # memory reused since, or tagged again
    _sim_devices[buf.lo] = (hi, int(device))
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

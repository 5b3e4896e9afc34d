"""Graph-owned temporaries: ``s.empty(shape, dtype)`` and ``s.zeros(shape, dtype)``.

Where their memory comes from, when the graph is built: ``temporary_memory.py``.

During the trace a temporary has no memory, yet the dependency inference
(``deps.py``) tells memory apart by address. So each temporary gets a virtual
address range from ``VIRTUAL_BASE`` (2**60) up, far above any address an
operating system or CUDA hands out (user space and CUDA's unified addresses
lie below 2**57); ranges are never reused in a process and a gap separates
neighbours, so a temporary never meets an argument nor another temporary.
The object the function gets (``Temporary``) has a geometry and makes views,
and nothing can read it: it refuses element reads, writes, host arithmetic and
array interfaces, and every use after its trace ended.
"""
from __future__ import annotations

import math
import operator
import threading

import numpy as np

from .buffers import Buffer
from .errors import ArgumentError, HostSyncError, TraceError, format_source
from .owners import _attributes, container, contents, own_class, own_object
from .probe import _has
from .scalar import Scalar
from .tree import children, leaves

__all__ = ["Temporary", "VIRTUAL_BASE", "LIBRARY_STATE", "COOPERATIVE", "HOST_ORDER", "is_virtual",
           "is_state", "reserve", "holder_of", "held_one", "held_temporaries", "no_pointer"]

VIRTUAL_BASE = 1 << 60
_LARGEST = 1 << 50                # bytes in one temporary at most (a PiB)
# Bytes just below the temporaries' that no memory has, read and written by nodes
# to order them: the state libraries keep (captured regions) and the cooperative
# launches of a graph, which run one at a time, and its host callbacks, which run in
# the order they were recorded (Tracer.library_state, .cooperative, .host_order)
LIBRARY_STATE, COOPERATIVE, HOST_ORDER = VIRTUAL_BASE - 1, VIRTUAL_BASE - 2, VIRTUAL_BASE - 3
_ALIGN = 256                      # cudaMalloc's alignment: any dtype, any vector load
_next, _lock = [VIRTUAL_BASE], threading.Lock()


def _aligned(n: int) -> int:
    return -(-max(n, 1) // _ALIGN) * _ALIGN


def reserve(nbytes: int) -> int:
    """A virtual address range of ``nbytes`` that nothing else will ever get."""
    with _lock:
        ptr = _next[0]
        _next[0] += _aligned(nbytes) + _ALIGN
    return ptr


def is_virtual(b: Buffer) -> bool:
    """Whether a view lies in a temporary (it has no memory until a graph places it)."""
    return b.lo >= VIRTUAL_BASE


def is_state(b: Buffer) -> bool:
    """Whether a view is one of the state bytes that only order nodes (no memory)."""
    return HOST_ORDER <= b.lo < VIRTUAL_BASE


class _Life:
    """What all views of one temporary share: its name, where it was made, its trace."""

    __slots__ = ("name", "source", "tracer", "alive", "failed", "kept")

    def __init__(self, name, source, tracer):
        self.name, self.source, self.tracer, self.alive = name, source, tracer, True
        self.failed = self.kept = None   # what its trace raised; where a failed one left it

    def where(self) -> str:
        return f"{self.name} (made at {format_source(self.source)})"

    def ended(self) -> str:
        """Why a use now is refused: its trace is over (how it ended, if it raised)."""
        head = f"temporary {self.where()} used after the trace of {self.tracer.name}"
        if self.failed is None:
            return (f"{head} ended: a temporary is the graph's own memory and exists only "
                    "inside the traced function; copy what you need into an array passed "
                    "in (s.copy) and use that")
        kept = self.kept or "an object the program keeps"
        return (f"{head} raised ({self.failed}): that trace stored it in {kept} before it "
                "raised, and a temporary exists only inside its trace (a trace that ends "
                "normally refuses keeping one at once): fix the error that trace raised, "
                "and drop the temporary from there (or store an array passed in, s.copy)")


def dead_temporary(value, label: str, fn_name: str):
    """A ``TraceError`` when ``value`` is a temporary whose trace is over, found at
    a call where ``fn_name`` reaches it by ``label`` (``store[0]``: a closure's
    list a helper stored it in): where it is kept and what to do, for the call's
    key would otherwise fail at the use with no word of where it is. Else None."""
    life = value._life if isinstance(value, Temporary) else None
    if life is None or life.alive:
        return None
    if life.failed is not None:   # (its trace raised: told with where it is kept)
        return TraceError(life.ended())
    kept = f"{life.kept}, which {fn_name} reaches as {label}" if life.kept else \
        f"{label}, which {fn_name} reaches by name"
    return TraceError(
        f"temporary {life.where()} is still kept by {kept}, after the trace of "
        f"{life.tracer.name} that made it ended: a temporary exists only inside its "
        f"trace, and {fn_name} cannot run while it is kept there; drop it from there "
        "(a call after that traces again), and keep an array passed in instead (s.copy "
        "the temporary into it in the trace)")


class _Interface:
    __slots__ = ("__array_interface__",)


class _Shadow(np.ndarray):
    """A shadow and its views print as what they are, reading nothing: a debugger
    or a test runner showing the locals of a frame (pytest's failure report shows
    those of graphtrace's) would otherwise read their virtual memory and fault."""

    def __repr__(self):
        return f"<shadow of a temporary: {self.dtype}{list(self.shape)}>"

    __str__ = __repr__

    def __format__(self, spec):
        return repr(self)


def _shadow(ptr: int, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """A numpy array at a virtual address: numpy computes views of it, and it is
    never read (a read would fault), so it never leaves ``Temporary``."""
    holder = _Interface()
    holder.__array_interface__ = {"data": (ptr, False), "shape": shape, "version": 3,
                                  "typestr": dtype.str,
                                  **({"descr": dtype.descr} if dtype.fields else {})}
    return np.asarray(holder).view(_Shadow)


_GEOMETRY = (np.shape, np.ndim, np.size)
# numpy functions making views, never copies (np.split(t, 2)): run on the shadow
_VIEWS = frozenset(getattr(np, n) for n in (
    "split array_split hsplit vsplit dsplit squeeze transpose swapaxes moveaxis rollaxis "
    "expand_dims atleast_1d atleast_2d atleast_3d flip fliplr flipud rot90 diagonal real "
    "broadcast_to").split())
# and those making views of some arrays alone: np.imag of a real array is a new one
_VIEWS_WHEN = {np.imag: np.iscomplexobj}
_READS = {"copy_to_host", "get", "item", "tolist", "copy", "sum", "tobytes", "to_host",
          "__array_struct__", "__dlpack__", "__dlpack_device__",
          # an array library's methods computing on (or filling) its values on the host
          "fill", "astype", "mean", "max", "min", "any", "all", "prod", "std", "var",
          "cumsum", "cumprod", "argmax", "argmin", "dot", "nonzero", "sort", "argsort",
          "clip", "round", "conj", "tofile", "dump", "set", "setflags"}


class _NoAttribute(ArgumentError, AttributeError):
    """An attribute a temporary has not (``hasattr`` answers False), at the user's line."""


class _HostRead(HostSyncError, AttributeError):
    """numpy's way to read values a temporary has not (``hasattr`` answers False, as
    for a name it lacks), at the user's line."""


class _NoPointer:
    """The ``data`` of a temporary's ``__cuda_array_interface__`` (a plain dict, as
    libraries require, so that ``hasattr(t, "__cuda_array_interface__")`` answers
    True and its geometry answers): it has no memory until the graph is compiled,
    so reading the pointer (``ptr, ro = cai["data"]``, ``cai["data"][0]``,
    ``int(...)``: a library taking the temporary, ``cupy.asarray(t)``,
    ``cuda.as_cuda_array(t)``, or a wrapper copying the interface) is refused."""

    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    def refuse(self, *_args, **_kw):
        raise HostSyncError(
            f"the device pointer of temporary {self._name} (its "
            "__cuda_array_interface__['data']) read inside a trace: its memory is laid "
            "out when the graph is compiled, and a library taking it would use it now, "
            "outside the graph; pass the temporary to kernels, s.copy and s.memset on "
            "the proxy stream")

    __getitem__ = __iter__ = __len__ = __int__ = __index__ = __float__ = __bool__ = refuse
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __contains__ = refuse
    __hash__ = object.__hash__

    def __repr__(self):
        return f"<the device pointer of graphtrace temporary {self._name}: none while tracing>"


def no_pointer(data) -> bool:
    """Whether ``data`` (an interface's) is a temporary's, which has no pointer."""
    return type(data) is _NoPointer


# numpy's names that would read its values, which a temporary lacks: refused as reads
_NUMPY_READS = frozenset({"flat", "take", "repeat", "compress", "choose", "searchsorted",
                          "trace", "ptp"})


class Temporary:
    """A graph-owned array (or a view of one), valid inside its trace only.

    Pass it to kernels, copies, memsets and conditions on a proxy stream, as
    any device array. It has ``shape``, ``dtype``, ``strides``, ``size``,
    ``ndim``, ``itemsize``, ``nbytes``, ``name``; basic slicing, ``reshape``
    (where numpy makes a view), ``ravel`` (of contiguous views), ``view(dtype)``,
    ``T``/``transpose``, ``swapaxes``, ``diagonal``, ``real``/``imag`` make
    views that move with it. It holds no values while tracing: reading, writing
    or computing with it on the host is an error, and so is any use once its
    trace has ended.
    """

    __slots__ = ("_shadow_", "_life")

    def __init__(self, shadow: np.ndarray, life: _Life):
        self._shadow_, self._life = shadow, life

    @property
    def _a(self) -> np.ndarray:
        life = self._life
        if not life.alive:
            raise TraceError(life.ended())
        return self._shadow_

    def _view(self, a: np.ndarray) -> "Temporary":
        return Temporary(a, self._life)

    def __graphtrace_buffer__(self) -> Buffer:
        """Its ``Buffer`` (graphtrace's view of an array argument), at its virtual address."""
        a = self._a
        return Buffer(a.__array_interface__["data"][0], a.shape, a.strides, a.dtype, None, None)

    # --- geometry ---------------------------------------------------------------
    @property
    def name(self) -> str:
        """Its name in listings: ``tmp0``, ``tmp1``... or the one given to ``s.empty``."""
        self._a   # noqa: B018  (refused after the trace, as any use)
        return self._life.name

    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    strides = property(lambda self: self._a.strides)
    size = property(lambda self: self._a.size)
    ndim = property(lambda self: self._a.ndim)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    T = property(lambda self: self._view(self._a.T))
    flags = property(lambda self: self._a.view().flags)   # (a view's: setting them does nothing)

    def is_c_contiguous(self) -> bool:
        return self._a.flags.c_contiguous

    def is_f_contiguous(self) -> bool:
        return self._a.flags.f_contiguous

    def __len__(self) -> int:
        return len(self._a)

    # --- views (numpy computes them on the shadow; none of them reads) ----------
    def __getitem__(self, key) -> "Temporary":
        a = self._a
        parts = key if isinstance(key, tuple) else (key,)
        if any(isinstance(k, (bool, np.bool_, list, np.ndarray)) or is_temporary(k)
               for k in parts):
            raise ArgumentError(
                f"temporary {self._life.name} indexed with {key!r}: only basic indexing "
                "(ints, slices, ..., None) makes a view of a temporary; index arrays "
                "would copy on the host")
        ints = sum(isinstance(k, (int, np.integer)) for k in parts)
        if ints == a.ndim and not any(k is Ellipsis or k is None for k in parts):
            raise HostSyncError(
                f"reading element {key!r} of temporary {self._life.name} inside a trace: "
                "it holds no values until the graph runs; use it on the device (a kernel), "
                "or s.copy it into pinned host memory and look at it in s.host(fn, ...)")
        return self._view(a[key])

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def reshape(self, *shape, order="C", _copies=False) -> "Temporary":
        a = self._a
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        shape = tuple(operator.index(n) for n in shape)
        if order not in ("C", "F"):
            raise ArgumentError(f"reshape of temporary {self._life.name} in order "
                                f"{order!r}: a temporary is reshaped in order 'C' or 'F'")
        if a.flags.f_contiguous if order == "F" else a.flags.c_contiguous:
            return self._view(a.reshape(shape, order=order))
        try:   # a strided view numpy reshapes as a view (a column: t[:, 1].reshape(4));
            if _copies:   # numpy's ravel copies every view that is not contiguous
                raise ValueError
            return self._view(a.reshape(shape, order=order, copy=False))
        except (TypeError, ValueError):   # (numpy before 2.1 takes no copy=)
            kind = "Fortran-" if order == "F" else ""
            raise ArgumentError(
                f"reshape in order {order!r} of a view of temporary {self._life.name} that "
                f"is not {kind}contiguous (strides {a.strides}) would copy it: reshape the "
                f"temporary itself, or a {kind}contiguous view of it" +
                (", or reshape in order 'C'" if a.flags.c_contiguous else "")) from None

    def ravel(self, order="C") -> "Temporary":
        return self.reshape(-1, order=order, _copies=True)

    def squeeze(self, axis=None) -> "Temporary":
        return self._view(self._a.squeeze(axis))

    def split(self, section: int) -> list:
        """Views of ``section`` elements each (the last one shorter), as numba's
        ``DeviceNDArray.split`` makes of a 1-D array."""
        a = self._a
        if a.ndim != 1:
            raise ArgumentError(f"split of temporary {self._life.name} of {a.ndim} "
                                "dimensions: split takes 1-D arrays; slice it instead")
        return [self._view(a[i:i + section]) for i in range(0, len(a), section)]

    def transpose(self, *axes) -> "Temporary":
        return self._view(self._a.transpose(*axes))

    def swapaxes(self, axis1: int, axis2: int) -> "Temporary":
        return self._view(self._a.swapaxes(axis1, axis2))

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> "Temporary":
        return self._view(self._a.diagonal(offset, axis1, axis2))

    @property
    def real(self) -> "Temporary":
        return self._view(self._a.real)

    @property
    def imag(self) -> "Temporary":
        """Of a complex temporary (of a real one numpy makes a new array of zeros)."""
        if not np.iscomplexobj(self._a):
            self._refuse()
        return self._view(self._a.imag)

    def view(self, dtype) -> "Temporary":
        return self._view(self._a.view(np.dtype(dtype)))

    # --- what would read it on the host -----------------------------------------
    def _refuse(self, *_args, **_kw):
        self._a   # noqa: B018  (after the trace, any use is refused as such)
        raise HostSyncError(
            f"temporary {self._life.name} used as host data inside a trace: it holds no "
            "values until the graph runs, and a library may not take it eagerly; pass it "
            "to kernels, s.copy and s.memset on the proxy stream")

    __array__ = __float__ = __int__ = __index__ = __bool__ = __complex__ = _refuse
    __array_ufunc__ = __contains__ = __round__ = __trunc__ = __floor__ = __ceil__ = _refuse
    def __array_function__(self, func, types, args, kwargs):
        """np.shape, np.ndim, np.size answer its geometry; any other numpy function
        (np.copyto(t, 1.0), np.sum(t): numpy hands it over) is refused."""
        if func in _GEOMETRY and args and args[0] is self:
            return func(self._a, *args[1:], **kwargs)
        if args and args[0] is self:
            # (never a copy: numpy would read the shadow's memory)
            if func in _VIEWS or func in _VIEWS_WHEN and _VIEWS_WHEN[func](self._a):
                return self._views(func(self._a, *args[1:], **kwargs))
            if func is np.reshape or func is np.ravel:   # may copy: the methods refuse it
                shape = [kwargs.pop(k) for k in ("shape", "newshape") if k in kwargs]
                return getattr(self, func.__name__)(*args[1:], *shape, **kwargs)
        self._refuse()

    def _views(self, out):   # what np.split(t, 2) gave of the shadow, as temporaries
        return type(out)(map(self._views, out)) if type(out) in (list, tuple) else self._view(out)

    @property
    def __cuda_array_interface__(self) -> dict:
        a = self._a
        return {"shape": a.shape, "typestr": a.dtype.str, "data": _NoPointer(self._life.name),
                "strides": a.strides, "version": 3,
                **({"descr": a.dtype.descr} if a.dtype.fields else {})}

    def __setitem__(self, *_args, **_kw):
        self._a   # noqa: B018  (after the trace, any use is refused as such)
        raise HostSyncError(
            f"writing into temporary {self._life.name} on the host inside a trace: it is "
            "device memory the graph owns, written when the graph runs; write it on the "
            "proxy stream: in a kernel, with s.memset, or s.copy from an array passed in")

    __hash__ = object.__hash__   # (== is refused with numbers and arrays: below)

    def __getattr__(self, name):
        self._a   # noqa: B018  (after the trace, any use is refused as such)
        if name in _READS:
            self._refuse()
        if name == "copy_to_device":
            return self.__setitem__
        if name == "__array_interface__":   # (hasattr answers False: no host memory)
            raise _HostRead(f"temporary {self._life.name} taken as host memory inside a "
                            "trace (its __array_interface__): it is device memory the graph "
                            "owns, holding no values until the graph runs; pass it to "
                            "kernels, s.copy and s.memset on the proxy stream")
        if name in _NUMPY_READS:
            raise _HostRead(f"{name} of temporary {self._life.name} would read it on the host "
                            "inside a trace: it holds no values until the graph runs; pass it "
                            "to kernels, s.copy and s.memset on the proxy stream")
        if name == "flatten":   # (a copy, always)
            raise ArgumentError(f"flatten of temporary {self._life.name} would copy it, "
                                "reading it on the host: ravel() or reshape(-1) make views")
        raise _NoAttribute(f"a graphtrace temporary has no attribute {name!r}: it is a "
                           "device array's geometry while tracing, with its views (slices, "
                           "reshape, ravel, T, transpose, swapaxes, diagonal, view, real, "
                           "squeeze, split)")

    def __repr__(self):
        life = self._life
        if not life.alive:
            return f"<graphtrace temporary {life.name} (its trace has ended)>"
        a = self._shadow_
        return f"<graphtrace temporary {life.name}: {a.dtype}{list(a.shape)}>"


def _operate(t: Temporary, spelled: str, other=None):
    """Refuse host arithmetic, a comparison or an in-place update of a temporary
    (``spelled``: ``"{} + ..."``, ``"-{}"``, ``"{} += ..."``); ``==`` and ``!=`` with
    what is no number nor array (another temporary too) compare identities, as for
    any object, so that lists and dicts of temporaries work."""
    t._a   # noqa: B018  (after the trace, any use is refused as such)
    if spelled[3:5] in ("==", "!=") and (is_temporary(other) or not (isinstance(
            other, (int, float, complex, np.generic, np.ndarray))
            or _has(type(other), "__cuda_array_interface__"))):
        return NotImplemented
    update = spelled.endswith("= ...") and spelled[3:5] not in ("==", "!=", "<=", ">=")
    raise HostSyncError(
        f"{spelled.format(t._life.name)} on the host inside a trace: a temporary holds "
        "no values until the graph runs; do it on the device, in a kernel launched on the "
        "proxy stream" + ("" if update else " (its result in another temporary, s.empty)"))


def _operator(spelled: str):
    return lambda self, other=None, *_: _operate(self, spelled, other)


for _name, _op in {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//",
                   "mod": "%", "pow": "**", "matmul": "@", "and": "&", "or": "|",
                   "xor": "^", "lshift": "<<", "rshift": ">>"}.items():
    setattr(Temporary, f"__{_name}__", _operator(f"{{}} {_op} ..."))
    setattr(Temporary, f"__r{_name}__", _operator(f"... {_op} {{}}"))
    setattr(Temporary, f"__i{_name}__", _operator(f"{{}} {_op}= ..."))
for _name, _spelled in {"lt": "{} < ...", "le": "{} <= ...", "gt": "{} > ...",
                        "ge": "{} >= ...", "eq": "{} == ...", "ne": "{} != ...",
                        "neg": "-{}", "pos": "+{}", "abs": "abs({})", "invert": "~{}",
                        "divmod": "divmod({}, ...)", "rdivmod": "divmod(..., {})"}.items():
    setattr(Temporary, f"__{_name}__", _operator(_spelled))


def is_temporary(v) -> bool:
    return type(v) is Temporary


def make(tracer, shape, dtype, name: str, source) -> tuple[Temporary, Buffer]:
    """A new temporary and its root ``Buffer`` (its own base, labelled ``name``)."""
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    try:
        dims = tuple(operator.index(n) for n in dims)
    except TypeError:
        raise ArgumentError(f"temporary shape must be an int or a tuple of ints, not "
                            f"{shape!r}") from None
    if any(n < 0 for n in dims):
        raise ArgumentError(f"temporary shape {dims} has a negative size")
    if dtype is Scalar:   # type(a) of a dynamic scalar reached by another way
        raise ArgumentError("a temporary's dtype is the type of a dynamic scalar's "
                            "stand-in (type(a) cannot answer for a dynamic scalar): pass "
                            "the dtype itself (np.float32), a.dtype of a numpy number, or "
                            "make the number static (@graph(static=...))")
    try:
        dtype = np.dtype(dtype)
    except (TypeError, ValueError) as e:
        raise ArgumentError(f"a temporary's dtype {dtype!r} is no numpy dtype ({e}): pass "
                            "one such as np.float32 or 'float32'") from None
    if dtype.hasobject:
        raise ArgumentError(f"a temporary cannot hold Python objects ({dtype})")
    if dtype.subdtype is not None:   # as numpy's zeros: float32 of shape + (2,)
        dtype, inner = dtype.subdtype
        dims += inner
    nbytes = math.prod(dims) * dtype.itemsize
    if nbytes > _LARGEST:   # (and no virtual range runs past the top of the address space)
        raise ArgumentError(f"temporary shape {dims} of {dtype} would take {nbytes:.3g} bytes, "
                            "more than any GPU holds: check the shape")
    ptr = reserve(nbytes)
    root = Buffer(ptr, dims, None, dtype, None, None)   # its device: placement.py
    root.label = name
    return Temporary(_shadow(ptr, dims, dtype), _Life(name, source, tracer)), root


def holder_of(value, tracer):
    """A temporary of ``tracer``'s trace that ``value`` holds (itself, in lists,
    tuples, dicts and the standard library's other containers, in the attributes
    of an object or a class of the program's own, those of any object ``value``
    is), ``_HOLDER_DEPTH`` levels deep at most, or None."""
    if is_temporary(value):
        return value if value._life.tracer is tracer else None
    if not getattr(tracer, "_temps", True):   # none made yet: none held anywhere
        return None
    return held_one(value, lambda v: is_temporary(v) and v._life.tracer is tracer)


def held_one(value, wanted, depth: int = 0, seen: set | None = None):
    """The first object ``wanted(object)`` says yes to that ``value`` is or holds,
    found as ``holder_of`` finds a temporary; or None."""
    if wanted(value):
        return value
    seen = set() if seen is None else seen
    if depth > _HOLDER_DEPTH or id(value) in seen:
        return None
    seen.add(id(value))
    items = children(value)   # a dict or list holding it itself (LAST["a"] = a)
    for v in (v for _, v in items) if items is not None else ():
        if wanted(v):
            return v
    for v in _held(value, depth):
        found = held_one(v, wanted, depth + 1, seen)
        if found is not None:
            return found
    return None


_HOLDER_DEPTH = 8


def _held(value, depth: int) -> list:
    """What ``holder_of`` walks in ``value``: a container's items (none where they
    are numbers or arrays alone), an object's attributes (any object's at the top,
    those of the program's own below), a class's of the program's own."""
    items = children(value)
    if items is None and container(type(value)):
        items = contents(value, "")
    if items is not None:
        kinds = {type(v) for _, v in items}
        return [v for _, v in items] if any(
            issubclass(k, _WALKED) or own_class(k) or container(k) for k in kinds) else []
    if isinstance(value, type):
        return [v for k, v in vars(value).items() if k[:2] != "__"] \
            if own_class(value) else []
    if own_object(value) or depth == 0 and type(value).__module__ != "builtins":
        return [v for _, v in _attributes(value)]
    return []


_WALKED = (Temporary, list, tuple, dict, type)   # items a container is walked for


def held_temporaries(value, tracer, depth: int = 0, seen: set | None = None, steps=()):
    """``(steps, temporary)`` for each temporary of ``tracer``'s trace that ``value``
    holds where ``holder_of`` looks, with the steps reaching it from ``value``:
    ``("attr", name)`` (an object's or a class's attribute) or ``("item", keys)``
    (the keys reading it: a list's or tuple's index from either end; None for a
    container other than a list, tuple or dict). A host callback holding one is
    refused where its code reaches it that way (``ops/host.py``)."""
    if is_temporary(value):
        if value._life.tracer is tracer:
            yield steps, value
        return
    seen = set() if seen is None else seen
    if depth > _HOLDER_DEPTH or id(value) in seen:
        return
    seen.add(id(value))
    held = _held(value, depth)
    if not held:
        return
    items = children(value)
    if items is not None:
        n = len(items) if isinstance(value, (list, tuple)) else None
        named = [(("item", frozenset((k,) if n is None else (k, k - n))), v) for k, v in items]
    elif isinstance(value, type) or not container(type(value)):
        named = [(("attr", k), v) for k, v in (
            [(k, v) for k, v in vars(value).items() if k[:2] != "__"]
            if isinstance(value, type) else _attributes(value))]
    else:
        named = [(("item", None), v) for v in held]
    for step, v in named:
        yield from held_temporaries(v, tracer, depth + 1, seen, steps + (step,))


def returned(result) -> Temporary | None:
    """A temporary among the leaves of what a traced function returned."""
    return next((v for v in leaves(result) if is_temporary(v)), None)


# --- memory, placed by each kind of compiled graph --------------------------------

"""Host arrays as a traced function receives them: their values cannot be read
while tracing.

A number read from a host argument during the trace (``params[0]``) would be
baked into the graph, and a later call with another array, or with this one
changed, would not see it; reading a device array's values is refused for the
same reason (``_guards.py``). The function receives each numpy argument as a
``TracedHostArray`` view of it: the same memory, usable as an array in every op
(``s.copy``, ``s.host``, kernel arguments, slicing, shapes), whose values refuse
to be read while a trace is running and read as usual afterwards (a host
callback receives it at run time).

What passes is listed, and everything else of ``np.ndarray`` is refused, so a
method numpy adds later is refused too rather than read in silence:

- metadata (``shape``, ``dtype``, ``strides``, ``flags``, ``len``, the array
  interfaces that give the address, which ops and kernels need);
- views (slices, rows, ``reshape``, ``ravel``, ``T``, ``transpose``,
  ``swapaxes``, ``squeeze``, ``diagonal``, ``view``, ``real``, ``imag``, and
  numpy's functions that only make views, ``np.reshape``, ``np.broadcast_to``);
- copies made by the array's own methods (``copy``, ``flatten``): they are
  guarded as well, a snapshot of the first call's values that cannot be read;
- printing (``repr``, ``str``, ``format``), which decides nothing.

Refused while tracing, at the user's line: every method or attribute that
gives a value or an array of values (``item``, ``tolist``, ``flat``, ``take``,
``argmax``, ``dot``, ``nonzero``, ``astype``, ``data``, ``base``, which is the
caller's own array, ``__array__``, pickling), arithmetic and comparisons
(ufuncs), numpy functions other than those above, and writes (``p[0] = v``,
``fill``, ``put``, ``sort``, which would change the caller's array once, at
trace time, and never on a replay).
"""
from __future__ import annotations

import sys
import threading

import numpy as np

from .context import current_tracer
from .errors import HostSyncError, _is_internal

__all__ = ["TracedHostArray", "guarded", "plain", "written_view"]

# numpy functions that read no values: shapes, types, memory, new arrays like it
_METADATA = frozenset({np.shape, np.ndim, np.size, np.result_type, np.may_share_memory,
                       np.shares_memory, np.empty_like, np.zeros_like, np.ones_like,
                       np.full_like, np.iscomplexobj, np.isrealobj})


def _functions(module, *names) -> frozenset:
    return frozenset(f for f in (getattr(module, n, None) for n in names) if f is not None)


# numpy functions that make views (or, for a layout that needs one, a guarded
# copy) and read no value to decide what: their results pass, as guarded arrays
_VIEWS = _functions(np, "reshape", "ravel", "transpose", "permute_dims", "matrix_transpose",
                    "swapaxes", "moveaxis", "rollaxis", "squeeze", "expand_dims",
                    "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_to",
                    "broadcast_arrays", "diagonal", "diag", "split", "array_split", "hsplit",
                    "vsplit", "dsplit", "unstack", "flip", "fliplr", "flipud", "rot90",
                    "real", "imag") | \
    _functions(np.linalg, "matrix_transpose", "diagonal") | \
    _functions(np.lib.stride_tricks, "sliding_window_view")

# What of np.ndarray passes as it is: Python's object machinery, numpy's
# protocols (the address and geometry, never the values), metadata, views and
# copies that stay guarded, and what the class defines itself (printing,
# elements, rows). Every other name of np.ndarray is refused (_refusing), but
# for numpy's private helpers (_private).
_ALLOWED = frozenset({
    "__class__", "__class_getitem__", "__delattr__", "__dir__", "__doc__",
    "__getattribute__", "__getstate__", "__hash__", "__init__", "__init_subclass__",
    "__new__", "__setattr__", "__sizeof__", "__subclasshook__",
    "__array_finalize__", "__array_function__", "__array_interface__",
    "__array_namespace__", "__array_priority__", "__array_struct__", "__array_ufunc__",
    "__array_wrap__", "__dlpack_device__", "__buffer__", "__release_buffer__",
    "shape", "ndim", "dtype", "size", "itemsize", "nbytes", "strides", "flags", "ctypes",
    "device", "setflags", "__len__",
    "T", "mT", "view", "reshape", "ravel", "transpose", "swapaxes", "squeeze", "diagonal",
    "getfield", "to_device", "copy", "flatten", "__copy__", "__deepcopy__",
    "real", "imag", "__getitem__", "__iter__", "__repr__", "__str__", "__format__"})


_QUIET = threading.local()   # .on: this thread runs an allowed numpy function


def _source() -> tuple:
    """The user's line: the innermost frame outside graphtrace and numpy (and the
    other libraries ``errors._is_internal`` skips)."""
    f = sys._getframe(2)
    while f is not None and _is_internal(f.f_code.co_filename):
        f = f.f_back
    return ("<unknown>", 0) if f is None else (f.f_code.co_filename, f.f_lineno)


def _refuse(a) -> None:
    """Refuse reading ``a``'s values while tracing, with its class's message."""
    if current_tracer() is not None and not getattr(_QUIET, "on", False):
        source = _source()
        refusal = a._refusal
        said = _ARGUMENT if refusal is None else refusal(source)
        if said is not None:   # (None: a read the refusal lets through)
            raise HostSyncError(said, source)


_ARGUMENT = (
    "the values of a host array argument are read while tracing: they would be "
    "baked into the graph, and a later call with another array (or this one "
    "changed) would not see them; pass the numbers as arguments of their own (a "
    "number, or a tuple such as tuple(params), in static= where Python code "
    "decides on it: an array named in static= is still an array), decide on the "
    "device, or read the array in a host callback (s.host)")


class TracedHostArray(np.ndarray):
    """A numpy argument as the traced function sees it (see the module).
    ``_refusal``: None for an argument; for an array a node of the trace writes
    (``written_hosts.py``), the message of a read at a ``(file, line)``."""

    _refusal = None

    def __getitem__(self, key):
        out = super().__getitem__(key)
        if not isinstance(out, np.ndarray):   # an element: its value
            _refuse(self)
        return out

    def __iter__(self):
        if self.ndim < 2:   # its elements (rows of a larger array are views)
            _refuse(self)
        return super().__iter__()

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _refuse(self)
        inputs = tuple(plain(x) for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(plain(x) for x in kwargs["out"])
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if current_tracer() is None or getattr(_QUIET, "on", False):
            return super().__array_function__(func, types, args, kwargs)
        if func in _METADATA or func in _VIEWS:
            # Its own code may call numpy functions on the arrays (np.full_like
            # fills the new array with np.copyto): those read nothing either.
            _QUIET.on = True
            try:
                out = super().__array_function__(func, types, args, kwargs)
            finally:
                _QUIET.on = False
            if func in _METADATA or out is NotImplemented:   # another type's to answer
                return out
            out = _guarded_views(out, args, kwargs)
            if out is not None:
                return out
        _refuse(self)   # before it runs: np.copyto(p, 0) would write the caller's array

    def __repr__(self):   # printing bakes nothing in
        return repr(self.view(np.ndarray))

    def __str__(self):
        return str(self.view(np.ndarray))

    def __format__(self, spec):
        return format(self.view(np.ndarray), spec)


def _private(name: str) -> bool:
    """Whether ``name`` is numpy's own helper, which its C code calls on the
    array by name (numpy 2.5's ``view(dtype)`` calls ``_set_dtype``): refusing
    it would refuse what called it; a program does not call it."""
    return name.startswith("_") and not name.startswith("__")


def _refusing(name: str, slot):
    """``np.ndarray``'s ``name`` as a method or attribute refused while tracing."""
    if hasattr(slot, "__set__"):   # an attribute (flat, data, base): reading and setting
        def get(self):
            _refuse(self)
            return slot.__get__(self, type(self))

        def set_(self, value):
            _refuse(self)
            slot.__set__(self, value)
        return property(get, set_, doc=slot.__doc__)

    def method(self, *args, **kwargs):
        _refuse(self)
        return slot(self, *args, **kwargs)
    method.__name__, method.__doc__ = name, slot.__doc__
    method.__qualname__ = f"TracedHostArray.{name}"
    return method


def _writes_refused(slot):
    """A view attribute (real, imag) read as it is; setting it writes values."""
    def set_(self, value):
        _refuse(self)
        slot.__set__(self, value)
    return property(lambda self: slot.__get__(self, type(self)), set_, doc=slot.__doc__)


for _name, _slot in vars(np.ndarray).items():
    if _name not in _ALLOWED and (callable(_slot) or hasattr(_slot, "__get__")) and \
            not _private(_name):
        setattr(TracedHostArray, _name, _refusing(_name, _slot))
for _name in ("real", "imag"):
    setattr(TracedHostArray, _name, _writes_refused(vars(np.ndarray)[_name]))
del _name, _slot


def _guarded_views(out, args, kwargs):
    """``out`` (an array, or a list or tuple of them) with each plain view of a
    guarded argument guarded too, if every part is such a view or guarded
    already; None if a part is a plain array of new values (np.diag of a 1-D
    array), which would give them away."""
    bases = [a for a in (*args, *kwargs.values()) if isinstance(a, TracedHostArray)]
    many = isinstance(out, (list, tuple))
    outs = out if many else (out,)
    if not outs or not all(isinstance(o, TracedHostArray) or isinstance(o, np.ndarray) and
                           any(np.may_share_memory(o, b) for b in bases) for o in outs):
        return None
    outs = [guarded(o) for o in outs]
    return type(out)(outs) if many else outs[0]


def plain(x):
    """A guarded array as the ordinary numpy array it views (what a host callback
    receives); anything else as it is."""
    return x.view(np.ndarray) if isinstance(x, TracedHostArray) else x


def written_view(a: np.ndarray, refusal) -> TracedHostArray:
    """A view of host array ``a`` whose values refuse to be read while tracing,
    saying ``refusal((file, line))`` of the read (``written_hosts.py``): a class of
    its own, which its views and slices keep."""
    cls = type("WrittenHostArray", (TracedHostArray,),
               {"_refusal": staticmethod(refusal), "__module__": __name__})
    return np.ndarray.view(a, cls)


def guarded(v):
    """``v`` as the traced function receives it: a host numpy array as a
    ``TracedHostArray`` view; anything else as it is."""
    if type(v) is np.ndarray:
        return v.view(TracedHostArray)
    return v

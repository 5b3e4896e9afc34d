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
"""
from __future__ import annotations

import os
import sys

import numpy as np

from .context import current_tracer
from .errors import HostSyncError, _is_internal

__all__ = ["TracedHostArray", "guarded", "plain"]

# numpy functions that read no values: shapes, types, memory, new arrays like it
_METADATA = frozenset({np.shape, np.ndim, np.size, np.result_type, np.may_share_memory,
                       np.shares_memory, np.empty_like, np.zeros_like, np.ones_like,
                       np.full_like, np.iscomplexobj, np.isrealobj})


_NUMPY_DIR = os.path.dirname(np.__file__)


def _source() -> tuple:
    """The user's line: the innermost frame outside graphtrace and numpy."""
    f = sys._getframe(2)
    while f is not None and (_is_internal(f.f_code.co_filename) or
                             f.f_code.co_filename.startswith(_NUMPY_DIR)):
        f = f.f_back
    return ("<unknown>", 0) if f is None else (f.f_code.co_filename, f.f_lineno)


def _refuse() -> None:
    if current_tracer() is not None:
        raise HostSyncError(
            "the values of a host array argument are read while tracing: they would be "
            "baked into the graph, and a later call with another array (or this one "
            "changed) would not see them; pass the numbers as arguments of their own (a "
            "number or tuple in static= where Python code decides on it), decide on the "
            "device, or read the array in a host callback (s.host)",
            _source())


class TracedHostArray(np.ndarray):
    """A numpy argument as the traced function sees it (see the module)."""

    def __getitem__(self, key):
        out = super().__getitem__(key)
        if not isinstance(out, np.ndarray):   # an element: its value
            _refuse()
        return out

    def __iter__(self):
        if self.ndim < 2:   # its elements (rows of a larger array are views)
            _refuse()
        return super().__iter__()

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _refuse()
        inputs = tuple(x.view(np.ndarray) if isinstance(x, TracedHostArray) else x
                       for x in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        out = super().__array_function__(func, types, args, kwargs)
        if func not in _METADATA and current_tracer() is not None and \
                not _views_of(out, args, kwargs):   # np.reshape, np.ravel: views pass
            _refuse()
        return out

    def __repr__(self):   # printing bakes nothing in
        return repr(self.view(np.ndarray))

    def __str__(self):
        return str(self.view(np.ndarray))

    def __format__(self, spec):
        return format(self.view(np.ndarray), spec)

    def _value(self, name):
        _refuse()
        return getattr(self.view(np.ndarray), name)

    def item(self, *args):
        return self._value("item")(*args)

    def tolist(self):
        return self._value("tolist")()

    def tobytes(self, order="C"):
        return self._value("tobytes")(order)

    def __float__(self):
        return float(self._value("__float__")())

    def __int__(self):
        return int(self._value("__int__")())

    def __index__(self):
        return self._value("__index__")()

    def __complex__(self):
        return complex(self._value("__complex__")())

    def __bool__(self):
        return bool(self._value("__bool__")())


def _views_of(out, args, kwargs) -> bool:
    """Whether ``out`` (an array, or a list or tuple of them) is only views of the
    guarded arrays among the arguments: no value was read to make it."""
    bases = [a for a in (*args, *kwargs.values()) if isinstance(a, TracedHostArray)]
    outs = out if isinstance(out, (list, tuple)) else (out,)
    return bool(outs) and all(isinstance(o, np.ndarray) and
                              any(np.may_share_memory(o, b) for b in bases) for o in outs)


def plain(x):
    """A guarded array as the ordinary numpy array it views (what a host callback
    receives); anything else as it is."""
    return x.view(np.ndarray) if isinstance(x, TracedHostArray) else x


def guarded(v):
    """``v`` as the traced function receives it: a host numpy array as a
    ``TracedHostArray`` view; anything else as it is."""
    if type(v) is np.ndarray:
        return v.view(TracedHostArray)
    return v

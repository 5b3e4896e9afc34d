"""A captured region on the simulator (``CapturedOp.simulate``).

There ``fn`` runs on the CPU with numpy views of the device arrays. On a GPU it
is captured, not run: a host read of device data in its code (``if x[0] > 0``,
``float(x.sum())``, ``x.item(0)``, ``print(x)``) is a ``gt.CaptureError``
there. The views it is handed here (``DeviceView``) refuse those reads the same
way: indexing one element or reducing gives a 0-d array, as cupy does, and
turning one into a Python value (``bool``, ``float``, ``int``, ``.item()``,
``.tolist()``, ``str``, a slice bound) from the region's own code is refused; numpy
functions answering about device data (``np.dot``, ``np.linalg.norm``,
``np.allclose``) answer with views too, and a selection whose size depends on the
data (``x[x > 0]``, ``np.nonzero``, ``np.unique``), which cupy synchronises for, is
refused from the region's own code. numpy's own
Python code (``np.allclose``'s internals, array printing) and graphtrace's may
still convert them, and so may an assignment or an index (``y[0] =
x.sum()``, ``x[k[0]]``), which cupy does on the device.

What the simulator cannot show: it runs the region's Python at every launch,
where a GPU runs it only when it captures the region (the graph built, new
arrays or numbers for it, library state moved) and replays the GPU work
captured at the other launches; a host value the region computes anew each
time (``next(counter)``, a draw, a clock) changes at each call here but is
frozen on a GPU (``region_draws`` warns for draws and clocks).
"""
from __future__ import annotations

import sys
import threading

import numpy as np

from .._guards import cupy_calls, needs_gpu
from ..errors import LIBRARY_DIRS, CaptureError, SimulationError, _is_internal, format_source
from ..tree import tree_map
from .base import callable_name
from .host import raised_in

__all__ = ["DeviceView", "device_views", "plain_views", "HostRead", "host_read_error",
           "simulation_error"]

_state = threading.local()   # .quiet: inside a view's own indexing (numpy converts there)


class HostRead(Exception):
    """A region's code read device data on the host (``spelled``, at ``source``)."""

    def __init__(self, spelled: str, source: tuple, advice: str = ""):
        super().__init__(spelled)
        self.spelled, self.source, self.advice = spelled, source, advice


def _user_line(depth: int):
    """The line of the code converting, where it is the user's own (not numpy's,
    another library's, the standard library's or graphtrace's), else None."""
    if getattr(_state, "quiet", 0):
        return None
    f = sys._getframe(depth)
    file = f.f_code.co_filename
    if _is_internal(file) or file.startswith(LIBRARY_DIRS):
        return None
    return file, f.f_lineno


def _read(spelled: str, base):
    def read(self, *args, **kwargs):
        line = _user_line(2)
        if line is not None:
            raise HostRead(spelled, line)
        return base(self, *args, **kwargs)
    read.__name__ = base.__name__
    return read


class _Quiet:
    def __enter__(self):
        _state.quiet = getattr(_state, "quiet", 0) + 1

    def __exit__(self, *exc):
        _state.quiet -= 1
        return False


# numpy functions answering with a host value about an array's shape or type, not its
# data (cupy's answer is a host value too)
_HOST_ANSWERS = frozenset(getattr(np, n) for n in (
    "shape", "ndim", "size", "iscomplexobj", "isrealobj", "may_share_memory",
    "shares_memory", "result_type", "can_cast", "min_scalar_type") if hasattr(np, n))

# numpy functions whose result's size depends on the data: cupy reads the size back
# to the host (a synchronisation), which fails while a stream is captured
_SIZED_BY_DATA = frozenset(getattr(np, n) for n in (
    "nonzero", "flatnonzero", "argwhere", "extract", "compress", "unique",
    "unique_values", "unique_counts", "unique_inverse", "unique_all", "setdiff1d",
    "intersect1d", "union1d", "setxor1d", "trim_zeros") if hasattr(np, n))

_SIZED_ADVICE = (
    "the size of its result depends on the data, so cupy reads that size back to the "
    "host, a synchronisation, which fails while a GPU captures the region. Keep the "
    "shapes fixed: a mask in place of the selection (y[...] = np.where(x > 0, x, 0), "
    "y[x > 0] = 0, (x > 0).sum()), or do it after the graph call")


def _device(value):
    """``value`` (a numpy function's or method's answer about device data) with each
    array, numpy scalar and Python number a ``DeviceView``, as cupy answers."""
    if isinstance(value, DeviceView):
        return value
    if isinstance(value, np.ndarray):
        return value.view(DeviceView)
    if isinstance(value, (np.generic, bool, int, float, complex)):
        return np.asarray(value).view(DeviceView)
    if isinstance(value, tuple):
        items = [_device(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, list):
        return [_device(v) for v in value]
    return value


def _sized_by_data(key) -> bool:
    """Whether index ``key`` selects by a boolean mask (an array of bools)."""
    keys = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, np.ndarray) and k.dtype == np.bool_ and k.ndim > 0
               for k in keys)


def _slice_bound(key) -> bool:
    """Whether index ``key`` has a slice bound of device data (``y[:n]``, ``n`` a
    0-d ``DeviceView``), which cupy turns into a Python value, a host read."""
    keys = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, slice) and any(
        isinstance(b, DeviceView) for b in (k.start, k.stop, k.step)) for k in keys)


def _check_key(key, selecting: bool):
    """Refuse index ``key`` used by the region's own code where a GPU reads device
    data on the host for it (a slice bound; a boolean mask, when ``selecting``)."""
    if _slice_bound(key):
        line = _user_line(3)
        if line is not None:
            raise HostRead("a slice bound of device data: y[:n]", line)
    if selecting and _sized_by_data(key):
        line = _user_line(3)
        if line is not None:
            raise HostRead("a boolean mask selecting: x[x > 0]", line, _SIZED_ADVICE)


def _answer(base, spelled: str = ""):
    """Method ``base`` of ndarray answering in ``DeviceView``s (refused from the
    region's own code where ``spelled``: its result's size depends on the data)."""
    def answer(self, *args, **kwargs):
        if spelled:
            line = _user_line(2)
            if line is not None:
                raise HostRead(spelled, line, _SIZED_ADVICE)
        return _device(base(self, *args, **kwargs))
    answer.__name__ = base.__name__
    return answer


class DeviceView(np.ndarray):
    """A numpy view standing for a device array in a region on the simulator."""

    def __array_wrap__(self, obj, context=None, return_scalar=False):
        return obj.view(DeviceView) if isinstance(obj, np.ndarray) else obj

    def __array_function__(self, func, types, args, kwargs):
        if func in _SIZED_BY_DATA or (func is np.where and len(args) + len(kwargs) == 1):
            line = _user_line(2)
            if line is not None:
                raise HostRead(f"np.{func.__name__}(...)", line, _SIZED_ADVICE)
        result = super().__array_function__(func, types, args, kwargs)
        return result if func in _HOST_ANSWERS else _device(result)

    def __getitem__(self, key):
        _check_key(key, True)
        with _Quiet():
            got = super().__getitem__(key)
        return np.asarray(got).view(DeviceView) if isinstance(got, np.generic) else got

    def __setitem__(self, key, value):
        _check_key(key, False)
        with _Quiet():
            super().__setitem__(key, value)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self)))

    __bool__ = _read("an array's truth: if x[0] > 0, bool(x)", np.ndarray.__bool__)
    __float__ = _read("float(...)", np.ndarray.__float__)
    __int__ = _read("int(...)", np.ndarray.__int__)
    __complex__ = _read("complex(...)", np.ndarray.__complex__)
    __index__ = _read("an index of a Python value", np.ndarray.__index__)
    item = _read(".item()", np.ndarray.item)
    tolist = _read(".tolist()", np.ndarray.tolist)
    __str__ = _read("str(...) or print(...)", np.ndarray.__str__)
    __repr__ = _read("repr(...)", np.ndarray.__repr__)
    __format__ = _read("a format (f-string)", np.ndarray.__format__)
    nonzero = _answer(np.ndarray.nonzero, "x.nonzero()")
    compress = _answer(np.ndarray.compress, "x.compress(...)")
    argmax, argmin = _answer(np.ndarray.argmax), _answer(np.ndarray.argmin)
    dot, trace = _answer(np.ndarray.dot), _answer(np.ndarray.trace)
    searchsorted = _answer(np.ndarray.searchsorted)


def device_views(args):
    """``args`` (the simulator's numpy views) with each array a ``DeviceView``."""
    return tree_map(lambda v: v.view(DeviceView) if type(v) is np.ndarray else v, args)


def plain_views(value):
    """``value`` (what a region returned) with each ``DeviceView`` numpy's own."""
    return tree_map(lambda v: v.view(np.ndarray) if isinstance(v, DeviceView) else v, value)


def host_read_error(node, e: HostRead) -> CaptureError:
    """A GPU's error for a host read ``e`` in region ``node``'s code, on the simulator."""
    return CaptureError(
        f"captured region {callable_name(node.target)} (recorded at "
        f"{format_source(node.source)}) reads device data on the host at "
        f"{format_source(e.source)} ({e.spelled}): " + (e.advice or (
            "on a GPU the region is captured when the graph is built, not run, so this is "
            "a CaptureError there, and the simulator refuses it too. Compute it on the "
            "device (y[...] = np.where(x[0] > 0, 1.0, -1.0), y[...] = x.sum()), or read "
            "it after the graph call")), source=e.source)


def _from_library(e: BaseException, line: tuple) -> bool:
    """Whether error ``e`` comes from an array library's call: raised in numpy's,
    cupy's or torch's code, about a numpy array (a method cupy has and numpy lacks,
    ``x.get()``), or at a line naming cupy or torch."""
    tb = e.__traceback__
    while tb is not None:
        mod = str(tb.tb_frame.f_globals.get("__name__")).split(".")[0]
        if mod in ("numpy", "cupy", "cupyx", "torch"):
            return True
        tb = tb.tb_next
    if "ndarray" in str(e) or "numpy" in str(e):
        return True
    try:
        with open(line[0], encoding="utf-8") as f:
            text = f.read().splitlines()[line[1] - 1]
    except (OSError, IndexError, TypeError):
        return False
    return any(w in text for w in ("cp.", "cupy", "cupyx", "torch", "xp."))


def simulation_error(node, e: BaseException) -> SimulationError:
    """The error for region ``node`` whose code raised ``e`` on the simulator."""
    name = callable_name(node.target)
    tb = e.__traceback__
    if isinstance(e, TypeError) and tb is not None and tb.tb_next is None:
        return SimulationError(   # calling fn itself failed (its arity, keywords)
            f"captured region {name} could not be called with the {len(node.args)} "
            f"argument{'s' * (len(node.args) != 1)} s.captured gave it ({e}): "
            f"s.captured({name.rsplit('.', 1)[-1]}, *args) calls "
            f"{name.rsplit('.', 1)[-1]}(*args), so pass it the arguments it takes, in order",
            source=node.source)
    line = raised_in(e, node.source)
    gpu = needs_gpu(e) and cupy_calls(e)   # cupy's own call, with no GPU here
    if not gpu and not _from_library(e, line):
        return SimulationError(
            f"captured region {name} failed at {format_source(line)} ({type(e).__name__}: "
            f"{e}): an error in the region's own code, which a GPU meets too when it "
            "captures the region; fix it there", source=node.source)
    why = (f"cupy's library call there ({gpu[0]}) needs a GPU, and on the simulator, "
           "where there is none, the region runs on the CPU with numpy arrays in "
           "place of the device arrays: write it") if gpu else (
        f"({type(e).__name__}: {e}); there it runs on the CPU with numpy arrays in "
        "place of the device arrays: where the error comes from a call numpy lacks "
        "(cupy's or torch's own), write it")
    return SimulationError(
        f"captured region {name} failed on the simulator at "
        f"{format_source(line)}{': ' if gpu else ' '}{why} with what numpy and cupy "
        "share (x @ w, x.sum(), y[...] = ..., np.tanh(x), which cupy arrays "
        "dispatch to cupy; or xp = cupy.get_array_module(x)), " +
        ("as examples/train_step.py's region does, or run it on a GPU" if gpu
         else "or run it on the GPU backend"),
        source=node.source)

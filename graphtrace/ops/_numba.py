"""The numba-cuda adapter (its launch spellings: ``_numba_launch.py``).

Arguments are flattened exactly as numba's ``_Kernel._prepare_args`` does
(an array becomes meminfo, parent, nitems, itemsize, data, shape...,
strides...; scalars follow numba's type of the value), so that the graph's
kernel nodes receive what an eager launch would. Doing it here rather than
calling numba keeps the data pointers in known slots, which is what lets a
later call rebind them cheaply.
"""
from __future__ import annotations

import ast
import ctypes
import enum
import inspect
import logging
import math
import warnings
from typing import NamedTuple

import numpy as np

from ..arrays import as_buffer, is_array
from ..buffers import Buffer
from ..context import current_tracer, on_trace_start
from ..errors import KernelArgumentError, format_source, user_frame
from ..owned import keep, kept
from ..probe import _has
from ..scalar import Scalar, has_fraction
from ..tree import leaves, materialize, tree_map
from ._aliases import _dotted
from ._intents import (analyze, calls_device_functions, infer_intents, stale as _intents_stale,
                       vararg_intent, writes_outside)
from ._kernel_source import _parse, closure_values, held_now, resolve_dotted
from ._numba_sim import is_device_function, run_numba_kernel
from . import kernel as _kernel
from ._adapter import ADAPTERS, Adapter, untyped_error, untyped_number

__all__ = ["NumbaAdapter", "flatten", "is_device_function", "uses_grid_sync", "array_params"]

_log = logging.getLogger("graphtrace")   # (log.py's logger; log.py imports what imports ops)


def _is_numba_kernel(k) -> bool:
    name = type(k).__name__
    return (name == "CUDADispatcher" and not k.targetoptions.get("device")) \
        or (name == "FakeCUDAKernel" and not getattr(k, "_device", False))


def _refuse_device_function(k):
    name = k.py_func.__name__
    raise KernelArgumentError(
        f"{name} is a numba device function (@cuda.jit(device=True)), which cannot be "
        "launched: call it from inside a kernel, and launch that kernel (a @cuda.jit "
        "function without device=True)")


class _Compiled(NamedTuple):
    """What ``NumbaAdapter.compile`` keeps of a compiled kernel besides the kernel."""
    types: tuple         # numba's type of each launch argument (*args flattened)
    cooperative: bool    # numba found a grid synchronisation in it


class NumbaAdapter(Adapter):
    library = "numba"

    def __init__(self, k):
        py_func = k.py_func
        sig = list(inspect.signature(py_func, follow_wrapped=False).parameters.values())
        params = [p.name for p in sig if p.kind is not p.VAR_POSITIONAL]
        vararg = next((p.name for p in sig if p.kind is p.VAR_POSITIONAL), None)
        # a kernel storing into an array held by a global name (G[i] = v) touches
        # memory it is not given: opaque, ordered after and before everything
        intents = infer_intents(py_func)
        if intents is None:
            _log.info("numba kernel %s (%s): its source cannot be read, so each array it "
                         "is given counts as read and written and its launches keep the order "
                         "they have on those arrays; define it in a file or a notebook cell "
                         "(not under %%%%time or exec), or give its intents: gt.kernel(k, "
                         "\"in, out, ...\")", py_func.__qualname__,
                         format_source((py_func.__code__.co_filename,
                                        py_func.__code__.co_firstlineno)))
        super().__init__(k, py_func.__name__, params, intents,
                         opaque=bool(writes_outside(py_func)), vararg=vararg)
        result = analyze(py_func)
        if result is not None and result.numbers:   # q = x[i]; q += v: x read where a
            self.by_arrays = result                # number is what x[i] gives
        if vararg is not None:   # one intent for every element of *args
            self.vararg_intent = vararg_intent(py_func) or "rw"
        self.simulated = type(k).__name__ == "FakeCUDAKernel"
        self.grid_sync = uses_grid_sync(py_func)
        if self.grid_sync:
            self.cooperative_reason = "synchronises the whole grid (cuda.cg.this_grid())"
        self.array_params = array_params(py_func)
        self._array_positions = frozenset(i for i, p in enumerate(params)
                                          if p in self.array_params)
        # a GPU kernel keeps debug=True in its options, numba's simulator's as _debug:
        # a program tested on the simulator warns as on a GPU
        self.debug = bool(getattr(k, "_debug", False) if self.simulated else
                          getattr(k, "targetoptions", {}).get("debug"))
        self._compiled: dict = {}   # numba argument types -> (cuda.core Kernel, _Compiled)
        # the arrays and numbers of a graph its closure may hold (a kernel made in the
        # graph function, or by a factory): checked at each launch (constants are not)
        self.closure_held = tuple((name, v) for name, v in closure_values(py_func)
                                  if any(isinstance(x, Scalar) or is_array(x)
                                         for x in leaves(v)))
        if calls_device_functions(py_func):   # watched for new versions of them
            keep(_with_devices, id(k), k, self)
        held = None if self.opaque else held_now(py_func)
        if held is not None:   # LUT = None (or np.zeros(0)) till init(): looked at again
            keep(_unsettled, id(k), k, (self, held))   # as each trace starts, where it changed

    def validate(self, args) -> None:
        if self.debug:
            self._warn_debug()
        arrays, by_type = self._array_positions, not self.closure_held
        if self.closure_held:   # checked at every launch: not by the arguments' types
            self._refuse_closure_held()
        for i, a in enumerate(args):
            if type(a) is Buffer:   # the usual cases: an array, a number for a number
                continue
            if type(a) in _NUMBERS and i not in arrays:   # (a dynamic one's value: at
                odd = untyped_number(a)                     # each launch, kernel.py)
                if odd is None:
                    continue
                raise untyped_error(self, i, odd)
            by_type = False
            bad = _unpassable(a)
            if bad is not None:
                raise KernelArgumentError(
                    f"argument {self.param_name(i)} of numba kernel {self.name} "
                    f"{'holds' if isinstance(a, tuple) else 'is'} {bad}, which numba cannot "
                    "pass to a kernel: pass a device array (cuda.to_device(np.asarray("
                    "values))), a number (float(text) for a number read as text), or a "
                    "tuple of numbers or arrays")
            what = _not_an_array(a)
            if what is not None and i < len(self.params) and self.params[i] in self.array_params \
                    and not _has(type(a), "_fields"):   # a namedtuple's g.size: its field
                raise KernelArgumentError(
                    f"argument {self.param_name(i)} of numba kernel {self.name} is "
                    f"{what}, but the kernel uses it as an array: pass a device array "
                    "(cuda.to_device(np.asarray(values)))")
        if by_type:
            self.valid_types.add(tuple(map(type, args)))

    def _refuse_closure_held(self) -> None:
        """An array lying in an argument of the trace, or a number of the graph,
        that the kernel (or a device function it calls) holds by a closure name is
        refused: the kernel keeps it, so a later call with new arrays and numbers
        would still run on this call's. The node was opaque and silently stale.
        A kernel the call's cache key holds (made before the call, reached by name,
        held by ``self`` or passed) reads the array it holds at every call, as
        eagerly run code does: it is opaque, and another kernel traces anew."""
        t = current_tracer()
        if t is None:
            return
        for name, v in self.closure_held:
            number = next((x for x in leaves(v) if isinstance(x, Scalar)), None)
            if number is not None:
                raise KernelArgumentError(
                    f"numba kernel {self.name} holds the number {number.name} of this graph "
                    f"by its closure name {name} (a kernel made inside the graph function, "
                    "or by a factory it calls): numba compiles it in; pass it to the "
                    "kernel as a launch argument")
            if t.keyed(self.kernel):
                continue
            for x in leaves(v):
                if not is_array(x):
                    continue
                root = t.root_holding(as_buffer(x).lo)
                if root is not None and t.is_argument(root):
                    raise KernelArgumentError(
                        f"numba kernel {self.name} holds {root.label} of this graph by its "
                        f"closure name {name}, and is made during this call (inside the "
                        "graph function, or by a factory it calls) or held where graphtrace "
                        "does not watch it: it would keep this call's array, and a later "
                        "call with new arrays would still use it; pass "
                        f"{root.label} to the kernel as a launch argument")

    def check_number(self, i: int, value, source, traced=None) -> None:
        """A Python int out of the range of numba's type of the traced one (2**63
        where 1 was traced: int64), refused as the GPU's packing refuses it. A kernel
        compiled for given signatures converts its arguments: the GPU's packing says."""
        if _python_int(value) and _python_int(traced) and \
                getattr(self.kernel, "_can_compile", True):
            from numba import typeof
            _integer(typeof(traced), value, self, i, source)

    def _warn_debug(self) -> None:
        """Once per kernel: its device-side errors would pass unseen in a graph."""
        self.debug = False
        file, line = user_frame()
        warnings.warn_explicit(
            f"numba kernel {self.name} is compiled with debug=True: numba reports the "
            "errors it raises on the device (assert, out-of-bounds indices) by reading a "
            "module global after an eager launch, which a graph never does, so in the "
            "graph they pass unseen; debug it eagerly, and compile it without debug=True "
            "for the graph", UserWarning, file, line)

    def compile(self, args):
        """``(cuda.core Kernel, _Compiled)`` for these recorded arguments."""
        if self.simulated:
            raise RuntimeError("numba's CUDA simulator is enabled: no GPU kernel to emit")
        from numba.core import types
        argtypes = tuple(self.kernel.typeof_pyval(v) for v in tree_map(_typeable, args))
        hit = self._compiled.get(argtypes)
        if hit is not None:
            return hit
        n = len(self.params)
        sig = argtypes if self.vararg is None else \
            argtypes[:n] + (types.StarArgTuple(argtypes[n:]),)   # numba's type of *args
        compiled = self._overload(sig)
        compiled.bind()
        flat = tuple(compiled.argument_types)
        if self.vararg is not None:   # the *args tuple is passed as its elements, in order
            flat = flat[:n] + tuple(flat[n])
        hit = self._compiled[argtypes] = (compiled._codelibrary.get_cufunc().kernel,
                                          _Compiled(flat, bool(compiled.cooperative)))
        return hit

    def _overload(self, sig):
        """numba's compiled kernel for these argument types. A kernel compiled for
        given signatures (``@cuda.jit("void(float32[:])")``) compiles no more: the
        arguments go to the signature numba itself would choose, converted to it."""
        k = self.kernel
        if getattr(k, "_can_compile", True):
            return k.compile(sig)
        chosen = k.typingctx.resolve_overload(k.py_func, k.nopython_signatures, sig, {})
        if chosen is None:
            raise KernelArgumentError(
                f"numba kernel {self.name} is compiled for "
                f"{', '.join(str(s) for s in k.nopython_signatures)} only, and arguments "
                f"of types ({', '.join(map(str, sig))}) fit none of them: pass arguments "
                "of those types, or leave the signature out of @cuda.jit")
        return k.overloads[tuple(chosen.args)]

    def compiled_cooperative(self, meta) -> bool:
        return meta.cooperative

    def pack(self, meta, args, value_of) -> list:
        out: list = []
        for i, (ty, a) in enumerate(zip(meta.types, args)):
            flatten(ty, a, value_of, out, self, i)
        return out

    def simulate(self, grid, block, shared_mem, values):
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
        k = self.kernel
        options = {"debug": k._debug, "extensions": k.extensions} if self.simulated else {}
        # device arrays of the simulator: numba would copy (and refuse strided) numpy ones
        values = tree_map(lambda v: FakeCUDAArray(v) if isinstance(v, np.ndarray) else v,
                          values)
        run_numba_kernel(k.py_func, grid, block, shared_mem, values, **options)

    def simulation_refusal(self, grid) -> str | None:
        if self.grid_sync and math.prod(grid) > 1:
            return (f"numba kernel {self.name} synchronises the whole grid, and numba's "
                    "simulator runs a grid one block at a time, so its this_grid().sync() "
                    f"cannot wait for the other blocks ({math.prod(grid)} blocks here): "
                    "simulate it with a grid of one block, or run it on the GPU")
        return None


def _python_int(v) -> bool:
    """An int, or an int of a subclass (not a bool, not an enum's member): numba types
    it by its value (int64, or uint64 from 2**63 on)."""
    return isinstance(v, int) and not isinstance(v, (bool, enum.Enum))


def _typeable(v):
    """What numba types for a recorded argument: the traced object, or for a view of
    a temporary (which has none) its geometry, typed as numba types a device array."""
    if isinstance(v, Buffer) and v.obj is None:
        return _DeviceArrayType(v)
    return materialize(v)


class _DeviceArrayType:
    """A temporary's view as numba's typeof sees it (``_numba_type_``, the layout rules
    of numba's ``DeviceNDArray``: C, then F, else A; broadcast views are A)."""

    __slots__ = ("_numba_type_",)

    def __init__(self, b: Buffer):
        from numba.core import types
        from numba.np import numpy_support
        broadcast = 0 in b.strides and b.nbytes != 0
        f_order = b.lo == b.hi or all(n == 1 or s == b.dtype.itemsize * math.prod(b.shape[:i])
                                      for i, (n, s) in enumerate(zip(b.shape, b.strides)))
        layout = "A" if broadcast else "C" if b.c_contiguous else "F" if f_order else "A"
        self._numba_type_ = types.Array(numpy_support.from_dtype(b.dtype), len(b.shape),
                                        layout)


# numbers numba passes as they are (what _not_an_array calls "a number")
_NUMBERS = frozenset({int, float, complex, bool, Scalar} |
                     {t for t in set(np.sctypeDict.values()) if issubclass(t, np.number)})


def _unpassable(a):
    """A list, a dict, a set, a string, None, a number of a class numba does not
    know (a Fraction, a Decimal) or any other value numba has no type for (an
    ``object()``) in argument ``a`` (no numba kernel takes them), else None."""
    if isinstance(a, (list, dict, set, frozenset, str, bytes)):
        return f"a Python {type(a).__name__}"
    if a is None:
        return "None"
    if type(a) not in _NUMBERS and untyped_number(a) is not None:
        return untyped_number(a)
    if isinstance(a, tuple):
        return next((bad for bad in map(_unpassable, a) if bad is not None), None)
    if type(a) not in _NUMBERS and type(a) is not Buffer and not _typed(a):
        return f"an object of class {type(a).__qualname__} (numba has no type for it)"
    return None


_TYPED: set = set()   # classes numba's typeof has typed a value of


def _typed(a) -> bool:
    """Whether numba has a type for ``a`` (an ``object()``, a function: no; the
    simulator would run the kernel with it, and only fail when the graph runs)."""
    if type(a) in _TYPED:
        return True
    from numba import typeof
    try:
        typeof(a)
    except Exception:
        return False
    _TYPED.add(type(a))
    return True


def _not_an_array(a):
    """What ``a`` is if a tuple or a number (else None)."""
    if isinstance(a, tuple):
        return "a Python tuple"
    if isinstance(a, (Scalar, int, float, complex)) or \
            (isinstance(a, np.generic) and not isinstance(a, np.void)):
        return f"a number ({type(a._value if isinstance(a, Scalar) else a).__name__})"
    return None


def uses_grid_sync(py_func, _seen=None) -> bool:
    """Whether a kernel, or a device function it calls, uses ``cuda.cg.this_grid()``."""
    seen = _seen if _seen is not None else set()
    if id(py_func) in seen or len(seen) > 32:
        return False
    seen.add(id(py_func))
    fdef = _parse(py_func)
    nodes = list(ast.walk(fdef)) if fdef is not None else ()
    local = {n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    local.update(a.arg for n in nodes if isinstance(n, ast.arguments)
                 for a in n.posonlyargs + n.args + n.kwonlyargs)
    for node in nodes:   # cuda.cg.this_grid, or this_grid imported (a local of that name: no)
        if (isinstance(node, ast.Attribute) and node.attr == "this_grid") or \
                (isinstance(node, ast.Name) and node.id == "this_grid" and
                 "this_grid" not in local):
            return True
        if isinstance(node, ast.Call) and _dotted(node.func):
            inner = getattr(resolve_dotted(py_func, _dotted(node.func)), "py_func", None)
            if inner is not None and uses_grid_sync(inner, seen):
                return True
    return False


_ARRAY_ATTRS = {"size", "shape", "ndim", "strides", "dtype", "itemsize", "nbytes"}


def array_params(py_func) -> set:
    """Parameters the kernel itself can only mean as arrays.

    Direct evidence only: ``p[...] = v`` or ``p[...] += v`` (a tuple cannot
    be written), ``p.size``, ``p.shape`` and other array attributes, and
    atomics on ``p``. A parameter the kernel rebinds is left out.
    """
    fdef = _parse(py_func)
    if fdef is None:
        return set()
    params = {a.arg for a in fdef.args.posonlyargs + fdef.args.args}
    used, rebound = set(), set()
    for node in ast.walk(fdef):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            rebound.add(node.id)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.value, ast.Name):
            used.add(node.value.id)
        elif isinstance(node, ast.Attribute) and node.attr in _ARRAY_ATTRS \
                and isinstance(node.value, ast.Name):
            used.add(node.value.id)
        elif isinstance(node, ast.Call) and "atomic" in _dotted(node.func).split(".") \
                and node.args and isinstance(node.args[0], ast.Name):
            used.add(node.args[0].id)
    return (used & params) - rebound


def flatten(ty, arg, value_of, out: list, adapter=None, index=0) -> None:
    """Append numba's flat kernel parameters for one argument to ``out``."""
    from numba.core import types
    if isinstance(ty, types.Array):
        buf = value_of(arg) if isinstance(arg, Buffer) else None
        if buf is None:
            raise KernelArgumentError(
                f"argument {_pname(adapter, index)} of {_kname(adapter)} is typed "
                f"{ty} but is not an array")
        size = int(np.prod(buf.shape, dtype=np.int64))
        out += [0, 0, size, buf.dtype.itemsize, buf.ptr, *buf.shape, *buf.strides]
        return
    value = value_of(arg)
    if isinstance(ty, types.BaseTuple):
        for t, v in zip(ty, arg):
            flatten(t, v, value_of, out, adapter, index)
    elif isinstance(ty, types.CPointer):
        out.append(int(value))
    elif isinstance(ty, types.Integer):
        out.append(getattr(ctypes, f"c_{ty}")(_integer(ty, value, adapter, index)))
    elif ty == types.float16:
        out.append(ctypes.c_uint16(int(np.float16(value).view(np.uint16))))
    elif ty == types.float64:
        out.append(ctypes.c_double(value))
    elif ty == types.float32:
        out.append(ctypes.c_float(value))
    elif ty == types.boolean:
        out.append(bool(value))
    elif ty in (types.complex64, types.complex128):
        c = ctypes.c_float if ty == types.complex64 else ctypes.c_double
        out += [c(complex(value).real), c(complex(value).imag)]
    elif isinstance(ty, (types.NPDatetime, types.NPTimedelta)):
        out.append(ctypes.c_int64(int(np.asarray(value).view(np.int64))))
    elif isinstance(ty, types.EnumMember):
        flatten(ty.dtype, value.value, lambda v: v, out, adapter, index)
    else:
        raise KernelArgumentError(
            f"argument {_pname(adapter, index)} of {_kname(adapter)} has numba type "
            f"{ty}, which a graph cannot pass (a record needs a device copy per "
            "launch); pass an array instead")


def _integer(ty, value, adapter, index, source=None) -> int:
    """``value`` as an int of numba's integer type ``ty``; ``KernelArgumentError``
    where that would change it (as eager numba refuses it): a fraction, a complex
    number, or a value out of range, which ctypes would wrap silently. An int
    subclass gives its own value, as ctypes reads it, not what its ``__int__`` says."""
    where = f"argument {_pname(adapter, index)} does not fit numba type {ty} of " \
        f"{_kname(adapter)} (fixed when the graph was traced)"
    if isinstance(value, (complex, np.complexfloating)) or has_fraction(value):
        raise KernelArgumentError(
            f"value {value!r} of {where}, which takes whole numbers: pass an int (int(v) "
            "or round(v), where the cut is meant)", source)
    v, bits = int.__int__(value) if isinstance(value, int) else int(value), ty.bitwidth
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if ty.signed else (0, (1 << bits) - 1)
    if not lo <= v <= hi:
        raise KernelArgumentError(f"value {v} of {where}: pass an int from {lo} to {hi}",
                                  source)
    return v


def _pname(adapter, i):
    return adapter.param_name(i) if adapter else f"#{i}"


def _kname(adapter):
    return f"numba kernel {adapter.name}" if adapter else "the kernel"


ADAPTERS.append((_is_numba_kernel, NumbaAdapter))
ADAPTERS.append((is_device_function, _refuse_device_function))


_with_devices: dict = {}   # id(kernel) -> its NumbaAdapter, for kernels calling device functions
# (owned.keep, as _unsettled's: held by the kernel, so that one made per call is freed)


@on_trace_start
def _drop_stale_adapters():
    """A kernel whose device function was defined again (a notebook cell run again)
    gets a new adapter, with what either version does: the launches' cached
    intents go too."""
    stale = [kid for kid, hit in list(_with_devices.items())
             if (a := kept(hit)) is not None and _intents_stale(a.kernel.py_func)]
    for kid in stale:
        del _with_devices[kid]
        _unsettled.pop(kid, None)
        _kernel.forget(kid)


# id(kernel) -> (its NumbaAdapter, not opaque, what the global and closure names the
# kernel reaches held when last looked at: held_now), for kernels naming the program's own
# (a device array allocated later, LUT = None or np.zeros(0) till init(); a device
# function defined below)
_unsettled: dict = {}


@on_trace_start
def _settle_opacity():
    """A kernel made known (launched, or declared with gt.kernel) before a global it
    reads or writes holds its device array (``LUT = None`` till ``init()``) is made
    opaque at the first trace after it does: numba compiles in the array the global
    holds then. What the names it reaches hold is compared by identity; the kernel is
    read again only where one holds another object. The gt.kernel wrappers of the
    adapter read its opacity."""
    for kid, hit in list(_unsettled.items()):
        if (hit := kept(hit)) is None:   # its kernel is gone
            continue
        a, last = hit
        py_func = a.kernel.py_func
        held = held_now(py_func)
        if held == last:
            continue
        if writes_outside(py_func):
            a.opaque = True
        if a.opaque or held is None:
            del _unsettled[kid]
        else:
            keep(_unsettled, kid, a.kernel, (a, held))

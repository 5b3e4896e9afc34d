"""Kernel launches: the ``kernel`` op and its adapters.

An adapter tells graphtrace what it needs of one kernel, whatever library
made it: its name and parameters, what each parameter does to memory
(intents), how to pack arguments for a launch, and how to run it on the CPU.
``_numba.py``, ``_cupy.py`` and ``_core.py`` hold one adapter each and
register it in ``ADAPTERS``; ``gt.kernel(...)`` declares intents for any of
them.
"""
from __future__ import annotations

import numpy as np

from ..buffers import HOST
from ..context import STATE
from ..deps import MODE_CODES
from ..errors import (ArgumentError, GraphtraceError, IntentError, KernelArgumentError,
                      SimulationError)
from ..scalar import Scalar
from .base import Op, arg_position, record_args

__all__ = ["Adapter", "ADAPTERS", "MODULES", "adapter_for", "kernel", "dim3", "record_launch",
           "KernelOp", "KERNEL"]

# (predicate(obj) -> bool, factory(obj) -> Adapter), tried in order.
ADAPTERS: list = []
# (predicate(module) -> bool, function(module, name) -> Adapter): kernels of a module by name.
MODULES: list = []
_cache: dict[int, tuple] = {}


class Adapter:
    """What graphtrace knows of one kernel. Subclasses fill in the blanks.

    ``params``: names of the fixed parameters (None when unknown);
    ``vararg``: the name of a ``*args`` parameter taking any number of
    further arguments (or None); ``intents``: per fixed parameter ``"r"``,
    ``"w"`` or ``"rw"`` (None: all ``"rw"``); ``vararg_intent``: that of each
    further argument; ``opaque``: the kernel touches memory it is not given
    as array arguments.
    """

    library = "?"
    vararg_intent = "rw"

    def __init__(self, kernel, name: str, params=None, intents=None, opaque=False,
                 vararg=None):
        self.kernel, self.name, self.params = kernel, name, params
        self.intents, self.opaque, self.vararg = intents, opaque, vararg

    def param_name(self, i: int) -> str:
        if self.params is not None and i < len(self.params):
            return self.params[i]
        if self.vararg is not None:
            return f"{self.vararg}[{i - len(self.params)}]"
        return f"#{i}"

    def check_arity(self, nargs: int) -> None:
        if self.params is None or nargs == len(self.params) or \
                (self.vararg is not None and nargs > len(self.params)):
            return
        names = ", ".join(self.params + ([f"*{self.vararg}"] if self.vararg else []))
        least = "at least " if self.vararg else ""
        raise KernelArgumentError(
            f"{self.library} kernel {self.name} takes {least}{len(self.params)} arguments "
            f"({names}) but {nargs} were given")

    def validate(self, args) -> None:
        """Raise at record time for arguments the kernel cannot take."""

    @property
    def validates(self) -> bool:
        """Whether ``validate`` checks anything (launches skip it otherwise)."""
        return type(self).validate is not Adapter.validate

    def intent(self, i: int) -> str:
        """The intent of argument ``i`` of a launch."""
        if self.vararg is not None and i >= len(self.params):
            return self.vararg_intent
        return self.intents[i] if self.intents and i < len(self.intents) else "rw"

    # Emission and simulation: see the subclasses.
    def compile(self, args):
        """``(cuda.core Kernel, meta)`` for these recorded arguments (needs a GPU)."""
        raise NotImplementedError

    def pack(self, meta, args, value_of) -> list:
        """Flat launch arguments; ``value_of`` maps a Buffer/Scalar to its value now."""
        raise NotImplementedError

    def simulate(self, grid, block, shared_mem, values):
        raise NotImplementedError(
            f"the CPU simulator cannot run {self.library} kernel {self.name}")

    def __repr__(self):
        return f"<{self.library} kernel {self.name}>"


class Declared(Adapter):
    """A kernel with intents (and opacity) declared by ``gt.kernel``."""

    def __init__(self, inner: Adapter, intents, opaque, name=None):
        super().__init__(inner.kernel, name or inner.name, inner.params,
                         list(intents) if intents is not None else inner.intents,
                         opaque or inner.opaque, inner.vararg)
        self.inner, self.library = inner, inner.library

    def intent(self, i: int) -> str:
        """The declared intent, else the kernel's own (declared ones may cover *args)."""
        if self.intents is not None and i < len(self.intents):
            return self.intents[i]
        return self.inner.intent(i)

    def validate(self, args):
        return self.inner.validate(args)

    @property
    def validates(self) -> bool:
        return self.inner.validates

    def compile(self, args):
        return self.inner.compile(args)

    def pack(self, meta, args, value_of):
        return self.inner.pack(meta, args, value_of)

    def simulate(self, grid, block, shared_mem, values):
        return self.inner.simulate(grid, block, shared_mem, values)


def adapter_for(k) -> Adapter:
    """The adapter of a kernel object, made once per kernel."""
    if isinstance(k, Adapter):
        return k
    hit = _cache.get(id(k))
    if hit is not None and hit[0] is k:
        return hit[1]
    for accepts, factory in ADAPTERS:
        if accepts(k):
            adapter = factory(k)
            _cache[id(k)] = (k, adapter)
            return adapter
    raise ArgumentError(
        f"cannot launch {type(k).__name__!r}: pass a numba @cuda.jit kernel, a cupy "
        "RawKernel (or RawModule function), or a cuda.core Kernel")


_MODES = {"in": "r", "out": "w", "inout": "rw", "r": "r", "w": "w", "rw": "rw"}


def kernel(k, intents=None, *, name: str | None = None, opaque: bool = False) -> Adapter:
    """Declare what a kernel does to its arguments.

    ``intents`` is one entry per parameter: ``"in"``, ``"out"`` or
    ``"inout"`` (a sequence, or one comma-separated string); for a numba
    kernel with ``*args``, entries after the fixed parameters are those of
    the further arguments, in order. ``opaque=True``
    says the kernel touches memory it is not given as an array argument (raw
    pointers, pointers inside structs): it is then ordered after all earlier
    work and before all later work. ``name`` picks a function of a cupy
    ``RawModule`` (``gt.kernel(module, name="saxpy")``), or names a cuda.core
    kernel in listings.

    >>> import graphtrace as gt
    >>> axpy = gt.kernel(core_kernel, "in, inout")          # doctest: +SKIP
    >>> s.launch(axpy, 64, 256, x, y)                       # doctest: +SKIP
    """
    if isinstance(intents, str):
        intents = [p.strip() for p in intents.split(",")]
    if intents is not None:
        bad = [m for m in intents if m not in _MODES]
        if bad:
            raise ArgumentError(f"unknown intent {bad[0]!r}: use 'in', 'out' or 'inout'")
        intents = [_MODES[m] for m in intents]
    by_name = next((get for accepts, get in MODULES if accepts(k)), None) \
        if name is not None else None
    inner = by_name(k, name) if by_name is not None else adapter_for(k)
    if intents is not None and inner.params is not None and (
            len(intents) < len(inner.params) if inner.vararg
            else len(intents) != len(inner.params)):
        raise ArgumentError(f"{len(intents)} intents for kernel {inner.name}, which has "
                            f"{len(inner.params)} parameters ({', '.join(inner.params)})"
                            + (f" and *{inner.vararg}" if inner.vararg else ""))
    return Declared(inner, intents, opaque, name)


def _count(d):
    """``d`` as a Python int if it is an integer (numpy's too) but not a bool, else None."""
    if isinstance(d, (int, np.integer)) and not isinstance(d, bool):
        return int(d)
    return None


def dim3(value, what: str) -> tuple:
    """A grid or block size as a 3-tuple of positive ints."""
    if type(value) is int and value > 0:
        return (value, 1, 1)
    dims = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    for d in dims:
        if isinstance(d, Scalar):
            d._refuse()  # a dynamic scalar cannot size a launch
    ints = tuple(_count(d) for d in dims)
    if not 1 <= len(ints) <= 3 or not all(d is not None and d > 0 for d in ints):
        raise ArgumentError(
            f"{what} must be a positive int or a tuple of up to 3 positive ints, not "
            f"{value!r}; grid sizes are fixed when the graph is built (pass the "
            "numbers they depend on as static=)")
    return ints + (1,) * (3 - len(ints))


def _device_only(adapter):
    def check(i, buf):
        if buf.device == HOST:
            raise ArgumentError(
                f"argument {adapter.param_name(i)} of kernel {adapter.name} is host "
                "memory (a numpy array): a graph cannot copy it implicitly the way an "
                "eager numba launch does; copy it to a device array first "
                "(cuda.to_device, cupy.asarray) or use s.copy")
    return check


# (id(kernel), nargs, grid, block, shared_mem) of plain ints -> what such launches share
_launches: dict = {}


def _launch(k, nargs: int, grid, block, shared_mem) -> tuple:
    """``(kernel, how, opaque)`` of launches of ``k`` with ``nargs`` arguments and
    this configuration, checked (and kept when the configuration is plain ints);
    ``how`` as ``Tracer.add`` takes it."""
    adapter = adapter_for(k)
    adapter.check_arity(nargs)
    dims = dim3(grid, "grid"), dim3(block, "block")
    if isinstance(shared_mem, Scalar):
        shared_mem._refuse()
    if _count(shared_mem) is None or shared_mem < 0:
        raise ArgumentError(f"shared_mem must be a non-negative int, not {shared_mem!r}")
    how = (adapter, [MODE_CODES[adapter.intent(i)] for i in range(nargs)],
           {"grid": dims[0], "block": dims[1], "shared_mem": int(shared_mem)},
           lambda tracer, args: record_args(tracer, args, adapter.intent,
                                            _device_only(adapter)),   # raises, naming it
           adapter.validate if adapter.validates else None)
    launch = (k, how, adapter.opaque)
    if _plain(grid, block, shared_mem):
        if len(_launches) > 100_000:   # configurations computed from the data: start afresh
            _launches.clear()
        _launches[(id(k), nargs, grid, block, shared_mem)] = launch
    return launch


def _plain(grid, block, shared_mem) -> bool:
    """Whether a configuration is ints and tuples of ints, which compare equal only
    to configurations that mean the same (a float or a bool could compare equal)."""
    return all(type(d) is int or (type(d) is tuple and all(type(v) is int for v in d))
               for d in (grid, block, shared_mem))


def record_launch(stream, k, grid, block, args, shared_mem=0, opaque=False):
    """Record a kernel launch on a proxy stream (``Stream.launch``, ``kernel[g, b, s]``)."""
    tracer = stream._tracer   # stream.tracer(), without the call: this runs per launch
    if getattr(STATE, "tracer", None) is not tracer:
        stream.tracer()   # raises: used outside its trace
    hit = None
    if type(grid) is int and type(block) is int and type(shared_mem) is int or \
            _plain(grid, block, shared_mem):
        # the entry holds k: no other object can have its id while it is there
        hit = _launches.get((id(k), len(args), grid, block, shared_mem))
    if hit is None:
        hit = _launch(k, len(args), grid, block, shared_mem)
    tracer.add(stream, KERNEL, hit[1], args, opaque or hit[2])


def _dims(d):
    return str(d[0]) if d[1:] == (1, 1) else "(" + ", ".join(map(str, d)) + ")"


_configs: dict = {}   # (grid, block, shared_mem) -> LaunchConfig, shared by nodes


def _config(node):
    a = node.attrs
    key = (a["grid"], a["block"], a["shared_mem"])
    cfg = _configs.get(key)
    if cfg is None:
        from cuda.core import LaunchConfig
        cfg = _configs[key] = LaunchConfig(grid=key[0], block=key[1], shmem_size=key[2])
    return cfg


class KernelOp(Op):
    """A kernel launch: ``target`` is the kernel's ``Adapter``, ``args`` the
    launch arguments as recorded; ``attrs``: ``grid``, ``block`` (3-tuples) and
    ``shared_mem``. ``gpu.state`` keeps (LaunchConfig, cuda.core Kernel, meta)."""

    kind = "kernel"

    def describe(self, node, namer) -> str:
        a = node.attrs
        shm = f", shared={a['shared_mem']}" if a["shared_mem"] else ""
        args = ", ".join(namer.value(v) for v in node.args)
        return f"{node.target.name}[{_dims(a['grid'])}, {_dims(a['block'])}{shm}]({args})"

    def verify(self, node) -> str | None:
        a = node.attrs
        if not isinstance(node.target, Adapter):
            return f"its target is {type(node.target).__name__}, not a kernel Adapter"
        if not all(isinstance(a.get(k), tuple) and len(a[k]) == 3 for k in ("grid", "block")):
            return "grid and block must be 3-tuples"
        return None

    def emit(self, gpu, node, parent):
        kern, meta = node.target.compile(node.args)
        cfg = _config(node)
        gpu.state[node.index] = (cfg, kern, meta)
        return parent.launch(cfg, kern, *node.target.pack(meta, node.args, gpu.value_of))

    def params(self, gpu, node) -> dict:
        cfg, kern, meta = gpu.state[node.index]
        return {"config": cfg, "kernel": kern,
                "args": node.target.pack(meta, node.args, gpu.value_of)}

    def update_definition(self, gpu, node) -> None:
        """Only the arguments change: a definition node takes them alone."""
        cfg, kern, meta = gpu.state[node.index]
        gpu.definition_node(node).update(args=node.target.pack(meta, node.args, gpu.value_of))

    def simulate(self, sim, node) -> None:
        """Run the kernel on the CPU; with ``sim.check``, prove its read-only arrays stay so."""
        a = node.attrs
        written = [b for b, m in node.accesses if "w" in m]
        kept = [(b, sim.array(b).copy()) for b, m in node.accesses  # read-only bytes only
                if m == "r" and not any(b.overlaps(w) for w in written)] if sim.check else []
        try:
            node.target.simulate(a["grid"], a["block"], a["shared_mem"],
                                 [sim.value(v) for v in node.args])
        except GraphtraceError:
            raise
        except Exception as e:  # the kernel's own failure, with the launch line named
            raise SimulationError(f"kernel {node.target.name} failed on the simulator: "
                                  f"{type(e).__name__}: {e}", source=node.source) from e
        for b, before in kept:
            if not np.array_equal(sim.array(b), before, equal_nan=True):
                raise self.intent_error(node, b)

    def intent_error(self, node, buf, detail: str = "") -> IntentError:
        i = arg_position(node.args, buf)
        param = f" (parameter {node.target.param_name(i)})" if i is not None else ""
        return IntentError(
            f"kernel {node.target.name} wrote to {buf.label or 'an array'}{param}{detail}, "
            "which it was inferred or declared to only read: wrap the argument in "
            "gt.InOut(...) or declare the kernel with gt.kernel(k, intents)",
            source=node.source)


KERNEL = KernelOp()

"""Kernel launches: ``gt.kernel``, recording a launch, and the ``kernel`` op.

What graphtrace knows of one kernel, whatever library made it, is its adapter
(``_adapter.py``; ``_numba.py``, ``_cupy.py`` and ``_core.py`` hold one each).
Here ``gt.kernel(...)`` declares intents for any of them; ``record_launch``
(with ``again``, the tracer's memo, compiled in ``_speedups.c`` where built)
records a launch on a proxy stream, checked once per kind of launch
(``_launch_kind``), refusing arguments graphtrace could not follow; ``foreign_attribute`` and
``stream_refusal`` tell library code that takes a proxy stream for a CUDA stream
what to write instead (``cupy_call_refusal``: cupy called where there is no GPU); ``KernelOp`` describes, verifies, emits, updates and
simulates the node.
"""
from __future__ import annotations

import re
import weakref

import numpy as np

from .._compiled import speedups
from ..arrays import is_array
from ..buffers import HOST, Buffer
from ..context import STATE
from ..deps import MODE_CODES
from .._guards import cupy_calls, needs_gpu
from ..owned import keep, kept
from ..errors import (ArgumentError, GraphtraceError, HostSyncError, IntentError,
                      KernelArgumentError, SimulationError, StreamError, TraceError)
from ..scalar import Scalar
from ..temporary import is_temporary
from ..tree import leaves
from . import _launch
from ._adapter import (ADAPTERS, MODULES, Adapter, Declared, _cache, adapter_for, untyped_error,
                       untyped_number)
from ._launch import count as _count, dim3
from .base import Op, arg_position, changed, read_only_bytes, record_args

__all__ = ["Adapter", "ADAPTERS", "MODULES", "adapter_for",   # (those four: _adapter.py)
           "kernel", "dim3", "record_launch",
           "again", "NO_BLOCK", "LOWEST_ADDRESS", "foreign_attribute", "KernelOp", "KERNEL"]


def forget(kid: int) -> None:
    """Drop the adapter of the kernel of id ``kid`` and every launch kind cached with
    it: the next launch makes them again."""
    hit = kept(_cache.pop(kid, None))
    _launches.clear()
    for d in [r() for r in _wrappers.pop(kid, ())]:   # gt.kernel's wrappers of the
        if d is not None and hit is not None and d.inner is hit[1]:   # dropped adapter
            d.follow(adapter_for(hit[0]))   # take the new one
            _wrap(hit[0], d)


# id(kernel) -> weak references to the gt.kernel wrappers (Declared) of its cached adapter
_wrappers: dict = {}


def _wrap(k, declared: Declared) -> Declared:
    """Remember ``declared`` as a wrapper of the adapter of kernel ``k``, to follow it."""
    refs = _wrappers.setdefault(id(k), [])
    refs[:] = [r for r in refs if r() is not None] + [weakref.ref(declared)]
    return declared


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

    >>> scale_declared = gt.kernel(scale, "in, in, out")   # scale(x, a, out)
    >>> @gt.graph
    ... def f(s, x, y):
    ...     s.launch(scale_declared, 1, 32, x, 2.0, y)
    >>> print(f.trace(cuda.device_array(32), cuda.device_array(32)))   # doctest: +ELLIPSIS
    graph f(x, y)  deps=data  1 node, 0 edges
      %0 = kernel scale[1, 32](x, 2.0, y)  in(x)  out(y)  # <doctest ...>:3
    >>> axpy = gt.kernel(core_kernel, "in, inout")          # doctest: +SKIP
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
    declared = Declared(inner, intents, opaque, name)
    return _wrap(k, declared) if by_name is None else declared


def _device_only(adapter):
    def check(i, buf):
        if buf.device == HOST and adapter.library != "numba":   # an address is passed
            memory = "pinned host memory" if buf.pinned else "host memory (a numpy array)"
            raise ArgumentError(
                f"argument {adapter.param_name(i)} of {adapter.library} kernel "
                f"{adapter.name} is {memory}: a kernel launched in a graph takes device "
                "arrays; copy it to one first (cupy.asarray(h), cuda.to_device(h)), or in "
                "the graph before the launch, s.copy(device_array, "
                f"{buf.label or 'h'}), and launch the kernel on the device array")
        if buf.device == HOST:
            raise ArgumentError(
                f"argument {adapter.param_name(i)} of kernel {adapter.name} is host "
                "memory (a numpy array): a graph cannot copy it implicitly the way an "
                "eager numba launch does; copy it to a device array first "
                "(cuda.to_device, cupy.asarray) or use s.copy")
    return check


speedups_module = _speedups = speedups()   # None: pure Python (_compiled.py)
NO_BLOCK = object()   # s.launch(kernel, config, *args): a LaunchConfig in place of both

# (id(kernel), nargs, grid, block, shared_mem) of launches given plain ints (shared_mem
# None too) and no other option -> what such launches share (owned.keep: held by the
# kernel where it can hold it, weakly here, so that a kernel made per call is freed)
_launches: dict = {}


def _again(stream, k, grid, block, shared_mem, args, depth: int = 3):
    """Record a launch of plain ``grid`` and ``block`` (ints, or tuples of ints;
    ``shared_mem`` None or an int) if the tracer remembers one with this kernel,
    configuration and these very argument objects (``Tracer.add``'s memo), and
    return True; else the key to remember it by (None for a kernel no longer
    remembered), for ``record_launch``. The fast way of ``Stream.launch`` and
    ``kernel[g, b, s](...)``, which call it directly; the user's frame is
    ``depth`` frames up from ``Tracer.again`` (3 for those)."""
    tracer = stream._tracer
    if id(k) in tracer.memo_off:   # a kernel whose launches keep bringing new arrays
        return None
    key = (id(k), grid, block, shared_mem, *map(id, args))
    launch = tracer.memo.get(key)
    if launch is None or getattr(STATE, "tracer", None) is not tracer:
        return key
    tracer.again(stream, launch, depth)
    return True


again = _speedups.again if _speedups is not None else _again   # the same, compiled


def record_launch(stream, k, grid, block, args, shared_mem=None, opaque=False, cluster=None,
                  cooperative=None, key=None):
    """Record a kernel launch on a proxy stream (``Stream.launch``, ``kernel[g, b, s]``,
    ``gt.launch``). ``grid`` may be a ``LaunchConfig``, which then carries the options
    and leaves ``block`` (``NO_BLOCK`` if not given) to the kernel's arguments. ``key``:
    what ``again`` returned for this launch, if it was asked."""
    tracer = stream._tracer   # stream.tracer(), without the call: this runs per launch
    if getattr(STATE, "tracer", None) is not tracer:
        stream.tracer()   # raises: used outside its trace
    memo = None
    if (type(grid) is int and type(block) is int or _plain(grid, block)) and cluster is None \
            and cooperative is None and (shared_mem is None or type(shared_mem) is int):
        if key is None and not opaque and id(k) not in tracer.memo_off:
            # the kernel, configuration and argument objects of an earlier launch
            # whose arrays were all seen before: recorded as that one was
            key = again(stream, k, grid, block, shared_mem, args, 4)
            if key is True:
                return None
        if key is not None:
            memo = key, k
        key = (id(k), len(args), grid, block, shared_mem)
        hit = _launches.get(key)
        if hit is not None and type(hit) is not tuple:
            hit = kept(hit)   # owned by the kernel (owned.keep): dies with it
        if hit is None or hit[0] is not k:
            hit = _launch_kind(k, len(args), _launch.options(
                grid, block, shared_mem or 0, None, False), asked=False)
            if len(_launches) > 100_000:   # configurations computed from the data: start afresh
                _launches.clear()
            if hit[1].by_arrays is None:   # (else not for _speedups.c's record_new)
                keep(_launches, key, k, hit)
    else:
        asked = cooperative is not None or _launch.is_config(grid)
        args, attrs = _options(grid, block, args, shared_mem, cluster, cooperative)
        hit = _launch_kind(k, len(args), attrs, asked)
    if hit[1].by_arrays is not None:
        modes = hit[1].by_arrays.modes_for([_geometry(a) for a in args])
        hit = (*hit[:2], [MODE_CODES[m] for m in modes] + hit[2][len(modes):], *hit[3:])
    tracer.add(stream, KERNEL, hit[1], args, hit[2], hit[5], opaque or hit[1].opaque, hit[4],
               hit[3], hit[6], memo)


def _record_compiled(stream, k, grid, block, args, shared_mem, key):
    """A launch from ``_speedups.c`` (``Stream.launch``, ``kernel[grid, block, s]``)
    that neither the memo nor its own recording took: this frame stands where the
    Python method's would (the user's is the next), ``key`` is what ``again`` gave."""
    return record_launch(stream, k, grid, block, args, shared_mem, key=key)


def _geometry(a) -> tuple | None:
    """``(ndim, dtype)`` of an array argument, or None."""
    if not (is_temporary(a) or is_array(a)):
        return None
    try:
        return len(a.shape), np.dtype(a.dtype)
    except (AttributeError, TypeError):
        return None


def _plain(grid, block) -> bool:
    """Whether grid and block are tuples of ints, which compare equal only to
    configurations that mean the same (a float or a bool could compare equal)."""
    return all(type(d) is tuple and all(type(v) is int for v in d) or type(d) is int
               for d in (grid, block))


def _options(grid, block, args, shared_mem, cluster, cooperative) -> tuple:
    """``(args, attrs)`` of a launch given a LaunchConfig, or options other than ints."""
    if type(grid) is not int and _launch.is_config(grid):
        if (shared_mem, cluster, cooperative) != (None, None, None):
            raise ArgumentError(
                "launch options given both in a LaunchConfig and as keywords: put "
                "shared_mem (shmem_size), cluster and cooperative (is_cooperative) in "
                "the LaunchConfig")
        args = args if block is NO_BLOCK else (block,) + tuple(args)
        grid, block, shared_mem, cluster, cooperative = _launch.read_config(grid)
    elif block is NO_BLOCK:
        raise ArgumentError("a launch needs a block size after the grid: "
                            "s.launch(kernel, grid, block, *args), or a cuda.core "
                            "LaunchConfig in place of both")
    return args, _launch.options(grid, block, 0 if shared_mem is None else shared_mem,
                                 cluster, False if cooperative is None else cooperative)


def _launch_kind(k, nargs: int, attrs: dict, asked: bool = True) -> tuple:
    """``(kernel, adapter, mode codes, validate or None, refuse host, attrs, refuse
    addresses)`` of launches of ``k`` with ``nargs`` arguments and these (checked)
    launch options: what ``record_launch`` hands the tracer, checked once. ``asked``:
    whether the launch said if it is cooperative (a keyword or a LaunchConfig); one
    that did not, of a kernel that synchronises its grid, is cooperative, as numba's
    and cupy's own launches of it are."""
    adapter = adapter_for(k)
    adapter.check_arity(nargs)
    if adapter.cooperative_reason and not attrs["cooperative"]:
        if asked or not _launch.COOPERATIVE_NODES:
            raise KernelArgumentError(_cooperative_needed(adapter))
        attrs = {**attrs, "cooperative": True}
    return (k, adapter, [MODE_CODES[adapter.intent(i)] for i in range(nargs)],
            adapter.validate if adapter.validates else None,
            lambda tracer, args: record_args(tracer, args, adapter.intent,
                                             _device_only(adapter)),   # raises, naming it
            attrs,
            lambda tracer, rec: _refuse_addresses(tracer, adapter, rec))


def _cooperative_needed(adapter) -> str:
    if not _launch.COOPERATIVE_NODES:
        return (f"{adapter.library} kernel {adapter.name} {adapter.cooperative_reason}, "
                "which a graph kernel node cannot do: launch it eagerly, outside the "
                "@gt.graph function, or split it into kernels at its grid syncs")
    return (f"{adapter.library} kernel {adapter.name} {adapter.cooperative_reason}: "
            "launch it cooperatively, with all its blocks on the GPU at once: "
            "s.launch(kernel, grid, block, *args, cooperative=True) (or leave cooperative "
            "out: it is then launched so), or a LaunchConfig with is_cooperative=True")


LOWEST_ADDRESS = 1 << 16   # nothing is mapped below: smaller ints are no addresses


def _refuse_addresses(tracer, adapter, args) -> None:
    """An int that is the address of an argument's memory (``x.data.ptr``), also as a
    number the function receives: graphtrace would not know what the kernel touches."""
    for i, a in enumerate(args):
        if type(a) is Buffer:   # the usual case
            continue
        value = a._value if isinstance(a, Scalar) else a
        if isinstance(value, (np.datetime64, np.timedelta64)):   # (numpy integers)
            raise KernelArgumentError(
                f"argument {adapter.param_name(i)} of {adapter.library} kernel "
                f"{adapter.name} is a numpy {type(value).__name__} ({value!r}): a graph "
                "keeps a number's type, not its unit, so a later call's value in another "
                "unit would reach the kernel as a count in this one; pass the count as "
                f"an int in the unit the kernel works in (value // np.timedelta64(1, "
                "'ms')), or a one-element array")
        odd = untyped_number(value) if type(a) is Scalar else None
        if odd is not None:   # a later call's number of another type: traced anew
            raise untyped_error(adapter, i, odd)
        address = _count(value)
        root = tracer.root_holding(address) if address and address >= LOWEST_ADDRESS \
            else None
        if root is not None:
            raise KernelArgumentError(
                f"argument {adapter.param_name(i)} of {adapter.library} kernel "
                f"{adapter.name} is an int that points into {root.label} (such as "
                f"{root.label}.data.ptr): pass the array {root.label} itself, so that "
                "graphtrace sees what the kernel touches and moves it with a later "
                "call's arrays (a kernel taking raw addresses must be declared "
                "gt.kernel(k, opaque=True))")


def foreign_attribute(name: str, asked_by: str, hint: str = ""):
    """A method of the proxy stream for what libraries read from a real stream
    (wrapped in ``property`` for attributes): it raises a ``StreamError`` at the
    user's line naming what to write instead."""
    def refuse(self, *_):
        raise StreamError(_not_a_stream(f"{asked_by} asked for its {name}{hint}"))
    return refuse


_SPELLINGS = ("Record kernels with s.launch(kernel, grid, block, *args), "
              "kernel[grid, block, s](*args) or gt.launch(s, config, kernel, *args); run "
              "other library code (a cupy kernel called with stream=, ElementwiseKernel, "
              "torch ops, an ExternalStream) in a captured region, s.captured(fn, *args)")


def _not_a_stream(what: str) -> str:
    return f"a proxy stream is not a CUDA stream: {what}. {_SPELLINGS}"


# What compiled library code says when it reads a proxy stream as a stream handle
# (torch names the type; cupy's Cython only says it wanted an integer).
_HANDLE_WANTED = re.compile(r"\bnot Stream\b|an integer is required")


# cuda.core's own launch (bound before graphtrace replaced it) given another kernel:
# its argument check comes before it looks at the stream
_CORES_OWN = re.compile(r"Argument 'kernel' has incorrect type \(expected "
                        r"cuda\.core\.[\w.]*Kernel, got ([\w.]+)\)")


def stream_refusal(exc: TypeError, source) -> StreamError | None:
    """The ``StreamError`` for compiled library code (which graphtrace cannot
    intercept) that took a proxy stream for a stream handle, or for cuda.core's
    own launch given a kernel of another library; else None."""
    own = _CORES_OWN.search(str(exc))
    if own is not None:
        return StreamError(
            f"cuda.core's own launch called inside a trace with a {own.group(1)} kernel: it "
            "launches cuda.core Kernels alone, at once and not in the graph (a name bound "
            "by 'from cuda.core import launch' before graphtrace was imported keeps "
            "cuda.core's own; graphtrace replaces it with gt.launch, which records any "
            "kernel on a proxy stream): import graphtrace first, or call gt.launch(s, "
            "config, kernel, *args)", source=source)
    if not _HANDLE_WANTED.search(str(exc)):
        return None
    return StreamError(_not_a_stream(f"a library took it for a stream handle ({exc})"),
                       source=source)


def cupy_call_refusal(exc: BaseException, source) -> TraceError | None:
    """The error for cupy code called in a trace where there is no GPU (the
    simulator), which fails in cupy before it could see the proxy stream: a cupy
    kernel called in cupy's spelling (``k(grid, block, args, stream=s)``) is the
    ``StreamError`` a GPU gives, other cupy calls what a GPU's fence says of
    eager cupy work; else None."""
    if not needs_gpu(exc):
        return None
    calls = cupy_calls(exc)
    if not calls:
        return None
    if calls[0].endswith(("RawKernel.__call__", "Function.__call__")):
        return StreamError(
            "a cupy kernel called in cupy's own spelling inside a trace (k(grid, block, "
            "args, stream=s), or without stream=): cupy launches it at once on a CUDA "
            "stream, not in the graph, and a proxy stream is no CUDA stream (here cupy "
            "cannot launch at all: there is no GPU, and the simulator runs the graph). "
            f"{_SPELLINGS}; on the simulator @gt.reference(k) stands in for a cupy kernel",
            source=source)
    return HostSyncError(
        f"cupy code inside a trace ({calls[0]}) runs at once on cupy's stream, not in "
        "the graph (here it cannot run at all: there is no GPU, and the simulator runs "
        "the graph): "
        "launch kernels on the proxy stream (s.launch, s.copy, s.memset), compute "
        "outside the decorated function, or run library code in a captured region, "
        "s.captured(fn, *args), which the simulator runs with numpy arrays", source=source)


def _dims(d):
    return str(d[0]) if d[1:] == (1, 1) else "(" + ", ".join(map(str, d)) + ")"


class KernelOp(Op):
    """A kernel launch: ``target`` is the kernel's ``Adapter``, ``args`` the
    launch arguments as recorded; ``attrs``: the launch options of ``_launch.py``
    (``grid``, ``block``, ``shared_mem``, ``cluster``, ``cooperative``).
    ``gpu.state`` keeps (cuda.core Kernel, meta)."""

    kind = "kernel"

    def describe(self, node, namer) -> str:
        a = node.attrs
        args = ", ".join(namer.value(v) for v in node.args)
        return f"{node.target.name}[{_dims(a['grid'])}, {_dims(a['block'])}]({args})" \
            + _launch.describe(a)

    def verify(self, node) -> str | None:
        a = node.attrs
        if not isinstance(node.target, Adapter):
            return f"its target is {type(node.target).__name__}, not a kernel Adapter"
        if not all(isinstance(a.get(k), tuple) and len(a[k]) == 3 for k in ("grid", "block")):
            return "grid and block must be 3-tuples"
        cluster = a.get("cluster")
        if cluster is not None and (len(cluster) != 3 or
                                    any(g % c for g, c in zip(a["grid"], cluster))):
            return f"grid {a['grid']} is not a whole number of clusters {cluster}"
        return None

    def check_values(self, value_of, node) -> None:
        """A later call's number no kernel takes (an int wider than 64 bits where
        the traced one fitted), or one its parameter would change (2.5 for a cupy
        kernel's ``int n``: ``Adapter.check_number``), is refused before the graph runs."""
        for i, a in enumerate(node.args):
            if type(a) is Scalar:
                value = value_of(a)
                odd = untyped_number(value)
                if odd is not None:
                    raise untyped_error(node.target, i, odd + " in this call", node.source)
                node.target.check_number(i, value, node.source, a._value)

    driver_update = exec_update = True

    def emit(self, gpu, node, parent):
        """Added through the driver with all its dependencies (``_driver_nodes.py``),
        then given its cluster and cooperative attributes."""
        return self.emit_launch(gpu, node.target, node.args, node.attrs, node.index, parent,
                                gpu.take_preds())

    def emit_launch(self, gpu, target, args, a, index, parent, preds):
        """``emit`` of a launch from what the trace recorded (``columns.Recording``),
        without its Node: ``GpuContext.emit_region`` adds launches so, once per
        node of a build. Returns the node's handle, after the handles ``preds``."""
        kern, meta, values, needs_cooperative = gpu.kernel_arguments(target, args)
        gpu.state[index] = (kern, meta)
        if needs_cooperative or a.get("cooperative") or a.get("cluster") or \
                a["shared_mem"] > _launch.DEFAULT_SHARED:
            return self._emit_special(gpu, target, a, kern, needs_cooperative, parent,
                                      preds, values)
        return gpu.kernel_nodes.add(parent, preds, kern, target.handle_is_function, a["grid"],
                                    a["block"], a["shared_mem"], values)

    def _emit_special(self, gpu, target, a, kern, needs_cooperative, parent, preds, values):
        """``emit_launch`` of a cooperative or cluster launch, or one with more dynamic
        shared memory than a kernel may take without opting in."""
        cooperative = a.get("cooperative")
        if needs_cooperative and not cooperative:
            raise KernelArgumentError(_cooperative_needed(target))
        if a["shared_mem"] > _launch.DEFAULT_SHARED:
            _launch.allow_dynamic_shared(kern, a["shared_mem"], target.handle_is_function)
        if cooperative:   # (the recorded graph runs them one at a time: Tracer.cooperative)
            _launch.check_co_resident(kern, a)
        made = gpu.kernel_nodes.add(parent, preds, kern, target.handle_is_function, a["grid"],
                                    a["block"], a["shared_mem"], values)
        if cooperative or a.get("cluster"):
            _launch.set_node_attributes(made, a)
        return made

    def _launch(self, gpu, node) -> tuple:
        kern, meta = gpu.state[node.index]
        a = node.attrs
        return (kern, node.target.handle_is_function, a["grid"], a["block"], a["shared_mem"],
                node.target.pack(meta, node.args, gpu.value_of))

    def plan_patches(self, gpu, node, patches, roots, ptrs) -> bool:
        kern, meta = gpu.state[node.index]
        a, target = node.attrs, node.target
        launch = (kern, target.handle_is_function, a["grid"], a["block"], a["shared_mem"])
        held = (kern, meta, target, *launch[1:], *leaves(node.args))   # kept: ids stay
        return patches.plan(
            node, (tuple(map(id, held)), held),
            lambda value_of: target.pack(meta, node.args, value_of), roots, ptrs,
            gpu.value_of, gpu.handle(node), lambda: gpu.kernel_nodes.new_params(*launch))

    def update(self, gpu, node) -> None:
        gpu.kernel_nodes.set(gpu.handle(node), *self._launch(gpu, node),
                             executable=gpu.graph.handle)

    def update_definition(self, gpu, node) -> None:
        gpu.kernel_nodes.set(gpu.handle(node), *self._launch(gpu, node))

    def simulate(self, sim, node) -> None:
        """Run the kernel on the CPU; with ``sim.check``, prove its read-only arrays stay so."""
        a = node.attrs
        refusal = node.target.simulation_refusal(a["grid"])
        if refusal:
            raise SimulationError(refusal, source=node.source)
        kept = read_only_bytes(sim, node)
        try:
            node.target.simulate(a["grid"], a["block"], a["shared_mem"],
                                 [sim.value(v) for v in node.args])
        except GraphtraceError:
            raise
        except Exception as e:  # the kernel's own failure, with the launch line named
            raise SimulationError(f"kernel {node.target.name} failed on the simulator: "
                                  f"{type(e).__name__}: {e}", source=node.source) from e
        wrote = changed(sim, kept)
        if wrote is not None:
            raise self.intent_error(node, wrote)

    def intent_error(self, node, buf, detail: str = "") -> IntentError:
        i = arg_position(node.args, buf)
        param = f" (parameter {node.target.param_name(i)})" if i is not None else ""
        return IntentError(
            f"kernel {node.target.name} wrote to {buf.label or 'an array'}{param}{detail}, "
            "which it was inferred or declared to only read: wrap the argument in "
            "gt.InOut(...) or declare the kernel with gt.kernel(k, intents)",
            source=node.source)


KERNEL = KernelOp()

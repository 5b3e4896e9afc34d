"""numba's launch spellings with a proxy stream: ``kernel[grid, block, s](...)``,
``kernel[grid, block, s, shared_mem](...)`` and ``kernel.forall(n, stream=s)(...)``
record a launch (``record_launch``); with a real stream or none inside a trace,
or configured before it, they are refused, naming what to write instead. numba's
dispatcher classes (and the simulator's kernel) are patched once numba is
imported (``_install_launch_syntax``); the compiled tracing path takes the usual
spelling without a call into Python where it is built.
"""
from __future__ import annotations

import sys

import numpy as np

from ..context import ProxyStream, current_tracer, on_trace_start
from ..errors import ArgumentError, KernelArgumentError, StreamError
from ..probe import _has
from ..scalar import Scalar
from ..temporary import is_temporary
from ..tree import leaves
from .base import record_args
from . import kernel as _kernel
from ._adapter import Declared, adapter_for, misplaced_stream
from .kernel import record_launch

__all__ = []


if _kernel.speedups_module is not None:   # kernel[grid, block, s] compiled: proxies' class
    _kernel.speedups_module.configure_numba(ProxyStream)


class _ProxyLaunch(tuple):
    """What ``kernel[grid, block, s]`` returns for a proxy stream ``s``:
    ``(kernel, grid, block, s, shared_mem)``, made without a call into Python
    (one per launch)."""

    __slots__ = ()

    def __call__(self, *args, **kwargs):
        kernel, grid, block, stream, shared_mem = self
        if kwargs:
            _refuse_keywords(kernel, kwargs)
        key = None
        if type(grid) is int and type(block) is int and type(shared_mem) is int:
            key = _kernel.again(stream, kernel, grid, block, shared_mem, args)
            if key is True:
                return None   # recorded as an earlier launch with these very arguments
        return record_launch(stream, kernel, grid, block, args, shared_mem, key=key)


class _ProxyForAll:
    """What ``kernel.forall(ntasks, tpb, stream=s)`` returns for a proxy stream ``s``:
    a 1-D launch of ``ntasks`` threads, ``tpb`` per block (by default numba's
    choice: the driver's block size of best occupancy; one on the simulator)."""

    __slots__ = ("kernel", "ntasks", "tpb", "stream", "shared_mem")

    def __init__(self, kernel, ntasks, tpb, stream, shared_mem):
        self.kernel, self.ntasks, self.tpb = kernel, ntasks, tpb
        self.stream, self.shared_mem = stream, shared_mem

    def __call__(self, *args, **kwargs):
        if kwargs:
            _refuse_keywords(self.kernel, kwargs)
        ntasks, tpb = _forall_count(self.ntasks, "ntasks"), _forall_count(self.tpb, "tpb")
        if ntasks == 0:   # numba launches nothing
            return None
        tpb = tpb or self._block_size(args)
        return record_launch(self.stream, self.kernel, (ntasks + tpb - 1) // tpb, tpb, args,
                             self.shared_mem)

    def _block_size(self, args) -> int:
        adapter = adapter_for(self.kernel)   # a Declared one's kernel is its inner one's
        if getattr(adapter, "inner", adapter).simulated:
            return 1
        adapter.check_arity(len(args))
        rec, _ = record_args(self.stream.tracer(), args, adapter.intent, lambda i, b: None)
        adapter.validate(rec)
        kern, _ = adapter.compile(rec)
        return int(kern.occupancy.max_potential_block_size(self.shared_mem, 1024)[1])


Declared.launch_forall = staticmethod(_ProxyForAll)   # gt.kernel(k, ...).forall(n, stream=s)


def _refuse_keywords(kernel, kwargs) -> None:
    name = getattr(kernel, "__name__", None) or getattr(getattr(kernel, "py_func", None),
                                                         "__name__", "kernel")
    given = ", ".join(f"{k}=..." for k in kwargs)
    raise KernelArgumentError(
        f"numba kernel {name} given keyword arguments ({given}): numba launches take "
        "positional arguments only; pass them in the kernel's parameter order")


def _forall_count(n, what: str) -> int:
    if isinstance(n, Scalar):
        n._refuse()
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ArgumentError(f"forall's {what} must be a non-negative int, not {n!r}")
    return int(n)


def _spelled(c) -> str:
    return "s" if isinstance(c, ProxyStream) else repr(c)


def _not_a_proxy(name: str, cfg: tuple, module: str = "") -> str:
    """Why ``kernel[cfg]`` inside a trace names no proxy stream, and what to write."""
    where = cfg[2] if len(cfg) >= 3 else None
    if str(module).startswith("numba."):   # numba's own: a.T, a transposed copy
        return (f"numba launched a kernel of its own ({module}.{name}) inside a trace, for "
                "a numba array operation that runs on the GPU (a.T or a.transpose() of a "
                "device array, copying between arrays of other layouts): it would run now "
                "and escape the graph; write that step as a kernel of yours launched on the "
                "proxy stream, kernel[grid, block, s](...), or do it before the call")
    if any(isinstance(c, ProxyStream) for c in cfg):   # kernel[grid, s]: a block short
        return (f"numba kernel {name} launched as {name}[{', '.join(_spelled(c) for c in cfg)}]: "
                f"the proxy stream goes third, after the grid and the block (threads per "
                f"block), {name}[grid, block, s](...)")
    if isinstance(where, (tuple, list)):
        return (f"numba kernel {name} launched on a {type(where).__name__} of streams: "
                "s.if_else gives (then, otherwise) and s.switch a tuple of case streams; "
                "launch on one of them, kernel[grid, block, then](...)")
    if _has(where, "__enter__") and not _has(where, "handle"):
        return (f"numba kernel {name} launched on a loop or branch block, not on its body: "
                "with s.while_loop(...) as body: kernel[grid, block, body](...)")
    if where is None:   # kernel[grid, block](..., stream=s): the keyword is no launch's
        return (f"numba kernel {name} launched as {name}[grid, block] inside a trace, on "
                "no stream (numba's default one; a stream= keyword in the call is not "
                "numba's): it would run now and escape the graph; launch it on the proxy "
                "stream, kernel[grid, block, s](...)")
    misplaced = misplaced_stream(where)
    if misplaced is not None:
        return f"numba kernel {name} launched on {misplaced}"
    return (f"numba kernel {name} launched on a real stream inside a trace: it would run "
            "now and escape the graph; launch it on the proxy stream, "
            "kernel[grid, block, s](...)")


def _forall_not_a_proxy(name: str, stream) -> str:
    """Why ``kernel.forall(n, stream=...)`` inside a trace names no proxy stream."""
    where = "no stream (numba's default one)" if stream is None or type(stream) is int and stream == 0 else \
        f"a real stream ({stream!r})"
    return (f"numba kernel {name} launched as {name}.forall(n) inside a trace, on {where}: "
            "it would run now and escape the graph; pass the proxy stream, "
            f"{name}.forall(n, stream=s)(...)")


def _patch_launch_syntax(cls):
    """``kernel[grid, block, s]`` and ``kernel.forall(n, stream=s)`` with a proxy ``s``
    record; with a real stream inside a trace they are refused."""
    getitem = getattr(cls, "__getitem__", None)
    if getitem is None or getattr(getitem, "_graphtrace", False):
        return
    forall = cls.forall

    def __getitem__(self, config):
        if type(config) is tuple and len(config) == 3 and isinstance(config[2], ProxyStream):
            return _ProxyLaunch((self, *config, 0))   # the usual kernel[grid, block, s]
        cfg = config if isinstance(config, tuple) else (config,)
        if len(cfg) >= 3 and isinstance(cfg[2], ProxyStream):
            if len(cfg) > 4:   # numba refuses it too (a ValueError)
                raise KernelArgumentError(
                    f"numba kernel {self.py_func.__name__} launched with {len(cfg)} items in "
                    "its launch configuration: numba takes kernel[grid, block, stream] or "
                    "kernel[grid, block, stream, shared_mem_bytes]")
            return _ProxyLaunch((self, cfg[0], cfg[1], cfg[2], cfg[3] if len(cfg) > 3 else 0))
        if current_tracer() is not None:
            raise StreamError(_not_a_proxy(self.py_func.__name__, cfg,
                                           getattr(self.py_func, "__module__", "")))
        return getitem(self, config)

    def forall_(self, ntasks, tpb=0, stream=0, sharedmem=0):
        if isinstance(stream, ProxyStream):
            return _ProxyForAll(self, ntasks, tpb, stream, sharedmem)
        if current_tracer() is not None and not str(
                getattr(self.py_func, "__module__", "")).startswith("numba."):
            raise StreamError(_forall_not_a_proxy(self.py_func.__name__, stream))
        return forall(self, ntasks, tpb=tpb, stream=stream, sharedmem=sharedmem)

    __getitem__._graphtrace = True
    forall_.__doc__, forall_.__name__ = forall.__doc__, "forall"
    fast = _kernel.speedups_module   # kernel[grid, block, s] compiled, if built
    cls.__getitem__ = __getitem__ if fast is None else fast.Launcher(__getitem__, "getitem")
    cls.forall = forall_


@on_trace_start(on_import=True)
def _install_launch_syntax():
    """Route numba's launch spellings with a proxy stream to the tracer (idempotent)."""
    if "numba" not in sys.modules:   # kernels come from an imported numba
        return
    try:
        from numba.cuda.dispatcher import CUDADispatcher
        _patch_launch_syntax(CUDADispatcher)
    except ImportError:
        pass
    try:   # kernel[grid, block] configured before the trace, called in it
        from numba.cuda.dispatcher import _LaunchConfiguration
        _refuse_configured_calls(_LaunchConfiguration, lambda c: c.dispatcher.py_func.__name__)
    except ImportError:
        pass
    if "numba.cuda.simulator.kernel" in sys.modules:
        from numba.cuda.simulator.kernel import FakeCUDAKernel
        _patch_launch_syntax(FakeCUDAKernel)   # (kernel[grid, block] is the kernel there)
        _refuse_configured_calls(FakeCUDAKernel, lambda k: k.fn.__name__, simulated=True)


def _refuse_configured_calls(cls, name_of, simulated=False) -> None:
    """A launch configured before the trace (``cfg = kernel[grid, block]``, or
    ``kernel.configure(...)``) and called inside it would run at once on a real
    stream, outside the graph, and every replay would skip it: refused."""
    call = getattr(cls, "__call__", None)
    if call is None or getattr(call, "_graphtrace", False):
        return

    def __call__(self, *args, **kwargs):
        if current_tracer() is not None:
            name = name_of(self)
            raise StreamError(
                f"numba kernel {name} configured before the trace ({name}[grid, block]) is "
                "called inside it: it would run now, on a real stream, and escape the graph; "
                f"launch it on the proxy stream, {name}[grid, block, s](...)")
        if simulated:   # a temporary kept past its trace is refused here, at the user's
            for v in leaves(args):   # line, not in a thread of the simulator's
                if is_temporary(v):
                    v.shape   # noqa: B018  (refused: its trace has ended)
        return call(self, *args, **kwargs)

    __call__._graphtrace = True
    __call__.__doc__ = call.__doc__
    cls.__call__ = __call__

"""What a captured region switches while it is captured: the libraries it uses
(``_libraries``: those of the arrays it is handed and of its code), their current
streams and allocators (``_Libraries``) and cupy's cache of cuFFT plans
(``_PlanCaches``), each switched to the region's and back after the capture."""
from __future__ import annotations

import sys
import threading

from ..buffers import Buffer
from ..scalar import Scalar
from ..tree import leaves
from ._library_state import libraries, library_of

def _libraries(node) -> set:
    """The libraries whose arrays a region is handed, and those its function's code
    names (``torch.as_tensor(z)`` of a cupy array ``z``: torch's work, run on
    torch's own stream, would not be captured), every one imported if none: only
    their streams and allocators are switched. A library switched for nothing
    would only be exposed to the capture (torch aborts the process when a capture
    it takes part in is broken by another library's host read)."""
    return (_handed(node) | libraries(node.target)) & _SWITCHED or _SWITCHED


_SWITCHED = frozenset({"cupy", "torch"})


def _handed(node) -> set:
    """The libraries of the arrays and other objects a region is handed (a torch
    model, an optimizer)."""
    out = set()
    for b in leaves(node.args):
        if isinstance(b, Buffer):
            if b.obj is not None:
                out.add(type(b.obj).__module__.split(".")[0])
        elif not isinstance(b, Scalar) and (lib := library_of(b)):
            out.add(lib)
    return out


def _temporaries_library(node, libraries=None) -> str:
    """The library whose arrays a region's temporaries are handed as: that of its
    other arrays or its code (``libraries``, ``_libraries``; cupy first), else the
    first of cupy and torch imported."""
    handed = _libraries(node) if libraries is None else libraries
    return next((lib for lib in ("cupy", "torch") if lib in handed and lib in sys.modules),
                "numba")


class _Handle:
    """A stream's handle, as the CUDA stream protocol hands it over."""
    __slots__ = ("handle",)

    def __init__(self, handle: int):
        self.handle = handle

    def __cuda_stream__(self) -> tuple:
        return 0, self.handle


def _cupy_stream(cp, handle: int, dev: int):
    """cupy's Stream of stream ``handle`` of device ``dev`` (the current device):
    ``Stream.from_external`` where cupy has it (cupy 14 deprecates ExternalStream)."""
    from_external = getattr(cp.cuda.Stream, "from_external", None)
    return cp.cuda.ExternalStream(handle, dev) if from_external is None else \
        from_external(_Handle(handle))


class _Libraries:
    """cupy's and torch's current stream of each of the region's devices and their
    allocator, switched to the region's for the capture and back after it."""

    def __init__(self, region, streams: dict, libraries: set):
        self.region, self.streams, self.exits = region, streams, []
        self.libraries = libraries

    def __enter__(self):
        try:
            self._switch()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _switch(self):
        r = self.region
        cp = sys.modules.get("cupy") if "cupy" in self.libraries else None
        if cp is not None:
            if r.cupy_pool is None:
                r.cupy_pool = cp.cuda.MemoryPool()
            for dev, handle in self.streams.items():
                with cp.cuda.Device(dev):   # cupy sets the stream of the current device
                    self._enter(_cupy_stream(cp, handle, dev))
            self._enter(cp.cuda.using_allocator(r.cupy_pool.malloc))
            self._enter(_PlanCaches(r))
        torch = sys.modules.get("torch") if "torch" in self.libraries else None
        if torch is not None and torch.cuda.is_available():
            for dev, handle in self.streams.items():
                device = torch.device("cuda", dev)
                self._enter(torch.cuda.stream(torch.cuda.ExternalStream(handle, device=device)))
                if hasattr(torch.cuda, "use_mem_pool"):   # torch >= 2.6
                    if r.torch_pool is None:
                        r.torch_pool = torch.cuda.MemPool()
                    self._enter(torch.cuda.use_mem_pool(r.torch_pool, device=device))
        if len(self.streams) > 1:   # the function starts on the region's first device
            first = next(iter(self.streams))
            if cp is not None:
                self._enter(cp.cuda.Device(first))
            elif torch is not None and torch.cuda.is_available():
                self._enter(torch.cuda.device(first))

    def _enter(self, context):
        context.__enter__()
        self.exits.append(context)

    def __exit__(self, *exc):
        while self.exits:   # restore only: an error in the region propagates as it is
            self.exits.pop().__exit__(None, None, None)
        return False


class _PlanCaches:
    """cupy's FFTs take their cuFFT plans from a cache of the region's own while it
    is captured. A captured FFT runs its plan's kernels and work area at every
    replay, so the plan must live as long as the graph: one in cupy's shared cache
    would be destroyed when FFTs of other sizes evict it (16 plans by default),
    and the graph could no longer be updated. The region's caches have no limit.

    cupy's ``get_plan_cache`` is replaced once, for good, by one that answers the
    caches of the region the calling thread captures (``_fft_plans.caches``) and
    cupy's own otherwise: FFTs of other threads, and graphs built in two threads
    at once, each keep theirs."""

    def __init__(self, region):
        self.region, self.saved, self.entered = region, None, False

    def __enter__(self):
        if _plan_cache_dispatch() is not None:
            self.saved = getattr(_fft_plans, "caches", None)
            _fft_plans.caches, self.entered = self.region.fft_plans, True
        return self

    def __exit__(self, *exc):
        if self.entered:
            _fft_plans.caches, self.entered = self.saved, False
        return False


_fft_plans = threading.local()   # .caches: device -> PlanCache, while a region captures
_dispatch: list = []   # the installed replacement of cupy's get_plan_cache, once


def _plan_cache_dispatch():
    """Install, once, cupy's ``get_plan_cache`` answering a capturing region's
    caches; None where this cupy has no such function (its shared cache is used)."""
    if _dispatch:
        return _dispatch[0]
    with _installing:
        return _dispatch[0] if _dispatch else _install()


_installing = threading.Lock()


def _install():
    try:
        import cupy.fft._fft as module
        from cupy.fft._cache import PlanCache
    except ImportError:
        return None
    shared = getattr(module, "get_plan_cache", None)
    if not callable(shared):
        return None
    def get_plan_cache():
        caches = getattr(_fft_plans, "caches", None)
        if caches is None:
            return shared()
        dev = sys.modules["cupy"].cuda.runtime.getDevice()
        cache = caches.get(dev)
        if cache is None:
            cache = caches[dev] = PlanCache(size=-1, memsize=-1, dev=dev)
        return cache

    get_plan_cache.shared = shared
    module.get_plan_cache = get_plan_cache
    _dispatch.append(get_plan_cache)
    return get_plan_cache

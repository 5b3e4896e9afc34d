"""Host synchronisations inside a trace are errors, where they can be seen.

While a thread traces, a host synchronisation (``cuda.synchronize()``,
``copy_to_host()``, ``cupy.asnumpy``, ``torch.cuda.synchronize()``) would
wait for nothing, or read data the graph has not produced yet. These Python
entry points are wrapped once; the wrapper costs one thread-local lookup
outside a trace. Methods of compiled classes (``cupy.ndarray.get``) cannot be
wrapped.
"""
from __future__ import annotations

import importlib
import sys

from .errors import HostSyncError
from .ops import on_trace_start

# (module, attribute path) of host synchronisations.
_SYNCS = [
    ("numba.cuda", "synchronize"),
    ("numba.cuda.cudadrv.devicearray", "DeviceNDArray.copy_to_host"),
    ("numba.cuda.simulator.cudadrv.devicearray", "FakeCUDAArray.copy_to_host"),
    ("cupy", "asnumpy"),
    ("torch.cuda", "synchronize"),
]


def _guard(original, what):
    def guarded(*args, **kwargs):
        from .trace import current_tracer
        if current_tracer() is not None:
            raise HostSyncError(
                f"{what} inside a trace: the graph's work has not run yet, so there is "
                "nothing to wait for or read; move it after the call of the decorated "
                "function, or use s.copy into pinned host memory plus s.host(fn, ...) "
                "to look at results inside the graph")
        return original(*args, **kwargs)
    guarded._graphtrace_guard = True
    guarded.__wrapped__ = original
    return guarded


@on_trace_start
def install() -> None:
    for module, path in _SYNCS:
        if module.split(".")[0] not in sys.modules:
            continue
        try:
            owner = importlib.import_module(module)
        except Exception:  # noqa: BLE001  (a module that cannot load has nothing to guard)
            continue
        *parents, attr = path.split(".")
        for p in parents:
            owner = getattr(owner, p, None)
        original = getattr(owner, attr, None)
        if original is None or getattr(original, "_graphtrace_guard", False):
            continue
        try:
            setattr(owner, attr, _guard(original, f"{module}.{path}()"))
        except (AttributeError, TypeError):
            pass

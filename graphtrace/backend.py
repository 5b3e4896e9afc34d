"""Where a decorated function runs: on the GPU, or on the CPU simulator.

``GRAPHTRACE_BACKEND=gpu|sim`` chooses for the whole process; without it,
graphtrace uses the GPU when a driver and a device are there and the
simulator otherwise, so the same script or notebook runs on a laptop. A
call or a function can choose too: ``f(..., backend="sim")``,
``@graph(backend="sim")``.
"""
from __future__ import annotations

import os
import sys
import warnings

from . import _driver
from .errors import ArgumentError, user_frame
from .probe import _has

__all__ = ["default_backend", "resolve", "runnable", "BACKENDS"]

BACKENDS = ("gpu", "sim")


def default_backend() -> str:
    chosen = os.environ.get("GRAPHTRACE_BACKEND", "").strip().lower()
    if chosen:
        if chosen not in BACKENDS:
            raise ValueError(f"GRAPHTRACE_BACKEND must be 'gpu' or 'sim', not {chosen!r}")
        return chosen
    return "gpu" if _driver.available() else "sim"


def resolve(*choices) -> str:
    """The first backend named among ``choices`` (None skipped), else the default."""
    for c in choices:
        if c is not None:
            if c not in BACKENDS:
                raise ValueError(f"backend must be 'gpu' or 'sim', not {c!r}")
            return c
    return default_backend()


def runnable(backend: str) -> str:
    """``backend``, where a call can run on it now: ``"gpu"`` asked for where there
    is no GPU is an error at the user's line that says so (the driver library's
    own, deep in building the graph, named neither the call nor the way out)."""
    if backend == "gpu" and not _driver.available():
        raise ArgumentError(
            "backend='gpu' was asked for, but this machine has no CUDA driver or no GPU "
            "device: run on the CPU simulator with backend='sim', or leave the backend "
            "out to have graphtrace choose by the machine", user_frame())
    return backend


def prepare_numba() -> None:
    """On the simulator, have numba build simulator kernels (before it is imported);
    where numba.cuda was imported first, without its simulator, on a machine with no
    GPU, warn: numba's own calls would fail (``CUDA driver library cannot be
    found``), naming neither the order of the imports nor the way out."""
    chosen = os.environ.get("GRAPHTRACE_BACKEND", "").strip().lower()
    if chosen == "gpu" and not _driver.available():
        file, line = _importer()
        warnings.warn_explicit(
            "GRAPHTRACE_BACKEND=gpu is set, but this machine has no CUDA driver or no GPU "
            "device: graphs will refuse to run, and numba's own calls (cuda.to_device) fail "
            "with \"CUDA driver library cannot be found\". Unset GRAPHTRACE_BACKEND to have "
            "graphtrace choose by the machine, or set GRAPHTRACE_BACKEND=sim for the CPU "
            "simulator", UserWarning, file, line)
        return
    if "numba.cuda" not in sys.modules:
        if default_backend() == "sim" and "NUMBA_ENABLE_CUDASIM" not in os.environ:
            os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
            config = sys.modules.get("numba.core.config")   # import numba came first: it
            if config is not None:                          # read the environment then
                config.ENABLE_CUDASIM = 1
    elif not getattr(getattr(sys.modules.get("numba"), "config", None), "ENABLE_CUDASIM", 1) \
            and chosen in ("", "sim") \
            and not _driver.available():
        file, line = _importer()
        warnings.warn_explicit(
            "numba.cuda was imported before graphtrace, without numba's CUDA simulator, on a "
            "machine with no CUDA driver or no GPU: numba's arrays and kernels will fail "
            "(\"CUDA driver library cannot be found\"), and graphtrace cannot switch numba "
            "to its simulator now. Import graphtrace before numba.cuda, or set "
            "NUMBA_ENABLE_CUDASIM=1 in the environment before numba is imported (in a "
            "notebook, restart the kernel after either)", UserWarning, file, line)


def _importer() -> tuple[str, int]:
    """The program's line that imported graphtrace (past the import machinery's
    frames and graphtrace's own)."""
    f = sys._getframe(2)
    while f is not None and (f.f_code.co_filename.startswith("<frozen") or
                             f.f_code.co_filename.startswith(_PACKAGE)):
        f = f.f_back
    return ("<unknown>", 0) if f is None else (f.f_code.co_filename, f.f_lineno)


_PACKAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "")


_STREAM_LIBRARIES = frozenset({"numba", "numba_cuda", "cupy", "cupy_backends", "torch", "cuda"})


def is_stream(v) -> bool:
    """Whether ``v`` is a stream object of a library (numba's, its simulator's,
    cupy's, torch's, cuda.core's) or anything with ``__cuda_stream__``."""
    t = type(v)
    return _has(t, "__cuda_stream__") or t.__name__.lower().endswith("stream") and \
        t.__module__.split(".")[0] in _STREAM_LIBRARIES


def check_stream(stream) -> None:
    """Refuse what no launch can take as its ``stream=`` (a GPU launch asks the
    driver; the simulator, which needs none, checks the same)."""
    if stream is None or is_stream(stream) or _has(stream, "handle") or \
            isinstance(stream, int) and not isinstance(stream, bool):
        return
    raise stream_error(stream)


class StreamKeywordError(ArgumentError, TypeError):
    """A ``stream=`` (a call's, or a compiled graph's ``launch(stream)``) that no
    launch can take: an error at the user's line, and a ``TypeError`` too."""


def stream_error(stream) -> StreamKeywordError:
    return StreamKeywordError(
        f"cannot launch on {type(stream).__name__}: pass a cupy, torch, numba or cuda.core "
        "stream, an object with __cuda_stream__, or a handle int")

"""Errors raised by graphtrace.

Every error that stems from the user's code carries the user's source
location (``file:line``) of the offending call and says what to do instead.
The location is found by walking the stack past graphtrace's own frames (and
those of the kernel libraries it intercepts and of the standard library), like
torch.fx does.
"""
from __future__ import annotations

import os
import sys
import sysconfig

__all__ = [
    "GraphtraceError", "TraceError", "StreamError", "ArgumentError",
    "PageableMemoryError", "HostSyncError", "ShapeMismatchError",
    "DynamicScalarError", "KernelArgumentError", "SimulationError",
    "IntentError", "EmitError", "CaptureError", "IRError", "MissingDependencyError",
    "DepthWarning", "raised_by_program", "user_frame", "user_frame_object",
]

_PKG_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "")   # graphtrace/
# Frames of these libraries sit between the user's line and graphtrace when a
# launch goes through their syntax (numba's ``kernel[grid, block, s](...)``), or
# when they ask a proxy stream for what a real one has (``torch.cuda.stream(s)``),
# or when a numpy function given a temporary reaches what refuses it (``np.sum(t)``).
# They are told by where they are installed, not by a folder's name: the user's
# own backends/numba/solver.py is the user's.
_LIBRARIES = ("numba", "numba.cuda", "numba_cuda", "cupy", "torch", "numpy")
_library_dirs: dict[str, str] = {}   # library -> its folder, once it is imported


def _folders(*paths) -> tuple:
    """Each folder as given and resolved, with a trailing separator."""
    return tuple({os.path.join(q, "") for p in paths if p for q in (p, os.path.realpath(p))})


_PATHS = sysconfig.get_paths()
# the installed packages' folders, and the standard library's (which may hold them)
LIBRARY_DIRS = _folders(_PATHS["purelib"], _PATHS["platlib"], *(
    p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages")))
_STDLIB_DIRS = _folders(_PATHS["stdlib"], _PATHS["platstdlib"])


def _libraries() -> tuple:
    """The folders (with a trailing separator) of the libraries imported so far."""
    for name in _LIBRARIES:
        if name not in _library_dirs:
            path = getattr(sys.modules.get(name), "__file__", None)
            if path:
                _library_dirs[name] = os.path.join(os.path.dirname(path), "")
    return tuple(_library_dirs.values())


def _is_ours(filename: str) -> bool:
    """Whether ``filename`` is graphtrace's own code or an intercepted library's."""
    return filename.startswith(_PKG_DIR) or filename.startswith(_libraries())


def _in_stdlib(filename: str) -> bool:
    """Whether ``filename`` is the standard library's (statistics.py calling a dynamic
    scalar's operator for the user's statistics.mean([a, b]), contextlib's, functools')."""
    return filename.startswith(_STDLIB_DIRS) and not filename.startswith(LIBRARY_DIRS)


_internal: dict[str, bool] = {}  # filename -> skipped? (asked once per file)


def _is_internal(filename: str) -> bool:
    hit = _internal.get(filename)
    if hit is None:
        hit = _internal[filename] = _is_ours(filename) or _in_stdlib(filename)
    return hit


def user_frame_object(depth: int = 1):
    """The innermost frame outside graphtrace (None if there is none)."""
    f = sys._getframe(depth)
    while f is not None:
        inside = _internal.get(f.f_code.co_filename)   # once per launch: no call per frame
        if inside is None:
            inside = _is_internal(f.f_code.co_filename)
        if not inside:
            break
        f = f.f_back
    return f


def user_frame(depth: int = 1) -> tuple[str, int]:
    """Return ``(filename, lineno)`` of the innermost frame outside graphtrace."""
    f = user_frame_object(depth + 1)
    if f is None:
        return ("<unknown>", 0)
    return (f.f_code.co_filename, f.f_lineno)


def raised_by_program(e: BaseException):
    """``(file, line, function)`` of the frame that raised ``e`` where it is the
    program's own code (outside graphtrace, the libraries it intercepts and the
    standard library: an object's own ``__getattribute__``, ``__hash__`` or
    ``__eq__`` that graphtrace's inspection ran); None where graphtrace (or a
    library, or Python itself in C) raised it."""
    tb = e.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    return None if _is_internal(code.co_filename) else \
        (code.co_filename, tb.tb_lineno, code.co_name)


def format_source(source: tuple[str, int] | None) -> str:
    """``file.py:12``; a notebook cell's line as IPython names it: ``Cell In[2], line
    3`` (not the temporary file ipykernel compiles the cell from)."""
    if not source:
        return "<unknown>"
    cell = _cell(source[0])
    return f"{cell}, line {source[1]}" if cell else f"{os.path.basename(source[0])}:{source[1]}"


def _cell(filename: str) -> str | None:
    """IPython's name for the cell compiled from ``filename`` (``Cell In[2]``: its
    compiler maps the file names it gives cells to their execution counts), or None
    outside IPython and for a file of its own."""
    ipython = sys.modules.get("IPython")
    try:
        shell = ipython.get_ipython() if ipython is not None else None
        named = shell.compile.format_code_name(filename) if shell is not None else None
    except Exception:   # another IPython, without the mapping
        return None
    return f"{named[0]} {named[1]}" if type(named) is tuple and len(named) == 2 else None


def near(source: tuple[str, int], other: tuple[str, int] | None) -> str:
    """``source`` as a message beside ``other`` names it: ``line 12`` in the same
    file, ``file.py:12`` in another."""
    return f"line {source[1]}" if other and source[0] == other[0] else format_source(source)


def counted(n: int, noun: str) -> str:
    """``1 node``, ``2 nodes``: a count as a listing or message says it."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


class GraphtraceError(Exception):
    """Base class. ``source`` is the user's ``(file, line)`` the error is about."""

    def __init__(self, message: str, source: tuple[str, int] | None = None):
        self.message = message
        self.source = source if source is not None else user_frame(2)
        super().__init__(f"{format_source(self.source)}: {message}")


class TraceError(GraphtraceError):
    """Misuse of graphtrace while tracing a function."""


class StreamError(TraceError):
    """A proxy stream used outside its trace, or a real stream used inside one."""


class ArgumentError(TraceError):
    """An argument (or a value passed to an op) that cannot be traced."""


class PageableMemoryError(ArgumentError):
    """Pageable host memory where a graph needs pinned host memory."""


class HostSyncError(TraceError):
    """A host synchronisation attempted inside a trace."""


class ShapeMismatchError(ArgumentError):
    """Source and destination of a copy do not match."""


class DynamicScalarError(TraceError):
    """A dynamic scalar argument used in Python control flow or arithmetic."""


class KernelArgumentError(ArgumentError):
    """A kernel argument that does not fit the kernel's parameter."""


class SimulationError(GraphtraceError):
    """The CPU simulator cannot execute a node, or found a broken intent."""


class IntentError(SimulationError):
    """A node changed memory it was inferred or declared to only read.

    Raised by the simulator, and on the GPU by ``@graph(check_intents=True)``
    (a ``SimulationError`` too, which the simulator raised for it first).
    """


class EmitError(GraphtraceError):
    """The driver refused a node while building the CUDA graph."""


class CaptureError(EmitError):
    """A captured region's code could not be captured into the graph (a host
    synchronisation in it, or a library that refuses capture); ``source`` is the
    line inside the region."""


class IRError(GraphtraceError):
    """A recorded graph breaks an invariant of the IR (``Graph.verify``): a bug in
    graphtrace or in an op, not in the user's code. The message names the node
    and holds the listing; ``source`` is the line that recorded the node."""


class MissingDependencyError(GraphtraceError):
    """An optional package or program a feature needs is not installed (Graphviz for
    pictures, matplotlib for timelines); the message says how to install it."""


class DepthWarning(UserWarning):
    """An object of the program's own lies deeper in what a decorated function
    holds than graphtrace walks: what the graph reads off it is not watched."""


def summary(e: BaseException) -> str:
    """``ValueError: its first line``: what a failed trace raised, in a later message."""
    try:
        text = str(e).strip().splitlines()
    except Exception:   # noqa: BLE001  (an exception whose str raises)
        text = []
    return f"{type(e).__name__}: {text[0][:160]}" if text else type(e).__name__

"""graphtrace: ordinary Python GPU code, traced into explicit CUDA graphs."""
from .backend import prepare_numba as _prepare_numba

_prepare_numba()  # before numba.cuda is imported, where there is no GPU

from .arrays import pinned_empty, sim_device
from .buffers import In, InOut, Out
from .errors import (ArgumentError, CaptureError, DepthWarning, DynamicScalarError, EmitError,
                     GraphtraceError, HostSyncError, IntentError, IRError, KernelArgumentError,
                     MissingDependencyError, PageableMemoryError, ShapeMismatchError,
                     SimulationError, StreamError, TraceError)
from .function import CacheInfo, GraphFunction, graph
from .retrace import RetraceWarning, StateWarning
from .ir import Graph, Node
from .scalar import Scalar
from .ops.kernel import kernel
from .ops._core import launch
from .ops._conditions import Condition, cond
from .ops._reference import reference
from .stream import Stream
from .sim import simulate
from .check import check, Race
from .explain import explain, Explanation
from . import backend
from . import nccl
from . import _guards  # noqa: F401  (host-sync guards, installed at the first trace)

__version__ = "0.1.0"

__all__ = [
    "graph", "GraphFunction", "CacheInfo", "RetraceWarning", "StateWarning", "Graph", "Node", "Scalar", "Stream",
    "In", "Out", "InOut", "kernel", "launch", "pinned_empty", "reference", "simulate", "backend",
    "check", "Race", "explain", "Explanation", "cond", "Condition", "nccl", "sim_device",
    "GraphtraceError", "TraceError", "StreamError", "ArgumentError",
    "PageableMemoryError", "HostSyncError", "ShapeMismatchError",
    "DynamicScalarError", "KernelArgumentError", "SimulationError", "IntentError", "EmitError",
    "CaptureError", "IRError", "MissingDependencyError", "DepthWarning",
]

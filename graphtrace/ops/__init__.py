"""The op table: one entry per node kind.

Each op family module registers, for its node kinds, how a node is described
in listings, emitted into a CUDA graph and simulated on the CPU, and adds its
proxy-stream methods. The tracer and the dependency inference never grow a
branch per op: they only call what this table holds.
"""
from .base import OPS, Op  # noqa: F401
from . import kernel, memory, host, control  # noqa: F401  (the op families)
from . import _numba, _cupy, _core  # noqa: F401  (kernel adapters: each registers itself)

"""Python stand-ins for kernels the CPU simulator cannot run by itself.

The simulator runs numba kernels through numba's CUDA simulator; any other
kernel (a cupy ``RawKernel``, a cuda.core ``Kernel``) needs a Python function
registered for it with ``gt.reference``.
"""
from __future__ import annotations

from ..errors import SimulationError
from .kernel import Adapter

__all__ = ["reference", "reference_for"]

_references: dict[int, tuple] = {}   # id(kernel) -> (kernel, its Python stand-in)


def reference(kernel):
    """Register a Python function that stands for ``kernel`` on the simulator.

    The function receives ``(grid, block, *args)`` with arrays as numpy arrays.

    >>> @gt.reference(saxpy_raw_kernel)                   # doctest: +SKIP
    ... def saxpy(grid, block, x, y, a, n):
    ...     y[:n] += a * x[:n]
    """
    def register_fn(fn):
        keys = [kernel.kernel] if isinstance(kernel, Adapter) else [kernel]
        for k in keys:
            _references[id(k)] = (k, fn)
        return fn
    return register_fn


def reference_for(adapter):
    """The stand-in registered for an adapter's kernel; raises if there is none."""
    hit = _references.get(id(adapter.kernel)) or _references.get(id(adapter))
    if hit is None:
        raise SimulationError(
            f"no CPU reference for {adapter.library} kernel {adapter.name}: the simulator "
            "runs only numba kernels by itself; register a Python stand-in with "
            f"@gt.reference({adapter.name}) def f(grid, block, *args): ...", source=None)
    return hit[1]

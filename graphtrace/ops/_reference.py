"""Python stand-ins for kernels the CPU simulator cannot run by itself.

The simulator runs numba kernels through numba's CUDA simulator; any other
kernel (a cupy ``RawKernel``, a cuda.core ``Kernel``) needs a Python function
registered for it with ``gt.reference``.
"""
from __future__ import annotations

from ..errors import ArgumentError, SimulationError
from ._adapter import ADAPTERS, Adapter

__all__ = ["reference", "reference_for", "missing_reference", "ReferenceAdapter"]

_references: dict[int, tuple] = {}   # id(kernel) -> (kernel, its Python stand-in)


def reference(kernel):
    """Register a Python function that stands for ``kernel`` on the simulator.

    The function receives ``(grid, block, *args)`` with arrays as numpy arrays
    and, for a cupy kernel, numbers as numpy scalars of their parameters' C types
    (``np.int32`` for ``int n``, ``np.float32`` for ``float a``), as the kernel does.

    >>> @gt.reference(saxpy_raw_kernel)                   # doctest: +SKIP
    ... def saxpy(grid, block, x, y, a, n):
    ...     y[:n] += a * x[:n]
    """
    _refuse_self_run(kernel)

    def register_fn(fn):
        keys = [kernel.kernel] if isinstance(kernel, Adapter) else [kernel]
        for k in keys:
            _references[id(k)] = (k, fn)
        return fn
    return register_fn


def _refuse_self_run(kernel) -> None:
    """An ``ArgumentError`` for a kernel the simulator runs by itself (numba's, on
    numba's CUDA simulator): a stand-in registered for it would never run."""
    inner = getattr(kernel, "inner", kernel) if isinstance(kernel, Adapter) else kernel
    if isinstance(inner, Adapter):
        runs_itself = not isinstance(inner, ReferenceAdapter)
    else:
        factory = next((make for accepts, make in ADAPTERS if accepts(inner)), None)
        runs_itself = isinstance(factory, type) and not issubclass(factory, ReferenceAdapter)
    if runs_itself:
        name = getattr(kernel, "name", None) if isinstance(kernel, Adapter) else \
            getattr(getattr(inner, "py_func", None), "__name__", None)
        raise ArgumentError(
            f"@gt.reference({name or 'kernel'}): {name or 'this kernel'} is a numba kernel, "
            "which the simulator runs by itself on numba's CUDA simulator and never through "
            "a stand-in: drop the @gt.reference (stand-ins are for kernels the simulator "
            "cannot run: cupy's and cuda.core's)")


def _registered(adapter):
    hit = _references.get(id(adapter.kernel)) or _references.get(id(adapter))
    return None if hit is None else hit[1]


def missing_reference(adapter) -> str | None:
    """Why the simulator cannot run an adapter's kernel: no stand-in registered
    for it (None where there is one)."""
    if _registered(adapter) is not None:
        return None
    called = adapter.name if adapter.name.isidentifier() else "kernel"
    return (f"no CPU reference for {adapter.library} kernel {adapter.name}: the simulator "
            "runs only numba kernels by itself; register a Python stand-in with "
            f"@gt.reference({called}) def f(grid, block, *args): ...")


def reference_for(adapter):
    """The stand-in registered for an adapter's kernel; raises if there is none."""
    fn = _registered(adapter)
    if fn is None:
        raise SimulationError(missing_reference(adapter), source=None)
    return fn


class ReferenceAdapter(Adapter):
    """An adapter of a kernel the simulator cannot run by itself (cupy's, cuda.core's):
    there it runs the stand-in registered for it, and a launch without one is refused
    at its line."""

    def simulate(self, grid, block, shared_mem, values):
        reference_for(self)(grid, block, *values)

    def simulation_refusal(self, grid) -> str | None:
        return missing_reference(self)

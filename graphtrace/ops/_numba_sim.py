"""numba kernels on numba's CUDA simulator, for the CPU reference executor."""
from __future__ import annotations

import threading
import types

__all__ = ["run_numba_kernel", "is_device_function"]

_kernel_lock = threading.Lock()      # numba's simulator runs one kernel at a time


def is_device_function(k) -> bool:
    """Whether ``k`` is a numba device function (``@cuda.jit(device=True)``)."""
    name = type(k).__name__
    return (name == "CUDADispatcher" and bool(k.targetoptions.get("device"))) \
        or (name == "FakeCUDAKernel" and bool(getattr(k, "_device", False)))


def run_numba_kernel(py_func, grid, block, shared_mem, args, **options) -> None:
    """Run a numba kernel function on numba's CUDA simulator.

    The simulator keeps the running kernel in a module global (a kernel
    started meanwhile from another thread is taken for a device function
    called by the first, and fails), and while a kernel runs it puts its fake
    ``cuda`` module in place of ``cuda`` in the globals of the kernel's module
    (other threads using ``cuda`` in that module fail). So kernels run one at
    a time here, each on a copy of its module's globals (the lock numba keeps
    for it is taken out after the run: ``_forget_locks``).
    """
    from numba.cuda.simulator.kernel import FakeCUDAKernel
    copies: dict = {}
    with _kernel_lock:
        try:
            kern = FakeCUDAKernel(_isolated(py_func, copies, options), device=False, **options)
            kern[grid, block, 0, shared_mem](*args)
        finally:
            _forget_locks(copies)


def _forget_locks(copies: dict) -> None:
    """numba's simulator keeps a lock per ``id()`` of the globals of every kernel it
    ran (``kernelapi._globals_locks``), for good: those of the copies, made for one
    run, are taken out after it (while the copies live: their ids are not reused)."""
    try:
        from numba.cuda.simulator import kernelapi
        locks, guard = kernelapi._globals_locks, kernelapi._locks_register_lock
    except (ImportError, AttributeError):   # another numba: nothing known to take out
        return
    with guard:
        for g in copies.values():
            locks.pop(id(g), None)


def _isolated(fn, copies: dict, options: dict):
    """``fn`` on a copy of its globals, its numba device functions likewise."""
    g = copies.get(id(fn.__globals__))
    if g is None:
        g = copies[id(fn.__globals__)] = dict(fn.__globals__)
        for name, v in g.items():
            g[name] = _isolated_device_function(v, copies, options)
    cells = fn.__closure__ and tuple(_isolated_cell(c, copies, options) for c in fn.__closure__)
    clone = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, cells)
    clone.__kwdefaults__ = fn.__kwdefaults__
    return clone


def _isolated_device_function(v, copies, options):
    if is_device_function(v):
        from numba.cuda.simulator.kernel import FakeCUDAKernel
        return FakeCUDAKernel(_isolated(v.py_func, copies, options), device=True, **options)
    return v


def _isolated_cell(cell, copies, options):
    try:
        value = cell.cell_contents
    except ValueError:   # a name not bound yet
        return cell
    new = _isolated_device_function(value, copies, options)
    return cell if new is value else types.CellType(new)

"""The few CUDA driver queries graphtrace needs outside graph emission.

cuda.core has no API for asking what a raw pointer is (device ordinal,
pinned or pageable host memory) or for page-locked host allocations that
numpy can wrap, so these go to ``cuda.bindings.driver`` directly. Every
function degrades to a neutral answer when there is no driver or no GPU
(tracing and the CPU simulator need neither).
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import weakref

__all__ = ["driver", "available", "device_of", "is_pinned_host", "pinned_block", "current"]


@functools.cache
def driver():
    """``cuda.bindings.driver`` after a successful ``cuInit``, else None."""
    try:
        from cuda.bindings import driver as drv
        (err,) = drv.cuInit(0)
        if err != drv.CUresult.CUDA_SUCCESS:
            return None
        err, count = drv.cuDeviceGetCount()
        if err != drv.CUresult.CUDA_SUCCESS or count == 0:
            return None
        return drv
    except (ImportError, RuntimeError, OSError):
        return None


def driver_version() -> int:
    """The CUDA driver's version (12080 for 12.8); 0 where there is none."""
    try:
        err, version = driver().cuDriverGetVersion()
    except Exception:  # noqa: BLE001  (no driver library)
        return 0
    return int(version) if int(err) == 0 else 0


def available() -> bool:
    return driver() is not None


def _pointer_attr(ptr: int, attr_name: str):
    drv = driver()
    if drv is None or not ptr:
        return None
    attr = getattr(drv.CUpointer_attribute, attr_name)
    err, value = drv.cuPointerGetAttribute(attr, ptr)
    return value if err == drv.CUresult.CUDA_SUCCESS else None


@functools.cache
def device_count() -> int:
    drv = driver()
    return 0 if drv is None else drv.cuDeviceGetCount()[1]


_context_devices: dict = {}   # int(CUcontext) -> the ordinal of its device


def device_of(ptr: int) -> int:
    """Ordinal of the device owning a device pointer (0 when unknown).

    Asked through the context the memory belongs to: on a 2-GPU H200 host
    (driver API through cuda.bindings 13.3), ``CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL``
    said 0 for cupy memory on device 1, while its context's device was 1.
    Memory of no context (stream-ordered pools) falls back to the ordinal.
    """
    if device_count() <= 1:
        return 0  # one device: no need to ask the driver on every call
    drv = driver()
    ctx = _pointer_attr(ptr, "CU_POINTER_ATTRIBUTE_CONTEXT")
    if ctx is not None and int(ctx):
        hit = _context_devices.get(int(ctx))
        if hit is None:
            if drv.cuCtxPushCurrent(ctx)[0] == drv.CUresult.CUDA_SUCCESS:
                try:
                    err, dev = drv.cuCtxGetDevice()
                finally:
                    drv.cuCtxPopCurrent()
                if err == drv.CUresult.CUDA_SUCCESS:
                    hit = _context_devices[int(ctx)] = int(dev)
        if hit is not None:
            return hit
    value = _pointer_attr(ptr, "CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL")
    return int(value) if value is not None else 0


def is_pinned_host(ptr: int) -> bool:
    """Whether ``ptr`` is page-locked host memory known to the driver."""
    drv = driver()
    value = _pointer_attr(ptr, "CU_POINTER_ATTRIBUTE_MEMORY_TYPE")
    return value is not None and int(value) == int(drv.CUmemorytype.CU_MEMORYTYPE_HOST)


def _free_host(ptr):
    drv = driver()
    if drv is not None:
        drv.cuMemFreeHost(ptr)


def pinned_block(nbytes: int):
    """A ctypes byte array in page-locked host memory, freed with it; None without a GPU."""
    drv = driver()
    if drv is None:
        return None
    from cuda.core import Device
    Device().set_current()  # a context must be current for cuMemHostAlloc
    flags = drv.CU_MEMHOSTALLOC_PORTABLE
    err, ptr = drv.cuMemHostAlloc(nbytes, flags)
    if err != drv.CUresult.CUDA_SUCCESS:
        raise MemoryError(f"cuMemHostAlloc({nbytes}) failed: {err.name}")
    block = (ctypes.c_uint8 * nbytes).from_address(int(ptr))
    weakref.finalize(block, _free_host, ptr)
    return block


@contextlib.contextmanager
def current(device: int):
    """Device ``device`` current in this thread for the block (its primary context,
    and cuda.core's ``Device``, whose methods need that), the previous one after."""
    from cuda.core import Device
    before = Device()
    if before.device_id == device:
        yield
        return
    Device(device).set_current()
    try:
        yield
    finally:
        before.set_current()


@functools.cache
def primary_context(device: int):
    """The ``CUcontext`` graphtrace runs device ``device``'s work in (its primary one)."""
    drv = driver()
    dev = call(drv.cuDeviceGet, device)
    return call(drv.cuDevicePrimaryCtxRetain, dev)


def call(fn, *args):
    """``fn(*args)`` of ``cuda.bindings.driver``, its result without the status;
    a failure raises ``RuntimeError`` naming the call and the status."""
    err, *out = fn(*args)
    if int(err) != 0:
        raise RuntimeError(f"{fn.__name__} failed: {getattr(err, 'name', err)}")
    return out[0] if len(out) == 1 else tuple(out) if out else None

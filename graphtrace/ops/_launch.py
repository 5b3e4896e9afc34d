"""Launch options of kernel nodes, and cuda.core's ``LaunchConfig`` that carries them.

A kernel node's ``attrs`` hold ``grid`` (in blocks, whatever the spelling),
``block``, ``shared_mem`` (dynamic shared memory, bytes), ``cluster`` (a
3-tuple, or None) and ``cooperative``. ``s.launch(..., cluster=...)`` counts
its grid in blocks, as every other launch spelling does; a ``LaunchConfig``
with a cluster counts its grid in clusters, as cuda.core does.

cuda.core 1.2's ``GraphDefinition.launch`` refuses a clustered or
cooperative ``LaunchConfig`` and its ``KernelNode.update`` refuses such nodes.
graphtrace adds kernel nodes through the driver (``_driver_nodes.py``) and
sets their cluster and cooperative attributes there; setting a node's
parameters on rebinding keeps them. Seen working on an H200 (driver 580,
CUDA 13.0): cooperative kernel nodes (grid sync correct, numba's
``this_grid().sync()`` too; a grid that does not fit is refused with
CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE), cluster dimensions, 100 KB of
dynamic shared memory once the kernel's limit is raised. The kernel attribute
that allows more than 48 KB has no cuda.core setter either.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ArgumentError, KernelArgumentError
from ..probe import _has
from ..scalar import Scalar

__all__ = ["COOPERATIVE_NODES", "DEFAULT_SHARED", "dim3", "count", "is_config",
           "read_config", "options", "describe", "has_node_attributes",
           "set_node_attributes", "allow_dynamic_shared", "check_co_resident"]

COOPERATIVE_NODES = True
"""Whether a graph kernel node may be cooperative (the driver taking the
cooperative attribute on kernel nodes). False refuses ``cooperative=True`` where
the launch is recorded; everything else about cooperative launches follows it."""

DEFAULT_SHARED = 48 * 1024   # dynamic shared memory a kernel may use without opting in

_FIELDS = ("grid", "cluster", "block", "shmem_size", "is_cooperative",
           "programmatic_stream_serialization")


def count(d):
    """``d`` as a Python int if it is an integer (numpy's too) but not a bool, else None."""
    if isinstance(d, (int, np.integer)) and not isinstance(d, bool):
        return int(d)
    return None


def dim3(value, what: str) -> tuple:
    """A grid, block or cluster size as a 3-tuple of positive ints."""
    if type(value) is int and value > 0:
        return (value, 1, 1)
    dims = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    for d in dims:
        if isinstance(d, Scalar):
            d._refuse()  # a dynamic scalar cannot size a launch
    ints = tuple(count(d) for d in dims)
    if any(isinstance(d, (float, np.floating)) for d in dims):
        raise ArgumentError(
            f"{what} {value!r} holds a float: launch sizes are whole numbers; divide with "
            "// and round up, as in (n + 255) // 256")
    if not 1 <= len(ints) <= 3 or not all(d is not None and d > 0 for d in ints):
        empty = 1 <= len(ints) <= 3 and 0 in ints and all(d is not None for d in ints)
        device = any(_has(d, "__cuda_array_interface__") for d in dims)
        raise ArgumentError(
            f"{what} must be a positive int or a tuple of up to 3 positive ints, not "
            f"{value!r}" + (
                f"; a {what} of 0 launches nothing, and CUDA refuses it: computed from "
                "an empty array's size, skip the launch when there is nothing to do "
                "(if x.size: ...)" if empty else
                "; a device array's values are not known while tracing, and launch sizes "
                "are fixed when the graph is built: read the number on the host before the "
                "call and pass it as static=" if device else ""))
    return ints + (1,) * (3 - len(ints))


def is_config(x) -> bool:
    """Whether ``x`` is a cuda.core ``LaunchConfig`` (or a dict of its fields, which
    cuda.core's launch takes too)."""
    t = type(x)
    return isinstance(x, dict) or (t.__name__ == "LaunchConfig"
                                   and t.__module__.startswith("cuda.core"))


def read_config(config) -> tuple:
    """``(grid in blocks, block, shared_mem, cluster, cooperative)`` of a config."""
    if isinstance(config, dict):
        unknown = sorted(set(config) - set(_FIELDS), key=str)
        if unknown:
            raise ArgumentError(f"unknown LaunchConfig field {unknown[0]!r}: the fields "
                                f"are {', '.join(_FIELDS)}")
        get = config.get
    else:
        def get(name, default=None):
            return getattr(config, name, default)
    if get("programmatic_stream_serialization", False):
        raise ArgumentError(
            "programmatic_stream_serialization=True: a graph orders its kernel nodes by "
            "its edges, and graphtrace makes them from the data each node touches; "
            "leave it out of the LaunchConfig")
    grid, block = dim3(get("grid"), "LaunchConfig.grid"), dim3(get("block"), "LaunchConfig.block")
    cluster = get("cluster")
    if cluster is not None:   # cuda.core counts the grid in clusters
        cluster = dim3(cluster, "LaunchConfig.cluster")
        grid = tuple(g * c for g, c in zip(grid, cluster))
    return grid, block, get("shmem_size") or 0, cluster, get("is_cooperative", False)


def options(grid, block, shared_mem, cluster, cooperative) -> dict:
    """A kernel node's launch attrs, checked: grid counts blocks here."""
    grid, block = dim3(grid, "grid"), dim3(block, "block")
    _within_limits(grid, block)
    if type(shared_mem) is not int or shared_mem < 0:   # the usual case: an int
        shared_mem = _shared_mem(shared_mem)
    if cluster is not None:
        cluster = dim3(cluster, "cluster")
        if any(g % c for g, c in zip(grid, cluster)):
            raise ArgumentError(
                f"grid {grid} is not a whole number of clusters {cluster}: with cluster=, "
                "the grid counts blocks (as in every s.launch spelling), so each of its "
                "sizes must be a multiple of the cluster's (a LaunchConfig's grid counts "
                "clusters instead)")
    if cooperative is not False:
        cooperative = _cooperative(cooperative)
    return {"grid": grid, "block": block, "shared_mem": shared_mem,
            "cluster": cluster, "cooperative": cooperative}


# CUDA's limits on every GPU it supports: threads per block, block and grid sizes
_MOST_THREADS, _MOST_BLOCK, _MOST_GRID = 1024, (1024, 1024, 64), (2**31 - 1, 65535, 65535)


def _within_limits(grid: tuple, block: tuple) -> None:
    """Refuse what no GPU launches (numba's simulator runs it all the same)."""
    threads = math.prod(block)
    if threads > _MOST_THREADS or any(b > m for b, m in zip(block, _MOST_BLOCK)):
        raise ArgumentError(
            f"block {block} has {threads} threads: a CUDA block holds at most "
            f"{_MOST_THREADS} threads, and at most {_MOST_BLOCK} along x, y, z; launch "
            "more blocks of fewer threads")
    if any(g > m for g, m in zip(grid, _MOST_GRID)):
        raise ArgumentError(f"grid {grid} is over CUDA's limits of {_MOST_GRID} blocks "
                            "along x, y, z: loop over the data inside the kernel, or "
                            "launch along x")


def _shared_mem(value) -> int:
    if isinstance(value, Scalar):
        value._refuse()
    if count(value) is None or value < 0:
        raise ArgumentError(f"shared_mem must be a non-negative int, not {value!r}")
    return int(value)


def _cooperative(value) -> bool:
    if isinstance(value, Scalar):
        value._refuse()
    if not isinstance(value, (bool, np.bool_)):
        raise ArgumentError(f"cooperative must be True or False, not {value!r}")
    if value and not COOPERATIVE_NODES:
        raise KernelArgumentError(
            "a cooperative launch cannot be a graph kernel node (the CUDA driver takes "
            "no cooperative kernel nodes): launch the kernel eagerly, outside the "
            "@gt.graph function, or split it into kernels at its grid syncs")
    return bool(value)


def describe(attrs) -> str:
    """The options of a launch as its listing line ends: `` cluster=(2,1,1) shared_mem=N cooperative``."""
    cluster = attrs.get("cluster")
    parts = ["cluster=(%d,%d,%d)" % cluster] if cluster else []
    if attrs.get("shared_mem"):
        parts.append(f"shared_mem={attrs['shared_mem']}")
    if attrs.get("cooperative"):
        parts.append("cooperative")
    return "".join(" " + p for p in parts)


# --- on the GPU ---------------------------------------------------------------
_limits: dict = {}    # (kernel handle, device, is a CUfunction) -> dynamic shared bytes allowed


def has_node_attributes(attrs) -> bool:
    return bool(attrs.get("cluster") or attrs.get("cooperative"))


def _check(err, what: str) -> None:
    from cuda.bindings import driver
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"{what} failed: {err.name}")


def set_node_attributes(node, attrs) -> None:
    """Give a kernel node (a ``CUgraphNode``) its cluster dimensions and cooperative
    flag; setting its parameters later keeps them."""
    from cuda.bindings import driver
    ids = driver.CUkernelNodeAttrID
    if attrs.get("cluster"):
        value = driver.CUkernelNodeAttrValue()   # a union: one value per attribute
        value.clusterDim.x, value.clusterDim.y, value.clusterDim.z = attrs["cluster"]
        _check(driver.cuGraphKernelNodeSetAttribute(
            node, ids.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, value)[0],
            "setting the cluster dimensions of the kernel node")
    if attrs.get("cooperative"):
        value = driver.CUkernelNodeAttrValue()
        value.cooperative = 1
        _check(driver.cuGraphKernelNodeSetAttribute(
            node, ids.CU_LAUNCH_ATTRIBUTE_COOPERATIVE, value)[0],
            "making the kernel node cooperative")


def allow_dynamic_shared(kern, nbytes: int, is_function: bool) -> None:
    """Raise the kernel's dynamic shared memory limit (the attribute
    cudaFuncAttributeMaxDynamicSharedMemorySize) to ``nbytes`` on the current device.

    ``kern`` is a cuda.core ``Kernel`` whose handle is a ``CUkernel`` (numba,
    cuda.core) or, with ``is_function``, a ``CUfunction`` (cupy). The limit is
    only ever raised, so nodes emitted before keep theirs.
    """
    if nbytes <= DEFAULT_SHARED:
        return
    from cuda.bindings import driver
    from cuda.core import Device
    device = Device().device_id
    key = (int(kern.handle), device, is_function)
    if _limits.get(key, DEFAULT_SHARED) >= nbytes:
        return
    attr = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    if is_function:
        result = driver.cuFuncSetAttribute(driver.CUfunction(key[0]), attr, nbytes)
    else:
        result = driver.cuKernelSetAttribute(attr, nbytes, driver.CUkernel(key[0]),
                                             driver.CUdevice(device))
    _check(result[0], f"allowing {nbytes} bytes of dynamic shared memory to the kernel")
    _limits[key] = nbytes


def check_co_resident(kern, attrs) -> None:
    """A cooperative grid must fit on the GPU at once (the CPU cannot tell)."""
    from cuda.core import Device
    blocks = math.prod(attrs["grid"])
    per_sm = kern.occupancy.max_active_blocks_per_multiprocessor(
        math.prod(attrs["block"]), attrs["shared_mem"])
    sms = Device().properties.multiprocessor_count
    if blocks > per_sm * sms:
        raise ValueError(
            f"a cooperative launch needs its whole grid on the GPU at once, but {blocks} "
            f"blocks were asked and {per_sm * sms} fit ({per_sm} per SM x {sms} SMs): "
            "launch fewer blocks and loop over the data inside the kernel")

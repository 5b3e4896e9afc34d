"""Kernel nodes through the driver (``cuda.bindings``), below cuda.core's objects.

cuda.core 1.2's ``GraphDefinition.launch`` adds a node with at most one
predecessor, makes a Python node object per node and a ``MutableSet`` per
further edge: 3.3 us a node, 5.8 with two predecessors, on an H200
(PERF-NOTES.md). ``cuGraphAddKernelNode`` with every dependency at creation
costs 0.9 to 1.0. The driver also takes what cuda.core 1.2 refuses in graph
kernel nodes: cooperative launches and thread block clusters (node
attributes, set after the node is added).

The driver copies the argument values when a node is added or set, so one
argument block serves every call. A kernel node is known by
its ``CUgraphNode`` handle; the emitter keeps the graph (a cuda.core
``GraphDefinition``), which owns it.

Where the optional compiled emitter (``_emitter.c``) is built, nodes are added
by calling the driver's ``cuGraphAddKernelNode`` from it, through the function
pointer ``cuGetProcAddress`` gives, instead of through ``cuda.bindings`` (1.2
to 1.35 us a node on an H200, most of it converting arguments and making
results), and emit.py's loop over a trace's launches runs there too
(``emitter()``). ``use_compiled(False)`` goes through ``cuda.bindings``.
"""
from __future__ import annotations

import ctypes
import struct

import numpy as np

from .._compiled import emitter as _built
from ._launch import DEFAULT_SHARED
from .kernel import KERNEL

__all__ = ["ArgumentBlock", "KernelNodes", "arrange", "check", "emitter", "node_handle",
           "use_compiled"]


_module = []


def _driver():
    if not _module:   # cuda.bindings imported once, when a graph is first built
        from cuda.bindings import driver
        _module.append(driver)
    return _module[0]


_compiled: dict = {}   # "module": the configured compiled emitter or None; "on": in use


def emitter():
    """The compiled emitter (``_emitter.c``), configured with the driver's
    ``cuGraphAddKernelNode``; None where it is not built, is switched off
    (``use_compiled``), or the driver does not give the function."""
    if "module" not in _compiled:
        _compiled["module"] = _configured(_built())
    return _compiled["module"] if _compiled.get("on", True) else None


def _configured(module):
    if module is None:
        return None
    driver = _driver()
    # version 12000: the function taking CUDA 12's CUDA_KERNEL_NODE_PARAMS (_v2),
    # the layout _emitter.c declares
    add, set_params, set_exec = (_function_pointer(driver, name) for name in (
        "cuGraphAddKernelNode", "cuGraphKernelNodeSetParams", "cuGraphExecKernelNodeSetParams"))
    if not (add and set_params and set_exec):
        return None
    module.configure(add, driver.CUgraphNode, KERNEL, DEFAULT_SHARED)
    module.configure_set(set_params, set_exec)
    return module


def _function_pointer(driver, name: str) -> int:
    """The address of the driver's function ``name`` taking CUDA 12's parameters
    (version 12000: CUDA_KERNEL_NODE_PARAMS _v2, the layout _emitter.c declares); 0
    where the driver does not give it."""
    try:
        got = driver.cuGetProcAddress(
            name.encode(), 12000, driver.CUdriverProcAddress_flags.CU_GET_PROC_ADDRESS_DEFAULT)
    except Exception:   # noqa: BLE001  (a cuda.bindings that asks otherwise: not used)
        return 0
    err, address = got[0], got[1]   # cuda.bindings before 12.5 gives no symbol status
    found = got[2] if len(got) > 2 else \
        driver.CUdriverProcAddressQueryResult.CU_GET_PROC_ADDRESS_SUCCESS
    ok = not err and found == driver.CUdriverProcAddressQueryResult.CU_GET_PROC_ADDRESS_SUCCESS
    return int(address) if ok and address else 0


def use_compiled(on: bool) -> bool:
    """Add kernel nodes from the compiled emitter (where built) or, ``on=False``,
    through ``cuda.bindings``; whether it was on before. Both add the same nodes."""
    was = _compiled.get("on", True)
    _compiled["on"] = bool(on)
    return was


def check(result, what: str):
    """The value of a ``cuda.bindings`` call, or a ``RuntimeError`` naming the failure."""
    err = result[0] if type(result) is tuple else result
    if err:   # CUDA_SUCCESS is 0
        raise RuntimeError(f"{what} failed: {getattr(err, 'name', err)}")
    return result[1] if isinstance(result, tuple) and len(result) > 1 else None


def node_handle(node):
    """The ``CUgraphNode`` of a cuda.core node, or the handle itself."""
    driver = _driver()
    return node if type(node) is driver.CUgraphNode else driver.CUgraphNode(int(node.handle))


def _exec(handle):
    driver = _driver()
    return handle if isinstance(handle, driver.CUgraphExec) else \
        driver.CUgraphExec(int(handle))


def _bytes(v) -> bytes:
    """A kernel argument's bytes, typed as cuda.core types it: ``int`` a 64-bit
    word, ``float`` a double, numpy and ctypes scalars as themselves."""
    t = type(v)
    if t is int:
        return v.to_bytes(8, "little", signed=v < 0)
    if t is float:
        return struct.pack("<d", v)
    if t is bool:
        return bytes((v,))
    if isinstance(v, np.generic):
        return v.tobytes()
    return bytes(memoryview(v))   # ctypes scalars and structures (numba's packing)


# struct codes of the scalar types kernels are packed with (by cuda.core's rules
# for Python numbers); other types go through their bytes
def _code(t) -> str:
    """The standard-size struct code of a numpy or ctypes scalar type."""
    dt = np.dtype(t)
    if dt.kind == "f":
        return {2: "e", 4: "f", 8: "d"}[dt.itemsize]
    code = {1: "b", 2: "h", 4: "i", 8: "q"}[dt.itemsize]
    return code.upper() if dt.kind == "u" else code


_CODES = {int: "q", float: "d", bool: "?", np.bool_: "?"}
_CODES.update({t: _code(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                     np.uint32, np.int64, np.uint64, np.float16, np.float32,
                                     np.float64)})
_CTYPES = {ctypes.c_void_p: "Q", ctypes.c_bool: "?"}
_CTYPES.update({t: _code(t) for t in (
    ctypes.c_int8, ctypes.c_uint8, ctypes.c_int16, ctypes.c_uint16, ctypes.c_int32,
    ctypes.c_uint32, ctypes.c_int64, ctypes.c_uint64, ctypes.c_longlong, ctypes.c_ulonglong,
    ctypes.c_float, ctypes.c_double)})


class ArgumentBlock:
    """A kernel's packed arguments, each at its natural alignment, in memory reused
    from call to call (the driver copies them), and the ``void*`` array to them.

    The layout of a tuple of argument types (a ``struct.Struct`` and the array
    of pointers into the block) is made once: packing is then one call.
    """

    def __init__(self, nbytes: int = 4096):
        self._grow(nbytes)

    def _grow(self, nbytes: int) -> None:
        self.bytes = bytearray(nbytes)
        self.base = ctypes.addressof((ctypes.c_char * nbytes).from_buffer(self.bytes))
        self._layouts: dict = {}
        self._filled = None   # (values, address) of the last fill the bytes still hold

    def _layout(self, values, kinds):
        fmt, offsets, at, plain = ["<"], [], 0, True
        for v, t in zip(values, kinds):
            code = _CODES.get(t)
            if code is None:
                code, plain = _CTYPES.get(t), False
            if code is None:   # a structure or an unusual scalar: its bytes as they are
                return None
            n = struct.calcsize("<" + code)
            pad = -at % n
            fmt.append("x" * pad + code)
            at += pad
            offsets.append(at)
            at += n
        if at > len(self.bytes):
            self._grow(2 * at)
        ptrs = (ctypes.c_uint64 * max(len(offsets), 1))(*[self.base + o for o in offsets])
        layout = self._layouts[kinds] = (struct.Struct("".join(fmt)), ptrs,
                                         ctypes.addressof(ptrs), plain)
        return layout

    def fill(self, values) -> int:
        """The address of the ``void*`` array for ``values``."""
        filled = self._filled
        if filled is not None and filled[0] is values:   # the very list again (its
            return filled[1]                              # nodes share one packing)
        kinds = tuple(map(type, values))
        layout = self._layouts.get(kinds) or self._layout(values, kinds)
        if layout is None:
            self._filled = None
            return self._fill_bytes(values)
        packer, _, address, plain = layout
        packer.pack_into(self.bytes, 0, *(values if plain else
                                          [v if type(v) in _CODES else v.value or 0
                                           for v in values]))
        self._filled = (values, address)
        return address

    def _fill_bytes(self, values) -> int:
        parts = [_bytes(v) for v in values]
        offsets, size = arrange(parts)
        if size > len(self.bytes):
            self._grow(2 * size)
        for b, at in zip(parts, offsets):
            self.bytes[at:at + len(b)] = b
        ptrs = (ctypes.c_uint64 * max(len(parts), 1))(*[self.base + at for at in offsets])
        self._keep = ptrs   # until the next call
        return ctypes.addressof(ptrs)


def arrange(parts: list) -> tuple[list[int], int]:
    """Offsets of argument byte strings, each at its natural alignment (8 for
    structures), and the size they take."""
    offsets, at = [], 0
    for b in parts:
        n = len(b)
        at += -at % (n if n in (1, 2, 4, 8) else 8)
        offsets.append(at)
        at += n
    return offsets, at


class KernelNodes:
    """Adds and sets kernel nodes, and edges; one per emitter (its parameter
    struct is reused). Graphs are cuda.core ``GraphDefinition``s, nodes handles."""

    def __init__(self):
        self.driver = _driver()
        self.params = self.driver.CUDA_KERNEL_NODE_PARAMS()
        self.arguments = ArgumentBlock()
        self._launch = None   # what the parameter struct holds besides the arguments
        self._at = None       # the address of the arguments it holds
        self._graph = (None,)   # the last (GraphDefinition, its CUgraph, as an int,
                                # the address of params)
        self._graphs: dict = {}   # id(definition) -> (it, its CUgraph)
        self._functions: dict = {}   # id(cuda.core Kernel) -> (it, its CUfunction here)
        self.compiled = emitter()   # the compiled emitter, or None

    def graph_of(self, definition):
        """The ``CUgraph`` of a ``GraphDefinition`` (the emitter's, or a body's)."""
        hit = self._graphs.get(id(definition))
        if hit is None or hit[0] is not definition:
            hit = self._graphs[id(definition)] = \
                (definition, self.driver.CUgraph(int(definition.handle)))
        return hit[1]

    def add_edges(self, definition, preds: list, node) -> None:
        """Edges from each of the handles ``preds`` to the handle ``node``."""
        if preds:
            check(self.driver.cuGraphAddDependencies(self.graph_of(definition), preds,
                                                     [node] * len(preds), None, len(preds)),
                  "cuGraphAddDependencies")

    def _fill(self, kernel, function, grid, block, shared_mem, values) -> None:
        p = self.params
        launch = (kernel, function, grid, block, shared_mem)   # the kernel held: ids stay
        if launch != self._launch:   # consecutive nodes often launch alike
            self._set_launch(p, kernel, function, grid, block, shared_mem)
            self._launch = launch
        filled = self.arguments._filled
        address = filled[1] if filled is not None and filled[0] is values else \
            self.arguments.fill(values)
        if address != self._at:   # the struct's field, set through cuda.bindings
            p.kernelParams = self._at = address

    def new_params(self, kernel, function, grid, block, shared_mem):
        """A parameter struct of its own for a launch (its arguments left unset)."""
        p = self.driver.CUDA_KERNEL_NODE_PARAMS()
        self._set_launch(p, kernel, function, grid, block, shared_mem)
        return p

    def _set_launch(self, p, kernel, function, grid, block, shared_mem) -> None:
        p.func = self.function_of(kernel, function)
        p.gridDimX, p.gridDimY, p.gridDimZ = grid
        p.blockDimX, p.blockDimY, p.blockDimZ = block
        p.sharedMemBytes = shared_mem

    def function_of(self, kernel, function: bool):
        """The ``CUfunction`` a node of ``kernel`` runs (``function``: the kernel's
        handle is one, else a ``CUkernel``)."""
        return self.driver.CUfunction(int(kernel.handle)) if function else \
            self._function(kernel)

    def function_address(self, kernel, function: bool) -> int:
        """``function_of`` as an int (for the compiled emitter)."""
        return int(self.function_of(kernel, function))

    def _function(self, kernel):
        """The ``CUfunction`` of a ``CUkernel`` (numba, cuda.core) in the current context.

        Not the ``CUkernel`` itself in the node's ``kern`` field: on an H200,
        two cooperative nodes given that way ran concurrently without their grid
        syncs holding (wrong results), and correctly given their functions, as
        stream capture records them."""
        hit = self._functions.get(id(kernel))
        if hit is None or hit[0] is not kernel:
            fn = check(self.driver.cuKernelGetFunction(self.driver.CUkernel(int(kernel.handle))),
                       "cuKernelGetFunction")
            hit = self._functions[id(kernel)] = (kernel, fn)
        return hit[1]

    def add(self, graph, deps: list, kernel, function, grid, block, shared_mem, values):
        """A new kernel node of ``graph`` (a ``GraphDefinition``) after the nodes ``deps``;
        ``function``: ``kernel`` wraps a ``CUfunction``, not a ``CUkernel``."""
        self._fill(kernel, function, grid, block, shared_mem, values)
        last = self._graph
        if last[0] is not graph:
            cu = self.graph_of(graph)
            last = self._graph = (graph, cu, int(cu), self.params.getPtr())
        if self.compiled is not None:
            node = self.compiled.add(last[2], deps, last[3])
            if type(node) is int:
                check((self.driver.CUresult(node),), "cuGraphAddKernelNode")   # raises
            return node
        err, node = self.driver.cuGraphAddKernelNode(last[1], deps, len(deps), self.params)
        if err:
            check((err,), "cuGraphAddKernelNode")   # raises, naming the failure
        return node

    def set(self, node, kernel, function, grid, block, shared_mem, values,
            executable=None) -> None:
        """Point a kernel node of the definition (or of ``executable``) at new values."""
        self._fill(kernel, function, grid, block, shared_mem, values)
        if executable is None:
            check(self.driver.cuGraphKernelNodeSetParams(node, self.params),
                  "cuGraphKernelNodeSetParams")
        else:
            check(self.driver.cuGraphExecKernelNodeSetParams(_exec(executable), node,
                                                             self.params),
                  "cuGraphExecKernelNodeSetParams")

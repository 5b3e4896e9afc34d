"""Run by test_numba_arrays.py in a process of its own, without numba's simulator:
numba-cuda's own ``DeviceNDArray`` objects over memory that is never touched
(numba asks the driver for a context only where it allocates, which these arrays
do not), so that tracing reads them as it reads them on a GPU. Prints one line
of JSON: the checks' results."""
import contextlib
import json
import os
import sys

os.environ.pop("NUMBA_ENABLE_CUDASIM", None)

import numpy as np  # noqa: E402
from numba.cuda.cudadrv import devicearray, devices, driver  # noqa: E402

try:   # cuda.bindings' address object where numba uses it, else numba's ctypes one
    from cuda.bindings.driver import CUdeviceptr
except ImportError:   # pragma: no cover
    CUdeviceptr = driver.drvapi.cu_device_ptr


class _Context:   # numba's memory objects only carry it along
    pass


devices._runtime.ensure_context = contextlib.nullcontext   # slicing asks for one
devices.get_context = lambda *args: _Context()            # so does an empty view


def array(shape, strides=None, dtype=np.float32, address=1 << 40):
    """A numba device array of ``shape`` at ``address`` (C order unless ``strides``),
    its memory held as numba holds an allocation of its own (views of it take an
    OwnedPointer, as they do on a GPU)."""
    itemsize = np.dtype(dtype).itemsize
    if strides is None:
        strides = tuple(int(itemsize * np.prod(shape[i + 1:])) for i in range(len(shape)))
    size = max(itemsize, sum((n - 1) * s for n, s in zip(shape, strides)) + itemsize)
    owner = driver.MemoryPointer(_Context(), CUdeviceptr(address), size)
    memory = driver.MemoryPointer(_Context(), CUdeviceptr(address), size, owner=owner)
    return devicearray.DeviceNDArray(shape, strides, dtype, gpu_data=memory)


def main():
    import graphtrace as gt
    from graphtrace import arrays as _arrays
    from graphtrace.ops.kernel import Adapter
    from graphtrace.stream import use_speedups

    x = array((4096,))
    m = array((64, 64), address=1 << 41)
    arrays = {"base": x, "view": x[64:128], "strided": x[::2], "reversed": x[::-1],
              "empty": x[10:10], "2d": m, "row": m[5], "column": m[:, 3],
              "block": m[2:5, 1:9], "one row": m[3:4], "fortran": array((64, 32), (4, 256)),
              "broadcast": array((8, 64), (0, 4)), "float64": array((100,), dtype=np.float64)[3:50],
              "int8": array((100,), dtype=np.int8)[1:7]}
    out = {"kinds": sorted({_arrays._kind(a) for a in arrays.values()}), "interfaces": {}}
    for name, a in arrays.items():   # the interface made from the key is numba's own
        key, _ = _arrays.interface_of(a)
        theirs = dict(a.__cuda_array_interface__)
        theirs.pop("stream", None)
        out["interfaces"][name] = _arrays.key_interface(a, key) == theirs

    rw = Adapter(None, "rw", ["x", "y"], ["r", "w"])

    def program(s, x, m):   # views made at every launch, some made again
        for i in range(12):
            s.launch(rw, 1, 32, x[i % 4 * 64:i % 4 * 64 + 64], x[1024 + i % 3 * 8:][::2])
            s.launch(rw, 1, 32, m[i % 5], m[:, i % 2])
            s.launch(rw, 1, 32, m[i % 2:i % 2 + 2, 3:9], x[2048:2048])

    listings = {}
    for compiled in (True, False):
        was = use_speedups(compiled)
        try:
            f = gt.graph(program)
            g = f.trace(x, m)
            listings[compiled] = str(g)
            out.setdefault("nodes", len(g.nodes))
        finally:
            use_speedups(was)
    out["same listing"] = listings[True] == listings[False]
    out["new views"] = _new_views(x, m, arrays)

    class Plain:   # the same arrays known by numba's interface alone
        def __init__(self, a):
            self.a, self.__cuda_array_interface__ = a, a.__cuda_array_interface__

        def __getitem__(self, key):
            return Plain(self.a[key])

    # what tracing views made at every launch asks of numba's Python properties:
    # nothing for a view made again, nothing but the address for a new geometry
    reads = {"device_ctypes_pointer": 0, "__cuda_array_interface__": 0}
    base = devicearray.DeviceNDArrayBase
    for name in reads:
        prop = base.__dict__[name]

        def counted(self, prop=prop, name=name):
            reads[name] += 1
            return prop.fget(self)
        setattr(base, name, property(counted))
    try:
        for compiled in (True, False):
            was = use_speedups(compiled)
            try:
                gt.graph(program).trace(x, m)
            finally:
                use_speedups(was)
            out["reads compiled" if compiled else "reads pure"] = dict(reads)
            reads.update(dict.fromkeys(reads, 0))
    finally:
        for name in reads:
            setattr(base, name, base.__dict__[name].fget.__defaults__[0])

    out["as by the interface"] = str(gt.graph(program).trace(Plain(x), Plain(m))) == \
        listings[True]
    out["records"] = _records()
    out["listing"] = listings[True]
    print(json.dumps(out))


def _new_views(x, m, arrays):
    """Whether the Buffers of views of every kind, made in the trace (each a new
    geometry, then made again), are those of the Python path: the compiled path
    makes a new numba view's interface from its key (_speedups.c's key_iface)."""
    import graphtrace as gt
    from graphtrace.ops.kernel import Adapter
    from graphtrace.stream import use_speedups
    r = Adapter(None, "r", ["x"], ["r"])
    others = [arrays[k] for k in ("fortran", "broadcast", "float64", "int8")]

    def program(s, x, m, f, b, d, i8):
        for _ in range(2):
            for v in (x[64:128], x[1024:][::2], x[::-1], x[10:10], m[5], m[:, 3], m[2:5, 1:9],
                      m[3:4], m[::2, ::3], f[1:9], f[:, 2], b[2:5], b[:, 1:], d[4:9], i8[2:]):
                s.launch(r, 1, 32, v)

    got = {}
    for compiled in (True, False):
        was = use_speedups(compiled)
        try:
            g = gt.graph(program).trace(x, m, *others)
            got[compiled] = [(b.lo, b.hi, b.shape, b.strides, str(b.dtype), b.run, b.step)
                             for node in g.nodes for b in node.args]
        finally:
            use_speedups(was)
    return len(got[True]) == 30 and got[True] == got[False]


def _records():
    """Per path (compiled, then Python): the dtype str of each record array as a root,
    a new view of it and its cache key: numba's interface leaves the fields out."""
    from graphtrace import arrays as _arrays, deps
    from graphtrace.trace import Tracer
    records = [[("a", "f8"), ("b", "f8")], [("b", "f8"), ("a", "f8")], [("a", "f8")]]
    out = []
    for compiled in (True, False):
        was = deps.use_compiled_buffers(compiled)
        try:
            _arrays.as_buffer(np.zeros(1, "V16")), _arrays.as_buffer(np.zeros(1, "V8"))
            for k, fields in enumerate(records):   # (the plain voids are known)
                a = array((8,), dtype=np.dtype(fields), address=(1 << 42) + k * 4096)
                t = Tracer("f", [], "data")
                t.add_arguments([("a", a)])
                out.append([str(t._roots[0].dtype), str(t.buffer(a[2:]).dtype),
                            str(_arrays.as_buffer(a).signature()[2])])
        finally:
            deps.use_compiled_buffers(was)
    return out


if __name__ == "__main__":
    sys.exit(main())

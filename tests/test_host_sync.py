"""Reading, writing or uploading device data on the host inside a trace is an error.

On the simulator, numba's device arrays are numpy arrays in disguise, so every
such access would silently succeed and bake the first call's values into the
graph. Each test checks the error, its line, and that the function (and the
array) still work afterwards.
"""
import copy
import inspect
import operator
import pickle

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of


@cuda.jit
def inc(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


def refused(body, marker):
    @gt.graph(backend="sim")
    def f(s, x):
        body(s, x)
        inc[1, 4, s](x)
    x = cuda.to_device(np.arange(4, dtype=np.float32))
    with pytest.raises(gt.HostSyncError) as e:
        f(x)
    assert e.value.source[1] == line_of(__file__, marker), str(e.value)
    assert "inside a trace" in str(e.value)
    return x


def branch(s, x):
    if x[0] > 0:   # element
        pass


def reduce_on_host(s, x):
    float(x.sum())   # sum


def download(s, x):
    x.copy_to_host()   # download


def upload(s, x):
    cuda.to_device(np.ones(4, np.float32))   # upload


def assign(s, x):
    x[0] = 5   # assign


def compare(s, x):
    x > 0   # compare


def numba_reduce(s, x):
    cuda.reduce(lambda a, b: a + b)(x)   # reduce


def iterate(s, x):
    for v in x:   # iterate
        pass


def to_numpy(s, x):
    np.asarray(x)   # asarray


def copy_into(s, x):
    x.copy_to_device(np.zeros(4, np.float32))   # copy into


@pytest.mark.parametrize("body, marker", [
    (branch, "element"), (reduce_on_host, "sum"), (download, "download"), (upload, "upload"),
    (assign, "assign"), (compare, "compare"), (numba_reduce, "reduce"), (iterate, "iterate"),
    (to_numpy, "asarray"), (copy_into, "copy into")])
def test_host_access_to_device_data_is_refused(body, marker):
    x = refused(body, marker)
    assert x.copy_to_host().tolist() == [0, 1, 2, 3]   # nothing ran, and reading works again
    assert x[0] == 0


def test_geometry_and_views_pass_inside_a_trace():
    @gt.graph(backend="sim")
    def f(s, x):
        assert x.shape == (4,) and x.size == 4 and len(x) == 4 and x.dtype == np.float32
        inc[1, 4, s](x[1:])
        inc[1, 4, s](x.reshape(2, 2)[0])
        inc[1, 4, s](x.T)
    x = cuda.to_device(np.zeros(4, np.float32))
    f(x)
    assert x.copy_to_host().tolist() == [2, 3, 2, 2]


def test_squeeze_of_a_device_array_is_a_view_of_it_as_on_the_gpu():
    @gt.graph(backend="sim")
    def f(s, x):
        inc[1, 4, s](x[1:2, :].squeeze())     # one row of a 2-D array
        inc[1, 4, s](x[:, 3:].squeeze(1))
    x = cuda.to_device(np.zeros((4, 4), np.float32))
    f(x)
    assert type(x.squeeze()) is type(x)
    assert x.copy_to_host().tolist() == [[0, 0, 0, 1], [1, 1, 1, 2], [0, 0, 0, 1], [0, 0, 0, 1]]


def test_the_function_works_after_a_refusal():
    calls = []

    @gt.graph(backend="sim")
    def f(s, x, peek):
        if peek:
            calls.append(float(x[0]))
        inc[1, 4, s](x)
    x = cuda.to_device(np.zeros(4, np.float32))
    with pytest.raises(gt.HostSyncError):
        f(x, True)
    f(x, False)
    f(x, False)
    assert x.copy_to_host().tolist() == [2, 2, 2, 2] and calls == []


def test_a_nested_graph_function_reading_device_data_is_refused_too():
    @gt.graph(backend="sim")
    def inner(s, x):
        x.copy_to_host()   # nested read
        inc[1, 4, s](x)

    @gt.graph(backend="sim")
    def outer(s, x):
        inner(s, x)
    with pytest.raises(gt.HostSyncError) as e:
        outer(cuda.to_device(np.zeros(4, np.float32)))
    assert e.value.source[1] == line_of(__file__, "nested read")


@cuda.jit
def _fill_with(y, a):
    i = cuda.grid(1)
    if i < y.size:
        y[i] = a


@pytest.mark.parametrize("how", ["element", "float", "arithmetic", "sum", "iterate", "item",
                                 "tolist", "compare"])
def test_reading_a_host_array_arguments_values_is_refused_at_the_line(how):
    """``params[0]`` read while tracing was baked into the graph: a later call with
    other values (another array, or this one changed) ran with the first ones."""
    @gt.graph(backend="sim")
    def f(s, y, params):
        if how == "element":
            v = params[0]                     # reads element
        elif how == "float":
            v = float(params[0:1])            # reads float
        elif how == "arithmetic":
            v = params * 2                    # reads arithmetic
        elif how == "sum":
            v = params.sum()                  # reads sum
        elif how == "iterate":
            v = [p for p in params]           # reads iterate
        elif how == "item":
            v = params[0:1].item()            # reads item
        elif how == "tolist":
            v = params.tolist()               # reads tolist
        else:
            v = params > 0                    # reads compare
        _fill_with[1, 4, s](y, v)
    with pytest.raises(gt.HostSyncError, match="host array argument") as e:
        f(cuda.to_device(np.zeros(4)), np.array([1.0, 2.0]))
    assert e.value.source[1] == line_of(__file__, f"reads {how}")


def test_a_host_array_argument_is_an_array_in_every_op_and_a_callback_reads_it():
    """Shapes, views, copies, printing and callbacks still take it; at run time the
    callback reads the values of each call's array."""
    seen = []

    @gt.graph(backend="sim")
    def f(s, y, params):
        assert params.shape == (2,) and len(params) == 2 and np.shape(params) == (2,)
        repr(params), str(params)
        s.copy(params[1:], y[:1])
        s.host(lambda p: seen.append(p.tolist()), params)
    y = cuda.to_device(np.full(4, 7.0))
    a, b = gt.pinned_empty(2), gt.pinned_empty(2)
    a[:], b[:] = [1.0, 2.0], [3.0, 4.0]
    f(y, a)
    f(y, b)
    assert seen == [[1.0, 7.0], [3.0, 7.0]]


def test_numpy_views_and_rows_of_a_host_argument_pass_and_callbacks_get_plain_arrays():
    """np.ravel / np.reshape / np.transpose make views (no value read), and so does
    iterating a 2-D array by rows; a callback gets an ordinary ndarray from the
    first call on."""
    got = []

    @gt.graph(backend="sim")
    def f(s, y, rows, p):
        s.copy(y, np.ravel(p))
        s.copy(y[2:], np.transpose(np.transpose(np.reshape(p, (2, 2))))[0])
        for r, row in zip(rows, p):
            s.copy(r, row)
        s.host(lambda q: got.append((type(q), q.tolist())), p)
    p = gt.pinned_empty((2, 2))
    p[:] = [[1.0, 2.0], [3.0, 4.0]]
    y, rows = cuda.to_device(np.zeros(4)), [cuda.to_device(np.zeros(2)) for _ in range(2)]
    f(y, rows, p)
    assert y.copy_to_host().tolist() == [1.0, 2.0, 1.0, 2.0]
    assert [r.copy_to_host().tolist() for r in rows] == [[1.0, 2.0], [3.0, 4.0]]
    assert got == [(np.ndarray, [[1.0, 2.0], [3.0, 4.0]])]


def _trace_with(body, p, q):
    """Trace a function of host arguments ``p`` and ``q`` that runs ``body(p, q)``
    (as the function receives them) and one kernel; what ``body`` returned."""
    got = []

    @gt.graph(backend="sim")
    def f(s, y, p, q):
        got.append(body(p, q))
        inc[1, 4, s](y)
    f(cuda.to_device(np.zeros(4, np.float32)), p, q)
    return got[0]


# Reads the guard let through: each gave the first call's value, baked into the
# graph. Each lambda sits on its own line, which the refusal must name.
_READS = {
    "flat element": lambda p, q: p.flat[0],                       # value flat element
    "flat iterated": lambda p, q: list(p.flat),                   # value flat iterated
    "take": lambda p, q: p.take(0),                               # value take
    "take many": lambda p, q: p.take([0, 1]),                     # value take many
    "argmax": lambda p, q: p.argmax(),                            # value argmax
    "argmin": lambda p, q: p.argmin(),                            # value argmin
    "dot": lambda p, q: p.dot(p),                                 # value dot
    "nonzero": lambda p, q: p.nonzero(),                          # value nonzero
    "searchsorted": lambda p, q: p.searchsorted(1.5),             # value searchsorted
    "argsort": lambda p, q: p.argsort(),                          # value argsort
    "argpartition": lambda p, q: p.argpartition(1),               # value argpartition
    "compress": lambda p, q: p.compress([True, False, True]),     # value compress
    "repeat": lambda p, q: p.repeat(2),                           # value repeat
    "choose": lambda p, q: q.choose([[1, 2, 3], [4, 5, 6]]),      # value choose
    "astype": lambda p, q: p.astype(np.int64),                    # value astype
    "byteswap": lambda p, q: p.byteswap(),                        # value byteswap
    "data": lambda p, q: p.data[0],                               # value data
    "base": lambda p, q: p.base[0],                               # value base
    "array": lambda p, q: p.__array__()[0],                       # value array
    "pickle": lambda p, q: pickle.dumps(p),                       # value pickle
    "dumps": lambda p, q: p.dumps(),                              # value dumps
    "broadcast view": lambda p, q: np.broadcast_to(p, (2, 3))[1, 0],  # value broadcast view
    "broadcast arrays": lambda p, q: np.broadcast_arrays(p, q)[0][0, 0],  # value broadcast arrays
    "trim_zeros": lambda p, q: np.trim_zeros(p),                  # value trim_zeros
    "real_if_close": lambda p, q: np.real_if_close(p),            # value real_if_close
}


@pytest.mark.parametrize("name", list(_READS))
def test_every_read_of_a_host_arguments_values_is_refused_at_the_line(name):
    """Methods, attributes and numpy functions that give values (or decide on
    them) are refused, not only indexing, ufuncs and item: ``p.take(0)``,
    ``p.argmax()``, ``p.flat[0]`` read while tracing replayed the first call's
    number on every later call."""
    with pytest.raises(gt.HostSyncError, match="host array argument") as e:
        _trace_with(_READS[name], np.array([2.0, 1.0, 3.0]), np.array([[0, 1, 0], [1, 0, 1]]))
    assert e.value.source[1] == line_of(__file__, f"value {name}"), str(e.value)


# Writes into a host argument while tracing: done once, to the first call's
# array, and never on a replay. Each is refused before it writes.
_WRITES = {
    "setitem": lambda p: operator.setitem(p, 0, 5.0),             # writes setitem
    "view setitem": lambda p: operator.setitem(p[1:], 0, 5.0),    # writes view setitem
    "fill": lambda p: p.fill(5.0),                                # writes fill
    "put": lambda p: p.put(0, 5.0),                               # writes put
    "sort": lambda p: p.sort(),                                   # writes sort
    "partition": lambda p: p.partition(0),                        # writes partition
    "setfield": lambda p: p.setfield(5.0, np.float64),            # writes setfield
    "flat": lambda p: setattr(p, "flat", 5.0),                    # writes flat
    "byteswap": lambda p: p.byteswap(inplace=True),               # writes byteswap
    "resize": lambda p: p.resize(5),                              # writes resize
    "copyto": lambda p: np.copyto(p, 5.0),                        # writes copyto
    "np.put": lambda p: np.put(p, 0, 5.0),                        # writes np.put
    "place": lambda p: np.place(p, p.shape == (3,), 5.0),         # writes place
}


@pytest.mark.parametrize("name", list(_WRITES))
def test_a_write_into_a_host_argument_is_refused_before_it_writes(name):
    """``p.sort()`` or ``p.fill(0)`` inside a trace changed the caller's array once,
    at trace time, and never on a replay (``np.copyto`` was refused only after it
    had written)."""
    p = np.array([2.0, np.nan, 1.0])
    with pytest.raises(gt.HostSyncError, match="host array argument") as e:
        _trace_with(lambda p, q: _WRITES[name](p), p, np.zeros(2))
    assert e.value.source[1] == line_of(__file__, f"writes {name}"), str(e.value)
    np.testing.assert_array_equal(p, [2.0, np.nan, 1.0])


# What of np.ndarray passes while tracing: Python's object machinery, the array
# protocols (address and geometry), metadata, views, copies that stay guarded,
# printing, and numpy's private helpers (numpy 2.5's view(dtype) calls
# _set_dtype by name). Anything else must be refused.
_ALLOWED = {
    "__class__", "__class_getitem__", "__delattr__", "__dir__", "__doc__",
    "__getattribute__", "__getstate__", "__hash__", "__init__", "__init_subclass__",
    "__new__", "__setattr__", "__sizeof__", "__subclasshook__",
    "__array_finalize__", "__array_function__", "__array_interface__",
    "__array_namespace__", "__array_priority__", "__array_struct__", "__array_ufunc__",
    "__array_wrap__", "__dlpack_device__", "__buffer__", "__release_buffer__",
    "shape", "ndim", "dtype", "size", "itemsize", "nbytes", "strides", "flags", "ctypes",
    "device", "setflags", "__len__",
    "T", "mT", "view", "reshape", "ravel", "transpose", "swapaxes", "squeeze", "diagonal",
    "getfield", "to_device", "copy", "flatten", "__copy__", "__deepcopy__",
    "real", "imag", "__getitem__", "__iter__", "__repr__", "__str__", "__format__"}


def test_every_ndarray_method_and_attribute_outside_the_allowed_ones_is_refused():
    """The guard lists what passes and refuses the rest, so that no method is left
    reading values in silence (the guard once listed reads, and missed ``take``,
    ``argmax``, ``dot``, ``flat`` and more), including those of a later numpy. A
    refused method refuses before it looks at its arguments."""
    names = sorted(n for n in dir(np.ndarray) if n not in _ALLOWED and
                   (n.startswith("__") or not n.startswith("_")))   # but numpy's helpers
    assert {"take", "argmax", "flat", "dot", "__add__", "__setitem__"} <= set(names)

    def body(p, q):
        passed = []
        for name in names:
            try:
                if hasattr(inspect.getattr_static(np.ndarray, name), "__set__"):
                    getattr(p, name)   # an attribute: reading it
                else:
                    getattr(p, name)()
                passed.append(name)
            except gt.HostSyncError:
                pass
            except Exception:
                passed.append(name)
        return passed
    assert _trace_with(body, np.array([2.0, 1.0, 3.0]), np.zeros(2)) == []


def test_metadata_views_copies_and_printing_of_a_host_argument_pass_and_stay_guarded():
    """What reads no value passes while tracing: metadata, views, copies by the
    array's own methods (a guarded snapshot), numpy functions of shapes and views
    (also where their own code calls numpy on the new array: np.full_like fills it
    with np.copyto), and printing. Views numpy makes as plain arrays
    (np.broadcast_to) come back guarded; after the trace it reads as usual."""
    kept = []

    def body(p, q):
        assert (p.shape, p.ndim, p.dtype, p.size, p.itemsize, p.nbytes, p.strides) == \
            ((3,), 1, np.float64, 3, 8, 24, (8,))
        assert len(p) == 3 and p.flags.c_contiguous and p.device == "cpu"
        assert p.ctypes.data == p.__array_interface__["data"][0]
        p.setflags(write=True)
        views = [p.T, q.mT, p.reshape(3, 1), q.ravel(), q.transpose(), q.swapaxes(0, 1),
                 p.reshape(1, 3).squeeze(), q.diagonal(), p.view(np.int64), p.real, p.imag,
                 p.getfield(np.float64), p.to_device("cpu"), p[1:], q[0], list(q)[1],
                 np.reshape(p, (3, 1)), np.ravel(q), np.transpose(q), np.squeeze(q),
                 np.swapaxes(q, 0, 1), np.moveaxis(q, 0, 1), np.expand_dims(p, 0),
                 np.atleast_2d(p), np.broadcast_to(p, (2, 3)), np.diagonal(q), np.diag(q),
                 np.flip(p), np.rot90(q), np.real(p), np.imag(p),
                 *np.broadcast_arrays(p, q), *np.split(p, 3),
                 np.lib.stride_tricks.sliding_window_view(p, 2),
                 p.copy(), p.flatten(), copy.copy(p), copy.deepcopy(p), q.T.ravel(),
                 np.empty_like(p), np.zeros_like(p), np.ones_like(p), np.full_like(p, 4.0)]
        assert all(isinstance(v, type(p)) for v in views), [type(v) for v in views]
        assert np.shape(q) == (2, 3) and np.ndim(q) == 2 and np.size(q) == 6
        assert np.may_share_memory(p, views[0]) and not np.iscomplexobj(p)
        assert repr(p) == "array([2., 1., 3.])" and str(p) == "[2. 1. 3.]" == f"{p}"
        kept.extend([p, np.broadcast_to(p, (2, 3)), views[-1]])
    p = np.array([2.0, 1.0, 3.0])
    _trace_with(body, p, np.arange(6.0).reshape(2, 3))
    same, broadcast, full = kept
    assert same.take(0) == 2.0 and same.argmax() == 2 and same.flat[1] == 1.0
    assert broadcast[1, 2] == 3.0 and full.tolist() == [4.0, 4.0, 4.0]
    same += 1   # an in-place ufunc on a kept guarded array, after the trace
    assert p.tolist() == [3.0, 2.0, 4.0]


def test_library_patching_hooks_run_again_only_after_a_module_is_imported(monkeypatch):
    """The guards and numba's launch syntax are installed as a trace starts after a
    module was imported (a library imported late is guarded), not at every trace."""
    import sys
    import types
    from graphtrace import context
    ran = []
    monkeypatch.setattr(context, "_IMPORT_HOOKS", context._IMPORT_HOOKS + [lambda: ran.append(1)])
    monkeypatch.setattr(context, "_MODULES_SEEN", [-1])
    x = cuda.to_device(np.zeros(4, np.float32))

    @gt.graph
    def f(s, x):
        s.memset(x, 0)

    f.trace(x)
    f.trace(x)
    assert ran == [1]
    monkeypatch.setitem(sys.modules, "late_library_for_the_hook_test", types.ModuleType("late"))
    f.trace(x)
    assert ran == [1, 1]

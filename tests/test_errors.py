"""Each misuse raises a clear error that names the user's line and says what to do."""
import threading

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import FakeDeviceArray as A, line_of, any_kernel

F = __file__


@cuda.jit
def fill(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v


def check(excinfo, marker, *phrases):
    err = excinfo.value
    assert err.source[1] == line_of(F, marker), str(err)
    assert str(err).startswith(f"test_errors.py:{line_of(F, marker)}: ")
    for p in phrases:
        assert p in str(err)


def test_proxy_stream_used_after_its_trace():
    kept = []

    @gt.graph
    def f(s, x):
        kept.append(s)
    f.trace(A(8))
    with pytest.raises(gt.StreamError) as e:
        kept[0].memset(A(8), 0)                              # late
    check(e, "late", "outside its trace")


def test_proxy_stream_used_from_another_thread():
    errors = []

    @gt.graph
    def f(s, x):
        t = threading.Thread(target=lambda: errors.append(_try(lambda: s.memset(x, 0))))
        t.start()
        t.join()
    f.trace(A(8))
    assert isinstance(errors[0], gt.StreamError)


def _try(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return e


def test_untraceable_argument_type():
    @gt.graph
    def f(s, x):
        pass
    with pytest.raises(gt.ArgumentError) as e:
        f.trace({1, 2})                                      # badarg
    check(e, "badarg", "argument x of type set", "hashable")


def test_pageable_host_memory_in_a_copy():
    @gt.graph
    def f(s, x, h):
        s.copy(h, x)                                         # pageable
    with pytest.raises(gt.PageableMemoryError) as e:
        f.trace(A(8), np.zeros(8, np.float32))
    check(e, "pageable", "copy destination h is pageable", "gt.pinned_empty")


def test_pinned_host_memory_is_accepted_in_a_copy():
    @gt.graph
    def f(s, x, h):
        s.copy(h, x)
    g = f.trace(A(8), gt.pinned_empty(8, np.float32))
    assert g.nodes[0].kind == "memcpy"


def test_mismatched_shapes_in_a_copy():
    @gt.graph
    def f(s, x, y):
        s.copy(y, x)                                         # shapes
    with pytest.raises(gt.ShapeMismatchError) as e:
        f.trace(A(8), A(4))
    check(e, "shapes", "float32[8]", "float32[4]", "matching views")


def test_mismatched_dtypes_in_a_copy():
    @gt.graph
    def f(s, x, y):
        s.copy(y, x)                                         # dtypes
    with pytest.raises(gt.ShapeMismatchError) as e:
        f.trace(A(8, "float32"), A(8, "int32"))
    check(e, "dtypes", "float32[8]", "int32[8]")


def test_proxy_stream_synchronize():
    @gt.graph
    def f(s):
        s.synchronize()                                      # sync
    with pytest.raises(gt.HostSyncError) as e:
        f.trace()
    check(e, "sync", "s.host")


def test_library_synchronize_inside_a_trace():
    @gt.graph
    def f(s):
        cuda.synchronize()                                   # libsync
    with pytest.raises(gt.HostSyncError) as e:
        f.trace()
    check(e, "libsync", "synchronize() inside a trace")
    cuda.synchronize()  # outside a trace it still works


def test_dynamic_scalar_in_control_flow():
    @gt.graph
    def f(s, x, n):
        if n > 3:                                            # control
            s.memset(x, 0)
    with pytest.raises(gt.DynamicScalarError) as e:
        f.trace(A(8), 4)
    check(e, "control", "'n' is a dynamic scalar", "static=('n',)")


def test_static_scalar_may_steer_control_flow():
    @gt.graph(static=("n",))
    def f(s, x, n):
        for _ in range(n):
            s.memset(x, 0)
    assert len(f.trace(A(8), 3).nodes) == 3


def test_kernel_arity_mismatch():
    @gt.graph
    def f(s, x):
        fill[1, 8, s](x)                                     # arity
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace(A(8))
    check(e, "arity", "fill takes 2 arguments (out, v) but 1 were given")


def test_host_array_passed_to_a_kernel():
    @gt.graph
    def f(s, x):
        fill[1, 8, s](x, 1.0)                                # hostarg
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(np.zeros(8))
    check(e, "hostarg", "argument out of kernel fill is host memory", "cuda.to_device")


def test_kernel_launched_on_a_real_stream_inside_a_trace():
    @gt.graph
    def f(s, x):
        fill[1, 8](x, 1.0)                                   # eager
    with pytest.raises(gt.StreamError) as e:
        f.trace(A(8))
    check(e, "eager", "escape the graph", "kernel[grid, block, s]")


def test_device_array_passed_to_a_host_callback():
    @gt.graph
    def f(s, x):
        s.host(print, x)                                     # hostcb
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(8))
    check(e, "hostcb", "cannot touch the GPU")


def test_memset_value_without_a_repeating_pattern():
    @gt.graph
    def f(s, x):
        s.memset(x, 1.5)                                     # pattern
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(8, "float64"))
    check(e, "pattern", "fill it with a kernel")


def test_graph_function_returning_a_value():
    @gt.graph
    def f(s, x):
        return x
    with pytest.raises(gt.TraceError) as e:
        f.trace(A(8))                                        # returns
    check(e, "returns", "returns nothing")


def test_grid_from_a_dynamic_scalar():
    @gt.graph
    def f(s, x, n):
        s.launch(fill, n, 8, x, 1.0)                         # grid
    with pytest.raises(gt.TraceError) as e:
        f.trace(A(8), 2)
    check(e, "grid", "'n' is a dynamic scalar")


def test_unknown_kernel_object():
    @gt.graph
    def f(s, x):
        s.launch(len, 1, 1, x)                               # notkernel
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(8))
    check(e, "notkernel", "cannot launch 'builtin_function_or_method'")


def test_bad_decorator_arguments():
    with pytest.raises(ValueError, match="deps must be"):
        gt.graph(lambda s: None, deps="capture")
    with pytest.raises(ValueError, match="names no parameter"):
        gt.graph(lambda s, x: None, static=("y",))
    with pytest.raises(TypeError, match="proxy stream"):
        gt.graph(lambda: None)


def test_nested_trace_is_refused():
    inner = gt.graph(lambda s: None)

    @gt.graph
    def outer(s):
        inner.trace()                                        # nested
    with pytest.raises(gt.TraceError) as e:
        outer.trace()
    check(e, "nested", "cannot trace")


def test_wrong_intent_count_for_a_declared_kernel():
    with pytest.raises(gt.ArgumentError, match="3 intents for kernel fill"):
        gt.kernel(fill, "in, out, in")


def test_any_kernel_helper_is_not_confused_with_errors():
    # sanity: a well-formed program traces without error
    @gt.graph
    def f(s, x):
        s.launch(any_kernel(), 1, 1, x)
    assert len(f.trace(A(8)).nodes) == 1


def test_graph_function_called_without_the_proxy_stream_inside_a_trace():
    @gt.graph
    def inner(s, x):
        s.memset(x, 0)

    @gt.graph
    def outer(s, x):
        inner(x)                                             # nostream
    with pytest.raises(gt.TraceError) as e:
        outer.trace(A(8))
    check(e, "nostream", "without the proxy stream", "inner(s, ...)")


def test_overlapping_copy():
    @gt.graph
    def f(s, x):
        s.copy(x[1:], x[:-1])                                # overlap
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(8))
    check(e, "overlap", "share bytes", "temporary array")


def test_memset_of_8_byte_elements_with_a_dynamic_value():
    @gt.graph
    def f(s, x, v):
        s.memset(x, v)                                       # dynmemset
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(8, "float64"), 0.0)
    check(e, "dynmemset", "static=")
    assert gt.graph(f.fn, static=("v",)).trace(A(8, "float64"), 0.0).nodes[0].kind == "memset"

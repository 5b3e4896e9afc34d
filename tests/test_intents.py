"""Access intents of numba kernels, read off their source."""
import math

from numba import cuda

import graphtrace as gt
from graphtrace.ops._intents import infer_intents
from helpers import FakeDeviceArray as A


def intents(k):
    return infer_intents(k.py_func)


@cuda.jit(device=True)
def dev_store(a, i, v):
    a[i] = v


@cuda.jit(device=True)
def dev_load(a, i):
    return a[i]


def opaque_helper(a):  # plain Python: graphtrace cannot see what numba makes of it
    return a


def test_assignment_and_load():
    @cuda.jit
    def k(x, y):
        i = cuda.grid(1)
        y[i] = x[i]
    assert intents(k) == ["r", "w"]


def test_augmented_assignment_reads_and_writes():
    @cuda.jit
    def k(x, y):
        y[0] += x[0]
    assert intents(k) == ["r", "rw"]


def test_atomic_update_writes_its_first_argument_only():
    @cuda.jit
    def k(hist, data, n):
        cuda.atomic.add(hist, data[0], 1)
    assert intents(k) == ["rw", "r", "r"]


def test_multidimensional_and_tuple_targets():
    @cuda.jit
    def k(a, b, c):
        i, j = cuda.grid(2)
        a[i, j], b[i] = c[j, i], 1.0
    assert intents(k) == ["w", "w", "r"]


def test_views_bound_to_names_count_as_the_parameter():
    @cuda.jit
    def k(a, b):
        rows = a[1:]
        t = rows.T
        t[0, 0] = b[0]
    assert intents(k) == ["w", "r"]


def test_element_bound_to_a_name_is_a_read():
    @cuda.jit
    def k(a, b):
        v = a[0]
        b[0] = v
    assert intents(k) == ["r", "w"]


def test_device_functions_are_followed():
    @cuda.jit
    def k(x, y):
        i = cuda.grid(1)
        dev_store(y, i, dev_load(x, i))
    assert intents(k) == ["r", "w"]


def test_unknown_call_means_read_and_write():
    @cuda.jit
    def k(x, y):
        opaque_helper(x)
        y[0] = 1
    assert intents(k) == ["rw", "w"]


def test_safe_calls_and_metadata_are_reads():
    @cuda.jit
    def k(x, y, n):
        for i in range(len(x)):
            y[i] = math.sqrt(x[i]) + x.shape[0] + min(n, 2)
    assert intents(k) == ["r", "w", "r"]


def test_slice_passed_to_a_device_function_is_written():
    @cuda.jit
    def k(x, y):
        dev_store(y[2:], 0, x[0])
    assert intents(k) == ["r", "w"]


def test_inferred_intents_reach_the_graph():
    @cuda.jit
    def k(x, y):
        y[0] = x[0]

    @gt.graph
    def f(s, x, y):
        k[1, 1, s](x, y)
        k[1, 1, s](gt.InOut(x), y)   # a call-site override wins
    g = f.trace(A(4), A(4))
    assert [(b.label, m) for b, m in g.nodes[0].accesses] == [("x", "r"), ("y", "w")]
    assert [(b.label, m) for b, m in g.nodes[1].accesses] == [("x", "rw"), ("y", "w")]


def test_declared_intents_override_inference():
    @cuda.jit
    def k(x, y):
        opaque_helper(x)
        y[0] = 1
    declared = gt.kernel(k, "in, out")
    assert declared.intents == ["r", "w"]
    assert gt.kernel(k).intents == ["rw", "w"]


@cuda.jit(device=True)
def dev_kw(a, b, c):
    c[0] = a[0] + b[0]


def test_conditional_rebinding_of_a_name_terminates_and_counts_both():
    @cuda.jit
    def k(x, y, flag):
        o = x
        if flag:
            o = y
        o[0] = 1
    assert intents(k) == ["w", "w", "r"]


def test_row_of_a_matrix_bound_to_a_name():
    @cuda.jit
    def k(out, x):
        row = out[cuda.grid(1)]
        row[0] = x[0]
    assert intents(k)[0] in ("w", "rw") and intents(k)[1] == "r"


def test_tuple_unpacking_and_conditional_expressions():
    @cuda.jit
    def k(out, x, y, c):
        a, b = out, x
        a[0] = b[0]
        o = y if c else x
        o[1] = 2
    assert intents(k) == ["w", "rw", "w", "r"]


def test_loop_over_a_tuple_of_arrays():
    @cuda.jit
    def k(x, y):
        for q in (x, y):
            q[0] = 0
    assert intents(k) == ["w", "w"]


def test_keyword_arguments_of_device_functions_map_by_name():
    @cuda.jit
    def k(x, out):
        dev_kw(x, c=out, b=x)
    assert intents(k) == ["r", "w"]

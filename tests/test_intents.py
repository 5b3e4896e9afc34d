"""Access intents of numba kernels, read off their source."""
import functools
import logging
import math
import types

import numpy as np
import pytest
from numba import cuda, literal_unroll

import graphtrace as gt
from graphtrace.ops._intents import analyze, infer_intents, vararg_intent, writes_outside
from flow_kernels import copy_into
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


def test_unpacking_a_view_reads_it():
    @cuda.jit
    def k(t, x):
        i = cuda.grid(1)
        a, b = t[0:2]       # the view's items: a read of t
        t[i] = x[i] + a + b
    assert intents(k) == ["rw", "r"]

    @cuda.jit
    def aliases(t, x, y):
        a, b = x, y         # names bound to the arrays: no read of either
        a[0] = 1.0
    assert intents(aliases) == ["r", "w", "r"]


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


def test_an_arrays_shape_bounding_its_stores_reads_no_element():
    """``y.shape[0]`` reads y's metadata, as ``y.size`` does: y only stored is "w"."""
    @cuda.jit
    def bound(x, y):
        i = cuda.grid(1)
        if i < y.shape[0]:
            y[i] = x[i]

    @cuda.jit
    def nested(x, y):
        i, j = cuda.grid(2)
        n = y.shape
        if i < n[0] and j < y.shape[1] and j < y.strides[1]:
            y[i, j] = x[i]
    assert intents(bound) == ["r", "w"] and intents(nested) == ["r", "w"]


def test_an_element_read_beside_the_shape_still_reads():
    @cuda.jit
    def plus(y):
        i = cuda.grid(1)
        y[i] = y[i] + y.shape[0]

    @cuda.jit
    def last(y):
        y[0] = y[y.shape[0] - 1]

    @cuda.jit
    def rebound(y, z):
        i = cuda.grid(1)
        y = z
        y[i] = y.shape[0]
    assert intents(plus) == ["rw"] and intents(last) == ["rw"]
    assert intents(rebound) == ["rw", "rw"]


def test_a_shape_field_of_a_tuple_parameter_may_be_an_array_read():
    """A namedtuple's ``g.shape[0]`` reads its field ``shape``, which may be an array:
    a parameter never stored into as an array keeps it read."""
    @cuda.jit
    def k(g, out):
        out[0] = g.shape[0]
        dev_store(g, 0, 1.0)
    assert intents(k) == ["rw", "w"]


def test_slice_passed_to_a_device_function_is_written():
    @cuda.jit
    def k(x, y):
        dev_store(y[2:], 0, x[0])
    assert intents(k) == ["r", "w"]


HELD = cuda.to_device(np.zeros(8))   # an array a kernel reaches by a global name


@cuda.jit(device=True)
def dev_store_held(i, v):
    HELD[i] = v


def test_a_store_into_an_array_held_by_a_global_name_makes_the_kernel_opaque():
    """``HELD[i] = v`` writes memory the kernel is not given: graphtrace cannot see
    which, so the kernel is ordered after and before everything (opaque)."""
    @cuda.jit
    def direct(x):
        i = cuda.grid(1)
        if i < x.size:
            HELD[i] = x[i] * 2

    @cuda.jit
    def through(x):
        i = cuda.grid(1)
        if i < x.size:
            dev_store_held(i, x[i] * 2)

    @cuda.jit
    def local_only(x, y):   # shared and local arrays are the kernel's own
        t = cuda.local.array(2, np.float64)
        t[0] = x[0]
        y[0] = t[0]

    @cuda.jit
    def copy(src, dst):
        i = cuda.grid(1)
        if i < dst.size:
            dst[i] = src[i]
    @cuda.jit
    def alias(x):   # through a local name, an atomic, a device function's parameter
        i = cuda.grid(1)
        h = HELD
        if i < x.size:
            h[i] = 0.0
            cuda.atomic.add(HELD, i, x[i])
            dev_store(HELD, i, HELD[i] * 2)

    @cuda.jit
    def shadow(HELD, x):   # a parameter named as the global: given, not reached
        i = cuda.grid(1)
        if i < x.size:
            HELD[i] = x[i]
    assert writes_outside(direct.py_func) == {"HELD"}
    assert writes_outside(through.py_func) == {"HELD"}
    assert writes_outside(alias.py_func) == {"HELD"}
    assert writes_outside(local_only.py_func) == frozenset()
    assert writes_outside(shadow.py_func) == frozenset()
    for k in (direct, through, alias):
        @gt.graph(backend="sim")
        def f(s, x, out):
            k[1, 8, s](x)
            copy[1, 8, s](HELD, out)
        x, out = cuda.to_device(np.arange(8.0)), cuda.to_device(np.zeros(8))
        g = f.trace(x, out)
        assert g.nodes[0].opaque and g.nodes[0] in g.nodes[1].deps
        for seed in range(8):   # any order the data allow
            HELD.copy_to_device(np.zeros(8))
            gt.simulate(g, seed=seed)
            assert out.copy_to_host().tolist() == [2.0 * i for i in range(8)]


NS = types.SimpleNamespace(M=cuda.to_device(np.zeros(8)), host=np.zeros(8))


class Holder:
    arr = cuda.to_device(np.zeros(8))

    @property
    def never_called(self):   # read statically: the analysis runs no user code
        raise AssertionError("a property was called")


HOLDER = Holder()


@cuda.jit(device=True)
def dev_read_ns(i):
    return NS.M[i]


DEVS = types.SimpleNamespace(read=dev_read_ns)


def test_an_array_reached_through_an_attribute_makes_the_kernel_opaque():
    """``NS.M``, ``module.ARR``, ``Cls.arr``, ``module.device_function``: a device
    array reached through attributes of a global is memory the kernel is not
    given, whether it stores into it, adds to it atomically or reads it."""
    @cuda.jit
    def atomic(y):
        i = cuda.grid(1)
        if i < y.size:
            cuda.atomic.add(NS.M, i, y[i])

    @cuda.jit
    def reads(y):
        i = cuda.grid(1)
        if i < y.size:
            y[i] = NS.M[i] + Holder.arr[i]

    @cuda.jit
    def through_device_function(y):
        i = cuda.grid(1)
        if i < y.size:
            y[i] = DEVS.read(i)

    @cuda.jit
    def host_constant(y):   # a numpy array is a constant numba compiles in
        i = cuda.grid(1)
        if i < y.size:
            y[i] = NS.host[i] + HOLDER.never_called
    assert writes_outside(atomic.py_func) == {"NS.M"}
    assert writes_outside(reads.py_func) == {"NS.M", "Holder.arr"}
    assert writes_outside(through_device_function.py_func) == {"NS.M"}
    assert writes_outside(host_constant.py_func) == frozenset()

    @cuda.jit
    def inc(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += 1

    @gt.graph(backend="sim")
    def f(s, y, m):
        s.memset(m, 0)
        atomic[1, 8, s](y)
        inc[1, 8, s](m)
    y = cuda.to_device(np.ones(8))
    g = f.trace(y, NS.M)
    assert g.nodes[1].opaque and g.nodes[0] in g.nodes[1].deps and g.nodes[1] in g.nodes[2].deps
    for seed in range(8):   # any order the data allow
        gt.simulate(g, seed=seed)
        assert NS.M.copy_to_host().tolist() == [2.0] * 8


NESTED = cuda.to_device(np.zeros(8))
NEST = ((NESTED,),)
LISTS = [[NESTED]]
BY_KEY = {"a": {"b": NESTED}}


@cuda.jit(device=True)
def dev_read_nested(i):
    return NESTED[i]


FUNCS = (dev_read_nested,)


def _deeper_than_walked():
    v = NESTED
    for _ in range(12):
        v = (v,)
    return v


DEEP = _deeper_than_walked()
NUMBERS = (1.0, (2.0, (3.0,)))


def _closing_over(held):
    @cuda.jit
    def k(y):
        i = cuda.grid(1)
        if i < y.size:
            y[i] = held[0][0][i]
    return k


def test_an_array_in_nested_containers_makes_the_kernel_opaque():
    """A device array in a tuple, list or dict inside another (a global's or a
    closure's), or a device function held in one that reads a global array, is
    memory the kernel is not given, read or written (through a local name, an
    atomic): the kernel is opaque, ordered with the other users of that array.
    Nested deeper than graphtrace walks: taken to hold one."""
    @cuda.jit
    def reads(y):
        i = cuda.grid(1)
        if i < y.size:
            y[i] = NEST[0][0][i] + LISTS[0][0][i] + BY_KEY["a"]["b"][i]

    @cuda.jit
    def writes(y):
        i = cuda.grid(1)
        h = NEST[0][0]
        if i < y.size:
            h[i] = y[i]
            cuda.atomic.add(LISTS[0][0], i, y[i])

    @cuda.jit
    def calls(y):
        i = cuda.grid(1)
        if i < y.size:
            y[i] = FUNCS[0](i)

    @cuda.jit
    def deep(y):
        y[0] = DEEP[0][0][0][0][0][0][0][0][0][0][0][0][0]

    @cuda.jit
    def numbers(y):
        y[0] = NUMBERS[1][1][0]
    assert writes_outside(reads.py_func) == {"NEST", "LISTS", "BY_KEY"}
    assert writes_outside(writes.py_func) == {"NEST", "LISTS"}
    assert writes_outside(calls.py_func) == {"FUNCS"}
    assert writes_outside(_closing_over(NEST).py_func) == {"held"}
    assert writes_outside(deep.py_func) == {"DEEP"}
    assert writes_outside(numbers.py_func) == frozenset()

    @cuda.jit
    def fill(x, v):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = v

    for k in (reads, calls, _closing_over(NEST)):
        @gt.graph(backend="sim")
        def f(s, x, y):
            fill[1, 8, s](x, 1.0)
            k[1, 8, s](y)
        y = cuda.to_device(np.zeros(8))
        g = f.trace(NESTED, y)
        assert g.nodes[1].opaque and g.nodes[0] in g.nodes[1].deps


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


# --- arrays that come back from calls --------------------------------------------------
# The rule under test: whatever may alias a parameter and may be written makes it
# written; where the analysis cannot tell, written (and read).

@cuda.jit(device=True)
def row_of(a, i):
    return a[i]


@cuda.jit(device=True)
def pick(a, b, flag):
    return a if flag else b


@cuda.jit(device=True)
def row_via_row_of(a, i):
    return row_of(a, i)


@cuda.jit(device=True)
def rows_of(a, b, i):
    return a[i], b[i]


@cuda.jit(device=True)
def first_of(a, b):
    return a


@cuda.jit(device=True)
def tail_of(a):
    return a[1:]


@cuda.jit(device=True)
def first_vararg(*arrays):
    return arrays[0]


def test_a_row_returned_by_a_device_function_is_the_parameter():
    @cuda.jit
    def k(out, x):
        r = row_of(out, cuda.grid(1))
        r[0] = x[0]
    assert intents(k) == ["rw", "r"]


def test_an_array_argument_returned_by_a_device_function_is_the_parameter():
    @cuda.jit
    def k(out, tmp, x, flag):
        pick(out, tmp, flag)[0] = x[0]
    assert intents(k) == ["rw", "rw", "r", "r"]


def test_views_returned_through_nested_device_functions():
    @cuda.jit
    def k(out, x):
        row_via_row_of(out, 0)[0] = x[0]
        tail_of(tail_of(x))[0] = 1
    assert intents(k) == ["rw", "rw"]


def test_only_the_parameters_a_device_function_returns_come_back():
    @cuda.jit
    def k(out, x):
        first_of(out, x)[0] = 1
        row_of(i=0, a=out)[1] = x[0]     # by keyword
    assert intents(k) == ["rw", "r"]


def test_device_function_returning_a_tuple_of_views_keeps_positions():
    @cuda.jit
    def k(out, x, y):
        a, b = rows_of(out, x, 0)
        a[0] = b[0]
        both = rows_of(x, y, 1)
        both[0][0] = 1                    # position lost through a name: both count
    assert intents(k) == ["rw", "rw", "rw"]

    @cuda.jit
    def k2(out, x):
        a, b = rows_of(out, x, 0)
        a[0] = b[0]
    assert intents(k2) == ["rw", "r"]


def test_device_function_returning_one_of_its_varargs():
    @cuda.jit
    def k(out, x):
        first_vararg(out, x)[0] = 1
    assert intents(k) == ["rw", "rw"]


def test_a_call_graphtrace_cannot_see_into_returns_what_it_was_given():
    @cuda.jit
    def k(out, x):
        r = opaque_helper(out[1:])
        r[0] = x[0]
    assert intents(k) == ["rw", "r"]


# --- iteration -------------------------------------------------------------------------

def test_rows_of_a_matrix_iterated_with_enumerate_zip_and_friends():
    @cuda.jit
    def k_enumerate(x, out):
        for j, row in enumerate(out):
            row[0] = x[j]

    @cuda.jit
    def k_zip(out, x):
        for a, b in zip(out, x):
            a[0] = b[0]

    @cuda.jit
    def k_nested(x, out):
        for i, (a, b) in enumerate(zip(x, out)):
            b[0] = a[0] + i

    @cuda.jit
    def k_reversed(out, x):
        for row in reversed(out):
            for c in range(row.size):
                row[c] = x[c]

    @cuda.jit
    def k_iter(out, x):
        it = iter(out)
        r = next(it)
        r[0] = x[0]
    assert intents(k_enumerate) == ["r", "rw"]
    assert intents(k_zip) == ["rw", "r"]
    assert intents(k_nested) == ["r", "rw"]
    assert intents(k_reversed) == ["rw", "r"]
    assert intents(k_iter) == ["rw", "r"]


def test_rows_collected_by_comprehensions_and_generators():
    @cuda.jit
    def k_list(out, x):
        rows = [out[c] for c in range(2)]
        rows[0][0] = x[0]

    @cuda.jit
    def k_gen(x, out):
        for r in (row for row in out):
            r[0] = x[0]
    assert intents(k_list) == ["rw", "r"]
    assert intents(k_gen) == ["r", "rw"]


# --- tuples, names and other ways to alias ----------------------------------------------

def test_aliasing_through_tuples():
    @cuda.jit
    def k_subscript(x, out):
        pair = (x, out)
        pair[1][0] = 1

    @cuda.jit
    def k_starred(x, y, out):
        first, *rest = x, y, out
        rest[1][0] = first[0]

    @cuda.jit
    def k_concat(x, out):
        t = (x,) + (out,)
        t[1][0] = 1

    @cuda.jit
    def k_augmented(x, out):
        t = (x,)
        t += (out,)
        t[1][0] = 1

    @cuda.jit
    def k_parameter(arrays, x):          # a tuple of arrays passed to the kernel
        arrays[1][0] = x[0]
    assert intents(k_subscript) == ["rw", "rw"]
    assert intents(k_starred) == ["r", "rw", "rw"]
    assert intents(k_concat) == ["rw", "rw"]
    assert intents(k_augmented) == ["rw", "rw"]
    assert intents(k_parameter) == ["rw", "r"]


def test_walrus_or_and_augmented_assignment_through_an_alias():
    @cuda.jit
    def k_walrus(out, x):
        (r := out[1:])[0] = x[0]

    @cuda.jit
    def k_or(out, x):
        o = x or out
        o[0] = 1

    @cuda.jit
    def k_in_place(out, x):
        r = out[0]
        r += x[0]

    @cuda.jit
    def k_element(out, x):
        r = out[1:]
        r[0] += x[0]
    assert intents(k_walrus) == ["w", "r"]
    assert intents(k_or) == ["w", "w"]
    assert intents(k_in_place) == ["rw", "r"]
    assert intents(k_element) == ["rw", "r"]


_SINK = None


def test_constructs_the_analysis_does_not_follow_read_and_write():
    @cuda.jit
    def k_lambda(out, x):
        f = lambda: out  # noqa: E731
        f()[0] = x[0]

    @cuda.jit
    def k_closure(out, x):
        def put(v):
            out[0] = v
        put(x[0])

    @cuda.jit
    def k_global(out, x):
        global _SINK
        _SINK = out

    @cuda.jit
    def k_with(out, x):
        with out as o:
            o[0] = x[0]

    @cuda.jit
    def k_match(out, x):
        match (out, x):
            case (a, b):
                a[0] = b[0]

    @cuda.jit
    def k_method(out, x):
        out.fill(0)

    @cuda.jit
    def k_local_callee(out, x):
        f = row_of                        # calls through a local name are not resolved
        f(out, 0)[0] = x[0]
    assert intents(k_lambda) == ["rw", "r"]
    assert intents(k_closure) == ["rw", "rw"]
    assert intents(k_global) == ["rw", "r"]
    assert intents(k_with) == ["rw", "r"]
    assert intents(k_match) == ["rw", "rw"]
    assert intents(k_method) == ["rw", "r"]
    assert intents(k_local_callee) == ["rw", "r"]


def test_recursive_device_function_terminates_and_assumes_the_worst():
    @cuda.jit(device=True)
    def down(a, n):
        if n:
            return down(a, n - 1)
        return a

    @cuda.jit
    def k(out, x):
        down(out, 3)[0] = x[0]
    assert intents(k) == ["rw", "r"]


# --- intrinsics -------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:The keyword argument 'nopython=False'")
def test_stores_hidden_in_intrinsics_and_library_device_functions():
    from numba.cuda.random import xoroshiro128p_uniform_float32

    @cuda.jit
    def k_cache_hint(out, x):
        cuda.stcg(out, 0, x[0])

    @cuda.jit
    def k_random(states, out):
        out[0] = xoroshiro128p_uniform_float32(states, 0)   # advances states[0]

    @cuda.jit
    def k_ufunc_out(x, out):
        np.add(x, 1, out)

    @cuda.jit
    def k_fresh(x, out):
        buf = cuda.local.array(4, np.float32)
        buf[0] = cuda.atomic.add(out, 0, x[0])
    assert intents(k_cache_hint) == ["rw", "r"]
    assert intents(k_random) == ["rw", "w"]
    assert intents(k_ufunc_out) == ["r", "rw"]
    assert intents(k_fresh) == ["r", "rw"]


def test_plainly_read_only_parameters_stay_read_only():
    @cuda.jit
    def k(x, w, out):
        i = cuda.grid(1)
        acc = 0.0
        for j in range(x.shape[1]):
            acc += x[i, j] * w[j]
        n = x.shape[0]
        n -= 1
        for v in w:
            acc += v
        a, b = x[i, 0], w[0]
        out[i] = (math.sqrt(acc) + dev_load(w, i) + np.float32(n) + max(a, b)
                  + cuda.shfl_sync(0xffffffff, w[i], 0) + len(w))
    assert intents(k) == ["r", "r", "w"]


# --- *args and keyword-only parameters ---------------------------------------------------

def test_vararg_kernels_get_one_intent_for_every_extra_argument():
    @cuda.jit
    def k_reads(out, *ins):
        out[0] = ins[0][0] + ins[1][0]

    @cuda.jit
    def k_writes(x, *outs):
        for o in outs:
            o[0] = x[0]

    @cuda.jit
    def k_unrolled(out, *ins):
        for a in literal_unroll(ins):
            out[0] += a[0]

    @cuda.jit
    def k_plain(x, y):
        y[0] = x[0]
    assert (intents(k_reads), vararg_intent(k_reads.py_func)) == (["w"], "r")
    assert (intents(k_writes), vararg_intent(k_writes.py_func)) == (["r"], "w")
    assert (intents(k_unrolled), vararg_intent(k_unrolled.py_func)) == (["rw"], "r")
    assert vararg_intent(k_plain.py_func) is None
    assert analyze(k_writes.py_func).for_args(3) == ["r", "w", "w"]
    assert analyze(k_reads.py_func).for_args(1) == ["w"]


def test_varargs_forwarded_to_a_device_function():
    @cuda.jit
    def k(*arrays):
        dev_store(*arrays)
    assert vararg_intent(k.py_func) == "rw"


@cuda.jit(device=True)
def dev_keyword_only(a, *, out):
    out[0] = a[0]


def test_keyword_only_parameters():
    @cuda.jit
    def k(x, y):
        dev_keyword_only(x, out=y)

    @cuda.jit
    def k_kwonly(x, *, y):
        y[0] = x[0]
    assert intents(k) == ["r", "w"]
    result = analyze(k_kwonly.py_func)
    assert (result.modes, result.kwonly) == (["r"], {"y": "w"})


def test_without_source_everything_is_read_and_written():
    namespace = {}
    exec("def k(x, *rest):\n    x[0] = 1\n", namespace)    # no source file to read
    assert infer_intents(namespace["k"]) is None
    assert vararg_intent(namespace["k"]) == "rw"


# --- end to end: a missed write would leave two kernels unordered -------------------------

@cuda.jit
def fill_rows(x, out):        # writes ``out`` only through the row a device function returns
    i = cuda.grid(1)
    if i < out.shape[0]:
        r = row_of(out, i)
        for j in range(r.size):
            r[j] = x[i] + j


@cuda.jit
def fill_by_zip(x, out):      # writes ``out`` only through rows paired with zip
    if cuda.grid(1) == 0:
        for a, b in zip(out, x):
            a[0] = b
            a[1] = 2 * b


@cuda.jit
def row_sums(out, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] = out[i, 0] + out[i, 1]


def test_writes_through_aliases_order_the_reader_in_every_order():
    @gt.graph(backend="sim")
    def f(s, x, out, y, writer):
        writer[1, 4, s](x, out)
        row_sums[1, 4, s](out, y)
    for writer, expected in ((fill_rows, [1, 3, 5, 7]), (fill_by_zip, [0, 3, 6, 9])):
        x = cuda.to_device(np.arange(4, dtype=np.float32))
        out = cuda.to_device(np.full((4, 2), -1, np.float32))
        y = cuda.to_device(np.zeros(4, np.float32))
        g = f.trace(x, out, y, writer)
        assert [d.index for d in g.nodes[1].deps] == [0]
        assert gt.check(g) == []
        for seed in range(4):    # the simulator also fails a kernel that writes an "in"
            out.copy_to_device(np.full((4, 2), -1, np.float32))
            y.copy_to_device(np.zeros(4, np.float32))
            gt.simulate(g, seed=seed)
            assert y.copy_to_host().tolist() == expected


# --- what mutation testing found unpinned ---------------------------------------------------

@cuda.jit(device=True)
def dev_writes_varargs(x, *outs):
    for o in outs:
        o[0] = x[0]


def test_a_parameter_written_and_read_only_through_call_arguments_is_read_and_written():
    @cuda.jit
    def k(a, b, c, d, e, f, g):
        a[0] = len(a)
        b[0] = max(b, b)
        c[0] = tuple(c)
        d[0] = d.reshape(d)
        cuda.atomic.add(f, 0, e)
        e[0] = 0
        np.add(g, 1, f)
        g[0] = 0
    assert intents(k) == ["rw"] * 7


def test_in_place_update_of_a_returned_row_or_a_transposed_view_writes():
    @cuda.jit
    def k(out, m, x):
        r = row_of(out, 0)
        r += x[0]
        t = m.T
        t += x[0]
    assert intents(k) == ["rw", "rw", "r"]


def test_starred_call_of_a_device_function_writing_its_varargs():
    @cuda.jit
    def k(x, out):
        dev_writes_varargs(*(x, out))
    assert intents(k) == ["rw", "rw"]


def test_an_escape_after_a_write_keeps_the_write():
    @cuda.jit
    def k(out, x, y):
        out[0] = out[1]
        f = lambda: x  # noqa: E731
        global _SINK
        _SINK = y
        f()
    assert intents(k) == ["rw", "rw", "rw"]


def test_with_statement_does_not_end_the_alias_fixpoint_early():
    @cuda.jit
    def k(out, x):
        for _ in range(3):
            r = s
            s = t
            t = out
            with x as w:
                pass
            r[0] = w
    assert intents(k) == ["w", "rw"]


def test_raise_and_an_unbound_global_leave_parameters_alone():
    @cuda.jit
    def k(out, x):
        global _SINK
        if x[0] < 0:
            raise ValueError("negative")
        for v in ():
            out[1] = v
        out[0] = _SINK
    assert intents(k) == ["w", "r"]


def test_local_names_shadowing_a_global_device_function_are_not_resolved_through_it():
    @cuda.jit
    def k_assigned(out, x):
        dev_load = dev_store
        dev_load(out, 0, x[0])

    @cuda.jit
    def k_nested(out, x):
        def dev_load(a, i):
            a[i] = 0
        dev_load(out, 0)

    @cuda.jit
    def k_imported(out, x):
        from test_intents import dev_store as dev_load
        dev_load(out, 0, x[0])

    @cuda.jit
    def k_captured(out, x):
        match dev_store:
            case dev_load:
                dev_load(out, 0, x[0])
    for k in (k_assigned, k_nested, k_imported, k_captured):
        assert intents(k)[0] == "rw", k.py_func.__name__


def test_a_closure_variable_wins_over_a_global_of_the_same_name():
    dev_load = dev_store        # noqa: F841  (the kernel below closes over it)

    @cuda.jit
    def k(out, x):
        dev_load(out, 0, x[0])
    assert intents(k) == ["w", "r"]


def test_analysis_in_a_new_thread_and_extra_launch_arguments():
    import threading

    @cuda.jit
    def k(x, y):
        y[0] = x[0]
    got = []
    t = threading.Thread(target=lambda: got.append(analyze(k.py_func)))
    t.start()
    t.join()
    assert got[0].modes == ["r", "w"]
    assert got[0].for_args(3) == ["r", "w", "rw"]   # past a kernel without *args: unknown


def test_cuda_names_however_numba_cuda_was_imported():
    import numba
    import numba.cuda.random
    from graphtrace.ops._aliases import _cuda_kind, _cuda_name
    assert _cuda_name(numba, ["cuda", "atomic", "add"]) == "atomic.add"
    assert _cuda_name(numba, ["np", "atomic", "add"]) is None
    assert _cuda_name(numba.cuda, ["atomic", "add"]) == "atomic.add"
    assert _cuda_name(numba.cuda.random, ["xoroshiro128p_next"]) == "random.xoroshiro128p_next"
    assert _cuda_name(math, ["sqrt"]) is None
    assert _cuda_name(numba.cuda.jit, ["x"]) == "jit.x"       # a name taken from numba.cuda
    assert _cuda_name(None, []) is None and _cuda_name(len, []) is None
    kinds = {"atomic.add": "store", "stcg": "store", "stwt": "store", "grid": "fresh",
             "local.array": "fresh", "libdevice.sinf": "fresh", "fp16.hadd": "fresh",
             "bf16.hmul": "fresh", "float32x4": "fresh", "uint8x2": "fresh", "int4": "fresh",
             "selp": "passing", "literal_unroll": "passing", "atomic": "unknown",
             "float32x5": "unknown", "xfloat2": "unknown", "random.xoroshiro128p_next": "unknown"}
    assert {rel: _cuda_kind(rel) for rel in kinds} == kinds


def test_resolve_dotted_finds_globals_closures_and_attributes():
    from graphtrace.ops._kernel_source import resolve_dotted
    helper = row_of

    @cuda.jit
    def k(out):
        helper(out, 0)[0] = math.sqrt(2.0)
    f = k.py_func
    assert resolve_dotted(f, "helper") is row_of
    assert resolve_dotted(f, "math.sqrt") is math.sqrt
    assert resolve_dotted(f, "dev_store") is dev_store          # a global the kernel never names
    assert resolve_dotted(f, "np.linalg.norm") is np.linalg.norm
    assert resolve_dotted(f, "math.no_such") is None and resolve_dotted(f, "nowhere") is None
    assert resolve_dotted(len, "math") is None                   # no Python function


def _with_done_flag(f):
    """A decorator that makes a kernel of its own around ``f``, named after it."""
    dev = cuda.jit(device=True)(f)

    @functools.wraps(f)
    def kern(x, out, done, *more):
        dev(x, out, done)
        done[0] = 1   # the wrapper's own write
    return cuda.jit(kern)


@_with_done_flag
def _body(x, out, done):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = 2 * x[i]


def test_a_kernel_made_with_functools_wraps_is_read_from_its_own_code():
    """inspect reads the wrapped function for a functools.wraps wrapper: the
    kernel's own code and parameters must be read instead."""
    from graphtrace.ops.kernel import adapter_for
    ad = adapter_for(_body)
    assert ad.params == ["x", "out", "done"] and ad.vararg == "more"
    assert ad.intents[:2] == ["r", "w"] and "w" in ad.intents[2]   # done: written


_CELLS = ('''
@cuda.jit(device=True)
def op(a, b, i):
    b[i] = a[i] + 1
''', '''
@cuda.jit
def k(a, b):
    i = cuda.grid(1)
    if i < a.size:
        op(a, b, i)

@cuda.jit
def copyk(src, dst):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = src[i]

@gt.graph(backend="sim")
def f(s, a, b, c):
    k[1, 32, s](a, b)
    copyk[1, 32, s](a, c)
''', '''
@cuda.jit(device=True)
def op(a, b, i):
    a[i] = a[i] + 5
''')


def test_a_device_function_defined_again_is_a_new_graph_with_what_either_version_does():
    """A notebook runs the device function's cell again, not the kernel's: the next
    call traces anew, the kernel counts as doing what either version does (numba
    keeps the old code where it compiled the kernel before), and the new one runs."""
    import linecache
    ns = {"cuda": cuda, "gt": gt}
    for i, cell in enumerate(_CELLS[:2]):   # cells' source, as IPython keeps it
        name = f"<cell-{i}>"
        linecache.cache[name] = (len(cell), None, cell.splitlines(True), name)
        exec(compile(cell, name, "exec"), ns)
    a, b, c = (cuda.to_device(np.zeros(4)) for _ in range(3))
    ns["f"](a, b, c)
    assert b.copy_to_host().tolist() == [1.0] * 4
    linecache.cache["<cell-2>"] = (len(_CELLS[2]), None, _CELLS[2].splitlines(True), "<cell-2>")
    exec(compile(_CELLS[2], "<cell-2>", "exec"), ns)
    ns["f"](a, b, c)                      # no IntentError: traced anew
    assert a.copy_to_host().tolist() == [5.0] * 4 and c.copy_to_host().tolist() == [5.0] * 4
    listing = str(ns["f"].trace(a, b, c))
    assert "kernel k[1, 32](a, b)  inout(a, b)" in listing
    assert "after(%0)" in listing and ns["f"].cache_info().misses == 2


def test_a_kernel_whose_file_was_edited_since_it_was_loaded_is_read_and_written(tmp_path):
    """The file no longer holds the code that runs (edited, not reloaded): read as it
    is, it would give the new code's intents to the old; taken as unknown instead."""
    import importlib.util
    src = ("from numba import cuda\n\n@cuda.jit\ndef k(a, b):\n    i = cuda.grid(1)\n"
           "    if i < a.size:\n        {}\n")
    path = tmp_path / "edited_kernels.py"
    path.write_text(src.format("b[i] = 2 * a[i]"))
    spec = importlib.util.spec_from_file_location("edited_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path.write_text(src.format("a[i] = 2 * b[i]"))   # edited, the module not reloaded
    assert intents(module.k) is None
    path.write_text(src.format("b[i] = 2 * a[i]"))   # as loaded again
    assert intents(module.k) == ["r", "w"]


def test_names_the_compiler_spells_otherwise_are_not_taken_for_an_edited_file(tmp_path):
    """NFKC-normalised identifiers (µ is stored as μ) and a class body's __private
    names (stored as _Class__x) match their source as it is."""
    import importlib.util
    path = tmp_path / "spelled_kernels.py"
    path.write_text(
        "from numba import cuda\n\n@cuda.jit\ndef k_micro(x, out):\n"
        "    \u00b5 = cuda.grid(1)\n    if \u00b5 < out.size:\n        out[\u00b5] = x[\u00b5]\n\n"
        "class Holder:\n    @cuda.jit\n    def k_mangled(x, out):\n"
        "        __i = cuda.grid(1)\n        if __i < out.size:\n            out[__i] = x[__i]\n",
        encoding="utf-8")
    spec = importlib.util.spec_from_file_location("spelled_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert intents(module.k_micro) == ["r", "w"]
    assert intents(module.Holder.k_mangled) == ["r", "w"]


# --- q = p[i]; q += v: a number where p[i] takes every dimension ------------------------

F8 = np.dtype(np.float64)


def at(k, *dims, dtype=F8):
    """Intents of ``k`` launched on arrays of these numbers of dimensions (None: no array)."""
    return infer_intents(k.py_func, [None if d is None else (d, dtype) for d in dims])


def test_an_element_augmented_in_a_local_name_writes_only_where_it_is_a_view():
    @cuda.jit
    def elem(x, y, out):
        i = cuda.grid(1)
        v = x[i]
        v += y[i]
        out[i] = v

    @cuda.jit
    def loop(x, out):
        s = 0.0
        for v in x:
            v *= 2.0
            s += v
        out[0] = s

    @cuda.jit
    def two(a, out):
        i, j = cuda.grid(2)
        n = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        s = a[i, 0]
        s += a[n, j]
        t = a[a.shape[0] - 1, len(a) - 1]
        t -= 1
        out[i] = s + t
    assert intents(elem) == ["rw", "r", "w"]           # without the arrays: may be a view
    assert at(elem, 1, 1, 1) == ["r", "r", "w"]
    assert at(elem, 2, 1, 1) == ["rw", "r", "w"]       # x[i] is a row of a 2-D x
    assert at(loop, 1, 1) == ["r", "w"] and at(loop, 2, 1) == ["rw", "w"]
    assert at(two, 2, 1) == ["r", "w"] and at(two, 3, 1) == ["rw", "w"]


@pytest.mark.parametrize("dims", [1, 2])
def test_views_and_elements_of_unknown_kind_augmented_still_write(dims):
    @cuda.jit
    def sliced(x, out):
        i = cuda.grid(1)
        v = x[i:i + 2]
        v += 1

    @cuda.jit
    def by_parameter(x, j):
        v = x[j]            # j may be a tuple or a slice
        v += 1

    @cuda.jit
    def by_slice_name(x, out):
        sl = slice(0, 2)
        v = x[sl]
        v += 1

    @cuda.jit
    def new_axis(x, out):
        i = cuda.grid(1)
        v = x[None, i]
        v += 1
        w = x[..., i]
        w += 1

    @cuda.jit
    def either(x, c):
        i = cuda.grid(1)
        v = x[i] if c else x
        v += 1

    @cuda.jit
    def reshaped(x, out):
        v = x.reshape(2, -1)[0]
        v += 1

    @cuda.jit
    def tuple_index(x, out):
        idx = (0,)
        v = x[idx]
        v += 1

    @cuda.jit
    def bool_index(x, out):
        v = x[True]
        v += 1

    @cuda.jit
    def passed_on(x, out):
        for i, v in enumerate(iter(x)):
            v += 1
    for k in (sliced, by_parameter, by_slice_name, new_axis, either, reshaped, tuple_index,
              bool_index, passed_on):
        assert at(k, dims, None)[0] == "rw", k.__name__


def test_an_element_augmented_stays_written_for_records_0d_arrays_and_tuples():
    @cuda.jit
    def elem(x, out):
        v = x[0]
        v += 1

    @cuda.jit
    def items(arrs, out):
        for v in arrs:      # a tuple of arrays: each item is an array
            v += 1

    @cuda.jit
    def rows(arrs, out):
        a = arrs[0]
        a += 1
    record = np.dtype([("a", np.float64), ("b", np.int32)])
    assert at(elem, 1, 1, dtype=record)[0] == "rw"
    assert at(elem, 1, 1, dtype=np.dtype((np.float64, (3,))))[0] == "rw"
    assert at(elem, 0, 1)[0] == "rw"
    assert at(items, None, 1)[0] == "rw" and at(rows, None, 1)[0] == "rw"
    assert at(items, 1, 1)[0] == "r"   # given an array, its items are numbers


def test_an_element_augmented_in_a_name_reaches_the_graph_by_the_arrays_dimensions():
    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        v = x[i]
        v += 1
        out[i] = v

    @gt.graph
    def f(s, x, a, b):
        k[1, 4, s](x, a)
        k[1, 4, s](x, b)
    g = f.trace(A(4), A(4), A(4))
    assert [m for b, m in g.nodes[0].accesses if b.label == "x"] == ["r"]
    assert not g.nodes[1].deps                        # two readers of x: independent
    g = f.trace(A((4, 4)), A((4, 4)), A((4, 4)))      # rows of x: written through
    assert [m for b, m in g.nodes[0].accesses if b.label == "x"] == ["rw"]
    assert g.nodes[1].deps


def test_an_index_bound_otherwise_than_by_assignment_is_not_taken_for_an_int():
    @cuda.jit
    def k(x, out):
        i = 0
        for i in out:       # (an item of out: any value of its dtype)
            pass
        v = x[i]
        v += 1

    @cuda.jit
    def nested(x, out):
        i = 0

        def g(i):
            return i
        v = x[i]
        v += 1
    assert at(k, 1, 1)[0] == "rw" and at(nested, 1, 1)[0] == "rw"


def test_an_array_taken_by_getattr_with_a_constant_name_makes_the_kernel_opaque():
    """``getattr(NS, "M")`` (numba compiles a constant name) reaches the device
    array ``NS.M`` as ``NS.M`` does: the kernel is ordered with the nodes using it.
    A getattr of an object holding host arrays alone reaches nothing."""
    @cuda.jit
    def by_getattr(y):
        i = cuda.grid(1)
        if i < y.size:
            getattr(NS, "M")[i] = y[i]

    @cuda.jit
    def host_only(y):
        i = cuda.grid(1)
        if i < y.size:
            y[i] = getattr(HOST_NS, "h")[i]
    assert writes_outside(by_getattr.py_func) == {"NS"}
    assert writes_outside(host_only.py_func) == frozenset()

    @gt.graph(backend="sim")
    def f(s, x, out):
        copy_into[1, 8, s](x, NS.M)     # NS.M = x
        by_getattr[1, 8, s](out)       # NS.M = out
        copy_into[1, 8, s](NS.M, x)     # x = NS.M: after both
    x, out = cuda.to_device(np.zeros(8)), cuda.to_device(np.arange(8.0))
    g = f.trace(x, out)
    assert g.nodes[1].opaque and g.nodes[1] in g.nodes[2].deps


HOST_NS = types.SimpleNamespace(h=np.ones(8))


def test_a_kernel_without_readable_source_is_read_and_written_and_the_log_says_why(caplog):
    """A kernel compiled from a ``%%time`` cell or by ``exec`` has no source to
    read: each array counts as read and written, and INFO says so, with the cure."""
    ns = {"cuda": cuda}
    exec(compile("@cuda.jit\ndef k(a, b):\n    i = cuda.grid(1)\n    if i < a.size:\n"
                 "        b[i] = a[i]\n", "<timed exec>", "exec"), ns)

    @gt.graph
    def f(s, a, b):
        ns["k"][1, 32, s](a, b)
    a, b = cuda.to_device(np.ones(4)), cuda.to_device(np.zeros(4))
    with caplog.at_level(logging.INFO, logger="graphtrace"):
        f(a, b)
    assert b.copy_to_host().tolist() == [1.0] * 4
    assert "inout(a, b)" in str(f.trace(a, b))
    said = [r.getMessage() for r in caplog.records if "source cannot be read" in r.getMessage()]
    assert said == ["numba kernel k (<timed exec>:1): its source cannot be read, so each array "
                    "it is given counts as read and written and its launches keep the order "
                    "they have on those arrays; define it in a file or a notebook cell (not "
                    "under %%time or exec), or give its intents: gt.kernel(k, \"in, out, ...\")"]

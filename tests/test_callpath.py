"""The call path on the simulator backend: cache keys, rebinding, scalars, lifetimes."""
import copy
import functools
import gc
import io
import math
import os
import sys
import threading
import types
import warnings
import weakref

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st
from numba import cuda

import graphtrace as gt
from graphtrace.arrays import as_buffer
from helpers import FakeDeviceArray as A, Handle as _Handle, any_kernel, line_of
from step_kernels import fill


@cuda.jit
def axpy(a, x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] += a * x[i]


def dev(a):
    return cuda.to_device(np.asarray(a, dtype=np.float64))


def make():
    @gt.graph(backend="sim")
    def f(s, a, x, y):
        axpy[1, 64, s](a, x, y)
        s.memset(y[:4], 0)
    return f


def test_second_call_hits_the_cache_and_uses_the_new_arrays_and_scalar():
    f = make()
    x1, y1, x2, y2 = dev(np.arange(8)), dev(np.ones(8)), dev(np.arange(8) * 2), dev(np.ones(8))
    f(2.0, x1, y1)
    f(3.0, x2, y2)
    assert f.cache_info().misses == 1 and f.cache_info().hits == 1
    g = f.compile(3.0, x2, y2)
    assert (g.node_count, g.edge_count) == (2, 1)
    e1, e2 = 1 + 2.0 * np.arange(8), 1 + 3.0 * np.arange(8) * 2
    e1[:4] = e2[:4] = 0
    assert np.array_equal(y1.copy_to_host(), e1)       # the old arrays were left alone
    assert np.array_equal(y2.copy_to_host(), e2)       # the view y[:4] moved with y


def test_a_call_with_the_arguments_of_the_last_one_is_a_hit():
    f = make()
    x, y = dev(np.arange(8)), dev(np.ones(8))
    for _ in range(3):
        f(2.0, x, y)                 # the call shortcut, checked in C
    assert f.cache_info().misses == 1 and f.cache_info().hits == 2
    for _ in range(2):
        f(2.0, x, y=y)               # a keyword: the shortcut of the full check
    assert f.cache_info().hits == 4
    f(3.0, x, y)                     # a new number: rebound, also a hit
    assert f.cache_info().misses == 1 and f.cache_info().hits == 5


def test_signature_changes_retrace():
    f = make()
    key = f.signature(1.0, A(8, "float64"), A(8, "float64"))
    assert f.signature(5.0, A(8, "float64"), A(8, "float64")) == key      # scalars are dynamic
    assert f.signature(np.float32(1), A(8, "float64"), A(8, "float64")) != key  # scalar type
    assert f.signature(1.0, A(8, "float32"), A(8, "float64")) != key      # dtype
    assert f.signature(1.0, A(9, "float64"), A(8, "float64")) != key      # shape
    x = A(16, "float64")
    assert f.signature(1.0, x[::2], A(8, "float64")) != key               # strides


def test_static_values_are_part_of_the_key():
    @gt.graph(static=("n",), backend="sim")
    def f(s, x, n, mode):
        for _ in range(n):
            s.memset(x, 1 if mode == "ones" else 0)
    x = A(8)
    assert f.signature(x, 2, "ones") != f.signature(x, 3, "ones")
    assert f.signature(x, 2, "ones") != f.signature(x, 2, "zeros")        # str: static
    assert f.signature(x, 2, "ones") == f.signature(A(8), 2, "ones")


def test_aliasing_between_arguments_is_part_of_the_key():
    f = make()
    x, y = A(8, "float64"), A(8, "float64")
    assert f.signature(1.0, x, x) != f.signature(1.0, x, y)
    assert f.signature(1.0, x, x) == f.signature(1.0, y, y)
    z = A(16, "float64")
    assert f.signature(1.0, z[:8], z[8:]) == f.signature(1.0, x, y)       # disjoint
    assert f.signature(1.0, z[:8], z[4:12]) != f.signature(1.0, x, y)     # overlapping


def test_one_array_twice_and_two_views_of_it_are_other_calls():
    """``out is x`` tells one array passed twice from two views of its memory: the
    two calls share every byte the same way, but each is traced for itself."""
    @gt.graph(backend="sim")
    def f(s, x, out):
        if out is x:   # in place: through a temporary
            t = s.empty(x.shape, x.dtype)
            s.memset(t, 0)
            axpy[1, 64, s](2.0, x, t)
            s.copy(x, t)
        else:
            axpy[1, 64, s](2.0, x, out)
    b, c = dev(np.ones(8)), dev(np.ones(8))
    f(b[:], b[:])   # two view objects: out += 2 x, in place
    f(c, c)         # one object: x = 2 x, through the temporary
    assert b.copy_to_host().tolist() == [3.0] * 8
    assert c.copy_to_host().tolist() == [2.0] * 8
    assert f.cache_info().misses == 2


def test_a_read_only_destination_is_refused_also_after_a_writable_one():
    """Whether an array is read-only is part of the cache key: a call with a
    read-only destination after a writable one of the same shape is traced,
    and refused there, instead of writing into it."""
    @gt.graph(backend="sim")
    def f(s, d, h):
        s.copy(h, d)

    def read_only():
        h = gt.pinned_empty(4)
        h[:] = -1
        h = h.view()
        h.flags.writeable = False
        return h
    d = dev(np.arange(4))
    f(d, gt.pinned_empty(4))
    h = read_only()
    with pytest.raises(gt.ArgumentError, match="copy destination h is read-only"):
        f(d, h)
    assert h.tolist() == [-1.0] * 4
    ro = A(4)   # a device array whose interface says read-only
    ro.__cuda_array_interface__["data"] = (ro.ptr, True)
    with pytest.raises(gt.ArgumentError, match="memset destination d is read-only"):
        gt.graph(lambda s, d: s.memset(d, 0)).trace(ro)


@pytest.mark.parametrize("call", [lambda f, d, h: f(d, h), lambda f, d, h: f(d, h=h),
                                  lambda f, d, h: f(d, [h])])
def test_the_same_array_made_read_only_since_the_last_call_is_refused(call):
    """The call shortcut compares an array's geometry read in place, and its
    writeable flag with it: the very same destination frozen by the caller after
    a call is refused as a new read-only one is, not written into."""
    @gt.graph(backend="sim")
    def f(s, d, h):
        s.copy(h[0] if isinstance(h, list) else h, d)

    d, h = dev(np.arange(4)), gt.pinned_empty(4)
    call(f, d, h)
    call(f, d, h)   # the shortcut made: the very same arrays
    h[:] = -1
    h.flags.writeable = False
    with pytest.raises(gt.ArgumentError, match="is read-only"):
        call(f, d, h)
    assert h.tolist() == [-1.0] * 4


def test_aliased_call_is_traced_for_its_own_dependencies():
    """(A memset and a copy: host callbacks are ordered with each other anyway.)"""
    @gt.graph(backend="sim")
    def f(s, x, y, h):
        s.memset(x, 0)
        s.copy(h, y)
    d, h = cuda.to_device(np.zeros(4)), gt.pinned_empty(4)
    g_same = f.compile(d, d, h)
    g_diff = f.compile(d, cuda.to_device(np.zeros(4)), h)
    assert g_same.ir.edges() == [(0, 1)] and g_diff.ir.edges() == []


def test_dynamic_scalar_rebinds_kernels_memsets_and_host_callbacks():
    seen = []

    @gt.graph(backend="sim")
    def f(s, x, v, h):
        s.memset(x, v)
        s.copy(h, x)
        s.host(lambda arr, v: seen.append((arr.sum(), v)), gt.In(h), v)
    x, h = cuda.to_device(np.zeros(4, np.float32)), gt.pinned_empty(4, np.float32)
    f(x, 1.0, h)
    f(x, 2.0, h)
    assert seen == [(4.0, 1.0), (8.0, 2.0)]
    assert f.cache_info().misses == 1


def test_rebinding_host_arrays_of_callbacks():
    seen = []

    @gt.graph(backend="sim")
    def f(s, h):
        s.host(lambda a: seen.append(a.copy()), gt.In(h[1:3]))
    h1, h2 = gt.pinned_empty(4), gt.pinned_empty(4)
    h1[:], h2[:] = [1, 2, 3, 4], [5, 6, 7, 8]
    f(h1)
    f(h2)
    assert [list(a) for a in seen] == [[2, 3], [6, 7]]


def test_a_view_of_an_argument_whose_rows_overlap_moves_with_it():
    """A column of a sliding window (rows that share bytes) lies in the window: a
    later call with another window must read the new one, not the traced one."""
    seen = []

    @gt.graph(backend="sim")
    def f(s, w):
        s.host(lambda a: seen.append(a.tolist()), gt.In(w[:, 0]))
    h1, h2 = gt.pinned_empty(6), gt.pinned_empty(6)
    h1[:], h2[:] = range(6), range(10, 16)
    f(np.lib.stride_tricks.as_strided(h1, (4, 3), (8, 8)))
    f(np.lib.stride_tricks.as_strided(h2, (4, 3), (8, 8)))
    assert seen == [[0, 1, 2, 3], [10, 11, 12, 13]]
    assert f.cache_info().misses == 1


def test_retrace_warning_names_the_changing_argument_once():
    @gt.graph(backend="sim")
    def f(s, x, k):
        s.memset(x, 0)
    with pytest.warns(gt.RetraceWarning, match=r"argument\(s\) x keep changing") as rec:
        for n in range(1, 12):
            f(dev(np.zeros(n)), 1.0)
    assert len(rec) == 1


class _Layer:
    def __init__(self):
        self.w = cuda.to_device(np.zeros(4))

    @gt.graph(backend="sim", maxsize=4)
    def fwd(self, s, x):
        axpy[1, 4, s](1.0, x, self.w)


def test_a_cache_dropping_the_graphs_it_is_asked_for_again_says_to_raise_maxsize():
    """Six layers in turn through a cache of four: every call traced anew, and with
    one instance tracing once each, no retrace warning said so."""
    layers, x = [_Layer() for _ in range(6)], dev(np.ones(4))
    with pytest.warns(gt.RetraceWarning) as rec:
        for _ in range(4):
            for layer in layers:
                layer.fwd(x)                                 # thrash
    said = [r for r in rec if r.category is gt.RetraceWarning]
    assert len(said) == 1 and said[0].lineno == line_of(__file__, "thrash")
    assert "fwd traced 8 graphs again that its full cache (maxsize=4) had dropped" in \
        str(said[0].message) and "a method has a graph per object" in str(said[0].message)
    assert "@gt.graph(maxsize=16)" in str(said[0].message)
    assert [layer.w.copy_to_host().tolist() for layer in layers] == [[4.0] * 4] * 6


def test_a_cache_large_enough_for_its_signatures_in_turn_says_nothing():
    @gt.graph(backend="sim", maxsize=6)
    def f(s, x):
        s.memset(x, 0)
    xs = [dev(np.zeros(n)) for n in range(1, 7)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(5):
            for x in xs:
                f(x)
    assert f.cache_info().misses == 6


def test_retrace_warning_names_a_number_whose_type_changes_at_the_users_line():
    """A dynamic scalar's signature is its type; the warning is the user's, whichever of
    call, trace, compile or profile traced it."""
    @gt.graph(backend="sim")
    def f(s, x, a):
        s.memset(x, a)
    x = cuda.to_device(np.zeros(4, np.float32))
    values = [1, 2.0, np.float32(3), np.int64(4), np.float16(5), np.int8(6), np.uint16(7),
              np.uint8(8)]
    with pytest.warns(gt.RetraceWarning) as rec:
        for a in values:
            f(x, a)
        f.compile(x, np.int16(9))                            # ninth
    assert len(rec) == 1 and (rec[0].filename, rec[0].lineno) == (__file__,
                                                                   line_of(__file__, "ninth"))
    assert "the type of the number(s) a keeps changing (int, float, numpy.float32, " \
        "numpy.int64" in str(rec[0].message)
    assert "pass one type every call (float(a) or np.float32(a))" in str(rec[0].message)
    assert "argument(s)" not in str(rec[0].message)


SAVED = []   # arrays the graph copies into, reached by name: one more at every call


def test_retrace_warning_names_what_names_reached_hold_when_no_argument_changes():
    @gt.graph(backend="sim")
    def f(s, x):
        for h in SAVED:
            s.copy(h, x)
    x = dev(np.zeros(4))
    SAVED.clear()
    try:
        with pytest.warns(gt.RetraceWarning, match=r"the names it reaches hold keeps changing "
                          r"\(SAVED\[1\], .* more\): arrays reached by name") as rec:
            for _ in range(12):
                SAVED.append(gt.pinned_empty(4))
                f(x)
        assert len(rec) == 1
    finally:
        SAVED.clear()


class _Rated:
    def __init__(self, lr=0.1):
        self.lr, self.hist, self.buf = lr, [0.0], dev(np.zeros(4))

    @gt.graph(backend="sim")
    def step(self, s, x):
        fill[1, 4, s](x, self.lr)

    @gt.graph(backend="sim")
    def summed(self, s, x):
        fill[1, 4, s](x, sum(self.hist))

    @gt.graph(backend="sim")
    def into(self, s, x):
        fill[1, 4, s](self.buf, 1.0)


@pytest.mark.parametrize("how, says", [
    ("step", "the value(s) read by name keep changing (self.lr), and each is baked into the "
             "graph: pass a number that changes as an argument of the function (a dynamic "
             "scalar, rebound without tracing again) instead of reading it off self"),
    ("summed", "a list, dict or set the graph's code reads whole (self.hist) is keyed by "
               "every value it holds"),
    ("into", "the names it reaches hold keeps changing (self.buf): arrays reached by name")])
def test_retrace_warning_names_what_one_instance_of_a_method_keeps_changing(how, says):
    """A method traced anew at every call for what its self holds (self.lr changed by
    the caller, a history it reads whole, an array put there) warns as a function
    does (it never did: self's part of the key was left out of the count)."""
    m, x = _Rated(), dev(np.zeros(4))
    f = getattr(m, how)
    f.clear_cache()
    with pytest.warns(gt.RetraceWarning) as rec:
        for k in range(12):
            if how == "step":
                m.lr = 0.1 / (k + 1)
            elif how == "summed":
                m.hist.append(float(k))
            else:
                m.buf = dev(np.zeros(4))
            f(x)                                             # retraced
    said = [r for r in rec if r.category is gt.RetraceWarning]
    assert len(said) == 1 and said[0].lineno == line_of(__file__, "retraced")
    assert f"{how} was traced for 9 different signatures; " in str(said[0].message)
    assert says in str(said[0].message), str(said[0].message)


def test_many_instances_of_a_method_each_traced_once_do_not_warn_of_retracing():
    """A graph per instance is expected, what each holds (its own lr, its arrays) too."""
    _Rated.step.clear_cache()
    x = dev(np.zeros(4))
    with warnings.catch_warnings():
        warnings.simplefilter("error", gt.RetraceWarning)
        kept = [_Rated(0.1 * k) for k in range(20)]
        for m in kept + kept:
            m.step(x)
    assert _Rated.step.cache_info().misses == 20


class _Hyper:
    pass


HYPER = _Hyper()
HYPER.hp = {"lr": 0.1}


@gt.graph(backend="sim")
def _hyper_step(s, x):
    fill[1, 4, s](x, HYPER.hp["lr"])


def test_retrace_warning_for_a_number_in_a_dict_an_object_holds_gives_the_numbers_advice():
    """Only a number changes (OBJ.hp["lr"]), as for CFG.lr or D["lr"]: not the advice
    for arrays reached by name."""
    x = dev(np.zeros(4))
    with pytest.warns(gt.RetraceWarning) as rec:
        for k in range(12):
            HYPER.hp["lr"] = 0.1 / (k + 1)
            _hyper_step(x)
    text = str(rec[0].message)
    assert "the value(s) read by name keep changing (HYPER.hp['lr'])" in text, text
    assert "pass a number that changes as an argument" in text and "arrays" not in text


DTYPE = np.float64


@gt.graph(backend="sim")
def _dtype_step(s, x):
    fill[1, 4, s](x, np.dtype(DTYPE).itemsize * 1.0)


def test_retrace_warning_for_a_dtype_read_by_name_gives_the_values_advice():
    """A dtype changed cell after cell: the advice was the one for arrays reached by
    name, which the program has none of."""
    global DTYPE
    x = dev(np.zeros(4))
    try:
        with pytest.warns(gt.RetraceWarning) as rec:
            for k in range(12):
                DTYPE = (np.float64, np.float32, np.int16, np.int8)[k % 4] if k < 4 else \
                    np.dtype(f"V{k}")
                _dtype_step(x)
    finally:
        DTYPE = np.float64
    text = str(rec[0].message)
    assert "the value(s) read by name keep changing (DTYPE)" in text and "arrays" not in text


def test_cache_is_bounded_and_can_be_cleared():
    @gt.graph(backend="sim", maxsize=3)
    def f(s, x):
        s.memset(x, 0)
    for n in range(1, 6):
        f(dev(np.zeros(n)))
    assert f.cache_info().currsize == 3 and f.cache_info().maxsize == 3
    f.clear_cache()
    assert f.cache_info().currsize == 0


def test_compiled_graph_keeps_its_buffers_alive_until_the_cache_is_cleared():
    @gt.graph(backend="sim")
    def f(s, h):
        s.host(lambda a: None, h)
    h = gt.pinned_empty(16)
    ref = weakref.ref(h)
    f(h)
    del h
    gc.collect()
    assert ref() is not None
    f.clear_cache()
    gc.collect()
    assert ref() is None


def test_same_arguments_again_skip_signature_and_rebinding():
    f = make()
    x, y = dev(np.arange(8)), dev(np.zeros(8))
    g = f.compile(1.0, x, y).compiled
    f(1.0, x, y)                   # compile() hands out the graph: this call checks again
    bind = g.bind
    g.bind = lambda *a: pytest.fail("rebound on a repeated call")
    f(1.0, x, y)
    g.bind = bind
    assert y.copy_to_host()[4:].tolist() == [8.0, 10.0, 12.0, 14.0]


def test_traces_in_different_threads_do_not_mix():
    graphs = {}

    def work(name, n):
        @gt.graph(static=("n",))
        def f(s, x, n):
            for _ in range(n):
                s.memset(x, 0)
        for _ in range(20):
            graphs[name] = f.trace(A(8), n)
    ts = [threading.Thread(target=work, args=(i, i + 1)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert {k: len(g.nodes) for k, g in graphs.items()} == {0: 1, 1: 2, 2: 3, 3: 4}


def test_backend_can_be_chosen_per_call():
    @gt.graph
    def f(s, x):
        s.memset(x, 7)
    x = cuda.to_device(np.zeros(3, np.int32))
    f(x, backend="sim")
    assert x.copy_to_host().tolist() == [7, 7, 7]
    with pytest.raises(ValueError, match="backend must be"):
        f(x, backend="cpu")


def test_nested_arguments_go_through_the_call_path():
    @gt.graph(backend="sim")
    def f(s, bufs, cfg):
        for b in bufs:
            s.memset(b, cfg["v"])
        s.memset(cfg["out"], 1)
    xs = [cuda.to_device(np.zeros(2, np.int32)) for _ in range(2)]
    out = cuda.to_device(np.zeros(2, np.int32))
    f(xs, {"v": 3, "out": out})
    f(xs[::-1], {"v": 4, "out": out})
    assert f.cache_info().misses == 1
    assert [x.copy_to_host().tolist() for x in xs] == [[4, 4], [4, 4]]
    assert f.signature([A(2)], {"v": 1}) != f.signature((A(2),), {"v": 1})


def test_repeated_list_argument_takes_the_fast_path_until_it_changes():
    @gt.graph(backend="sim")
    def f(s, xs, v):
        for x in xs:
            s.memset(x, v)
    xs = [cuda.to_device(np.zeros(2, np.int32)) for _ in range(2)]
    g = f.compile(xs, 1).compiled
    f(xs, 1)
    bind = g.bind
    g.bind = lambda *a: pytest.fail("rebound on a repeated call")
    f(xs, 1)                       # the same list holding the same arrays
    g.bind = bind
    other = cuda.to_device(np.zeros(2, np.int32))
    xs[1] = other                  # same list object, new contents: must rebind
    f(xs, 2)
    assert other.copy_to_host().tolist() == [2, 2]


def test_calling_a_graph_function_with_the_proxy_stream_inlines_it():
    @gt.graph
    def inner(s, x, v):
        s.memset(x, v)                                  # inner-op

    @gt.graph
    def outer(s, x, y, v):
        inner(s, x, v)
        inner(s, y, v)
        s.copy(y, x)
    x, y = cuda.to_device(np.zeros(4, np.int32)), cuda.to_device(np.zeros(4, np.int32))
    g = outer.trace(x, y, 7)
    assert [n.kind for n in g.nodes] == ["memset", "memset", "memcpy"]
    assert sorted(g.edges()) == [(0, 2), (1, 2)]       # the two memsets are independent
    assert g.nodes[0].source[1] == line_of(__file__, "inner-op")
    assert str(g).splitlines()[1].split("  ")[1] == "%0 = memset x = v"
    outer(x, y, 7, backend="sim")
    assert y.copy_to_host().tolist() == [7, 7, 7, 7]


def test_static_parameter_of_an_inlined_function_needs_a_static_value():
    @gt.graph(static=("n",))
    def inner(s, x, n):
        for _ in range(n):
            s.memset(x, 0)

    @gt.graph
    def outer(s, x, n):
        inner(s, x, n)
    with pytest.raises(gt.DynamicScalarError, match="'n' is a dynamic scalar"):
        outer.trace(A(4), 2)
    assert len(gt.graph(outer.fn, static=("n",)).trace(A(4), 3).nodes) == 3


def test_disjoint_arguments_inside_each_others_range_move_apart():
    @gt.graph(backend="sim")
    def f(s, x, y):
        fill[1, 8, s](x, 1.0)
        fill[1, 8, s](y, 2.0)
    u = cuda.to_device(np.zeros(9))
    f(u[0::2], u[1:8:2])                 # even and odd elements of one array
    b, c = cuda.to_device(np.zeros(9)), cuda.to_device(np.zeros(9))
    f(b[0::2], c[1:8:2])                 # the same signature, now in two arrays
    assert f.cache_info().hits == 1
    assert b.copy_to_host().tolist() == [1, 0, 1, 0, 1, 0, 1, 0, 1]
    assert c.copy_to_host().tolist() == [0, 2, 0, 2, 0, 2, 0, 2, 0]


GLOBAL = cuda.to_device(np.zeros(8))


def test_global_arrays_are_in_the_key_and_order_against_arguments():
    @cuda.jit
    def copy(src, dst):
        i = cuda.grid(1)
        if i < src.size:
            dst[i] = src[i]

    @gt.graph(backend="sim")
    def f(s, x, out):
        fill[1, 8, s](GLOBAL, 5.0)
        copy[1, 8, s](x, out)
    a = cuda.to_device(np.zeros(8))
    assert f.signature(a, a) != f.signature(GLOBAL, a)       # x aliasing the global
    assert f.trace(GLOBAL, a).edges() == [(0, 1)]
    out = cuda.to_device(np.zeros(8))
    f(a, out)
    f(GLOBAL, out)
    assert out.copy_to_host().tolist() == [5.0] * 8


@cuda.jit
def copy_to(src, dst):
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[i]


TABLE = dev(np.arange(8))


def test_a_global_rebound_between_two_identical_calls_is_seen(monkeypatch):
    @gt.graph(backend="sim")
    def f(s, out):
        copy_to[1, 8, s](TABLE, out)
    out = dev(np.zeros(8))
    f(out)
    monkeypatch.setitem(globals(), "TABLE", dev(np.arange(8) * 10))
    f(out)                               # the very arguments of the last call
    assert out.copy_to_host().tolist() == [10.0 * i for i in range(8)]
    assert f.cache_info().misses == 2


STEP_NOW = 1.0   # a number a host callback of the graph changes


def test_what_a_host_callback_changes_is_seen_by_the_next_call():
    """A host callback of the graph halves a watched global number, swaps the
    array a global name holds, and halves a number in a list argument: the next
    call, with the very same arguments, sees each change (what the call is
    compared with is read before the launch, not after the callback ran)."""
    first, second = dev(np.zeros(4)), dev(np.zeros(4))
    box = {"buf": first}

    def change():
        global STEP_NOW
        STEP_NOW /= 2
        coefs[0] /= 2
        box["buf"] = second if box["buf"] is first else first
        globals()["SWAPPED"] = box["buf"]

    globals()["SWAPPED"] = first

    @gt.graph(backend="sim")
    def f(s, x, y, coefs):
        axpy[1, 64, s](STEP_NOW, x, y)
        axpy[1, 64, s](coefs[0], x, SWAPPED)
        s.host(change)
    x, y, coefs = dev(np.ones(4)), dev(np.zeros(4)), [1.0]
    want_y, want = 0.0, {id(first): 0.0, id(second): 0.0}
    for _ in range(4):
        want_y += STEP_NOW
        want[id(globals()["SWAPPED"])] += coefs[0]
        f(x, y, coefs)
        assert y.copy_to_host()[0] == want_y
        assert (first.copy_to_host()[0], second.copy_to_host()[0]) == \
            (want[id(first)], want[id(second)])


def test_a_closure_array_rebound_between_two_identical_calls_is_seen():
    table = dev(np.arange(8))

    @gt.graph(backend="sim")
    def f(s, out):
        copy_to[1, 8, s](table, out)
    out = dev(np.zeros(8))
    f(out)
    table = dev(np.arange(8) + 100)      # noqa: F841  (read by f through its cell)
    f(out)
    assert out.copy_to_host().tolist() == [100.0 + i for i in range(8)]


def test_the_offset_between_overlapping_arguments_is_part_of_the_key():
    """The same two arrays overlap at either offset, but the sub-views the
    function uses conflict at one offset only."""
    K = any_kernel()

    @gt.graph(backend="sim")
    def f(s, a, b):
        s.launch(K, 1, 1, gt.Out(a[0:1]))
        s.launch(K, 1, 1, gt.In(b[0:1]))
    base = A(16)
    apart, together = (base[0:8], base[2:10]), (base[0:8], base[0:8])
    assert f.signature(*apart) != f.signature(*together)
    for first, second, edges in ((apart, together, [(0, 1)]), (together, apart, [])):
        f.clear_cache()
        f.compile(*first)
        assert f.compile(*second).ir.edges() == edges


def test_host_callback_arguments_nested_in_containers_take_part():
    seen = []

    @gt.graph(backend="sim")
    def f(s, h, d, v):
        s.copy(h[0], d)
        s.host(lambda pair, cfg: seen.append((pair[0].sum(), cfg["v"])), [h[0], h[1]], {"v": v})
    h = [gt.pinned_empty(4, np.float32), gt.pinned_empty(4, np.float32)]
    d = cuda.to_device(np.ones(4, np.float32))
    g = f.trace(h, d, 2.0)
    assert g.edges() == [(0, 1)]
    assert "<lambda>([h[0], h[1]], {'v': v})  inout(h[0], h[1], host callbacks)  after(%0)" \
        in str(g)
    f(h, d, 2.0)
    f(h, d, 3.0)
    assert seen == [(4.0, 2.0), (4.0, 3.0)]


def test_tracing_pauses_the_garbage_collector_and_restores_it():
    @gt.graph
    def f(s, x):
        assert not gc.isenabled()
        s.memset(x, 0)

    @gt.graph
    def broken(s, x):
        raise RuntimeError("user code failed")
    assert gc.isenabled()
    f.trace(A(4))
    with pytest.raises(RuntimeError):
        broken.trace(A(4))
    assert gc.isenabled()
    gc.disable()
    try:
        f.trace(A(4))
        assert not gc.isenabled()      # left as the user had it
    finally:
        gc.enable()


# --- the repeated-call shortcut: the very arguments of the last call ----------

_A, _B = np.zeros(2), np.zeros(2)
_LEAVES = [_A, _B, 1, 2, 1.0, True, np.float32(1), "a", None]
_trees = st.recursive(
    st.sampled_from(_LEAVES),
    lambda inner: st.lists(inner, max_size=3) | st.lists(inner, max_size=3).map(tuple)
    | st.dictionaries(st.sampled_from("abc"), inner, max_size=3),
    max_leaves=8)


def _canon(v):
    """What the shortcut must compare: container kinds, keys in order, and leaves by
    identity (or, for numbers and strings, by type and value)."""
    if isinstance(v, dict):
        return ("dict", tuple((k, _canon(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return (type(v), tuple(_canon(x) for x in v))
    return ("value", type(v), v) if isinstance(v, (int, float, str, np.generic)) else id(v)


def _rebuilt(v, flip):
    """The same tree in new containers (dicts in reverse order when ``flip``)."""
    if isinstance(v, dict):
        items = list(v.items())[::-1] if flip else list(v.items())
        return {k: _rebuilt(x, flip) for k, x in items}
    if isinstance(v, (list, tuple)):
        return type(v)(_rebuilt(x, flip) for x in v)
    return v


def _first_list(v):
    if isinstance(v, list):
        return v
    for x in (v.values() if isinstance(v, dict) else v if isinstance(v, tuple) else ()):
        found = _first_list(x)
        if found is not None:
            return found
    return None


@settings(max_examples=400, deadline=None)
@given(st.lists(_trees, max_size=3), st.dictionaries(st.sampled_from("xy"), _trees, max_size=2),
       st.sampled_from(["same objects", "changed in place", "rebuilt", "rebuilt flipped", "new"]),
       st.lists(_trees, max_size=3), st.dictionaries(st.sampled_from("xy"), _trees, max_size=2))
@example([[1.0]], {}, "new", [[1]], {})                  # an equal number of another type
@example([1], {}, "new", [True], {})
@example([[1]], {}, "new", [[2]], {})                      # another value
@example([[float("1.5")]], {}, "new", [[float("1.5")]], {})  # an equal value, another object
@example([float("1.5")], {}, "new", [float("1.5")], {})
def test_the_shortcut_takes_exactly_the_calls_with_the_last_calls_leaves(
        args, kwargs, how, new_args, new_kwargs):
    """A call is the last one again (no signature, no rebinding) only when every
    container holds the very same arrays, in the same places, as at that call."""
    from graphtrace.arguments import same_call as _same_call, snapshot as _snapshot
    args = tuple(args)
    snap = (tuple(_snapshot(a) for a in args), _snapshot(kwargs) if kwargs else None)
    before = _canon((args, kwargs))
    if how == "same objects":
        new_args, new_kwargs = args, kwargs
    elif how == "changed in place":
        new_args, new_kwargs = args, kwargs
        target = _first_list((args, kwargs))
        if target is not None:
            target.append(_A)
    elif how.startswith("rebuilt"):
        new_args, new_kwargs = _rebuilt((args, kwargs), how.endswith("flipped"))
    new_args = tuple(new_args)
    assert _same_call(new_args, new_kwargs, snap) == (_canon((new_args, new_kwargs)) == before)


@cuda.jit
def _put(x, v, off):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = v + off


@cuda.jit
def _put_tenfold(x, v, off):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = 10 * (v + off)


_OFFSET = 0
_PUT = _put


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["same", "item", "new list", "tuple", "number", "global",
                                 "kernel", "stream"]), min_size=1, max_size=7))
def test_repeated_calls_see_every_change_since_the_last(steps):
    """A call that repeats the last one launches at once; any change since (an
    item of a list argument, the list itself, a number, a global number or
    kernel the function reaches by name) is seen, whatever came before."""
    global _OFFSET, _PUT

    @gt.graph(backend="sim")
    def f(s, xs, v):
        for x in xs:
            _PUT[1, 4, s](x, v, _OFFSET)

    _OFFSET, _PUT = 0, _put
    xs, v, kw = [cuda.to_device(np.zeros(4)) for _ in range(2)], 1, {}
    for step in ["same"] + steps:
        if step == "item":
            xs = list(xs) if type(xs) is tuple else xs
            xs[1] = cuda.to_device(np.zeros(4))
        elif step == "new list":
            xs = list(xs)
        elif step == "tuple":
            xs = tuple(xs)
        elif step == "number":
            v += 1
        elif step == "global":
            _OFFSET += 100
        elif step == "kernel":
            _PUT = _put_tenfold if _PUT is _put else _put
        elif step == "stream":
            kw = {} if kw else {"stream": None}
        for x in xs:
            x.copy_to_device(np.zeros(4))
        f(xs, v, **kw)
        want = (v + _OFFSET) * (10 if _PUT is _put_tenfold else 1)
        assert [x.copy_to_host().tolist() for x in xs] == [[want] * 4] * 2, step
    _OFFSET, _PUT = 0, _put


@cuda.jit
def _from_base(x, base):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = base[i] + 1


_BASE = cuda.to_device(np.zeros(4))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["same", "rebound", "filled", "list", "item"]), min_size=1,
                max_size=6))
def test_repeated_calls_see_a_global_array_rebound(steps):
    """A function reaching an array by a global name: a call repeating the last one
    launches at once, and one after the name was given another array (or a list of
    arrays, or another array in that list) is seen. Every call leaves the shortcut
    set: a list of arrays is watched by what its leaves depend on."""
    global _BASE

    @gt.graph(backend="sim")
    def f(s, x):
        for b in (_BASE if isinstance(_BASE, list) else [_BASE]):
            _from_base[1, 4, s](x, b)

    _BASE = cuda.to_device(np.zeros(4))
    x, value = cuda.to_device(np.zeros(4)), 0.0
    for step in ["same"] + steps:
        if step == "rebound":
            value += 1
            _BASE = cuda.to_device(np.full(4, value))
        elif step == "filled":   # the same array, new contents: read when the graph runs
            value += 1
            (_BASE[0] if isinstance(_BASE, list) else _BASE).copy_to_device(np.full(4, value))
        elif step == "list":
            value += 1
            _BASE = [cuda.to_device(np.full(4, value))]
        elif step == "item" and isinstance(_BASE, list):   # the same list, another array
            value += 1
            _BASE[0] = cuda.to_device(np.full(4, value))
        f(x)
        assert x.copy_to_host().tolist() == [value + 1] * 4, step
        assert f._fast is not None and len(f._fast[9]) == isinstance(_BASE, list), step
    _BASE = cuda.to_device(np.zeros(4))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["same", "item", "number", "key", "nested item", "new dict",
                                 "named"]), min_size=1, max_size=7))
def test_repeated_calls_with_a_dict_argument_see_every_change_in_it(steps):
    """A dict argument holding arrays, a number and a list of arrays, changed in
    place between calls: each result is right, and a call that repeats the last
    one (the same dict, holding the same objects) takes the shortcut."""
    from collections import namedtuple
    Pair = namedtuple("Pair", "a b")

    @gt.graph(backend="sim")
    def f(s, p):
        _put[1, 4, s](p["x"], p["v"], 0)
        for y in p["ys"]:
            _put[1, 4, s](y, p["v"], 1)

    p = {"x": cuda.to_device(np.zeros(4)), "v": 1.0,
         "ys": [cuda.to_device(np.zeros(4)), cuda.to_device(np.zeros(4))]}
    for step in ["same"] + steps:
        if step == "item":
            p["x"] = cuda.to_device(np.zeros(4))
        elif step == "number":
            p["v"] += 1
        elif step == "key":   # the same items under other keys: another graph
            p = dict(reversed(list(p.items())))
        elif step == "nested item":
            p["ys"] = list(p["ys"]) if type(p["ys"]) is Pair else p["ys"]
            p["ys"][0] = cuda.to_device(np.zeros(4))
        elif step == "new dict":
            p = dict(p)
        elif step == "named":   # a namedtuple inside: no shortcut, the full check
            p["ys"] = Pair(*p["ys"]) if type(p["ys"]) is list else list(p["ys"])
        f(p)
        got = [p["x"].copy_to_host().tolist()] + [y.copy_to_host().tolist() for y in p["ys"]]
        assert got == [[p["v"]] * 4] + [[p["v"] + 1] * 4] * 2, step
        assert (f._fast is not None) == (type(p["ys"]) is list), step
        if f._fast is not None:
            misses = f.cache_info().misses
            for y in [p["x"]] + list(p["ys"]):
                y.copy_to_device(np.zeros(4))
            f(p)   # the shortcut: launched at once, nothing traced
            assert p["x"].copy_to_host().tolist() == [p["v"]] * 4, step
            assert f.cache_info().misses == misses


@cuda.jit
def _sign_of(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = math.copysign(1.0, a)


SIGNED = -0.0


def _sign_graphs():
    """A graph per way a number reaches the kernel (each reaching only its own)."""
    @gt.graph(backend="sim")
    def dynamic(s, a, out):
        _sign_of[1, 4, s](a, out)

    @gt.graph(backend="sim", static=("a",))
    def static(s, a, out):
        _sign_of[1, 4, s](a, out)

    @gt.graph(backend="sim")
    def held(s, a, out):
        _sign_of[1, 4, s](SIGNED, out)

    @gt.graph(backend="sim")
    def in_tuple(s, a, out):
        _sign_of[1, 4, s](a[0], out)
    return {"dynamic": dynamic, "static": static, "global": held, "in a tuple": in_tuple}


@pytest.mark.parametrize("how", ["dynamic", "static", "global", "in a tuple"])
def test_minus_zero_is_another_number_than_zero(how):
    """Python finds -0.0 == 0.0, a kernel does not (copysign, 1 / x): a call that
    brings the other zero rebinds (or traces) anew instead of keeping the last one."""
    global SIGNED
    f = _sign_graphs()[how]
    out = cuda.to_device(np.zeros(4))
    for z in (0.0, -0.0, -0.0, 0.0, np.float64(-0.0), 0.0):
        SIGNED = z
        f((z,) if how == "in a tuple" else z, out)
        assert out.copy_to_host().tolist() == [math.copysign(1.0, z)] * 4, (how, z)


@cuda.jit
def _axpy(y, x, a):
    i = cuda.grid(1)
    if i < y.size:
        y[i] += a * x[i]


class _SGD:
    def __init__(self, n, lr, config=("sgd", 1)):
        self.w, self.lr, self.config = cuda.to_device(np.zeros(n)), lr, config

    @gt.graph(backend="sim")
    def step(self, s, g):
        _axpy[1, 32, s](self.w, g, -self.lr * self.config[1])


def test_a_number_held_by_self_is_watched_by_value_as_a_global_is():
    """``self.lr`` changed between calls (a schedule): the next call traces anew
    with the new value, as a number held by a global name does."""
    opt, g = _SGD(32, 1.0), cuda.to_device(np.ones(32))
    opt.step(g)
    opt.lr = 0.5
    opt.step(g)
    opt.config = ("sgd", 2)   # a tuple of values: watched too
    opt.step(g)
    opt.step(g)               # nothing changed: the graph is replayed
    assert opt.w.copy_to_host().tolist() == [-1.0 - 0.5 - 1.0 - 1.0] * 32
    assert _SGD.step.cache_info().misses == 3
    for k in range(3):   # an attribute the method does not read: no new trace
        opt.calls = k
        opt.step(g)
    assert _SGD.step.cache_info().misses == 3


@cuda.jit
def _imag_sign(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = math.copysign(1.0, a.imag)


def test_a_complex_number_with_a_zero_part_of_the_other_sign_is_another_number():
    @gt.graph(backend="sim")
    def f(s, a, out):
        _imag_sign[1, 4, s](a, out)
    out = cuda.to_device(np.zeros(4))
    for z in (complex(1, 0.0), complex(1, -0.0), complex(1, 0.0)):
        f(z, out)
        assert out.copy_to_host().tolist() == [math.copysign(1.0, z.imag)] * 4


class _Schedule:
    __slots__ = ("w", "_lr", "k")

    def __init__(self):
        self.w, self._lr, self.k = cuda.to_device(np.zeros(4)), 1.0, 1.0

    @property
    def lr(self):
        return self._lr

    def rate(self):
        return self.k * 2

    @gt.graph(backend="sim")
    def step(self, s, g):
        _axpy[1, 32, s](self.w, g, -self.lr * self.rate())


def test_self_values_read_through_a_property_or_a_method_or_in_slots_are_watched():
    o, g = _Schedule(), cuda.to_device(np.ones(4))
    o.step(g)
    o._lr = 0.5
    o.step(g)
    o.k = 2.0
    o.step(g)
    assert o.w.copy_to_host().tolist() == [-2.0 - 1.0 - 2.0] * 4


@cuda.jit
def _fill(y, a):
    i = cuda.grid(1)
    if i < y.size:
        y[i] = a


@cuda.jit
def _fill_product(y, a, b):
    i = cuda.grid(1)
    if i < y.size:
        y[i] = a * b


DEFAULT_OUT = dev(np.zeros(4))
COEFS = [1.0]


@pytest.mark.parametrize("how", ["keyword then default", "array keyword then default",
                                 "keyword then stream", "list default changed in place"])
def test_a_call_leaving_a_keyword_to_its_default_is_not_taken_for_the_last_call(how):
    """The shortcut compared positional arguments only: ``f(y, a=5.0)`` then ``f(y)``
    ran with 5.0; a default changed in place kept its first value."""
    @gt.graph(backend="sim")
    def f(s, y, a=1.0, out=DEFAULT_OUT, coefs=COEFS):
        _fill_product[1, 32, s](y, a, coefs[0])
        _fill[1, 32, s](out, a)
    y, other = dev(np.zeros(4)), dev(np.zeros(4))
    DEFAULT_OUT.copy_to_device(np.zeros(4))
    COEFS[0] = 1.0
    if how == "keyword then default":
        f(y, a=5.0)
        f(y)
        assert y.copy_to_host().tolist() == [1.0] * 4
    elif how == "array keyword then default":
        f(y, out=other, a=3.0)
        f(y)
        assert DEFAULT_OUT.copy_to_host().tolist() == [1.0] * 4
        assert other.copy_to_host().tolist() == [3.0] * 4
    elif how == "keyword then stream":
        f(y, a=7.0)
        f(y, stream=cuda.stream())
        assert y.copy_to_host().tolist() == [1.0] * 4
    else:
        f(y)
        COEFS[0] = 2.0
        f(y)
        assert y.copy_to_host().tolist() == [2.0] * 4


def test_maxsize_is_a_positive_int_or_none():
    @gt.graph(backend="sim", maxsize=None, static="a")   # no bound, as functools has it
    def f(s, y, a):
        _fill[1, 32, s](y, a)
    y = dev(np.zeros(4))
    for n in range(80):
        f(y, float(n % 40))
    assert f.cache_info().currsize == 40 and f.cache_info().misses == 40
    for bad in (0, "3", 2.5, True):
        with pytest.raises(ValueError, match="maxsize must be a positive int"):
            gt.graph(lambda s: None, maxsize=bad)


class _Nested:
    lr = 2.0   # a class's value, read through self

    def __init__(self):
        self.w = dev(np.ones(4))

    @gt.graph(backend="sim")
    def inner(self, s, y):
        _fill_product[1, 32, s](y, self.lr, self.k)

    @gt.graph(backend="sim")
    def outer(self, s, y, how):
        if how == "child":
            s.child(self.inner, y)
        else:
            self.inner(s, y)

    k = 1.0


@pytest.mark.parametrize("how", ["inline", "child"])
def test_self_values_of_a_decorated_method_another_one_calls_and_of_the_class_are_watched(
        how):
    """``outer`` calling ``inner`` (inlined or as a child) ran with the first
    ``self.lr`` inner read; a value of the class read through self (``Model.lr``, or
    after ``del m.lr``) was fixed at the first trace."""
    m, y = _Nested(), dev(np.zeros(4))
    m.outer(y, how)
    assert y.copy_to_host().tolist() == [2.0] * 4
    m.lr = 3.0                # the instance's own
    m.outer(y, how)
    assert y.copy_to_host().tolist() == [3.0] * 4
    del m.lr
    _Nested.k = 5.0           # the class's, read through self
    m.outer(y, how)
    assert y.copy_to_host().tolist() == [10.0] * 4
    _Nested.k = 1.0


@cuda.jit
def _twice(x, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] = 2 * x[i]


@cuda.jit
def _thrice(x, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] = 3 * x[i]


DECLARED = gt.kernel(_twice, "in, out")


def _launch_with(s, k, x, y):
    k[1, 32, s](x, y)


LAUNCHER = functools.partial(_launch_with, k=_twice)


class _WithKernel:
    def __init__(self):
        self.k = _twice

    @gt.graph(backend="sim")
    def step(self, s, x, y):
        self.k[1, 32, s](x, y)


@pytest.mark.parametrize("how", ["gt.kernel", "partial", "self.k"])
def test_a_kernel_object_replaced_by_name_or_attribute_traces_again(how, monkeypatch):
    """A global holding ``gt.kernel(...)`` or a ``functools.partial``, and a method's
    ``self.k``, replaced by another kernel: the cached graph kept the first one."""
    @gt.graph(backend="sim")
    def f(s, x, y):
        if how == "gt.kernel":
            s.launch(DECLARED, 1, 32, x, y)
        else:
            LAUNCHER(s, x=x, y=y)
    x, y = dev(np.ones(4)), dev(np.zeros(4))
    m = _WithKernel()
    run = (lambda: m.step(x, y)) if how == "self.k" else (lambda: f(x, y))
    run()
    assert y.copy_to_host().tolist() == [2.0] * 4
    if how == "gt.kernel":
        monkeypatch.setitem(globals(), "DECLARED", gt.kernel(_thrice, "in, out"))
    elif how == "partial":
        monkeypatch.setitem(globals(), "LAUNCHER", functools.partial(_launch_with, k=_thrice))
    else:
        m.k = _thrice
    run()
    assert y.copy_to_host().tolist() == [3.0] * 4


@cuda.jit
def _add_into(x, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] += x[i]


@pytest.mark.parametrize("first", ["undefined", "a number"])
def test_a_global_that_comes_to_hold_an_array_after_the_first_trace_is_used(first, monkeypatch):
    """A name undefined at the first trace (its branch not taken) and later an array
    was refused as no array the function reaches; one holding a number first crashed
    the cache lookup (an array in the key)."""
    monkeypatch.delitem(globals(), "LATE_BIAS", raising=False)
    monkeypatch.setitem(globals(), "USE_LATE", False)
    if first == "a number":
        monkeypatch.setitem(globals(), "LATE_BIAS", 0)

    @gt.graph(backend="sim")
    def f(s, y):
        if USE_LATE:
            _add_into[1, 32, s](LATE_BIAS, y)   # noqa: F821
    y = dev(np.zeros(4))
    f(y)
    monkeypatch.setitem(globals(), "LATE_BIAS", dev(np.ones(4)))
    monkeypatch.setitem(globals(), "USE_LATE", True)
    f(y)
    assert y.copy_to_host().tolist() == [1.0] * 4
    monkeypatch.setitem(globals(), "LATE_BIAS", dev(np.full(4, 10.0)))
    f(y)
    assert y.copy_to_host().tolist() == [11.0] * 4


def test_an_intent_wrapper_passed_to_the_graph_function_says_where_it_belongs():
    @gt.graph(backend="sim")
    def f(s, x):
        _fill[1, 32, s](x, 1.0)
    with pytest.raises(gt.ArgumentError, match="wrapped in gt.In: that wraps an argument of "
                       "one op"):
        f(gt.In(dev(np.zeros(4))))


def test_a_kernel_declared_again_alike_finds_its_graph():
    """A notebook cell run again makes an equal gt.kernel(...): no new trace."""
    @gt.graph(backend="sim")
    def f(s, x, y):
        s.launch(DECLARED, 1, 32, x, y)
    x, y = dev(np.ones(4)), dev(np.zeros(4))
    f(x, y)
    for _ in range(3):
        globals()["DECLARED"] = gt.kernel(_twice, "in, out")
        f(x, y)
    assert f.cache_info().misses == 1 and y.copy_to_host().tolist() == [2.0] * 4


KMOD = types.ModuleType("kmod")   # a module of kernels, as importlib.reload renews them
KMOD.k = _twice


class _ClassKernel:
    k = _twice   # a class's kernel, read through self

    @gt.graph(backend="sim")
    def step(self, s, x, y):
        self.k[1, 32, s](x, y)


@pytest.mark.parametrize("how", ["module attribute", "class attribute through self"])
def test_a_kernel_a_module_or_class_holds_replaced_there_traces_again(how, monkeypatch):
    """``K.step[...]`` after ``importlib.reload(K)`` (or ``K.step = other``), and a
    class's kernel read through self replaced on the class, kept the old kernel."""
    @gt.graph(backend="sim")
    def f(s, x, y):
        KMOD.k[1, 32, s](x, y)
    x, y = dev(np.ones(4)), dev(np.zeros(4))
    m = _ClassKernel()
    run = (lambda: f(x, y)) if how == "module attribute" else (lambda: m.step(x, y))
    run()
    assert y.copy_to_host().tolist() == [2.0] * 4
    monkeypatch.setattr(KMOD if how == "module attribute" else _ClassKernel, "k", _thrice)
    run()
    assert y.copy_to_host().tolist() == [3.0] * 4


def test_only_defaults_that_may_change_in_place_turn_the_shortcut_off():
    """A list default may change in place between calls; a number, an array or a
    tuple of them stays what the last call saw, so the shortcut stays on."""
    def fn(s, y, a=1.0, out=DEFAULT_OUT, shape=(2, 2)):
        _fill[1, 32, s](y, a)

    def with_list(s, y, coefs=COEFS):
        _fill[1, 32, s](y, coefs[0])
    assert not gt.graph(fn)._mutable_defaults
    assert gt.graph(with_list)._mutable_defaults
    f = gt.graph(backend="sim")(fn)
    y = dev(np.zeros(4))
    f(y)
    assert f._fast is not None


def test_two_handles_of_one_signature_each_launch_their_own_arguments():
    """Double buffering with two compile() handles: both were one object over the
    function's one graph, so the first replayed the second's arrays and number."""
    f = make()
    x1, y1, x2, y2 = dev(np.arange(8)), dev(np.ones(8)), dev(np.arange(8) * 2), dev(np.ones(8))
    even, odd = f.compile(2.0, x1, y1), f.compile(3.0, x2, y2)
    assert even is not odd and even.compiled is odd.compiled and even.node_count == 2
    even.launch()
    assert y1.copy_to_host()[4:].tolist() == [9.0, 11.0, 13.0, 15.0]
    assert y2.copy_to_host().tolist() == [1.0] * 8
    odd.launch()
    f(2.0, x2, y2)                 # a call rebinds the graph to its arguments
    even.launch()
    assert y1.copy_to_host()[4:].tolist() == [17.0, 21.0, 25.0, 29.0]
    assert y2.copy_to_host()[4:].tolist() == [41.0, 51.0, 61.0, 71.0]
    f(2.0, x2, y2)                 # the very arguments of the last call: checked again
    assert y2.copy_to_host()[4:].tolist() == [57.0, 71.0, 85.0, 99.0]
    assert y1.copy_to_host()[4:].tolist() == [17.0, 21.0, 25.0, 29.0]


def test_a_graph_rebound_by_hand_is_checked_again_at_the_next_call():
    """Any rebind (a handle's, or the compiled graph's own) makes the function's
    next call check its arguments: the very arguments of its last call took the
    short way and launched the other arrays."""
    f = make()
    x1, y1, x2, y2 = dev(np.arange(8)), dev(np.ones(8)), dev(np.arange(8) * 2), dev(np.ones(8))
    h = f.compile(2.0, x1, y1)
    f(2.0, x1, y1)
    f(2.0, x1, y1)                 # the short way
    h.compiled.rebind([x2, y2], [as_buffer(a).ptr for a in (x2, y2)], h._svals)
    f(2.0, x1, y1)
    assert y1.copy_to_host()[4:].tolist() == [25.0, 31.0, 37.0, 43.0]
    assert y2.copy_to_host().tolist() == [1.0] * 8
    h.launch()                     # its own arguments again
    assert y1.copy_to_host()[4:].tolist() == [33.0, 41.0, 49.0, 57.0]
    assert copy.copy(h).compiled is h.compiled


def test_a_handle_of_a_graph_dropped_after_a_failed_rebind_refuses_to_launch():
    f = make()
    x, y = dev(np.arange(8)), dev(np.ones(8))
    first, second = f.compile(2.0, x, y), f.compile(3.0, x, y)
    second.compiled.broken = True   # as a failed rebind that could not restore leaves it
    for h in (second, first):       # bound to it now, and bound to other arguments
        with pytest.raises(gt.GraphtraceError, match="compile it again"):
            h.launch()


def test_a_later_calls_memset_value_the_array_cannot_hold_is_refused_at_the_call():
    """The first call's value is checked while tracing; a later one rebinds it:
    one with an imaginary part, or a numpy integer that would wrap, is refused
    there too, with the array left as it was."""
    @gt.graph(backend="sim")
    def fill(s, x, v):
        s.memset(x, v)

    x = cuda.to_device(np.zeros(4, np.float32))
    fill(x, 1 + 0j)
    with pytest.raises(gt.ArgumentError, match=r"memset value \(2\+3j\) is complex"):
        fill(x, 2 + 3j)
    assert x.copy_to_host().tolist() == [1.0] * 4
    b = cuda.to_device(np.zeros(4, np.uint8))
    fill(b, np.int64(7))
    with pytest.raises(gt.ArgumentError, match="does not fit uint8"):
        fill(b, np.int64(300))
    assert b.copy_to_host().tolist() == [7] * 4
    fill(b, 5.0)                                   # a whole number: it fits
    with pytest.raises(gt.ArgumentError, match="would be cut to fit uint8"):
        fill(b, 2.5)                               # was filled with 2
    assert b.copy_to_host().tolist() == [5] * 4
    for v in (np.float64(-3.0), np.float16(256.0)):   # wrapped: 253 and 0
        with pytest.raises(gt.ArgumentError, match=f"memset value {float(v)} does not fit"):
            fill(b, v)
    assert b.copy_to_host().tolist() == [5] * 4


def test_a_numpy_float_memset_value_the_array_cannot_hold_is_refused_at_its_line():
    """np.float64(-3.0) into uint16 filled 65533 (the Python float -3.0 is refused)."""
    @gt.graph(backend="sim")
    def fill(s, x, v):
        s.memset(x, v)   # numpy-float-memset

    x = cuda.to_device(np.zeros(4, np.uint16))
    with pytest.raises(gt.ArgumentError, match="does not fit uint16") as e:
        fill(x, np.float64(-3.0))
    assert f"test_callpath.py:{line_of(__file__, 'numpy-float-memset')}:" in str(e.value)


def test_compile_passes_a_parameter_named_backend_to_the_function():
    """As a call does: ``backend=`` is the function's own where it has that
    parameter, and compile's choice of backend otherwise."""
    @gt.graph(backend="sim")
    def g(s, x, out, backend="fast"):
        fill[1, 4, s](out, 2.0 if backend == "sim" else 3.0)

    x, out = cuda.to_device(np.zeros(4)), cuda.to_device(np.zeros(4))
    g.compile(x, out, backend="sim").launch()
    assert out.copy_to_host().tolist() == [2.0] * 4
    g.compile(x, out, backend="other").launch()
    assert out.copy_to_host().tolist() == [3.0] * 4

    @gt.graph
    def h(s, out):
        fill[1, 4, s](out, 5.0)
    h.compile(out, backend="sim").launch()
    assert out.copy_to_host().tolist() == [5.0] * 4


def test_clear_cache_starts_the_counts_again():
    """As functools.lru_cache's cache_clear: after clear_cache, cache_info counts
    from zero (a notebook clearing a graph's cache reads this call's hits)."""
    f = make()
    x, y = dev(np.arange(8)), dev(np.ones(8))
    f(2.0, x, y)
    f(3.0, x, y)
    assert f.cache_info()[:2] == (1, 1)
    f.clear_cache()
    assert f.cache_info() == (0, 0, f.maxsize, 0)
    f(2.0, x, y)
    assert f.cache_info()[:2] == (0, 1)


def _reshaping_function(seen):
    @gt.graph(backend="sim")
    def f(s, h):
        h = h[0] if isinstance(h, list) else h
        s.host(lambda a: seen.append((a.shape, a.dtype, a.__array_interface__["data"][0])), h)
    return f


def _set_strides(h):
    with warnings.catch_warnings():   # deprecated by numpy 2.4, still allowed
        warnings.simplefilter("ignore", DeprecationWarning)
        h.strides = (8, 32)


def _resize_away(h):
    h.resize(1 << 20, refcheck=False)   # grown past malloc's mmap threshold, then shrunk:
    h.resize(16, refcheck=False)        # the same shape at another address


@pytest.mark.parametrize("change", [
    lambda h: setattr(h, "shape", (2, 8)), lambda h: setattr(h, "dtype", np.int64),
    _set_strides, lambda h: h.resize(32, refcheck=False), _resize_away])
@pytest.mark.parametrize("call", [lambda f, h: f(h), lambda f, h: f(h=h),
                                  lambda f, h: f([h])])
def test_an_array_reshaped_in_place_is_another_call(change, call):
    seen = []
    f = _reshaping_function(seen)
    h = np.zeros(16).reshape(4, 4) if change is _set_strides else np.zeros(16)
    call(f, h)
    call(f, h)   # the shortcut made: the very same array
    change(h)
    call(f, h)
    assert seen[-1] == (h.shape, h.dtype, h.__array_interface__["data"][0])
    assert f.cache_info().misses == (1 if change is _resize_away else 2)   # moved: rebound


_ODD_ARRAYS = [np.zeros(16), np.zeros(3, dtype="M8[s]"), np.zeros((3, 4), order="F"),
               np.zeros(4, dtype=[("a", "<i4"), ("b", ">f8")]), np.zeros(0), np.zeros(5, ">f4")]


@pytest.mark.parametrize("compiled", [True, False])
def test_the_address_of_a_numpy_array_owning_its_memory_is_that_of_its_interface(
        compiled, monkeypatch):
    """The call shortcut reads it through the buffer protocol where tracing is compiled
    (no format asked: datetimes and records too), else from the array interface; a
    read-only array too. The reshape test above, with the interface's reader."""
    from graphtrace import arrays
    if not compiled:
        monkeypatch.setattr(arrays, "_ADDRESS", [lambda a: None])
    elif arrays._ADDRESS[0](np.zeros(1)) is None:
        pytest.skip("tracing not compiled")
    for a in _ODD_ARRAYS + [np.ones(3)]:
        a.flags.writeable = a.size != 3
        assert arrays.geometry_reader(a)(a)[-1] == a.__array_interface__["data"][0]
    test_an_array_reshaped_in_place_is_another_call(_resize_away, lambda f, h: f(h))


class _Reshapable:
    """A cupy array or torch tensor as far as the call shortcut reads it."""

    def __init__(self):
        self.shape, self.strides, self.dtype, self.ptr = (16,), (8,), np.dtype("f8"), 1 << 40

    def data_ptr(self):   # torch's
        return self.ptr

    def stride(self):
        return tuple(s // 8 for s in self.strides)


@pytest.mark.parametrize("library,name", [("cupy", "ndarray"), ("torch", "Tensor")])
@pytest.mark.parametrize("change", [dict(shape=(2, 8), strides=(64, 8)), dict(ptr=1 << 41)])
def test_a_device_array_reshaped_in_place_is_not_the_same_call(library, name, change,
                                                               monkeypatch):
    """cupy's shape is set in place; torch's set_ and resize_ change all of it."""
    from graphtrace.arguments import geometry_check, same_call, snapshot
    module = types.ModuleType(library)
    setattr(module, name, type(name, (_Reshapable,), {}))
    monkeypatch.setitem(sys.modules, library, module)
    x = getattr(module, name)()
    snap = ((snapshot(x),), None)
    reads, was = geometry_check(snap[0])
    assert same_call((x,), {}, snap) and tuple(r() for r in reads) == was
    vars(x).update(change)
    moved = library == "cupy" and "ptr" in change   # a cupy array's address is fixed
    assert same_call((x,), {}, snap) is moved and (tuple(r() for r in reads) == was) is moved


@pytest.mark.parametrize("change", [
    lambda h: setattr(h, "shape", (2, 8)), lambda h: setattr(h, "dtype", np.int64),
    _set_strides, lambda h: h.resize(32, refcheck=False), _resize_away])
@pytest.mark.parametrize("call", [lambda f, d: f(d), lambda f, d: f(d=d)])
def test_an_array_a_name_holds_reshaped_in_place_is_another_call(change, call):
    """A host array the function reaches by a closure's (or a global's) name and
    hands a host callback, reshaped or moved in place between calls: the graph
    holds its old geometry and address, so the call shortcuts (the C one, and
    the one for keywords) compare them too, and the call traces anew."""
    seen = []
    h = np.zeros(16).reshape(4, 4) if change is _set_strides else np.zeros(16)

    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(lambda a: seen.append((a.shape, a.dtype, a.__array_interface__["data"][0])), h)

    d = cuda.to_device(np.ones(4))
    call(f, d)
    call(f, d)   # the shortcut made: the very same arrays
    change(h)
    call(f, d)
    assert seen[-1] == (h.shape, h.dtype, h.__array_interface__["data"][0])
    assert f.cache_info()[:2] == (1, 2)


@pytest.mark.parametrize("own", [False, True])
def test_a_handle_pointed_at_another_buffer_is_not_the_same_call(own):
    """Its interface is read again (the type's property, or a dict set on the object
    itself): the same object at another address is a call the shortcut cannot take."""
    from graphtrace.arguments import geometry_check, same_call, snapshot
    a, b = A(8, "float64"), A(8, "float64")
    x = A(8, "float64") if own else _Handle(a)
    snap = ((snapshot(x),), None)
    reads, was = geometry_check(snap[0])
    assert same_call((x,), {}, snap) and tuple(r() for r in reads) == was
    if own:
        x.__cuda_array_interface__ = dict(b.__cuda_array_interface__)
    else:
        x.target = b
    assert not same_call((x,), {}, snap) and tuple(r() for r in reads) != was


def test_an_iterator_or_a_dicts_view_argument_is_refused_at_the_call():
    @gt.graph(backend="sim")
    def total(s, xs, out):
        for x in xs:
            s.copy(out, x)

    a, out = dev(np.ones(4)), dev(np.zeros(4))
    for xs in ((v for v in [a]), iter([a]), map(lambda v: v, [a]), {"a": a}.values()):
        with pytest.raises(gt.ArgumentError, match=r"argument xs is a \w+: what it yields is "
                           r"read once.*pass a list or tuple") as e:
            total(xs, out)   # the call
        assert e.value.source[1] == line_of(__file__, "the call")


def test_a_memoryview_argument_is_refused_as_a_value_that_cannot_be_traced():
    @gt.graph(backend="sim")
    def f(s, x, out):
        s.copy(out, out)

    with pytest.raises(gt.ArgumentError, match="argument x of type memoryview cannot be traced"):
        f(memoryview(bytearray(8)), dev(np.zeros(4)))


class _Holder:
    def __init__(self, handle):
        self.h = handle

    def step(self, s, out):
        s.copy(out, self.h)


def test_a_method_whose_object_holds_a_handle_takes_the_full_check_at_every_call():
    """The method shortcut compared what self holds by identity and took another
    array type's handle for one whose address never changes: pointed elsewhere,
    the graph kept the first buffer. A numba or cupy array keeps the shortcut."""
    from graphtrace.guard import Guard
    assert Guard.of(_Holder(_Handle(A(8, "float64"))), _Holder.step) is None
    assert Guard.of(_Holder(dev(np.zeros(8))), _Holder.step) is not None


@pytest.mark.parametrize("make", [lambda: io.StringIO(), lambda: sys.stdout,
                                  lambda: open(os.devnull, "w")])
def test_a_file_or_a_text_stream_argument_is_not_taken_for_an_iterator(make):
    seen = []

    @gt.graph(backend="sim")
    def step(s, x, log):
        s.host(lambda: seen.append(log))
        s.memset(x, 0)

    log = make()
    x = dev(np.ones(4))
    step(x, log)
    step(x, log)
    assert seen == [log, log] and step.cache_info().misses == 1


def test_a_static_nan_of_another_payload_is_another_signature():
    """Every NaN of a sign had one key: a static NaN of another payload replayed the
    graph baked with the first one. A NaN made anew with the same bits still hits."""
    @gt.graph(backend="sim", static=("v",))
    def f(s, x, v):
        s.memset(x, v)

    def nan32(bits):
        return np.frombuffer(np.uint32(bits).tobytes(), np.float32)[0]

    x = cuda.to_device(np.zeros(4, np.float32))
    for bits in (0x7fc00001, 0x7fc00002, 0xffc00001, 0x7fc00001):
        f(x, nan32(bits))
        assert (x.copy_to_host().view(np.uint32) == bits).all(), hex(bits)
    f(x, np.float32("nan"))
    f(x, np.float32("nan"))
    assert f.cache_info().misses == 4 and f.cache_info().hits == 2

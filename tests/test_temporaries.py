"""Graph-owned temporaries (s.empty, s.zeros): tracing, listing, dependencies,
views, the simulator against eager numpy, loop bodies, rebinding."""
import collections
import functools
import types

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace.temporary import VIRTUAL_BASE
from helpers import FakeDeviceArray as A, any_kernel, line_of
from temp_kernels import add, add2d, count, halve_into, scale

F = __file__
K = any_kernel()


def dev(values, dtype=np.float32):
    return cuda.to_device(np.asarray(values, dtype=dtype))


# --- tracing, listing, dependencies --------------------------------------------

def test_the_listing_names_each_temporary_and_gives_its_shape():
    x = A(8)

    @gt.graph
    def f(s, x):
        t = s.empty(8, np.float32)                     # empty
        acc = s.zeros((2, 4), np.int32, name="acc")    # zeros
        s.launch(K, 1, 1, gt.In(x), gt.Out(t))         # use-t
        s.launch(K, 1, 1, gt.In(t[2:]), acc)           # use-acc
    ln = {m: line_of(F, m) for m in ("zeros", "use-t", "use-acc")}
    assert str(f.trace(x)) == "\n".join([
        "graph f(x)  deps=data  3 nodes, 2 edges",
        "  temporaries: tmp0 float32[8], acc int32[2, 4]",
        f"  %0 = zeros acc  out(acc)  # test_temporaries.py:{ln['zeros']}",
        f"  %1 = kernel k[1, 1](x, tmp0)  in(x)  out(tmp0)  # test_temporaries.py:{ln['use-t']}",
        f"  %2 = kernel k[1, 1](tmp0[8B:32B], acc)  in(tmp0[8B:32B])  inout(acc)  "
        f"after(%0, %1)  # test_temporaries.py:{ln['use-acc']}"])


def test_temporaries_never_alias_each_other_nor_any_argument():
    x = A(64)

    @gt.graph
    def f(s, x):
        a, b = s.empty(64, np.float32), s.empty(64, np.float32)
        s.launch(K, 1, 1, gt.Out(a))
        s.launch(K, 1, 1, gt.Out(b))
        s.launch(K, 1, 1, gt.Out(x))
        s.launch(K, 1, 1, gt.In(a), gt.Out(b))       # after both writers of a and b
    g = f.trace(x)
    assert g.edges() == [(0, 3), (1, 3)]
    a, b = g.temporaries
    assert a.lo >= VIRTUAL_BASE and b.lo >= a.hi and not a.overlaps(b)


def test_disjoint_views_of_a_temporary_stay_independent():
    @gt.graph
    def f(s):
        t = s.empty((4, 8), np.float32)
        s.launch(K, 1, 1, gt.Out(t[:2]))
        s.launch(K, 1, 1, gt.Out(t[2:]))
        s.launch(K, 1, 1, gt.In(t.reshape(32)[::2]))   # meets both halves
        s.launch(K, 1, 1, gt.Out(t.T[0]))              # a strided column
    g = f.trace()
    assert g.edges() == [(0, 2), (1, 2), (2, 3)]


def test_views_of_a_temporary_have_numpy_geometry():
    seen = {}

    @gt.graph
    def f(s):
        t = s.empty((3, 4), np.float64)
        seen.update(shape=t.shape, strides=t.strides, size=t.size, ndim=t.ndim,
                    nbytes=t.nbytes, row=t[1].shape, col=t[:, 2].strides, T=t.T.strides,
                    flat=t.reshape(-1).shape, none=t[None].shape, n=len(t),
                    ints=t.view(np.int32).shape, name=t.name)
    f.trace()
    ref = np.empty((3, 4))
    assert seen == dict(shape=(3, 4), strides=ref.strides, size=12, ndim=2, nbytes=96,
                        row=(4,), col=(32,), T=ref.T.strides, flat=(12,), none=(1, 3, 4),
                        n=3, ints=(3, 8), name="tmp0")


def test_geometry_queries_of_a_device_array_answer_for_a_temporary_too():
    seen = {}

    @gt.graph
    def f(s):
        t = s.empty((3, 4), np.float64)
        seen.update(shape=np.shape(t), ndim=np.ndim(t), size=np.size(t), rows=np.size(t, 0),
                    c=t.is_c_contiguous(), f=t.is_f_contiguous(), tc=t.T.is_c_contiguous(),
                    flags=(t.flags["C_CONTIGUOUS"], t.T.flags.f_contiguous),
                    squeezed=t[1:2].squeeze().shape, col=t[:, :1].squeeze(1).shape,
                    fortran=t.T.ravel(order="F").shape, parts=[p.shape for p in
                                                             t.ravel().split(5)])
        t.flags.writeable = False          # a view's flags: the temporary stays as it was
        seen.update(after=t.flags.writeable)
    f.trace()
    assert seen == dict(shape=(3, 4), ndim=2, size=12, rows=3, c=True, f=False, tc=False,
                        flags=(True, True), squeezed=(4,), col=(3,), fortran=(12,),
                        parts=[(5,), (5,), (2,)], after=True)


def test_numpy_functions_that_make_views_make_views_of_a_temporary():
    """np.split, np.reshape, np.transpose... of a temporary are its views, as the
    methods make them (they were refused as reading it on the host)."""
    seen = {}

    @gt.graph
    def f(s):
        t = s.empty((4, 6), np.float32)
        a, b = np.split(t, 2)
        parts = np.array_split(t.reshape(-1), 5)
        seen.update(a=(a.shape, a.strides), b=b[0].shape, parts=[p.shape for p in parts],
                    r=np.reshape(t, (6, 4)).shape, rk=np.reshape(t, shape=(24,)).shape,
                    ra=np.ravel(t).shape, T=np.transpose(t).strides,
                    sw=np.swapaxes(t, 0, 1).shape, ex=np.expand_dims(t, 0).shape,
                    fl=np.flip(t, 0).strides, hs=[p.shape for p in np.hsplit(t, 3)],
                    rot=np.rot90(t).strides, diag=np.diagonal(t).strides,
                    re=np.real(s.empty(4, np.complex64)).strides,
                    im=np.imag(s.empty(4, np.complex64)).strides,
                    bc=np.broadcast_to(t[0], (3, 6)).strides,
                    kind={type(p).__name__ for p in (a, b, *parts)})
        s.launch(K, 1, 1, gt.Out(a))
        s.launch(K, 1, 1, gt.Out(b))
        s.launch(K, 1, 1, gt.In(np.split(t, 2)[1]))    # after b's writer alone
    g = f.trace()
    assert g.edges() == [(1, 2)]
    ref = np.empty((4, 6), np.float32)
    assert seen == dict(a=((2, 6), ref.strides), b=(6,), parts=[(5,)] * 4 + [(4,)],
                        r=(6, 4), rk=(24,), ra=(24,), T=ref.T.strides, sw=(6, 4),
                        ex=(1, 4, 6), fl=(-24, 4), hs=[(4, 2)] * 3, rot=(-4, 24),
                        diag=(28,), re=(8,), im=(8,), bc=(0, 4), kind={"Temporary"})


def test_the_imaginary_part_of_a_complex_temporary_runs_like_eager_numpy():
    z = np.arange(4) + 1j * np.arange(10, 14)
    x, y = dev(z, np.complex128), dev(np.zeros((3, 4)), np.float64)

    @gt.graph
    def f(s, x, y):
        t = s.empty(4, np.complex128)
        s.copy(t, x)
        add2d[(1, 1), (4, 4), s](np.broadcast_to(np.imag(t), (3, 4)), y)
    f(x, y)
    assert np.array_equal(y.copy_to_host(), np.broadcast_to(z.imag, (3, 4)))


def test_a_numpy_split_of_a_temporary_runs_like_eager_numpy():
    xh = np.arange(8, dtype=np.float32)
    x, y = dev(xh), dev(np.zeros(4))

    @gt.graph
    def f(s, x, y, a):
        t = s.empty(8, np.float32)
        lo, hi = np.split(t, 2)
        scale[1, 32, s](x, a, t)
        add[1, 32, s](hi, lo)
        s.copy(y, lo)
    for a in (2.0, 3.0):
        f(x, y, a)
        assert np.array_equal(y.copy_to_host(), a * xh[:4] + a * xh[4:])


@pytest.mark.parametrize("how, says", [
    ("np.reshape(t.reshape(2, 2).T, 4)", "reshape in order 'C' of a view of temporary tmp0 "
                                         "that is not contiguous"),
    ("np.ravel(t[::2])", "reshape in order 'C' of a view of temporary tmp0 that is not "
                         "contiguous"),
    ("t.copy_to_device(np.zeros(4))", "writing into temporary tmp0 on the host"),
    ("np.sum(t)", "temporary tmp0 used as host data"),
    ("np.imag(t)", "temporary tmp0 used as host data"),   # of a real array: a new one
    ("t.reshape(2, 2).reshape(4, order='F')", "reshape in order 'F' of a view of temporary "
                                              "tmp0 that is not Fortran-contiguous"),
    ("t[::2].ravel()", "reshape in order 'C' of a view of temporary tmp0 that is not "
                       "contiguous"),
    ("t.reshape(4, order='A')", "in order 'A': a temporary is reshaped in order 'C' or 'F'"),
    ("t.reshape(2, 2).split(1)", "split of temporary tmp0 of 2 dimensions"),
    ("t.flatten()", "flatten of temporary tmp0 would copy it, reading it on the host: "
                    "ravel() or reshape(-1) make views"),
    ("t.take([0])", "take of temporary tmp0 would read it on the host inside a trace"),
    ("t.flat", "flat of temporary tmp0 would read it on the host inside a trace"),
    ("t.imag", "temporary tmp0 used as host data"),   # of a real one: a new array
    ("t.fancy", "a graphtrace temporary has no attribute 'fancy': it is a device array's "
                "geometry while tracing, with its views")])
def test_what_a_temporary_cannot_do_is_refused_saying_so(how, says):
    @gt.graph
    def f(s):
        t = s.empty(4, np.float32)
        eval(how)
    with pytest.raises(gt.GraphtraceError) as e:
        f.trace()
    assert says in str(e.value)


def test_numba_types_a_temporary_view_as_it_types_a_device_array():
    from graphtrace.buffers import Buffer
    from graphtrace.ops._numba import _DeviceArrayType
    import numba
    base = np.empty((3, 4), np.float32)
    for view in (base, base.T, base[:, ::2], base[1], base[None]):
        b = Buffer(VIRTUAL_BASE, view.shape, view.strides, view.dtype, 0, None)
        expect = numba.typeof(view)
        broadcast = 0 in view.strides
        assert _DeviceArrayType(b)._numba_type_ == \
            (expect.copy(layout="A") if broadcast else expect).copy(readonly=False)


def test_verify_finds_a_temporary_the_graph_does_not_own():
    @gt.graph
    def f(s):
        s.launch(K, 1, 1, gt.Out(s.empty(4)))
    g = f.trace()
    g.verify()
    g.temporaries.clear()
    with pytest.raises(gt.IRError, match="accesses tmp0, a temporary the graph does not own"):
        g.verify()


def test_reshape_takes_a_tuple_or_numbers():
    seen = []

    @gt.graph
    def f(s):
        t = s.empty(12)
        seen.extend([t.reshape((3, 4)).shape, t.reshape(np.int64(2), 6).shape,
                     t.reshape([4, -1]).shape, t.ravel().shape])
    f.trace()
    assert seen == [(3, 4), (2, 6), (4, 3), (12,)]


def test_a_shape_from_a_dynamic_scalar_is_refused():
    @gt.graph
    def f(s, n):
        s.empty(n, np.float32)                          # dynamic
    with pytest.raises(gt.DynamicScalarError) as e:
        f.trace(8)
    assert e.value.source[1] == line_of(F, "dynamic")


def test_a_name_taken_by_an_argument_or_a_temporary_is_refused():
    @gt.graph
    def f(s, x):
        s.empty(4, name="x")                            # taken
    with pytest.raises(gt.ArgumentError, match="taken") as e:
        f.trace(A(4))
    assert e.value.source[1] == line_of(F, "taken")

    def stage(s, x):   # a plain helper: run twice, it names its temporary twice
        s.empty(4, name="scratch")                      # twice

    @gt.graph
    def g(s, x):
        stage(s, x)
        stage(s, x)
    with pytest.raises(gt.ArgumentError, match="decorated with @gt.graph, its temporaries are "
                       "named scratch_1") as e:
        g.trace(A(4))
    assert e.value.source[1] == line_of(F, "twice")


_NAMED = A(4)


def test_a_name_taken_by_an_array_reached_by_a_global_name_says_so():
    @gt.graph
    def f(s, x):
        s.memset(_NAMED, 0)
        s.empty(4, name="_NAMED")                       # a global's
    with pytest.raises(gt.ArgumentError, match="an array it reaches by that global or "
                       "closure name") as e:
        f.trace(A(4))
    assert e.value.source[1] == line_of(F, "a global's")


def test_a_name_given_wins_over_an_automatic_one():
    @gt.graph
    def helper(s, a, b):
        t = s.zeros(a.shape, np.float32)                # named tmp1 first, then tmp2
        add[1, 32, s](a, t[:2])
        add[1, 32, s](t, b)

    @gt.graph
    def f(s, x, y):
        t = s.zeros(x.shape, np.float32)                # tmp0
        add[1, 32, s](x, t)
        helper(s, t, y)
        u = s.zeros(x.shape, np.float32, name="tmp1")   # the user's tmp1
        add[1, 32, s](u, y)
    g = f.trace(A(4), A(4))
    assert str(g).splitlines()[1] == "  temporaries: tmp0 float32[4], tmp2 float32[4], " \
                                     "tmp1 float32[4]"
    assert [g.describe(n) for n in g.nodes[3:6:2]] == ["kernel add[1, 32](tmp0, tmp2[0B:8B])",
                                                      "zeros tmp1"]
    assert g.nodes[5].source[1] == line_of(F, "the user's tmp1")

    @gt.graph
    def own(s, x):
        t = s.empty(x.shape, np.float32)                # tmp0, then tmp1
        u = s.empty(x.shape, np.float32, name="tmp0")
        add[1, 32, s](t, u)
    assert str(own.trace(A(4))).splitlines()[1] == "  temporaries: tmp1 float32[4], " \
                                                   "tmp0 float32[4]"


@pytest.mark.parametrize("call", ["inline", "child", "both"])
def test_a_named_temporary_of_a_graph_function_called_twice_is_named_apart(call):
    """A helper naming its temporary may run twice in one trace (inlined or as a
    child graph), and beside an argument of that name: the later ones are
    ``scratch_1``, ``scratch_2``..., and each call computes with its own."""
    @gt.graph(backend="sim")
    def smooth(s, x):
        t = s.empty(x.shape, np.float32, name="scratch")
        scale[1, 32, s](x, 0.5, t)
        add[1, 32, s](t, x)

    @gt.graph(backend="sim")
    def two(s, u, v, scratch):
        (smooth if call != "child" else lambda s, x: s.child(smooth, x))(s, u)
        (smooth if call == "inline" else lambda s, x: s.child(smooth, x))(s, v)
        add[1, 32, s](u, scratch)
    u, v, scratch = dev([2, 4]), dev([8, 16]), dev([0, 0])
    two(u, v, scratch)
    assert u.copy_to_host().tolist() == [3, 6] and v.copy_to_host().tolist() == [12, 24]
    assert scratch.copy_to_host().tolist() == [3, 6]
    listing = str(two.trace(u, v, scratch))
    assert "scratch_1" in listing and "scratch_2" in listing and "scratch_3" not in listing

    @gt.graph(backend="sim")
    def after(s, u, v):   # the function's own name after a helper took it
        smooth(s, u)
        t = s.empty(v.shape, np.float32, name="scratch")
        scale[1, 32, s](v, 2.0, t)
        add[1, 32, s](t, v)
    u, v = dev([2, 4]), dev([8, 16])
    after(u, v)
    assert u.copy_to_host().tolist() == [3, 6] and v.copy_to_host().tolist() == [24, 48]


# --- the simulator, against eager numpy -------------------------------------------

@gt.graph
def scaled_sum(s, x, y, a):
    t = s.empty(x.shape, np.float32)
    z = s.zeros(4, np.float32, name="z")
    scale[1, 32, s](x, a, t)
    add[1, 32, s](t, y)
    add[1, 32, s](t[1:5], z)
    add[1, 32, s](z, y[:4])


def eager_scaled_sum(x, y, a):
    t = a * x
    y += t
    z = np.zeros(4, np.float32) + t[1:5]
    y[:4] += z


def test_the_simulator_runs_temporaries_like_eager_numpy_in_any_order():
    xh, yh = np.arange(8, dtype=np.float32), np.ones(8, np.float32)
    x, y = dev(xh), dev(yh)
    for a in (2.0, 3.0, 0.5, 2.0):     # zeros every launch, whatever order the DAG allows
        scaled_sum(x, y, a)
        eager_scaled_sum(xh, yh, np.float32(a))
        assert np.array_equal(y.copy_to_host(), yh)


def test_rebinding_leaves_temporaries_in_their_memory():
    x1, y1, x2, y2 = dev(np.arange(8)), dev(np.zeros(8)), dev(np.ones(8)), dev(np.zeros(8))
    g = scaled_sum.compile(x1, y1, 2.0)
    where = [g.value_of(t).ptr for t in g.ir.temporaries]
    assert all(p < VIRTUAL_BASE for p in where)
    misses = scaled_sum.cache_info().misses
    scaled_sum(x2, y2, 3.0)
    assert scaled_sum.cache_info().misses == misses
    assert [g.value_of(t).ptr for t in g.ir.temporaries] == where
    yh = np.zeros(8, np.float32)
    eager_scaled_sum(np.ones(8, np.float32), yh, np.float32(3.0))
    assert np.array_equal(y2.copy_to_host(), yh)


def test_an_empty_temporary_is_not_cleared_between_launches():
    @gt.graph
    def f(s, n):
        t = s.empty(1, np.int32)
        count[1, 1, s](t)
        add[1, 1, s](t, n)
    n = dev([0], np.int32)
    for _ in range(3):
        f(n)
    # the first launch starts from the simulator's 0xFF bytes (-1), then 0, 1
    assert n.copy_to_host().tolist() == [0 + 1 + 2]


def test_gt_simulate_gives_a_traced_graph_memory_for_its_temporaries():
    x, y = dev(np.arange(8)), dev(np.zeros(8))
    gt.simulate(gt.graph(scaled_sum.fn, static="a").trace(x, y, 2.0), seed=3)
    yh = np.zeros(8, np.float32)
    eager_scaled_sum(np.arange(8, dtype=np.float32), yh, np.float32(2.0))
    assert np.array_equal(y.copy_to_host(), yh)


def test_two_dimensional_temporaries_and_their_transposes():
    @gt.graph
    def f(s, x, y):
        t = s.zeros((4, 3), np.float32)
        add2d[(1, 1), (8, 8), s](x, t.T)                # t.T has x's shape
        add2d[(1, 1), (8, 8), s](t.reshape(3, 4), y)
    xh = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = dev(np.zeros((3, 4)))
    f(dev(xh), y)
    assert np.array_equal(y.copy_to_host(), xh.T.reshape(3, 4))


def test_a_subarray_dtype_gives_a_temporary_of_its_base_type_as_numpy_does():
    sub, seen = np.dtype((np.float32, (2,))), []

    @gt.graph
    def f(s, out):
        t = s.zeros(3, sub)
        seen.append((t.shape, t.dtype))
        s.copy(out, t)
    out = dev(np.ones((3, 2)))
    f(out)
    assert seen == [(np.zeros(3, sub).shape, np.zeros(3, sub).dtype)] == [((3, 2), np.float32)]
    assert np.array_equal(out.copy_to_host(), np.zeros((3, 2), np.float32))


# --- loop and branch bodies ----------------------------------------------------------

@gt.graph
def halve_until(s, x, n, tol):
    with s.while_loop(gt.cond(x) > tol, max_iterations=100) as body:
        t = body.zeros(1, np.float32, name="half")
        halve_into[1, 1, body](x, t)
        body.copy(x, t)
        count[1, 1, body](n)


def test_a_temporary_made_in_a_loop_body_is_owned_by_the_whole_graph():
    x, n = dev([100.0]), dev([0], np.int32)
    g = halve_until.trace(x, n, 1.0)
    assert [t.label for t in g.temporaries] == ["half"]
    loop = g.nodes[0]
    assert [k.kind for k in loop.regions[0].nodes] == ["zeros", "kernel", "memcpy", "kernel"]
    halve_until(x, n, 1.0)
    assert x.copy_to_host().tolist() == [0.78125] and n.copy_to_host().tolist() == [7]
    x2, n2 = dev([64.0]), dev([0], np.int32)
    halve_until(x2, n2, 10.0)                           # rebinding, no new trace
    assert x2.copy_to_host().tolist() == [8.0] and n2.copy_to_host().tolist() == [3]
    assert halve_until.cache_info().misses == 1


def test_a_temporary_can_be_a_loops_condition():
    @gt.graph
    def f(s, x, n):
        left = s.empty(1, np.float32, name="left")
        s.copy(left, x)
        with s.while_loop(gt.cond(left) > 1, max_iterations=100) as body:
            halve_into[1, 1, body](left, left)
            count[1, 1, body](n)
    n = dev([0], np.int32)
    f(dev([16.0]), n)
    assert n.copy_to_host().tolist() == [4]
    assert "while cond(left) > 1" in str(f.trace(dev([16.0]), n))


def test_temporaries_in_branches_and_child_graphs():
    @gt.graph
    def child(s, x, y):
        t = s.zeros(4, np.float32, name="c")
        add[1, 4, s](x, t)
        add[1, 4, s](t, y)

    @gt.graph
    def f(s, flag, x, y):
        with s.if_then(gt.cond(flag)) as then:
            t = then.empty(4, np.float32)
            then.copy(t, x)
            add[1, 4, then](t, y)
        s.child(child, x, y)
    x, y = dev([1, 2, 3, 4]), dev(np.zeros(4))
    f(dev([1], np.int32), x, y)
    f(dev([0], np.int32), x, y)
    assert y.copy_to_host().tolist() == [3, 6, 9, 12]
    assert [t.label for t in f.trace(dev([1], np.int32), x, y).temporaries] == ["tmp0", "c"]


# --- escapes and host reads ------------------------------------------------------------

def check(excinfo, marker, *phrases):
    err = excinfo.value
    assert err.source[1] == line_of(F, marker), str(err)
    for p in phrases:
        assert p in str(err), str(err)


def test_a_returned_temporary_is_refused_as_a_temporary():
    @gt.graph
    def f(s):
        return s.empty(4)                            # made-returned
    with pytest.raises(gt.TraceError) as e:
        f.trace()
    check(e, "made-returned", "returned temporary tmp0 (made at test_temporaries.py:"
          f"{line_of(F, 'made-returned')})", "s.copy")   # at the return line


def test_a_temporary_passed_to_a_host_callback_is_refused_at_its_line():
    @gt.graph
    def f(s):
        t = s.empty(4, name="scratch")
        s.host(print, t[1:])                         # to-host
    with pytest.raises(gt.ArgumentError) as e:
        f.trace()
    check(e, "to-host", "temporary scratch[8B:32B]", "pinned")


def test_an_object_holding_a_temporary_passed_to_a_host_callback_is_refused():
    class Box:
        pass

    @gt.graph
    def f(s):
        box = Box()
        box.t = s.empty(4, name="kept")
        s.host(print, box)                           # box-to-host
    with pytest.raises(gt.ArgumentError) as e:
        f.trace()
    check(e, "box-to-host", "holds temporary kept")


class _Sink:
    def __init__(self, t):
        self.t = t

    def show(self):
        print(self.t)


@pytest.mark.parametrize("hand, by", [
    (lambda t: functools.partial(print, t), "by partial argument 0"),
    (lambda t: (lambda: print(t)), "by closure name 't'"),
    (lambda t: _Sink(t).show, "by attribute 't'")])
def test_a_callback_holding_a_temporary_is_refused(hand, by):
    """What the callback holds (its closure, a partial's arguments, a bound method's
    object) is refused as its arguments are."""
    @gt.graph
    def f(s):
        t = s.empty(4, name="kept")
        s.host(hand(t))                              # held
    with pytest.raises(gt.ArgumentError) as e:
        f.trace()
    check(e, "held", "holds temporary kept", by, "pinned")


class _Cached:
    """A layer caching its activation (a temporary) for its backward, which clears it."""

    def __init__(self):
        self.a, self.cache = None, []

    def forward(self, s):
        self.a = s.empty(4, name="act")
        self.cache = [self.a]

    def backward(self):
        self.a, self.cache = None, []

    def peek(self):
        print(self.a)


class _Trainer:
    def __init__(self):
        self.model, self.log = _Cached(), []

    def record(self, h):   # never reaches self.model
        self.log.append(float(h[0]))

    def shows(self, h):    # reads the temporary off the object holding it
        print(self.model.a, h)

    def peeks(self, h):    # a method of the object holding it reads it
        self.model.peek()

    def item(self, h):     # an item of the list holding it
        print(self.model.cache[0].copy_to_host(), h)

    def each(self, h):     # the items of that list, in a loop
        for t in self.model.cache:
            print(t.copy_to_host(), h)


def test_a_bound_callback_whose_object_holds_a_temporary_it_never_reaches_runs():
    """As a device array its code never names: the callback cannot reach it."""
    tr = _Trainer()

    @gt.graph(backend="sim")
    def f(s, d, h):
        tr.model.forward(s)
        s.copy(h, d)
        s.host(tr.record, h)
        tr.model.backward()
    f(dev([5.0]), gt.pinned_empty(1, np.float32))
    assert tr.log == [5.0]


@pytest.mark.parametrize("how, by", [("shows", "by attribute 'model' (.a)"),
                                     ("peeks", "by attribute 'model' (.a)"),
                                     ("item", "by attribute 'model' (.cache[0])"),
                                     ("each", "by attribute 'model' (.cache[0])")])
def test_a_bound_callback_reaching_a_temporary_its_object_holds_is_refused(how, by):
    tr = _Trainer()

    @gt.graph(backend="sim")
    def f(s, h):
        tr.model.forward(s)
        s.host(getattr(tr, how), h)                  # reaches-held
        tr.model.backward()
    with pytest.raises(gt.ArgumentError) as e:
        f(gt.pinned_empty(1, np.float32))
    check(e, "reaches-held", "holds temporary act", by, "pinned")


def test_a_temporary_used_after_its_trace_names_where_it_was_made():
    made = []

    @gt.graph
    def f(s):
        made.append(s.empty(4))                      # made-here

    @gt.graph
    def g(s, x):
        pass
    with pytest.raises(gt.TraceError) as kept:
        f.trace()
    check(kept, "made-here", "kept by global or closure name made")
    with pytest.raises(gt.TraceError) as e:
        made[0].shape                                # late-use
    check(e, "late-use", f"tmp0 (made at test_temporaries.py:{line_of(F, 'made-here')}) "
          "used after the trace of f ended")
    for late in (lambda t: g(t), lambda t: g(t[1:]), lambda t: np.asarray(t),
                 lambda t: getattr(t, "_numba_type_", None),
                 lambda t: hasattr(t, "__cuda_array_interface__"),
                 lambda t: hasattr(t, "__array_interface__")):
        with pytest.raises(gt.TraceError, match="used after the trace"):
            late(made[0])
    assert "its trace has ended" in repr(made[0])
    with pytest.raises(gt.TraceError) as e:
        add[1, 4](made[0], dev(np.zeros(4)))         # late-launch
    check(e, "late-launch", "used after the trace")  # (not a simulator thread's line)
    assert str(e.value).startswith(f"test_temporaries.py:{line_of(F, 'late-launch')}: ")


KEPT, HELD = None, []


def test_a_temporary_stored_in_a_global_is_refused_naming_the_global():
    @gt.graph
    def f(s):
        global KEPT
        KEPT = s.empty(4, name="g")                  # stored-global
    with pytest.raises(gt.TraceError) as e:
        f.trace()
    check(e, "stored-global", "temporary g", "kept by global or closure name KEPT")

    def helper(t):
        HELD.append({"t": t})

    @gt.graph
    def f2(s):
        helper(s.empty(4, name="h"))                 # held-by-helper
    with pytest.raises(gt.TraceError) as e:
        f2.trace()
    check(e, "held-by-helper", "temporary h", "kept by global or closure name helper.HELD")
    HELD.clear()


def test_a_temporary_stored_on_an_argument_or_self_is_refused():
    class Model:
        @gt.graph
        def step(self, s, x):
            self.scratch = s.empty(x.shape)          # on-self
    with pytest.raises(gt.TraceError) as e:
        Model().step.trace(A(4))
    check(e, "on-self", "kept by argument self")

    class Box:
        pass

    @gt.graph
    def f(s, box):
        box.t = s.empty(4)                           # on-argument
    with pytest.raises(gt.TraceError) as e:
        f.trace(Box())
    check(e, "on-argument", "kept by argument box")


def test_a_temporary_stored_on_the_class_of_a_method_is_refused():
    class Model:
        @gt.graph
        def step(self, s, x):
            Model.last = s.empty(x.shape)            # on-class
    with pytest.raises(gt.TraceError) as e:
        Model().step.trace(A(4))
    check(e, "on-class", "kept by class attribute Model.last")


class _Keep:
    pass


_DEQUE, _NESTED = collections.deque(), types.SimpleNamespace(inner=types.SimpleNamespace(lst=[]))


def _keep_on_self_sub(self, t):
    self.sub = types.SimpleNamespace(t=t)


@pytest.mark.parametrize("keep, by", [
    (lambda self, t: setattr(_Keep, "t", t), "._Keep"),
    (lambda self, t: _DEQUE.append(t), "._DEQUE"),
    (_keep_on_self_sub, "argument self"),
    (lambda self, t: _NESTED.inner.lst.append(t), "._NESTED")])
def test_a_temporary_stored_one_level_deeper_is_refused(keep, by):
    """A global class's attribute, a global deque, an object self holds, a list in
    a global's namespace: refused at the trace as a global or self holding it."""
    class Model:
        @gt.graph
        def step(self, s):
            keep(self, s.empty(4, name="deep"))      # kept-deeper
    try:
        with pytest.raises(gt.TraceError) as e:
            Model().step.trace()
        check(e, "kept-deeper", "temporary deep", "is kept by", f"{by} after the trace")
    finally:
        _DEQUE.clear()
        _NESTED.inner.lst.clear()
        if "t" in vars(_Keep):
            del _Keep.t


@pytest.mark.parametrize("read", [
    lambda t: t[0], lambda t: float(t[:1]), lambda t: np.asarray(t),
    lambda t: t.copy_to_host(), lambda t: bool(t)])
def test_reading_a_temporary_on_the_host_while_tracing_is_refused(read):
    @gt.graph
    def f(s):
        t = s.empty(4)
        read(t)
    with pytest.raises(gt.HostSyncError, match="tmp0"):
        f.trace()


def _write_item(t):
    t[0] = 1.0


def _write_slice(t):
    t[1:] = np.ones(3, np.float32)


def _augment(t):
    t += 1


def _augment_view(t):
    t[:2] *= 2


@pytest.mark.parametrize("use", [
    _write_item, _write_slice, _augment, _augment_view, lambda t: t + 1,
    lambda t: 2 * t, lambda t: t @ t, lambda t: -t, lambda t: abs(t), lambda t: t < 0,
    lambda t: t == 0, lambda t: t != 1.5, lambda t: t == np.zeros(4),
    lambda t: np.ones(4) + t, lambda t: np.sin(t), lambda t: divmod(t, 2),
    lambda t: round(t), lambda t: 1.0 in t, lambda t: int(t[:1]),
    lambda t: t.fill(0), lambda t: t.astype(np.float64), lambda t: t.max(),
    lambda t: np.copyto(t, 1.0), lambda t: np.sum(t), lambda t: np.concatenate([t, t])])
def test_writing_or_computing_with_a_temporary_on_the_host_is_refused(use):
    @gt.graph
    def f(s):
        t = s.empty(4, np.float32)
        use(t)
    with pytest.raises(gt.HostSyncError, match="tmp0.*inside a trace") as e:
        f.trace()
    assert e.value.source[0] == F and "proxy stream" in str(e.value)


def test_a_temporary_compares_by_identity_with_what_is_no_number_nor_array():
    @gt.graph
    def f(s):
        t, u = s.empty(4), s.empty(4)
        assert t in [None, u, t] and t != "t" and t != u and {t: 1}[t] == 1
        assert not (t == None)                       # noqa: E711
        [None, t, u].remove(u)
    f.trace()


def test_a_temporary_cannot_be_handed_to_a_library_while_tracing():
    """A library taking a temporary reads its interface's device pointer: refused at
    the user's line (reading the interface itself answers, as hasattr asks it)."""
    @gt.graph
    def f(s):
        t = s.empty(4)
        t.__cuda_array_interface__["data"][0]        # to-library
    with pytest.raises(gt.HostSyncError) as e:
        f.trace()
    check(e, "to-library", "tmp0", "proxy stream")


def _unpacked(cai):
    ptr, readonly = cai["data"]
    return ptr


@pytest.mark.parametrize("use", [lambda cai: cai.get("data")[0], lambda cai: cai["data"][0],
                                 lambda cai: dict.get(cai, "data") or cai["data"], _unpacked,
                                 lambda cai: int(cai["data"]), lambda cai: list(cai["data"]),
                                 lambda cai: cai["data"] == (0, False),
                                 lambda cai: dict(cai)["data"][0],
                                 lambda cai: {**cai}["data"][0]])
def test_a_temporary_s_device_pointer_is_refused_however_it_is_read(use):
    @gt.graph
    def f(s):
        use(s.empty(4).__cuda_array_interface__)
    with pytest.raises(gt.HostSyncError) as e:
        f.trace()
    assert e.value.source[0] == F   # (the line of the lambda reading it)
    assert "tmp0" in str(e.value) and "__cuda_array_interface__['data']" in str(e.value)


def test_hasattr_asks_a_temporary_for_its_array_interfaces_without_raising():
    """hasattr(t, "__cuda_array_interface__") raised HostSyncError out of the probe
    (libraries and programs test for a device array that way): a temporary is device
    memory, so it answers True, and the interface's geometry answers; it is no host
    memory: hasattr(t, "__array_interface__") answers False, and reading it is
    refused at the line."""
    got = {}

    @gt.graph
    def f(s):
        t = s.empty((4, 3), np.float32)[:, 1:]
        cai = getattr(t, "__cuda_array_interface__", None)
        got.update(cuda=hasattr(t, "__cuda_array_interface__"),
                   host=hasattr(t, "__array_interface__"),
                   geometry=(cai["shape"], cai["typestr"], cai["strides"], cai["version"]),
                   keys=sorted(cai), dict=type(cai) is dict)
        t.__array_interface__                        # host-interface
    with pytest.raises(gt.HostSyncError) as e:
        f.trace()
    check(e, "host-interface", "tmp0", "device memory", "proxy stream")
    assert got == dict(cuda=True, host=False, geometry=((4, 2), "<f4", (12, 4), 3),
                       keys=["data", "shape", "strides", "typestr", "version"], dict=True)


class _Wrapped:
    """An array wrapper of a program's that copies a device array's interface to add
    its stream, as libraries do."""

    def __init__(self, t, copy):
        self.t, self.copy = t, copy

    @property
    def __cuda_array_interface__(self):
        cai = self.copy(self.t.__cuda_array_interface__)
        cai["stream"] = None
        return cai


@pytest.mark.parametrize("copy", [dict, lambda cai: {**cai}, lambda cai: cai.copy()],
                         ids=["dict", "unpacked", "copy"])
def test_a_wrapper_copying_a_temporary_s_interface_is_refused_at_the_users_line(copy):
    """A wrapper copying the interface (a KeyError: 'data' out of graphtrace's code)
    hands the kernel the temporary's pointer: refused at the launch's line."""
    @gt.graph
    def f(s):
        t = s.empty(4)
        scale[1, 4, s](_Wrapped(t, copy), 2.0, t)    # wrapped-launch
    with pytest.raises(gt.HostSyncError) as e:
        f.trace()
    check(e, "wrapped-launch", "tmp0", "__cuda_array_interface__['data']", "proxy stream")


def test_cupy_taking_a_temporary_is_refused_at_the_users_line():
    """cupy requires the interface to be a dict (no subclass): it reads the pointer,
    refused at the user's line."""
    cupy = pytest.importorskip("cupy")

    @gt.graph
    def f(s):
        cupy.asarray(s.empty(4))                     # cupy-takes
    with pytest.raises(gt.HostSyncError) as e:
        f.trace()
    check(e, "cupy-takes", "tmp0", "__cuda_array_interface__['data']")


@pytest.mark.parametrize("use", [np.sum, np.mean, np.max, np.square, np.linalg.norm])
def test_a_numpy_function_given_a_temporary_names_the_users_line(use):
    @gt.graph
    def f(s):
        t = s.empty(4)
        use(t)                                       # numpy-on-temp
    with pytest.raises(gt.HostSyncError) as e:
        f.trace()
    check(e, "numpy-on-temp", "tmp0")


def test_reshaping_a_strided_view_of_a_temporary_is_refused_where_numpy_would_copy():
    @gt.graph
    def f(s):
        t = s.empty((4, 4))
        t[:, :2].reshape(8)                         # strided-reshape
    with pytest.raises(gt.ArgumentError) as e:
        f.trace()
    check(e, "strided-reshape", "would copy")


def test_a_strided_view_numpy_reshapes_as_a_view_is_reshaped_so():
    """Every other column, a column, a diagonal: numpy reshapes them without a copy,
    and so does a temporary (they were refused as not contiguous)."""
    seen = {}

    @gt.graph
    def f(s):
        t = s.empty((4, 4))
        seen.update(every_other=t[:, ::2].reshape(8).strides, col=t[:, 1].reshape(2, 2).strides,
                    diag=np.diagonal(t).reshape(-1).strides, sw=t.swapaxes(0, 1).strides,
                    d=t.diagonal(1).shape, re=t.real.strides, has=hasattr(t, "fancy"),
                    reads=[hasattr(t, n) for n in ("take", "flat", "trace", "repeat")],
                    im=s.empty(2, np.complex128).imag.strides)
        s.launch(K, 1, 1, gt.Out(t[:, ::2].reshape(8)))
    f.trace()
    assert seen == dict(every_other=(16,), col=(64, 32), diag=(40,), sw=(8, 32), d=(3,),
                        re=(32, 8), has=False, reads=[False] * 4, im=(16,))


@cuda.jit
def _inc1(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = x[i] + 1


@gt.graph(backend="sim")
def _with_empty_views(s, a, out):
    t = s.empty(4, np.float32)
    s.copy(t, a)
    e = s.empty(0, np.uint8)
    _inc1[1, 1, s](e[:])              # views of an empty temporary: nothing to do
    _inc1[1, 1, s](e.view(np.int8))
    _inc1[1, 4, s](t)
    s.copy(out, t)


def test_views_of_an_empty_temporary_run():
    """They failed in the simulator, saying 'temporary None has no memory here'."""
    a = cuda.to_device(np.arange(4, dtype=np.float32))
    for _ in range(2):
        out = cuda.to_device(np.zeros(4, np.float32))
        _with_empty_views(a, out)
        assert out.copy_to_host().tolist() == [1.0, 2.0, 3.0, 4.0]
        gt.simulate(_with_empty_views.trace(a, out), seed=1)


def test_a_temporary_larger_than_any_gpu_is_refused_and_later_ones_still_work():
    """A shape mistaken by orders of magnitude failed inside numpy, and pushed the
    process's virtual addresses past 2**64: every later temporary failed too."""
    @gt.graph(backend="sim")
    def bad(s, x):
        t = s.empty((2 ** 31, 2 ** 31, 4))                   # huge
        scale[1, 8, s](x, 2.0, t)

    @gt.graph(backend="sim")
    def good(s, x, y):
        t = s.empty(8)
        scale[1, 8, s](x, 2.0, t)
        s.copy(y, t)
    for _ in range(2):
        with pytest.raises(gt.ArgumentError, match="more than any GPU holds") as e:
            bad(cuda.to_device(np.ones(8)))
        assert e.value.source[1] == line_of(__file__, "huge")
    x, y = cuda.to_device(np.arange(8.0)), cuda.to_device(np.zeros(8))
    good(x, y)
    assert y.copy_to_host().tolist() == [2.0 * i for i in range(8)]


def test_temporaries_that_cannot_be_allocated_are_an_error_at_the_call(monkeypatch):
    from graphtrace import sim

    def refuse(nbytes):
        raise MemoryError(f"Unable to allocate {nbytes} bytes")
    monkeypatch.setattr(sim, "host_memory", refuse)

    @gt.graph(backend="sim")
    def f(s, x, y):
        t = s.empty(8, name="big")
        scale[1, 8, s](x, 2.0, t)
        s.copy(y, t)
    with pytest.raises(gt.ArgumentError, match=r"the largest is big \(64 bytes\)") as e:
        f(cuda.to_device(np.ones(8)), cuda.to_device(np.zeros(8)))   # too much
    assert e.value.source[1] == line_of(__file__, "too much")


def test_no_walk_for_held_temporaries_before_the_trace_made_one():
    """What a callback, a region or a global holds is walked for the trace's
    temporaries only once it has made one: a large object graph costs nothing
    in a trace making none."""
    from graphtrace.temporary import holder_of

    class Walked(list):
        def __iter__(self):
            raise AssertionError("walked")

        def __len__(self):
            raise AssertionError("walked")

    held = {"model": Walked([1, 2])}
    assert holder_of(held, types.SimpleNamespace(_temps=[])) is None
    with pytest.raises(AssertionError, match="walked"):
        holder_of(held, types.SimpleNamespace(_temps=[("t", "root")]))


def test_a_temporarys_shadow_prints_without_reading_its_virtual_memory():
    """What a test runner's failure report or a debugger shows of graphtrace's frames
    (pytest shows a frame's arguments and, past ``*args``, more of its locals) may
    hold a shadow: printing one read its virtual memory and crashed the process.
    Run apart, so that a crash fails this test alone."""
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    code = ("import numpy as np, graphtrace as gt\n"
            "@gt.graph\n"
            "def f(s):\n"
            "    t = s.empty((4, 4))\n"
            "    a = t[:, ::2]._shadow_\n"
            "    print(repr(a), str(a.T), f'{a[1:]}', np.diagonal(a).reshape(-1, copy=False))\n"
            "f.trace()\n")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env)
    assert got.returncode == 0, got.stderr[-2000:]
    assert got.stdout.split("\n")[0] == (
        "<shadow of a temporary: float64[4, 2]> <shadow of a temporary: float64[2, 4]> "
        "<shadow of a temporary: float64[3, 2]> <shadow of a temporary: float64[2]>")

"""Captured regions (``s.captured``): recording, listing, dependencies, the simulator."""
import functools
import sys
import textwrap
import types
import weakref

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace import arrays as _arrays, buffers
from graphtrace.arrays import as_buffer
from graphtrace.ops.captured import _capture_error
from helpers import FakeDeviceArray as A, line_of

F = __file__


@cuda.jit
def twice(a):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        a[i, j] *= 2


@cuda.jit
def plus_one(src, dst):
    i, j = cuda.grid(2)
    if i < dst.shape[0] and j < dst.shape[1]:
        dst[i, j] = src[i, j] + 1


def mm(x, w, y):
    y[...] = x @ w


@gt.graph
def model(s, x, w, y, z, q):
    twice[(1, 1), (8, 8), s](x)                                   # twice x
    s.captured(mm, x, w, y, reads=[x, w], writes=[y])             # region
    plus_one[(1, 1), (8, 8), s](y, z)                             # after
    twice[(1, 1), (8, 8), s](q)                                   # independent


def arrays(n=4, k=3, m=2, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for shape in ((n, k), (k, m), (n, m), (n, m), (n, m))]


def test_the_region_is_listed_with_its_function_and_declared_accesses():
    g = model.trace(A((4, 3)), A((3, 2)), A((4, 2)), A((4, 2)), A((4, 2)))
    ln = {k: line_of(F, k) for k in ("twice x", "region", "after", "independent")}
    assert str(g) == textwrap.dedent(f"""\
        graph model(x, w, y, z, q)  deps=data  4 nodes, 2 edges
          %0 = kernel twice[1, (8, 8, 1)](x)  inout(x)  # test_captured.py:{ln['twice x']}
          %1 = captured mm(x, w, y)  in(x, w)  out(y)  inout(library state)  after(%0)  # test_captured.py:{ln['region']}
          %2 = kernel plus_one[1, (8, 8, 1)](y, z)  in(y)  out(z)  after(%1)  # test_captured.py:{ln['after']}
          %3 = kernel twice[1, (8, 8, 1)](q)  inout(q)  # test_captured.py:{ln['independent']}""")


def test_dependencies_follow_the_declared_accesses():
    g = model.trace(A((4, 3)), A((3, 2)), A((4, 2)), A((4, 2)), A((4, 2)))
    deps = {n.index: [d.index for d in n.deps] for n in g.nodes}
    assert deps == {0: [], 1: [0], 2: [1], 3: []}


def touch(a, b):
    pass


def test_every_array_given_is_read_and_written_by_default():
    @gt.graph
    def f(s, x, y, z):
        s.captured(touch, x, y)
        s.captured(touch, y, z, reads=[y])   # z not named: read and written
        twice[(1, 1), (8, 8), s](x)

    g = f.trace(A((2, 2)), A((2, 2)), A((2, 2)))
    state = ("library state", "rw")   # what every region reads and writes: in turn
    assert [sorted((b.label, m) for b, m in n.accesses) for n in g.nodes] == [
        [state, ("x", "rw"), ("y", "rw")], [state, ("y", "r"), ("z", "rw")], [("x", "rw")]]
    assert [[d.index for d in n.deps] for n in g.nodes] == [[], [0], [0]]


def test_intent_wrappers_and_an_array_both_read_and_written():
    @gt.graph
    def f(s, x, y):
        s.captured(touch, gt.In(x), y, reads=y, writes=[y])

    g = f.trace(A(4), A(4))
    assert sorted((b.label, m) for b, m in g.nodes[0].accesses) == [
        ("library state", "rw"), ("x", "r"), ("y", "rw")]


def test_declaring_an_array_not_given_is_an_error_at_the_line():
    @gt.graph
    def f(s, x, y):
        s.captured(touch, x, x, writes=[y])   # undeclared

    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(4), A(4))
    assert e.value.source[1] == line_of(F, "undeclared")
    assert "not one of the arrays it is given" in str(e.value)


def test_host_memory_is_refused():
    @gt.graph
    def f(s, x):
        s.captured(touch, x, x)   # host

    with pytest.raises(gt.ArgumentError) as e:
        f.trace(np.zeros(4))
    assert e.value.source[1] == line_of(F, "host")
    assert "host memory" in str(e.value)


def test_nothing_runs_while_tracing():
    calls = []

    @gt.graph
    def f(s, x):
        s.captured(lambda a: calls.append(a), x)

    f.trace(A(4))
    assert calls == []


def expected(x, w, q):
    y = (2 * x) @ w
    return 2 * x, y, y + 1, 2 * q


def test_the_simulator_runs_the_region_with_numpy_arrays():
    seen = []

    def mm_seen(x, w, y):
        seen.append(type(x))
        y[...] = x @ w

    @gt.graph
    def f(s, x, w, y, z, q):
        twice[(1, 1), (8, 8), s](x)
        s.captured(mm_seen, x, w, y, reads=[x, w], writes=[y])
        plus_one[(1, 1), (8, 8), s](y, z)
        twice[(1, 1), (8, 8), s](q)

    for seed in range(2):   # the second call rebinds new arrays; no new trace
        host = arrays(seed=seed)
        dev = [cuda.to_device(a) for a in host]
        f(*dev, backend="sim")
        got = [d.copy_to_host() for d in (dev[0], dev[2], dev[3], dev[4])]
        for g, want in zip(got, expected(host[0], host[1], host[4])):
            np.testing.assert_allclose(g, want)
    assert len(seen) == 2 and all(issubclass(t, np.ndarray) for t in seen)   # numpy's
    assert f.cache_info().misses == 1


def test_a_temporary_is_handed_to_the_region_like_any_array():
    @gt.graph
    def f(s, x, w, z):
        t = s.empty((4, 2), np.float64, name="product")
        s.captured(mm, x, w, t, reads=[x, w], writes=[t])          # into-temporary
        plus_one[(1, 1), (8, 8), s](t, z)

    host = arrays()
    x, w, z = (cuda.to_device(a) for a in (host[0], host[1], host[3]))
    g = f.trace(x, w, z)
    assert "captured mm(x, w, product)  in(x, w)  out(product)" in str(g)
    assert g.edges() == [(0, 1)]
    f(x, w, z, backend="sim")
    np.testing.assert_allclose(z.copy_to_host(), host[0] @ host[1] + 1)


def axpy(a, x, y):
    y += a * x.sum() + np.tanh(x)


def test_dynamic_numbers_reach_the_region():
    @gt.graph
    def f(s, x, y, a):
        s.captured(axpy, a, x, y, reads=[x], writes=[y])

    x0 = np.arange(6.0)
    for a in (2.0, -1.5):
        x, y = cuda.to_device(x0), cuda.to_device(np.ones(6))
        f(x, y, a, backend="sim")
        np.testing.assert_allclose(y.copy_to_host(), 1 + a * x0.sum() + np.tanh(x0))
    assert f.cache_info().misses == 1


def test_a_region_inside_a_device_branch():
    @gt.graph
    def f(s, flag, x, y):
        with s.if_then(gt.cond(flag)) as then:
            then.captured(mm, x, x, y, reads=[x], writes=[y])

    x0 = np.arange(4.0).reshape(2, 2)
    for flag, want in ((1, x0 @ x0), (0, np.zeros((2, 2)))):
        x, y = cuda.to_device(x0), cuda.to_device(np.zeros((2, 2)))
        f(cuda.to_device(np.array([flag], np.int32)), x, y, backend="sim")
        np.testing.assert_allclose(y.copy_to_host(), want)


def device_only(x, y):
    y[...] = x.get()   # cupy only


def test_code_numpy_cannot_run_is_an_error_naming_the_region():
    @gt.graph
    def f(s, x, y):
        s.captured(device_only, x, y)   # the region

    with pytest.raises(gt.SimulationError) as e:
        f(cuda.to_device(np.zeros(3)), cuda.to_device(np.zeros(3)), backend="sim")
    assert e.value.source[1] == line_of(F, "the region")
    assert "captured region device_only" in str(e.value)
    assert f"test_captured.py:{line_of(F, 'cupy only')}" in str(e.value)


def test_writing_an_array_declared_read_only_is_an_intent_error():
    def sneaky(x, y):
        x[0] = 7.0
        y[...] = x

    @gt.graph
    def f(s, x, y):
        s.captured(sneaky, x, y, reads=[x], writes=[y])   # declared

    with pytest.raises(gt.IntentError) as e:
        f(cuda.to_device(np.zeros(3)), cuda.to_device(np.zeros(3)), backend="sim")
    assert e.value.source[1] == line_of(F, "declared")
    assert "sneaky wrote to x" in str(e.value) and "writes=" in str(e.value)


def synchronising(x):
    x.synchronize_on_the_host()   # refused call


def test_a_capture_failure_names_the_line_inside_the_region():
    """The GPU path's error, built from a failure raised inside the region."""
    @gt.graph
    def f(s, x):
        s.captured(synchronising, x)   # recorded here

    node = f.trace(A(4)).nodes[0]
    try:
        node.target(np.zeros(4))
    except AttributeError as exc:
        err = _capture_error(node, exc)
    assert isinstance(err, gt.CaptureError) and isinstance(err, gt.EmitError)
    assert err.source == (F, line_of(F, "refused call"))
    assert f"recorded at test_captured.py:{line_of(F, 'recorded here')}" in err.message
    assert "captured region synchronising" in err.message


def _fill_from(a, b):   # the region: numpy on the simulator
    b[...] = a * 2


def test_reads_and_writes_may_name_a_temporarys_view_made_again():
    """``reads=[t[0]]`` names the same bytes as the argument ``t[0]``, a view made
    again of a temporary (which, unlike an argument's view, has no key)."""
    @gt.graph(backend="sim")
    def f(s, a, b):
        t = s.empty((2, 4))
        s.captured(_fill_from, a[:4], t[0], reads=[a[:4]], writes=[t[0]])
        s.captured(_fill_from, t[0], t[1], reads=t[0], writes=[t[1]])
        s.copy(b[:4], t[1])
    a, b = cuda.to_device(np.arange(8.0)), cuda.to_device(np.zeros(8))
    f(a, b)
    assert b.copy_to_host().tolist() == [0, 4, 8, 12, 0, 0, 0, 0]
    g = f.trace(a, b)
    assert [m for _, m in g.nodes[1].accesses] == ["r", "w", "rw"]   # and library state

    @gt.graph(backend="sim")
    def wrong(s, a, b):
        t = s.empty((2, 4))
        s.captured(_fill_from, a[:4], t[0], writes=[t[1]])   # another row
    with pytest.raises(gt.ArgumentError, match="not one of the arrays it is given"):
        wrong.trace(a, b)


def test_a_region_that_returns_a_new_array_is_refused_one_returning_its_output_is_not():
    """What a region returns is dropped: a new array (the user's tanh(x)) would be lost
    without a word; a library's out= returns the array written, which is kept."""
    def fresh(x):
        return np.tanh(x)

    def into(x, y):
        return np.tanh(x, out=y[1:]), None

    @gt.graph(backend="sim")
    def f(s, x, y):
        s.captured(into, x[1:], y, reads=[x[1:]], writes=[y])
        s.captured(fresh, x, reads=[x])                      # returns
    x, y = cuda.to_device(np.arange(4.0)), cuda.to_device(np.zeros(4))
    with pytest.raises(gt.SimulationError) as e:
        f(x, y)
    assert e.value.source == (F, line_of(F, "returns"))
    assert "returned a new array (ndarray float64[4]), which the graph drops" in e.value.message

    @gt.graph(backend="sim")
    def g(s, x, y):
        s.captured(into, x[1:], y, reads=[x[1:]], writes=[y])
    g(x, y)
    assert y.copy_to_host().tolist() == [0.0] + np.tanh([1.0, 2.0, 3.0]).tolist()


@pytest.mark.parametrize("held", ["array", "view", "number", "partial", "temporary"])
def test_a_region_holding_the_graphs_arrays_or_numbers_itself_is_refused(held):
    """A later call rebinds the graph without tracing again: a region that keeps an
    argument's array (or a view of one), a number or a temporary by its closure or
    a partial would be captured with the first call's forever."""
    import functools

    @gt.graph
    def f(s, x, y, z, a):
        t = s.zeros(4)
        zv = z[1:]

        def add_z(x, y):
            y[...] = x + z

        def add_view(x, y):
            y[1:] = zv

        def scale(x, y):
            y[...] = x * a

        def add_t(x, y):
            y[...] = x + t

        def add(z, x, y):
            y[...] = x + z
        fn = {"array": add_z, "view": add_view, "number": scale, "temporary": add_t,
              "partial": functools.partial(add, z)}[held]
        s.captured(fn, x, y, reads=[x], writes=[y])                  # held
    x, y, z = (cuda.to_device(np.ones(4)) for _ in range(3))
    with pytest.raises(gt.ArgumentError) as e:
        f(x, y, z, 2.0)
    assert e.value.source[1] == line_of(F, "held"), str(e.value)
    name = {"array": "z", "view": "z", "number": "the number a", "temporary": "temporary tmp0",
            "partial": "z"}[held]
    assert f"holds {name}" in str(e.value) and "pass it to s.captured as an argument" in \
        str(e.value)


def test_a_region_reaching_a_global_array_or_given_its_arrays_is_not_refused():
    W = cuda.to_device(np.full(4, 3.0))

    @gt.graph
    def f(s, x, y, a):
        def region(x, y, a):
            y[...] = x * a + W
        s.captured(region, x, y, a, reads=[x], writes=[y])
    x, y = cuda.to_device(np.ones(4)), cuda.device_array(4)
    f(x, y, 2.0)
    assert y.copy_to_host().tolist() == [5.0] * 4
    f(cuda.to_device(np.full(4, 2.0)), y, 0.5)
    assert y.copy_to_host().tolist() == [4.0] * 4


def test_a_region_given_the_arrays_its_object_or_closure_holds_is_not_refused():
    """An optimizer keeping the parameters it is also passed, or a closure using an
    array it is also given for its dtype: the region receives them anew."""
    class SGD:
        def __init__(self, params, lr):
            self.params, self.lr = params, lr

        def apply(self, w, g):
            w[...] -= self.lr * g
    w, g = cuda.to_device(np.ones(4)), cuda.to_device(np.full(4, 0.5))
    opt = SGD([w], 0.1)

    @gt.graph
    def step(s, w, g):
        s.captured(opt.apply, w, g, reads=[w, g], writes=[w])
    step(w, g)
    assert np.allclose(w.copy_to_host(), 0.95)

    @gt.graph
    def f(s, x, y):
        def region(a, b):
            b[...] = np.cumsum(a).astype(y.dtype)
        s.captured(region, x, y, reads=[x], writes=[y])
    y = cuda.device_array(4)
    f(cuda.to_device(np.ones(4)), y)
    assert y.copy_to_host().tolist() == [1.0, 2.0, 3.0, 4.0]


SCRATCH = cuda.to_device(np.zeros(4))   # a library's scratch, reached by a global name
TABLE = cuda.to_device(np.zeros(4))


def fill_scratch(x):
    SCRATCH[...] = x * 2


def fill_table(x):
    TABLE[...] = x * 3


def read_table(out):
    out[...] = TABLE + 1


@gt.graph
def through_scratch(s, x, out):
    s.captured(fill_scratch, x, reads=[x])
    s.copy(out, SCRATCH)


@gt.graph
def through_table(s, x, out):
    s.captured(fill_table, x, reads=[x])
    s.captured(read_table, out, writes=[out])


def test_a_regions_global_device_arrays_order_it_with_the_nodes_using_them():
    """A region writing an array it reaches by a global name comes before the
    nodes reading it (they raced: no edge, half the simulator's runs wrong)."""
    x = cuda.to_device(np.full(4, 4.0))
    g = through_scratch.trace(x, cuda.device_array(4))
    listing = str(g).splitlines()
    assert "captured fill_scratch(x)  in(x)  inout(SCRATCH, library state)" in listing[1], \
        listing
    assert [[d.index for d in n.deps] for n in g.nodes] == [[], [0]]
    g = through_table.trace(x, cuda.device_array(4))
    assert [[d.index for d in n.deps] for n in g.nodes] == [[], [0]]
    for k in range(8):
        SCRATCH.copy_to_device(np.zeros(4))
        TABLE.copy_to_device(np.zeros(4))
        out, out2 = cuda.device_array(4), cuda.device_array(4)
        x = cuda.to_device(np.full(4, float(k)))
        through_scratch(x, out)
        through_table(x, out2)
        assert out.copy_to_host().tolist() == [2.0 * k] * 4
        assert out2.copy_to_host().tolist() == [3.0 * k + 1] * 4


def test_an_opaque_region_is_not_given_its_globals():
    @gt.graph
    def f(s, x, out):
        s.captured(fill_scratch, x, reads=[x], opaque=True)
        s.copy(out, SCRATCH)
    g = f.trace(cuda.to_device(np.ones(4)), cuda.device_array(4))
    assert "inout(SCRATCH)" not in str(g) and \
        [[d.index for d in n.deps] for n in g.nodes] == [[], [0]]


class _Optimizer:
    def __init__(self):
        self.state = cuda.to_device(np.zeros(4))   # its own state, in no array of the graph

    def write(self, x):
        self.state[...] = x * 2

    def read(self, out):
        out[...] = self.state + 1


OPTIMIZER = _Optimizer()
REFERENCE = cuda.to_device(np.zeros(4))


@cuda.jit
def read_ref(ref, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] += ref[i]


class _Regions:
    def __init__(self, write, read):
        self.write, self.read = write, read


def _closure_optimizer():
    state = cuda.to_device(np.zeros(4))   # in the closure of the functions the object holds

    def write(x):
        state[...] = x * 2

    def read(out):
        out[...] = state + 1
    return _Regions(write, read), state


CLOSURE_OPTIMIZER, CLOSURE_STATE = _closure_optimizer()


@pytest.mark.parametrize("holder, listed", [
    ("OPTIMIZER", "inout(opt.state, library state)"),   # an object of the program's own:
    ("CLOSURE_OPTIMIZER", "inout(state, library state)")])   # its array is the graph's
    # (and that of the closure of a function it holds: the graph calls it as a helper)
def test_regions_sharing_state_their_object_holds_are_ordered(holder, listed):
    """The state an object keeps, in no array of the graph (nor is a library
    handle's workspace), or in an array a global object of the program's own
    holds: regions run in the order they were recorded (two using an
    optimizer's state raced: no edge)."""
    opt = globals()[holder]
    state = OPTIMIZER.state if opt is OPTIMIZER else CLOSURE_STATE

    @gt.graph
    def f(s, x, out):
        s.captured(opt.write, x, reads=[x])
        s.captured(opt.read, out, writes=[out])
    g = f.trace(cuda.to_device(np.ones(4)), cuda.device_array(4))
    assert listed in str(g) and [[d.index for d in n.deps] for n in g.nodes] == [[], [0]]
    for k in range(6):
        state.copy_to_device(np.zeros(4))
        out = cuda.device_array(4)
        f(cuda.to_device(np.full(4, float(k))), out)
        assert out.copy_to_host().tolist() == [2.0 * k + 1] * 4


def test_arrays_a_region_holds_and_is_given_keep_their_declared_intents():
    """A region holding the bytes of an array it is given (x[:], cp.asarray(x)) does
    not write them unless declared; one holding a graph's array for its dtype may
    declare it read."""
    def make(held):
        def region(x, out):
            out[...] = (x + 1).astype(held.dtype)
        return region

    @gt.graph
    def f(s, x, out, y):
        s.captured(make(x[:]), x, out, reads=[x], writes=[out])
        read_ref[1, 4, s](x, y)                          # reads x too: no edge
        read_ref[1, 4, s](REFERENCE, y)
        s.captured(make(REFERENCE), x, out, reads=[x, REFERENCE], writes=[out])
    g = f.trace(cuda.to_device(np.ones(4)), cuda.device_array(4), cuda.to_device(np.zeros(4)))
    listing = str(g).splitlines()
    assert "in(x)  out(out)  inout(library state)  #" in listing[1] and \
        "in(x, REFERENCE)  out(out)  inout(library state)" in listing[4], listing
    assert [[d.index for d in n.deps] for n in g.nodes] == [[], [], [1], [0]]


def test_a_region_is_placed_by_what_it_is_given_and_ordered_by_what_it_reaches():
    table, y = (gt.sim_device(cuda.to_device(np.zeros(4)), 1) for _ in range(2))

    def region(x):
        x[...] = x * 2 + 0 * table.dtype.itemsize

    @gt.graph
    def f(s, x, y):
        read_ref[1, 4, s](table, y)
        s.captured(region, x)
    try:
        g = f.trace(cuda.to_device(np.ones(4)), y)
        assert [n.device for n in g.nodes] == [1, 0] and \
            [[d.index for d in n.deps] for n in g.nodes] == [[], [0]]
    finally:   # the tags last as long as the arrays: later tests see one device
        for a in (table, y):
            b = as_buffer(a)
            _arrays._untag(b.lo, max(b.hi, b.lo + 1))


class _Pair:
    def __init__(self, src, dst, scale=1.0):
        self.src, self.dst, self.scale = src, dst, scale


def _pair_region(p):
    p.dst[...] = p.src * p.scale


@pytest.mark.parametrize("holds", ["array", "array in a list", "number"])
def test_an_object_holding_the_graphs_arrays_or_numbers_is_refused_at_the_line(holds):
    """The region would read them unseen: ordered with nothing, and kept as the
    first call's when a later one brings new arrays or numbers."""
    @gt.graph(backend="sim")
    def g(s, x, y, a):
        if holds == "array":
            s.captured(_pair_region, _Pair(x, y))
        elif holds == "array in a list":
            s.captured(_pair_region, [_Pair(x, y)][0])
        else:
            s.captured(lambda p, y: None, _Pair(None, None, a), y)

    x, y = cuda.to_device(np.ones(4)), cuda.to_device(np.zeros(4))
    with pytest.raises(gt.ArgumentError, match=r"argument 0 of captured region .* holds "
                       r"(an array by its attribute 'src'|the number by its attribute "
                       r"'scale')[^\n]*pass the arrays and numbers themselves") as got:
        g(x, y, 2.0)
    assert "test_captured.py" in str(got.value)


# A region's function that names torch (or cupy) though it is handed the other's
# arrays: torch's work runs on torch's current stream, so unless that stream is
# switched to the capture too, it runs once, when the graph is built, and the
# graph's region is empty (later calls silently keep the first call's result).
_torch = types.ModuleType("torch")
_cupyx = types.ModuleType("cupyx.scipy")


def _cumsum_by_torch(z, u):
    tu = _torch.as_tensor(u)
    tu.copy_(z)


def _by_cupyx(z, u):
    _cupyx.ndimage(z, u)


def _helper_by_torch(z, u):
    _cumsum_by_torch(z, u)


class _CallsTorch:
    def __call__(self, z, u):
        return _cumsum_by_torch(z, u)

    def step(self, z, u):
        return _helper_by_torch(z, u)


_imported = type("cumsum", (), {"__module__": "torch.functional"})()


def _imported_from_torch(z, u):
    _imported(z, u)


def _plain(z, u):
    u[...] = z


# torch reached only through an object the region holds: a module of the user's
# (a subclass of torch's) held as an attribute, or a method whose code names torch
_TorchModule = type("Module", (), {"__module__": "torch.nn.modules.module"})


class _Net(_TorchModule):
    def __call__(self, z, u):
        u[...] = z


class _Model:
    def __init__(self):
        self.net, self.scale = _Net(), 2.0

    def region(self, z, u):
        self.net(z, u)

    def by_method(self, z, u):
        self.forward(z, u)

    def forward(self, z, u):
        _cumsum_by_torch(z, u)


class _Settings:
    def __init__(self):
        self.n, self.name = 3, "plain"

    def region(self, z, u):
        u[...] = z * self.n


_MODEL = _Model()


def _by_a_global_model(z, u):
    _MODEL.net(z, u)


def _held_by_a_closure():
    model = _Model()

    def region(z, u):
        model.net(z, u)
    return region


def _imports_torch(z, u):
    import torch as T   # imported when it runs: torch need not be installed here
    T.cumsum(z, out=u)


def _imports_from_cupyx(z, u):
    from cupyx.scipy import ndimage
    ndimage.uniform_filter(z, output=u)


@pytest.mark.parametrize("fn, libraries", [
    (_imports_torch, {"torch"}), (_imports_from_cupyx, {"cupy"}),
    (_cumsum_by_torch, {"torch"}), (_by_cupyx, {"cupy"}), (_helper_by_torch, {"torch"}),
    (functools.partial(_cumsum_by_torch, 1), {"torch"}), (_CallsTorch(), {"torch"}),
    (_CallsTorch().step, {"torch"}), (_imported_from_torch, {"torch"}), (_plain, set()),
    (lambda z, u: _torch.cumsum(z, out=u), {"torch"}),
    (_Model().region, {"torch"}), (_Model().by_method, {"torch"}), (_Net(), {"torch"}),
    (_by_a_global_model, {"torch"}), (_held_by_a_closure(), {"torch"}),
    (functools.partial(_plain, _Net()), {"torch"}), (_Settings().region, set())])
def test_the_libraries_a_regions_code_names_are_switched_to_the_capture(fn, libraries):
    from graphtrace.ops._library_state import libraries as _named_libraries
    from graphtrace.ops._switching import _libraries
    assert _named_libraries(fn) == libraries
    cupy_array = type("ndarray", (), {"__module__": "cupy"})()
    node = types.SimpleNamespace(target=fn, args=(buffers.Buffer.__new__(buffers.Buffer),))
    node.args[0].obj = cupy_array
    assert _libraries(node) == {"cupy"} | libraries   # the arrays' and the code's


def test_temporaries_are_handed_to_a_region_as_the_library_its_code_names(monkeypatch):
    """A region handed only temporaries whose code is torch's receives torch
    tensors: it received cupy arrays (cupy first where both are imported), on
    which its torch calls failed."""
    from graphtrace.ops._switching import _temporaries_library
    monkeypatch.setitem(sys.modules, "torch", _torch)
    monkeypatch.setitem(sys.modules, "cupy", types.ModuleType("cupy"))
    temporary = buffers.Buffer.__new__(buffers.Buffer)
    temporary.obj = None
    for fn, library in ((_cumsum_by_torch, "torch"), (_imports_torch, "torch"),
                        (_plain, "cupy"), (_by_cupyx, "cupy")):
        node = types.SimpleNamespace(target=fn, args=(temporary,))
        assert _temporaries_library(node) == library, fn


class _FakeTensor:
    __module__ = "torch"   # a library's: not walked as an object of the program's
    is_cuda, grad = True, None

    def __init__(self, ptr):
        self.ptr = ptr

    def data_ptr(self):
        if self.ptr is None:   # as a sparse tensor or an uninitialised parameter
            raise RuntimeError("tensor has no storage")
        return self.ptr


class _FakeModule:
    """As torch.nn.Module keeps them: parameters, buffers and submodules by name."""
    __module__ = "torch.nn.modules.module"

    def __init__(self, weight, running=None, bias=None, **children):
        self._parameters, self._buffers = {"weight": weight, "bias": bias}, {}
        self._modules, self.training = dict(children), True
        if running is not None:
            self._buffers["running"] = running

    def named_modules(self, prefix=""):
        yield prefix, self
        for k, m in self._modules.items():
            yield from m.named_modules(f"{prefix}.{k}" if prefix else k)


class _FakeSGD:
    """As torch.optim.Optimizer keeps them: groups of settings, state per parameter."""
    __module__ = "torch.optim.sgd"

    def __init__(self, params, lr):
        self.param_groups, self.state = [{"params": params, "lr": lr, "momentum": 0.9}], {}


class _FakeStepLR:
    __module__ = "torch.optim.lr_scheduler"

    def __init__(self):
        self.last_epoch, self.base_lrs = 0, [0.1]


def _fake_torch(monkeypatch):
    fake = types.ModuleType("torch")
    fake.nn, fake.Tensor = types.SimpleNamespace(Module=_FakeModule), _FakeTensor
    monkeypatch.setitem(sys.modules, "torch", fake)


def test_the_torch_state_a_region_reaches_is_watched(monkeypatch):
    """The torch objects a region names, closes over, holds (a bound method's
    object, a partial's argument) or reaches in a list or dict by name: the
    parameters, buffers and submodules of each module, its ``training``, an
    optimizer's groups and state, a scheduler's settings. At every launch
    ``CapturedOp.moved`` compares them with what the latest capture depended on,
    so a module given a new weight (a new Parameter, one where there was None, a
    submodule replaced, new memory under the same tensor), switched to eval(),
    or an optimizer's learning rate set, is captured again."""
    from graphtrace.ops._library_state import snapshot, torch_roots
    from graphtrace.ops.captured import CAPTURED
    _fake_torch(monkeypatch)
    w, b, running, held = _FakeTensor(16), _FakeTensor(32), _FakeTensor(48), _FakeTensor(64)
    net = _FakeModule(w, running, norm=_FakeModule(b))
    opt, sched, nets = _FakeSGD([w], 0.1), _FakeStepLR(), {"enc": _FakeModule(held)}

    def by_closure(x, y):
        y[...] = net(x)
        opt.step()
        sched.step()

    class Holder:
        def __init__(self):
            self.net, self.extra, self.scale = _FakeModule(w), held, 2.0

        def step(self, x, y):
            y[...] = self.net(x) * self.scale

    def by_name(x, y):
        y[...] = nets["enc"](x)

    def objects(fn):   # the tensors and the Nones, watched by address or identity
        return [x for how, _, _, x, _, _ in snapshot(torch_roots(fn)) if how in ("at", "same")]

    assert torch_roots(by_closure) == [net, opt, sched]
    assert objects(Holder().step)[:2] == [(w, 16), None]   # weight, bias None
    assert torch_roots(by_name) == [nets["enc"]]
    assert torch_roots(functools.partial(_plain, net)) == [net]
    assert torch_roots(_plain) == []
    changes = {
        "new parameter": lambda: net._modules["norm"]._parameters.__setitem__(
            "weight", _FakeTensor(32)),
        "a bias where there was None": lambda: net._parameters.__setitem__(
            "bias", _FakeTensor(80)),
        "new submodule": lambda: net._modules.__setitem__("norm", _FakeModule(b)),
        "new memory": lambda: setattr(b, "ptr", b.ptr + 8),   # b.data = ...
        "eval()": lambda: setattr(net._modules["norm"], "training", False),
        "a gradient set to None": lambda: setattr(w, "grad", None),
        "a submodule appended": lambda: net._modules.__setitem__("act", _FakeModule(held)),
        "a setting changed": lambda: setattr(net, "negative_slope", 0.5),
        "a learning rate set": lambda: opt.param_groups[0].__setitem__("lr", 0.05),
        "a scheduler stepped": lambda: setattr(sched, "last_epoch", 1)}
    for change, make in changes.items():
        net._modules.pop("act", None)
        net._modules["norm"], net._parameters["bias"] = _FakeModule(b), None
        opt.param_groups[0]["lr"], sched.last_epoch = 0.1, 0
        w.grad, net.negative_slope = _FakeTensor(112), 0.01
        region = types.SimpleNamespace(watched=snapshot(torch_roots(by_closure)),
                                       again_after=None)
        gpu = types.SimpleNamespace(state={3: region}, clock=[5])
        node = types.SimpleNamespace(index=3)
        assert not CAPTURED.moved(gpu, node), change
        make()
        assert CAPTURED.moved(gpu, node), change


def test_a_tensor_without_storage_is_watched_by_identity(monkeypatch):
    """A sparse buffer or an uninitialised parameter has no address to read: it is
    watched by identity, and reading the state does not fail."""
    from graphtrace.ops._library_state import first_change, snapshot
    _fake_torch(monkeypatch)
    sparse = _FakeTensor(None)
    net = _FakeModule(_FakeTensor(16), sparse)
    entries = snapshot([net])
    assert first_change(entries) is None
    net._buffers["running"] = _FakeTensor(None)
    assert first_change(entries) is not None


def test_state_a_region_changes_while_captured_is_named(monkeypatch):
    """What a region's own Python changes in torch's objects while it is captured
    (a scheduler's step, an optimizer's learning rate, state an optimizer makes at
    its first step) is told apart from what its tensors do: a replay would not
    change it again, so the capture is refused naming it."""
    from graphtrace.ops._library_state import describe, first_change, snapshot
    _fake_torch(monkeypatch)
    w = _FakeTensor(16)
    opt, sched = _FakeSGD([w], 0.1), _FakeStepLR()
    before = snapshot([opt, sched])
    w.ptr = 24   # a tensor's new memory is not the region's Python state
    assert first_change(before, ours_only=True) is None
    opt.state[w] = {"momentum_buffer": _FakeTensor(96)}   # made at the first step
    changed = first_change(before, ours_only=True)
    assert "_FakeSGD.state" in describe(changed) and "first use" in describe(changed)
    opt.state.clear()
    opt.param_groups[0]["lr"] = 0.05   # set from the region's argument: captured again
    assert first_change(before, ours_only=True, given=[0.05]) is None
    assert "lr" in describe(first_change(before, ours_only=True, given=[0.5]))
    assert first_change(before, ours_only=True, given=[np.float32(0.25)]) is not None
    opt.param_groups[0]["lr"] = 0.5   # float(lr) of an np.float32 argument
    assert first_change(before, ours_only=True, given=[np.float32(0.5)]) is None
    opt.param_groups[0]["lr"] = 0.1
    sched.last_epoch = 1
    assert describe(first_change(before, ours_only=True)) == "_FakeStepLR.last_epoch (0 -> 1)"


def test_gradients_made_while_captured_capture_the_region_once_more(monkeypatch):
    """A region whose backward makes the first gradients (none before its first
    call): that capture assigned them, which an eager call does only the first
    time. The launch it was made for replays it (that call assigns, as eager); the
    launch after captures again with them there, so a call accumulating into
    them does as eager. That holds for a capture made at the build (before the
    first launch asks) and for one made inside a launch, because the gradients
    were set to None between calls (the launch has asked already: the next one
    must capture again, not the one after). Gradients there before the capture
    ask nothing."""
    from graphtrace.ops._library_state import grown, snapshot
    from graphtrace.ops.captured import CAPTURED
    _fake_torch(monkeypatch)
    w, b = _FakeTensor(16), _FakeTensor(32)
    net = _FakeModule(w, bias=b)
    gpu = types.SimpleNamespace(state={}, clock=[0])
    node = types.SimpleNamespace(index=3)

    def capture():   # what _Region.capture leaves, at the graph's launch count
        before = snapshot([net])
        if w.grad is None:
            w.grad = _FakeTensor(48 + 16 * gpu.clock[0])   # made by its backward
        gpu.state[3] = types.SimpleNamespace(
            watched=snapshot([net]), again_after=gpu.clock[0] if grown(before) else None)

    def launch():    # CompiledGraph.launch: asks, captures again if moved, counts
        asked = CAPTURED.moved(gpu, node)
        if asked:
            capture()
        gpu.clock[0] += 1
        return asked

    capture()                  # the build
    assert not launch()        # call 1: the capture that assigns, as eager
    assert launch()            # call 2: captured again with the gradients there
    assert gpu.state[3].again_after is None
    assert not launch()        # call 3: that capture (accumulating) replayed
    w.grad = None              # zero_grad(set_to_none=True) between calls
    assert launch()            # call 4: moved; the new capture assigns, as eager
    assert gpu.state[3].again_after is not None
    assert launch()            # call 5: captured again, accumulating
    assert not launch()
    before = snapshot([net])   # a capture with the gradient there
    w.grad = _FakeTensor(640)  # zero_grad(set_to_none=True), backward: a new one
    assert grown(before) == []


class _Gone:
    pass


_DEAD = weakref.proxy(_Gone())   # its object collected at once


def _names_a_dead_proxy(z, u):
    _DEAD.x(z, u)


def test_a_region_naming_a_dead_weak_proxy_switches_what_its_arrays_say():
    """A global the region's code names that answers no question (a weak proxy
    whose object is gone raises ReferenceError) names no library."""
    from graphtrace.ops._library_state import libraries
    assert libraries(_names_a_dead_proxy) == set()


def test_cupy_is_handed_the_capture_stream_by_the_stream_protocol():
    """cupy 14 deprecates ExternalStream: the capture's stream goes to cupy through
    Stream.from_external and the CUDA stream protocol where cupy has it, through
    ExternalStream where it does not."""
    from graphtrace.ops._switching import _cupy_stream
    got = []
    new = types.SimpleNamespace(cuda=types.SimpleNamespace(Stream=types.SimpleNamespace(
        from_external=lambda obj: got.append(obj.__cuda_stream__()) or "new")))
    assert _cupy_stream(new, 0x1234, 1) == "new" and got == [(0, 0x1234)]
    old = types.SimpleNamespace(cuda=types.SimpleNamespace(
        Stream=type("Stream", (), {}), ExternalStream=lambda handle, dev: (handle, dev)))
    assert _cupy_stream(old, 0x1234, 1) == (0x1234, 1)


def test_a_grad_scaler_refusal_says_where_its_steps_go(tmp_path):
    """A failure raised inside a GradScaler's code (its step reads on the host
    whether the gradients are finite) says to call step() and update() after
    the graph call; another failure does not."""
    scaler_file = tmp_path / "grad_scaler.py"
    scaler_file.write_text("def step(x):\n    x.synchronize_on_the_host()\n")
    namespace = {}
    exec(compile(scaler_file.read_text(), str(scaler_file), "exec"), namespace)

    @gt.graph
    def f(s, x):
        s.captured(namespace["step"], x)

    node = f.trace(A(4)).nodes[0]
    errors = []
    for target in (namespace["step"], synchronising):
        try:
            target(np.zeros(4))
        except AttributeError as exc:
            errors.append(_capture_error(node, exc).message)
    assert "scaler.step(opt) and scaler.update() after the graph call" in errors[0]
    assert "GradScaler" not in errors[1]


def test_cupy_ffts_in_a_capture_take_plans_from_the_regions_own_cache(monkeypatch):
    """A captured FFT replays its cuFFT plan: while a region is captured cupy's
    FFTs in that thread take plans from a cache of the region's, with no limit,
    one per device, kept with the region; cupy's shared cache (16 plans, evicted
    by eager FFTs of other sizes) answers otherwise: after the capture (also
    after an error), and in another thread, also one capturing another region
    meanwhile (the captures' ends interleaved)."""
    import threading
    pytest.importorskip("cupy")
    fft = pytest.importorskip("cupy.fft._fft")
    import cupy
    from graphtrace.ops._switching import _fft_plans, _PlanCaches
    device = [0]
    monkeypatch.setattr(cupy.cuda.runtime, "getDevice", lambda: device[0])
    region, other = types.SimpleNamespace(fft_plans={}), types.SimpleNamespace(fft_plans={})
    seen = {}

    def capture_other(step):
        with _PlanCaches(other):
            seen["other"] = fft.get_plan_cache()
            ready.set()
            step.wait(10)   # the first capture ends meanwhile
        seen["after"] = getattr(_fft_plans, "caches", None)

    step, ready = threading.Event(), threading.Event()
    first = _PlanCaches(region)
    first.__enter__()
    mine = fft.get_plan_cache()
    assert fft.get_plan_cache() is mine and mine.get_size() == -1
    thread = threading.Thread(target=capture_other, args=(step,))
    thread.start()
    assert ready.wait(10)
    assert fft.get_plan_cache() is mine   # this thread still takes its region's
    first.__exit__(None, None, None)
    assert getattr(_fft_plans, "caches", None) is None   # cupy's shared cache here
    step.set()
    thread.join()
    assert seen["other"] is other.fft_plans[0] and seen["other"] is not mine
    assert seen["after"] is None
    device[0] = 1
    with _PlanCaches(region):
        second = fft.get_plan_cache()
    assert region.fft_plans == {0: mine, 1: second} and mine is not second
    with pytest.raises(ZeroDivisionError):
        with _PlanCaches(region):
            assert fft.get_plan_cache() is second
            1 / 0
    assert getattr(_fft_plans, "caches", None) is None
    assert callable(fft.get_plan_cache.shared)   # cupy's own, answering outside captures


def test_a_capture_a_child_graph_cannot_hold_is_named():
    """A library that allocates stream-ordered while captured leaves nodes a
    child graph may not hold: embedding fails, and the error names the region,
    its line, the kinds of node and what to do; a failure with none of them (or
    a graph that cannot be listed) is the driver's own, for the emitter's error."""
    from graphtrace.ops.captured import CAPTURED, _unnestable
    AllocNode = type("AllocNode", (), {})
    KernelNode = type("KernelNode", (), {})
    FreeNode = type("FreeNode", (), {})
    EventRecordNode = type("EventRecordNode", (), {})
    with_memory = types.SimpleNamespace(nodes=lambda: [KernelNode(), FreeNode(), AllocNode()])
    plain = types.SimpleNamespace(nodes=lambda: [KernelNode(), EventRecordNode()])
    assert _unnestable(with_memory) == ["AllocNode", "FreeNode"]
    assert _unnestable(plain) == []
    assert _unnestable(types.SimpleNamespace()) == []   # no way to list: the plain error

    @gt.graph
    def f(s, x):
        s.captured(synchronising, x)   # region of unnestable nodes

    node = f.trace(A(4)).nodes[0]

    def refused(*args):
        raise RuntimeError("CUDA_ERROR_NOT_SUPPORTED")

    for definition, raised in ((with_memory, gt.CaptureError), (plain, RuntimeError)):
        region = types.SimpleNamespace(capture=lambda gpu, node, d=definition: d,
                                       watched=[], again_after=None)
        gpu = types.SimpleNamespace(state={node.index: region})
        with pytest.raises(raised) as e:
            CAPTURED.emit(gpu, node, types.SimpleNamespace(embed=refused))
        if raised is gt.CaptureError:
            said = str(e.value)
            assert "captured region synchronising" in said and "AllocNode and FreeNode" in said
            assert "outside the graph" in said and "CUDA_ERROR_NOT_SUPPORTED" in said
            assert e.value.source == (F, line_of(F, "region of unnestable nodes"))


def test_a_capture_making_gradients_keeps_the_launch_count_it_was_made_at(monkeypatch):
    """``_Region.capture`` itself (with a stand-in builder): a capture whose
    function makes the first gradients keeps the graph's launch count then, so
    ``moved`` captures again at the next launch; one with them there keeps none."""
    import contextlib
    from graphtrace.ops import captured
    _fake_torch(monkeypatch)
    monkeypatch.setattr(captured, "current", lambda device: contextlib.nullcontext())
    w = _FakeTensor(16)
    net = _FakeModule(w)

    def backward():   # the region: its backward makes w.grad if there is none
        if w.grad is None:
            w.grad = _FakeTensor(48)

    builder = types.SimpleNamespace(
        stream=types.SimpleNamespace(handle=7), graph_definition="captured",
        begin_building=lambda: None, end_building=lambda: None, close=lambda: None)
    region = object.__new__(captured._Region)
    region.device = types.SimpleNamespace(device_id=0)
    region.stream = types.SimpleNamespace(create_graph_builder=lambda: builder)
    region.others, region.libraries, region.roots = None, set(), [net]
    region.fft_plans, region.watched, region.again_after = {}, [], None
    node = types.SimpleNamespace(args=(), target=backward, source=None, index=0)
    gpu = types.SimpleNamespace(clock=[3], state={0: region}, value_of=lambda v: v)
    assert region.capture(gpu, node) == "captured"
    assert region.again_after == 3
    assert not captured.CAPTURED.moved(gpu, node)   # the launch it was made for
    gpu.clock[0] = 4
    assert captured.CAPTURED.moved(gpu, node)       # the next: captured again
    region.capture(gpu, node)
    assert region.again_after is None   # the gradient was there
    gpu.clock[0] = 9
    assert not captured.CAPTURED.moved(gpu, node)

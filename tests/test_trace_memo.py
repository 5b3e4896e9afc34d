"""A launch whose arguments are the objects of an earlier launch of its kernel
reuses what that one recorded (``Tracer.add``, ``Tracer.again``): the graph must be the one
traced with every launch looked into afresh."""
import contextlib

import pytest
from hypothesis import given, settings, strategies as st

import graphtrace as gt
from graphtrace import trace as _trace
from graphtrace.ops import kernel as _kernel
from graphtrace.ops._numba_launch import _ProxyLaunch
from graphtrace.ops.kernel import Adapter
from helpers import FakeDeviceArray as A, any_kernel

# launches recorded by the compiled path (_speedups.c) and by pure Python
pytestmark = pytest.mark.usefixtures("both_launch_paths")

KERNELS = [Adapter(None, "rw", ["x", "y"], ["r", "w"]),
           Adapter(None, "wr", ["x", "y"], ["w", "r"]),
           Adapter(None, "k3", ["x", "a", "y"], ["r", "r", "rw"]),
           any_kernel("any")]


class _Everything:
    def __contains__(self, item):
        return True


@contextlib.contextmanager
def _afresh():
    """Trace with no launch reusing another's record."""
    init = _trace.Tracer.__init__

    def __init__(self, *a, **kw):
        init(self, *a, **kw)
        self.memo_off = _Everything()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_trace.Tracer, "__init__", __init__)
        yield


def _program(steps):
    """A function replaying ``steps``: (kernel, argument picks, where) of a pool
    of arrays, views of them made again at each launch, and numbers (one of
    them a new float object at each launch), launched on the stream, a forked
    one, one bound to device 0, a loop's body, with a tuple grid, with
    ``shared_mem`` given, or in ``kernel[grid, block, s]`` form."""
    def f(s, x, y, z):
        pool = [lambda: x, lambda: y, lambda: z, lambda: x[0:8], lambda: y[8:16],
                lambda: 2.0, lambda: 7, lambda: float(len(steps))]
        other, on0 = s.fork(), s.on(0)
        for k, picks, where in steps:
            kern = KERNELS[k]
            n = 3 if kern.name == "k3" else 2
            args = [pool[p]() for p in (picks * 2)[:n]]
            if where == 0:
                s.launch(kern, 1, 32, *args)
            elif where == 1:
                other.launch(kern, 1, 32, *args)
            elif where == 2:
                on0.launch(kern, 1, 32, *args)
            elif where == 3:
                with s.while_loop(gt.cond(z[0:1]) > 0, max_iterations=3) as body:
                    body.launch(kern, 1, 32, *args)
                    body.launch(kern, 1, 32, *args)
            elif where == 4:
                s.launch(kern, (1, 1), (32,), *args)
            elif where == 5:
                s.launch(kern, 1, 32, *args, shared_mem=0)
            else:
                _ProxyLaunch((kern, 1, 32, s, 0))(*args)   # what kernel[1, 32, s](...) does
        s.join(other)
    return gt.graph(f)


STEPS = st.lists(st.tuples(st.integers(0, len(KERNELS) - 1),
                           st.lists(st.integers(0, 7), min_size=2, max_size=3),
                           st.integers(0, 6)), max_size=40)


# the memo's size and the misses after which a kernel leaves it: as shipped, and tiny
MEMO_SIZES = st.sampled_from([_trace._MEMO_SIZE, 2])
MEMO_MISSES = st.sampled_from([_trace._MEMO_MISSES, 1])


@contextlib.contextmanager
def memo_limits(size, misses):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_trace, "_MEMO_SIZE", size)
        mp.setattr(_trace, "_MEMO_MISSES", misses)
        yield


@settings(max_examples=200, deadline=None)
@given(STEPS, MEMO_SIZES, MEMO_MISSES)
def test_reused_launches_record_what_fresh_ones_do(steps, size, misses):
    arrays = [A(64), A(64), A(64)]
    with memo_limits(size, misses):
        reused = str(_program(steps).trace(*arrays))
    with _afresh():
        assert str(_program(steps).trace(*arrays)) == reused


def test_arguments_in_another_order_are_another_launch():
    x, y = A(64), A(64)

    @gt.graph
    def f(s, x, y):
        for _ in range(2):
            s.launch(KERNELS[0], 1, 32, x, y)
            s.launch(KERNELS[0], 1, 32, y, x)
    lines = str(f.trace(x, y)).splitlines()[1:]
    assert len(lines) == 4
    for ln, want in zip(lines, ["in(x)  out(y)", "in(y)  out(x)"] * 2):
        assert want in ln, ln



class Typed(A):
    """A fake whose type has the interface, as cupy's and numba's arrays do (their
    views made again are known by geometry)."""

    __cuda_array_interface__ = property(lambda self: self._cai,
                                        lambda self, cai: setattr(self, "_cai", cai))

    def view(self, offset_bytes, shape, strides=None, dtype=None):
        return Typed(shape, dtype or self.dtype, self.ptr + offset_bytes, strides)


def test_views_made_at_every_launch_are_not_kept_alive_while_tracing():
    import gc
    import weakref
    x, alive = Typed(1024), []

    @gt.graph
    def f(s, x):
        refs = []
        for i in range(300):
            v = x[i % 4 * 8:i % 4 * 8 + 8]
            refs.append(weakref.ref(v))
            s.launch(KERNELS[0], 1, 32, v, x)
        del v
        gc.collect()
        alive.append(sum(r() is not None for r in refs))
    f.trace(x)
    assert alive == [4]   # the first view of each of the 4 places names its Buffer


def _looked_into(monkeypatch) -> list:
    """The launches whose arguments the tracer looks into (``Tracer._arguments``, or
    its compiled form, which hands it the launches it does not take). Launches
    the memo does not answer are made to take the Python path, where they are
    counted: the compiled one looks into them inside ``_speedups.c`` (it finds
    no launch kind known: ``forget_kinds``)."""
    calls = []
    look, fast = _trace.Tracer._arguments, _trace._fast_arguments

    def counting(self, args, modes):
        calls.append(len(args))
        return look(self, args, modes)

    def counting_fast(self, args, modes):
        got = fast(self, args, modes)
        if got is not None:
            calls.append(len(args))
        return got
    monkeypatch.setattr(_trace.Tracer, "_arguments", counting)
    if fast is not None:
        monkeypatch.setattr(_trace, "_fast_arguments", counting_fast)
    return calls


def forget_kinds() -> None:
    """Launches of no known kind take the Python path unless the memo answers."""
    _kernel._launches.clear()


def test_a_launch_with_the_objects_of_an_earlier_one_is_not_looked_into_again(monkeypatch):
    calls = _looked_into(monkeypatch)
    x, y = A(64), A(64)

    @gt.graph
    def f(s, x, y):
        for _ in range(50):
            forget_kinds()
            s.launch(KERNELS[0], 1, 32, x, y)
            forget_kinds()
            _ProxyLaunch((KERNELS[2], 1, 32, s, 0))(x, 2.0, y)   # kernel[1, 32, s](...)
    g = f.trace(x, y)
    assert len(g.nodes) == 100
    assert calls == [2, 3]   # the first launch of each form only


def test_kernels_whose_launches_are_never_the_same_are_no_longer_remembered(monkeypatch):
    monkeypatch.setattr(_trace, "_MEMO_SIZE", 8)
    x, y = A(64), A(64)
    pairs = [(A(64), A(64)) for _ in range(40)]
    seen = {}

    @gt.graph
    def f(s, x, y, pairs):
        for i in range(40):   # a view made at every launch
            s.launch(KERNELS[0], 1, 32, x[i:i + 1], y)
        for a, b in pairs:    # arrays of its own at every launch
            s.launch(KERNELS[1], 1, 32, a, b)
        tracer = s.tracer()
        seen["off"] = {k.name for k in KERNELS[:2] if id(k) in tracer.memo_off}
    monkeypatch.setattr(_trace, "_MEMO_MISSES", 16)
    g = f.trace(x, y, pairs)
    assert len(g.nodes) == 80
    assert seen["off"] == {"rw", "wr"}

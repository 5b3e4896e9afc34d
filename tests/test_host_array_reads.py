"""Numbers the traced code reads off a host numpy array in the other ways a user
writes a constant read (``W[1][2]``, ``LR.item(0)``, ``LR[I]`` with ``I =
np.int64(0)``, ``LR.flat[0]``) or reduces it whole (``LR.sum()``, ``LR.max()``),
the array held by a global name, ``self`` or an argument object and changed in
place between calls: keyed by value as ``LR[0]`` is, so the next call traces
anew and gives what eager numpy gives, instead of replaying the first value.

On the simulator, where results can be read back.
"""
import types

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt


@cuda.jit
def put(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v


def first(a):
    return float(a.copy_to_host()[0])


LR = np.array([0.1])
W = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
STEPS = np.array([3])
I = np.int64(0)
J = np.intp(2)


def _run(step, w, change, n=3, *args):
    got = []
    for _ in range(n):
        step(w, *args)
        got.append(first(w))
        change()
    return got


@pytest.fixture(autouse=True)
def _reset():
    LR[:] = 0.1
    W[:] = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    STEPS[:] = 3
    yield


def _bump_lr():
    LR[0] += 1.0


def _bump_w12():
    W[1, 2] += 1.0


def test_chained_constant_indexes_of_a_global_host_array_are_keyed_by_value():
    @gt.graph(backend="sim")
    def step(s, w):
        put[1, 32, s](w, float(W[1][2]))

    assert _run(step, cuda.device_array(4), _bump_w12) == [6.0, 7.0, 8.0]


def test_chained_indexes_of_a_row_other_than_the_one_changed_keep_their_graph():
    @gt.graph(backend="sim")
    def step(s, w):
        put[1, 32, s](w, float(W[1][0]))

    assert _run(step, cuda.device_array(4), _bump_w12) == [4.0, 4.0, 4.0]
    assert step.cache_info().misses == 1


def test_item_of_a_global_host_array_is_keyed_by_value():
    @gt.graph(backend="sim")
    def step(s, w):
        put[1, 32, s](w, LR.item(0))

    assert _run(step, cuda.device_array(4), _bump_lr) == [0.1, 1.1, 2.1]


def test_item_without_index_of_a_one_element_global_host_array_is_keyed_by_value():
    @gt.graph(backend="sim")
    def step(s, w):
        put[1, 32, s](w, LR.item())

    assert _run(step, cuda.device_array(4), _bump_lr) == [0.1, 1.1, 2.1]


def test_item_by_several_indexes_of_a_global_host_array_is_keyed_by_value():
    @gt.graph(backend="sim")
    def step(s, w):
        put[1, 32, s](w, W.item(1, 2) + W.item((0, 1)) + W.item(5))

    assert _run(step, cuda.device_array(4), _bump_w12) == [14.0, 16.0, 18.0]


def test_a_numpy_integer_constant_index_of_a_global_host_array_is_keyed_by_value():
    @gt.graph(backend="sim")
    def step(s, w):
        put[1, 32, s](w, float(LR[I]) + float(W[1][J]))

    turn = []

    def change():   # one array, then the other
        turn.append(None)
        _bump_lr() if len(turn) % 2 else _bump_w12()

    assert _run(step, cuda.device_array(4), change, 4) == pytest.approx([6.1, 7.1, 8.1, 9.1])


def test_a_numpy_integer_made_in_the_index_of_a_global_host_array_is_keyed_by_value():
    @gt.graph(backend="sim")
    def step(s, w):
        put[1, 32, s](w, float(LR[np.int64(0)]))

    assert _run(step, cuda.device_array(4), _bump_lr) == [0.1, 1.1, 2.1]


def test_flat_item_of_a_global_host_array_is_keyed_by_value():
    @gt.graph(backend="sim")
    def step(s, w):
        put[1, 32, s](w, float(W.flat[5]))

    assert _run(step, cuda.device_array(4), _bump_w12) == [6.0, 7.0, 8.0]


def test_a_rows_reduction_and_an_item_of_the_transpose_of_a_global_host_array_are_keyed():
    @gt.graph(backend="sim")
    def step(s, w):
        put[1, 32, s](w, float(W[1].sum()) + float(W.T[2, 1]))

    assert _run(step, cuda.device_array(4), _bump_w12) == [21.0, 23.0, 25.0]


def test_negative_index_item_of_item_and_int_of_a_global_host_array_are_keyed():
    @gt.graph(backend="sim")
    def step(s, w):
        put[1, 32, s](w, float(W[-1][-1]) + LR[0].item() + int(STEPS[0]))

    def change():
        W[1, 2] += 1.0
        LR[0] += 1.0
        STEPS[0] += 1

    assert _run(step, cuda.device_array(4), change) == [9.1, 12.1, 15.1]


def _reduced(how):
    @gt.graph(backend="sim")
    def by_sum(s, w):
        put[1, 32, s](w, float(W.sum()))

    @gt.graph(backend="sim")
    def by_max(s, w):
        put[1, 32, s](w, float(W.max()))

    @gt.graph(backend="sim")
    def by_min(s, w):
        put[1, 32, s](w, float(W.min()))

    @gt.graph(backend="sim")
    def by_mean(s, w):
        put[1, 32, s](w, float(W.mean()))
    return locals()["by_" + how]


def _spread():
    W[1, 2] += 6.0
    W[0, 0] -= 1.0


@pytest.mark.parametrize("how", ["sum", "max", "min", "mean"])
def test_a_reduction_of_a_global_host_array_is_keyed_by_value(how):
    got = _run(_reduced(how), cuda.device_array(4), _spread)
    W[:] = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    want = []
    for _ in range(3):
        want.append(float(getattr(W, how)()))
        _spread()
    assert got == pytest.approx(want)
    assert len(set(want)) == 3


def test_a_decision_on_an_item_of_a_global_host_array_follows_its_value():
    @gt.graph(backend="sim")
    def step(s, w):
        if LR.item(0) > 0.5:
            put[1, 32, s](w, 1.0)
        else:
            put[1, 32, s](w, 2.0)

    assert _run(step, cuda.device_array(4), _bump_lr) == [2.0, 1.0, 1.0]


def test_an_unchanged_host_array_read_these_ways_keeps_its_graph():
    @gt.graph(backend="sim")
    def step(s, w):
        put[1, 32, s](w, float(W[1][2]) + LR.item(0) + float(LR[I]) + float(W.sum()))

    w = cuda.device_array(4)
    for _ in range(4):
        step(w)
    assert first(w) == pytest.approx(6.0 + 0.1 + 0.1 + 21.0)
    assert step.cache_info().misses == 1


class _Model:
    def __init__(self):
        self.lr, self.w = np.array([0.1]), cuda.device_array(4)

    @gt.graph(backend="sim")
    def by_item(self, s):
        put[1, 32, s](self.w, self.lr.item(0))

    @gt.graph(backend="sim")
    def by_sum(self, s):
        put[1, 32, s](self.w, float(self.lr.sum()))


@pytest.mark.parametrize("method", ["by_item", "by_sum"])
def test_an_item_or_reduction_of_a_host_array_self_holds_is_keyed_by_value(method):
    m = _Model()
    got = []
    for lr in (0.1, 0.2, 0.3):
        m.lr[0] = lr
        getattr(m, method)()
        got.append(first(m.w))
    assert got == [0.1, 0.2, 0.3]


def test_reads_of_a_host_array_an_argument_object_holds_are_keyed_by_value():
    @gt.graph(backend="sim")
    def step(s, w, cfg):
        put[1, 32, s](w, cfg.lr.item(0) + float(cfg.lr[I]) + float(cfg.lr.max()) +
                      float(cfg.w[1][2]))

    w = cuda.device_array(4)
    cfg = types.SimpleNamespace(lr=np.array([0.1]), w=W.copy())
    got = []
    for lr in (0.1, 0.2, 0.3, 0.2):
        cfg.lr[0] = lr
        step(w, cfg)
        got.append(first(w))
    assert got == pytest.approx([6.3, 6.6, 6.9, 6.6])
    assert step.cache_info().misses == 3


class _Stats:
    """Not an array: its sum() has effects, which no key may run."""

    def __init__(self):
        self.calls = 0

    def sum(self):
        self.calls += 1
        return 1.0


STATS = _Stats()


def test_a_sum_method_of_an_object_that_is_no_array_is_not_run_to_key_a_call():
    @gt.graph(backend="sim")
    def step(s, w):
        put[1, 32, s](w, STATS.sum())

    w = cuda.device_array(4)
    for _ in range(3):
        step(w)
    assert STATS.calls == 1


class _Scaled:
    def __init__(self):
        self.lr, self.w = np.array([0.1, 0.0]), cuda.device_array(4)

    @gt.graph(backend="sim")
    def step(self, s, cfg):
        put[1, 32, s](self.w, float(np.sum(LR)) + float(np.max(self.lr)) +
                      float(np.mean(cfg.lr)))


def test_numpys_reduction_functions_of_a_host_array_are_keyed_as_its_methods():
    m, cfg = _Scaled(), types.SimpleNamespace(lr=np.array([1.0, 3.0]))
    got = []
    for k in range(3):
        LR[0], m.lr[0], cfg.lr[0] = 0.5 * k, 10.0 * k, 1.0 + 2.0 * k
        m.step(cfg)
        got.append(first(m.w))
    assert got == pytest.approx([2.0, 13.5, 25.0])


LR0 = np.array(0.5)   # a 0-d cell


def _float_of_cell(s, w):
    put[1, 32, s](w, float(LR0))


def _int_of_cell(s, w):
    put[1, 32, s](w, int(LR0))


def _index_of_cell(s, w):
    put[1, 32, s](w, LR0[()])


def _item_of_cell(s, w):
    put[1, 32, s](w, LR0.item())


@pytest.mark.parametrize("fn", [_float_of_cell, _int_of_cell, _index_of_cell, _item_of_cell])
def test_the_number_of_a_zero_dimensional_global_array_is_keyed_by_value(fn):
    """``float(LR0)``, ``LR0[()]``, ``LR0.item()`` of a 0-d array (a learning-rate
    cell set in place): keyed as ``LR[0]`` is. ``float(LR0)`` was baked in."""
    step = gt.graph(backend="sim")(fn)

    def bump():
        LR0[()] += 1.0
    LR0[()] = 0.5
    got = _run(step, cuda.device_array(4), bump)
    assert got == ([0.0, 1.0, 2.0] if fn is _int_of_cell else [0.5, 1.5, 2.5]), got


def test_float_of_a_global_number_or_object_reads_as_before():
    """A conversion of what is no array keeps the chain's value as it is: a
    number by value (a new one traces anew), an object of the program's own as
    before (its __float__ run by the trace, the object keyed as it was)."""
    @gt.graph(backend="sim")
    def step(s, w):
        put[1, 32, s](w, float(NUM))

    global NUM
    NUM = 1.0
    w = cuda.device_array(4)
    step(w)
    NUM = 3.0
    step(w)
    assert first(w) == 3.0


BIG = np.ones(8192)
EMPTY = [np.zeros(0)]


def test_a_reduction_the_code_guards_by_a_test_is_not_read_of_an_empty_array():
    """``if W.size: ... W.mean()``: the key read W.mean() of the empty W at every
    call, giving numpy's warnings (an error under -W error) the program never
    gives; an empty array's reduction is not read."""
    @gt.graph(backend="sim")
    def step(s, w):
        a = EMPTY[0]
        put[1, 32, s](w, float(a.mean()) if a.size else -1.0)

    w = cuda.device_array(4)
    step(w)
    EMPTY[0] = np.zeros(0)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        step(w)
        step(w)
    assert first(w) == -1.0


def test_a_reduction_of_a_large_array_is_keyed_by_value_too():
    """A reduction of a large host table changed in place (``W.mean()`` of 8192
    elements): read at every call, as a small one's; not reading it past a size
    replayed the first call's value in silence."""
    @gt.graph(backend="sim")
    def step(s, w):
        put[1, 32, s](w, float(BIG.mean()) + float(BIG.max()))

    w = cuda.device_array(4)
    got = []
    for v in (1.0, 2.0, 3.0):
        BIG[:] = v
        step(w)
        got.append(first(w))
    assert got == [2.0, 4.0, 6.0]
    BIG[:] = 1.0

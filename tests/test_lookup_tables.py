"""Large containers of numbers reached by name and read by a variable index or key
(a host-side lookup table): keyed whole by value, so that a change in place traces
anew. Their keys are made in a few passes over the types and values; where the
values are of several types, or of one that no such pass keys (complex), the
value-by-value form keys them: either way the same calls trace anew."""
import math

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace import regions, values
from graphtrace.scalar import value_key
from helpers import compiled_buffers


WALKS = [False] + ([True] if regions._BUFFERS is not None else [])
N = 100_000


@cuda.jit
def put(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v


def dev():
    return cuda.to_device(np.zeros(2, np.float64))


TABLE = []
BY_KEY = {}
MIXED = []


@gt.graph(backend="sim", static=("n",))
def from_table(s, out, n):
    put[1, 2, s](out, TABLE[n])


@gt.graph(backend="sim", static=("n",))
def from_dict(s, out, n):
    put[1, 2, s](out, BY_KEY[n])


@gt.graph(backend="sim", static=("n",))
def from_mixed(s, out, n):
    put[1, 2, s](out, MIXED[n] if type(MIXED[n]) is not str else -1.0)


def _read(f, out, n):
    f(out, n)
    return out.copy_to_host().tolist()


@pytest.mark.parametrize("walk", WALKS)
def test_a_large_global_list_of_numbers_changed_in_place_traces_anew(walk):
    """An item changed, or one appended, in a list of 100k floats read by index: the
    next call traces anew (the shortcut's identity check and the whole key agree)."""
    global TABLE
    TABLE = [float(i) for i in range(N)]
    from_table.clear_cache()
    out = dev()
    with compiled_buffers(walk):
        assert _read(from_table, out, 5) == [5.0, 5.0]
        assert _read(from_table, out, 5) == [5.0, 5.0]
        assert from_table.cache_info().misses == 1
        TABLE[5] = 3.0
        assert _read(from_table, out, 5) == [3.0, 3.0]
        assert from_table.cache_info().misses == 2
        TABLE[N - 1] = 7.0   # an item the trace did not read: the key holds it too
        assert _read(from_table, out, 5) == [3.0, 3.0]
        assert from_table.cache_info().misses == 3
        TABLE.append(1.5)
        assert _read(from_table, out, 5) == [3.0, 3.0]
        assert from_table.cache_info().misses == 4
        assert _read(from_table, out, N) == [1.5, 1.5]
        TABLE[5] = 5.0
        TABLE[N - 1] = float(N - 1)
        TABLE.pop()   # back as it was first: the first graph, no trace
        misses = from_table.cache_info().misses
        assert _read(from_table, out, 5) == [5.0, 5.0]
        assert from_table.cache_info().misses == misses
        TABLE[0] = -0.0   # equal to 0.0, but a kernel tells them apart
        assert _read(from_table, out, 5) == [5.0, 5.0]
        assert from_table.cache_info().misses == misses + 1
        TABLE[5] = 5   # an int equal to the float it replaces
        assert _read(from_table, out, 5) == [5.0, 5.0]
        assert from_table.cache_info().misses == misses + 2


@pytest.mark.parametrize("walk", WALKS)
def test_a_large_global_dict_of_numbers_changed_in_place_traces_anew(walk):
    """An item changed, or a key added, in a dict of 100k numbers read by key."""
    global BY_KEY
    BY_KEY = {i: i * 0.5 for i in range(N)}
    from_dict.clear_cache()
    out = dev()
    with compiled_buffers(walk):
        assert _read(from_dict, out, 4) == [2.0, 2.0]
        assert _read(from_dict, out, 4) == [2.0, 2.0]
        assert from_dict.cache_info().misses == 1
        BY_KEY[4] = 9.0
        assert _read(from_dict, out, 4) == [9.0, 9.0]
        assert from_dict.cache_info().misses == 2
        BY_KEY[N] = 1.0
        assert _read(from_dict, out, 4) == [9.0, 9.0]
        assert from_dict.cache_info().misses == 3


@pytest.mark.parametrize("walk", WALKS)
@pytest.mark.parametrize("items", ["mixed", "complex", "nan"])
def test_a_large_global_list_of_values_of_several_types_is_keyed_by_each(walk, items):
    """Ints, floats, strings and None together (or complex numbers, or NaNs): each
    value and its type key the graph; an equal value of another type, or a NaN
    replaced by another NaN object, tells as it does in a short list."""
    global MIXED
    n = N // 5   # (keyed value by value: a fifth of the size tells as well)
    MIXED = [1, 2.0, "a", None] * (n // 4) if items == "mixed" else \
        [complex(i, 1) for i in range(n)] if items == "complex" else [math.nan] * n
    MIXED[1] = 2.0
    from_mixed.clear_cache()
    out = dev()
    with compiled_buffers(walk):
        first = _read(from_mixed, out, 1)
        assert first == [2.0, 2.0]
        assert _read(from_mixed, out, 1) == first
        assert from_mixed.cache_info().misses == 1
        MIXED[7] = float("nan") if items == "nan" else MIXED[7]   # another NaN object
        MIXED[1] = 2.0   # another float object, equal: the same graph
        assert _read(from_mixed, out, 1) == first
        assert from_mixed.cache_info().misses == 1
        MIXED[1] = 2   # equal, of another type: another graph
        assert _read(from_mixed, out, 1) == first
        assert from_mixed.cache_info().misses == 2
        MIXED[-1] = -0.0 if items != "mixed" else "b"
        assert _read(from_mixed, out, 1) == first
        assert from_mixed.cache_info().misses == 3


def _per_value(v):
    """The value-by-value typed form of a tuple or frozenset (``values._typed`` for
    short ones)."""
    if type(v) is tuple:
        return (tuple, tuple(map(_per_value, v)))
    if type(v) is frozenset:
        return (frozenset, frozenset(map(_per_value, v)))
    return (type(v), value_key(v))


POOL = [0.0, -0.0, 1.0, math.nan, float("nan"), -math.nan, math.inf, -math.inf, 1, 0, True,
        False, "a", b"a", None, 2.5, 1 + 0j, 10 ** 30, (1, 2.0), (1, 2), ("a", -0.0), (0.0, 1),
        (1, 2, 3), ()]


@pytest.mark.parametrize("walk", WALKS)
@pytest.mark.parametrize("seed", range(2))
def test_long_tuples_are_equal_as_typed_where_each_value_and_type_is(seed, walk):
    """A long tuple or frozenset of values of one type, typed at once (its types and
    bits read by ``_buffers.c`` or in Python), is equal to another (and hashes
    alike) exactly where the value-by-value forms are; and ``whole_key`` keys a
    list or a dict as ``pure_values`` and ``_Held`` do."""
    with compiled_buffers(walk):
        _compare_typed(np.random.default_rng(seed))


def _compare_typed(rng):
    for _ in range(250):
        n = int(rng.choice([values._RUN, values._RUN + 1, 100]))
        kinds = [POOL[i] for i in rng.choice(len(POOL), int(rng.integers(1, 4)),
                                              replace=False)]
        a = [kinds[i] for i in rng.integers(0, len(kinds), n)]
        b = list(a)
        if rng.random() < 0.7:
            b[int(rng.integers(n))] = kinds[int(rng.integers(len(kinds)))]
        for x, y in ((tuple(a), tuple(b)), (frozenset(a), frozenset(b))):
            same = _per_value(x) == _per_value(y)
            assert (values._typed(x) == values._typed(y)) == same, (x, y)
            assert not same or hash(values._typed(x)) == hash(values._typed(y))
        for x, y in ((a, b), (dict(enumerate(a)), dict(enumerate(b)))):
            held = values._Held(values.pure_values(x))
            assert values.whole_key(x) == held and hash(values.whole_key(x)) == hash(held)
            assert (values.whole_key(x) == values.whole_key(y)) == \
                (_per_value(values.pure_values(x)) == _per_value(values.pure_values(y)))

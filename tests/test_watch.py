"""The call path's watch over names that hold containers of arrays, and values
(numbers, strings, tuples of them) reached by name.

``values.identities`` lists what the arrays found in a container
(``values._leaves``) depend on; ``values.unchanged`` compares a container with
such a list. The repeated-call shortcut relies on one thing: where ``unchanged``
says so, the leaves are the same arrays under the same labels. The compiled
walk (``_buffers.c``) and the Python one must agree.
"""
import collections
import dataclasses
import enum
import types

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from numba import cuda

import graphtrace as gt
from graphtrace import regions, values
from helpers import FakeDeviceArray, compiled_buffers, line_of


WALKS = [False] + ([True] if regions._BUFFERS is not None else [])


class Named(tuple):
    """A tuple subclass: the Python path walks it, the watch does not vouch for it."""


ARRAYS = [FakeDeviceArray(4) for _ in range(4)]
KEYS = ["a", "b", 7, (1, 2)]
VALUES = st.recursive(
    st.sampled_from(ARRAYS + [None, 3, "text", 2.5]),
    lambda inner: st.lists(inner, max_size=4) | st.lists(inner, max_size=3).map(tuple) |
    st.lists(inner, max_size=2).map(Named) |
    st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
    max_leaves=20)


def _rebuilt(v):
    """The same leaves in new containers (a subclass kept as it is)."""
    if type(v) is dict:
        return {k: _rebuilt(x) for k, x in v.items()}
    if type(v) in (list, tuple):
        return type(v)(_rebuilt(x) for x in v)
    return v


def _containers(v, out):
    if type(v) in (list, dict):
        out.append(v)
    for x in (v.values() if isinstance(v, dict) else v if isinstance(v, (list, tuple)) else ()):
        _containers(x, out)
    return out


def _mutate(v, how, pick, other):
    """Change one list or dict inside ``v`` in place; False where there is none."""
    places = [c for c in _containers(v, []) if c]
    if not places:
        return False
    c = places[pick % len(places)]
    keys = list(c) if isinstance(c, dict) else list(range(len(c)))
    k = keys[pick % len(keys)]
    if how == "item":
        c[k] = other
    elif how == "drop":
        del c[k]
    elif how == "key" and isinstance(c, dict):
        c["renamed" if k != "renamed" else "again"] = c.pop(k)
    elif how == "swap" and len(keys) > 1:
        j = keys[(pick + 1) % len(keys)]
        c[k], c[j] = c[j], c[k]
    elif how == "nest":
        c[k] = [c[k]]
    else:
        c[k] = other
    return True


def _leaves(v):
    return [(label, id(a)) for label, a in values._leaves(v, "v")]


@settings(max_examples=300, deadline=None)
@given(VALUES, st.integers(0, 10))
def test_both_walks_list_the_same_identities(v, depth):
    got = []
    for on in WALKS:
        with compiled_buffers(on):
            out = []
            got.append((values.identities(v, out, depth), [id(x) for x in out]))
    assert all(g == got[0] for g in got)


@settings(max_examples=400, deadline=None)
@given(VALUES, st.sampled_from(["item", "drop", "key", "swap", "nest", "none"]),
       st.integers(0, 50), st.sampled_from(ARRAYS + [None, 4, "other"]))
def test_unchanged_means_the_same_leaves(v, how, pick, other):
    """Held before a change, compared after it: both walks answer alike, and an
    answer of unchanged means the same arrays under the same labels."""
    held, before = [], _leaves(v)
    complete = values.identities(v, held)
    if not complete:   # never compared: the call path takes the full check
        return
    if how != "none":
        _mutate(v, how, pick, other)
    answers = set()
    for on in WALKS:
        with compiled_buffers(on):
            answers.add(values.unchanged(v, held))
    assert len(answers) == 1
    if answers.pop():
        assert _leaves(v) == before


@settings(max_examples=200, deadline=None)
@given(VALUES)
def test_new_containers_of_the_same_objects_are_unchanged(v):
    """The watch is not vacuous: a copy holding the same objects passes it, in
    both walks, wherever it can vouch for the value at all."""
    held = []
    if not values.identities(v, held):
        assert any(type(c) is Named for c in _all(v)) or _depth(v) > values._MAX_DEPTH
        return
    for on in WALKS:
        with compiled_buffers(on):
            assert values.unchanged(_rebuilt(v), held)
            assert values.unchanged(v, held)


def _all(v):
    yield v
    for x in (v.values() if isinstance(v, dict) else v if isinstance(v, (list, tuple)) else ()):
        yield from _all(x)


def _depth(v):
    if isinstance(v, (list, tuple, dict)):
        return 1 + max((_depth(x) for x in (v.values() if isinstance(v, dict) else v)),
                       default=0)
    return 0


def test_too_deep_and_misused():
    v = [ARRAYS[0]]
    for _ in range(values._MAX_DEPTH + 1):
        v = [v]
    for on in WALKS:
        with compiled_buffers(on):
            assert not values.identities(v, [])
            assert not values.unchanged(v, [])
    if regions._BUFFERS is not None:
        with pytest.raises(TypeError):
            regions._BUFFERS.identities([], (), 0, 8, values._MARKS)
        with pytest.raises(TypeError):
            regions._BUFFERS.unchanged([], [], 0, 8, values._MARKS[:3])


# --- on the call path (the simulator) ---------------------------------------

@cuda.jit
def add_into(src, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] += src[i]


def dev(v):
    return cuda.to_device(np.full(2, v, np.float32))


PARAMS = {}


@gt.graph(backend="sim")
def add_params(s, out):
    for group in PARAMS.values():
        for w in group:
            add_into[1, 2, s](w, out)


def _want():
    return sum(float(w.copy_to_host()[0]) for g in PARAMS.values() for w in g)


@pytest.mark.parametrize("on", WALKS)
@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["same", "item", "key", "group", "tuple", "named", "fill"]),
                min_size=1, max_size=8))
def test_a_dict_of_arrays_reached_by_name_is_watched(on, steps):
    """A global dict of lists of arrays, changed in place between calls in every
    way: each call's result is right, and every call the watch can vouch for
    leaves the shortcut set."""
    with compiled_buffers(on):
        PARAMS.clear()
        PARAMS.update(a=[dev(1), dev(2)], b=[dev(4)])
        value = 7
        for step in ["same"] + steps:
            if step == "item":   # an array of a list replaced in place
                group = next((g for g in PARAMS.values() if type(g) is list), None)
                if group is None:
                    PARAMS["c"] = group = [dev(0)]
                group[0] = dev(value)
            elif step == "key":
                PARAMS[f"k{value}"] = PARAMS.pop(next(iter(PARAMS)))
            elif step == "group":
                PARAMS[f"g{value}"] = [dev(value)]
            elif step == "tuple":
                PARAMS["a"] = tuple(PARAMS.get("a", [dev(value)]))
            elif step == "named":
                PARAMS["a"] = Named(PARAMS.get("a", [dev(value)]))
            elif step == "fill":   # the same arrays, new contents: read when it runs
                next(iter(PARAMS.values()))[0].copy_to_device(np.full(2, value, np.float32))
            value += 1
            out = dev(0)
            add_params(out)
            assert out.copy_to_host().tolist() == [_want()] * 2, step
            named = any(type(g) is Named for g in PARAMS.values())
            assert (add_params._fast is not None) == (not named), step
            if not named:
                misses = add_params.cache_info().misses
                add_params(out)   # the shortcut: nothing traced, the graph ran again
                assert out.copy_to_host().tolist() == [2 * _want()] * 2, step
                assert add_params.cache_info().misses == misses
    PARAMS.clear()


@cuda.jit
def put(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v


class Mode(enum.Enum):
    LOW = 1
    HIGH = 2


MODE, SCALES, SIZES, CHOICE = "double", (2.0, 3.0, None), frozenset({1}), Mode.LOW


@gt.graph(backend="sim")
def from_values(s, out):
    v = SCALES[0] * (2 if MODE == "double" else 1) + len(SIZES) * 100
    put[1, 2, s](out, v + (1000 if CHOICE is Mode.HIGH else 0))


def _expected():
    return SCALES[0] * (2 if MODE == "double" else 1) + len(SIZES) * 100 + \
        (1000 if CHOICE is Mode.HIGH else 0)


@pytest.mark.parametrize("change", ["MODE", "SCALES", "SIZES", "CHOICE"])
def test_a_string_tuple_set_or_enum_held_by_a_name_is_watched(change):
    """Read while tracing and baked in: a new value held by the name traces anew
    (or finds the graph of that value), through the shortcut too."""
    global MODE, SCALES, SIZES, CHOICE
    keep = MODE, SCALES, SIZES, CHOICE
    try:
        out = dev(0)
        for _ in range(2):
            from_values(out)
            assert out.copy_to_host().tolist() == [_expected()] * 2
            if change == "MODE":
                MODE = "single"
            elif change == "SCALES":
                SCALES = (5.0, 3.0, None)
            elif change == "SIZES":
                SIZES = frozenset({1, 2})
            else:
                CHOICE = Mode.HIGH
            from_values(out)
            assert out.copy_to_host().tolist() == [_expected()] * 2, change
            MODE, SCALES, SIZES, CHOICE = keep
    finally:
        MODE, SCALES, SIZES, CHOICE = keep


HELD = ()   # an array and numbers held together by one name


@gt.graph(backend="sim")
def from_params(s, out):
    put[1, 2, s](out, HELD["scale"] + HELD["more"][0] + len(HELD["losses"]) * 0)
    put[1, 1, s](HELD["w"], 0.0)


class _Model:
    def __init__(self, w, scale):
        self.params = [w, scale]

    @gt.graph(backend="sim")
    def step(self, s, out):
        put[1, 2, s](out, self.params[1])
        put[1, 1, s](self.params[0], 0.0)


@pytest.mark.parametrize("on", [True, False], ids=["compiled walk", "Python walk"])
def test_numbers_held_with_arrays_by_a_name_or_self_are_watched(on):
    """A dict, list or tuple holding arrays and numbers together: a trace reads the
    numbers and bakes them in, so a new number traces anew (or finds its graph),
    whether the name is bound to a new container or the container changed in
    place. A list of numbers beside them (a history the program appends to) is
    not watched, as a list of numbers alone is not: it does not trace anew."""
    global HELD
    keep = HELD
    try:
        with compiled_buffers(on):
            out, w = dev(0), dev(0)
            from_params.clear_cache()
            for k, scale in ((1.0, 2.0), (1.0, 3.0), (5.0, 3.0), (1.0, 2.0)):
                HELD = {"w": w, "scale": scale, "more": (k,), "losses": [1.0]}
                from_params(out)
                assert out.copy_to_host().tolist() == [scale + k] * 2
            HELD["scale"] = 7.0   # in place
            from_params(out)
            assert out.copy_to_host().tolist() == [7.0 + 1.0] * 2
            misses = from_params.cache_info().misses
            for i in range(5):
                HELD["losses"].append(float(i))   # a history beside the arrays
                from_params(out)
            assert from_params.cache_info().misses == misses
            m = _Model(w, 2.0)
            for scale in (2.0, 4.0):
                m.params[1] = scale
                m.step(out)
                assert out.copy_to_host().tolist() == [scale] * 2
    finally:
        HELD = keep


@cuda.jit
def put_twice(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 2 * v


KERNELS = {"put": put}   # kernels held in containers by names
KERNEL_LIST = [put]
KERNEL_TUPLE = (put,)


@gt.graph(backend="sim")
def from_dict(s, out, a):
    KERNELS["put"][1, 2, s](out, a)


@gt.graph(backend="sim")
def from_list(s, out, a):
    KERNEL_LIST[0][1, 2, s](out, a)


@gt.graph(backend="sim")
def from_tuple(s, out, a):
    KERNEL_TUPLE[0][1, 2, s](out, a)


class _Layers:
    def __init__(self):
        self.layers = [put]

    @gt.graph(backend="sim")
    def step(self, s, out, a):
        self.layers[0][1, 2, s](out, a)


def test_a_kernel_declaration_held_in_a_dict_is_watched():
    """A gt.kernel declaration (a cupy RawKernel too) is an object of a library's
    class: held in a dict, it is watched by identity all the same."""
    keep = dict(KERNELS)
    try:
        out = dev(0)
        for kernel, want in ((put, 3.0), (put_twice, 6.0)):
            KERNELS["put"] = gt.kernel(kernel, "out, in")
            from_dict(out, 3.0)
            from_dict(out, 3.0)
            assert out.copy_to_host().tolist() == [want] * 2
    finally:
        KERNELS.update(keep)


@pytest.mark.parametrize("where", ["dict", "list", "tuple", "self"])
def test_a_kernel_held_in_a_container_by_a_name_or_self_is_watched(where):
    """Replacing a kernel in a dict, list or tuple reached by name (in place, or
    the name bound to a new container), or in a list a method's self holds, runs
    the new kernel at the next call."""
    global KERNEL_TUPLE
    keep = dict(KERNELS), list(KERNEL_LIST), KERNEL_TUPLE
    m = _Layers()
    call = {"dict": from_dict, "list": from_list, "tuple": from_tuple,
            "self": lambda out, a: m.step(out, a)}[where]
    try:
        out = dev(0)
        for kernel, want in ((put, 3.0), (put_twice, 6.0), (put, 3.0)):
            if where == "dict":
                KERNELS["put"] = kernel
            elif where == "list":
                KERNEL_LIST[0] = kernel
            elif where == "tuple":
                KERNEL_TUPLE = (kernel,)
            else:
                m.layers = [kernel]
            call(out, 3.0)
            call(out, 3.0)   # the very arguments again: the shortcut
            assert out.copy_to_host().tolist() == [want] * 2, (where, kernel)
    finally:
        KERNELS.update(keep[0])
        KERNEL_LIST[:] = keep[1]
        KERNEL_TUPLE = keep[2]


def test_equal_tuples_of_other_types_are_other_graphs():
    """(1,) and (1.0,) are equal but a kernel packs 1 and 1.0 differently."""
    global SCALES
    keep = SCALES
    try:
        out = dev(0)
        for v in ((2, 3.0), (2.0, 3.0), (True, 3.0)):
            SCALES = v
            from_values(out)
            assert out.copy_to_host().tolist() == [_expected()] * 2
        assert from_values.cache_info().currsize >= 3
    finally:
        SCALES = keep


def test_a_changed_string_is_named_when_it_traces_anew(caplog):
    import logging
    global MODE
    keep = MODE
    try:
        from_values.clear_cache()
        out = dev(0)
        from_values(out)
        MODE = "quadruple"
        with caplog.at_level(logging.INFO, logger="graphtrace"):
            from_values(out)
        assert "MODE (reached by name): 'double' -> 'quadruple' (a value reached by name" \
            in caplog.text
    finally:
        MODE = keep


class Config:
    value = 3.0


DTYPE = np.float32


@gt.graph(backend="sim")
def from_class(s, out):
    put[1, 2, s](out, Config.value + np.dtype(DTYPE).itemsize)


def test_a_class_or_dtype_held_by_a_name_is_watched():
    """A config class defined again (as a notebook cell run again does) or a
    dtype name rebound: the next call sees it."""
    global Config, DTYPE
    keep = Config, DTYPE
    try:
        out = dev(0)
        from_class(out)
        assert out.copy_to_host().tolist() == [7.0, 7.0]

        class Config:   # noqa: F811  (defined again, as in a notebook)
            value = 10.0
        from_class(out)
        assert out.copy_to_host().tolist() == [14.0, 14.0]
        DTYPE = np.float64
        from_class(out)
        assert out.copy_to_host().tolist() == [18.0, 18.0]
        from_class(out)   # the shortcut, the same values
        assert out.copy_to_host().tolist() == [18.0, 18.0] and from_class._fast is not None
    finally:
        Config, DTYPE = keep


# settings read off an object by constant attributes and items (chains.Chain)
CFG = {"lr": 2.0, "opt": {"beta": 0.5}}
TABLE = [1.0, 3.0]
NS = types.SimpleNamespace(lr=2.0)


@dataclasses.dataclass
class _Settings:
    lr: float = 2.0


@dataclasses.dataclass(slots=True)
class _Slotted:
    lr: float = 2.0


class _Config:
    lr = 2.0


SETTINGS, SLOTTED = _Settings(), _Slotted()


@gt.graph(backend="sim")
def from_settings(s, out):
    put[1, 2, s](out, CFG["lr"] + CFG["opt"]["beta"] + CFG.get("extra", 0.0) + TABLE[1]
                 + NS.lr + SETTINGS.lr + SLOTTED.lr + _Config.lr)


def _settings_sum():
    return (CFG["lr"] + CFG["opt"]["beta"] + CFG.get("extra", 0.0) + TABLE[1] + NS.lr
            + SETTINGS.lr + SLOTTED.lr + _Config.lr)


@pytest.mark.parametrize("change", ["dict item", "nested item", "item added", "list item",
                                    "namespace", "dataclass", "slots", "class", "rebound"])
def test_settings_read_off_an_object_are_watched(change):
    """A value read off a dict, list, namespace, object or class by constant keys is
    baked into the graph: changing it in place, or holding a new object, traces anew
    (or finds that value's graph); the same values again trace nothing."""
    global CFG, NS
    keep = (dict(CFG, opt=dict(CFG["opt"])), list(TABLE), NS, SETTINGS.lr, SLOTTED.lr,
            _Config.lr)
    try:
        out = dev(0)
        from_settings(out)
        assert out.copy_to_host().tolist() == [_settings_sum()] * 2
        misses = from_settings.cache_info().misses
        from_settings(out)
        assert from_settings.cache_info().misses == misses
        if change == "dict item":
            CFG["lr"] = 5.0
        elif change == "nested item":
            CFG["opt"]["beta"] = 0.25
        elif change == "item added":
            CFG["extra"] = 10.0
        elif change == "list item":
            TABLE[1] = 7.0
        elif change == "namespace":
            NS.lr = 4.0
        elif change == "dataclass":
            SETTINGS.lr = 6.0
        elif change == "slots":
            SLOTTED.lr = 8.0
        elif change == "class":
            _Config.lr = 9.0
        else:
            CFG, NS = {"lr": 1.0, "opt": {"beta": 1.0}}, types.SimpleNamespace(lr=1.0)
        from_settings(out)
        assert out.copy_to_host().tolist() == [_settings_sum()] * 2, change
    finally:
        CFG, TABLE[:], NS = keep[0], keep[1], keep[2]
        SETTINGS.lr, SLOTTED.lr, _Config.lr = keep[3], keep[4], keep[5]


STATS = {"calls": 0, "scale": 3.0}


def _count():
    STATS["calls"] += 1


@gt.graph(backend="sim")
def counted(s, out):
    put[1, 2, s](out, STATS["scale"])
    s.host(_count)


def test_state_a_walked_function_changes_in_place_is_not_watched():
    """A dict a host callback counts calls in is the graph's state, not a setting:
    its changes trace nothing anew (the value read is baked in, as before)."""
    out = dev(0)
    counted(out)
    misses = counted.cache_info().misses
    for _ in range(3):
        counted(out)
    assert counted.cache_info().misses == misses and STATS["calls"] == 4
    assert out.copy_to_host().tolist() == [3.0, 3.0]


def _apply(model, s, out):
    put[1, 2, s](out, model.lr * model.decay)


class _Trainer:
    decay = 0.5

    def __init__(self):
        self.lr = 4.0

    @gt.graph(backend="sim")
    def step(self, s, out):
        _apply(self, s, out)


def test_a_helper_handed_self_reads_values_that_are_watched():
    """``apply(self, s, x)`` reading ``model.lr``: the method's watch covers the
    attributes its helpers read too (a new value traces anew)."""
    t, out = _Trainer(), dev(0)
    t.step(out)
    assert out.copy_to_host().tolist() == [2.0, 2.0]
    t.lr = 8.0
    t.step(out)
    assert out.copy_to_host().tolist() == [4.0, 4.0]
    _Trainer.decay = 0.25
    try:
        t.step(out)
        assert out.copy_to_host().tolist() == [2.0, 2.0]
    finally:
        _Trainer.decay = 0.5


EPOCH = {"now": 0, "lr": 2.0}
SEEN: list = []


class _Progress:
    def __init__(self):
        self.n, self.total = 0, 100

    def tick(self):
        self.n += 1


PROGRESS = _Progress()


def _report(h):
    SEEN.append(EPOCH["now"])      # read when the callback runs: nothing baked in
    PROGRESS.tick()
    LOG.append(EPOCH["now"])       # changes LOG only, not EPOCH


LOG: list = []


@gt.graph(backend="sim")
def reporting(s, out, h):
    put[1, 2, s](out, EPOCH["lr"])
    s.host(_report, gt.In(h))


def test_a_host_callback_reads_settings_live_and_they_are_not_watched():
    """A host callback reads what it reads when it runs: a setting only it reads
    changing every call traces nothing anew (no retrace storm); one the graph's own
    code reads is still watched, however the callback logs it."""
    SEEN.clear()
    out, h = dev(0), np.zeros(2, np.float32)
    for e in range(5):
        EPOCH["now"] = e
        reporting(out, h)
    assert reporting.cache_info().misses == 1 and SEEN == [0, 1, 2, 3, 4]
    assert PROGRESS.n == 5
    EPOCH["lr"] = 5.0
    reporting(out, h)
    assert out.copy_to_host().tolist() == [5.0, 5.0]


LIVE = {"scale": 1.0, "calls": 0}


def _bump():
    LIVE["scale"] = LIVE["scale"] + 1.0   # read by the graph too: watched
    LIVE["calls"] += 1                    # only the callback's: state, not watched


@gt.graph(backend="sim")
def bumped(s, out):
    put[1, 2, s](out, LIVE["scale"])
    s.host(_bump)


def test_a_setting_the_graph_reads_and_its_callback_changes_stays_watched_and_is_named():
    """Eagerly each call uses the value the previous call's callback left: the
    graph, which bakes in what it read, traces anew for it (not the first value
    forever), and says once, at the user's line, that each call traces so."""
    import warnings
    LIVE.update(scale=1.0, calls=0)
    out = dev(0)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for k in range(4):
            bumped(out)   # the call
            assert out.copy_to_host().tolist() == [k + 1.0] * 2
    assert bumped.cache_info().misses == 4 and LIVE["calls"] == 4
    said = [x for x in w if x.category is gt.StateWarning]
    assert len(said) == 1 and (said[0].filename, said[0].lineno) == \
        (__file__, line_of(__file__, "the call"))
    text = str(said[0].message)
    assert "LIVE['scale']" in text and "calls" not in text.split(":")[0]
    assert "traces again" in text and "as an argument" in text


def test_a_changing_setting_is_named_in_the_retrace_warning(recwarn):
    import warnings
    state = {"step": 0}

    @gt.graph(backend="sim")
    def decayed(s, out):
        put[1, 2, s](out, 0.5 ** state["step"])
    out = dev(0)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for k in range(12):
            state["step"] = k
            decayed(out)
    assert out.copy_to_host().tolist() == [0.5 ** 11] * 2
    said = " ".join(str(x.message) for x in w if x.category is gt.RetraceWarning)
    assert "the value(s) read by name keep changing (state['step'])" in said
    assert "pass a number that changes as an argument" in said


RATES = {"lr": 2.0, "scale": 3.0}


@gt.graph(backend="sim")
def scaled(s, out, x, y):
    put[1, 2, s](out, RATES["lr"])

    def region(x, y):
        y[...] = x * RATES["scale"]    # a store into y, not into RATES
    s.captured(region, x, y, reads=[x], writes=[y])


def test_a_store_on_a_line_that_reads_a_setting_leaves_it_watched():
    out, x, y = dev(0), dev(1.0), dev(0)
    scaled(out, x, y)
    RATES["lr"], RATES["scale"] = 5.0, 4.0
    try:
        scaled(out, x, y)
        assert out.copy_to_host().tolist() == [5.0, 5.0]
        assert y.copy_to_host().tolist() == [4.0, 4.0]
    finally:
        RATES["lr"], RATES["scale"] = 2.0, 3.0


class _AttrDict(dict):
    __getattr__ = dict.__getitem__    # a missing attribute raises KeyError


class _SlottedAttrDict(dict):
    __slots__ = ()
    __getattr__ = dict.__getitem__    # no __dict__ either: hasattr raised KeyError


SLOTTED_ATTR = _SlottedAttrDict(lr=0.5)


@gt.graph(backend="sim")
def from_slotted(s, out):
    put[1, 2, s](out, SLOTTED_ATTR["lr"])


def test_a_slotted_attribute_dict_is_read_for_settings():
    out = dev(0)
    from_slotted(out)
    SLOTTED_ATTR["lr"] = 2.0
    try:
        from_slotted(out)
        assert out.copy_to_host().tolist() == [2.0, 2.0]
    finally:
        SLOTTED_ATTR["lr"] = 0.5


_NT = __import__("collections").namedtuple("_NT", "lr")
ODICT = __import__("collections").OrderedDict(lr=1.0)
DDICT = __import__("collections").defaultdict(float, lr=1.0)
ATTR = _AttrDict(lr=1.0)
NTUP = _NT(1.0)
COUNTS = {"lr": 1.0, "done": 0}
NAN = float("nan")


def _count_done(h):
    COUNTS["done"] += 1               # an augmented store: COUNTS["lr"] stays watched


@gt.graph(backend="sim")
def from_kinds(s, out, h):
    put[1, 2, s](out, ODICT["lr"] + DDICT["lr"] + ATTR.lr + NTUP.lr + NTUP[0] + COUNTS["lr"]
                 + (0.0 if NAN != NAN else 1.0))
    s.host(_count_done, gt.In(h))
    s.host(lambda h: EPOCH["now"], gt.In(h))   # a lambda callback: read when it runs


@pytest.mark.parametrize("change", ["OrderedDict", "defaultdict", "AttrDict", "namedtuple",
                                    "beside a counter"])
def test_settings_in_dict_subclasses_namedtuples_and_beside_counters_are_watched(change):
    global NTUP, NAN
    keep = dict(ODICT), dict(DDICT), dict(ATTR), NTUP, dict(COUNTS)
    out, h = dev(0), np.zeros(2, np.float32)
    try:
        from_kinds(out, h)
        assert out.copy_to_host().tolist() == [6.0, 6.0]
        misses = from_kinds.cache_info().misses
        for k in range(3):   # a counter, a callback's read, a NaN made anew: no new trace
            NAN, EPOCH["now"] = float("nan"), k
            from_kinds(out, h)
        assert from_kinds.cache_info().misses == misses
        if change == "OrderedDict":
            ODICT["lr"] = 3.0
        elif change == "defaultdict":
            DDICT["lr"] = 3.0
        elif change == "AttrDict":
            ATTR["lr"] = 3.0
        elif change == "namedtuple":
            NTUP = NTUP._replace(lr=2.0)
        else:
            COUNTS["lr"] = 3.0
        from_kinds(out, h)
        assert out.copy_to_host().tolist() == [8.0, 8.0], change
    finally:
        ODICT.update(keep[0]), DDICT.update(keep[1]), ATTR.update(keep[2])
        NTUP = keep[3]
        COUNTS.update(keep[4])


@dataclasses.dataclass
class _Opt:
    lr: float = 2.0


class _Net:
    def __init__(self):
        self.cfg, self.table = _Opt(), {"scale": 1.0}
        self.calls = {"n": 0}

    @gt.graph(backend="sim")
    def step(self, s, out):
        self.calls["n"] += 1   # changed in place while tracing: state, not watched
        put[1, 2, s](out, self.cfg.lr * self.table["scale"] + self.calls["n"] * 0)


def test_settings_a_method_reads_off_self_by_two_steps_are_watched():
    net, out = _Net(), dev(0)
    net.step(out)
    net.step(out)
    assert out.copy_to_host().tolist() == [2.0, 2.0] and net.step.cache_info().misses == 1
    net.cfg.lr = 3.0
    net.step(out)
    assert out.copy_to_host().tolist() == [3.0, 3.0]
    net.table["scale"] = 2.0
    net.step(out)
    assert out.copy_to_host().tolist() == [6.0, 6.0]
    net.cfg = _Opt(0.5)
    net.step(out)
    assert out.copy_to_host().tolist() == [1.0, 1.0]


class _Stepper:
    def __init__(self):
        self.state = types.SimpleNamespace(step=0)
        self.cfg = types.SimpleNamespace(lr=2.0)
        self.name = "net"
        self._opts = types.SimpleNamespace(scale=1.0)
        self.reads = 0

    def _tick(self):
        self.state.step += 1            # state a helper method keeps: not watched

    @property
    def opts(self):
        self.reads += 1                 # a property: read once while tracing, baked in
        return self._opts

    @gt.graph(backend="sim")
    def run(self, s, out):
        self._tick()
        SEEN_BY_NAME[self.name] = True  # a store keyed by self.name changes no self chain
        put[1, 2, s](out, self.state.step * 0 + self.cfg.lr * self.opts.scale)


SEEN_BY_NAME: dict = {}


def test_self_chains_skip_state_helpers_keep_and_run_no_property_code():
    m, out = _Stepper(), dev(0)
    for _ in range(4):
        m.run(out)
    assert _Stepper.run.cache_info().misses == 1 and m.reads == 1
    m.cfg.lr = 3.0
    m.run(out)
    assert out.copy_to_host().tolist() == [3.0, 3.0]


SOLVER = {"solver": {"tol": 1.0, "log": []}, "lr": 2.0}


def _log_tol(h):
    SOLVER["solver"]["log"].append(1)   # changes the log only


@gt.graph(backend="sim")
def aliased(s, out, h):
    p = SOLVER["solver"]                # a local alias of a sub-dict
    put[1, 2, s](out, p["tol"] + SOLVER["lr"])
    s.host(_log_tol, gt.In(h))


def test_settings_read_through_a_local_alias_are_watched():
    out, h = dev(0), np.zeros(2, np.float32)
    try:
        aliased(out, h)
        aliased(out, h)
        assert aliased.cache_info().misses == 1
        SOLVER["solver"]["tol"] = 5.0
        aliased(out, h)
        assert out.copy_to_host().tolist() == [7.0, 7.0]
    finally:
        SOLVER["solver"]["tol"] = 1.0


@cuda.jit
def axpy(a, x, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] += a * x[i]


LAYERS = {"layers": [dev(0), dev(0)], "lr": 1.0}   # arrays one level down, a number beside
NESTED = [[dev(0)], 2.0]


@gt.graph(backend="sim")
def through_layers(s, g):
    for w in LAYERS["layers"]:
        axpy[1, 2, s](LAYERS["lr"], g, w)
    axpy[1, 2, s](NESTED[1], g, NESTED[0][0])


def test_a_setting_beside_arrays_held_deeper_by_one_name_is_watched():
    """MODEL = {"layers": [W1, W2], "lr": 1.0}: the name holds arrays (watched by
    identity), and MODEL["lr"] read by a constant key is watched by value too."""
    g = dev(1)
    through_layers(g)
    LAYERS["lr"], NESTED[1] = 4.0, 3.0
    try:
        through_layers(g)
        assert [w.copy_to_host().tolist() for w in LAYERS["layers"]] == [[5.0, 5.0]] * 2
        assert NESTED[0][0].copy_to_host().tolist() == [5.0, 5.0]
    finally:
        LAYERS["lr"], NESTED[1] = 1.0, 2.0


class _Layer:
    def __init__(self):
        self.w, self.cfg = dev(0), {"lr": 1.0}

    def update(self, s, g):   # a method named like dict.update: the class's own
        axpy[1, 2, s](self.cfg["lr"], g, self.w)

    @property
    def rate(self):
        return self.cfg["lr"] * 2

    @gt.graph(backend="sim")
    def step(self, s, g):
        self.update(s, g)

    @gt.graph(backend="sim")
    def step_at_rate(self, s, g):
        axpy[1, 2, s](self.rate, g, self.w)


def test_settings_a_methods_own_methods_and_properties_read_off_self_are_watched():
    g = dev(1)
    m = _Layer()
    m.step(g)
    m.cfg["lr"] = 4.0
    m.step(g)
    assert m.w.copy_to_host().tolist() == [5.0, 5.0]
    m = _Layer()
    m.step_at_rate(g)
    m.cfg["lr"] = 4.0
    m.step_at_rate(g)
    assert m.w.copy_to_host().tolist() == [10.0, 10.0]
    m.cfg = {"lr": 0.5}
    m.step_at_rate(g)
    assert m.w.copy_to_host().tolist() == [11.0, 11.0]


RATE = 1.0
TABLE_CFG = {"lr": 1.0}


class _Reads:
    def __init__(self):
        self.g, self.w, self.log = dev(1), dev(0), {"epoch": 0}

    @property
    def rate(self):
        return RATE

    def coef(self):
        return TABLE_CFG["lr"]

    @staticmethod
    def double():
        return RATE * 2

    def report(self, h):   # a host callback: reads self.log when it runs
        self.log["seen"] = self.log["epoch"]

    @gt.graph(backend="sim")
    def step(self, s, h):
        axpy[1, 2, s](self.rate + self.coef() + self.double(), self.g, self.w)
        s.host(self.report, h)
        s.host(lambda h: self.report(h), h)   # through a lambda: read when it runs too


def test_globals_the_methods_of_a_methods_class_read_are_watched():
    """A global read in a property, method or static method the graph method calls
    was baked in; a method handed to s.host reads when it runs: not watched."""
    global RATE
    m, h = _Reads(), np.zeros(2)
    try:
        m.step(h)
        RATE, TABLE_CFG["lr"] = 2.0, 3.0
        m.step(h)
        assert m.w.copy_to_host().tolist() == [13.0, 13.0]
        for epoch in range(3):
            m.log["epoch"] = epoch
            m.step(h)
        assert m.log["seen"] == 2 and _Reads.step.cache_info().misses == 2
    finally:
        RATE, TABLE_CFG["lr"] = 1.0, 1.0


class _Net2:
    def __init__(self):
        self.cfg = {"lr": 1.0}

    def update(self, s, g):   # its class's own: calling it changes nothing by itself
        pass


MODEL_OBJ = _Net2()
WEIGHTS = dev(0)


@gt.graph(backend="sim")
def through_object(s, g):
    axpy[1, 2, s](MODEL_OBJ.cfg["lr"], g, WEIGHTS)
    MODEL_OBJ.update(s, g)


def test_calling_an_objects_own_method_named_like_a_mutator_leaves_its_settings_watched():
    g = dev(1)
    through_object(g)
    MODEL_OBJ.cfg["lr"] = 4.0
    try:
        through_object(g)
        assert WEIGHTS.copy_to_host().tolist() == [5.0, 5.0]
    finally:
        MODEL_OBJ.cfg["lr"] = 1.0


class _Coef:
    def __init__(self):
        self.g, self.w = dev(1), dev(0)

    def coef(self):
        return 1.0

    @gt.graph(backend="sim")
    def step(self, s):
        axpy[1, 2, s](self.coef(), self.g, self.w)


def test_a_method_put_on_the_class_anew_traces_anew():
    m = _Coef()
    m.step()
    _Coef.coef = lambda self: 10.0
    m.step()
    m.step()
    assert m.w.copy_to_host().tolist() == [21.0, 21.0] and _Coef.step.cache_info().misses == 2


BY_NAME = types.SimpleNamespace(k=1.0, opt=types.SimpleNamespace(lr=2.0))


@gt.graph(backend="sim")
def reads_by_getattr(s, out):
    put[1, 2, s](out, getattr(BY_NAME, "k") + getattr(BY_NAME.opt, "lr"))


class _ByName:
    def __init__(self):
        self.cfg = types.SimpleNamespace(scale=3.0)

    @gt.graph(backend="sim")
    def run(self, s, out):
        put[1, 2, s](out, getattr(self.cfg, "scale"))


def test_a_setting_read_by_getattr_with_a_constant_name_is_watched():
    out = dev(0)
    reads_by_getattr(out)
    assert out.copy_to_host().tolist() == [3.0, 3.0]
    BY_NAME.k, BY_NAME.opt.lr = 10.0, 20.0
    try:
        reads_by_getattr(out)
        assert out.copy_to_host().tolist() == [30.0, 30.0]
    finally:
        BY_NAME.k, BY_NAME.opt.lr = 1.0, 2.0
    m = _ByName()
    m.run(out)
    m.cfg.scale = 4.0
    m.run(out)
    assert out.copy_to_host().tolist() == [4.0, 4.0]


WHOLE_COEFS = [1.0, 2.0]   # a global list of numbers the function reads whole
WHOLE_TABLE = {"a": 1.0, "b": 2.0}
WHOLE_LOSSES: list = []    # a history a host callback appends to: state, not a setting


@gt.graph(backend="sim")
def summed(s, out):
    total = 0.0
    for c in WHOLE_COEFS:
        total += c
    put[1, 2, s](out, total + sum(WHOLE_TABLE.values()))


def _record(out):
    WHOLE_LOSSES.append(float(out[0]))


@gt.graph(backend="sim")
def logged(s, out, host):
    put[1, 2, s](out, 1.0)
    s.copy(host, out)
    s.host(_record, host)


def _closure_sum():
    coefs = [3.0]

    @gt.graph(backend="sim")
    def f(s, out):
        put[1, 2, s](out, sum(coefs))
    return f, coefs


class _Mixer:
    @gt.graph(backend="sim")
    def step(self, s, out):
        put[1, 2, s](out, sum(WHOLE_COEFS))


@pytest.mark.parametrize("how", ["new list", "in place", "appended", "dict in place"])
def test_a_list_or_dict_of_numbers_read_whole_by_a_global_name_is_watched(how):
    """``for c in WHOLE_COEFS`` bakes the list's values in: a new list bound to the name, or
    the list or a dict changed in place, traces anew (the shortcut too)."""
    global WHOLE_COEFS
    keep = WHOLE_COEFS, dict(WHOLE_TABLE)
    mixer, out = _Mixer(), dev(0)
    try:
        for _ in range(2):
            summed(out)
            mixer.step(out)
            summed(out)
            if how == "new list":
                WHOLE_COEFS = [5.0, 2.0]
            elif how == "in place":
                WHOLE_COEFS[1] = 0.5
            elif how == "appended":
                WHOLE_COEFS.append(4.0)
            else:
                WHOLE_TABLE["b"] = 7.0
            summed(out)
            assert out.copy_to_host().tolist() == [sum(WHOLE_COEFS) + sum(WHOLE_TABLE.values())] * 2, how
            mixer.step(out)
            assert out.copy_to_host().tolist() == [sum(WHOLE_COEFS)] * 2, how
            WHOLE_COEFS = list(keep[0])
            WHOLE_TABLE.clear()
            WHOLE_TABLE.update(keep[1])
    finally:
        WHOLE_COEFS = keep[0]
        WHOLE_TABLE.clear()
        WHOLE_TABLE.update(keep[1])


def test_a_list_of_numbers_read_whole_by_a_closure_is_watched():
    f, coefs = _closure_sum()
    out = dev(0)
    f(out)
    coefs.append(2.0)
    f(out)
    f(out)
    assert out.copy_to_host().tolist() == [5.0, 5.0]


def test_a_history_a_host_callback_appends_to_is_not_watched():
    """A list only host callbacks touch traces nothing anew as it grows."""
    out, host = dev(0), gt.pinned_empty(2, np.float32)
    del WHOLE_LOSSES[:]
    for _ in range(4):
        logged(out, host)
    assert logged.cache_info().misses == 1 and WHOLE_LOSSES == [1.0] * 4


WHOLE_FLAGS = {"double"}
WHOLE_QUEUE = collections.deque([2.0])
WHOLE_CFG = types.SimpleNamespace(flags={"double"})


@gt.graph(backend="sim")
def flagged(s, out):
    scale = 2.0 if "double" in WHOLE_FLAGS else 1.0
    scale *= 2.0 if "double" in WHOLE_CFG.flags else 1.0
    put[1, 2, s](out, scale * WHOLE_QUEUE[0])


class _Flags:
    def __init__(self, flags, weights):
        self.flags, self.weights = flags, weights

    @gt.graph(backend="sim")
    def step(self, s, out):
        put[1, 2, s](out, (2.0 if "double" in self.flags else 1.0) * sum(self.weights.values()))


def _flagged_expected():
    return ((2.0 if "double" in WHOLE_FLAGS else 1.0) *
            (2.0 if "double" in WHOLE_CFG.flags else 1.0) * WHOLE_QUEUE[0])


@pytest.mark.parametrize("how", ["set rebound", "set in place", "deque rebound",
                                 "deque in place", "attribute set"])
def test_a_set_or_deque_held_by_a_global_name_or_attribute_is_watched(how):
    """Sets and deques of values read while tracing are baked in like lists: a new
    one, or one changed in place, traces anew."""
    global WHOLE_FLAGS, WHOLE_QUEUE
    keep = set(WHOLE_FLAGS), collections.deque(WHOLE_QUEUE), set(WHOLE_CFG.flags)
    out = dev(0)
    try:
        flagged(out)
        if how == "set rebound":
            WHOLE_FLAGS = set()
        elif how == "set in place":
            WHOLE_FLAGS.discard("double")
        elif how == "deque rebound":
            WHOLE_QUEUE = collections.deque([4.0])
        elif how == "deque in place":
            WHOLE_QUEUE[0] = 5.0
        else:
            WHOLE_CFG.flags = {"n"}
        flagged(out)
        flagged(out)
        assert out.copy_to_host().tolist() == [_flagged_expected()] * 2, how
    finally:
        WHOLE_FLAGS, WHOLE_QUEUE, WHOLE_CFG.flags = keep


@pytest.mark.parametrize("how", ["set replaced", "set in place", "ordered dict in place",
                                 "ordered dict replaced", "default dict replaced"])
def test_sets_and_dict_subclasses_self_holds_are_watched(how):
    m = _Flags({"double"}, collections.OrderedDict(a=1.0, b=2.0))
    out = dev(0)
    m.step(out)
    if how == "set replaced":
        m.flags = set()
    elif how == "set in place":
        m.flags.clear()
    elif how == "ordered dict in place":
        m.weights["b"] = 5.0
    elif how == "ordered dict replaced":
        m.weights = collections.OrderedDict(a=10.0)
    else:
        m.weights = collections.defaultdict(float, a=7.0)
    m.step(out)
    m.step(out)
    expected = (2.0 if "double" in m.flags else 1.0) * sum(m.weights.values())
    assert out.copy_to_host().tolist() == [expected] * 2, how


WHOLE_LATER: list = []   # empty at the first call: a place where arrays may go


@gt.graph(backend="sim")
def later(s, out):
    put[1, 2, s](out, 1.0 + sum(WHOLE_LATER))


def test_an_empty_list_that_holds_numbers_later_is_watched_by_value():
    out = dev(0)
    try:
        later(out)
        WHOLE_LATER.append(2.0)
        later(out)
        assert out.copy_to_host().tolist() == [3.0, 3.0]
        WHOLE_LATER[0] = 4.0
        later(out)
        assert out.copy_to_host().tolist() == [5.0, 5.0]
    finally:
        del WHOLE_LATER[:]


WHOLE_SLOTS = [None, None]   # places for arrays, none put yet


@gt.graph(backend="sim")
def slotted(s, out):
    put[1, 2, s](out, 1.0 if WHOLE_SLOTS[0] is None else 2.0)


def test_a_list_of_nones_is_a_place_for_arrays_and_traces_once():
    """Not a list of values read whole: the call finds its graph (it looked for
    the name's places again at every call, without end)."""
    out = dev(0)
    slotted(out)
    slotted(out)
    assert slotted.cache_info().misses == 1 and out.copy_to_host().tolist() == [1.0, 1.0]


# a device condition held by a name: its comparison and bound, by value
STOP = None
LOOP = types.SimpleNamespace(stop=None)


@cuda.jit
def _tick(n):
    if cuda.grid(1) == 0:
        n[0] += 1


@gt.graph(backend="sim")
def until_global(s, n):
    with s.while_loop(STOP, max_iterations=10) as body:
        _tick[1, 1, body](n)


@gt.graph(backend="sim")
def until_setting(s, n):
    with s.while_loop(LOOP.stop, max_iterations=10) as body:
        _tick[1, 1, body](n)


def _until_closure():
    stop = None

    @gt.graph(backend="sim")
    def until_closure(s, n):
        with s.while_loop(stop, max_iterations=10) as body:
            _tick[1, 1, body](n)

    def put(c):
        nonlocal stop
        stop = c
    return until_closure, put


def _put_global(c):
    global STOP
    STOP = c


@pytest.mark.parametrize("where", ["global", "setting", "closure"])
def test_a_condition_held_by_a_name_is_watched_by_its_comparison_and_bound(where):
    """``STOP = gt.cond(n) < lim`` read by ``s.while_loop(STOP)``: another bound or
    comparison traces anew (the first one's bound stayed baked in); a new
    condition alike, on another argument, finds its graph."""
    f, put = _until_closure() if where == "closure" else (until_global, _put_global) \
        if where == "global" else (until_setting, lambda c: setattr(LOOP, "stop", c))
    try:
        for stop, ran, misses in ((lambda c: gt.cond(c) < 3, 3, 1),
                                  (lambda c: gt.cond(c) < 3, 3, 1),
                                  (lambda c: gt.cond(c) < 5, 5, 2),
                                  (lambda c: gt.cond(c) <= 5, 6, 3),
                                  (lambda c: gt.cond(c) < 5.0, 5, 4)):
            n = cuda.to_device(np.zeros(1, np.int32))
            put(stop(n))
            f(n)
            assert n.copy_to_host()[0] == ran and f.cache_info().misses == misses
    finally:
        _put_global(None)
        LOOP.stop = None


def test_a_condition_held_by_a_name_comparing_with_an_array_no_argument_holds_is_refused():
    """``STOP = gt.cond(n) < lim`` with ``lim`` a device array the function is not
    handed: a condition held by a name is read for its comparison, not for its
    arrays, so the refusal says a condition's arrays must be arguments (it said
    the array was reached by no global name, though STOP held it)."""
    until_global.clear_cache()
    try:
        n, lim = (cuda.to_device(np.array([v], np.int32)) for v in (0, 4))
        _put_global(gt.cond(n) < lim)
        with pytest.raises(gt.ArgumentError, match=r"test_watch.py:\d+: the right side of "
                           r"this device condition \(int32\[1\]\) is not an argument of "
                           r"until_global: a condition's arrays must be arguments.*STOP = "
                           r"gt.cond\(c\) < LIM.*pass the array to until_global as an "
                           r"argument"):
            until_global(n)
        assert n.copy_to_host()[0] == 0
    finally:
        _put_global(None)


@pytest.mark.parametrize("where", ["global", "setting", "closure"])
def test_a_condition_held_by_a_name_on_an_array_a_call_no_longer_passes_is_refused(where):
    """``STOP = gt.cond(n) < 3`` on the array the first call passes: a later call
    passing another array, while STOP still tests the first, no longer finds the
    graph bound with the condition on that argument (which tested the new array,
    where eager code tests the first): it traces anew and is refused at the loop's
    line, as a condition on no argument is; passing the first array again finds
    its graph."""
    f, put = _until_closure() if where == "closure" else (until_global, _put_global) \
        if where == "global" else (until_setting, lambda c: setattr(LOOP, "stop", c))
    f.clear_cache()
    try:
        n = cuda.to_device(np.zeros(1, np.int32))
        put(gt.cond(n) < 3)
        f(n)
        other = cuda.to_device(np.zeros(1, np.int32))
        with pytest.raises(gt.ArgumentError, match=r"test_watch.py:\d+: the array of this "
                           r"device condition .* is not an argument of until_\w+"):
            f(other)
        assert other.copy_to_host()[0] == 0
        n[0] = 0
        f(n)
        assert n.copy_to_host()[0] == 3 and f.cache_info().misses == 2
    finally:
        _put_global(None)
        LOOP.stop = None

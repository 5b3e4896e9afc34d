"""Arrays a graph reaches other than through its parameters are tracked or refused.

Each test runs on the simulator, where results can be read on the CPU: a
reassigned name must change the result of the next call (tracked), and an
array graphtrace cannot watch is an error at the user's line (refused).
The function stays usable after every error.
"""
import functools
import types
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from numba import cuda

import graphtrace as gt
from helpers import FakeDeviceArray, line_of


@cuda.jit
def add_into(src, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] += src[i]


def dev(*values):
    return cuda.to_device(np.array(values, dtype=np.float32))


def result(out):
    return out.copy_to_host().tolist()


OFFSET = dev(1, 1)
TABLE = [dev(10, 10), dev(20, 20)]


def helper(s, out):
    add_into[1, 2, s](OFFSET, out)


def helper_of_helper(s, out):
    helper(s, out)


@gt.graph(backend="sim")
def uses_helper(s, out):
    helper_of_helper(s, out)


def test_a_helper_functions_global_is_tracked():
    global OFFSET
    keep = OFFSET
    try:
        out = dev(0, 0)
        uses_helper(out)
        assert result(out) == [1, 1]
        OFFSET = dev(5, 5)
        uses_helper(out)                       # the very same arguments: the shortcut
        assert result(out) == [6, 6]
        assert "add_into[1, 2](OFFSET, out)" in str(uses_helper.trace(out))
    finally:
        OFFSET = keep


@gt.graph(backend="sim")
def inner(s, out):
    add_into[1, 2, s](TABLE[1], out)


@gt.graph(backend="sim")
def outer(s, out):
    inner(s, out)


def test_a_nested_graph_functions_global_list_is_tracked():
    keep = TABLE[1]
    try:
        out = dev(0, 0)
        outer(out)
        TABLE[1] = dev(7, 7)                   # the list is the same object; its item is not
        outer(out)
        assert result(out) == [27, 27]
        assert "TABLE[1]" in str(outer.trace(out))
    finally:
        TABLE[1] = keep


def test_a_reassigned_helper_function_is_seen():
    global helper
    keep = helper
    out = dev(0, 0)
    uses_helper(out)

    def doubled(s, out):
        add_into[1, 2, s](OFFSET, out)
        add_into[1, 2, s](OFFSET, out)
    try:
        helper = doubled
        uses_helper(out)
        assert result(out) == [3, 3]
    finally:
        helper = keep


def scaled_helper(s, out, times=1):
    for _ in range(times):
        add_into[1, 2, s](OFFSET, out)


@gt.graph(backend="sim")
def uses_scaled_helper(s, out):
    scaled_helper(s, out)


class UsesScaledHelper:
    @gt.graph(backend="sim")
    def step(self, s, out):
        scaled_helper(s, out)


def test_a_helper_updated_in_place_is_seen():
    """%autoreload 2 keeps a function object and sets its code and defaults."""
    keep = scaled_helper.__code__, scaled_helper.__defaults__

    def twice(s, out, times=1):
        for _ in range(2 * times):
            add_into[1, 2, s](OFFSET, out)
    model = UsesScaledHelper()
    try:
        for call in (uses_scaled_helper, model.step):
            scaled_helper.__code__, scaled_helper.__defaults__ = keep
            out = dev(0, 0)
            call(out)
            call(out)   # the shortcut's graph, then the helper changes:
            scaled_helper.__code__ = twice.__code__
            call(out)
            assert result(out) == [4, 4]
            scaled_helper.__defaults__ = (2,)
            call(out)
            assert result(out) == [8, 8]
    finally:
        scaled_helper.__code__, scaled_helper.__defaults__ = keep


def kw_helper(s, out, *, times=1):
    for _ in range(times):
        add_into[1, 2, s](OFFSET, out)


@gt.graph(backend="sim")
def uses_kw_helper(s, out):
    kw_helper(s, out)


class UsesKwHelper:
    def helper(self, s, out, *, times=1):
        for _ in range(times):
            add_into[1, 2, s](OFFSET, out)

    @gt.graph(backend="sim")
    def step(self, s, out):
        self.helper(s, out)


@gt.graph(backend="sim", static=("times",))
def own_kw(s, out, *, times=1):
    for _ in range(times):
        add_into[1, 2, s](OFFSET, out)


def test_keyword_defaults_changed_in_place_are_seen():
    """helper.__kwdefaults__["times"] = 3: the dict was compared by identity alone, so
    the graph of the old default replayed (a helper's, a method's, the function's own)."""
    model = UsesKwHelper()
    for call, fn in ((uses_kw_helper, kw_helper), (model.step, UsesKwHelper.helper),
                     (own_kw, own_kw.__wrapped__)):
        try:
            out = dev(0, 0)
            call(out)
            call(out)   # the shortcut's graph, then the default changes in place:
            fn.__kwdefaults__["times"] = 3
            call(out)
            assert result(out) == [5, 5], call
        finally:
            fn.__kwdefaults__["times"] = 1


def test_a_graph_function_updated_in_place_traces_again():
    @gt.graph(backend="sim", static="times")
    def step(s, out, times=1):
        for _ in range(times):
            add_into[1, 2, s](OFFSET, out)

    def twice(s, out, times=1):
        for _ in range(2 * times):
            add_into[1, 2, s](OFFSET, out)

    def other(s, out, n=1):
        add_into[1, 2, s](OFFSET, out)
    out = dev(0, 0)
    step(out)
    step(out)
    step.__wrapped__.__code__ = twice.__code__
    step(out)
    assert result(out) == [4, 4]
    step.__wrapped__.__defaults__ = (2,)   # the new default binds the call
    step(out)
    assert result(out) == [8, 8]
    step.__wrapped__.__code__ = other.__code__
    with pytest.raises(gt.ArgumentError, match=r"parameters changed.*decorate the new") as e:
        step(out)  # the call
    assert e.value.source[1] == line_of(__file__, "the call")


LOCAL_SOURCE = """
from numba import cuda
FACTOR = {f}

@cuda.jit
def kern(src, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] += src[i] * {f}
"""


class ImportsInside:
    @gt.graph(backend="sim")
    def step(self, s, out):
        from local_kmod import kern
        kern[1, 2, s](OFFSET, out)


@pytest.mark.parametrize("form", ["from", "as", "method", "late"])
def test_a_module_imported_inside_the_graph_function_is_watched(tmp_path, monkeypatch, form):
    import importlib
    import sys
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.delitem(sys.modules, "local_kmod", raising=False)
    (tmp_path / "local_kmod.py").write_text(LOCAL_SOURCE.format(f=2.0))

    @gt.graph(backend="sim")
    def imports_from(s, out):
        from local_kmod import kern
        kern[1, 2, s](OFFSET, out)

    @gt.graph(backend="sim")
    def imports_as(s, out):
        import local_kmod as km
        for _ in range(int(km.FACTOR)):
            add_into[1, 2, s](OFFSET, out)
    call = {"from": imports_from, "as": imports_as, "late": imports_from,
            "method": ImportsInside().step}[form]
    if form != "late":   # late: imported by the first call only
        importlib.import_module("local_kmod")
    out = dev(0, 0)
    call(out)
    call(out)
    assert result(out) == [4, 4]
    (tmp_path / "local_kmod.py").write_text(LOCAL_SOURCE.format(f=3.0))
    importlib.invalidate_caches()
    mod = importlib.reload(sys.modules["local_kmod"])
    out = dev(0, 0)
    call(out)
    assert result(out) == [3, 3]
    if form == "as":   # a value set on the module
        mod.FACTOR = 1.0
        out = dev(0, 0)
        call(out)
        assert result(out) == [1, 1]


BIAS = None
EXTRAS = []


@gt.graph(backend="sim")
def adds_bias_and_extras(s, out):
    if BIAS is not None:
        add_into[1, 2, s](BIAS, out)
    for x in EXTRAS:
        add_into[1, 2, s](x, out)


def test_a_global_that_held_no_array_at_the_first_call_is_tracked():
    global BIAS
    out = dev(0, 0)
    adds_bias_and_extras(out)
    try:
        BIAS = dev(1, 2)
        adds_bias_and_extras(out)
        assert result(out) == [1, 2]
    finally:
        BIAS = None


def test_a_global_list_that_was_empty_at_the_first_call_is_tracked():
    out = dev(0, 0)
    adds_bias_and_extras(out)
    try:
        EXTRAS.append(dev(3, 4))
        adds_bias_and_extras(out)
        assert result(out) == [3, 4]
    finally:
        EXTRAS.clear()


SLOTS = [None, None]


@gt.graph(backend="sim")
def adds_first_slot(s, out):
    if SLOTS[0] is not None:
        add_into[1, 2, s](SLOTS[0], out)


def test_an_array_that_moves_to_another_global_place_is_seen():
    x, out = dev(1, 1), dev(0, 0)
    try:
        SLOTS[:] = [None, x]
        adds_first_slot(out)
        SLOTS[:] = [x, None]    # the same arrays in the same order, in other places
        adds_first_slot(out)
        assert result(out) == [1, 1]
    finally:
        SLOTS[:] = [None, None]


def test_a_closure_variable_of_a_lambda_is_tracked():
    x = dev(2, 2)
    body = lambda s, out: add_into[1, 2, s](x, out)  # noqa: E731

    @gt.graph(backend="sim")
    def f(s, out):
        body(s, out)
    out = dev(0, 0)
    f(out)
    x = dev(3, 3)   # noqa: F841  (rebinds the cell that body reads)
    f(out)
    assert result(out) == [5, 5]


class Model:
    def __init__(self):
        self.weights = dev(1, 2)
        self.layers = [dev(1, 1)]
        self.hidden = None

    @gt.graph(backend="sim")
    def step(self, s, out, scale):
        add_into[1, 2, s](self.weights, out)
        add_into[1, 2, s](self.layers[0], out)

    @gt.graph(backend="sim")
    def uses_hidden(self, s, out):
        add_into[1, 2, s](self.hidden.buf, out)   # hidden

    @gt.graph(backend="sim")
    def uses_partial(self, s, out):
        add_into[1, 2, s](self.hidden.args[0], out)   # in a partial


class Holder:
    def __init__(self, buf):
        self.buf = buf


def test_a_method_tracks_the_arrays_of_self():
    m = Model()
    out = dev(0, 0)
    m.step(out, 1.0)
    assert result(out) == [2, 3]
    m.weights = dev(10, 10)
    m.step(out, 1.0)
    assert result(out) == [13, 14]
    m.layers[0] = dev(0, 0)
    m.step(out, 1.0)
    assert result(out) == [23, 24]
    g = m.step.trace(out, 1.0)
    assert g.params == ["self", "out", "scale"]
    assert "add_into[1, 2](self.weights, out)" in str(g)


class Pair:
    def __init__(self, first, second):
        self.first, self.second = first, second

    @gt.graph(backend="sim")
    def add_first(self, s, out):
        if self.first is not None:
            add_into[1, 2, s](self.first, out)


def test_an_array_that_moves_to_another_attribute_is_seen():
    x, out = dev(1, 1), dev(0, 0)
    p = Pair(None, x)
    p.add_first(out)
    p.first, p.second = x, None   # the same arrays in the same order, in other attributes
    p.add_first(out)
    assert result(out) == [1, 1]


def test_an_array_put_on_an_attribute_that_held_none_is_seen():
    out = dev(0, 0)
    p = Pair(None, None)
    p.add_first(out)              # traced without an array: nothing to add
    p.first = dev(1, 1)
    p.add_first(out)              # the very same arguments: the shortcut must not be taken
    assert result(out) == [1, 1]


def test_two_instances_have_their_own_graphs():
    a, b = Model(), Model()
    b.weights = dev(100, 100)
    out_a, out_b = dev(0, 0), dev(0, 0)
    a.step(out_a, 1.0)
    b.step(out_b, 1.0)
    assert result(out_a) == [2, 3] and result(out_b) == [101, 101]


def test_an_array_behind_an_attribute_of_an_attribute_is_the_graphs_and_rebinds():
    # an object of the program's own held by self (self.hidden.buf) is walked:
    # its arrays are the graph's, named after the path, and a new one is seen
    m = Model()
    m.hidden = Holder(dev(1, 1))
    out = dev(0, 0)
    m.uses_hidden(out)
    assert result(out) == [1, 1]
    assert "self.hidden.buf" in str(m.uses_hidden.trace(out))
    m.hidden.buf = dev(2, 3)   # another array in the held object: seen
    m.uses_hidden(out)
    assert result(out) == [3, 4]
    m.hidden = Holder(dev(10, 10))   # another held object: seen
    m.uses_hidden(out)
    assert result(out) == [13, 14]
    m.step(out, 1.0)
    assert result(out) == [15, 17]


def test_an_array_behind_a_library_object_is_still_refused():
    # a library's object (here a functools.partial holding an array) is not walked
    import functools
    m = Model()
    m.hidden = functools.partial(print, dev(1, 1))
    with pytest.raises(gt.ArgumentError) as e:
        m.uses_partial(dev(0, 0))
    assert e.value.source[1] == line_of(__file__, "in a partial")
    assert "pass it to uses_partial as an argument" in str(e.value)


def local_array_helper(s, out):
    made = cuda.device_array(2, np.float32)   # allocated here
    add_into[1, 2, s](made, out)


def library_array_helper(s, out):
    made = FakeDeviceArray(2, np.float32)   # a library's device array, made in the trace
    add_into[1, 2, s](made, out)   # made here


def test_an_array_made_during_the_trace_is_refused():
    """numba's allocation is refused where it is made; an array made otherwise (by a
    library) where it is used."""
    @gt.graph(backend="sim")
    def f(s, out):
        local_array_helper(s, out)
    with pytest.raises(gt.ArgumentError) as e:
        f(dev(0, 0))
    assert e.value.source[1] == line_of(__file__, "allocated here")
    assert "numba.cuda.device_array() inside a trace" in str(e.value)

    @gt.graph(backend="sim")
    def g(s, out):
        library_array_helper(s, out)
    with pytest.raises(gt.ArgumentError) as e:
        g(dev(0, 0))
    assert e.value.source[1] == line_of(__file__, "made here")
    assert "not an argument of g" in str(e.value)


def test_an_array_passed_in_a_static_object_is_refused():
    @gt.graph(backend="sim")
    def f(s, out, cfg):
        add_into[1, 2, s](cfg.buf, out)   # static object
    with pytest.raises(gt.ArgumentError) as e:
        f(dev(0, 0), Holder(dev(1, 1)))
    assert e.value.source[1] == line_of(__file__, "static object")
    assert "is cfg.buf, held by an argument object of f" in str(e.value)
    assert "pass cfg.buf to f as an argument of its own" in str(e.value)


class _Model:
    def __init__(self):
        self.w, self.parts = dev(1, 1), {"b": dev(2, 2)}

    def apply(self, s, out):
        add_into[1, 2, s](self.parts["b"][:1], out)   # held by the method's object

    @gt.graph(backend="sim")
    def update(self, s, out):
        add_into[1, 2, s](self.w, out)                # graph method's object


@pytest.mark.parametrize("how, where, held", [
    ("method", "held by the method's object", "fn.__self__.parts['b']"),
    ("graph method", "graph method's object", "model.w")])
def test_an_array_an_argument_object_holds_is_named_by_its_path(how, where, held):
    """It was refused as 'not an argument', naming neither the path nor the reason."""
    @gt.graph(backend="sim")
    def by_method(s, fn, out):
        fn(s, out)

    @gt.graph(backend="sim")
    def by_graph_method(s, model, out):
        model.update(s, out)
    model = _Model()
    with pytest.raises(gt.ArgumentError) as e:
        if how == "method":
            by_method(model.apply, dev(0, 0))
        else:
            by_graph_method(model, dev(0, 0))
    assert e.value.source[1] == line_of(__file__, where)
    assert f"is {held}, held by an argument object of" in str(e.value)
    if how == "graph method":   # it said "as self of a graph method called on it": done so
        assert "as self of a graph method called on it" not in str(e.value)
        assert "make by_graph_method a graph method of the object's class" in str(e.value)


class _Lazy:
    def __init__(self):
        self.buf = None

    @gt.graph(backend="sim")
    def step(self, s, x):
        if self.buf is None:
            self.buf = cuda.device_array(2)   # made during the trace
        add_into[1, 2, s](x, self.buf)   # the lazy buffer used

    @gt.graph(backend="sim")
    def step_library(self, s, x):
        if self.buf is None:
            self.buf = FakeDeviceArray(2, np.float64)   # a library's, made in the trace
        add_into[1, 2, s](x, self.buf)   # the library's lazy buffer used


def test_an_array_a_graph_method_puts_on_self_while_tracing_says_to_allocate_it_before():
    """It was said to be "held by an argument object", and to reach the object as
    self of a graph method: which the code did. numba's allocation is refused where
    it is made; an array a library made, where it is used."""
    with pytest.raises(gt.ArgumentError) as e:
        _Lazy().step(dev(1, 1))
    assert e.value.source[1] == line_of(__file__, "made during the trace")
    assert "allocate self.buf before the first call (in __init__)" in str(e.value)
    with pytest.raises(gt.ArgumentError) as e:
        _Lazy().step_library(dev(1, 1))
    assert e.value.source[1] == line_of(__file__, "the library's lazy buffer used")
    assert "is self.buf, which self holds where graphtrace does not look" in str(e.value)
    assert "made or put there during the trace" in str(e.value)
    assert "allocate it before the first call" in str(e.value)


def test_the_proxy_stream_may_be_passed_by_keyword():
    @gt.graph(backend="sim")
    def add(s, src, out):
        add_into[1, 2, s](src, out)

    @gt.graph(backend="sim")
    def f(s, x, out):
        add(s=s, src=x, out=out)
        add(out=out, s=s, src=x)
    out = dev(0, 0)
    f(dev(1, 2), out)
    assert result(out) == [2, 4]


def test_a_parameter_named_stream_or_backend_is_the_functions_own():
    @gt.graph(backend="sim")
    def f(s, stream, backend):
        add_into[1, 2, s](stream, backend)
    out = dev(0, 0)
    f(dev(1, 2), backend=out)
    f(stream=dev(1, 2), backend=out)
    assert result(out) == [2, 4]
    assert f.trace(dev(1, 2), out).params == ["stream", "backend"]


def test_a_proxy_stream_parameter_named_stream_inlines_by_keyword():
    @gt.graph(backend="sim")
    def add(stream, src, out):
        add_into[1, 2, stream](src, out)

    @gt.graph(backend="sim")
    def f(s, x, out):
        add(stream=s, src=x, out=out)
    out = dev(0, 0)
    f(dev(1, 2), out)
    assert result(out) == [1, 2]


def test_the_static_hint_for_a_number_in_a_tuple_names_the_parameter():
    @gt.graph(backend="sim")
    def f(s, out, dims):
        if dims[0] > 1:
            pass
    with pytest.raises(gt.DynamicScalarError) as e:
        f.trace(dev(0, 0), (2, 3))
    assert "static=('dims',)" in str(e.value)
    assert "'dims[0]'" in str(e.value)
    traced = gt.graph(f.fn, static=("dims",), backend="sim").trace(dev(0, 0), (2, 3))
    assert traced.nodes == []


def test_a_list_of_constants_handed_to_a_host_callback_warns_at_the_users_line():
    log = []

    @gt.graph(backend="sim")
    def f(s, h):
        s.host(lambda out: out.append(1), log)   # log
        s.host(lambda x: None, [h])
    h = gt.pinned_empty(2, np.float32)
    with pytest.warns(UserWarning, match="lost to the caller") as w:
        f.trace(h)
    assert len(w) == 1 and w[0].lineno == line_of(__file__, "log")


def _record(log, h):
    log.append(float(h[0]))


def _by_lambda(s, h, log):
    s.host(lambda hh: log.append(float(hh[0])), h)   # held by a lambda


def _by_def(s, h, log):
    def cb(hh):
        log["last"] = float(hh[0])
    s.host(cb, h)   # held by a def


def _by_partial(s, h, log):
    s.host(functools.partial(_record, log), h)   # held by a partial


@pytest.mark.parametrize("body, log, marker", [(_by_lambda, [], "held by a lambda"),
                                               (_by_def, {}, "held by a def"),
                                               (_by_partial, [], "held by a partial")])
def test_a_list_or_dict_argument_a_host_callback_holds_warns_at_the_users_line(body, log,
                                                                              marker):
    """A callback holding (closure, partial) a list or dict passed to the graph
    function holds the copy the function was handed: what it appends or assigns
    never reaches the caller's. Said at the s.host line; one holding nothing of
    the arguments says nothing."""
    f = gt.graph(backend="sim")(body)
    h = gt.pinned_empty(2, np.float64)
    with pytest.warns(UserWarning, match=r"holds argument log of .* was handed a copy of "
                      r"that list or dict.* lost to the caller") as w:
        f(h, log)
    assert [x.lineno for x in w] == [line_of(__file__, marker)]
    mine = []

    @gt.graph(backend="sim")
    def g(s, h, log):
        s.host(lambda hh: mine.append(1), h)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g(h, [])
    assert mine == [1]

def _read_setting(cfg, seen, hh):
    seen.append((cfg["run"], cfg.get("tag"), "run" in cfg))


def test_a_host_callback_only_reading_a_dict_argument_it_holds_says_nothing():
    """A callback holding a dict of settings passed to the graph function and only
    reading it (a lambda's closure, a partial's argument) loses nothing to the
    copy: it warned as one appending to it would. Each call's settings reach it,
    since they are part of the signature."""
    seen = []

    @gt.graph(backend="sim")
    def f(s, h, cfg):
        s.host(lambda hh: seen.append((cfg["run"], cfg.get("tag"), "run" in cfg)), h)
        s.host(functools.partial(_read_setting, cfg, seen), h)
    h = gt.pinned_empty(2, np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(h, {"run": "a"})
        f(h, {"run": "b"})
    assert seen == [("a", None, True)] * 2 + [("b", None, True)] * 2


def _log_run(h, cfg):
    print(cfg["run"], len(cfg), h[0])


def test_a_host_callback_reading_settings_says_nothing_and_one_changing_an_item_warns():
    """Reads of a dict or list argument a callback is handed or holds (a test of
    it, ``len``, an f-string, an item by a computed key) lose nothing; a change one
    level down (``stats["losses"].append``) changes a copy too, and said nothing."""
    seen = []

    @gt.graph(backend="sim")
    def reads(s, h, cfg, names):
        s.host(lambda hh: seen.append((len(cfg), f"{cfg}", names[len(seen) % 2 + 0]))
               if cfg else None, h)
        s.host(_log_run, h, cfg)
    h = gt.pinned_empty(2, np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reads(h, {"run": "a"}, ["x", "y"])
    assert seen == [(1, "{'run': 'a'}", "x")]

    @gt.graph(backend="sim")
    def nested(s, h, stats):
        s.host(lambda hh: stats["losses"].append(float(hh[0])), h)   # nested item
    with pytest.warns(UserWarning, match=r"holds argument stats of nested .* lost to the "
                      r"caller") as w:
        nested(h, {"losses": []})
    assert [x.lineno for x in w] == [line_of(__file__, "nested item")]


def test_many_instances_of_a_method_do_not_warn_of_retracing_nor_stay_alive():
    import gc
    import warnings
    import weakref
    out = dev(0, 0)
    refs = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", gt.RetraceWarning)
        for _ in range(12):
            m = Model()
            m.step(out, 1.0)
            refs.append(weakref.ref(m))
    del m
    Model.step.clear_cache()
    gc.collect()
    assert all(r() is None for r in refs)


_places = st.recursive(st.sampled_from([None, 0, "x", np.zeros(1)]),
                       lambda inner: st.lists(inner, max_size=3)
                       | st.lists(inner, max_size=3).map(tuple)
                       | st.dictionaries(st.sampled_from("ab"), inner, max_size=2),
                       max_leaves=6)


def _empty_place(v) -> bool:
    return v is None or isinstance(v, (list, tuple, dict)) and all(
        _empty_place(x) for x in (v.values() if isinstance(v, dict) else v))


@settings(max_examples=300, deadline=None)
@given(_places)
def test_a_name_is_watched_when_it_holds_only_none_and_empty_containers(v):
    """``BIAS = None`` or ``EXTRAS = [[], None]`` may get an array later: watched;
    a name holding anything else (a number, a string) is not a place for arrays."""
    from graphtrace.values import _may_hold_arrays
    assert _may_hold_arrays(v) == _empty_place(v)


@settings(max_examples=300, deadline=None)
@given(_places)
def test_every_array_in_a_named_container_is_found(v):
    from graphtrace.values import _leaves
    assert [id(a) for _, a in _leaves(v, "v")] == \
        [id(x) for x in _flat(v) if isinstance(x, np.ndarray)]


def _flat(v):
    if isinstance(v, (list, tuple, dict)):
        for x in (v.values() if isinstance(v, dict) else v):
            yield from _flat(x)
    else:
        yield v


STEP = 1.0


@gt.graph(backend="sim")
def add_step(s, out):
    add_scalar[1, 2, s](out, STEP)


@cuda.jit
def add_scalar(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] += v


def test_a_number_held_by_a_global_name_is_watched():
    global STEP
    keep = STEP
    try:
        out = dev(0, 0)
        add_step(out)
        STEP = 5.0
        add_step(out)                      # the very same arguments: the shortcut
        assert result(out) == [6, 6]
        misses = add_step.cache_info().misses
        add_step(out)
        assert result(out) == [11, 11] and add_step.cache_info().misses == misses
    finally:
        STEP = keep


def test_a_view_reaching_bytes_its_argument_does_not_hold_is_refused():
    from helpers import FakeDeviceArray, any_kernel
    k = any_kernel()

    @gt.graph
    def f(s, x):
        s.launch(k, 1, 1, x.view(0, (15,), (4,)))   # gaps
    big = FakeDeviceArray(16)
    x = big.view(0, (8,), (8,))        # every other element of big
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(x)
    assert e.value.source[1] == line_of(__file__, "gaps")


def test_a_number_of_another_type_is_another_graph():
    """1, 1.0 and True are equal but pack differently: each traces its own graph."""
    global STEP
    keep = STEP
    try:
        out = dev(0, 0)
        for v in (1, 1.0, True, 1):
            STEP = v
            add_step(out)
        assert result(out) == [4, 4]
        assert add_step.cache_info().currsize >= 3
    finally:
        STEP = keep


@pytest.mark.parametrize("held", ["array", "number", "kernel"])
def test_a_closure_name_deleted_after_the_first_call_is_not_replayed(held):
    def make():
        bias, step, kern = dev(1, 1), 1.0, add_scalar

        @gt.graph(backend="sim")
        def f(s, out):
            if held == "array":
                add_into[1, 2, s](bias, out)
            elif held == "number":
                add_scalar[1, 2, s](out, step)
            else:
                kern[1, 2, s](out, 1.0)

        def forget():
            nonlocal bias, step, kern
            if held == "array":
                del bias
            elif held == "number":
                del step
            else:
                del kern
        return f, forget
    f, forget = make()
    out = dev(0, 0)
    f(out)
    forget()
    with pytest.raises(NameError):
        f(out)
    assert result(out) == [1, 1]


_CELL = '''
@gt.graph(backend="sim")
def f(s, out):
    add_scalar[1, 32, s](out, 1.0 if GAIN is None else GAIN)
'''


@pytest.mark.parametrize("first", ["undefined", None])
def test_a_name_that_held_nothing_at_the_first_call_is_watched_once_it_holds_a_number(first):
    """A notebook: the graph's cell runs before the name is defined (a NameError), or
    while it holds None; the numbers it holds later are watched by value, and a
    function it holds later by identity."""
    ns = {"gt": gt, "add_scalar": add_scalar}
    if first is None:
        ns["GAIN"] = None
    exec(_CELL, ns)
    f, out = ns["f"], dev(0, 0)
    if first == "undefined":
        with pytest.raises(NameError):
            f(out)
    else:
        f(out)
        assert result(out) == [1, 1]
    for gain in (2.0, 3.0, 10.0, 3.0):
        ns["GAIN"] = gain
        before = result(out)[0]
        f(out)
        assert result(out) == [before + gain] * 2


def test_a_name_that_held_an_array_then_holds_a_number_is_watched():
    ns = {"gt": gt, "add_scalar": add_scalar, "GAIN": dev(0, 0)}
    exec(_CELL.replace("1.0 if GAIN is None else GAIN",
                       "2.0 if not isinstance(GAIN, float) else GAIN"), ns)
    f, out = ns["f"], dev(0, 0)
    f(out)
    for gain in (5.0, 7.0, 7.0):
        ns["GAIN"] = gain
        before = result(out)[0]
        f(out)
        assert result(out) == [before + gain] * 2


_HELPERS = '''
ALPHA = 2.0

def helper(s, out):
    add_scalar[1, 32, s](out, ALPHA)
'''


@pytest.mark.parametrize("call", ["helpmod.helper(s, out)", "OPS['add'](s, out)",
                                  "STEPS[0](s, out)", "s.child(OPS['add'], out)"])
def test_a_helper_held_by_a_module_or_a_container_is_followed_into_its_globals(call):
    """The globals of a helper reached as mod.helper, OPS["add"] or STEPS[0] are
    watched as those of a helper reached by its own name: a new ALPHA traces anew."""
    mod = types.ModuleType("helpmod")
    mod.add_scalar, mod.gt = add_scalar, gt
    exec(_HELPERS, vars(mod))
    if call.startswith("s.child"):
        mod.helper = gt.graph(mod.helper)
    ns = {"gt": gt, "helpmod": mod, "OPS": {"add": mod.helper}, "STEPS": [mod.helper]}
    exec(f"@gt.graph(backend='sim')\ndef f(s, out):\n    {call}\n", ns)
    f, out = ns["f"], dev(0, 0)
    for alpha in (2.0, 3.0, 3.0, 5.0):
        mod.ALPHA = alpha
        before = result(out)[0]
        f(out)
        assert result(out) == [before + alpha] * 2, (call, alpha)


_PROGRESS = '''
calls, last = 0, None

def report(h):
    global calls, last
    calls += 1
    last = float(h[0])
'''


@pytest.mark.parametrize("call", ["s.host(progress.report, gt.In(h))",
                                  "s.host(report, gt.In(h))"])
def test_state_a_host_callback_keeps_in_globals_is_not_watched(call):
    """Globals a helper assigns (a callback's counter, its last value, which start
    as a number or None) are its state, not a setting the graph bakes in: they
    change at every run, and the graph is not traced again for them."""
    progress = types.ModuleType("progress")
    exec(_PROGRESS, vars(progress))
    ns = {"gt": gt, "progress": progress, "report": progress.report}
    exec(f"@gt.graph(backend='sim')\ndef f(s, x, h):\n    s.copy(h, x)\n    {call}\n", ns)
    f, h = ns["f"], gt.pinned_empty(2, np.float32)
    for i in range(6):
        f(dev(i, i), h)
    assert progress.calls == 6 and progress.last == 5.0
    assert f.cache_info().misses == 1


KEPT_BY_CALLBACK = []   # host copies a host callback keeps: its state
SOURCE = dev(3, 3)       # an array the graph itself reads by name, beside them


def _keep(h):
    KEPT_BY_CALLBACK.append(h.copy())


def _keep_through_a_helper(h):
    _keep(h)


def _callback(how):
    kept = KEPT_BY_CALLBACK   # (a closure variable of the callback below)

    def cb(h):
        kept.append(h.copy())
    return {"global function": "s.host(_keep, h)",
            "helper it calls": "s.host(_keep_through_a_helper, h)",
            "lambda": "s.host(lambda a: KEPT_BY_CALLBACK.append(a.copy()), h)",
            "partial": "s.host(functools.partial(_keep), h)",
            "closure": "s.host(cb, h)"}[how], cb


@pytest.mark.parametrize("how", ["global function", "helper it calls", "lambda", "partial",
                                 "closure"])
def test_arrays_a_host_callback_keeps_by_name_are_not_the_graphs(how):
    """A global list of host arrays a callback appends to is what it does when it
    runs: not part of the signature (each call would trace anew); the arrays the
    graph reads by name beside it still are."""
    call, cb = _callback(how)
    ns = {**globals(), "cb": cb, "functools": functools}
    exec(f"@gt.graph(backend='sim')\ndef f(s, x, h):\n    add_into[1, 2, s](SOURCE, x)\n"
         f"    s.copy(h, x)\n    {call}\n", ns)
    f, x, h = ns["f"], dev(0, 0), gt.pinned_empty(2, np.float32)
    KEPT_BY_CALLBACK.clear()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", gt.RetraceWarning)
            for _ in range(10):
                f(x, h)
        assert f.cache_info().misses == 1 and len(KEPT_BY_CALLBACK) == 10
        assert KEPT_BY_CALLBACK[-1].tolist() == [30.0, 30.0]
        ns["SOURCE"] = dev(1, 1)
        f(x, h)                               # the graph's own global: rebound
        assert KEPT_BY_CALLBACK[-1].tolist() == [31.0, 31.0]
    finally:
        KEPT_BY_CALLBACK.clear()


class _SelfHolding:
    """A callback object whose history list holds itself."""

    def __init__(self):
        self.history = [0.0]
        self.history.append(self.history)
        self.calls = 0

    def __call__(self, h):
        self.calls += 1


SELF_HOLDING = _SelfHolding()


@gt.graph(backend="sim")
def calls_self_holding(s, h, x):
    s.host(SELF_HOLDING, h)
    s.captured(SELF_HOLDING, x, opaque=True)


def test_a_callback_holding_a_list_inside_itself_is_recorded():
    # what the callback holds is walked for arrays: a list inside itself once
    h, x = gt.pinned_empty(2, np.float64), dev(1, 2)
    calls_self_holding(h, x)
    calls_self_holding(h, x)
    assert SELF_HOLDING.calls == 4   # the callback and the region, twice


class _Base:
    def __init__(self):
        self.k, self.out = 1.0, dev(0, 0)

    def forward(self, s):
        add_scalar[1, 2, s](self.out, self.k)

    @gt.graph(backend="sim")
    def step(self, s):
        self.forward(s)


class _Sub(_Base):
    def forward(self, s):
        super().forward(s)   # reads self.k, which the override does not name
        add_scalar[1, 2, s](self.out, 1.0)


class _SubGraph(_Base):
    @gt.graph(backend="sim")
    def step(self, s):
        super().step(s)   # the base's graph method, inlined
        add_scalar[1, 2, s](self.out, 1.0)


@pytest.mark.parametrize("cls", [_Sub, _SubGraph])
def test_a_setting_of_self_a_bases_method_reads_through_super_is_watched(cls):
    m = cls()
    m.step()
    m.k = 5.0
    m.step()
    assert result(m.out) == [8, 8]


class _AttrDict(dict):
    __getattr__ = dict.__getitem__   # a missing attribute raises KeyError
    __setattr__ = dict.__setitem__


class _HoldsAttrDict:
    def __init__(self):
        self.cfg, self.out = _AttrDict(lr=1.0), dev(0, 0)

    @gt.graph(backend="sim")
    def step(self, s):
        add_scalar[1, 2, s](self.out, self.cfg.lr)


class _ClassAttrDict(_HoldsAttrDict):
    cfg = _AttrDict(lr=1.0)   # read through self

    def __init__(self):
        self.out = dev(0, 0)


ATTR_CFG = _AttrDict(lr=1.0)


class _GlobalAttrDict(_HoldsAttrDict):
    @gt.graph(backend="sim")
    def step(self, s):
        add_scalar[1, 2, s](self.out, ATTR_CFG.lr)


@pytest.mark.parametrize("cls", [_HoldsAttrDict, _ClassAttrDict, _GlobalAttrDict])
def test_a_setting_of_an_attribute_dict_a_method_reads_is_watched(cls):
    """Its lookup of an attribute it lacks raises KeyError (``self.cfg.kernel``,
    ``__wrapped__``, ``__func__`` asked while looking for kernels and methods):
    taken for an attribute it lacks, not an error of the call."""
    m = cls()
    cfg = ATTR_CFG if cls is _GlobalAttrDict else m.cfg
    try:
        m.step()
        cfg.lr = 3.0
        m.step()
        assert result(m.out) == [4, 4]
    finally:
        cfg.lr = 1.0


lr = epoch = 0   # module globals named like attributes the graphs below read


class _Sched:
    def __init__(self):
        self.epoch, self.lr = 0, 1.0

    def rate(self):
        return self.lr * 0.5 ** (self.epoch // 100)


class _Stepped:
    def __init__(self):
        self.sched, self.lr, self.w, self.g = _Sched(), 1.0, dev(0, 0), dev(1, 1)

    @gt.graph(backend="sim")
    def step(self, s):
        add_scalar[1, 2, s](self.w, self.sched.rate() * self.lr)


class _Cfg:
    lr = 1.0


CFG_OBJ = _Cfg()


@gt.graph(backend="sim")
def _reads_cfg(s, g, w):
    add_scalar[1, 2, s](w, CFG_OBJ.lr)


def test_a_global_named_like_an_attribute_the_code_reads_is_not_watched():
    """``co_names`` holds attribute names and global names alike: a global loop
    variable named like an attribute read (``for epoch in ...`` beside
    ``self.epoch``, ``for lr in ...`` beside ``CFG.lr``) made every call trace anew."""
    global lr, epoch
    m, g, w = _Stepped(), dev(1, 1), dev(0, 0)
    try:
        for epoch in range(4):
            for lr in range(2):
                m.step()
                _reads_cfg(g, w)
    finally:
        lr = epoch = 0
    assert _Stepped.step.cache_info().misses == 1 and _reads_cfg.cache_info().misses == 1
    m.sched.lr = 2.0   # the attribute itself is still watched
    m.step()
    assert _Stepped.step.cache_info().misses == 2


def _named_like_a_parameter():
    x = dev(5, 5)   # a closure array named as the graph function's parameter

    def touch(s, out):
        add_into[1, 2, s](x, out)
    return touch


_touch = _named_like_a_parameter()


def test_an_array_a_helper_reaches_by_a_parameters_name_is_listed_apart():
    """A helper's own ``x`` is not the graph function's parameter ``x``: the
    listing, explain and the picture name it ``touch.x``."""
    @gt.graph(backend="sim")
    def f(s, x, out):
        add_into[1, 2, s](x, out)
        _touch(s, out)

    out = dev(0, 0)
    graph = f.trace(dev(1, 1), out)
    listing = str(graph)
    assert "add_into[1, 2](x, out)" in listing and "add_into[1, 2](touch.x, out)" in listing
    f(dev(1, 1), out)
    assert result(out) == [6.0, 6.0]


class _Pair:
    bufs = None

    @classmethod
    def pair(cls):
        return cls.bufs


def test_a_class_attribute_the_trace_sets_to_arrays_is_found_again_without_end():
    """The chain _Pair.bufs read by value held a tuple of arrays once set: each
    lookup found the places again and asked again, without end (RecursionError)
    at the call after the trace."""
    @gt.graph(backend="sim")
    def f(s, a, out):
        _Pair.bufs = (a, out)
        src, dst = _Pair.pair()
        add_into[1, 2, s](src, dst)

    a, out = dev(1, 1), dev(0, 0)
    for _ in range(3):
        f(a, out)
    assert out.copy_to_host().tolist() == [3.0, 3.0]

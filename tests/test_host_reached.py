"""A host callback reading a host array it reaches itself (a global name, a
closure cell, an attribute of the object of a bound method) that a call hands
the graph too.

Traced with another array, the graph has no edge from the copy writing the
argument to the callback; a later call handing it that very array found the
cached graph, and the callback could run first and see stale data. The cache
key holds how such arrays share memory with the call's: the call traces anew,
with the edge (and no refusal of the callback for holding an argument).
"""
import functools
import math
import types

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of

LOG = gt.pinned_empty(8)
SEEN = []


def _report():
    SEEN.append(LOG.copy())


def _closure():
    buf = gt.pinned_empty(8)
    return (lambda: SEEN.append(buf.copy())), buf


CB, CBUF = _closure()


class _Sink:
    def __init__(self):
        self.buf = gt.pinned_empty(8)

    def report(self):
        SEEN.append(self.buf.copy())


SINK = _Sink()


@gt.graph(backend="sim")
def _by_global(s, d, hv):
    s.copy(hv, d)
    s.host(_report)


@gt.graph(backend="sim")
def _by_closure(s, d, hv):
    s.copy(hv, d)
    s.host(CB)


@gt.graph(backend="sim")
def _by_attribute(s, d, hv):
    s.copy(hv, d)
    s.host(SINK.report)


@pytest.mark.parametrize("f, target", [(_by_global, LOG), (_by_closure, CBUF),
                                       (_by_attribute, SINK.buf)])
@pytest.mark.parametrize("history", [False, True])
def test_a_callback_reading_the_array_a_call_hands_the_graph_runs_after_its_writer(
        f, target, history):
    f.clear_cache()
    before = f.cache_info().misses
    SEEN.clear()
    if history:   # what the global list the callback appends to held before: no matter
        SEEN.append(np.zeros(8))
    f(cuda.to_device(np.ones(8)), gt.pinned_empty(8))   # traced: hv is another array
    for i in range(10):
        target[:] = 0
        SEEN.clear()
        d = np.arange(8.0) + i + 1
        f(cuda.to_device(d), target)   # hv is the array the callback reads
        assert np.array_equal(SEEN[0], d)
    assert f.cache_info().misses == before + 2   # traced anew once, for the new aliasing
    f(cuda.to_device(np.ones(8)), gt.pinned_empty(8))   # and apart again: the first graph
    assert f.cache_info().misses == before + 2


def test_a_history_the_callback_appends_to_is_not_in_the_key():
    """The arrays a callback appends to its history are copies: no call traces for them."""
    _by_attribute.clear_cache()
    before = _by_attribute.cache_info().misses
    SEEN.clear()
    for i in range(4):
        _by_attribute(cuda.to_device(np.full(8, float(i))), gt.pinned_empty(8))
    assert len(SEEN) == 4 and _by_attribute.cache_info().misses == before + 1


class _Model:
    """A method handing s.host a method of self that reads a global array (directly,
    through another method of self, or in a lambda)."""

    def report(self):
        SEEN.append(LOG.copy())

    def relay(self):
        self.report()

    @gt.graph(backend="sim")
    def direct(self, s, d, hv):
        s.copy(hv, d)
        s.host(self.report)

    @gt.graph(backend="sim")
    def through(self, s, d, hv):
        s.copy(hv, d)
        s.host(self.relay)

    @gt.graph(backend="sim")
    def in_lambda(self, s, d, hv):
        s.copy(hv, d)
        s.host(lambda: self.report())


@pytest.mark.parametrize("name", ["direct", "through", "in_lambda"])
def test_a_method_of_self_handed_to_host_reading_a_global_runs_after_its_writer(name):
    m = _Model()
    f = getattr(m, name)
    f.clear_cache()
    before = f.cache_info().misses
    f(cuda.to_device(np.ones(8)), gt.pinned_empty(8))   # traced: hv is another array
    for i in range(10):
        LOG[:] = 0
        SEEN.clear()
        d = np.arange(8.0) + i + 1
        f(cuda.to_device(d), LOG)   # hv is the array the callback reads
        assert np.array_equal(SEEN[0], d)
    assert f.cache_info().misses == before + 2


def _report_buffer(buf):
    SEEN.append(buf.copy())


class _CallsBuffer:
    def __init__(self):
        self.buf = gt.pinned_empty(8)

    def __call__(self):
        SEEN.append(self.buf.copy())


class _CallsGlobal:
    def __call__(self):
        SEEN.append(LOG.copy())


CALLS = _CallsBuffer()
PART = functools.partial(_report_buffer, gt.pinned_empty(8))


@gt.graph(backend="sim")
def _passed(s, d, hv, cb):
    s.copy(hv, d)
    s.host(cb)


@gt.graph(backend="sim")
def _by_default(s, d, hv, cb=_report):
    s.copy(hv, d)
    s.host(cb)


@gt.graph(backend="sim")
def _by_partial(s, d, hv):
    s.copy(hv, d)
    s.host(PART)


def _run(f, target, *extra):
    f.clear_cache()
    before = f.cache_info().misses
    SEEN.clear()   # (a function argument's key holds the global list it appends to)
    f(cuda.to_device(np.ones(8)), gt.pinned_empty(8), *extra)   # traced: hv another array
    for i in range(10):
        target[:] = 0
        SEEN.clear()
        d = np.arange(8.0) + i + 1
        f(cuda.to_device(d), target, *extra)   # hv is the array the callback reads
        assert np.array_equal(SEEN[0], d)
    assert f.cache_info().misses == before + 2


@pytest.mark.parametrize("cb, target", [
    (_report, LOG), (SINK.report, SINK.buf), (CALLS, CALLS.buf), (_CallsGlobal(), LOG),
    (PART, PART.args[0]), (functools.partial(lambda tag: _report(), "x"), LOG)],
    ids=["function", "bound method", "callable object", "callable object's global",
         "partial's argument", "partial's function"])
def test_a_callback_passed_as_an_argument_runs_after_the_writer_of_what_it_reads(cb, target):
    _run(_passed, target, cb)


def test_a_callback_of_a_default_argument_runs_after_the_writer_of_what_it_reads():
    _run(_by_default, LOG)


def test_a_partials_argument_runs_after_its_writer():
    _run(_by_partial, PART.args[0])


def _hand_over(s, cb):
    s.host(cb)


@gt.graph(backend="sim")
def _through_helper(s, d, hv, cb):
    s.copy(hv, d)
    _hand_over(s, cb)


def test_a_passed_callback_a_helper_hands_to_host_reading_arrays_is_refused():
    """The key holds the arrays of the callbacks the graph function hands to s.host
    itself; one a helper hands there, reading a host array, is refused at its line."""
    _through_helper.clear_cache()
    with pytest.raises(gt.ArgumentError, match=r"test_host_reached.py:\d+: host callback "
                       r"_report is argument cb of _through_helper, handed to s.host by "
                       r"other code.*s.host\(cb\)"):
        _through_helper(cuda.to_device(np.ones(8)), gt.pinned_empty(8), _report)
    SEEN.clear()   # one reading no array of its own runs
    _through_helper(cuda.to_device(np.ones(8)), gt.pinned_empty(8), lambda: SEEN.append(1))
    assert SEEN == [1]


@gt.graph(backend="sim")
def _by_loop(s, d, hv, cbs):
    s.copy(hv, d)
    for cb in cbs:
        s.host(cb)


@gt.graph(backend="sim")
def _by_items(s, d, hv, cbs):
    s.copy(hv, d)
    for _, cb in cbs.items():
        s.host(cb)


@gt.graph(backend="sim")
def _by_unpacking(s, d, hv, cbs):
    s.copy(hv, d)
    first, second = cbs
    s.host(first)
    s.host(second)


@pytest.mark.parametrize("f, cbs", [
    (_by_loop, [_report, lambda: None]), (_by_items, {"log": _report}),
    (_by_unpacking, (_report, lambda: None))], ids=["for loop", "items", "unpacking"])
def test_a_callback_a_loop_or_unpacking_of_an_argument_hands_to_host_runs_after_its_writer(
        f, cbs):
    """A local taking a callback off a list or dict argument (a loop target, a name
    it is unpacked to) counts as that argument: not refused as handed to s.host by
    other code, and ordered after the copy writing the array it reads."""
    _run(f, LOG, cbs)


@gt.graph(backend="sim")
def _by_comprehension(s, d, hv, cbs):
    s.copy(hv, d)
    [s.host(cb) for cb in cbs]


def test_a_callback_the_function_hands_to_host_by_a_name_it_does_not_follow_is_not_refused():
    """An s.host line of the graph function's own code is never refused as another's."""
    _by_comprehension.clear_cache()
    SEEN.clear()
    _by_comprehension(cuda.to_device(np.ones(8)), gt.pinned_empty(8), [_report])
    assert len(SEEN) == 1


KEPT = []


def _keep(h):   # keeps the view it is handed (a history)
    KEPT.append(h)


def _snapshot():   # reads LOG, keeps copies of it
    KEPT.append(LOG.copy())


@gt.graph(backend="sim")
def _hands_on(s, d, hv, cb):
    s.copy(hv, d)
    s.host(cb, hv)


@pytest.mark.parametrize("f, cb, target", [
    (_hands_on, _keep, gt.pinned_empty(8)), (_passed, _snapshot, LOG)],
    ids=["keeps the view", "keeps snapshots"])
def test_a_passed_callback_keeping_a_history_does_not_trace_each_call(f, cb, target):
    """What a passed callback appends to (a history) is no array it reads: the key
    leaves it out, as for a callback of a global name, and calls stop tracing."""
    f.clear_cache()
    KEPT.clear()
    for i in range(6):
        d = np.arange(8.0) + i
        f(cuda.to_device(d), target, cb)
        if i == 2:
            misses = f.cache_info().misses
    assert f.cache_info().misses == misses
    assert np.array_equal(KEPT[-1], d)


class _Reader:
    def __init__(self):
        self.buf = gt.pinned_empty(8)

    def read(self):
        SEEN.append(self.buf.copy())


class _Notifier:
    """Reaches a host array through a method of an object it holds (self.sink.read())."""

    def __init__(self):
        self.sink = _Reader()

    def __call__(self):
        self.sink.read()

    def notify(self):
        self.sink.read()


def test_a_passed_callable_object_reading_through_an_object_it_holds_runs_after_its_writer():
    """A callable object whose __call__ calls a method of an object it holds
    (self.sink.read(), reading self.sink.buf): ordered after the copy writing that
    array, and the key holds how it shares memory with the call's arrays."""
    cb = _Notifier()
    _run(_passed, cb.sink.buf, cb)


@gt.graph(backend="sim")
def _by_method_of_argument(s, d, hv, logger):
    s.copy(hv, d)
    s.host(logger.read)


@gt.graph(backend="sim")
def _by_attribute_of_argument(s, d, hv, cfg):
    s.copy(hv, d)
    s.host(cfg.on_step)


def test_a_method_taken_off_an_object_argument_runs_after_the_writer_of_what_it_reads():
    """s.host(logger.read) of an object a call passes, reading logger.buf, and
    s.host(cfg.on_step) of a namespace holding a function reading a global array: the
    key holds how those arrays share memory with the call's, as for s.host(cb)."""
    reader = _Reader()
    _run(_by_method_of_argument, reader.buf, reader)
    _run(_by_attribute_of_argument, LOG, types.SimpleNamespace(on_step=_report))


class _Relaying:   # (no __call__, whose code the key would read as the graph's)
    def __init__(self):
        self.sink = _Reader()

    def notify(self):
        self.sink.read()

    @gt.graph(backend="sim")
    def step(self, s, d, hv):
        s.copy(hv, d)
        s.host(self.notify)


RELAY = _Relaying()


@gt.graph(backend="sim")
def _by_global_relay(s, d, hv):
    s.copy(hv, d)
    s.host(RELAY.notify)


def test_a_method_calling_a_method_of_an_object_it_holds_runs_after_its_writer():
    """s.host(self.notify) of a method, and s.host(RELAY.notify) of a global object,
    where notify calls self.sink.read() reading self.sink.buf: the key holds how that
    array shares memory with the call's (the objects the callback's code names are
    walked as a callback's, not keyed by value), so a call handing the graph that
    very buffer traces anew, with the edge."""
    m = _Relaying()
    _run(m.step, m.sink.buf)
    _run(_by_global_relay, RELAY.sink.buf)


def _closing_over(relay):
    def cb():
        relay.notify()
    return cb


CLOSED, BOUND_BY_PARTIAL, MADE_PARTIAL = _Relaying(), _Relaying(), _Reader()
CLOSURE_RELAY = _closing_over(CLOSED)
PARTIAL_RELAY = functools.partial(_Relaying.notify, BOUND_BY_PARTIAL)


@gt.graph(backend="sim")
def _by_closure_object(s, d, hv):
    s.copy(hv, d)
    s.host(CLOSURE_RELAY)


@gt.graph(backend="sim")
def _by_partial_object(s, d, hv):
    s.copy(hv, d)
    s.host(PARTIAL_RELAY)


@gt.graph(backend="sim")
def _by_partial_made(s, d, hv):
    s.copy(hv, d)
    s.host(functools.partial(_Reader.read, MADE_PARTIAL))


@pytest.mark.parametrize("f, target, extra", [
    (_by_closure_object, CLOSED.sink.buf, ()),
    (_by_partial_object, BOUND_BY_PARTIAL.sink.buf, ()),
    (_by_partial_made, MADE_PARTIAL.buf, ()),
    (_passed, BOUND_BY_PARTIAL.sink.buf, (PARTIAL_RELAY,))],
    ids=["closure's object", "partial's object", "partial made in the graph", "passed partial"])
def test_a_callback_calling_a_method_of_an_object_its_closure_or_partial_holds_runs_after_its_writer(
        f, target, extra):
    """A closure calling relay.notify() and partial(_Relaying.notify, relay), where
    notify calls self.sink.read() reading self.sink.buf: the callback is ordered after
    the copy writing that buffer, and the key holds how it shares memory with the
    call's arrays, as for a bound method's object."""
    _run(f, target, *extra)


HELD_IN_DICT, HELD_IN_LIST = {"relay": _Relaying()}, [_Relaying()]


def _closing_over_item(box):
    def cb():
        box["relay"].notify()
    return cb


CLOSED_BOX = {"relay": _Relaying()}
ITEM_CLOSURE = _closing_over_item(CLOSED_BOX)


def _notify_dict_item():
    HELD_IN_DICT["relay"].notify()


@gt.graph(backend="sim")
def _by_global_dict_item(s, d, hv):
    s.copy(hv, d)
    s.host(_notify_dict_item)


@gt.graph(backend="sim")
def _by_global_list_item(s, d, hv):
    s.copy(hv, d)
    s.host(lambda: HELD_IN_LIST[0].notify())


@gt.graph(backend="sim")
def _by_closure_item(s, d, hv):
    s.copy(hv, d)
    s.host(ITEM_CLOSURE)


@pytest.mark.parametrize("f, target", [
    (_by_global_dict_item, HELD_IN_DICT["relay"].sink.buf),
    (_by_global_list_item, HELD_IN_LIST[0].sink.buf),
    (_by_closure_item, CLOSED_BOX["relay"].sink.buf)],
    ids=["global dict's item", "global list's item", "closure dict's item"])
def test_a_callback_calling_a_method_of_an_object_held_by_a_constant_item_runs_after_its_writer(
        f, target):
    """HOLDER["relay"].notify() and LST[0].notify() (a global's or a closure's
    container), where notify reads self.sink.buf: the callback is ordered after the
    copy writing that buffer, and the key holds how it shares memory with the call's
    arrays, as for ns.relay.notify()."""
    _run(f, target)


class _Keeping:   # keeps what it reads in a history of its own
    def __init__(self):
        self.buf = gt.pinned_empty(8)
        self.seen = []

    def notify(self):
        self.seen.append(self.buf.copy())


@pytest.mark.parametrize("make", [lambda k: k.notify, lambda k: functools.partial(_Keeping.notify, k)],
                         ids=["bound method", "partial"])
def test_a_callback_made_anew_at_each_call_finds_its_graph(make):
    """s.host(cb) of sk.notify or partial(Keeping.notify, sk), made anew at every call
    (the method appending to sk.seen): the same object and function find the graph
    traced first; another object traces anew and is the one called; the array it
    reads, handed to the graph, still traces anew, with the edge."""
    _passed.clear_cache()
    first, other = _Keeping(), _Keeping()
    for i in range(4):
        _passed(cuda.to_device(np.full(8, float(i))), gt.pinned_empty(8), make(first))
    assert len(first.seen) == 4 and _passed.cache_info().misses == 1
    _passed(cuda.to_device(np.ones(8)), gt.pinned_empty(8), make(other))
    assert len(first.seen) == 4 and len(other.seen) == 1
    assert _passed.cache_info().misses == 2
    for i in range(4):
        d = np.arange(8.0) + i
        _passed(cuda.to_device(d), first.buf, make(first))   # hv is the array it reads
        assert np.array_equal(first.seen[-1], d)
    assert _passed.cache_info().misses == 3


def test_a_partial_made_anew_with_another_function_or_value_traces_anew():
    """partial(f, v) made anew at every call: the key holds its function and its
    arguments, so another function or another value traces anew."""
    _passed.clear_cache()
    got = []
    for v in (1, 1, 2, 2):
        _passed(cuda.to_device(np.ones(8)), gt.pinned_empty(8), functools.partial(got.append, v))
    _passed(cuda.to_device(np.ones(8)), gt.pinned_empty(8),
            functools.partial(lambda v: got.append(-v), 2))
    assert got == [1, 1, 2, 2, -2] and _passed.cache_info().misses == 3


_FLOATS = []


def _progress():
    _FLOATS.append(float(LOG[0]))


@pytest.mark.parametrize("cb, history", [(_report, SEEN), (_progress, _FLOATS)],
                         ids=["snapshots", "numbers"])
def test_a_passed_callback_appending_to_a_global_history_finds_its_graph(cb, history):
    """s.host(cb) of a function passed that appends to a global list when it runs
    (LOG.copy() snapshots, or numbers read off LOG): the list it changes is its
    state, not keyed by value, so each call finds the graph traced first, and the
    callback sees each call's data; LOG handed to the graph still traces anew."""
    _passed.clear_cache()
    history.clear()
    for i in range(4):
        _passed(cuda.to_device(np.full(8, float(i))), gt.pinned_empty(8), cb)
    assert len(history) == 4 and _passed.cache_info().misses == 1
    for i in range(3):
        _passed(cuda.to_device(np.full(8, i + 5.0)), LOG, cb)   # hv is the array it reads
        assert np.array_equal(np.asarray(history[-1]).ravel()[:1], [i + 5.0])
    assert _passed.cache_info().misses == 2


class _Snapshots:   # a graph method handing s.host its own method keeping snapshots on self
    def __init__(self):
        self.snaps = []

    def report(self, h):
        self.snaps.append(h.copy())

    @gt.graph(backend="sim")
    def step(self, s, d, h):
        s.copy(h, d)
        s.host(self.report, h)


def test_a_method_callback_keeping_snapshots_on_self_finds_its_graph():
    """s.host(self.report, h) appending h.copy() to self.snaps: the arrays of that
    history are the callback's, not the graph's, so each call finds the graph
    traced first, and each snapshot holds its call's data."""
    m, h = _Snapshots(), gt.pinned_empty(8)
    for i in range(4):
        m.step(cuda.to_device(np.full(8, float(i))), h)
        assert np.array_equal(m.snaps[-1], np.full(8, float(i)))
    assert len(m.snaps) == 4 and _Snapshots.step.cache_info().misses == 1


@cuda.jit
def _nll(p, out):   # math.log, cuda.grid, atomic.add: names of modules, not of self
    i = cuda.grid(1)
    if i < p.size:
        cuda.atomic.add(out, 0, -math.log(p[i]))


class _LossLog:   # a loss history on self named like what a kernel or math reads: log
    def __init__(self):
        self.log, self.base = [], 2.0

    def record(self, h):
        self.log.append(float(h[0]))

    @gt.graph(backend="sim")
    def step(self, s, p, h):
        loss = s.zeros(1, np.float32)
        _nll[1, 8, s](p, loss)
        s.copy(h, loss)
        s.host(self.record, h)

    @gt.graph(backend="sim")
    def scaled(self, s, p, h):   # its own code calls math.log, on the host
        loss = s.zeros(1, np.float32)
        _nll[1, 8, s](p, loss)
        s.copy(h, loss)
        if math.log(self.base) > 0:
            s.host(self.record, h)


@pytest.mark.parametrize("how", ["step", "scaled"])
def test_a_history_a_method_callback_keeps_named_as_a_modules_function_finds_its_graph(how):
    """s.host(self.record, h) appending to self.log, where a kernel of the graph or
    its own code reads math.log: no read of self.log, so the history is not keyed
    (each call traced anew before, with no warning)."""
    m, h = _LossLog(), gt.pinned_empty(1, np.float32)
    f = getattr(m, how)
    for _ in range(4):
        f(cuda.to_device(np.full(8, 0.5, np.float32)), h)
    assert np.allclose(m.log, [8 * math.log(2.0)] * 4)
    assert f.cache_info().misses == 1


class _Scorer:   # a held object whose method launches a kernel reading math.log
    def __init__(self):
        self.log = []

    def score(self, s, p, out):
        _nll[1, 8, s](p, out)


class _Holder:
    def __init__(self):
        self.scorer = _Scorer()

    @gt.graph(backend="sim")
    def step(self, s, p, h):
        loss = s.zeros(1, np.float32)
        self.scorer.score(s, p, loss)
        s.copy(h, loss)


def test_a_held_objects_list_named_as_what_its_kernel_reads_is_not_keyed():
    """The kernel a held object's method launches reads math.log, not the object's
    log: a list there that the program appends to between calls traces nothing anew."""
    m, h = _Holder(), gt.pinned_empty(1, np.float32)
    for i in range(3):
        m.scorer.log.append(i)
        m.step(cuda.to_device(np.full(8, 0.5, np.float32)), h)
    assert np.isclose(h[0], 8 * math.log(2.0)) and _Holder.step.cache_info().misses == 1


class _CallableKeeping:   # a callable object keeping what it reads in a history of its own
    def __init__(self):
        self.buf = gt.pinned_empty(8)
        self.seen = []

    def __call__(self):
        self.seen.append(self.buf.copy())


CALLABLE = _CallableKeeping()


@gt.graph(backend="sim")
def _to_callable(s, d, hv):
    s.copy(hv, d)
    s.host(CALLABLE)


def test_a_global_callable_object_keeping_a_history_finds_its_graph():
    """s.host(CALLABLE) of an object whose __call__ appends self.buf.copy() to
    self.seen: __call__ runs as a host callback, so the history it keeps is not
    keyed by value and each call finds the graph traced first; its buf handed to
    the graph still traces anew, with the edge."""
    _to_callable.clear_cache()
    for i in range(4):
        _to_callable(cuda.to_device(np.full(8, float(i))), gt.pinned_empty(8))
    assert len(CALLABLE.seen) == 4 and _to_callable.cache_info().misses == 1
    for i in range(3):
        d = np.arange(8.0) + i
        _to_callable(cuda.to_device(d), CALLABLE.buf)   # hv is the array it reads
        assert np.array_equal(CALLABLE.seen[-1], d)
    assert _to_callable.cache_info().misses == 2


KEEPING = _Keeping()


@gt.graph(backend="sim")
def _to_partial_of_class_function(s, d):
    s.copy(KEEPING.buf, d)
    s.host(functools.partial(_Keeping.notify, KEEPING))


def test_a_partial_of_a_class_function_keeping_a_history_finds_its_graph():
    """s.host(partial(_Keeping.notify, KEEPING)) made in the graph: notify runs as
    a host callback with KEEPING as its self, so the history it appends to
    KEEPING.seen is not keyed by value (it was, as the code of a helper the graph
    calls, and each call traced anew); each call sees its own copy."""
    _to_partial_of_class_function.clear_cache()
    for i in range(4):
        _to_partial_of_class_function(cuda.to_device(np.full(8, float(i))))
        assert np.array_equal(KEEPING.seen[-1], np.full(8, float(i)))
    assert len(KEEPING.seen) == 4
    assert _to_partial_of_class_function.cache_info().misses == 1


class _Configured:
    """Settings served from a dict by ``__getattr__``: a name it lacks raises KeyError."""

    def __init__(self, scale):
        self.__dict__["_cfg"] = {"scale": scale}
        self.__dict__["seen"] = []

    def __getattr__(self, name):
        return self._cfg[name]

    def __call__(self, *arrays):
        if arrays:   # as a captured region's function
            arrays[1][...] = arrays[0] * self.scale
        else:        # as a host callback
            self.seen.append(self.scale)


@gt.graph
def _calling_configured(s, step, x, y, how):
    if how == "host":
        s.host(step)
    else:
        s.captured(step, x, y, reads=[x], writes=[y])


@pytest.mark.parametrize("how, listed", [("host", "host _Configured.__call__()"),
                                         ("captured", "captured _Configured.__call__(x, y)")])
def test_a_callable_object_whose_getattr_raises_keyerror_is_a_callback_or_a_region(how, listed):
    """What graphtrace asks such an object (its __self__, __code__, __name__) and
    it lacks is missing, not an error: tracing raised the KeyError of its lookup."""
    step = _Configured(2.0)
    x, y = cuda.to_device(np.arange(4.0)), cuda.to_device(np.zeros(4))
    assert listed in str(_calling_configured.trace(step, x, y, how))
    _calling_configured(step, x, y, how)
    assert step.seen == ([2.0] if how == "host" else [])
    if how == "captured":
        np.testing.assert_array_equal(y.copy_to_host(), [0.0, 2.0, 4.0, 6.0])


DEV = cuda.to_device(np.zeros(8))


class _DeviceSink:
    def __init__(self, d):
        self.d, self.buf = d, gt.pinned_empty(8)

    def show(self):
        SEEN.append(self.d.copy_to_host())

    def report(self):   # never names self.d
        SEEN.append(self.buf.copy())


def _show(d):
    SEEN.append(d.copy_to_host())


@pytest.mark.parametrize("hand, says", [
    (lambda d: functools.partial(_show, d), "holds device memory (d) by partial argument 0"),
    (lambda d: (lambda: _show(d)), "holds device memory (d) by closure name 'd'"),
    (lambda d: (lambda: _show(DEV)), "reads device memory (DEV) by global name 'DEV'"),
    (lambda d: _DeviceSink(d).show, "holds device memory (d) by attribute 'd'"),
    (lambda d: functools.partial(_DeviceSink.show, _DeviceSink(d)), "attribute 'd'")])
def test_a_callback_holding_or_reading_a_device_array_is_refused_at_its_line(hand, says):
    """As s.host(fn, d) is: the graph cannot order the callback after the kernels
    writing d, a later call would hand it the first call's d, and a callback may
    make no CUDA call."""
    @gt.graph(backend="sim")
    def f(s, d):
        s.host(hand(d))                                      # holds-device
    with pytest.raises(gt.ArgumentError) as e:
        f(cuda.to_device(np.ones(8)))
    assert e.value.source[1] == line_of(__file__, "holds-device"), str(e.value)
    assert says in str(e.value) and "cannot touch the GPU" in str(e.value), str(e.value)


def test_a_bound_callback_whose_object_holds_a_device_array_it_never_names_runs():
    SEEN.clear()
    sink = _DeviceSink(cuda.to_device(np.ones(8)))

    @gt.graph(backend="sim")
    def f(s, d):
        s.copy(sink.buf, d)
        s.host(sink.report)
    f(cuda.to_device(np.full(8, 3.0)))
    assert SEEN and (SEEN[-1] == 3.0).all()


class _Buffers:
    def __init__(self):
        self.a, self.b = cuda.to_device(np.zeros(8)), cuda.to_device(np.zeros(8))

    def swap(self):   # moves the references: touches no device memory
        self.a, self.b = self.b, self.a


def test_a_bound_callback_swapping_device_arrays_on_its_object_runs():
    bufs = _Buffers()
    first = bufs.a

    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(bufs.swap)
    f(cuda.to_device(np.ones(8)))
    assert bufs.b is first


out = gt.pinned_empty(8)   # a global of the same name as the objects' device arrays


class _NamedLikeIt:
    """Holds a device array ``out`` its callbacks never read; they name another ``out``."""

    def __init__(self):
        self.out, self.buf = cuda.to_device(np.zeros(8)), gt.pinned_empty(8)

    def local(self):
        out = self.buf.copy()   # a local
        SEEN.append(out)

    def parameter(self, out):
        SEEN.append(out.copy())

    def glob(self):
        SEEN.append(out.copy())


_HOLDER = _NamedLikeIt()


@pytest.mark.parametrize("how", ["local", "parameter", "global", "global object"])
def test_a_callback_naming_another_out_than_its_objects_device_array_runs(how):
    """Only ``self.out`` (``G.out``) reads the device array held as ``out``: a local,
    parameter or global of that name is another value."""
    SEEN.clear()
    obj = _NamedLikeIt()

    def of_global():
        out = _HOLDER.buf.copy()
        SEEN.append(out)

    @gt.graph(backend="sim")
    def f(s, d):
        s.copy(obj.buf, d)
        s.copy(_HOLDER.buf, d)
        s.copy(out, d)
        if how == "parameter":
            s.host(obj.parameter, out)
        else:
            s.host({"local": obj.local, "global": obj.glob,
                    "global object": of_global}[how])
    f(cuda.to_device(np.full(8, 3.0)))
    assert SEEN and (SEEN[-1] == 3.0).all()


def test_a_callback_reading_a_global_objects_device_array_is_refused_at_its_line():
    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(lambda: SEEN.append(_HOLDER.out.copy_to_host()))   # holder-out
    with pytest.raises(gt.ArgumentError) as e:
        f(cuda.to_device(np.ones(8)))
    assert e.value.source[1] == line_of(__file__, "holder-out"), str(e.value)
    assert "attribute 'out' of global name '_HOLDER'" in str(e.value), str(e.value)


def _show_in(held=None):
    SEEN.append(held[0].copy_to_host() if isinstance(held, list) else held["d"].copy_to_host())


def _default_holding(d):
    def show(held=[d]):   # noqa: B006  (a default argument holding the graph's device array)
        SEEN.append(held[0].copy_to_host())
    return show


@pytest.mark.parametrize("hand, says", [
    (lambda d: functools.partial(_show_in, [d]), "by partial argument 0"),
    (lambda d: functools.partial(_show_in, held={"d": d}), "by partial argument held"),
    (_default_holding, "by default argument 0"),
    (lambda d: (lambda box={"d": d}: _show_in(box)), "by default argument 0"),
    (lambda d: (lambda held=None, box=[[d]]: _show_in(box[0])), "by default argument 1")])
def test_a_callback_holding_a_device_array_in_a_container_is_refused_at_its_line(hand, says):
    """As one held by itself: the callback would read the first call's device array."""
    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(hand(d))                                      # holds-in-container
    with pytest.raises(gt.ArgumentError) as e:
        f(cuda.to_device(np.ones(8)))
    assert e.value.source[1] == line_of(__file__, "holds-in-container"), str(e.value)
    assert says in str(e.value) and "cannot touch the GPU" in str(e.value), str(e.value)


def test_a_callback_using_a_closure_list_holding_a_device_array_is_refused():
    @gt.graph(backend="sim")
    def f(s, d):
        held = [d]
        s.memset(d, 0)
        s.host(lambda: SEEN.append(held[0].copy_to_host()))   # closure-list
    with pytest.raises(gt.ArgumentError) as e:
        f(cuda.to_device(np.ones(8)))
    assert e.value.source[1] == line_of(__file__, "closure-list"), str(e.value)
    assert "holds device memory (d) by closure name 'held'" in str(e.value), str(e.value)


class _Held:
    def __init__(self, d, other=None):
        self.bufs, self.box = [d], {"a": d, "b": other}

    def show(self):
        SEEN.append(self.bufs[0].copy_to_host())

    def swap(self):   # moves the references the dict holds: touches no device memory
        self.box["a"], self.box["b"] = self.box["b"], self.box["a"]
        SEEN.append(len(self.box))

    def each(self):   # the loop's variable is an item of the list
        for d in self.bufs:
            SEEN.append(d.copy_to_host())

    def counted(self):   # a loop that only compares its items
        SEEN.append(sum(1 for d in self.bufs if d is not None))


def test_a_bound_callback_reading_an_item_of_a_device_array_list_it_holds_is_refused():
    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(_Held(d, d).show)                             # item-of-attribute
    with pytest.raises(gt.ArgumentError) as e:
        f(cuda.to_device(np.ones(8)))
    assert e.value.source[1] == line_of(__file__, "item-of-attribute"), str(e.value)
    assert "holds device memory (d) by attribute 'bufs'" in str(e.value), str(e.value)


def test_a_bound_callback_using_the_items_of_a_device_array_list_in_a_loop_is_refused():
    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(_Held(d, d).each)                             # loop-over-attribute
    with pytest.raises(gt.ArgumentError) as e:
        f(cuda.to_device(np.ones(8)))
    assert e.value.source[1] == line_of(__file__, "loop-over-attribute"), str(e.value)
    assert "holds device memory (d) by attribute 'bufs'" in str(e.value), str(e.value)


def test_a_bound_callback_looping_over_a_device_array_list_without_using_items_runs():
    held = _Held(cuda.to_device(np.ones(8)))

    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(held.counted)
    f(cuda.to_device(np.ones(8)))
    assert SEEN[-1] == 1


def test_a_bound_callback_moving_device_arrays_in_a_dict_it_holds_runs():
    held = _Held(cuda.to_device(np.ones(8)), cuda.to_device(np.zeros(8)))
    first = held.box["a"]

    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(held.swap)
    f(cuda.to_device(np.ones(8)))
    assert held.box["b"] is first and SEEN[-1] == 2


class _Keeper:
    def __init__(self, d):
        self.d, self.buf, self.refs = d, gt.pinned_empty(8), []
        self.state, self.held = {"buf": d, "step": 3}, [3, d]

    def keep(self):   # a size read, a number read off a dict holding it too
        SEEN.append(len(self.d) + self.buf[0] + float(self.state["step"]))

    def hand(self):   # handed to a function: it may read it
        _show(self.d)

    def stash(self):   # an append may be the program's own method reading it
        self.refs.append(self.d)

    def item(self):   # the item holding it
        _show(self.state["buf"])

    def alias(self):   # a local standing for it
        d = self.d
        d.copy_to_host()

    def last(self):   # the item holding it, counted from the end
        _show(self.held[-1])


@pytest.mark.parametrize("how", ["keep", "hand", "stash", "item", "alias", "last"])
def test_a_callback_sizing_a_device_array_runs_and_one_reading_it_is_refused(how):
    """``len(self.d)`` and ``self.state["step"]`` (a dict holding it too) touch no
    device memory: the callback runs; handing the array to a function (an
    append too: a method of the program's own may read it), its item, or a local
    set from it is refused."""
    SEEN.clear()
    keeper = _Keeper(cuda.to_device(np.ones(8)))

    @gt.graph(backend="sim")
    def f(s, d):
        s.copy(keeper.buf, d)
        s.host(getattr(keeper, how))   # keeps-or-hands
    if how == "keep":
        f(cuda.to_device(np.full(8, 3.0)))
        assert SEEN[-1] == 14.0
        return
    with pytest.raises(gt.ArgumentError) as e:
        f(cuda.to_device(np.full(8, 3.0)))
    assert e.value.source[1] == line_of(__file__, "keeps-or-hands")

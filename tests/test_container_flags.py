"""A list, set or dict the traced code changes in place as a flag (``if not
self.log: ...; self.log.append("started")``) keys its graph by the items the trace
found, and each replay fills it as the trace left it: emptied by the user, it runs
the first-call work again, as eager code does (``container_flags``, ``refill``);
one the code grows at every call (a history) stays state, as before."""
import enum
import logging
import types
import warnings
from collections import deque

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace.container_flags import Code, guarded


@cuda.jit
def add(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += a


def dev():
    return cuda.to_device(np.zeros(2))


def first(x):
    return float(x.copy_to_host()[0])


class Phase(enum.Enum):
    WARM = 1


SEEN = set()
STARTED = []
PENDING = []
HISTORY = []


class Opt:
    """A held object keeping its own flag list, and a dict of flags."""

    def __init__(self):
        self.log, self.state = [], {"init": False}

    def step(self, s, x):
        if not self.log:
            add[1, 2, s](x, 100.0)
            self.log.append("started")
        add[1, 2, s](x, 1.0)


OPT = Opt()


def _mark():
    SEEN.add("w")


class Model:
    def __init__(self):
        self.log, self.seen, self.state = [], set(), {"init": False}
        self.queue, self.phases, self.cfg = deque(), set(), Opt()
        self.box = {"seen": set()}

    @gt.graph(backend="sim")
    def listed(self, s, x):
        if not self.log:
            add[1, 2, s](x, 100.0)
            self.log.append("started")
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def added(self, s, x):
        if "w" not in self.seen:
            add[1, 2, s](x, 100.0)
            self.seen.add("w")
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def updated(self, s, x):   # the flag raised after the work, outside the branch
        if not self.state.get("init"):
            add[1, 2, s](x, 100.0)
        add[1, 2, s](x, 1.0)
        self.state.update(init=True)

    @gt.graph(backend="sim")
    def queued(self, s, x):
        if len(self.queue) == 0:
            add[1, 2, s](x, 100.0)
            self.queue.append(1)
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def phased(self, s, x):
        if Phase.WARM not in self.phases:
            add[1, 2, s](x, 100.0)
        self.phases.add(Phase.WARM)
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def extended(self, s, x):
        if not self.log:
            add[1, 2, s](x, 100.0)
            self.log += ["started"]
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def item(self, s, x):   # a set a dict holds
        if "w" not in self.box["seen"]:
            add[1, 2, s](x, 100.0)
            self.box["seen"].add("w")
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def held(self, s, x):   # the held object's method keeps the flag
        self.cfg.step(s, x)

    @gt.graph(backend="sim")
    def nested(self, s, x):
        if not self.cfg.state.get("init"):
            add[1, 2, s](x, 100.0)
            self.cfg.state.update(init=True)
        add[1, 2, s](x, 1.0)


@gt.graph(backend="sim")
def global_set(s, x):   # a helper changes it
    if "w" not in SEEN:
        add[1, 2, s](x, 100.0)
        _mark()
    add[1, 2, s](x, 1.0)


@gt.graph(backend="sim")
def global_list(s, x):
    if not STARTED:
        add[1, 2, s](x, 100.0)
        STARTED.append("started")
    add[1, 2, s](x, 1.0)


@gt.graph(backend="sim")
def global_object(s, x):
    OPT.step(s, x)


@gt.graph(backend="sim")
def drained(s, x):   # what was asked for, done and taken away
    for v in PENDING:
        add[1, 2, s](x, v)
    PENDING.clear()
    add[1, 2, s](x, 1.0)


@gt.graph(backend="sim")
def argument(s, x, st):
    if "w" not in st.seen:
        add[1, 2, s](x, 100.0)
        st.seen.add("w")
    add[1, 2, s](x, 1.0)


_FLAGS = {
    "self list": ("listed", lambda m: m.log.clear()),
    "self set": ("added", lambda m: m.seen.clear()),
    "self dict": ("updated", lambda m: m.state.__setitem__("init", False)),
    "self deque": ("queued", lambda m: m.queue.clear()),
    "self set of enum members": ("phased", lambda m: m.phases.clear()),
    "self list +=": ("extended", lambda m: m.log.clear()),
    "self dict's set": ("item", lambda m: m.box["seen"].clear()),
    "held object's list": ("held", lambda m: m.cfg.log.clear()),
    "held object's dict": ("nested", lambda m: m.cfg.state.__setitem__("init", False)),
    "global set": (global_set, lambda m: SEEN.clear()),
    "global list": (global_list, lambda m: STARTED.clear()),
    "global object's list": (global_object, lambda m: OPT.log.clear()),
    "global list drained": (drained, lambda m: PENDING.append(100.0)),
    "argument object's set": (argument, lambda m: m.cfg.seen.clear()),
}


def _call(m, how, x):
    if isinstance(how, str):
        getattr(m, how)(x)
    elif how is argument:
        argument(x, m.cfg)
    else:
        how(x)


@pytest.fixture(autouse=True)
def _fresh():
    """The globals as a program starts with them, and graphs traced anew."""
    SEEN.clear(), STARTED.clear(), PENDING.clear(), HISTORY.clear()
    OPT.log.clear()
    for f in (global_set, global_list, global_object, drained, argument, _grown, _counted):
        f.clear_cache()
    yield


@pytest.mark.parametrize("form", sorted(_FLAGS))
def test_a_container_flag_reset_by_the_user_runs_the_first_call_work_again(form):
    """Nine calls, the container emptied before the fourth and the seventh: the
    first-call work runs three times, as eagerly; before, the graph of the first
    call replayed at every call (the change was state), or the work never ran
    again; no StateWarning, and a trace or two beyond the first."""
    how, reset = _FLAGS[form]
    m, x = Model(), dev()
    m.cfg.seen = set()
    if how is drained:
        PENDING.append(100.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gt.StateWarning)
        for i in range(9):
            if i in (3, 6):
                reset(m)
            _call(m, how, x)
    assert first(x) == 309.0
    f = getattr(Model, how) if isinstance(how, str) else how
    assert f.cache_info().misses <= 3


def test_a_replay_fills_the_container_in_place():
    """The replay after a reset puts the items back in the very list (and the list a
    dict holds in the very list), as the eager ``append`` would."""
    m, x = Model(), dev()
    log, state = m.log, m.cfg.state
    for _ in range(2):
        m.listed(x)
    m.log.clear()
    m.listed(x)
    assert m.log is log and m.log == ["started"] and first(x) == 203.0
    m.nested(x)
    m.cfg.state["init"] = False
    m.nested(x)
    assert m.cfg.state is state and m.cfg.state == {"init": True}


class Keeper:
    def __init__(self):
        self.log, self.seen, self.n, self.cfg = [], set(), 0, Opt()

    @gt.graph(backend="sim")
    def logged(self, s, x):   # a history of constants
        add[1, 2, s](x, 1.0)
        self.log.append("step")

    @gt.graph(backend="sim")
    def numbered(self, s, x):   # a set of counts
        self.n += 1
        self.seen.add(self.n)
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def held(self, s, x):
        add[1, 2, s](x, 1.0)
        self.cfg.log.append(len(self.cfg.log))


@pytest.mark.parametrize("method,label", [("logged", "self.log"), ("numbered", "self.seen"),
                                          ("held", "self.cfg.log")])
def test_a_history_on_self_or_a_held_object_stays_state(method, label):
    """A container the code grows at every call is state, named once: one trace, the
    trace's own change kept, no call traces anew for it."""
    k, x = Keeper(), dev()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(4):
            getattr(k, method)(x)
    assert getattr(Keeper, method).cache_info().misses == 1 and first(x) == 4.0
    assert any(issubclass(q.category, gt.StateWarning) and label in str(q.message) for q in w)
    assert len(k.log) + len(k.seen) + len(k.cfg.log) == 1


@gt.graph(backend="sim")
def _recorded(s, x):
    HISTORY.append("step")
    add[1, 2, s](x, 1.0)


def test_a_global_history_stays_unwatched():
    """A global list the code appends to at every call is its state: one trace, and
    no warning, as before."""
    x = dev()
    with warnings.catch_warnings():
        warnings.simplefilter("error", gt.StateWarning)
        for _ in range(4):
            _recorded(x)
    assert _recorded.cache_info().misses == 1 and HISTORY == ["step"] and first(x) == 4.0


_DECIDING = []
_DECIDING_SET = set()


@gt.graph(backend="sim")
def _decided_by_history(s, x):
    if len(_DECIDING) < 2:   # eager code adds twice, then stops
        add[1, 2, s](x, 1.0)
    _DECIDING.append("step")


@gt.graph(backend="sim")
def _decided_by_members(s, x):
    if not _DECIDING_SET:
        add[1, 2, s](x, 1.0)
    _DECIDING_SET.add(len(_DECIDING_SET))


@pytest.mark.parametrize("f", [_decided_by_history, _decided_by_members])
def test_a_global_history_the_code_reads_is_named_state(f):
    """A global container the code reads to decide work and changes at every call
    (not under that test: no flag) is state the replays cannot follow: named, at the
    first call, where it was passed over in silence."""
    x = dev()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(3):
            f(x)
    name = "_DECIDING" if f is _decided_by_history else "_DECIDING_SET"
    assert [q for q in w if issubclass(q.category, gt.StateWarning) and
            f"changed {name}" in str(q.message)]
    assert f.cache_info().misses == 1


_REPORTED, _SHAPES, _DECIDED_ELSE, _PASSED = [], set(), [], []


@gt.graph(backend="sim")
def _bounded_log(s, x):
    add[1, 2, s](x, 1.0)
    _REPORTED.append("step")
    if len(_REPORTED) > 100:   # keeps the last 100
        del _REPORTED[0]
    logging.getLogger("app").debug("steps so far: %d", len(_REPORTED))


@gt.graph(backend="sim")
def _new_shapes_logged(s, x):
    if x.shape not in _SHAPES:
        logging.getLogger("app").info("new shape %s", x.shape)
    _SHAPES.add(x.shape)
    add[1, 2, s](x, 1.0)


@gt.graph(backend="sim")
def _decided_in_else(s, x):
    if len(_DECIDED_ELSE) > 1:
        logging.getLogger("app").info("many")
    else:
        add[1, 2, s](x, 1.0)
    _DECIDED_ELSE.append(1)


@gt.graph(backend="sim")
def _passed_to_kernel(s, x):
    add[1, 2, s](x, float(len(_PASSED)))
    _PASSED.append(1)


@pytest.mark.parametrize("f, warned", [(_bounded_log, False), (_new_shapes_logged, False),
                                       (_decided_in_else, True), (_passed_to_kernel, True)])
def test_a_global_history_read_only_by_a_log_line_is_not_named(f, warned):
    """A history's reads by a log line, or by a test whose branch only logs or trims
    it, decide no work: no warning; an else branch or a kernel's number read off it
    decide: named state."""
    x = dev()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(3):
            f(x)
    assert bool([q for q in w if issubclass(q.category, gt.StateWarning)]) is warned
    assert f.cache_info().misses == 1


class Grower:
    def __init__(self):
        self.log = []

    @gt.graph(backend="sim")
    def grown(self, s, x):
        if len(self.log) < 100:   # a test reading it, but it grows at every call
            self.log.append(len(self.log))
        add[1, 2, s](x, 1.0)


@gt.graph(backend="sim")
def _grown(s, x):
    if len(HISTORY) < 100:
        HISTORY.append(len(HISTORY))
    add[1, 2, s](x, 1.0)


@gt.graph(backend="sim")
def _counted(s, x, st):
    st.log.append("step")
    add[1, 2, s](x, 1.0)


@pytest.mark.parametrize("where", ["self", "global"])
def test_a_container_changed_again_from_what_a_trace_left_is_state(where):
    """A change under a test reading the container looks like a flag's, but the
    second trace, from what the first left, changes it again: no fixed point, state,
    named; no call traces anew after that one."""
    g, x = Grower(), dev()
    f = Grower.grown if where == "self" else _grown
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(5):
            g.grown(x) if where == "self" else _grown(x)
    assert f.cache_info().misses == 2 and first(x) == 5.0
    assert any(issubclass(q.category, gt.StateWarning) for q in w)


def test_an_argument_objects_history_is_not_filled_by_replays():
    """An argument object's list the code appends to at every call is keyed by its
    items, as before: each call traces anew, and no replay puts items back in it."""
    st, x = types.SimpleNamespace(log=[]), dev()
    for _ in range(3):
        _counted(x, st)
    st.log.clear()
    _counted(x, st)   # the first graph, keyed by an empty list: replayed, not refilled
    assert st.log == [] and first(x) == 4.0 and _counted.cache_info().misses == 3


def test_a_trace_that_is_no_call_puts_the_container_back():
    """``f.trace`` and ``f.compile`` leave the container as they found it, so the first
    call still runs the first-call work and fills it."""
    m, x = Model(), dev()
    m.listed.trace(x)
    assert m.log == []
    g = m.added.compile(x)
    assert m.seen == set()
    g.launch()   # the work alone
    m.added(x)   # replays the compiled graph: the work, and the set filled
    assert m.seen == {"w"} and first(x) == 202.0


def _guarded_code(body: str):
    scope = {}
    exec("def f(self, SEEN):\n" + "".join(f"    {line}\n" for line in body.splitlines()), scope)
    return Code([scope["f"]]).codes


@pytest.mark.parametrize("body,label,want", [
    ("if not self.log:\n    self.log.append(1)", "self.log", True),
    ("if 'w' not in self.seen:\n    self.seen.add('w')", "self.seen", True),
    ("if not self.d.get('init'):\n    self.d.update(init=True)", "self.d", True),
    ("while len(self.q) < 3:\n    self.q.append(0)", "self.q", True),
    ("if not self.box['seen']:\n    self.box['seen'].add(1)", "self.box['seen']", True),
    ("self.log.append(1)", "self.log", False),
    ("if not self.log:\n    pass\nself.log.append(1)", "self.log", False),
    ("if self.ready:\n    self.log.append(1)", "self.log", False),
    ("x = len(self.log)", "self.log", False),
])
def test_a_change_is_guarded_where_a_test_reading_the_container_skips_it(body, label, want):
    assert guarded(_guarded_code(body), label) is want

"""A graph keyed by a value its trace read and then set (``first_reads``) sets
that value again at each call that replays it, as the traced Python did: a flag
reset by the user runs the first-call work once more, then not; one toggled
every call alternates between two graphs (``replayed_stores``)."""
import types
import warnings

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace.replayed_stores import apply, roots, stores_of


@cuda.jit
def add(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += a


def dev():
    return cuda.to_device(np.zeros(2))


def first(x):
    return float(x.copy_to_host()[0])


class _Model:
    def __init__(self):
        self.started, self.odd, self.kick, self.state = False, False, None, {}
        self.opt = types.SimpleNamespace(started=False)

    @gt.graph(backend="sim")
    def flag(self, s, x):
        if not self.started:
            add[1, 2, s](x, 100.0)   # the first call's work alone
            self.started = True
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def from_none(self, s, x):
        if self.kick is None:
            add[1, 2, s](x, 100.0)
            self.kick = 0.5
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def held(self, s, x):
        if not self.opt.started:
            add[1, 2, s](x, 100.0)
            self.opt.started = True
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def key(self, s, x):
        if "init" not in self.state:
            add[1, 2, s](x, 100.0)
            self.state["init"] = True
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def parity(self, s, x):
        add[1, 2, s](x, 1.0 if self.odd else 10.0)
        self.odd = not self.odd


_RESETS = {"flag": lambda m: setattr(m, "started", False),
           "from_none": lambda m: setattr(m, "kick", None),
           "held": lambda m: setattr(m.opt, "started", False),
           "key": lambda m: m.state.clear()}


@pytest.mark.parametrize("method", sorted(_RESETS))
def test_a_flag_reset_by_the_user_runs_the_first_call_work_once_more(method):
    """After the reset the graph of the first call replayed, and never set the flag
    again: the first call's work ran at every call from then on."""
    m, x = _Model(), dev()
    run = getattr(m, method)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i in range(6):
            if i == 3:
                _RESETS[method](m)
            run(x)
    assert first(x) == 206.0   # eager: 100 at calls 0 and 3, 1 at every call
    assert getattr(_Model, method).cache_info().misses == 2


def test_a_flag_each_instance_keeps_is_set_on_the_instance_called():
    a, b, xa, xb = _Model(), _Model(), dev(), dev()
    for i in range(4):
        a.flag(xa)
        b.flag(xb)
        if i == 1:
            a.started = False
    assert (first(xa), first(xb)) == (204.0, 104.0)
    assert a.started and b.started


def test_a_flag_toggled_every_call_alternates_between_its_two_graphs():
    """Keyed by the parity read, the replays never toggled it: one branch ran at
    every call after the second."""
    m, x = _Model(), dev()
    for _ in range(6):
        m.parity(x)
    assert first(x) == 33.0 and m.odd is False
    assert _Model.parity.cache_info().misses == 2


ODD = False
BOX = [False]


@gt.graph(backend="sim")
def _global_parity(s, x):
    global ODD
    add[1, 2, s](x, 1.0 if ODD else 10.0)
    ODD = not ODD


@gt.graph(backend="sim")
def _closure_flag(s, x):
    if not BOX[0]:
        add[1, 2, s](x, 100.0)
        BOX[0] = True
    add[1, 2, s](x, 1.0)


def test_a_global_toggled_and_a_list_item_reset_are_set_by_the_replays():
    x = dev()
    for _ in range(5):
        _global_parity(x)
    assert first(x) == 32.0 and ODD is True
    y = dev()
    for i in range(6):
        if i in (2, 4):
            BOX[0] = False
        _closure_flag(y)
    assert first(y) == 306.0 and BOX[0] is True


CFG = types.SimpleNamespace(opt=types.SimpleNamespace(on=False), made=None)


def _reads_cfg():
    return CFG


def test_stores_are_found_off_the_call_and_only_values_are_kept():
    """A label is found off the longest root it starts with (a parameter, or a name
    of a function), then by attributes and constant keys; an object the trace left
    is not set again, nor is a label found off no root."""
    found = roots(("self",), [], [(_reads_cfg, "CFG", "CFG")])
    obj = types.SimpleNamespace(x=1, d={"k": (1, "a")}, made=object())
    CFG.opt.on, CFG.made = True, object()
    stores = stores_of({"self.x", "self.d['k']", "self.made", "CFG.opt.on", "CFG.made",
                        "nowhere.x"}, found, {"self": obj})
    assert stores == ((_reads_cfg, "CFG", (("attr", "opt"), ("attr", "on")), True),
                      (None, "self", (("attr", "d"), ("item", "k")), (1, "a")),
                      (None, "self", (("attr", "x"),), 1))
    other = types.SimpleNamespace(x=0, d={})
    CFG.opt.on = False
    apply(stores, {"self": other})   # off the object the call has: another instance
    assert (other.x, other.d, CFG.opt.on) == (1, {"k": (1, "a")}, True)


class _State:
    def __init__(self):
        self.init = False


@gt.graph(backend="sim")
def _argument_flag(s, x, st):
    if not st.init:
        add[1, 2, s](x, 100.0)
        st.init = True
    add[1, 2, s](x, 1.0)


def test_a_flag_on_an_argument_object_reset_by_the_user_runs_the_first_call_work_again():
    x, st = dev(), _State()
    for i in range(6):
        if i == 3:
            st.init = False
        _argument_flag(x, st)
        assert st.init is True
    assert first(x) == 206.0 and _argument_flag.cache_info().misses == 2


STATE: dict = {}


@gt.graph(backend="sim")
def _global_key(s, x):
    if "init" not in STATE:
        add[1, 2, s](x, 100.0)
        STATE["init"] = True
    add[1, 2, s](x, 1.0)


@pytest.mark.parametrize("inspect", ["trace", "explain", "compile"])
def test_a_trace_that_is_no_call_leaves_what_its_python_set_as_it_was(inspect):
    """``print(m.flag.trace(x))`` before the first call raised the flag: the first
    call then traced the branch taken after a first call, and the first call's
    work never ran."""
    m, x = _Model(), dev()
    STATE.clear()
    for f, args in ((m.flag, (x,)), (m.key, (x,)), (_argument_flag, (x, _State())),
                    (_global_key, (x,))):
        if inspect == "explain":
            gt.explain(f.trace(*args))
        else:
            getattr(f, inspect)(*args)
    assert (m.started, m.state, STATE) == (False, {}, {})
    st = _State()
    _argument_flag.compile(x, st)
    assert st.init is False
    m.flag(x)
    assert m.started and first(x) == 101.0


def test_a_profile_leaves_the_values_as_one_call_does():
    m, x = _Model(), dev()
    m.flag.profile(x)
    assert m.started and first(x) == 101.0
    m.flag(x)
    assert first(x) == 102.0


NEWS = False
SIGNALS = {"news": False}


@gt.graph(backend="sim")
def _signals(s, x):
    global NEWS
    add[1, 2, s](x, 1.0)
    NEWS = True   # set, never read: the caller consumes and clears them
    SIGNALS["news"] = True


def test_a_signal_the_graph_only_sets_is_set_by_every_replay():
    """Not in the key and not state (a flag raised, not a count): the replays left
    the caller's cleared signal as it was, silently."""
    global NEWS
    x = dev()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(4):
            _signals(x)
            assert NEWS is True and SIGNALS["news"] is True
            NEWS, SIGNALS["news"] = False, False
    assert first(x) == 4.0 and _signals.cache_info().misses == 1


class _Property:
    def __init__(self):
        self._init = False

    @property
    def initialized(self):
        return self._init

    @initialized.setter
    def initialized(self, v):
        self._init = v

    @gt.graph(backend="sim")
    def step(self, s, x):
        if not self.initialized:
            add[1, 2, s](x, 100.0)
            self.initialized = True   # stored through the property's setter
        add[1, 2, s](x, 1.0)


def test_a_flag_a_property_sets_is_keyed_and_set_again_by_the_replays():
    """The setter's store (self._init) was no store of the method's: after a reset
    the first call's graph replayed at every call and the flag stayed down."""
    m, x = _Property(), dev()
    for i in range(6):
        if i == 3:
            m._init = False
        m.step(x)
        assert m.initialized is True
    assert first(x) == 206.0 and _Property.step.cache_info().misses == 2


class _ByName:
    def __init__(self):
        self.started = False

    @gt.graph(backend="sim")
    def step(self, s, x):
        if not getattr(self, "started"):
            add[1, 2, s](x, 100.0)
            setattr(self, "started", True)   # a store by a constant name
        add[1, 2, s](x, 1.0)


def test_a_flag_setattr_sets_by_a_constant_name_is_set_again_by_the_replays():
    m, x = _ByName(), dev()
    for i in range(6):
        if i == 3:
            m.started = False
        m.step(x)
        assert m.started is True
    assert first(x) == 206.0 and _ByName.step.cache_info().misses == 2


REQUESTS: dict = {}


@gt.graph(backend="sim")
def _on_request(s, x):
    if "reset" in REQUESTS:   # a request the caller puts, the graph takes away
        add[1, 2, s](x, 100.0)
        del REQUESTS["reset"]
    add[1, 2, s](x, 1.0)


def test_a_key_the_trace_deleted_is_deleted_again_by_the_replays():
    """The replays left the request in the dict: its work ran at every call after."""
    x = dev()
    REQUESTS["reset"] = True
    for i in range(9):
        if i in (3, 6):
            REQUESTS["reset"] = True
        _on_request(x)
        assert "reset" not in REQUESTS
    assert first(x) == 309.0


class _Holder:
    def __init__(self):
        self.opt, self.d = _State(), {}


@gt.graph(backend="sim")
def _nested_argument_flags(s, x, st):
    if not st.opt.init:
        add[1, 2, s](x, 100.0)
        st.opt.init = True
    if "init" not in st.d:
        add[1, 2, s](x, 10.0)
        st.d["init"] = True
    add[1, 2, s](x, 1.0)


def test_flags_an_argument_object_holds_a_level_deeper_are_set_again_by_the_replays():
    x, st = dev(), _Holder()
    for i in range(6):
        if i == 3:
            st.opt.init = False
            st.d.clear()
        _nested_argument_flags(x, st)
        assert st.opt.init is True and st.d == {"init": True}
    assert first(x) == 226.0


def test_a_signal_only_set_keeps_the_call_shortcut_and_is_set_by_it():
    """Setting it again made every call take the full check: the shortcut launches
    and sets it too."""
    global NEWS
    x = dev()
    for _ in range(3):
        _signals(x)
        NEWS, SIGNALS["news"] = False, False
    assert _signals._fast is not None   # the last call's shortcut, kept
    _signals(x)
    assert NEWS is True and SIGNALS["news"] is True


@pytest.mark.parametrize("inspect", ["trace", "compile"])
def test_a_trace_that_is_no_call_puts_back_a_signal_it_set(inspect):
    global NEWS
    NEWS, SIGNALS["news"] = False, False
    getattr(_signals, inspect)(dev())
    assert NEWS is False and SIGNALS["news"] is False
    _signals(dev())   # the first call sets them (a replay of compile's graph too)
    assert NEWS is True and SIGNALS["news"] is True


class _Reports:
    def __init__(self):
        self.opt = types.SimpleNamespace(ran=False, lr=1.0)

    @gt.graph(backend="sim")
    def step(self, s, x):
        add[1, 2, s](x, self.opt.lr)
        self.opt.ran = True   # a signal the caller consumes and clears


def test_a_signal_on_a_held_object_the_caller_clears_is_set_by_replays_without_a_trace():
    """The key held it as the trace left it (True): each call, finding it cleared,
    traced again, silently."""
    m, x = _Reports(), dev()
    for _ in range(6):
        m.step(x)
        assert m.opt.ran is True
        m.opt.ran = False
    assert first(x) == 6.0 and _Reports.step.cache_info().misses == 1


@gt.graph(backend="sim")
def _argument_signal(s, x, st):
    add[1, 2, s](x, 1.0)
    st.init = True   # a signal on an argument object, never read


def test_a_signal_on_an_argument_object_is_set_again_by_the_replays():
    x, st = dev(), _State()
    for _ in range(4):
        _argument_signal(x, st)
        assert st.init is True
        st.init = False
    assert first(x) == 4.0 and _argument_signal.cache_info().misses == 1


def _mark(m):
    m.started = True


class _MarkedByHelper:
    def __init__(self):
        self.started = False

    @gt.graph(backend="sim")
    def step(self, s, x):
        if not self.started:
            add[1, 2, s](x, 100.0)
            _mark(self)   # a helper of the module's sets the flag on self
        add[1, 2, s](x, 1.0)


def test_a_flag_a_helper_sets_on_self_is_set_again_by_the_replays():
    """No store of the method's own said so: after the user's reset the first call's
    work ran at every call, and the flag stayed lowered."""
    m, x = _MarkedByHelper(), dev()
    for i in range(9):
        if i in (3, 6):
            m.started = False
        m.step(x)
        assert m.started is True
    assert first(x) == 309.0

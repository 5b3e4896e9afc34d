"""An immutable record the traced code reads, then replaces (``if not
self.rs.started: ...; self.rs = self.rs._replace(started=True)``; a frozen
dataclass and ``dataclasses.replace``; a tuple, a frozenset) decided the work
it recorded, as a flag does (``test_replayed_stores``): the graph is keyed by
the record as read, the next call, finding the new one, takes the other
branch, and a call replaying the first graph after the user put the old record
back puts the new one again, as eager code would."""
import collections
import dataclasses
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


RS = collections.namedtuple("RS", "started lr")


@dataclasses.dataclass(frozen=True)
class FD:
    started: bool = False
    lr: float = 1.0


class _Holder:
    def __init__(self):
        self.rs, self.fd, self.t, self.tags = RS(False, 1.0), FD(), (False, 1.0), frozenset()


class _Model:
    def __init__(self):
        self.rs, self.fd, self.t, self.tags = RS(False, 1.0), FD(), (False, 1.0), frozenset()
        self.st = _Holder()

    @gt.graph(backend="sim")
    def self_namedtuple(self, s, x):
        if not self.rs.started:
            add[1, 2, s](x, 100.0)   # the first call's work alone
            self.rs = self.rs._replace(started=True)
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def self_frozen(self, s, x):
        if not self.fd.started:
            add[1, 2, s](x, 100.0)
            self.fd = dataclasses.replace(self.fd, started=True)
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def self_tuple(self, s, x):
        if not self.t[0]:
            add[1, 2, s](x, 100.0)
            self.t = (True, self.t[1])
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def self_frozenset(self, s, x):
        if "init" not in self.tags:
            add[1, 2, s](x, 100.0)
            self.tags = self.tags | {"init"}
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def held_namedtuple(self, s, x):
        if not self.st.rs.started:
            add[1, 2, s](x, 100.0)
            self.st.rs = self.st.rs._replace(started=True)
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def held_frozen(self, s, x):
        if not self.st.fd.started:
            add[1, 2, s](x, 100.0)
            self.st.fd = dataclasses.replace(self.st.fd, started=True)
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def held_tuple(self, s, x):
        if not self.st.t[0]:
            add[1, 2, s](x, 100.0)
            self.st.t = (True, self.st.t[1])
        add[1, 2, s](x, 1.0)


def _reset_self(m, o=None):
    o = m if o is None else o
    o.rs, o.fd, o.t, o.tags = o.rs._replace(started=False), FD(), (False, o.t[1]), frozenset()


_METHODS = {"self_namedtuple": lambda m: m.rs.started, "self_frozen": lambda m: m.fd.started,
            "self_tuple": lambda m: m.t[0], "self_frozenset": lambda m: "init" in m.tags,
            "held_namedtuple": lambda m: m.st.rs.started,
            "held_frozen": lambda m: m.st.fd.started, "held_tuple": lambda m: m.st.t[0]}


@pytest.mark.parametrize("method", sorted(_METHODS))
def test_a_record_replaced_by_the_trace_keys_the_graph_and_is_put_again(method):
    """Before, a namedtuple on self was in no key (the first call's work replayed at
    every call), a tuple or a record on a held object was said to be state, and a
    frozen dataclass's field was never set again by a replay (refused): the first
    call's work ran at each call after a reset."""
    m, x = _Model(), cuda.to_device(np.zeros(2))
    run = getattr(m, method)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i in range(6):
            if i == 3:   # as the user would: the old record put back
                _reset_self(m, m.st if method.startswith("held") else None)
            run(x)
    assert float(x.copy_to_host()[0]) == 206.0   # eager: 100 at calls 0 and 3
    assert _METHODS[method](m) is True
    assert getattr(_Model, method).cache_info().misses == 2


G_RS = RS(False, 1.0)
G_FD = FD()
G_T = (False, 1.0)
HOLD = _Holder()


@gt.graph(backend="sim")
def _global_namedtuple(s, x):
    global G_RS
    if not G_RS.started:
        add[1, 2, s](x, 100.0)
        G_RS = G_RS._replace(started=True)
    add[1, 2, s](x, 1.0)


@gt.graph(backend="sim")
def _global_frozen(s, x):
    global G_FD
    if not G_FD.started:
        add[1, 2, s](x, 100.0)
        G_FD = dataclasses.replace(G_FD, started=True)
    add[1, 2, s](x, 1.0)


@gt.graph(backend="sim")
def _global_tuple(s, x):
    global G_T
    if not G_T[0]:
        add[1, 2, s](x, 100.0)
        G_T = (True, G_T[1])
    add[1, 2, s](x, 1.0)


@gt.graph(backend="sim")
def _global_held_namedtuple(s, x):
    if not HOLD.rs.started:
        add[1, 2, s](x, 100.0)
        HOLD.rs = HOLD.rs._replace(started=True)
    add[1, 2, s](x, 1.0)


@gt.graph(backend="sim")
def _global_held_frozen(s, x):
    if not HOLD.fd.started:
        add[1, 2, s](x, 100.0)
        HOLD.fd = dataclasses.replace(HOLD.fd, started=True)
    add[1, 2, s](x, 1.0)


def _reset_globals():
    global G_RS, G_FD, G_T
    G_RS, G_FD, G_T = G_RS._replace(started=False), FD(), (False, G_T[1])
    _reset_self(HOLD)


_FUNCTIONS = {_global_namedtuple: lambda: G_RS.started, _global_frozen: lambda: G_FD.started,
              _global_tuple: lambda: G_T[0], _global_held_namedtuple: lambda: HOLD.rs.started,
              _global_held_frozen: lambda: HOLD.fd.started}


@pytest.mark.parametrize("function", list(_FUNCTIONS), ids=lambda f: f.__name__)
def test_a_record_a_global_name_holds_is_put_again_by_the_replays(function):
    """A record held by a global name, or by an object a global name holds: a user
    reset runs the first call's work once more, then not (before: at every call
    for a namedtuple and a frozen dataclass, or the record said to be state)."""
    x = cuda.to_device(np.zeros(2))
    _reset_globals()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i in range(6):
            if i == 3:
                _reset_globals()
            function(x)
    assert float(x.copy_to_host()[0]) == 206.0
    assert _FUNCTIONS[function]() is True


class _Counted:
    def __init__(self):
        self.rs = collections.namedtuple("Calls", "started calls")(False, 0)

    @gt.graph(backend="sim")
    def step(self, s, x):
        add[1, 2, s](x, 1.0)
        self.rs = self.rs._replace(calls=self.rs.calls + 1)


def test_a_record_whose_counter_the_trace_bumps_is_state_said():
    """A field changed as a counter is (not a flag raised, not one set from None) is
    state kept in the record, which the trace changes once: said, as for a number."""
    m, x = _Counted(), cuda.to_device(np.zeros(2))
    with pytest.warns(gt.StateWarning, match="self.rs"):
        m.step(x)


def test_records_are_put_whole_or_by_a_copy_holding_the_field_and_only_of_values():
    """A record of values is put again whole (a namedtuple, a frozenset); a frozen
    dataclass's field by a copy of it holding the new value, the other fields as
    they are now; a record holding an object is not a value, not put again."""
    obj = types.SimpleNamespace(rs=RS(True, 0.5), fd=FD(True, 2.0), tags=frozenset({"a"}),
                                held=RS(True, object()), box=(FD(True), 1))
    found = roots(("self",), [], [])
    stores = stores_of({"self.rs", "self.fd.started", "self.tags", "self.held",
                        "self.box[0].started"}, found, {"self": obj})
    assert [s[2] for s in stores] == [(("attr", "box"), ("item", 0), ("attr", "started")),
                                     (("attr", "fd"), ("attr", "started")),
                                     (("attr", "rs"),), (("attr", "tags"),)]
    other = types.SimpleNamespace(rs=RS(False, 1.0), fd=FD(False, 3.0), tags=frozenset(),
                                  held=RS(False, None), box=(FD(False, 4.0), 2))
    apply(stores, {"self": other})
    assert other.rs == RS(True, 0.5) and other.tags == frozenset({"a"})
    assert other.fd == FD(True, 3.0) and other.box == (FD(True, 4.0), 2)
    assert other.held == RS(False, None)

"""An attribute or a global name the trace deleted, after reading it first
(``if hasattr(self, "pending"): ...; del self.pending``, ``delattr``, through
``self.__dict__`` or ``vars(self)``; ``if "GONE" in globals():
...; del GONE``), is deleted again by each replay, as the traced Python did: put
back by the user, its work runs once more, then not (``replayed_stores``)."""
import warnings

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt


@cuda.jit
def add(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += a


def dev():
    return cuda.to_device(np.zeros(2))


def first(x):
    return float(x.copy_to_host()[0])


class _Pending:
    def __init__(self):
        self.pending = True

    @gt.graph(backend="sim")
    def step(self, s, x):
        if hasattr(self, "pending"):
            add[1, 2, s](x, 100.0)
            del self.pending
        add[1, 2, s](x, 1.0)


class _Forms(_Pending):
    @gt.graph(backend="sim")
    def by_delattr(self, s, x):
        if getattr(self, "pending", False):
            add[1, 2, s](x, 100.0)
            delattr(self, "pending")
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def by_dict(self, s, x):
        if "pending" in self.__dict__:
            add[1, 2, s](x, 100.0)
            self.__dict__.pop("pending")
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def by_vars(self, s, x):
        if vars(self).get("pending"):
            add[1, 2, s](x, 100.0)
            del vars(self)["pending"]
        add[1, 2, s](x, 1.0)


    @gt.graph(backend="sim")
    def by_vars_in(self, s, x):
        if "pending" in vars(self):
            add[1, 2, s](x, 100.0)
            del self.pending
        add[1, 2, s](x, 1.0)


@pytest.mark.parametrize("form", ["step", "by_delattr", "by_dict", "by_vars", "by_vars_in"])
def test_an_attribute_the_trace_deleted_is_deleted_again_by_the_replays(form):
    """The graph keyed by the attribute there replayed without deleting it: after
    the user put it back, its work ran at every call."""
    m, x = _Forms(), dev()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i in range(9):
            if i in (3, 6):
                m.pending = True
            getattr(m, form)(x)
            assert not hasattr(m, "pending")
    assert first(x) == 309.0   # eager: 100 at calls 0, 3 and 6; 1 at every call


GONE = 1


@gt.graph(backend="sim")
def _take_once(s, x):
    global GONE
    if "GONE" in globals():
        add[1, 2, s](x, 100.0)
        del GONE
    add[1, 2, s](x, 1.0)


def test_a_global_name_the_trace_deleted_is_deleted_again_by_the_replays():
    """The name put back stayed: the replays never deleted it again."""
    global GONE
    x = dev()
    for i in range(9):
        if i in (3, 6):
            GONE = 1
        _take_once(x)
        assert "GONE" not in globals()
    assert first(x) == 309.0


def test_a_trace_that_is_no_call_puts_back_the_attribute_it_deleted():
    m, x = _Pending(), dev()
    _Pending.step.trace(m, x)
    assert m.pending is True
    m.step(x)
    assert first(x) == 101.0 and not hasattr(m, "pending")


class _Defaulted:
    pending = False   # the class's default, seen again once the instance's is deleted

    def __init__(self):
        self.pending = True

    @gt.graph(backend="sim")
    def step(self, s, x):
        if self.pending:
            add[1, 2, s](x, 100.0)
            del self.pending
        add[1, 2, s](x, 1.0)


def test_an_instance_attribute_deleted_over_a_class_default_is_deleted_again():
    """Taken for a flag set on the class, the replays set the class's default
    (``_Defaulted.pending = False``) and left the instance's put back in place:
    its work ran at every call after."""
    m, x = _Defaulted(), dev()
    for i in range(6):
        if i == 3:
            m.pending = True
        m.step(x)
        assert "pending" not in vars(m) and _Defaulted.pending is False
    assert first(x) == 206.0


REQS: dict = {}


@gt.graph(backend="sim")
def _take_request(s, x):
    if "req" in REQS:   # a request the caller puts, the graph takes away by .pop
        add[1, 2, s](x, 100.0)
        REQS.pop("req")
    add[1, 2, s](x, 1.0)


def test_a_key_the_trace_popped_is_popped_again_by_the_replays():
    """.pop changed the whole dict, as state: the first call's work replayed at
    every call, with no request there."""
    x = dev()
    for i in range(6):
        if i in (0, 3):
            REQS["req"] = 1
        _take_request(x)
        assert "req" not in REQS
    assert first(x) == 206.0


REQ_KEY = "req"
TAKEN: dict = {}


@gt.graph(backend="sim")
def _take_by_name(s, x):
    if REQ_KEY in TAKEN:   # the key read by a name, taken by .pop
        add[1, 2, s](x, 100.0)
        TAKEN.pop(REQ_KEY)
    add[1, 2, s](x, 1.0)


@gt.graph(backend="sim")
def _take_in_the_test(s, x):
    if TAKEN.pop("req", None) is not None:   # read and taken at once
        add[1, 2, s](x, 100.0)
    add[1, 2, s](x, 1.0)


@pytest.mark.parametrize("f", [_take_by_name, _take_in_the_test], ids=["by name", "in the test"])
def test_a_request_popped_by_a_named_key_or_in_its_test_is_popped_again(f):
    """Keyed by the dict as the trace left it (no request there), the graph that did
    the request's work replayed at every call."""
    x = dev()
    for i in range(6):
        if i in (0, 3):
            TAKEN["req"] = 1
        f(x)
        assert "req" not in TAKEN
    assert first(x) == 206.0

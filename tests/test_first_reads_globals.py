"""A flag or key held by a global name that the traced code reads and then sets
(``global STARTED; if not STARTED: ...; STARTED = True``, ``if "init" not in
STATE: ...; STATE["init"] = True``) decided the work the trace recorded: the
graph is keyed by the value read, so the next call, finding the new one,
traces again once (``first_reads``, ``Reach.note_decided``). A counter a trace
bumps (``global CALLS; CALLS += 1``) is state: said once (``StateWarning``)."""
import warnings

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt


@cuda.jit
def axpy(a, x, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] += a * x[i]


def dev(*values):
    return cuda.to_device(np.array(values, dtype=np.float64))


STARTED = False
STATE: dict = {}
CALLS = 0


@gt.graph(backend="sim")
def _global_flag(s, f, v):
    global STARTED
    if not STARTED:
        axpy[1, 2, s](0.5, f, v)   # a half kick, the first call alone
        STARTED = True
    else:
        axpy[1, 2, s](1.0, f, v)


def _mark():
    global STARTED
    STARTED = True


@gt.graph(backend="sim")
def _global_flag_set_by_a_helper(s, f, v):
    axpy[1, 2, s](1.0 if STARTED else 0.5, f, v)
    _mark()


@gt.graph(backend="sim")
def _global_dict_key(s, f, v):
    if "initialized" not in STATE:
        axpy[1, 2, s](-1.0, v, v)   # zero v, the first call alone
        STATE["initialized"] = True
    axpy[1, 2, s](1.0, f, v)


KICK = None


@gt.graph(backend="sim")
def _global_set_from_none(s, f, v):
    global KICK
    if KICK is None:
        axpy[1, 2, s](-1.0, v, v)   # zero v, the first call alone
        KICK = 1.0
    axpy[1, 2, s](1.0, f, v)


GONE = True


@gt.graph(backend="sim")
def _global_deleted(s, f, v):
    global GONE
    if "GONE" in globals():
        axpy[1, 2, s](-1.0, v, v)   # zero v, the first call alone
        del GONE
    axpy[1, 2, s](1.0, f, v)


class _Options:
    started = False


OPTS = _Options()


@gt.graph(backend="sim")
def _flag_by_getattr(s, f, v):
    if not getattr(OPTS, "started"):
        axpy[1, 2, s](-1.0, v, v)   # zero v, the first call alone
        setattr(OPTS, "started", True)
    axpy[1, 2, s](1.0, f, v)


@pytest.mark.parametrize("fn, expect", [
    (_global_flag, 8.5), (_global_flag_set_by_a_helper, 8.5), (_global_dict_key, 4.0),
    (_global_set_from_none, 4.0), (_global_deleted, 4.0), (_flag_by_getattr, 4.0)],
    ids=["global flag", "flag a helper sets", "global dict key", "global set from None",
         "global deleted", "flag by getattr"])
def test_a_global_the_trace_read_then_set_traces_again_once(fn, expect):
    """The global was never compared (a stored name is not watched; a dict the code
    changes is left out of the key): every call replayed the first one's branch.
    A name deleted (``del GONE`` tested by ``"GONE" in globals()``) was taken for
    state; ``getattr``/``setattr`` by a constant name were no read or store."""
    global STARTED, KICK, GONE
    STARTED, KICK, GONE, OPTS.started = False, None, True, False
    STATE.clear()
    f, v = dev(1, 1), dev(5, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(4):
            fn(f, v)
    assert v.copy_to_host().tolist() == [expect, expect]
    assert fn.cache_info().misses == 2


@gt.graph(backend="sim")
def _counted(s, f, v):
    global CALLS
    CALLS += 1
    axpy[1, 2, s](1.0, f, v)


def test_a_global_counter_the_trace_bumps_is_said_once_and_traced_once():
    """``CALLS += 1`` runs at the trace alone: the replays bump nothing, silently."""
    f, v = dev(1, 1), dev(0, 0)
    said = "changed CALLS: state kept on an object or by a global name"
    with pytest.warns(gt.StateWarning, match=said) as caught:
        for _ in range(3):
            _counted(f, v)
    assert len([w for w in caught if issubclass(w.category, gt.StateWarning)]) == 1
    assert caught[0].filename == __file__
    assert v.copy_to_host().tolist() == [3.0, 3.0] and _counted.cache_info().misses == 1


@gt.graph(backend="sim")
def _counted_by_get(s, f, v):
    global LAZY_M
    LAZY_M = globals().get("LAZY_M", 0) + 1
    axpy[1, 2, s](1.0, f, v)


@gt.graph(backend="sim")
def _counted_by_name_error(s, f, v):
    global LAZY_K
    try:
        LAZY_K += 1
    except NameError:
        LAZY_K = 1
    axpy[1, 2, s](1.0, f, v)


@gt.graph(backend="sim")
def _default_made_once(s, f, v):
    global LAZY_D
    LAZY_D = globals().get("LAZY_D", 2.0)
    axpy[1, 2, s](LAZY_D, f, v)


@pytest.mark.parametrize("fn, name", [(_counted_by_get, "LAZY_M"),
                                      (_counted_by_name_error, "LAZY_K")], ids=["get", "except"])
def test_a_global_counter_made_by_the_trace_is_said_as_one_bumped(fn, name):
    """``M = globals().get("M", 0) + 1`` and ``try: K += 1`` / ``except NameError:
    K = 1`` counted once, at the trace, with no warning, where ``N += 1`` on a
    global defined already is told as state."""
    globals().pop(name, None)
    f, v = dev(1, 1), dev(0, 0)
    try:
        with pytest.warns(gt.StateWarning, match=f"changed {name}: state kept") as caught:
            for _ in range(3):
                fn(f, v)
    finally:
        globals().pop(name, None)
    assert len([w for w in caught if issubclass(w.category, gt.StateWarning)]) == 1
    assert v.copy_to_host().tolist() == [3.0, 3.0] and fn.cache_info().misses == 1


def test_a_global_default_made_by_the_trace_is_a_setting():
    """``D = globals().get("D", 2.0)``: a default made once, no state."""
    globals().pop("LAZY_D", None)
    f, v = dev(1, 1), dev(0, 0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", gt.StateWarning)
            for _ in range(3):
                _default_made_once(f, v)
    finally:
        globals().pop("LAZY_D", None)
    assert v.copy_to_host().tolist() == [6.0, 6.0]


class _Phase:
    A = "a"


MARKS: dict = {}
NAME = "started"
OTHER = _Options()
HOST_FLAG = np.array([False])


@gt.graph(backend="sim")
def _computed_key(s, f, v):
    if _Phase.A + "0" not in MARKS:
        axpy[1, 2, s](-1.0, v, v)
        MARKS[_Phase.A + "0"] = True
    axpy[1, 2, s](1.0, f, v)


@gt.graph(backend="sim")
def _attribute_by_a_variable(s, f, v):
    if not getattr(OTHER, NAME):
        axpy[1, 2, s](-1.0, v, v)
        setattr(OTHER, NAME, True)
    axpy[1, 2, s](1.0, f, v)


@gt.graph(backend="sim")
def _flag_in_a_host_array(s, f, v):
    if not HOST_FLAG[0]:
        axpy[1, 2, s](-1.0, v, v)
        HOST_FLAG[0] = True
    axpy[1, 2, s](1.0, f, v)


def test_a_flag_read_and_set_by_an_attribute_named_by_a_variable_keys_the_graph():
    """getattr(OTHER, NAME): what the object holds is keyed whole (any attribute may
    be the one read), and the flag, read first, keys the graph by the value read and
    is set again by its replays: a reset runs the first call's work once more."""
    OTHER.started = False
    f, v = dev(1, 1), dev(5, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i in range(4):
            if i == 2:
                OTHER.started = False
            _attribute_by_a_variable(f, v)
            assert v.copy_to_host().tolist() == [1.0 + i % 2] * 2 and OTHER.started
    assert _attribute_by_a_variable.cache_info().misses == 2


@pytest.mark.parametrize("fn, named", [
    (_computed_key, "MARKS['a0']"), (_flag_in_a_host_array, "HOST_FLAG")],
    ids=["computed key", "flag in a host array"])
def test_a_flag_set_where_its_read_cannot_be_told_is_said_at_the_call(fn, named):
    """A key computed, an attribute named by a variable, a host array's value: the
    key cannot hold what the code read, so the first call's work is replayed;
    that was silent, and is now said (``StateWarning``) at the caller's line."""
    MARKS.clear()
    OTHER.started, HOST_FLAG[0] = False, False
    f, v = dev(1, 1), dev(5, 5)
    with pytest.warns(gt.StateWarning, match="cannot tell whether the code read") as caught:
        fn(f, v)   # the call
    said = [w for w in caught if issubclass(w.category, gt.StateWarning)]
    assert len(said) == 1 and named in str(said[0].message), str(said[0].message)
    assert said[0].filename == __file__


G_FLAG = False
G_OTHER = False


@gt.graph(backend="sim")
def _flag_through_globals(s, f, v):
    if not globals()["G_FLAG"]:
        axpy[1, 2, s](-1.0, v, v)   # the first call's work alone
        globals()["G_FLAG"] = True
    if not globals().get("G_OTHER"):
        axpy[1, 2, s](-1.0, v, v)
        globals()["G_OTHER"] = True
    axpy[1, 2, s](1.0, f, v)


def test_a_flag_read_and_set_through_globals_by_a_constant_key_keys_the_graph():
    """globals()["G_FLAG"] was no name the function reads or stores: the first call's
    work replayed at every call, silently, and a reset was never set again."""
    global G_FLAG, G_OTHER
    G_FLAG = G_OTHER = False
    f, v = dev(1, 1), dev(5, 5)
    for i in range(5):
        if i == 3:
            G_FLAG = G_OTHER = False
        _flag_through_globals(f, v)
        assert G_FLAG and G_OTHER
        assert v.copy_to_host().tolist() == [1.0 + i % 3] * 2

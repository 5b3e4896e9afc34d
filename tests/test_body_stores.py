"""Host state a loop's or a branch's body stores that outlives the trace.

Python runs the body of an if_then, an if_else, a switch or a while loop once,
when it is recorded; the device decides at each replay whether it runs. A flag
the body raised on self (``if not self.started: <work>; self.started = True``)
was raised at the first trace though the device skipped the body, so the
one-off work was lost when the condition finally held (y = 1, 2 where eager
code gives 101, 102). Such a store, to self, an argument's attribute, a global,
a closure's cell or a container they hold, is refused at its line; the
bodies whose stores stay within the trace (locals, objects made there, a slot
set to what it held) run as eagerly.
"""
from types import SimpleNamespace

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, dev, host
from helpers import line_of

STATE: dict = {}
CALLS = 0


def _refused(call, marker, *phrases) -> str:
    with pytest.raises(gt.ArgumentError) as info:
        call()
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, marker), e
    assert "outlives the trace" in e and "move the store out of the body" in e, e
    for p in phrases:
        assert p in e, e
    return e


class _Flagged:
    def __init__(self):
        self.started = False

    @gt.graph(backend="sim")
    def step(self, s, c, y):
        with s.if_then(gt.cond(c) > 0) as then:
            if not self.started:
                add[1, 4, then](y, 100.0)
                self.started = True   # flag in if_then
            add[1, 4, then](y, 1.0)


def test_a_flag_raised_in_an_if_then_body_is_refused_at_its_line():
    m = _Flagged()
    _refused(lambda: m.step(dev(0), dev(0, 0, 0, 0)), "flag in if_then", "self.started",
             "once or not at all", "device array")
    assert m.started is True   # (the trace ran the body's Python: refused, not replayed)


def _else_state(s, c, y):
    if "init" not in STATE:
        add[1, 4, s](y, 10.0)
    with s.if_else(gt.cond(c) > 0) as (then, otherwise):
        add[1, 4, then](y, 1.0)
        add[1, 4, otherwise](y, 2.0)
        STATE["init"] = True   # global item in if_else


def _switch_global(s, c, y):
    global CALLS
    add[1, 4, s](y, float(CALLS))
    with s.switch(gt.cond(c), 2) as cases:
        add[1, 4, cases[1]](y, 1.0)
        CALLS += 1   # global name in switch


class _Counted:
    def __init__(self):
        self.iters = 0

    @gt.graph(backend="sim")
    def run(self, s, c, y):
        add[1, 4, s](y, float(self.iters))
        with s.while_loop(gt.cond(c) < 3) as body:
            add[1, 1, body](c, 1)
            self.iters += 1   # counter in while


def _factory():
    seen = []

    @gt.graph(backend="sim")
    def f(s, c, y):
        with s.if_then(gt.cond(c) > 0) as then:
            if not seen:
                add[1, 4, then](y, 1.0)
            seen.append(1)   # closure list appended
    return f


def _nonlocal_factory():
    n = 0

    @gt.graph(backend="sim")
    def f(s, c, y):
        nonlocal n
        with s.if_then(gt.cond(c) > 0) as then:
            add[1, 4, then](y, float(n))
            n += 1   # closure cell rebound
    return f


def _argument_attribute(s, c, y, cfg):
    with s.if_then(gt.cond(c) > 0) as then:
        if not cfg.seen:
            add[1, 4, then](y, 1.0)
        cfg.seen = True   # argument attribute


class _Marked:
    def __init__(self):
        self.started = False

    def mark(self):
        self.started = True

    @gt.graph(backend="sim")
    def step(self, s, c, y):
        with s.if_then(gt.cond(c) > 0) as then:
            if not self.started:
                add[1, 4, then](y, 1.0)
            self.mark()   # helper stores self


class _BodyFn:
    def __init__(self):
        self.log = []

    @gt.graph(backend="sim")
    def step(self, s, c, y):
        def then(b):
            for _ in self.log:
                add[1, 4, b](y, 1.0)
            self.log.append("ran")   # body fn appends
        s.if_then(gt.cond(c) > 0, body=then)


class _Setattr:
    started = False

    @gt.graph(backend="sim")
    def step(self, s, c, y):
        with s.if_then(gt.cond(c) > 0) as then:
            if not self.started:
                add[1, 4, then](y, 1.0)
            setattr(self, "started", True)   # setattr in body


def _helper_block(s, c, y, st):
    with s.if_then(gt.cond(c) > 0) as then:
        if not st.ready:
            add[1, 4, then](y, 1.0)
        st.ready = True   # helper block stores


class _Helped:
    def __init__(self):
        self.st = SimpleNamespace(ready=False)

    @gt.graph(backend="sim")
    def step(self, s, c, y):
        _helper_block(s, c, y, self.st)


class _HostFlag:
    def __init__(self):
        self.flags = np.zeros(2)

    @gt.graph(backend="sim")
    def step(self, s, c, y):
        with s.if_then(gt.cond(c) > 0) as then:
            if self.flags[0] == 0:
                add[1, 4, then](y, 1.0)
            self.flags[0] = 1.0   # host array flag


@pytest.mark.parametrize("call, marker, name", [
    (lambda: gt.graph(_else_state, backend="sim")(dev(0), dev(0, 0, 0, 0)),
     "global item in if_else", "STATE['init']"),
    (lambda: gt.graph(_switch_global, backend="sim")(dev(0, dtype=np.int32), dev(0, 0, 0, 0)),
     "global name in switch", "CALLS"),
    (lambda: _Counted().run(dev(0, dtype=np.int32), dev(0, 0, 0, 0)), "counter in while",
     "self.iters"),
    (lambda: _factory()(dev(0), dev(0, 0, 0, 0)), "closure list appended", "seen"),
    (lambda: _nonlocal_factory()(dev(0), dev(0, 0, 0, 0)), "closure cell rebound", "n"),
    (lambda: gt.graph(_argument_attribute, backend="sim")(
        dev(0), dev(0, 0, 0, 0), SimpleNamespace(seen=False)), "argument attribute", "cfg.seen"),
    (lambda: _Marked().step(dev(0), dev(0, 0, 0, 0)), "helper stores self", "self.started"),
    (lambda: _BodyFn().step(dev(0), dev(0, 0, 0, 0)), "body fn appends", "self.log"),
    (lambda: _Setattr().step(dev(0), dev(0, 0, 0, 0)), "setattr in body", "self.started"),
    (lambda: _Helped().step(dev(0), dev(0, 0, 0, 0)), "helper block stores", "st.ready"),
    (lambda: _HostFlag().step(dev(0), dev(0, 0, 0, 0)), "host array flag", "self.flags[0]"),
], ids=["if_else-global-item", "switch-global", "while-self-counter", "closure-append",
        "nonlocal", "argument-attribute", "helper-method", "body-fn", "setattr",
        "block-in-helper", "host-array-item"])
def test_a_store_outliving_the_trace_in_any_body_is_refused_at_its_line(call, marker, name):
    _refused(call, marker, name)


class _Kept:
    """Bodies whose stores stay within the trace, change nothing, or change
    what no work of the function is decided by."""

    def __init__(self):
        self.mode, self.debug, self.ticks, self.calls, self.log = "a", False, 0, 0, []

    def tick(self):
        self.ticks += 1

    @gt.graph(backend="sim")
    def step(self, s, c, y):
        k = 0
        with s.if_then(gt.cond(c) > 0) as then:
            t = then.zeros(4, np.float32)   # a temporary made and used in the body
            add[1, 4, then](t, 1.0)
            add[1, 4, then](y, 1.0)
            k += 1                          # a local only
            rec = SimpleNamespace()         # an object made in the body
            rec.k = k
            self.mode = "a"                 # set to what it held
            self.calls += 1                 # a counter and a log only reported
            self.log.append(k)
            if self.debug:                  # a store the trace does not make
                self.ticks += 100

            def later():                    # runs when called, not at the trace
                self.ticks += 1000
        s.host(self.tick)                   # bookkeeping in a host callback
        print(k, rec.k)


def test_bodies_storing_nothing_the_next_call_works_from_run_as_eagerly():
    m, y = _Kept(), dev(0, 0, 0, 0)
    for c in (0, 1, 1, 0):
        m.step(dev(c), y)
    assert host(y) == [2.0] * 4
    assert (m.mode, m.ticks) == ("a", 4)

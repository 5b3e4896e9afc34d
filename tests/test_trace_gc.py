"""The cyclic collector around a trace: paused while recording, and what the trace
made moved to the oldest generation afterwards (not rescanned by young collections)."""
import gc
import weakref

import pytest

import graphtrace as gt
from graphtrace import context
from helpers import FakeDeviceArray as A, any_kernel

K = any_kernel()


@gt.graph
def chain(s, x):
    for _ in range(50):
        s.launch(K, 1, 1, x)


@pytest.fixture(autouse=True)
def recount_frozen():
    """Each test starts, and leaves the next, with frozen objects counted anew
    (and the interpreter's own count as it was)."""
    context._gc_pause[2] = 0.0
    own = context._gc_pause[3]
    yield
    context._gc_pause[2], context._gc_pause[3] = 0.0, own


def test_what_a_trace_makes_is_in_the_oldest_generation():
    gc.collect()
    g = chain.trace(A(64))
    young = {id(o) for o in gc.get_objects(generation=0) + gc.get_objects(generation=1)}
    nodes = g.nodes   # made now, under the same rule
    young |= {id(o) for o in gc.get_objects(generation=0) + gc.get_objects(generation=1)}
    assert gc.isenabled()
    assert not any(id(o) in young for o in [g, *nodes, *(n.args for n in nodes)])
    assert any(o is nodes[0] for o in gc.get_objects(generation=2))


def test_objects_the_program_froze_stay_frozen():
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        chain.trace(A(64)).nodes
        assert gc.get_freeze_count() == frozen and gc.isenabled()
    finally:
        gc.unfreeze()


def test_frozen_objects_are_counted_once_not_at_every_trace(monkeypatch):
    """Counting a program's frozen objects walks them all (25 ms a 10-node trace
    with a million frozen): once some are found, traces do not count again."""
    calls = []
    count = gc.get_freeze_count
    monkeypatch.setattr(gc, "get_freeze_count", lambda: calls.append(1) or count())
    gc.collect()
    gc.freeze()
    try:
        for _ in range(3):
            chain.trace(A(64)).nodes
        assert len(calls) == 1 and gc.isenabled()
    finally:
        gc.unfreeze()
        context._gc_pause[2] = 0.0   # as after _FROZEN_RECHECK seconds
    chain.trace(A(64))
    assert len(calls) > 1   # none frozen now: counted (and cheap) at each resume


def test_a_collector_switched_off_stays_off():
    gc.disable()
    try:
        chain.trace(A(64)).nodes
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_interpreters_own_frozen_objects_do_not_stop_the_move():
    """CPython 3.12 keeps a few hundred objects of its own frozen: as many as
    there were when graphtrace was imported are not the program's, and what a
    trace made still goes to the oldest generation (else a young collection of
    all of it ran as the trace ended). Frozen here to stand for them."""
    gc.collect()
    gc.freeze()
    try:
        context._gc_pause[3] = gc.get_freeze_count()
        g = chain.trace(A(64))
        assert not any(o is g for o in gc.get_objects(generation=0))
        assert any(o is g for o in gc.get_objects(generation=2))
        g = chain.trace(A(64))   # and again: they are still the interpreter's (3.12's
        # full collections freeze its own anew)
        assert any(o is g for o in gc.get_objects(generation=2))
    finally:
        gc.unfreeze()


def test_objects_the_program_froze_after_the_interpreters_stay_frozen():
    gc.collect()
    gc.freeze()
    try:
        own = gc.get_freeze_count()
        context._gc_pause[3] = own
        keep = [[] for _ in range(10)]
        gc.freeze()   # the program's, beyond the interpreter's
        frozen = gc.get_freeze_count()
        assert frozen > own
        chain.trace(A(64)).nodes
        assert gc.get_freeze_count() == frozen and gc.isenabled() and keep
    finally:
        gc.unfreeze()


class _Cycle:
    """Garbage only the cyclic collector frees (a request object holding itself)."""

    def __init__(self):
        self.me = self


def _traced_anew(n):
    """A trace of a new signature (a new length)."""
    @gt.graph
    def f(s, x):
        s.launch(K, 1, 1, x)
    f.trace(A(n))


def test_garbage_the_program_left_young_is_collected_not_moved_by_a_trace():
    """A program tracing often (new shapes each call) made garbage before each
    call: moved to the oldest generation with the trace's objects, no full
    collection ever came (freezing zeroes the young count, and what it moves is
    not counted), and memory grew without end. It is collected young instead."""
    gc.collect()
    refs = []
    for n in range(8, 28):
        o = _Cycle()
        refs.append(weakref.ref(o))
        del o
        _traced_anew(n)
    assert sum(r() is not None for r in refs) == 0 and gc.isenabled()


def test_garbage_made_during_traces_gets_the_full_collection_cpython_would_run(monkeypatch):
    """What a trace made and dropped in cycles (a traced function's own, or a
    program's object made and dropped inside it) is moved with the rest: counted,
    it brings a full collection as a later trace starts, as CPython's rule
    (a quarter of the oldest generation moved since the last) would have."""
    gc.collect()
    monkeypatch.setattr(context, "_FULL_FLOOR", 50)
    monkeypatch.setattr(context, "_moved", [0, gc.get_stats()[2]["collections"], 100])
    # (the oldest generation's size told: a small heap's)
    with context.gc_paused():
        o = _Cycle()
        ref = weakref.ref(o)
        del o
        kept = [[i] for i in range(100)]   # young objects the trace keeps
    assert ref() is not None or gc.get_stats()[2]["collections"] != context._moved[1]
    with context.gc_paused():   # a pause of the same build (the graph's nodes made)
        pass
    assert ref() is not None or gc.get_stats()[2]["collections"] != context._moved[1]
    context.before_trace()      # due now: collected as the next trace starts
    assert ref() is None and gc.isenabled() and kept
    assert context._moved[:1] + context._moved[2:] == [0, 0]   # counted anew, the
    # oldest generation's size told again before the next one is due


def test_no_full_collection_is_due_before_a_quarter_of_the_heap_is_moved(monkeypatch):
    """The first due collection waits for CPython's rule too (a quarter of the
    oldest generation), not for the floor alone: a 2M-object heap stalled a trace
    with a full collection after 10,000 objects moved."""
    gc.collect()
    monkeypatch.setattr(context, "_FULL_FLOOR", 50)
    monkeypatch.setattr(context, "_moved", [100, gc.get_stats()[2]["collections"], 0])
    ran = []
    monkeypatch.setattr(gc, "collect", lambda *a: ran.append(a) or 0)
    context.before_trace()
    assert not any(a == () or a == (2,) for a in ran)
    assert context._moved[2] == len(gc.get_objects(2)) or context._moved[2] > 400


_STEP = """
import gc, sys
import graphtrace as gt
sys.path.insert(0, {tests!r})
from helpers import FakeDeviceArray as A, any_kernel
K = any_kernel()

@gt.graph(backend="sim")
def step(s, x):
    s.launch(K, 1, 1, x)
"""

_FINALIZER_TRACES = _STEP + """
class Req:
    def __init__(self, n):
        self.me, self.n = self, n
    def __del__(self):
        step.trace(A(self.n))   # a trace started by a collection
        print("traced", self.n, flush=True)

gc.collect()
for n in range(2, 6):
    Req(n + 100)
    step.trace(A(n))
gc.collect()
print("done", flush=True)
"""


def test_a_finalizer_that_traces_runs_in_the_collection_a_trace_starts_with():
    """The collection a trace starts with runs finalizers; one that traces in
    turn waited for good on the lock its own thread held."""
    done = _run(_FINALIZER_TRACES)
    assert done.returncode == 0 and done.stdout.count("traced") == 4 and \
        done.stdout.strip().endswith("done"), (done.stdout, done.stderr[-2000:])


_HOOK_COLLECTS = _STEP + """
from graphtrace import context
class Req:
    def __init__(self):
        self.me = self
    def __del__(self):
        step.trace(A(7))   # a trace started by a collection inside a hook
        print("traced", flush=True)

done = []

@context.on_trace_start
def collects():   # a collection running a finalizer while the hooks run
    if not done:
        done.append(1)
        Req()
        gc.collect()

step.trace(A(3))
print("done", flush=True)
"""


def test_a_finalizer_that_traces_while_the_trace_hooks_run():
    """CPython collects whenever the program allocates: in the hooks a trace
    starts with too, under their lock; a finalizer tracing there waited for good."""
    done = _run(_HOOK_COLLECTS)
    assert done.returncode == 0 and done.stdout.split() == ["traced", "done"], \
        (done.stdout, done.stderr[-2000:])


def _run(script: str):
    """``script`` run in a process of its own (a deadlock there fails the test
    by its timeout, not the whole run)."""
    import os
    import subprocess
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [os.path.dirname(here), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", script.format(tests=here)],
                          env=env, capture_output=True, text=True, timeout=120)

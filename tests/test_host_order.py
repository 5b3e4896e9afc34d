"""Host callbacks run in the order the code recorded them, and one handed no
memory runs between the work recorded before and after it.

Before, in the default data mode, a callback handed no arrays had no accesses
and so no edges: ``s.host(LOG.append, "start")``, a kernel, ``s.host(done)``
ran in any order (16 of 20 simulated calls logged ``done`` first, and on a GPU
``done`` ran before the kernel ahead of it had finished); and callbacks handed
disjoint arrays ran in any order among themselves.
"""
import numpy as np
from numba import cuda

import graphtrace as gt


@cuda.jit
def slow_inc(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1.0


def dev(a):
    return cuda.to_device(np.asarray(a, dtype=np.float64))


def test_callbacks_handed_no_memory_run_as_written_between_the_work_around_them():
    log = []

    @gt.graph(backend="sim")
    def f(s, x):
        s.host(log.append, "start")
        slow_inc[1, 8, s](x)
        s.host(log.append, "after kernel")
        slow_inc[1, 8, s](x)
        s.host(lambda: log.append("done"))

    x = dev(np.zeros(8))
    g = f.trace(x)
    assert g.edges() == [(0, 1), (1, 2), (2, 3), (3, 4)]
    for call in range(20):
        log.clear()
        f(x)
        assert log == ["start", "after kernel", "done"], (call, log)
    assert x.copy_to_host()[0] == 40.0


def test_callbacks_on_disjoint_arrays_run_in_the_order_recorded():
    seen = []

    @gt.graph(backend="sim")
    def f(s, xs, hs):
        for i, (x, h) in enumerate(zip(xs, hs)):
            s.copy(h, x)
            s.host(lambda h, i: seen.append(i), gt.In(h), i)

    xs = [dev(np.full(4, k)) for k in range(6)]
    hs = [gt.pinned_empty(4) for _ in range(6)]
    g = f.trace(xs, hs)
    host = [n.index for n in g.nodes if n.kind == "host"]
    assert all((a, b) in g.edges() for a, b in zip(host, host[1:]))
    for _ in range(10):
        seen.clear()
        f(xs, hs)
        assert seen == list(range(6))
    assert "inout(host callbacks)" in str(g)


def test_opaque_false_leaves_a_callback_handed_no_memory_unordered_with_kernels():
    @gt.graph(backend="sim")
    def f(s, x):
        slow_inc[1, 8, s](x)
        s.host(print, "free", opaque=False)
        s.host(print, "after it")

    g = f.trace(dev(np.zeros(8)))
    assert (0, 1) not in g.edges() and (1, 2) in g.edges()


def test_streams_mode_keeps_the_streams_order_alone():
    """Callbacks on two proxy streams are not ordered with each other there."""
    @gt.graph(backend="sim", deps="streams")
    def f(s, x, y):
        t = s.fork()
        s.host(print, "a")
        t.host(print, "b")
        s.join(t)

    g = f.trace(dev(np.zeros(2)), dev(np.zeros(2)))
    hosts = [n.index for n in g.nodes if n.kind == "host"]
    assert not any((a, b) in g.edges() or (b, a) in g.edges()
                   for a in hosts for b in hosts if a != b)


def test_in_streams_mode_a_callback_handed_nothing_is_neither_opaque_nor_a_race():
    """Its stream orders it; made opaque there, gt.check reported it racing with a
    kernel on another stream, and two callbacks on two streams raced on the byte
    they shared."""
    @gt.graph(backend="sim", deps="streams")
    def f(s, x):
        t = s.fork()
        slow_inc[1, 8, s](x)
        t.host(print, "progress")
        t.host(print, "more", opaque=False)
        s.host(print, "other")
        s.join(t)

    g = f.trace(dev(np.zeros(8)))
    assert not any(n.opaque for n in g.nodes) and gt.check(g) == []
    assert "host callbacks" not in str(g)


def test_a_child_holding_a_callback_handed_nothing_is_not_opaque_in_its_parent():
    """The callback is ordered with everything in its own graph; it touches no
    memory, so the child node does not either (it was opaque: serialised with
    unrelated kernels, and a race in a streams parent)."""
    @gt.graph(deps="data")
    def helper(s, y):
        slow_inc[1, 8, s](y)
        s.host(print, "helper done")

    @gt.graph(backend="sim")
    def data_parent(s, x, y):
        slow_inc[1, 8, s](x)
        s.child(helper, y)
        slow_inc[1, 8, s](x)

    @gt.graph(backend="sim", deps="streams")
    def streams_parent(s, x, y):
        t = s.fork()
        helper(s, y)
        slow_inc[1, 8, t](x)
        s.join(t)

    x, y = dev(np.zeros(8)), dev(np.zeros(8))
    g = data_parent.trace(x, y)
    child = next(n for n in g.nodes if n.kind == "child")
    assert not child.opaque and g.edges() == [(0, 4)]   # (the child's nodes are %2, %3)
    callback = [n for n in child.regions[0].walk() if n.kind == "host"]
    assert len(callback) == 1 and callback[0].opaque
    g = streams_parent.trace(x, y)
    assert gt.check(g) == []


def test_a_streams_mode_childs_callbacks_run_in_turn_with_its_data_mode_parents():
    """In data mode callbacks run in the order recorded, a child's among them. A
    child in streams mode gave its node no order of callbacks: s.host(bump, h1),
    then s.child(helper, h2) with helper's s.host(look, h2), had no edge, and look
    ran before bump in about half the simulated calls."""
    state = {"count": 0}
    seen = []

    def bump(h):
        state["count"] += 1

    def look(h):
        seen.append(state["count"])

    @gt.graph(deps="streams")
    def helper(s, h):
        s.host(look, h)

    @gt.graph(deps="streams")
    def outer(s, h):
        s.child(helper, h)

    @gt.graph(backend="sim")
    def f(s, h1, h2):
        s.host(bump, h1)
        s.child(helper, h2)

    @gt.graph(backend="sim")
    def nested(s, h1, h2):
        s.host(bump, h1)
        s.child(outer, h2)

    h1, h2 = gt.pinned_empty(4), gt.pinned_empty(4)
    for g in (f, nested):
        assert g.trace(h1, h2).edges() == [(0, 1)]
        for _ in range(10):
            state["count"] = 0
            seen.clear()
            g(h1, h2)
            assert seen == [1]

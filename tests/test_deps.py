"""Dependency inference, one hazard per test (deps="data" and deps="streams")."""
import pytest

import graphtrace as gt
from helpers import FakeDeviceArray as A, any_kernel

K = any_kernel()
pytestmark = pytest.mark.usefixtures("both_inference_paths")   # conftest.py


def trace(body, deps="data"):
    @gt.graph(deps=deps)
    def f(s):
        body(s)
    return f.trace()


def read(s, *xs):
    return s.launch(K, 1, 1, *[gt.In(x) for x in xs])


def write(s, *xs):
    return s.launch(K, 1, 1, *[gt.Out(x) for x in xs])


def edges(g):
    return sorted(g.edges())


def test_read_after_write_is_ordered():
    x = A(256)
    g = trace(lambda s: (write(s, x), read(s, x)))
    assert edges(g) == [(0, 1)]


def test_write_after_read_is_ordered():
    x = A(256)
    g = trace(lambda s: (read(s, x), write(s, x)))
    assert edges(g) == [(0, 1)]


def test_write_after_write_is_ordered():
    x = A(256)
    g = trace(lambda s: (write(s, x), write(s, x)))
    assert edges(g) == [(0, 1)]


def test_read_after_read_is_unordered():
    x = A(256)
    g = trace(lambda s: (read(s, x), read(s, x)))
    assert edges(g) == []


def test_disjoint_halves_of_one_allocation_are_independent():
    x = A(256)
    lo, hi = x.view(0, (128,)), x.view(512, (128,))
    g = trace(lambda s: (write(s, lo), write(s, hi), read(s, lo), read(s, hi)))
    assert edges(g) == [(0, 2), (1, 3)]


def test_partial_overlap_is_ordered():
    x = A(256)
    a, b = x.view(0, (100,)), x.view(396, (100,))     # bytes [0,400) and [396,796)
    g = trace(lambda s: (write(s, a), read(s, b)))
    assert edges(g) == [(0, 1)]


def test_adjacent_views_sharing_no_byte_are_independent():
    x = A(256)
    a, b = x.view(0, (100,)), x.view(400, (100,))
    g = trace(lambda s: (write(s, a), write(s, b)))
    assert edges(g) == []


def test_interleaved_strided_views_are_independent():
    x = A(256)
    even, odd = x.view(0, (128,), (8,)), x.view(4, (128,), (8,))
    g = trace(lambda s: (write(s, even), write(s, odd), read(s, even)))
    assert edges(g) == [(0, 2)]


def test_strided_view_and_contiguous_view_sharing_bytes_are_ordered():
    x = A(256)
    even, middle = x.view(0, (128,), (8,)), x.view(8, (1,))
    g = trace(lambda s: (write(s, even), read(s, middle)))
    assert edges(g) == [(0, 1)]


def test_disjoint_column_blocks_of_a_matrix_are_independent():
    m = A((16, 16))                                   # rows of 64 bytes
    left, right = m.view(0, (16, 8), (64, 4)), m.view(32, (16, 8), (64, 4))
    g = trace(lambda s: (write(s, left), write(s, right), read(s, m)))
    assert edges(g) == [(0, 2), (1, 2)]


def test_same_buffer_through_two_view_objects_is_ordered():
    x = A(256)
    alias = A(256, ptr=x.ptr)
    g = trace(lambda s: (write(s, x), read(s, alias)))
    assert edges(g) == [(0, 1)]


def test_distinct_allocations_are_independent():
    x, y = A(256), A(256)
    g = trace(lambda s: (write(s, x), write(s, y)))
    assert edges(g) == []


def test_transitively_implied_edge_is_removed():
    x, y = A(256), A(256)
    # 0 writes x; 1 reads x, writes y; 2 reads x and y: 0->2 is implied by 0->1->2.
    g = trace(lambda s: (write(s, x), s.launch(K, 1, 1, gt.In(x), gt.Out(y)), read(s, x, y)))
    assert edges(g) == [(0, 1), (1, 2)]


def test_all_readers_precede_the_next_writer():
    x = A(256)
    g = trace(lambda s: (write(s, x), read(s, x), read(s, x), write(s, x)))
    assert edges(g) == [(0, 1), (0, 2), (1, 3), (2, 3)]


def test_a_covering_write_hides_older_accesses():
    x = A(256)
    part = x.view(0, (10,))
    g = trace(lambda s: (read(s, part), write(s, x), read(s, part)))
    assert edges(g) == [(0, 1), (1, 2)]


def test_opaque_node_is_ordered_against_everything():
    x, y = A(256), A(256)
    g = trace(lambda s: (write(s, x), s.launch(K, 1, 1, opaque=True), write(s, y)))
    assert edges(g) == [(0, 1), (1, 2)]


def test_node_with_no_accesses_is_unordered():
    x = A(256)
    g = trace(lambda s: (write(s, x), s.launch(K, 1, 1), read(s, x)))
    assert edges(g) == [(0, 2)]


def test_streams_mode_orders_each_stream_as_captured():
    x, y = A(256), A(256)
    g = trace(lambda s: (read(s, x), read(s, y), read(s, x)), deps="streams")
    assert edges(g) == [(0, 1), (1, 2)]


def test_streams_mode_fork_and_join():
    x, y = A(256), A(256)

    def body(s):
        write(s, x)                # 0
        t = s.fork()
        write(t, y)                # 1: after 0 (forked after it)
        write(s, x)                # 2: after 0
        s.join(t)
        read(s, x)                 # 3: after 1 and 2
    g = trace(body, deps="streams")
    assert edges(g) == [(0, 1), (0, 2), (1, 3), (2, 3)]


def test_streams_mode_events_order_across_streams():
    x = A(256)
    ev = object()

    def body(s):
        t = s.fork()
        write(t, x)                # 0
        t.record(ev)               # 1: event record node, after 0
        read(s, x)                 # 2: stream s does not wait yet
        s.wait(ev)
        read(s, x)                 # 3: after 2 and the record
    g = trace(body, deps="streams")
    assert edges(g) == [(0, 1), (1, 3), (2, 3)]
    assert [n.kind for n in g.nodes] == ["kernel", "event_record", "kernel", "kernel"]


def _producer(deps):
    @gt.graph(deps=deps)
    def producer(s, x, ev):
        write(s, x)
        s.record(ev)
    return producer


@pytest.mark.parametrize("spelling", ["s.child", "inline data helper"])
def test_streams_mode_waits_on_an_event_recorded_in_a_child_graph_for_its_node(spelling):
    x = A(256)
    ev = object()

    def body(s):
        t = s.fork()
        if spelling == "s.child":
            s.child(_producer("streams"), x, ev)   # 0, its nodes 1 and 2
        else:
            _producer("data")(s, x, ev)            # a child node too
        t.wait(ev)
        read(t, x)                 # 3: after the child node
        s.join(t)
    assert edges(trace(body, deps="streams")) == [(0, 3)]


@pytest.mark.parametrize("deps", ["streams", "data"])
def test_streams_mode_a_child_waiting_on_an_event_recorded_before_it_follows_the_record(deps):
    x = A(256)
    ev = object()

    @gt.graph(deps=deps)
    def consumer(s, x, ev):
        s.wait(ev)
        read(s, x)

    def body(s):
        t = s.fork()
        write(t, x)                # 0
        t.record(ev)               # 1
        s.child(consumer, x, ev)   # 2: after the record
        s.join(t)
    g = trace(body, deps="streams")
    assert edges(g) == [(0, 1), (1, 2)]
    assert [n.kind for n in g.nodes[2].regions[0].nodes] == ["kernel"]


def test_streams_mode_ignores_data():
    x = A(256)
    def body(s):
        t = s.fork()
        write(s, x)
        read(t, x)                 # a race in the user's stream order: no edge
    g = trace(body, deps="streams")
    assert edges(g) == []


def test_waiting_on_an_outside_event_is_a_barrier_in_data_mode():
    x, y = A(256), A(256)
    ev = object()
    g = trace(lambda s: (write(s, x), s.wait(ev), write(s, y)))
    assert [n.kind for n in g.nodes] == ["kernel", "event_wait", "kernel"]
    assert edges(g) == [(0, 1), (1, 2)]


def test_a_node_touching_only_empty_views_is_ordered_against_opaque_ones():
    x = A(256)
    empty = x.view(0, (0,))
    g = trace(lambda s: (read(s, empty), s.launch(K, 1, 1, opaque=True), read(s, empty)))
    assert edges(g) == [(0, 1), (1, 2)]


def test_an_empty_view_does_not_hide_the_next_access_of_the_node():
    x = A(256)
    g = trace(lambda s: (write(s, x), read(s, x.view(0, (0,)), x)))
    assert edges(g) == [(0, 1)]


def test_small_scopes_are_inferred_in_plain_python_and_large_ones_in_batch(
        monkeypatch, both_inference_paths):
    from graphtrace import deps_small
    calls = []
    small = deps_small.data_deps
    monkeypatch.setattr(deps_small, "data_deps", lambda *a: calls.append(a[0]) or small(*a))
    x = A(256)
    trace(lambda s: (write(s, x), read(s, x), write(s, x)))
    plain = [3] if both_inference_paths == "plain Python" else []
    assert calls == plain
    trace(lambda s: [write(s, x) for _ in range(deps_small.SMALL + 1)])
    assert calls == plain   # the batch path took the larger scope


@pytest.mark.parametrize("n", [4, 40, 100])   # the small scope's walk, and the batch path
def test_data_mode_an_event_record_follows_all_before_it_and_orders_nothing_after(n):
    xs = [A(256) for _ in range(n)]
    ev, ev2 = object(), object()

    def body(s):
        t = s.fork()
        for i, x in enumerate(xs):
            write(s if i % 2 else t, x)               # 0..n-1: independent chains
        t.record(ev)                                  # n: after every one of them
        read(s, xs[0])                                # n+1: after 0 only
        s.launch(K, 1, 1, gt.Out(xs[1]), opaque=True)  # n+2: a barrier
        write(t, xs[2])                               # n+3: after the barrier
        s.record(ev2)                                 # n+4: after n+3 (and so the rest)
        s.wait(ev)                                    # waited in the trace: no node
        read(s, xs[3])                                # n+5: after n+3's barrier only
    g = trace(body)
    assert [nd.kind for nd in g.nodes[n:]] == ["event_record", "kernel", "kernel",
                                               "kernel", "event_record", "kernel"]
    assert not g.nodes[n].opaque
    assert [d.pos for d in g.nodes[n].deps] == list(range(n))
    assert [d.pos for d in g.nodes[n + 1].deps] == [0]
    assert [d.pos for d in g.nodes[n + 2].deps] == [n, n + 1]
    assert [d.pos for d in g.nodes[n + 3].deps] == [n + 2]
    assert [d.pos for d in g.nodes[n + 4].deps] == [n + 3]
    assert [d.pos for d in g.nodes[n + 5].deps] == [n + 2]


def test_data_mode_a_child_graph_recording_an_event_follows_all_before_it():
    """The event a child graph records stands for the work before it in the caller
    too: the child node follows all of it (it followed nothing, the child's
    record node being no barrier any more, so the event could fire before x was
    written), and the work after it still runs as its data allow."""
    x, y, z = A(64), A(64), A(64)
    ev = object()

    @gt.graph
    def kid(s, y):
        write(s, y)
        s.record(ev)

    def body(s):
        write(s, x)
        s.child(kid, y)
        read(s, z)
    g = trace(body)
    assert [nd.kind for nd in g.nodes] == ["kernel", "child", "kernel"]
    assert [d.pos for d in g.nodes[1].deps] == [0] and g.nodes[2].deps == []
    assert gt.check(g) == []

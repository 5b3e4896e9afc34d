"""``gt.check``: races between nodes that the DAG leaves unordered."""
import graphtrace as gt
from helpers import FakeDeviceArray as A, any_kernel, line_of

K = any_kernel()


def races(body, deps="streams"):
    @gt.graph(deps=deps)
    def f(s):
        body(s)
    return gt.check(f.trace())


def where(marker):
    return f"test_check.py:{line_of(__file__, marker)}"


def forked_write_then_main_read(wait):
    x, y = A(64), A(64)
    ev = object()

    def body(s):
        t = s.fork()
        s.launch(K, 1, 1, gt.Out(y))           # main work the event does not order
        t.launch(K, 1, 1, gt.Out(x))           # producer
        t.record(ev)
        if wait:
            s.wait(ev)
        s.launch(K, 1, 1, gt.In(x))            # consumer
    return body


def test_an_event_wait_orders_the_forked_work_before_it():
    assert races(forked_write_then_main_read(wait=True)) == []


def test_without_the_wait_the_same_work_is_a_race():
    found = races(forked_write_then_main_read(wait=False))
    assert len(found) == 1
    text = str(found[0])
    assert where("producer") in text and where("consumer") in text
    assert "touch x / x, one writing" in text


def test_a_race_names_every_pair_of_views_the_two_nodes_conflict_by():
    x, y = A(64), A(64)

    def body(s):
        t = s.fork()
        s.launch(K, 1, 1, gt.In(x), gt.Out(y))
        t.launch(K, 1, 1, gt.In(y), gt.Out(x))
    found = races(body)
    assert len(found) == 1 and found[0].buffers[0].label == "x"
    assert "touch x / x and y / y, one writing in each pair, but nothing orders" in \
        str(found[0])


def test_event_waits_are_opaque_barriers_only_in_data_mode_and_records_never():
    """A record follows all before it in data mode (deps.DataDeps.closes), unopaque."""
    x, y = A(64), A(64)
    ev, outside = object(), object()

    def body(s):
        s.launch(K, 1, 1, gt.Out(x))
        s.record(ev)
        s.wait(outside)
        s.launch(K, 1, 1, gt.Out(y))

    @gt.graph
    def data(s):
        body(s)

    @gt.graph(deps="streams")
    def streams(s):
        body(s)
    for g, opaque in ((data.trace(), True), (streams.trace(), False)):
        assert [(n.kind, n.opaque) for n in g.nodes[1:3]] == \
            [("event_record", False), ("event_wait", opaque)]
        assert sorted(g.edges()) == [(0, 1), (1, 2), (2, 3)]
        assert not gt.check(g)


def test_an_outside_event_wait_races_with_no_other_stream():
    x, y = A(64), A(64)

    def body(s):
        t = s.fork()
        t.launch(K, 1, 1, gt.Out(x))
        s.wait(object())
        s.launch(K, 1, 1, gt.Out(y))
    assert races(body) == []


def test_an_unordered_opaque_kernel_races_with_any_node_touching_memory():
    x = A(64)

    def body(s):
        t = s.fork()
        s.launch(K, 1, 1, opaque=True)         # opaque
        t.launch(K, 1, 1, gt.In(x))            # reader
        t.launch(K, 1, 1, opaque=True)         # other opaque
    found = races(body)
    assert [(r.first.index, r.second.index) for r in found] == [(0, 1), (0, 2)]
    assert where("opaque") in str(found[0]) and where("reader") in str(found[0])
    assert "touch any memory (opaque) / x, one writing" in str(found[0])
    assert "touch any memory (opaque) / any memory (opaque)" in str(found[1])


def test_an_opaque_kernel_does_not_race_with_nodes_touching_no_memory():
    x = A(64)

    def body(s):
        t = s.fork()
        s.launch(K, 1, 1, opaque=True)
        t.launch(K, 1, 1, 2.0)                 # scalars only
        t.launch(K, 1, 1, gt.In(x.view(0, (0,))))  # an empty view
        t.record(object())
    assert races(body) == []


def test_an_ordered_opaque_kernel_is_no_race():
    x = A(64)

    def body(s):
        t = s.fork()
        t.launch(K, 1, 1, gt.In(x))
        s.join(t)
        s.launch(K, 1, 1, opaque=True)
    assert races(body) == []


def test_a_reader_recorded_before_an_unordered_writer_is_a_race():
    x = A(64)

    def body(s):
        t = s.fork()
        s.launch(K, 1, 1, gt.In(x))
        t.launch(K, 1, 1, gt.Out(x))
    found = races(body)
    assert [(r.first.index, r.second.index) for r in found] == [(0, 1)]
    assert [b.label for b in found[0].buffers] == ["x", "x"]
    assert found[0].buffers[0].same_view(found[0].buffers[1])


def test_a_race_is_found_behind_an_ordered_pair():
    x, y = A(64), A(64)

    def body(s):
        t = s.fork()
        s.launch(K, 1, 1, gt.Out(x))           # 0: before 2 on the same stream
        t.launch(K, 1, 1, gt.Out(y))           # 1: unordered with 2
        s.launch(K, 1, 1, gt.In(x), gt.In(y))  # 2
    assert [(r.first.index, r.second.index) for r in races(body)] == [(1, 2)]


def test_a_report_names_each_buffer_the_same_way_throughout():
    x, y = A(64), A(64)

    def body(s):
        t = s.fork()
        s.launch(K, 1, 1, gt.Out(x))
        t.launch(K, 1, 1, gt.In(x))
        s.launch(K, 1, 1, gt.Out(y))
        t.launch(K, 1, 1, gt.In(y))
    texts = [str(r) for r in races(body)]
    assert len(texts) == 2
    assert texts[1].count("(y)") == 2 and "x" not in texts[1].split("(test_check")[0]
    assert texts[1].endswith("touch y / y, one writing, but nothing orders them: "
                             'join the streams, record/wait an event, or use deps="data"')

"""``gt.explain``: the buffer, bytes and hazard of each edge, and why two nodes are
or are not ordered; checked against brute force on random programs."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import graphtrace as gt
from graphtrace.hazards import OPAQUE, RAW, WAR, WAW
from helpers import FakeDeviceArray as A, any_kernel, line_of
from programs import N_PARAMS, ROUTES, World, cases
from test_deps_random import WRAP, programs, reaches
from step_kernels import add, scale

K = any_kernel()


@gt.graph
def step(s, x, y, tmp, a):
    scale[4, 256, s](x, a, tmp)      # %0 writes tmp
    add[4, 256, s](tmp, y)           # %1 reads tmp, updates y
    s.memset(x[:16], 0)              # %2 writes the first 64 bytes of x, which %0 reads
    scale[4, 256, s](y, a, tmp)      # %3 reads y, writes tmp again
    add[4, 256, s](x[32:], y)        # %4 reads x past the memset, updates y


def traced():
    return step.trace(A(1024), A(1024), A(1024), 2.0)


def test_each_edge_names_its_hazard_buffer_and_bytes():
    lines = str(gt.explain(step, A(1024), A(1024), A(1024), 2.0)).splitlines()
    assert lines[0] == ("edges of step (deps=data): RAW read after write, WAR write after "
                        "read, WAW write after write")
    assert lines[1:] == [
        "  %0 scale -> %1 add: RAW tmp",
        "  %0 scale -> %2 memset: WAR x[0B:64B]",
        "  %1 add -> %3 scale: WAR tmp; RAW y",
        "  %3 scale -> %4 add: WAR y",
    ]


def test_a_graph_can_be_explained_as_well_as_a_function():
    g = traced()
    assert str(gt.explain(g)) == str(gt.explain(step, A(1024), A(1024), A(1024), 2.0))


def test_write_after_write_is_named():
    @gt.graph
    def f(s, x):
        s.memset(x, 0)
        s.memset(x[4:8], 1)
    assert str(gt.explain(f, A(16))).splitlines()[1] == "  %0 memset -> %1 memset: WAW x[16B:32B]"


def test_a_direct_edge_is_answered_with_its_hazard():
    why = gt.explain(traced()).why(0, 1)
    assert why.ordered and [n.index for n in why.path] == [0, 1]
    assert str(why) == "%0 scale runs before %1 add: ordered by the edge %0 -> %1 (RAW tmp)"


def test_an_implied_edge_is_answered_with_the_path_and_the_direct_conflict():
    why = gt.explain(traced()).why("%3", "%0")     # either order, by name
    assert why.ordered and [n.index for n in why.path] == [0, 1, 3]
    assert str(why) == ("%0 scale runs before %3 scale: ordered through %0 -> %1 -> %3; they "
                        "also conflict directly (WAW tmp), which that path already orders")


def test_disjoint_bytes_are_independent():
    why = gt.explain(traced()).why(2, 4)
    assert not why.ordered and not why.race and why.path == []
    assert str(why) == ("%2 memset and %4 add are independent: their bytes do not overlap "
                        "(%2 memset touches x[0B:64B]; %4 add touches x[128B:4096B], y)")


def test_nodes_that_both_only_read_are_independent():
    @gt.graph
    def f(s, x, y, z):
        s.launch(K, 1, 1, gt.In(x), gt.Out(y))
        s.launch(K, 1, 1, gt.In(x[8:]), gt.Out(z))
    why = gt.explain(f, A(16), A(16), A(16)).why(0, 1)
    assert str(why) == "%0 k and %1 k are independent: both only read x[32B:64B]"


def test_an_unordered_conflict_of_stream_order_is_a_race():
    @gt.graph(deps="streams")
    def f(s, x):
        t = s.fork()
        s.launch(K, 1, 1, gt.Out(x))
        t.launch(K, 1, 1, gt.In(x))
    e = gt.explain(f, A(16))
    why = e.why(0, 1)
    assert why.race and not why.ordered
    assert str(why) == "%0 k and %1 k conflict (RAW x) but nothing orders them: a race"


def test_an_array_passed_for_two_parameters_is_named_once_per_edge():
    @gt.graph
    def f(s, a, b):
        add[1, 16, s](a, b)
        add[1, 16, s](b, a)
    g = f.trace(*[A(16)] * 2)
    e = gt.explain(g)
    assert str(e).splitlines()[1] == "  %0 add -> %1 add: RAW/WAR/WAW a"
    assert str(e.why(0, 1)) == "%0 add runs before %1 add: ordered by the edge %0 -> %1 " \
                               "(RAW/WAR/WAW a)"
    assert len(e.edges[0].hazards) == 3      # one per pair of accesses, as found
    assert '  n0 -> n1 [label="RAW/WAR/WAW a", fontsize=9];' in g.to_dot(buffers=True)


def test_stream_order_edges_say_so_with_what_they_carry():
    @gt.graph(deps="streams")
    def f(s, x, y):
        s.launch(K, 1, 1, gt.Out(x))
        s.launch(K, 1, 1, gt.In(x), gt.Out(y))
        s.launch(K, 1, 1, gt.Out(x[0:1]))
    assert str(gt.explain(f, A(16), A(16))).splitlines()[1:] == [
        "  %0 k -> %1 k: stream order (carrying RAW x)",
        "  %1 k -> %2 k: stream order (carrying WAR x[0B:4B])"]


def test_an_opaque_node_is_ordered_after_and_before_everything():
    @gt.graph
    def f(s, x, y):
        s.launch(K, 1, 1, gt.Out(x))
        s.launch(K, 1, 1, gt.Out(y), opaque=True)
    e = gt.explain(f, A(16), A(16))
    assert str(e).splitlines()[1] == \
        "  %0 k -> %1 k: opaque (the second is ordered after and before everything)"
    assert e.edges[0].hazards[0].kinds == (OPAQUE,)


def test_an_opaque_node_of_stream_order_is_said_to_touch_any_memory():
    @gt.graph(deps="streams")
    def f(s, x, y):
        t = s.fork()
        s.launch(K, 1, 1, gt.Out(x))
        t.launch(K, 1, 1, gt.Out(y), opaque=True)
        s.launch(K, 1, 1, gt.Out(x), opaque=True)
    e = gt.explain(f, A(16), A(16))
    assert str(e.why(0, 1)) == ("%0 k and %1 k conflict (opaque (the second may touch any "
                                "memory)) but nothing orders them: a race")
    assert str(e).splitlines()[1] == \
        "  %0 k -> %2 k: stream order (carrying opaque (the second may touch any memory))"


def test_nodes_in_a_loop_body_are_explained_inside_it():
    @gt.graph
    def f(s, x, y, flag):
        s.memset(flag, 1)
        with s.while_loop(gt.cond(flag), max_iterations=3) as body:
            add[1, 16, body](x, y)
            scale[1, 16, body](y, 2.0, x[8:])
    e = gt.explain(f, A(16), A(16), A(1, "int32"))
    assert str(e).splitlines()[1:] == [
        "  %0 memset -> %1 while: RAW flag",
        "  in %1 while body:",
        "    %2 add -> %3 scale: WAR x[32B:64B]; RAW y"]
    assert str(e.why(3, 1)) == "%3 scale lies in %1 while: it runs as part of it"
    assert str(e.why(0, 3)) == ("%0 memset runs before %3 scale (in %1 while): ordered by the "
                                "edge %0 -> %1 (RAW flag)")


def test_a_child_graph_is_named_once_where_its_nodes_are_explained():
    @gt.graph
    def inner(s, x, y):
        add[1, 16, s](x, y)
        scale[1, 16, s](y, 2.0, x)

    @gt.graph
    def f(s, x, y):
        s.child(inner, x, y)
        add[1, 16, s](y, x)
    assert str(gt.explain(f, A(16), A(16))).splitlines()[1:] == [
        "  %0 inner -> %3 add: RAW/WAR/WAW x; RAW y",
        "  in %0 inner:",
        "    %1 add -> %2 scale: WAR x; RAW y"]


def test_a_node_in_a_body_is_answered_with_its_own_accesses():
    @gt.graph
    def f(s, x, y, z, w, flag):
        add[1, 16, s](x, y)                  # %0 reads x, updates y
        add[1, 16, s](y, w)                  # %1
        with s.while_loop(gt.cond(flag), max_iterations=2) as body:   # %2 updates x
            add[1, 16, body](x, z)           # %3 only reads x
            add[1, 16, body](w, x)           # %4 writes x
    e = gt.explain(f, A(16), A(16), A(16), A(16), A(1, "int32"))
    why = e.why(0, 3)
    assert why.ordered and why.hazards == []
    assert str(why) == "%0 add runs before %3 add (in %2 while): ordered through %0 -> %1 -> %2"
    assert [h.kinds for h in e.why(0, 4).hazards] == [("WAR",)]
    assert str(e.why(0, 4)).endswith("they also conflict directly (WAR x), which that path "
                                     "already orders")


def test_a_node_in_a_body_races_only_on_its_own_bytes():
    @gt.graph(deps="streams")
    def f(s, x, y, z, w, flag):
        t = s.fork()
        with s.while_loop(gt.cond(flag), max_iterations=2) as body:   # %0
            add[1, 16, body](x, y)           # %1 updates y
            add[1, 16, body](x, w)           # %2 updates w
        add[1, 16, t](y, z)                  # %3 reads y: races with %1 alone
    e = gt.explain(f, A(16), A(16), A(16), A(16), A(1, "int32"))
    why = e.why(2, 3)
    assert not why.ordered and not why.race and why.hazards == []
    assert str(why) == ("%2 add (in %0 while) and %3 add are independent: their bytes do not "
                        "overlap (%2 add touches x, w; %3 add touches y, z)")
    assert e.why(1, 3).race


def test_two_branches_of_one_node_never_both_run():
    @gt.graph
    def f(s, x, flag):
        with s.if_else(gt.cond(flag)) as (then, otherwise):
            then.memset(x, 1)
            otherwise.memset(x, 2)
    e = gt.explain(f, A(16), A(1, "int32"))
    why = e.why(1, 2)
    assert not why.ordered
    assert str(why) == ("%1 memset and %2 memset lie in different bodies of %0 if: one run "
                        "of it runs one of them, never both")


def test_a_node_that_touches_no_memory_is_independent_of_the_rest():
    ev = object()

    @gt.graph(deps="streams")
    def f(s, x):
        t = s.fork()
        s.launch(K, 1, 1, gt.Out(x))
        t.record(ev)
    why = gt.explain(f, A(16)).why(0, 1)
    assert not why.ordered and not why.race
    assert str(why).endswith("are independent: %1 event_record touches no memory")


def test_a_data_mode_event_record_is_explained_as_following_all_before_it():
    @gt.graph
    def f(s, x, y):
        t = s.fork()
        s.launch(K, 1, 1, gt.Out(x))
        t.record(object())
        t.launch(K, 1, 1, gt.Out(y))
    e = gt.explain(f, A(16), A(16))
    assert "an event record follows everything recorded before it" in str(e)
    assert "bug" not in str(e)
    assert str(e.why(1, 2)).endswith("are independent: %1 event_record touches no memory")
    assert "event record" in f.trace(A(16), A(16)).picture(buffers=True).source


def test_asking_for_a_node_the_graph_lacks_is_an_error():
    e = gt.explain(traced())
    for which in (9, "a", "%x", 1.5):
        try:
            e.why(0, which)
        except KeyError as err:
            assert f"{which!r} is no node of graph step: name one by its index, as the " \
                "listing shows it (4 or '%4', from %0 to %4), or pass the Node" in str(err)
        else:
            raise AssertionError(f"no error for {which!r}")
    assert str(e.why("%0", 1)) == str(e.why(0, "1"))


def test_the_example_index_of_a_missing_node_is_one_the_graph_has():
    @gt.graph
    def one(s, x):
        s.memset(x, 0)
    with pytest.raises(KeyError, match=r"listing shows it \(0 or '%0', from %0 to %0\)"):
        gt.explain(one, A(8)).why(0, 7)


def test_trace_and_explain_take_stream_as_a_call_does():
    @gt.graph
    def one(s, x):
        s.memset(x, 0)
    x = A(8)
    assert str(one.trace(x, stream=None)) == str(one.trace(x))
    assert str(gt.explain(one, x, stream=None)) == str(gt.explain(one, x))


def test_a_node_is_named_by_a_numpy_integer_but_not_by_a_bool():
    e = gt.explain(traced())
    assert str(e.why(np.int64(0), np.intp(3))) == str(e.why(0, 3))
    for which in (True, np.bool_(True)):
        with pytest.raises(KeyError, match="is no node of graph step: name one by its index"):
            e.why(0, which)


def test_asking_for_a_node_of_an_empty_graph_says_it_has_none():
    @gt.graph
    def empty(s, x):
        pass
    with pytest.raises(KeyError) as err:
        gt.explain(empty, A(8)).why(0, 0)   # why
    assert str(err.value) == f"test_explain.py:{line_of(__file__, 'why')}: 0 is no node " \
        "of graph empty: it has no nodes (its function recorded no work)"
    assert isinstance(err.value, gt.GraphtraceError)


def test_the_nodes_of_another_trace_of_the_same_call_are_taken():
    """explain(f, *args) traces again: the Nodes of the graph the user printed
    are the same nodes; a node of another graph is an error saying so."""
    args = (A(1024), A(1024), A(1024), 2.0)
    g, e = step.trace(*args), gt.explain(step, *args)
    assert str(e.why(g.nodes[0], g.nodes[3])) == str(e.why(0, 3))

    @gt.graph
    def other(s, x, y, tmp, a):
        add[4, 256, s](tmp, y)
    try:
        e.why(0, other.trace(*args).nodes[0])
    except KeyError as err:
        assert "is a node of another graph than step explained here" in str(err), str(err)
    else:
        raise AssertionError("no error for another graph's node")


def test_the_tools_take_a_compiled_graph_and_say_what_to_pass_otherwise():
    args = (A(1024), A(1024), A(1024), 2.0)
    compiled = step.compile(*args, backend="sim")
    assert str(gt.explain(compiled)) == str(gt.explain(step, *args))
    assert gt.check(compiled) == []
    for call, phrase in ((lambda: gt.check(step), "gt.check() takes a traced graph, not the "
                          "graph function step itself: gt.check(step.trace(*arguments))"),
                         (lambda: gt.explain(print, 1), "gt.explain() takes a traced graph "
                          "(f.trace(*arguments)) or a compiled one, or a @gt.graph function "
                          "and its arguments, not builtin_function_or_method")):
        try:
            call()
        except gt.ArgumentError as err:
            assert phrase in err.message and err.source[0] == __file__
        else:
            raise AssertionError(phrase)


def test_explanations_and_races_show_their_text_in_a_notebook():
    class Printer:   # IPython's pretty printer, as far as _repr_pretty_ uses it
        def __init__(self):
            self.out = ""

        def text(self, t):
            self.out += t
    e, p = gt.explain(traced()), Printer()
    e._repr_pretty_(p, False)
    assert p.out == str(e) and p.out.startswith("edges of step")


# --- against brute force ------------------------------------------------------
def byte_set(b) -> frozenset:
    """The bytes a recorded view covers, element by element."""
    out = set()
    for idx in itertools.product(*(range(n) for n in b.shape)):
        start = b.ptr + sum(i * s for i, s in zip(idx, b.strides))
        out.update(range(start, start + b.dtype.itemsize))
    return frozenset(out)


def expected_hazards(a, b) -> list:
    """``(kinds, i, j)`` for access i of ``a`` and j of ``b`` that share a byte."""
    if a.opaque or b.opaque:
        return [((OPAQUE,), None, None)]
    out = []
    for (i, (va, ma)), (j, (vb, mb)) in itertools.product(enumerate(a.accesses),
                                                          enumerate(b.accesses)):
        kinds = tuple(k for k, hit in ((RAW, "w" in ma and "r" in mb),
                                       (WAR, "r" in ma and "w" in mb),
                                       (WAW, "w" in ma and "w" in mb)) if hit)
        if kinds and byte_set(va) & byte_set(vb):
            out.append((kinds, i, j))
    return out


def found_hazards(edge) -> list:
    """``(kinds, id of the first view, id of the second)`` of each hazard found (a
    view made twice is one Buffer, so it names the arguments it is for)."""
    return [(h.kinds, None, None) if h.kinds == (OPAQUE,) else
            (h.kinds, id(h.first_view), id(h.second_view)) for h in edge.hazards]


def by_view(a, b, hazards) -> list:
    """``expected_hazards`` with access indices replaced by the ids of their views."""
    return [(k, i, j) if i is None else (k, id(a.accesses[i][0]), id(b.accesses[j][0]))
            for k, i, j in hazards]


def check_explanation(g):
    """Every edge of every graph in ``g`` is explained by exactly the hazards brute
    force finds, within the bytes it names; every pair is ordered as the DAG says,
    by a path of its edges, and an unordered pair does not conflict."""
    e = gt.explain(g)
    graphs = [g] + [r for n in g.walk() for r in n.regions]
    assert sorted((x.first.index, x.second.index) for x in e.edges) == \
        sorted(p for h in graphs for p in h.edges())
    for edge in e.edges:
        want = expected_hazards(edge.first, edge.second)
        assert want, f"edge %{edge.first.index} -> %{edge.second.index} joins nodes " \
                     f"that do not conflict\n{g}"
        assert sorted(found_hazards(edge), key=repr) == \
            sorted(by_view(edge.first, edge.second, want), key=repr), f"{edge}\n{g}"
        for h in edge.hazards:
            if h.kinds != (OPAQUE,):
                shared = byte_set(h.first_view) & byte_set(h.second_view)
                assert shared and h.lo <= min(shared) and max(shared) < h.hi
    for graph in graphs:
        reach = reaches(graph)
        for a, b in itertools.combinations(graph.nodes, 2):
            why = e.why(a, b)
            assert why.ordered == (b.index in reach[a.index]), f"{why}\n{g}"
            if not why.ordered:   # data mode orders every conflict, opaque ones too
                assert expected_hazards(a, b) == [] and not why.race, f"{why}\n{g}"
                assert "independent" in str(why)
            else:
                assert why.path[0] is a and why.path[-1] is b
                assert all(p in q.deps for p, q in zip(why.path, why.path[1:]))


@settings(max_examples=200, deadline=None)
@given(programs, st.sampled_from(["plain", "opaque-sometimes"]))
def test_explanations_agree_with_brute_force_on_random_accesses(prog, flavor):
    opaque = [flavor != "plain" and i % 5 == 3 for i in range(len(prog))]

    @gt.graph
    def f(s):
        for ops, op_opaque in zip(prog, opaque):
            s.launch(K, 1, 1, *[WRAP[m](v) for v, m in ops], opaque=op_opaque)
    check_explanation(f.trace())


@settings(max_examples=60, deadline=None)
@given(cases("views"))
def test_explanations_agree_with_brute_force_on_random_kernel_programs(case):
    world = World(case.seed)
    fn, put = ROUTES[case.route][1](case.prog)
    mapping = case.calls[0][0]
    arrays = [world.array(h) for h in mapping]
    for i, a in enumerate(arrays[N_PARAMS:]):
        put(i, a, False)
    check_explanation(fn.trace(arrays[:N_PARAMS]))


def test_a_strided_view_is_marked_so_in_its_hazard():
    """As the listing shows it: the bytes a strided view spans, not all of which
    it touches, read ``x[0B:52B:strided]``."""
    @gt.graph
    def f(s, x, y):
        add[4, 256, s](x[::2], y)            # reads every other element of x
        scale[4, 256, s](y, 2.0, x[:14:2])   # writes some of them

    said = str(gt.explain(f, A(16), A(8)))
    assert "%0 add -> %1 scale: WAR x[0B:52B:strided]; RAW y" in said, said

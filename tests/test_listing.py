"""``str(graph)`` and ``graph.to_dot()`` as text."""
import functools
import textwrap

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import FakeDeviceArray as A, line_of
from step_kernels import scale

# launches recorded by the compiled path (_speedups.c) and by pure Python
pytestmark = pytest.mark.usefixtures("both_launch_paths")


@cuda.jit
def accumulate(x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] += x[i]


HOST = gt.pinned_empty(1024, np.float32)


@gt.graph
def step(s, x, y, tmp, a):
    scale[4, 256, s](x, a, tmp)                 # scale
    s.launch(accumulate, 4, 256, tmp, y)         # accumulate
    s.copy(HOST, y)                              # copy
    s.memset(x[:512], 0)                         # memset
    s.host(print, gt.In(HOST))                   # host


def test_listing_names_nodes_buffers_accesses_deps_and_lines():
    g = step.trace(A(1024), A(1024), A(1024), 2.0)
    f = __file__
    ln = {k: line_of(f, k) for k in ("scale", "accumulate", "copy", "memset", "host")}
    expected = textwrap.dedent(f"""\
        graph step(x, y, tmp, a)  deps=data  5 nodes, 4 edges
          %0 = kernel scale[4, 256](x, a, tmp)  in(x)  out(tmp)  # test_listing.py:{ln['scale']}
          %1 = kernel accumulate[4, 256](tmp, y)  in(tmp)  inout(y)  after(%0)  # test_listing.py:{ln['accumulate']}
          %2 = memcpy HOST <- y (4096 B)  in(y)  out(HOST)  after(%1)  # test_listing.py:{ln['copy']}
          %3 = memset x[0B:2048B] = 0  out(x[0B:2048B])  after(%0)  # test_listing.py:{ln['memset']}
          %4 = host print(HOST)  in(HOST)  inout(host callbacks)  after(%2)  # test_listing.py:{ln['host']}""")
    assert str(g) == expected


def test_an_array_passed_for_two_parameters_is_listed_once_with_both_modes():
    @gt.graph
    def f(s, a, b):
        s.launch(accumulate, 1, 16, a, b)
        scale[1, 16, s](b, 2.0, a[:8])
    z = A(16)
    lines = str(f.trace(z, z)).splitlines()
    assert "](a, a)  inout(a)  #" in lines[1]
    assert "](a, 2.0, a[0B:32B])  in(a)  out(a[0B:32B])  after(%0)  #" in lines[2]


def test_listing_is_the_same_for_other_addresses():
    a = str(step.trace(A(1024), A(1024), A(1024), 2.0))
    b = str(step.trace(A(1024), A(1024), A(1024), 3.0))
    assert a == b


def test_unnamed_buffers_get_print_time_names_in_order_of_use():
    from graphtrace.arrays import as_buffer
    from graphtrace.ir import Namer
    a, b = as_buffer(A(16)), as_buffer(A(16))
    namer = Namer()
    assert [namer.buffer(v) for v in (b, a, b)] == ["%b0", "%b1", "%b0"]


def test_arrays_in_a_closure_list_are_named_by_path():
    hidden = [A(16), A(16)]

    @gt.graph
    def f(s):
        s.memset(hidden[1], 0)
        s.memset(hidden[0], 0)
    lines = str(f.trace()).splitlines()[1:]
    assert [ln.split("  ")[1] for ln in lines] == [
        "%0 = memset hidden[1] = 0", "%1 = memset hidden[0] = 0"]


def test_nested_arguments_are_named_by_path():
    @gt.graph
    def f(s, bufs, cfg):
        s.memset(bufs[1], 0)
        s.memset(cfg["out"], cfg["v"])
    g = f.trace([A(8), A(8)], {"out": A(8), "v": 1.5})
    assert "memset bufs[1] = 0" in str(g)
    assert "memset cfg['out'] = cfg['v']" in str(g)
    assert g.params == ["bufs", "cfg"]


def test_streams_and_opaque_are_shown():
    @gt.graph(deps="streams")
    def f(s, x):
        t = s.fork()
        t.launch(gt.kernel(scale, "in, in, out", opaque=True), 1, 1, x, 1.0, x)
    line = str(f.trace(A(8))).splitlines()[1]
    assert line.split("  #")[0] == \
        "  %0 = kernel scale[1, 1](x, 1.0, x)  inout(x)  opaque  stream 1"


def test_to_dot_has_one_box_per_node_and_the_edges():
    g = step.trace(A(1024), A(1024), A(1024), 2.0)
    dot = g.to_dot()
    assert dot.startswith('digraph "step" {')
    assert dot.count("[label=") == 5
    for a, b in g.edges():
        assert f"n{a} -> n{b};" in dot
    assert "%1 kernel accumulate[4, 256](tmp, y)\\ntest_listing.py:" in dot


def report(h, tag="x"):
    pass


class Recorder:
    def __call__(self, h):
        pass


def test_a_partial_or_callable_object_callback_is_named_without_an_address():
    """Listings are compared as text: a host callback is named by its function (a
    partial's) or its class, never by a repr holding an address."""
    @gt.graph
    def f(s, h):
        s.host(functools.partial(report, tag="p"), h)
        s.host(Recorder(), h)
    g = f.trace(gt.pinned_empty(8))
    lines = [ln.split("  ")[1] for ln in str(g).splitlines()[1:]]
    assert lines == ["%0 = host report(h, tag='p')", "%1 = host Recorder.__call__(h)"]
    assert "%1 host Recorder.__call__(h)\\n" in g.to_dot()
    assert str(gt.explain(g)).splitlines()[1] == \
        "  %0 report -> %1 Recorder.__call__: RAW/WAR/WAW h; host callbacks run in the order " \
        "recorded"


def test_a_partial_callback_is_listed_with_the_arguments_it_binds():
    """``s.host(partial(print, "tag"), h)`` runs ``print("tag", h)``: it was listed
    as ``host print(h)``, hiding what the partial passes."""
    inner = functools.partial(report, 2.5)

    @gt.graph
    def f(s, h):
        s.host(functools.partial(print, "tag"), h)
        s.host(functools.partial(inner, sep=";", end=None), h)        # a partial's partial
        s.host(functools.partial(report, "x" * 60, np.float32(0.5), HOST), h)
    g = f.trace(gt.pinned_empty(8))
    lines = [ln.split("  ")[1] for ln in str(g).splitlines()[1:]]
    assert lines == ["%0 = host print('tag', h)",
                     "%1 = host report(2.5, h, sep=';', end=None)",
                     "%2 = host report('" + "x" * 36 + "..., 0.5, <ndarray>, h)"], lines
    assert "%0 host print('tag', h)" in g.picture().source


def test_a_child_graph_lists_the_arguments_it_was_given_by_keyword():
    @gt.graph
    def sub(s, x, a=1.0, *, y=None):
        s.memset(x, a)
        if y is not None:
            s.memset(y, a)

    @gt.graph
    def f(s, x, y):
        s.child(sub, x, a=2.0, y=y)
        s.child(sub, x[1:], 3.0)
    g = f.trace(A(8), A(8))
    lines = [ln.split("  ")[1] for ln in str(g).splitlines() if "= child" in ln]
    assert lines == ["%0 = child sub(x, a=2.0, y=y)", "%3 = child sub(x[4B:32B], 3.0)"], lines
    assert "sub(x, a=2.0, y=y)" in g.to_dot()


def test_counts_of_one_are_singular():
    @gt.graph
    def sub(s, x):
        s.memset(x, 0)

    @gt.graph
    def f(s, x):
        s.child(sub, x)
        s.memset(x, 1)
    g = f.trace(A(8))
    assert str(g).splitlines()[0].endswith("  2 nodes, 1 edge")
    assert repr(sub.trace(A(8))) == "<graphtrace.Graph sub: 1 node>"
    assert "deps=data  2 nodes, 1 edge" in g.to_dot()
    e = gt.explain(g)
    assert str(e).endswith("in %0 sub: no edges (1 node)")
    assert repr(e) == "<graphtrace.Explanation of f: 1 edge>"


def test_a_node_repr_names_its_predecessors_and_stays_one_line():
    """A node's repr is its listing line: a ladder of diamonds, where the paths to
    a node double at every rung, gives reprs as short as the listing's lines."""
    @gt.graph
    def ladder(s, x, ps, qs, zs):
        prev = x
        for p, q, z in zip(ps, qs, zs):
            s.launch(accumulate, 1, 8, prev, p)
            s.launch(accumulate, 1, 8, prev, q)
            s.launch(accumulate, 1, 8, p, z)
            s.launch(accumulate, 1, 8, q, z)
            prev = z
    arrays = [[A(8) for _ in range(16)] for _ in range(3)]
    g = ladder.trace(A(8), *arrays)
    last = g.nodes[-1]
    assert repr(last) == (f"<Node %{last.index} = kernel accumulate[1, 8](qs[15], zs[15])  "
                          f"after(%{last.index - 2}, %{last.index - 1})  "
                          f"# test_listing.py:{last.source[1]}>")
    assert len(repr(g.nodes)) < 120 * len(g.nodes)

"""Pictures of graphs: the DOT text (shapes and colours by kind, labels, clusters
for regions, edge labels), files rendered by Graphviz, Jupyter's view, and the
error that says what to install."""
import re
import shutil
import sys

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace import picture
from helpers import FakeDeviceArray as A, any_kernel, line_of

K = any_kernel()
needs_dot = pytest.mark.skipif(
    shutil.which("dot") is None,
    reason="Graphviz's dot program is not installed (apt-get install graphviz); "
           ".ci/run installs it, so CI runs these")
pytest.importorskip("graphviz", reason="the graphviz Python package is in the test extra")


@cuda.jit
def scale(x, a, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i]


HOST = gt.pinned_empty(64, np.float32)


def report(h):
    pass


@gt.graph
def step(s, x, y, flag):
    scale[2, 32, s](x, 2.0, y)                          # kernel
    s.copy(HOST, y)                                     # copy
    s.memset(x, 0)                                      # memset
    s.host(report, gt.In(HOST))                         # host
    with s.while_loop(gt.cond(flag), max_iterations=4) as body:   # loop
        scale[2, 32, body](y, 0.5, x)
        scale[2, 32, body](x, 0.5, y)


def dot_of(**kw):
    return step.trace(A(64), A(64), A(1, "int32")).to_dot(**kw)


def line(dot, node):
    return next(ln.strip() for ln in dot.splitlines() if ln.strip().startswith(f"{node} ["))


def test_nodes_are_drawn_by_kind_with_name_launch_shape_and_line():
    dot = dot_of()
    at = {k: line_of(__file__, k) for k in ("kernel", "copy", "memset", "host", "loop")}
    assert line(dot, "n0") == (f'n0 [label="%0 kernel scale[2, 32](x, 2.0, y)\\n'
                               f'test_picture.py:{at["kernel"]}", shape=box, style="filled", '
                               'fillcolor="#cfe2f3"];')
    assert f'label="%1 memcpy HOST <- y (256 B)\\ntest_picture.py:{at["copy"]}", ' \
           'shape=parallelogram' in line(dot, "n1")
    assert 'shape=box, style="filled,rounded", fillcolor="#fff2cc"' in line(dot, "n2")
    assert f'%3 host report(HOST)\\ntest_picture.py:{at["host"]}", shape=hexagon' \
        in line(dot, "n3")
    assert f'%4 while cond(flag) != 0, max_iterations=4\\ntest_picture.py:{at["loop"]}", ' \
           'shape=invhouse' in line(dot, "n4")


def test_a_loop_is_a_cluster_with_its_head_body_and_end():
    dot = dot_of()
    head = dot.index('subgraph "cluster_4" {')
    body = dot.index('subgraph "cluster_4_0" {', head)
    assert 'label="loop on the device"' in dot[head:body]
    assert "n4_end [shape=point" in dot[head:body]
    assert dot.index("n5 [label=", body) < dot.index("n6 [label=", body)
    for edge in ("n4 -> n5 [style=dashed", "n6 -> n4_end [style=dashed",
                 'n4_end -> n4 [style=dashed, constraint=false, label="again"'):
        assert edge in dot
    assert "  n2 -> n4;" in dot          # into the loop: its head (the test runs first)
    assert "    n5 -> n6;" in dot        # inside the body: RAW x
    assert "n5 -> n4_end" not in dot     # only the last node of the body leads to its end


def test_later_nodes_wait_for_the_end_of_a_structured_node():
    @gt.graph
    def f(s, x, flag):
        with s.if_else(gt.cond(flag)) as (then, otherwise):
            then.memset(x, 1)
        s.memset(x, 2)
    dot = f.trace(A(8), A(1, "int32")).to_dot()
    assert "n0_end -> n2;" in dot
    assert 'subgraph "cluster_0_1" {' in dot and 'label="%0 else";' in dot
    assert 'n0_1_empty [label="(empty)"' in dot      # an empty branch still shows
    assert "n0 -> n0_1_empty" in dot and "n0_1_empty -> n0_end" in dot


def test_a_child_graph_and_a_captured_region_are_clusters():
    @gt.graph
    def inner(s, x):
        s.memset(x, 1)

    def lib(x):
        x[...] = 2

    @gt.graph
    def f(s, x, y):
        s.child(inner, x)
        s.captured(lib, y, writes=[y])
    dot = f.trace(A(8), A(8)).to_dot()
    assert 'label="child graph"' in dot and 'label="%0 inner";' in dot
    assert 'label="captured region (library code)"' in dot
    assert line(dot, "n2").startswith('n2 [label="%2 captured')
    assert 'lib(y)' in line(dot, "n2") and "shape=box3d" in line(dot, "n2")
    assert "n2 -> n2_end [style=dashed, arrowhead=none];" in dot


def test_an_opaque_node_has_a_red_border():
    @gt.graph
    def f(s, x):
        s.launch(K, 1, 1, x, opaque=True)
    assert 'opaque\\n' in line(f.trace(A(8)).to_dot(), "n0")
    assert 'color="#cc0000", penwidth=2' in line(f.trace(A(8)).to_dot(), "n0")


def test_edges_are_labelled_with_buffer_and_hazard_on_request():
    plain, labelled = dot_of(), dot_of(buffers=True)
    assert "  n0 -> n1;" in plain and "label=\"RAW" not in plain
    assert '  n0 -> n1 [label="RAW y", fontsize=9];' in labelled
    assert '  n0 -> n2 [label="WAR x", fontsize=9];' in labelled
    g = step.trace(A(64), A(64), A(1, "int32"))
    for edge in gt.explain(g).edges:   # one label per edge, from the same hazards
        first = f"n{edge.first.index}_end" if edge.first.regions else f"n{edge.first.index}"
        assert re.search(rf"{first} -> n{edge.second.index} \[label=\"[^\"]+\"", labelled)


def test_stream_order_edges_say_stream():
    @gt.graph(deps="streams")
    def f(s, x, y):
        s.memset(x, 0)
        s.memset(y, 0)
    assert '  n0 -> n1 [label="stream", fontsize=9];' in f.trace(A(8), A(8)).to_dot(buffers=True)


def test_labels_quote_what_dot_would_misread():
    assert picture._quote('a "b"\\c\nd') == '"a \\"b\\"\\\\c\\nd"'


@needs_dot
def test_pictures_are_written_as_svg_png_and_dot(tmp_path):
    p = step.trace(A(64), A(64), A(1, "int32")).picture(buffers=True)
    svg = open(p.save(tmp_path / "step.svg")).read()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert "%0 kernel scale[2, 32](x, 2.0, y)" in svg and "RAW y" in svg
    assert (tmp_path / "step.png").exists() is False
    p.save(tmp_path / "step.png")
    assert (tmp_path / "step.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    p.save(tmp_path / "step.dot")
    assert (tmp_path / "step.dot").read_text() == p.source


@needs_dot
def test_jupyter_shows_the_listing_and_the_picture():
    g = step.trace(A(64), A(64), A(1, "int32"))
    shown = g._repr_mimebundle_()
    assert shown["text/plain"] == str(g)
    assert "<svg" in shown["image/svg+xml"] and "%4 while" in shown["image/svg+xml"]
    assert "<svg" in g.picture()._repr_svg_()


def test_a_graph_too_big_to_draw_at_once_shows_its_listing(monkeypatch):
    monkeypatch.setattr(picture, "AUTO_LIMIT", 3)
    g = step.trace(A(64), A(64), A(1, "int32"))
    shown = g._repr_mimebundle_()
    assert set(shown) == {"text/plain"}
    assert shown["text/plain"].endswith(
        "(7 nodes: too many to draw at once; graph.picture().save('graph.svg') draws them)")


def test_without_the_graphviz_package_the_error_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "graphviz", None)    # import graphviz fails
    p = step.trace(A(64), A(64), A(1, "int32")).picture()
    with pytest.raises(gt.MissingDependencyError) as e:
        p.save(tmp_path / "step.svg")                      # save svg
    assert "needs the graphviz Python package" in str(e.value)
    for command in ("pip install graphviz", "apt-get install graphviz",
                    "conda install -c conda-forge python-graphviz graphviz"):
        assert command in str(e.value)
    assert e.value.source[1] == line_of(__file__, "save svg")
    p.save(tmp_path / "step.dot")                          # the text needs nothing
    shown = step.trace(A(64), A(64), A(1, "int32"))._repr_mimebundle_()
    assert set(shown) == {"text/plain"} and "(no picture: drawing a graph" in \
        shown["text/plain"]


def test_without_the_dot_program_the_error_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))               # no dot on it
    p = step.trace(A(64), A(64), A(1, "int32")).picture()
    with pytest.raises(gt.MissingDependencyError) as e:
        p.svg()                                             # svg
    assert "needs Graphviz's dot program, which is not on PATH" in str(e.value)
    assert "apt-get install graphviz" in str(e.value)
    assert e.value.source[1] == line_of(__file__, "svg")


def test_without_the_dot_program_jupyter_shows_a_picture_as_text(monkeypatch, tmp_path):
    """``g.picture()`` as a cell's last expression raised inside ``_repr_svg_``
    (IPython printed a formatter's traceback), saying to install the graphviz
    Python package too, which was there."""
    monkeypatch.setenv("PATH", str(tmp_path))               # no dot on it
    p = step.trace(A(64), A(64), A(1, "int32")).picture()
    assert p._repr_svg_() is None
    shown = p._repr_mimebundle_()
    assert set(shown) == {"text/plain"}
    assert shown["text/plain"].startswith("<graphtrace.Picture of step>\n(no picture: "
                                          "drawing a graph as svg needs Graphviz's dot "
                                          "program, which is not on PATH: install Graphviz's "
                                          "dot program (the graphviz Python package is "
                                          "installed): apt-get install graphviz"), shown
    assert "pip install" not in shown["text/plain"]
    formatter = pytest.importorskip("IPython.core.formatters")
    data, _ = formatter.DisplayFormatter().format(p)      # as Jupyter asks for it
    assert set(data) == {"text/plain"} and "(no picture: " in data["text/plain"]


@needs_dot
def test_with_the_dot_program_jupyter_shows_a_picture_as_svg():
    shown = step.trace(A(64), A(64), A(1, "int32")).picture()._repr_mimebundle_()
    assert shown["text/plain"] == "<graphtrace.Picture of step>"
    assert "<svg" in shown["image/svg+xml"]


def test_a_path_without_a_suffix_is_refused(tmp_path):
    with pytest.raises(ValueError, match="has no suffix"):
        step.trace(A(64), A(64), A(1, "int32")).picture().save(tmp_path / "step")


@needs_dot
def test_a_suffix_graphviz_has_no_format_for_is_refused_naming_formats_it_has(tmp_path):
    with pytest.raises(ValueError, match="Graphviz writes no format 'xyz'.*step.svg"):
        step.trace(A(64), A(64), A(1, "int32")).picture().save(tmp_path / "step.xyz")
    assert not (tmp_path / "step.xyz").exists()

"""``f.profile``: on the simulator the structure (critical path by node count); the
table, critical path, schedule and timeline from node times (the GPU measures
them: tests/gpu/test_profile_gpu.py)."""
import sys
import textwrap

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace.profile import Profile
from step_kernels import add, scale


@gt.graph
def diamond(s, x, y, z, w):
    scale[1, 8, s](x, 2.0, y)      # %0
    scale[1, 8, s](y, 3.0, z)      # %1 after %0
    add[1, 8, s](y, w)             # %2 after %0, beside %1
    add[1, 8, s](w, z)             # %3 after %1 and %2
    s.memset(x, 0)                 # %4 after %0 only (WAR on x)


def arrays():
    return (cuda.to_device(np.arange(8.0)), cuda.to_device(np.zeros(8)),
            cuda.to_device(np.zeros(8)), cuda.to_device(np.ones(8)))


def test_the_simulator_reports_the_structure_and_runs_the_call():
    x, y, z, w = arrays()
    p = diamond.profile(x, y, z, w)
    assert str(p) == textwrap.dedent("""\
        profile of diamond on the simulator: 5 nodes, 5 edges; no times (profile on a GPU for them)
          node                                    critical
          %0 kernel scale[1, 8](x, 2.0, y)        *
          %1 kernel scale[1, 8](y, 3.0, z)        *
          %2 kernel add[1, 8](y, w)
          %3 kernel add[1, 8](w, z)               *
          %4 memset x = 0
        critical path by node count: 3 of 5 nodes (%0 -> %1 -> %3); up to 3 nodes at once""")
    assert [t.us for t in p.nodes] == [None] * 5 and p.graph_us is None and p.sum_us is None
    assert [n.index for n in p.critical_path] == [0, 1, 3]
    y0 = 2 * np.arange(8.0)      # the arrays end as one call leaves them
    assert np.array_equal(z.copy_to_host(), 3 * y0 + (1 + y0))
    assert np.array_equal(x.copy_to_host(), np.zeros(8))


def test_profile_and_compile_take_stream_as_a_call_does():
    x, y, z, w = arrays()
    p = diamond.profile(x, y, z, w, stream=None)
    assert [n.index for n in p.critical_path] == [0, 1, 3]
    handle = diamond.compile(*arrays(), stream=None)
    assert handle.node_count == 5


def times(**us):
    return {int(k[1:]): v for k, v in us.items()}


def test_node_times_make_the_table_the_critical_path_and_the_totals():
    g = diamond.trace(*arrays())
    p = Profile(g, "gpu", times(n0=2.0, n1=1.0, n2=6.0, n3=1.0, n4=0.5), graph_us=9.0,
                device="GPU X", repeat=7)
    assert [n.index for n in p.critical_path] == [0, 2, 3]   # by time, not by node count
    assert p.sum_us == 10.5 and p.critical_us == 9.0
    assert [t.critical for t in p.nodes] == [True, False, True, True, False]
    assert str(p) == textwrap.dedent("""\
        profile of diamond on GPU X: 5 nodes, 5 edges; median of 7 runs
          node                                            us   share  critical
          %0 kernel scale[1, 8](x, 2.0, y)              2.00   19.0%  *
          %1 kernel scale[1, 8](y, 3.0, z)              1.00    9.5%
          %2 kernel add[1, 8](y, w)                     6.00   57.1%  *
          %3 kernel add[1, 8](w, z)                     1.00    9.5%  *
          %4 memset x = 0                               0.50    4.8%
        sum of node times 10.50 us; critical path 9.00 us (%0 -> %2 -> %3); whole graph 9.00 us
        parallelism 1.17 on average (sum / critical path), up to 3 at once; whole graph / sum 0.86""")


def test_the_schedule_starts_each_node_when_its_predecessors_end():
    g = diamond.trace(*arrays())
    p = Profile(g, "gpu", times(n0=2.0, n1=1.0, n2=6.0, n3=1.0, n4=0.5), 9.0)
    assert [(n.index, start, end, lane) for n, start, end, lane in p.schedule()] == [
        (0, 0.0, 2.0, 0), (1, 2.0, 3.0, 0), (2, 2.0, 8.0, 1), (3, 8.0, 9.0, 0),
        (4, 2.0, 2.5, 2)]


def test_a_long_description_is_cut_in_the_table():
    @gt.graph
    def f(s, first_long_argument_name, second_long_argument_name):
        add[1, 8, s](first_long_argument_name, second_long_argument_name)
    line = str(f.profile(*arrays()[:2])).splitlines()[2]
    assert line == "  %0 kernel add[1, 8](first_long_argu...  *"


def test_an_empty_graph_has_an_empty_profile():
    @gt.graph
    def f(s, x):
        pass
    p = f.profile(arrays()[0])
    assert p.critical_path == [] and p.nodes == []
    assert str(p).endswith("critical path by node count: 0 of 0 nodes (); up to 0 nodes at once")


def test_repeat_must_be_a_positive_int():
    with pytest.raises(ValueError, match="repeat must be a positive int, not 0"):
        diamond.profile(*arrays(), repeat=0)


def test_a_parameter_named_repeat_is_the_functions_own():
    @gt.graph(static="repeat")
    def f(s, x, repeat):
        for _ in range(repeat):
            add[1, 8, s](x, x)
    assert len(f.profile(arrays()[0], repeat=3).nodes) == 3


def test_a_method_is_profiled_with_its_instance():
    class Model:
        def __init__(self):
            self.w = cuda.to_device(np.ones(8))

        @gt.graph
        def step(self, s, x):
            add[1, 8, s](self.w, x)
    m, x = Model(), cuda.to_device(np.zeros(8))
    p = m.step.profile(x)
    assert [n.index for n in p.critical_path] == [0]
    assert np.array_equal(x.copy_to_host(), np.ones(8))


def test_a_timeline_without_matplotlib_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    p = diamond.profile(*arrays())
    with pytest.raises(gt.MissingDependencyError,
                       match="the timeline picture needs matplotlib .*pip install matplotlib"):
        p.timeline()


def test_a_timeline_draws_a_bar_per_node_and_the_whole_graph(tmp_path):
    pytest.importorskip("matplotlib")
    g = diamond.trace(*arrays())
    p = Profile(g, "gpu", times(n0=2.0, n1=1.0, n2=6.0, n3=1.0, n4=0.5), 9.0)
    t = p.timeline(tmp_path / "t.png")
    assert (tmp_path / "t.png").read_bytes()[:4] == b"\x89PNG"
    ax = t.figure.axes[0]
    assert len(ax.patches) == 5 and ax.get_ylim() == (2.5, -0.5)
    assert [round(b.get_width(), 3) for b in ax.patches] == [2.0, 1.0, 6.0, 1.0, 0.5]
    assert t._repr_png_()[:4] == b"\x89PNG"
    sim = diamond.profile(*arrays()).timeline()
    assert "no times on the simulator" in sim.figure.axes[0].get_xlabel()


def test_the_schedule_needs_no_more_lanes_than_nodes_run_at_once():
    """Lanes are given by start time: a node recorded last that starts first takes
    a lane free by then, and "up to N at once" is the most nodes that overlap."""
    @gt.graph(backend="sim")
    def f(s, a, b, c, d, e):
        add[1, 8, s](e, a)          # [0, 1)
        scale[1, 8, s](a, 2.0, b)   # [1, 2) after the first
        scale[1, 8, s](a, 3.0, c)   # [1, 2) after the first
        add[1, 8, s](e, d)          # [0, 1) beside the first
    g = f.trace(*(cuda.to_device(np.zeros(8)) for _ in range(5)))
    p = Profile(g, "gpu", times(n0=1.0, n1=1.0, n2=1.0, n3=1.0), 2.0)
    assert [(n.index, start, lane) for n, start, _, lane in p.schedule()] == [
        (0, 0.0, 0), (1, 1.0, 0), (2, 1.0, 1), (3, 0.0, 1)]
    assert "up to 2 at once" in str(p)


def test_a_graph_of_one_node_runs_one_node_at_once():
    @gt.graph
    def f(s, x):
        s.memset(x, 0)
    p = f.profile(arrays()[0])
    assert str(p).endswith("critical path by node count: 1 of 1 nodes (%0); up to 1 node at once")

"""examples/tour.ipynb runs in a real Jupyter kernel on the simulator, and is kept
in the repository without outputs."""
import os
import shutil

import pytest

nbformat = pytest.importorskip("nbformat", reason="nbformat is in the test extra")
nbclient = pytest.importorskip("nbclient", reason="nbclient is in the test extra")
pytest.importorskip("ipykernel", reason="ipykernel is in the test extra")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOUR = os.path.join(ROOT, "examples", "tour.ipynb")


def test_the_tour_is_kept_without_outputs():
    nb = nbformat.read(TOUR, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.outputs == [] and c.execution_count is None for c in code)


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The tour, run top to bottom in a Python kernel on numba's simulator (set in the
    kernel's environment before it imports numba.cuda), as a reader would run it."""
    nb = nbformat.read(TOUR, as_version=4)
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1", "GRAPHTRACE_BACKEND": "sim",
           "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    folder = tmp_path_factory.mktemp("tour")
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(folder)}})
    with client.setup_kernel(env=env):
        for i, cell in enumerate(nb.cells):
            client.execute_cell(cell, i)      # a cell that raises fails the test here
    return nb


def outputs(nb, starts):
    """The outputs of the code cell whose source is ``starts``, or starts with it."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    cell = next((c for c in code if c.source == starts), None) or \
        next(c for c in code if c.source.startswith(starts))
    return cell.outputs


def text(nb, starts, stream="stdout"):
    return "".join(o.text for o in outputs(nb, starts)
                   if o.output_type == "stream" and o.name == stream)


def test_the_tour_runs_on_the_simulator(executed):
    assert text(executed, "import numpy") == "backend: sim\n"
    listing = text(executed, "g = step.trace").splitlines()
    assert listing[0] == "graph step(x, y, tmp, a, host)  deps=data  5 nodes, 4 edges"
    assert listing[2].startswith("  %1 = kernel add[8, 128](tmp, y)  in(tmp)  inout(y)  "
                                 "after(%0)  # ")
    assert text(executed, "step(x, y, tmp, 2.0, pinned)") == "True True 1\n"
    assert text(executed, "x2, y2 =") == \
        "True CacheInfo(hits=1, misses=1, maxsize=32, currsize=1)\n"


def test_the_tour_shows_the_picture_of_the_graph(executed):
    (shown,) = outputs(executed, "g")
    data = shown["data"]
    assert data["text/plain"].startswith("graph step(x, y, tmp, a, host)")
    (labelled,) = outputs(executed, "g.picture(buffers=True)")
    if shutil.which("dot") is None:
        assert "(no picture: drawing a graph as svg needs" in data["text/plain"]
        pytest.skip("Graphviz's dot is not installed (apt-get install graphviz); .ci/run "
                    "installs it, so CI checks the pictures")
    assert "<svg" in data["image/svg+xml"] and "%4 host report(host)" in data["image/svg+xml"]
    assert "RAW tmp" in labelled["data"]["image/svg+xml"]


def test_the_tour_explains_checks_and_profiles(executed):
    explained = text(executed, "e = gt.explain(g)")
    assert "  %0 scale -> %1 add: RAW tmp\n" in explained
    assert "%1 add and %2 memset are independent: their bytes do not overlap" in explained
    assert "%0 scale runs before %3 memcpy: ordered through %0 -> %1 -> %3" in explained
    checked = text(executed, "print(gt.check(g))").splitlines()
    assert checked[0] == "[]"
    assert "touch tmp / tmp, one writing, but nothing orders them" in checked[1]
    profiled = text(executed, "p = step.profile")
    assert profiled.startswith("profile of step on the simulator: 5 nodes, 4 edges")
    assert "critical path by node count: 4 of 5 nodes (%0 -> %1 -> %3 -> %4)" in profiled
    timeline = outputs(executed, "try:")
    assert any(o.output_type == "display_data" and "image/png" in o["data"]
               for o in timeline) or "needs matplotlib" in text(executed, "try:")


def test_the_tour_logs_why_it_traces_again(executed):
    logged = text(executed, "import logging", "stderr")
    assert "graphtrace: trace step: the signature differs from the closest cached one: " \
           "x: shape (1000,) -> (2000,)" in logged
    assert "graphtrace: built step for sim: 5 nodes, 4 edges" in logged

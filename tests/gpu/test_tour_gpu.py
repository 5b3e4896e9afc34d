"""examples/tour.ipynb in a Jupyter kernel on the GPU: the profile has times."""
import os

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_tour_runs_on_the_gpu(tmp_path):
    nb = nbformat.read(os.path.join(ROOT, "examples", "tour.ipynb"), as_version=4)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env.update(GRAPHTRACE_BACKEND="gpu",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    with client.setup_kernel(env=env):
        for i, cell in enumerate(nb.cells):
            client.execute_cell(cell, i)
    printed = {c.source.splitlines()[0]: "".join(o.get("text", "") for o in c.outputs)
               for c in nb.cells if c.cell_type == "code"}
    assert printed["import numpy as np"] == "backend: gpu\n"
    assert printed["step(x, y, tmp, 2.0, pinned)"] == "True True 1\n"
    profile = printed["p = step.profile(x, y, tmp, 2.0, pinned)"]
    assert profile.startswith("profile of step on ") and "median of 10 runs" in profile
    assert "whole graph" in profile and "parallelism" in profile

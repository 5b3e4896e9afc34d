"""The examples run to the end on the simulator (tools/gpu_check.py runs them on a GPU),
each in a folder of its own: what they write stays there."""
import functools
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = sorted(f for f in os.listdir(os.path.join(ROOT, "examples")) if f.endswith(".py"))
_FOLDER = tempfile.mkdtemp(prefix="graphtrace-examples-")


@functools.cache
def run(name):
    """``(completed process, the folder it ran in)`` of one example on the simulator."""
    folder = os.path.join(_FOLDER, name[:-3])
    os.makedirs(folder)
    env = {**os.environ, "GRAPHTRACE_BACKEND": "sim", "NUMBA_ENABLE_CUDASIM": "1",
           "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, os.path.join(ROOT, "examples", name)], env=env,
                          cwd=folder, capture_output=True, text=True, timeout=300)
    return done, folder


def test_every_example_is_run():
    assert {"quickstart.py", "heat.py", "cg.py", "train_step.py", "pipeline.py",
            "progress.py"} <= set(EXAMPLES)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_runs_on_the_simulator(name):
    done, _ = run(name)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "results match numpy" in done.stdout


def test_the_readme_shows_the_listing_the_quickstart_prints():
    done, _ = run("quickstart.py")
    listing = [line for line in done.stdout.splitlines()
               if line.startswith(("graph step(", "  %"))]
    readme = open(os.path.join(ROOT, "README.md")).read()
    shown = readme.split("## Quickstart", 1)[1].split("The memset waits", 1)[0]
    assert len(listing) == 6 and [line[4:] for line in shown.splitlines()
                                  if line.startswith("    ")] == listing


def test_the_pipeline_finds_one_chain_per_channel_and_draws_them():
    done, folder = run("pipeline.py")
    assert "4 channels, one chain each: nothing orders %0, %4, %8, %12" in done.stdout
    assert "%0 gain and %4 gain are independent: their bytes do not overlap" in done.stdout
    assert "critical path by node count: 4 of 17 nodes (%0 -> %1 -> %3 -> %16); up to 8 " \
           "nodes at once" in done.stdout
    svg = os.path.join(folder, "pipeline.svg")
    if shutil.which("dot") is None:
        assert "no picture: drawing a graph as svg needs" in done.stdout
        pytest.skip("Graphviz's dot is not installed (apt-get install graphviz): the "
                    "example said so; .ci/run installs it, so CI checks the picture")
    assert "wrote pipeline.svg" in done.stdout
    text = open(svg).read()
    assert "<svg" in text and text.count("kernel gain[") == 4 and "RAW energies" in text


def test_progress_is_reported_in_order_by_host_callbacks_on_each_call():
    done, _ = run("progress.py")
    sweeps = [line.split()[1].rstrip(":") for line in done.stdout.splitlines()
              if line.startswith("  sweep ")]
    assert sweeps == ["10/40", "20/40", "30/40", "40/40"] * 2

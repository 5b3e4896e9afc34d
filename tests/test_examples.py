"""The examples run to the end on the simulator (tools/gpu_check.py runs them on a GPU)."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = sorted(f for f in os.listdir(os.path.join(ROOT, "examples")) if f.endswith(".py"))


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_runs_on_the_simulator(name):
    env = {**os.environ, "GRAPHTRACE_BACKEND": "sim", "NUMBA_ENABLE_CUDASIM": "1",
           "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, os.path.join(ROOT, "examples", name)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "results match numpy" in done.stdout

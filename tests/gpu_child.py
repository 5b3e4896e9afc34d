"""Running GPU tests in a child process, off numba's simulator.

The CPU tests turn numba's CUDA simulator on for their whole process (numba
decides when ``numba.cuda`` is first imported), so on a machine with a GPU a
run of the whole suite hands ``tests/gpu`` to a child process that uses the
GPU (see ``tests/gpu/conftest.py``).
"""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

KINDS = ("passed", "failed", "errors", "skipped")


def run_gpu_tests(nodeids, rootdir) -> tuple:
    """``(exit status, counts, output)`` of ``pytest nodeids`` in a child process
    on the GPU backend, with numba's simulator off."""
    env = {**os.environ, "GRAPHTRACE_BACKEND": "gpu"}
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    with tempfile.TemporaryDirectory() as tmp:
        xml = os.path.join(tmp, "gpu.xml")
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfEs", "-p",
                               "no:cacheprovider", f"--junitxml={xml}", *nodeids],
                              cwd=rootdir, env=env, capture_output=True, text=True)
        counts = junit_counts(xml)
    return proc.returncode, counts, proc.stdout + proc.stderr


def junit_counts(path) -> dict:
    """Tests per outcome from pytest's JUnit XML report (zeros if there is none)."""
    try:
        suite = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return dict.fromkeys(KINDS, 0)
    if suite.tag == "testsuites":
        suite = suite[0]
    n = {k: int(suite.get(k, 0)) for k in ("tests", "failures", "errors", "skipped")}
    return {"passed": n["tests"] - n["failures"] - n["errors"] - n["skipped"],
            "failed": n["failures"], "errors": n["errors"], "skipped": n["skipped"]}


def describe(counts: dict) -> str:
    """``"12 passed, 1 skipped"``: pytest's words, zeros left out (but passed)."""
    return ", ".join(f"{counts[k]} {k}" for k in KINDS if counts[k] or k == "passed")

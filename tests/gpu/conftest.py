"""GPU tests: run on the GPU wherever there is one, skipped cleanly elsewhere.

In a run of the whole suite (``pytest tests``) numba's simulator is on for
the CPU tests; there, on a machine with a GPU, the GPU tests run in a child
process (``tests/gpu_child.py``), reported as the one test
``tests/gpu::gpu_tests_in_a_child_process``. The terminal summary says
what ran where.
"""
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))  # helpers, CPU tests' generators

from graphtrace import _driver  # noqa: E402
from gpu_child import describe, run_gpu_tests  # noqa: E402

GPU_DIR = Path(__file__).parent
_WHERE = pytest.StashKey[str]()
_CPU_TOO = pytest.StashKey[bool]()   # CPU tests in this run, on numba's simulator


def _why_not():
    return None if _driver.available() else "no CUDA driver or no GPU device"


def _simulated() -> bool:
    return os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


def _is_gpu_test(item) -> bool:
    return GPU_DIR in Path(item.path).parents


def _device_name() -> str:
    try:
        from cuda.core import Device
        return Device(0).name
    except Exception:  # noqa: BLE001  (a name for the summary only)
        return "GPU 0"


class GpuTestsFailed(Exception):
    """The child's GPU tests failed; the message is its output."""


class GpuTests(pytest.Item):
    """The GPU tests of this run, run by pytest in a child process on the GPU."""

    def __init__(self, *, nodeids, **kw):
        super().__init__(**kw)
        self.nodeids = nodeids

    def runtest(self):
        rc, counts, output = run_gpu_tests(self.nodeids, self.config.rootpath)
        self.add_report_section("call", "GPU tests (child process)", output)
        self.config.stash[_WHERE] = f"GPU tests: {describe(counts)} on {_device_name()} " \
                                    "(child process)"
        if rc != 0:
            failed = [ln.split()[1] for ln in output.splitlines()
                      if ln.startswith(("FAILED ", "ERROR ")) and len(ln.split()) > 1]
            raise GpuTestsFailed(f"{describe(counts)} in the child process (exit {rc}): "
                                 f"{', '.join(failed) or 'see its output'}\n\n{output}")

    def repr_failure(self, excinfo):
        if excinfo.errisinstance(GpuTestsFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, self.name


def _gpu_dir_node(item):
    node = item
    while node.parent is not None and Path(node.path) != GPU_DIR:
        node = node.parent
    return node


@pytest.hookimpl(trylast=True)   # after -k / -m deselection
def pytest_collection_modifyitems(config, items):
    gpu = [i for i in items if _is_gpu_test(i)]
    if not gpu:
        return
    config.stash[_CPU_TOO] = len(items) > len(gpu) and _simulated()
    why = _why_not()
    if why is not None:
        config.stash[_WHERE] = f"GPU tests skipped: {why}"
        for item in gpu:
            item.add_marker(pytest.mark.skip(reason=why))
    elif not _simulated():
        config.stash[_WHERE] = f"GPU tests: on {_device_name()} in this process"
    else:
        first = items.index(gpu[0])
        run = GpuTests.from_parent(_gpu_dir_node(gpu[0]), name="gpu_tests_in_a_child_process",
                                   nodeids=[i.nodeid for i in gpu])
        rest = [i for i in items if not _is_gpu_test(i)]
        items[:] = rest[:first] + [run] + rest[first:]
        config.stash[_WHERE] = f"GPU tests: {len(gpu)} to run on {_device_name()} " \
                               "in a child process"


def pytest_terminal_summary(terminalreporter, config):
    where = config.stash.get(_WHERE, None)
    if where is not None:
        cpu = "CPU tests: numba's CUDA simulator; " if config.stash[_CPU_TOO] else ""
        terminalreporter.write_line(f"graphtrace: {cpu}{where}")


@pytest.fixture(scope="session")
def cp():
    return pytest.importorskip("cupy")


@pytest.fixture(scope="session")
def rng():
    import numpy as np
    return np.random.default_rng(1234)

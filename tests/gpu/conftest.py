"""GPU tests: skipped cleanly where there is no driver, no device, or no numba/cupy."""
import pytest

from graphtrace import _driver


def _why_not():
    import os
    if not _driver.available():
        return "no CUDA driver or no GPU device"
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return "numba's simulator is on: run tests/gpu on their own (tools/gpu_check.py)"
    return None


def pytest_collection_modifyitems(config, items):
    why = _why_not()
    if why is None:
        return
    skip = pytest.mark.skip(reason=why)
    for item in items:
        if "tests/gpu/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def cp():
    return pytest.importorskip("cupy")


@pytest.fixture(scope="session")
def rng():
    import numpy as np
    return np.random.default_rng(1234)


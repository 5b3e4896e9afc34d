"""GPU tests: skipped cleanly where there is no driver, no device, or no numba/cupy."""
import pytest

from graphtrace import _driver


def pytest_collection_modifyitems(config, items):
    if _driver.available():
        return
    skip = pytest.mark.skip(reason="no CUDA driver or no GPU device")
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

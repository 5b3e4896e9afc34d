"""Shared fixtures for the CPU tests."""
import os

import pytest
from hypothesis import Phase, settings

# tools/mutation.py runs the suite once per mutant: the same examples every time,
# so that a mutant's verdict does not depend on the draw, and no shrinking, since
# only whether a test fails counts.
settings.register_profile("mutation", derandomize=True, database=None,
                          phases=[Phase.explicit, Phase.generate])

# The CPU tests run on the simulator, also on a machine with a GPU (tests/gpu then
# run in a child process on the GPU: tests/gpu/conftest.py).
os.environ.setdefault("GRAPHTRACE_BACKEND", "sim")
# Every graph a test traces is checked against the IR's invariants (Graph.verify).
os.environ.setdefault("GRAPHTRACE_VERIFY", "1")

import graphtrace  # noqa: E402,F401  (imported first: numba then builds simulator kernels)
from helpers import FakeDeviceArray  # noqa: E402


@pytest.fixture
def fake():
    return FakeDeviceArray


def pytest_report_header(config):
    from graphtrace.ops.kernel import speedups_module
    path = "compiled (_speedups.c)" if speedups_module is not None else "pure Python"
    return [f"numba simulator: {os.environ.get('NUMBA_ENABLE_CUDASIM', '0')}",
            f"graphtrace tracing path: {path}"]


@pytest.fixture(scope="module", params=["plain Python", "numpy", "compiled pairs"])
def both_inference_paths(request):
    """The module's tests once with small scopes inferred in plain Python
    (``deps_small.py``), once with every scope on the batch (numpy) path, and
    once with the pairs of scopes whose regions do not overlap found by
    ``_reduce.c`` (reduced by ``deps_small.reduce`` in a small scope; skipped
    where it was not built)."""
    from graphtrace import deps, deps_small
    compiled = request.param == "compiled pairs"
    was = deps.use_compiled_pairs(compiled)
    if compiled and not deps.use_compiled_pairs(True):
        deps.use_compiled_pairs(was)
        pytest.skip("graphtrace._reduce is not built")
    small = deps_small.SMALL
    deps_small.SMALL = -1 if request.param == "numpy" else small
    yield request.param
    deps_small.SMALL = small
    deps.use_compiled_pairs(was)


@pytest.fixture(scope="module", params=["compiled", "pure Python"])
def both_launch_paths(request):
    """The module's tests once with launches recorded by the compiled path
    (``_speedups.c``, skipped where it was not built) and once in pure Python."""
    from helpers import launch_path
    with launch_path(request.param):
        yield request.param

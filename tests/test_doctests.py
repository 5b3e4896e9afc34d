"""The examples in the public API's docstrings run, on the simulator.

They use ``np``, ``cuda``, ``gt`` and the kernels ``scale(x, a, out)`` and
``add(x, y)`` of examples/quickstart.py, given here; examples that need a GPU,
or write files, are marked ``+SKIP``.
"""
import doctest
import importlib

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from step_kernels import add, scale


GLOBALS = {"np": np, "cuda": cuda, "gt": gt, "scale": scale, "add": add}
MODULES = ["graphtrace.function", "graphtrace.stream", "graphtrace.ir", "graphtrace.explain",
           "graphtrace.picture", "graphtrace.profile", "graphtrace.check", "graphtrace.sim",
           "graphtrace.buffers", "graphtrace.arrays", "graphtrace.ops.kernel",
           "graphtrace.ops._conditions"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    module = importlib.import_module(name)
    tests = doctest.DocTestFinder().find(module, name, extraglobs=GLOBALS)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report = []
    for test in tests:
        runner.run(test, out=report.append)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0, "".join(report)

"""The retrace log names each function or kernel reached by name that changed once,
in the order the key reaches them, however many ways the function reaches it."""
import logging

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt


def _add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


def _add_two(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 2


bump = cuda.jit(_add_one)


def helper(s, x):
    bump[1, 32, s](x)


@gt.graph
def f(s, x):
    helper(s, x)   # reaches bump through helper, and by its own name below
    bump[1, 32, s](x)


@pytest.fixture
def info(caplog):
    caplog.set_level(logging.INFO, logger="graphtrace")
    return caplog


def reason(caplog) -> str:
    traces = [r.getMessage() for r in caplog.records
              if r.name == "graphtrace" and r.getMessage().startswith("trace f: ")]
    return traces[-1]


def test_a_kernel_reached_twice_and_redefined_is_named_once(info):
    """It said ``changed: _add_two, _add_two`` (the kernel's own name)."""
    global bump, helper
    old_bump, old_helper = bump, helper
    x = cuda.to_device(np.zeros(4))
    try:
        f(x)
        bump = cuda.jit(_add_two)
        f(x)
        said = reason(info)
        assert said.endswith("functions or kernels reached by name changed: _add_two"), said

        def helper(s, x):   # noqa: F811 (redefined, as a notebook cell does)
            bump[1, 32, s](x)
            bump[1, 32, s](x)
        f(x)
        said = reason(info)
        names = said.split("functions or kernels reached by name changed: ")[1].split(", ")
        assert len(names) == len(set(names)) and names[0] == "helper" and "_add_two" in names, \
            said
    finally:
        bump, helper = old_bump, old_helper
    assert x.copy_to_host()[0] == 2.0 + 4.0 + 6.0

"""A global or closure list the traced code changes on one side of a test reading
it (the ``else`` branch, the code after ``if DONE: return``) is a flag the graph
is keyed by, as one changed in the ``if`` branch is (``container_flags.guarded``);
before, the first graph was replayed (in silence, or named as state)."""
import functools
import logging
import warnings

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace.container_flags import Code, guarded


@cuda.jit
def add(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += a


def dev():
    return cuda.to_device(np.zeros(2))


def first(x):
    return float(x.copy_to_host()[0])


DONE, ELSE = [], []


@gt.graph(backend="sim")
def _returned_early(s, x):
    if DONE:
        return
    DONE.append(True)
    add[1, 2, s](x, 1.0)


@gt.graph(backend="sim")
def _flag_in_else(s, x):
    if ELSE:
        add[1, 2, s](x, 10.0)
    else:
        ELSE.append(True)
        add[1, 2, s](x, 1.0)


def _run_once(fn):
    done = []

    @functools.wraps(fn)
    def w(*a):
        if done:
            return
        done.append(True)
        return fn(*a)
    return w


@gt.graph(backend="sim")
@_run_once
def _warmup(s, x):
    add[1, 2, s](x, 1.0)


@pytest.mark.parametrize("f, eager", [(_returned_early, 1.0), (_flag_in_else, 21.0),
                                      (_warmup, 1.0)])
def test_a_list_flag_changed_on_one_side_of_its_test_is_keyed(f, eager):
    """Three calls compute what eager code does, with no warning: the change after an
    early return on the list, or in the ``else`` branch of a test reading it, is a
    flag's; before, the first graph was replayed (silently, or named as state)."""
    DONE.clear(), ELSE.clear()
    f.clear_cache()
    x = dev()
    with warnings.catch_warnings():
        warnings.simplefilter("error", gt.StateWarning)
        for _ in range(3):
            f(x)
    assert first(x) == eager


def test_a_list_flag_in_else_emptied_by_the_user_runs_the_first_call_work_again():
    ELSE.clear()
    _flag_in_else.clear_cache()
    x = dev()
    for i in range(6):
        if i == 3:
            ELSE.clear()
        _flag_in_else(x)
    assert first(x) == 42.0 and ELSE == [True]


def _functions(body: str):
    scope = {"log": logging.getLogger("app")}
    exec("def f(s, x, k):\n" + "".join(f"    {line}\n" for line in body.splitlines()), scope)
    return [scope["f"]]


def _codes(body: str):
    return Code(_functions(body)).codes


@pytest.mark.parametrize("body, want", [
    ("if LOG:\n    run(x, 10.0)\nelse:\n    LOG.append(1)\n    run(x, 1.0)", True),
    ("if LOG:\n    return\nLOG.append(1)\nrun(x)", True),
    ("if LOG:\n    raise ValueError(k)\nLOG.append(1)", True),
    ("for i in k:\n    if LOG:\n        continue\n    LOG.append(i)", True),
    ("if LOG:\n    run(x)\nLOG.append(1)", False),
    ("if k and LOG:\n    run(x)\nelse:\n    LOG.append(1)", False),
    ("if LOG:\n    if k:\n        return\nLOG.append(1)", False),
    ("if k:\n    if LOG:\n        return\nLOG.append(1)", False),
    ("try:\n    if LOG:\n        raise ValueError(k)\n    run(x)\nexcept ValueError:\n"
     "    LOG.append(1)", False),
])
def test_a_change_on_the_other_side_of_a_test_reading_the_container_is_guarded(body, want):
    assert guarded(_codes(body), "LOG") is want

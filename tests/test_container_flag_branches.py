"""A global or closure list the traced code changes, read by a test whose branch
decides work in a way other than launching in it: an early return or raise, a
conditional expression, a value stored for later, a ``break``. Each is state
(``gt.StateWarning``), or, where every change of the list sits on one side of
the test (the ``else`` branch, the code after ``if DONE: return``), a flag the
graph is keyed by; before, the first graph was replayed in silence
(``container_flags.decides``, ``guarded``)."""
import functools
import logging
import warnings

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace.container_flags import Code, decides, guarded


@cuda.jit
def add(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += a


def dev():
    return cuda.to_device(np.zeros(2))


def first(x):
    return float(x.copy_to_host()[0])


DONE, ELSE, HIST, TERN, OPTS, SHORT, LOOPED, RAISED = [], [], [], [], [], [], [], []


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


@gt.graph(backend="sim")
def _history_returns(s, x):
    HIST.append(1)
    if len(HIST) > 2:
        return
    add[1, 2, s](x, 1.0)


@gt.graph(backend="sim")
def _conditional_expression(s, x):
    c = 1.0 if TERN else 5.0
    TERN.append(0)
    add[1, 2, s](x, c)


@gt.graph(backend="sim")
def _stored_in_a_dict(s, x):
    opts = {"c": 5.0}
    if OPTS:
        opts["c"] = 1.0
    OPTS.append(0)
    add[1, 2, s](x, opts["c"])


@gt.graph(backend="sim")
def _short_circuit(s, x):
    c = SHORT and 1.0 or 5.0
    SHORT.append(0)
    add[1, 2, s](x, c)


@gt.graph(backend="sim")
def _loop_broken(s, x):
    for _ in range(3):
        if len(LOOPED) > 1:
            break
        add[1, 2, s](x, 1.0)
    LOOPED.append(0)


@gt.graph(backend="sim")
def _raised(s, x):
    RAISED.append(0)
    if len(RAISED) > 5:
        raise RuntimeError("too many calls")
    add[1, 2, s](x, 1.0)


@pytest.mark.parametrize("f, name", [
    (_history_returns, "HIST"), (_conditional_expression, "TERN"),
    (_stored_in_a_dict, "OPTS"), (_short_circuit, "SHORT"), (_loop_broken, "LOOPED"),
    (_raised, "RAISED")])
def test_a_global_history_deciding_work_past_its_branch_is_named_state(f, name):
    """A test whose branch returns, raises, breaks a loop or leaves a value the code
    goes on with decides work: the history it reads is named state, at the first call;
    before, each was passed over in silence and the first graph replayed."""
    x = dev()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(3):
            f(x)
    assert [q for q in w if issubclass(q.category, gt.StateWarning) and
            f"changed {name}" in str(q.message)]


TRIMMED, NOTED = [], []


@gt.graph(backend="sim")
def _trimmed_last(s, x):
    add[1, 2, s](x, 1.0)
    TRIMMED.append(1)
    if len(TRIMMED) > 100:   # the last statement: both ways return
        del TRIMMED[0]


@gt.graph(backend="sim")
def _noted(s, x):
    add[1, 2, s](x, 1.0)
    NOTED.append(1)
    if len(NOTED) > 1:
        logging.getLogger("app").info(f"{len(NOTED)} calls" if NOTED else "none")
    else:
        logging.getLogger("app").info("first call")


@pytest.mark.parametrize("f", [_trimmed_last, _noted])
def test_a_global_history_trimmed_or_logged_at_the_end_is_not_named(f):
    x = dev()
    with warnings.catch_warnings():
        warnings.simplefilter("error", gt.StateWarning)
        for _ in range(3):
            f(x)
    assert first(x) == 3.0 and f.cache_info().misses == 1


def _functions(body: str):
    scope = {"log": logging.getLogger("app")}
    exec("def f(s, x, k):\n" + "".join(f"    {line}\n" for line in body.splitlines()), scope)
    return [scope["f"]]


@pytest.mark.parametrize("body, want", [
    ("if LOG:\n    return\nrun(x)", True),
    ("if LOG:\n    return 1.0\nreturn 2.0", True),
    ("if len(LOG) > 2:\n    raise ValueError(k)", True),
    ("c = 1.0 if LOG else 5.0\nrun(x, c)", True),
    ("c = LOG and 1.0 or 5.0\nrun(x, c)", True),
    ("c = len(LOG) > 2 or k\nrun(x, c)", True),
    ("d = {}\nif LOG:\n    d['c'] = 1.0\nrun(x, d)", True),
    ("for i in k:\n    if LOG:\n        break\n    run(x)", True),
    ("for i in k:\n    if LOG:\n        continue\n    run(x)", True),
    ("while LOG:\n    LOG.pop()\n    run(x)", True),
    ("for _ in range(len(LOG)):\n    run(x)", True),
    ("if helper(LOG):\n    log.info('x')", True),
    ("if len(LOG) > 100:\n    del LOG[0]", False),
    ("if len(LOG) > 100:\n    del LOG[0]\nrun(x)", False),
    ("if k not in LOG:\n    log.info('new %s', k)\nrun(x)", False),
    ("log.info(f'{len(LOG)} so far')\nrun(x)", False),
    ("if LOG:\n    log.info('again')\nelse:\n    log.info('first')\nrun(x)", False),
])
def test_decides_tells_the_reads_that_decide_work(body, want):
    assert decides(_functions(body), "LOG") is want


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

"""A value the trace reads and then sets (a flag raised, a value set from None,
a key added) decided the work it recorded: the graph is keyed by the value it
read, so a later call finding the new value traces again, as eager code would
take the other branch (``first_reads``). A setting only stored (a test whose
branch stores alone) keeps its single trace."""
import types
import warnings

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace.first_reads import read_first


@cuda.jit
def axpy(a, x, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] += a * x[i]


def dev(*values):
    return cuda.to_device(np.array(values, dtype=np.float64))


class _Leapfrog:
    def __init__(self):
        self.v, self.f, self.started, self.kick = dev(0, 0), dev(1, 1), False, None

    @gt.graph(backend="sim")
    def step(self, s):
        if not self.started:
            axpy[1, 2, s](0.5, self.f, self.v)   # a half kick, the first call alone
            self.started = True
        else:
            axpy[1, 2, s](1.0, self.f, self.v)

    @gt.graph(backend="sim")
    def step_none(self, s):
        if self.kick is None:
            self.kick = 1.0
            axpy[1, 2, s](0.5, self.f, self.v)
        else:
            axpy[1, 2, s](self.kick, self.f, self.v)


@pytest.mark.parametrize("method", ["step", "step_none"])
def test_a_flag_on_self_the_trace_read_then_set_traces_again_once(method):
    """``if not self.started: half kick; self.started = True else: full kick``
    replayed the half kick at every call (keyed by the flag as the trace left
    it); eager code kicks half, then full."""
    m = _Leapfrog()
    for _ in range(4):
        getattr(m, method)()
    assert m.v.copy_to_host().tolist() == [3.5, 3.5]
    assert getattr(_Leapfrog, method).cache_info().misses == 2


CFG = types.SimpleNamespace(started=False)


@gt.graph(backend="sim")
def _namespace_flag(s, f, v):
    if not CFG.started:
        axpy[1, 2, s](0.5, f, v)
        CFG.started = True
    else:
        axpy[1, 2, s](1.0, f, v)


def _closure_flag():
    started = [False]

    @gt.graph(backend="sim")
    def f(s, f, v):
        if not started[0]:
            axpy[1, 2, s](0.5, f, v)
            started[0] = True
        else:
            axpy[1, 2, s](1.0, f, v)
    return f


@pytest.mark.parametrize("make", [lambda: _namespace_flag, _closure_flag],
                         ids=["namespace", "closure list"])
def test_a_flag_held_by_a_name_the_trace_read_then_set_traces_again_once(make):
    fn = make()
    f, v = dev(1, 1), dev(0, 0)
    for _ in range(3):
        fn(f, v)
    assert v.copy_to_host().tolist() == [2.5, 2.5] and fn.cache_info().misses == 2


class _Default:
    def __init__(self):
        self.scale, self.v, self.f = None, dev(0, 0), dev(1, 1)

    @gt.graph(backend="sim")
    def step(self, s):
        if self.scale is None:   # a test whose branch only stores: a setting
            self.scale = 2.0
        axpy[1, 2, s](self.scale, self.f, self.v)


def test_a_default_set_from_none_by_a_branch_that_only_stores_traces_once():
    m = _Default()
    for _ in range(3):
        m.step()
    assert m.v.copy_to_host().tolist() == [6.0, 6.0] and _Default.step.cache_info().misses == 1


@gt.graph(backend="sim")
def _flag_in_dict(s, f, v, state):
    if "initialized" not in state:
        axpy[1, 2, s](10.0, f, v)
        state["initialized"] = True
    axpy[1, 2, s](1.0, f, v)


@gt.graph(backend="sim")
def _counted_in_dict(s, f, v, memo):
    k = memo.get("calls", 0)
    memo["calls"] = k + 1
    axpy[1, 2, s](float(k + 1), f, v)


@gt.graph(backend="sim")
def _counted_in_default(s, f, v, _memo={}):   # noqa: B006  (the pattern said)
    k = _memo.setdefault("calls", 0)
    _memo["calls"] = k + 1
    axpy[1, 2, s](float(k + 1), f, v)


@pytest.mark.parametrize("fn, args", [(_flag_in_dict, ({},)), (_counted_in_dict, ({},)),
                                      (_counted_in_default, ())],
                         ids=["flag added", "get then store", "default setdefault then store"])
def test_a_key_the_trace_read_then_added_to_a_dict_argument_is_said(fn, args):
    """A key added with a plain value was taken for a default filled in, though
    the code read it first and decided by it: no StateWarning, and every call
    replayed the first one."""
    with pytest.warns(gt.StateWarning, match="a key added that the code read first"):
        fn(dev(1, 1), dev(0, 0), *args)


def test_the_warning_for_a_default_names_the_default_not_the_callers_container():
    @gt.graph(backend="sim")
    def f(s, x, y, _calls=[]):   # noqa: B006  (the pattern said)
        _calls.append(1)
        axpy[1, 2, s](1.0, x, y)

    with pytest.warns(gt.StateWarning, match=r"function's default \(_calls=\[\]\)"):
        f(dev(1, 1), dev(0, 0))


def _reads(code_fn, label):
    return read_first([code_fn], label)


def test_read_first_tells_a_deciding_read_from_a_setting():
    def flag(self):
        if not self.started:
            print()
            self.started = True

    def setting(self):
        if self.scale is None:
            self.scale = 1.0
        print(self.scale)

    def counter(memo):
        memo["n"] = memo.get("n", 0) + 1

    def filled(opts):
        opts.setdefault("block", 32)
        print(opts["block"])

    assert _reads(flag, "self.started") and _reads(counter, "memo['n']")
    assert not _reads(setting, "self.scale") and not _reads(filled, "opts['block']")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not _reads(setting, "self.other")


def test_a_setdefault_whose_value_is_kept_fills_a_default_read_after_it():
    """``b = opts.setdefault("block", 32)`` in a dict argument's copy (``filled``)
    was taken for a read before its own store (as ``if D.pop("req", None) is not
    None`` is): its value is the one it stores, which the caller's dict, never
    holding it, has filled the same at each call. Elsewhere (a global dict) that
    read is the only one keying the graph by the value: still read first."""
    def kept(opts):
        b = opts.setdefault("block", 32)
        print(b)

    def computed(opts, x):
        n = opts.setdefault("n", len(x))   # the default's own call is not setdefault's
        print(n)

    def in_a_loop(opts):
        for _ in range(2):
            print(opts.setdefault("block", 32))

    def counted(memo):
        k = memo.setdefault("n", 0)
        memo["n"] = k + 1

    def counted_in_a_loop(memo):
        for _ in range(2):
            memo["n"] = memo.setdefault("n", 0) + 1

    def taken(reqs):
        if reqs.pop("req", None) is not None:
            print()

    def bare(opts, x):
        opts.setdefault("n", len(x))

    def filled(fn, label):
        return read_first([fn], label, filled=True)

    assert not filled(kept, "opts['block']") and not filled(computed, "opts['n']")
    assert not filled(in_a_loop, "opts['block']")
    assert filled(counted, "memo['n']") and filled(counted_in_a_loop, "memo['n']")
    assert filled(taken, "reqs['req']")
    assert _reads(kept, "opts['block']") and _reads(computed, "opts['n']")
    assert _reads(in_a_loop, "opts['block']") and not _reads(bare, "opts['n']")


@gt.graph(backend="sim")
def _filled_kept(s, f, v, opts):
    b = opts.setdefault("scale", 2.0)
    verbose = opts.pop("verbose", False)
    axpy[1, 2, s](b, f, v)
    if verbose:
        axpy[1, 2, s](1.0, f, v)


@pytest.mark.parametrize("opts", [{}, {"verbose": True}], ids=["absent", "verbose given"])
def test_a_default_filled_by_setdefault_whose_value_is_kept_is_not_said(opts):
    """README: a dict argument's default filled in (``opts.setdefault("block", 32)``)
    or plain option taken out (``opts.pop("verbose", False)``) changes no work; with
    the setdefault's value kept it warned of a key the code read first."""
    v = dev(0, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gt.StateWarning)
        for _ in range(2):
            _filled_kept(dev(1, 1), v, dict(opts))
    twice = 6.0 if opts else 4.0
    assert v.copy_to_host().tolist() == [twice, twice] and "scale" not in opts

"""A slot a loop body stores (``opts.alpha = 0.5``) and then hands to a call that
cannot store there keeps its set mark: a builtin or a library's callable
(``print``, a logger's method, ``json.dumps``), a function or a method of the
program's own whose code only reads the object, or launches kernels with it. A
later read of the slot reads the value just stored, as Python does: accepted, and
the graph matches the eager run.
"""
import json
import logging
import types

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host

_log = logging.getLogger("graphtrace.tests.read_only_call")


class _Opts:
    def __init__(self, alpha):
        self.alpha = alpha

    def validate(self):
        assert self.alpha > 0


class _Rec:
    def __init__(self):
        self.seen = []

    def record(self, o):
        self.seen.append(o.alpha)


def _describe(o):
    return f"alpha={o.alpha}"


def _step(st, x, o):
    add[1, 4, st](x, o.alpha)


def _program(s, x, n):
    opts, rec = _Opts(1.0), _Rec()
    cfg = {"alpha": 1.0}
    with s.while_loop(gt.cond(n) < 3) as body:
        opts.alpha = 0.5
        cfg["alpha"] = 0.5
        _log.debug("%r", opts)
        print("opts:", opts)
        json.dumps(cfg)
        _describe(opts)
        opts.validate()
        rec.record(opts)
        _step(body, x, opts)
        add[1, 4, body](x, opts.alpha)
        add[1, 4, body](x, cfg["alpha"])
        count[1, 1, body](n)


def _fill_tmp(st, ws, x):
    add[1, 4, st](ws.tmp, 1.0)


def _temporary(s, x, n):
    ws = types.SimpleNamespace()
    with s.while_loop(gt.cond(n) < 3) as body:
        ws.tmp = body.zeros(x.size, np.float32)
        _fill_tmp(body, ws, x)
        add[1, 4, body](ws.tmp, 1.0)
        count[1, 1, body](n)


def _arm(s, x, n, flag):
    cfg = types.SimpleNamespace(alpha=1.0)
    with s.while_loop(gt.cond(n) < 3) as body:
        with body.if_else(gt.cond(flag)) as (then, other):
            cfg.alpha = 0.5
            _log.debug("cfg=%s", cfg)
            add[1, 4, then](x, cfg.alpha)
            add[1, 4, other](x, 2.0)
        count[1, 1, body](n)


def test_read_only_calls_keep_the_store_seen():
    """0.5 by _step, 0.5 by opts.alpha, 0.5 by cfg, three passes: 4.5."""
    x, n = dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    gt.graph(_program, backend="sim")(x, n)
    assert host(x) == [4.5] * 4


def test_a_temporary_set_then_handed_to_a_launching_helper_is_accepted():
    x, n = dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    gt.graph(_temporary, backend="sim")(x, n)
    assert host(n) == [3]


@pytest.mark.parametrize("flag, want", [(1, 1.5), (0, 6.0)])
def test_an_arm_setting_a_slot_then_logging_it_is_accepted(flag, want):
    x = dev(0, 0, 0, 0)
    gt.graph(_arm, backend="sim")(x, dev(0, dtype=np.int32), dev(flag, dtype=np.int32))
    assert host(x) == [want] * 4

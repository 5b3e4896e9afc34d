"""Flags kept on the class (``type(self).started = True``) and phases kept as enum
members or strings (``if self.phase is Phase.WARMUP: ...; self.phase = Phase.RUN``) are keyed
by the value the trace read and set again by each replay, as the traced Python
did (``replayed_stores``): a reset runs the first-call work once more, and a phase
that moves on every call walks its graphs in the eager order."""
import enum
import warnings

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt


@cuda.jit
def add(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += a


def dev():
    return cuda.to_device(np.zeros(2))


def first(x):
    return float(x.copy_to_host()[0])


class Phase(enum.Enum):
    WARMUP = 1
    RUN = 2
    COOL = 3


def _class_flag_models():
    class ByType:
        started = False

        @gt.graph(backend="sim")
        def step(self, s, x):
            if not type(self).started:
                add[1, 2, s](x, 100.0)
                type(self).started = True
            add[1, 2, s](x, 1.0)

    class ByDunder:
        started = False

        @gt.graph(backend="sim")
        def step(self, s, x):
            if not self.__class__.started:
                add[1, 2, s](x, 100.0)
                self.__class__.started = True
            add[1, 2, s](x, 1.0)

    class ByClassmethod:
        started = False

        @classmethod
        def mark(cls):
            cls.started = True

        @gt.graph(backend="sim")
        def step(self, s, x):
            if not self.started:
                add[1, 2, s](x, 100.0)
                self.mark()
            add[1, 2, s](x, 1.0)
    return {"type(self)": ByType, "self.__class__": ByDunder, "classmethod": ByClassmethod}


@pytest.mark.parametrize("form", sorted(_class_flag_models()))
def test_a_class_flag_reset_by_the_user_runs_the_first_call_work_once_more(form):
    """The replays set nothing, or set the flag on the instance: after the reset the
    first call's work ran at every call, and the class's flag stayed lowered."""
    cls = _class_flag_models()[form]
    m, x = cls(), dev()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i in range(6):
            if i == 3:
                cls.started = False
            m.step(x)
            assert cls.started is True and "started" not in vars(m)
    assert first(x) == 206.0   # eager: 100 at calls 0 and 3, 1 at every call
    assert cls.step.cache_info().misses == 2


class _Trainer:
    def __init__(self):
        self.phase = Phase.WARMUP

    @gt.graph(backend="sim")
    def step(self, s, x):
        if self.phase is Phase.WARMUP:
            add[1, 2, s](x, 100.0)
            self.phase = Phase.RUN
        elif self.phase is Phase.RUN:
            add[1, 2, s](x, 10.0)
            self.phase = Phase.COOL
        else:
            add[1, 2, s](x, 1.0)
            self.phase = Phase.WARMUP


def test_a_phase_moved_on_every_call_runs_each_phase_work_in_turn():
    """Kept as state, the phase was left out of the key: the warm-up's work replayed
    at every call, and the phase stayed where the trace left it."""
    t, x = _Trainer(), dev()
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(7):
            t.step(x)
            seen.append(t.phase)
    assert first(x) == 3 * 100.0 + 2 * 10.0 + 2 * 1.0
    assert seen == [Phase.RUN, Phase.COOL, Phase.WARMUP] * 2 + [Phase.RUN]
    assert _Trainer.step.cache_info().misses == 3


def test_a_phase_reset_by_the_user_runs_the_warm_up_again():
    t, x = _Trainer(), dev()
    for i in range(4):
        if i == 2:
            t.phase = Phase.WARMUP
        t.step(x)
    assert first(x) == 2 * 100.0 + 2 * 10.0 and t.phase is Phase.COOL


class _Named:
    def __init__(self):
        self.phase = "warm"

    @gt.graph(backend="sim")
    def step(self, s, x):
        if self.phase == "warm":
            add[1, 2, s](x, 100.0)
            self.phase = "run"
        add[1, 2, s](x, 1.0)


def test_a_phase_kept_as_a_string_is_keyed_and_set_again_as_an_enum_is():
    """Taken for state, the string was left out of the key: after the user's reset
    to "warm" the warm-up never ran again."""
    t, x = _Named(), dev()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i in range(6):
            if i == 3:
                t.phase = "warm"
            t.step(x)
            assert t.phase == "run"
    assert first(x) == 206.0
    assert _Named.step.cache_info().misses == 2

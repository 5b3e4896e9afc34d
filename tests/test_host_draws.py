"""A number the traced Python draws on the host (``random.random()``,
``rng.normal()``, ``np.random.rand()``, ``time.perf_counter()``) is baked into
the graph: every call replays the trace's number, where eager code would draw
a new one. No cache key can hold it, so the call that traces says so, once per
line: a ``gt.StateWarning`` at the line of the draw (``host_draws.py``). A
draw in a host callback runs at every launch, and one made outside the
function and passed as an argument is rebound at every call: neither warns.
"""
import datetime
import os
import random
import time
import uuid
import warnings
from random import gauss

import numpy as np
from numba import cuda

import graphtrace as gt
from helpers import line_of

RNG = np.random.default_rng(0)


@cuda.jit
def add(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += a


def dev():
    return cuda.to_device(np.zeros(2))


def first(x):
    return float(x.copy_to_host()[0])


def calls(fn, *args, times=3):
    """The state warnings of ``times`` calls of ``fn``, and ``args[0]``'s first value
    after each."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        seen = []
        for _ in range(times):
            fn(*args)
            seen.append(first(args[0]))
    return [w for w in caught if issubclass(w.category, gt.StateWarning)], seen


def said_at(found, marker, *words):
    """One warning, at the line marked ``marker``, whose text holds ``words``."""
    assert len(found) == 1, [str(w.message) for w in found]
    w, line = found[0], line_of(__file__, marker)
    text = str(w.message)
    assert (os.path.basename(w.filename), w.lineno) == ("test_host_draws.py", line)
    assert f"test_host_draws.py:{line}" in text
    for word in words:
        assert word in text, text


@gt.graph(backend="sim")
def module_function(s, x):
    add[1, 2, s](x, random.random())   # module function


def test_a_module_function_draw_warns_at_its_line_and_says_what_to_do():
    found, seen = calls(module_function, dev())
    said_at(found, "module function", "tracing module_function draws a random value",
            "random.random()", "bakes in", "numba.cuda.random", "cupy.random",
            "draw on the host outside the function and pass the number as an argument")


def test_the_graph_still_replays_the_traced_number_the_warning_only_informs():
    @gt.graph(backend="sim")
    def baked(s, x):
        add[1, 2, s](x, random.random())   # replayed

    found, seen = calls(baked, dev())
    said_at(found, "replayed", "random.random() at")
    assert seen[1] == 2 * seen[0] and seen[2] == 3 * seen[0]   # the same number each call
    assert baked.cache_info() == (2, 1, 32, 1)   # traced once, replayed twice


@gt.graph(backend="sim")
def imported_name(s, x):
    add[1, 2, s](x, gauss(0.0, 1.0))   # from-import


def test_a_function_imported_by_name_warns():
    said_at(calls(imported_name, dev())[0], "from-import", "gauss() (random.gauss)")


@gt.graph(backend="sim")
def global_generator(s, x):
    add[1, 2, s](x, float(RNG.standard_normal()))   # global generator


def test_a_global_numpy_generator_warns():
    said_at(calls(global_generator, dev())[0], "global generator",
            "RNG.standard_normal() (numpy.random.Generator.standard_normal)")


@gt.graph(backend="sim")
def numpy_module(s, x):
    add[1, 2, s](x, float(np.random.rand()))   # numpy module-level


def test_numpys_module_level_functions_warn():
    said_at(calls(numpy_module, dev())[0], "numpy module-level",
            "np.random.rand() (numpy.random.rand)")


class Noisy:
    def __init__(self):
        self.rng = np.random.default_rng(1)
        self.py = random.Random(2)

    @gt.graph(backend="sim")
    def step(self, s, x):
        add[1, 2, s](x, float(self.rng.normal()))   # self.rng
        self.jitter(s, x)

    def jitter(self, s, x):
        add[1, 2, s](x, self.py.uniform(0.0, 1.0))   # a method of its class


def test_a_generator_held_by_self_warns_in_the_method_and_the_methods_it_calls():
    found, _ = calls(Noisy().step, dev())
    assert len(found) == 2, [str(w.message) for w in found]
    said_at(found[:1], "self.rng", "self.rng.normal() (numpy.random.Generator.normal)")
    said_at(found[1:], "a method of its class", "self.py.uniform() (random.Random.uniform)")


class Opt:
    def __init__(self):
        self.rng = random.Random(3)

    def step(self, s, x):
        add[1, 2, s](x, self.rng.random())   # a held object's generator


class Trainer:
    def __init__(self):
        self.opt = Opt()

    @gt.graph(backend="sim")
    def step(self, s, x):
        self.opt.step(s, x)


def test_a_generator_of_an_object_self_holds_warns_in_its_method():
    said_at(calls(Trainer().step, dev())[0], "a held object's generator",
            "self.rng.random() (random.Random.random) in step at")


def noise():
    return random.random()   # in a helper


@gt.graph(backend="sim")
def through_helper(s, x):
    add[1, 2, s](x, noise())


def test_a_draw_in_a_helper_the_graph_calls_warns_at_the_helpers_line():
    said_at(calls(through_helper, dev())[0], "in a helper", "random.random() in noise at")


@gt.graph(backend="sim")
def clock(s, x):
    add[1, 2, s](x, time.perf_counter())   # clock


@gt.graph(backend="sim")
def wall_clock(s, x):
    add[1, 2, s](x, datetime.datetime.now().timestamp())   # wall clock


@gt.graph(backend="sim")
def entropy(s, x):
    add[1, 2, s](x, float(os.urandom(1)[0] + uuid.uuid4().int % 7))   # entropy


def test_clocks_and_entropy_warn():
    said_at(calls(clock, dev())[0], "clock", "reads the clock with time.perf_counter()",
            "Read the clock outside the function")
    said_at(calls(wall_clock, dev())[0], "wall clock", "datetime.datetime.now()")
    found, _ = calls(entropy, dev())
    assert sorted(str(w.message).split(" with ")[1].split(" at ")[0] for w in found) == \
        ["os.urandom()", "uuid.uuid4()"]


@gt.graph(backend="sim")
def in_a_loop_body(s, x, n):
    s.while_loop(gt.cond(n) > 0, max_iterations=3,
                 body=lambda b: (add[1, 2, b](x, random.random()),   # device body
                                 add[1, 1, b](n, -1.0)))


def test_a_draw_in_a_device_body_warns():
    x, n = dev(), cuda.to_device(np.array([2.0]))
    said_at(calls(in_a_loop_body, x, n, times=1)[0], "device body", "random.random()")


TICKS = []


def tick():
    TICKS.append(random.random())


def log_noise():
    tick()


@gt.graph(backend="sim")
def in_callbacks(s, x):
    add[1, 2, s](x, 1.0)
    s.host(lambda: TICKS.append(time.perf_counter()))
    s.host(tick)
    s.host(log_noise)
    s.host(random.random)   # handed, not called


@gt.graph(backend="sim")
def handed_a_draw(s, x):
    add[1, 2, s](x, 1.0)
    s.host(TICKS.append, random.random())   # a callback's argument


def test_a_number_drawn_for_a_host_callbacks_argument_is_drawn_once_and_warns():
    TICKS.clear()
    said_at(calls(handed_a_draw, dev())[0], "a callback's argument", "random.random()")
    assert len(TICKS) == 3 and len(set(TICKS)) == 1


def test_a_draw_in_a_host_callback_runs_at_every_launch_and_does_not_warn():
    TICKS.clear()
    found, _ = calls(in_callbacks, dev())
    assert found == []
    assert len(TICKS) == 9 and len(set(TICKS)) == 9   # a new value at each launch


@gt.graph(backend="sim")
def passed(s, x, a):
    add[1, 2, s](x, a)


def test_a_number_drawn_outside_and_passed_as_an_argument_does_not_warn_and_changes():
    x = dev()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        drawn = []
        for _ in range(3):
            drawn.append(random.random())
            passed(x, drawn[-1])
    assert [w for w in caught if issubclass(w.category, gt.StateWarning)] == []
    total = 0.0
    for a in drawn:   # added one by one, as the kernel does (3.12's sum compensates)
        total += a
    assert first(x) == total and passed.cache_info().misses == 1


@gt.graph(backend="sim")
def two_draws(s, x):
    add[1, 2, s](x, random.random())   # first draw
    add[1, 2, s](x, random.random())   # second draw


def test_each_line_warns_once_per_function_not_at_each_call_or_retrace():
    found, _ = calls(two_draws, dev())
    assert [w.lineno for w in found] == [line_of(__file__, "first draw"),
                                         line_of(__file__, "second draw")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        two_draws(cuda.to_device(np.zeros(4)))   # another signature: traced again
    assert two_draws.cache_info().misses == 2
    assert [w for w in caught if issubclass(w.category, gt.StateWarning)] == []


@gt.graph(backend="sim")
def seeded(s, x):
    np.random.seed(0)
    RNG.bit_generator.state   # noqa: B018
    add[1, 2, s](x, 1.0)


def test_setting_or_reading_a_generators_state_draws_nothing():
    assert calls(seeded, dev())[0] == []


class Recorder:
    def __init__(self):
        self.rng = np.random.default_rng(0)
        self.v = []

    def add(self):   # named as the kernel the graph launches, and run only by a callback
        self.v.append(self.rng.normal())


class Logged:
    def __init__(self):
        self.rec = Recorder()

    def log(self):
        self.rec.add()

    @gt.graph(backend="sim")
    def step(self, s, x):
        add[1, 2, s](x, 1.0)
        s.host(self.log)


def test_a_held_objects_method_named_as_a_global_the_graph_loads_is_not_called_by_it():
    """The kernel's global name ``add`` is not a call of the held object's method
    ``add``, which only the host callback runs, at every launch: no warning."""
    m = Logged()
    found, _ = calls(m.step, dev())
    assert found == []
    assert len(m.rec.v) == 3 and len(set(m.rec.v)) == 3

"""The "graphtrace" logger: silent by default; traces, builds, retraces with what
differs in the signature, rebinding and the decisions taken for the user."""
import logging
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace import log
from helpers import FakeDeviceArray as A

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@cuda.jit
def scale(x, a, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i]


def dev_ones(*a):
    return cuda.to_device(np.ones(*a))


def read_only(a):
    """A copy of device array ``a`` whose interface says read-only."""
    b = cuda.to_device(a.copy_to_host())
    b._ary.flags.writeable = False   # the simulator's array stands for the device's
    return b


def dev_zeros(*a):
    return cuda.to_device(np.zeros(*a))


@pytest.fixture
def info(caplog):
    caplog.set_level(logging.DEBUG, logger="graphtrace")
    return caplog


def messages(caplog, start: str) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "graphtrace" and r.getMessage().startswith(start)]


def retrace_reason(caplog, name: str) -> str:
    traces = messages(caplog, f"trace {name}: ")
    assert traces, [r.getMessage() for r in caplog.records]
    return traces[-1][len(f"trace {name}: "):]


def test_the_logger_is_silent_unless_configured():
    logger = logging.getLogger("graphtrace")
    assert any(isinstance(h, logging.NullHandler) for h in logger.handlers)
    assert logger.propagate   # logging.basicConfig() shows its records


SCRIPT = textwrap.dedent("""
    import logging, sys
    import numpy as np
    import graphtrace as gt
    if sys.argv[1] == "on":
        logging.basicConfig(format="%(name)s %(levelname)s: %(message)s")
        logging.getLogger("graphtrace").setLevel(logging.INFO)
    @gt.graph
    def f(s, x):
        s.memset(x, 0)
    from numba import cuda
    f(cuda.to_device(np.ones(8)))
    print(gt.backend.default_backend())
""")


@pytest.mark.parametrize("configured", ["off", "on"])
def test_a_script_logs_only_once_logging_is_configured(configured):
    # the child chooses its backend, and numba's simulator with it, as a script does
    env = {k: v for k, v in os.environ.items()
           if k not in ("GRAPHTRACE_BACKEND", "NUMBA_ENABLE_CUDASIM")}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", SCRIPT, configured], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    if configured == "off":
        assert done.stderr == ""
        return
    backend = done.stdout.split()[-1]
    lines = done.stderr.splitlines()
    why = ("a CUDA driver and a GPU are there" if backend == "gpu" else
           "no CUDA driver or no GPU device: graphs run on the CPU simulator")
    assert lines[0] == f"graphtrace INFO: backend: {backend} ({why}; " \
                       "GRAPHTRACE_BACKEND=gpu|sim or backend= chooses)"
    assert lines[1] == "graphtrace INFO: trace f: first call"
    assert lines[2].startswith(f"graphtrace INFO: built f for {backend}: 1 node, 0 edges, "
                               "deps=data (trace ")


def test_the_first_call_logs_its_trace_and_build(info):
    @gt.graph
    def f(s, x, y):
        scale[1, 8, s](x, 2.0, y)
        s.memset(x, 0)
    f(dev_ones(8), dev_ones(8))
    assert messages(info, "trace f") == ["trace f: first call"]
    (built,) = messages(info, "built f")
    assert re.fullmatch(r"built f for sim: 2 nodes, 1 edge, deps=data \(trace [0-9.]+ ms, "
                        r"build [0-9.]+ ms\): a graph for the CPU simulator", built), built
    assert all(r.levelno == logging.INFO for r in info.records if r.name == "graphtrace"
               and r.getMessage().startswith(("trace", "built")))


def test_a_build_counts_the_graphs_own_nodes_and_edges_then_all_of_them(info):
    @gt.graph
    def sub(s, a, b):
        scale[1, 8, s](a, 2.0, b)
        scale[1, 8, s](b, 2.0, a)

    @gt.graph
    def f(s, x, y, flag):
        scale[1, 8, s](x, 2.0, y)
        with s.while_loop(gt.cond(flag), max_iterations=2) as body:
            scale[1, 8, body](x, 2.0, y)
            scale[1, 8, body](y, 2.0, x)
        s.child(sub, x, y)
    x, y, flag = dev_ones(8), dev_ones(8), cuda.to_device(np.zeros(1, np.int32))
    f(x, y, flag)
    (built,) = messages(info, "built f")
    assert str(f.trace(x, y, flag)).splitlines()[0].endswith("3 nodes, 2 edges")
    assert built.startswith("built f for sim: 3 nodes, 2 edges (7 nodes, 4 edges with those "
                            "of its bodies and child graphs), deps=data (trace "), built


@gt.graph(static="n")
def g(s, x, xs, n, a):
    for _ in range(n):
        scale[1, 8, s](x, a, x)


def calls(info, first, second):
    g.clear_cache()
    g(*first)
    info.clear()
    g(*second)
    return retrace_reason(info, "g")


@pytest.mark.parametrize("change, said", [
    (lambda x, xs, n, a: (dev_ones(16, np.float32), xs, n, a), "x: shape (8,) -> (16,)"),
    (lambda x, xs, n, a: (dev_ones(8), xs, n, a),
     "x: strides (4,) -> (8,); x: dtype float32 -> float64"),
    (lambda x, xs, n, a: (dev_ones(16, np.float32)[::2], xs, n, a), "x: strides (4,) -> (8,)"),
    (lambda x, xs, n, a: (x, xs, 3, a), "n: static value 2 (int) -> 3 (int)"),
    (lambda x, xs, n, a: (x, xs, n, 2), "a: a number of type float -> int"),
    (lambda x, xs, n, a: (x, xs + [dev_ones(4)], n, a), "xs: a list of 2 -> a list of 3"),
    (lambda x, xs, n, a: (x, [xs[0], 1.0], n, a),
     "xs[1]: float32 array of shape (4,) -> a number (float)"),
    (lambda x, xs, n, a: (x, [xs[0], x[:4]], n, a), "x and xs[1] now share memory (the same "
                                                    "address)"),
    (lambda x, xs, n, a: (x, [xs[0], x], n, a), "xs[1]: shape (4,) -> (8,); x and xs[1] now "
                                                "share memory (the same array)"),
    (lambda x, xs, n, a: (x, tuple(xs), n, a), "xs: a list of 2 -> a tuple of 2"),
    (lambda x, xs, n, a: (x, [read_only(xs[0]), xs[1]], n, a),
     "xs[0]: read-only False -> True"),
])
def test_a_retrace_says_what_differs_in_the_signature(info, change, said):
    first = (dev_ones(8, np.float32), [dev_ones(4, np.float32), dev_ones(4, np.float32)], 2, 1.5)
    assert calls(info, first, change(*first)) == \
        f"the signature differs from the closest cached one: {said}"


def test_arrays_that_stop_sharing_memory_are_named(info):
    x = dev_ones(8, np.float32)
    before = (x, [dev_ones(4, np.float32), x[2:6]], 2, 1.0)
    after = (x, [dev_ones(4, np.float32), dev_ones(4, np.float32)], 2, 1.0)
    assert calls(info, before, after).endswith("x and xs[1] no longer share memory")


def test_a_dict_item_is_named_by_its_key_as_written(info):
    x, w, t = (dev_ones(n, np.float32) for n in (8, 4, 4))
    first = (x, {"w": w, ("t", -0.0): t}, 2, 1.0)
    assert calls(info, first, (x, {"w": dev_ones(8, np.float32), ("t", -0.0): t}, 2, 1.0)) \
        == "the signature differs from the closest cached one: xs['w']: shape (4,) -> (8,)"
    assert calls(info, first, (x, {"w": w, ("t", -0.0): t, "v": x}, 2, 1.0)) == \
        "the signature differs from the closest cached one: xs: keys ['w', ('t', -0.0)] -> " \
        "['w', ('t', -0.0), 'v']; x and xs['v'] now share memory (the same array)"


def test_the_closest_cached_signature_is_the_one_compared(info):
    g.clear_cache()
    xs = [dev_ones(4, np.float32)] * 2
    g(dev_ones(8, np.float32), xs, 2, 1.0)
    g(dev_ones(16), xs, 5, 1.0)
    info.clear()
    g(dev_ones(16), xs, 2, 1.0)     # one difference from the second, two from the first
    assert retrace_reason(info, "g") == \
        "the signature differs from the closest cached one: n: static value 5 (int) -> 2 (int)"


GLOBAL = dev_zeros(8, np.float32)
FACTOR = 0.5


@gt.graph
def uses_globals(s, x):
    s.copy(x, GLOBAL)
    s.memset(x, FACTOR)


def test_a_retrace_names_arrays_and_numbers_reached_by_name(info):
    global GLOBAL, FACTOR
    x = dev_ones(8, np.float32)
    uses_globals(x)
    old = GLOBAL, FACTOR
    try:
        GLOBAL = dev_zeros(8, np.float32)
        info.clear()
        uses_globals(x)
        assert retrace_reason(info, "uses_globals").endswith(
            "GLOBAL (reached by name): another array (a graph keeps the arrays it reaches by "
            "name; pass it as an argument to rebind it instead)")
        FACTOR = 0.25
        info.clear()
        uses_globals(x)
        assert retrace_reason(info, "uses_globals").endswith(
            "FACTOR (reached by name): 0.5 -> 0.25 (a number reached by name is baked into "
            "the graph; pass it as an argument to make it dynamic)")
        for before, after in ((0.0, -0.0), (-0.0, 2.0), (float("nan"), 1.0)):
            uses_globals.clear_cache()
            FACTOR = before
            uses_globals(x)
            FACTOR = after
            info.clear()
            uses_globals(x)          # a zero's key keeps its sign: written as the number
            assert retrace_reason(info, "uses_globals").endswith(
                f"FACTOR (reached by name): {before!r} -> {after!r} (a number reached by "
                "name is baked into the graph; pass it as an argument to make it dynamic)")
        GLOBAL = dev_zeros(4, np.float64)
        info.clear()
        with pytest.raises(gt.GraphtraceError):
            uses_globals(x)          # a copy of another size: refused, but traced first
        assert retrace_reason(info, "uses_globals").endswith(
            "GLOBAL (reached by name): shape (8,) -> (4,); GLOBAL (reached by name): strides "
            "(4,) -> (8,); GLOBAL (reached by name): dtype float32 -> float64")
    finally:
        GLOBAL, FACTOR = old


class _Options:
    pass


OPTIONS = _Options()


@gt.graph
def fills_by_option(s, x):
    try:
        a = OPTIONS.gain
    except AttributeError:
        a = 1.0
    s.memset(x, a)


def test_a_retrace_names_an_attribute_set_after_it_was_absent(info):
    """``OPTIONS.gain`` absent when traced (``except AttributeError``), set later:
    the retrace names it as absent before, not as an enum member of graphtrace's."""
    x = dev_ones(8, np.float32)
    fills_by_option(x)
    try:
        OPTIONS.gain = 2.0
        info.clear()
        fills_by_option(x)
        assert retrace_reason(info, "fills_by_option").endswith(
            "OPTIONS.gain (reached by name): absent -> 2.0 (a value reached by name is baked "
            "into the graph; pass it as an argument to make it dynamic)")
    finally:
        vars(OPTIONS).pop("gain", None)


@gt.graph
def scales_global(s, x):
    scale[1, 8, s](GLOBAL, 2.0, x)


def test_an_argument_sharing_memory_with_an_array_reached_by_name_is_named(info):
    scales_global(GLOBAL)
    info.clear()
    scales_global(dev_ones(8, np.float32))
    assert retrace_reason(info, "scales_global").endswith(
        "x and GLOBAL (reached by name) no longer share memory")


def test_a_method_on_another_instance_is_named(info):
    class M:
        @gt.graph
        def step(self, s, x):
            s.memset(x, 0)
    x = dev_ones(4)
    M().step(x)
    info.clear()
    M().step(x)
    assert retrace_reason(info, "step") == \
        "the signature differs from the closest cached one: self: another instance"


def test_a_cleared_cache_and_another_backend_are_the_reasons_given(info):
    @gt.graph
    def f(s, x):
        s.memset(x, 0)
    x = dev_ones(4)
    f(x)
    f.clear_cache()
    info.clear()
    f(x)
    assert retrace_reason(info, "f") == \
        "its graph is no longer cached (dropped from a full cache, or cleared)"
    key = f.signature(x)
    assert log.why_traced(f, "gpu", key, [("sim", key)]) == "another backend: gpu (cached for sim)"


def test_a_full_cache_logs_what_it_drops(info):
    @gt.graph(maxsize=1)
    def f(s, x):
        s.memset(x, 0)
    f(dev_ones(4))
    f(dev_ones(5))
    assert messages(info, "f: cache full") == \
        ["f: cache full (maxsize=1): dropped the least recently used graph"]


def test_a_call_with_new_arrays_logs_the_nodes_it_updates(info):
    @gt.graph
    def f(s, x, y, a):
        scale[1, 8, s](x, a, y)
        s.memset(x, 0)
    x, y = dev_ones(8), dev_ones(8)
    f(x, y, 2.0)
    info.clear()
    f(x, dev_ones(8), 2.0)
    f(x, dev_ones(8), 3.0)
    f(x, y, 3.0)               # only y changes back: one node
    assert messages(info, "rebind") == ["rebind f: 1 of 2 nodes use new arrays or numbers"] * 3
    assert {r.levelno for r in info.records if r.getMessage().startswith("rebind")} == \
        {logging.DEBUG}
    info.clear()
    f(x, y, 3.0)               # the very same arguments: nothing to update
    assert messages(info, "rebind") == []


def test_nothing_is_computed_for_a_retrace_nobody_logs(monkeypatch, caplog):
    caplog.set_level(logging.WARNING, logger="graphtrace")
    monkeypatch.setattr(log, "differences", None)   # would fail if called

    @gt.graph
    def f(s, x):
        s.memset(x, 0)
    f(dev_ones(8))
    f(dev_ones(9))
    assert f.cache_info().misses == 2


def test_describing_a_key_difference_names_device_and_pinned_memory():
    x = A(8)
    key = g.signature(x, [], 1, 1.0)
    parts, fixed, alias = key
    arr = parts[0]
    moved = ((arr[0], (arr[1][0], arr[1][1], arr[1][2], 1, True)),) + parts[1:]
    assert log.differences(g.params, key, (moved, fixed, alias)) == \
        ["x: device 0 -> 1", "x: pinned False -> True"]


LOGGED_H = gt.pinned_empty(4)
LOGGED_L: list = []


def _report_logged():   # a host callback reaching a host array and a list by name
    return str((LOGGED_H, LOGGED_L))


@gt.graph
def copies_and_reports(s, x):
    s.copy(LOGGED_H, x)
    for h in LOGGED_L:     # the graph's own list (what only the callback reaches is not)
        s.copy(h, x)
    s.host(_report_logged)


def test_the_retrace_reason_names_arrays_a_callback_reaches_without_failing(info):
    x = cuda.to_device(np.arange(4.0))
    copies_and_reports(x)
    LOGGED_L.append(LOGGED_H)   # a list the graph reaches now holds an array
    try:
        copies_and_reports(x)   # the reason logged: it raised IndexError
        reason = retrace_reason(info, "copies_and_reports")
        assert "now share memory" in reason
        assert LOGGED_H.tolist() == [0.0, 1.0, 2.0, 3.0]
    finally:
        LOGGED_L.clear()


GAIN = 2.0


def _factor():   # a function argument reading a value by a global name
    return GAIN


@gt.graph
def scales_by(s, x, out, fn):
    scale[1, 4, s](x, fn(), out)


def test_a_retrace_because_a_function_argument_reads_another_value_is_described(info):
    global GAIN
    x, out = cuda.to_device(np.arange(4.0)), cuda.to_device(np.zeros(4))
    scales_by(x, out, _factor)
    GAIN = 3.0
    try:
        scales_by(x, out, _factor)   # the reason logged: it raised TypeError
        assert retrace_reason(info, "scales_by").endswith(
            "fn: a function argument; what it reads changed")
    finally:
        GAIN = 2.0

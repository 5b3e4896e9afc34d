"""The compiled tracing path (``_speedups.c``) records what the pure-Python one
does: the same nodes, sources, streams, dependencies and errors, for the
launches it takes (``Stream.launch`` and ``kernel.again``) and the cases it
hands back (regions, conditional bodies, two devices, keywords, tuples)."""
import inspect
import threading

import pytest
from hypothesis import given, settings, strategies as st

import graphtrace as gt
from graphtrace import arrays as _arrays, regions, trace as _trace
from graphtrace.errors import GraphtraceError
from graphtrace.ops import kernel as _kernel
from graphtrace.stream import Stream
from helpers import FakeDeviceArray as A, any_kernel, compiled_buffers, launch_path
from test_trace_memo import MEMO_MISSES, MEMO_SIZES, STEPS, _program, memo_limits

pytestmark = pytest.mark.skipif(
    _kernel.speedups_module is None,
    reason="graphtrace._speedups is not built (no C compiler at install; "
           "tools/build_speedups.py builds it in a checkout) or GRAPHTRACE_PURE_PYTHON is set")

K = any_kernel("k")


def _nodes(graph):
    """Every node of ``graph`` and its regions, as what a recording decides."""
    out = []
    for n in graph.nodes:
        out.append((n.index, n.kind, n.source, n.stream, n.opaque, n.device,
                    [d.index for d in n.deps], [(b.label, b.ptr, b.shape, b.strides, m)
                                                for b, m in n.accesses]))
        for region in getattr(n, "regions", ()) or ():
            out.extend(_nodes(region))
    return out


def _both(make, *args):
    """``(listing, nodes)`` of ``make()``'s trace by each path, compiled first."""
    out = []
    for path in ("compiled", "pure Python"):
        with launch_path(path):
            g = make().trace(*args)
            out.append((str(g), _nodes(g)))
    return out


@settings(max_examples=150, deadline=None)
@given(STEPS, MEMO_SIZES, MEMO_MISSES)
def test_both_paths_record_the_same_graph(steps, size, misses):
    arrays = [A(64), A(64), A(64)]
    with memo_limits(size, misses):
        compiled, pure = _both(lambda: _program(steps), *arrays)
    assert compiled == pure


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 11), min_size=1, max_size=60), st.booleans(), MEMO_SIZES)
def test_arrays_reached_in_a_list_record_alike_in_any_order_of_use(order, runs, size):
    """A launch finds a named array's cache entry after the last one found (arrays
    used in the order named) or by its id: either way the very entry of that
    array, whatever the order of use, repeats and views in between."""
    arrays = [A(64) for _ in range(12)]
    uses = sorted(order) if runs else order   # in the order named, or any

    def make():
        @gt.graph
        def f(s, out):
            for k in uses:
                s.launch(K, 1, 32, arrays[k], out)
                if k % 5 == 0:
                    s.launch(K, 1, 32, arrays[k][:32], arrays[(k + 1) % 12])
        return f

    with memo_limits(size, 1):
        compiled, pure = _both(make, A(64))
    assert compiled == pure


def _helper(s, x, y):
    s.launch(K, 1, 32, x, y)   # the source of a launch issued in a helper


def test_sources_are_the_users_lines_in_helpers_comprehensions_and_loops():
    def make():
        def f(s, x, y):
            for _ in range(3):
                s.launch(K, 1, 32, x, y)
                _helper(s, x, y)
            [s.launch(K, 1, 32, y, x) for _ in range(2)]
            (lambda: s.launch(K, 1, 32, x, y))()
            with s.while_loop(gt.cond(x[0:1]) > 0, max_iterations=2) as body:
                body.launch(K, 1, 32, x, y)
                _helper(body, x, y)
        return gt.graph(f)
    compiled, pure = _both(make, A(64), A(64))
    assert compiled == pure
    sources = [node[2] for node in compiled[1]]
    assert len(set(sources)) == 6   # each launching line, the helper's once
    assert all(src[0] == __file__ for src in sources)


def test_a_kernel_off_the_memo_and_launches_with_options_take_the_python_path():
    def make():
        def f(s, x, y):
            for i in range(40):   # new views every launch: the kernel leaves the memo
                s.launch(K, 1, 32, x[i:i + 8], y[i:i + 8])
            s.launch(K, (1, 1), 32, x, y)
            s.launch(K, 1, 32, x, y, shared_mem=64)
            s.launch(K, 1, 32, x, y, opaque=True)
            s.fork().launch(K, 1, 32, y, x)
        return gt.graph(f)
    compiled, pure = _both(make, A(64), A(64))
    assert compiled == pure
    assert len(compiled[1]) == 44


class _Claims(A):
    """A device array whose ``__class__`` claims another class: isinstance believes
    it, so the compiled path must ask isinstance as Python does."""

    def __init__(self, n, claim):
        super().__init__(n)
        self._claim = claim

    @property
    def __class__(self):
        return self._claim


@pytest.mark.parametrize("claim", [list, gt.In, A])
def test_an_array_claiming_another_class_is_taken_as_python_takes_it(claim):
    def make():
        def f(s, x, y):
            for i in range(70):   # new views every launch: the kernel leaves the memo
                s.launch(K, 1, 32, x[i:i + 8], y[i:i + 8])
            s.launch(K, 1, 32, _Claims(8, claim), y)
        return gt.graph(f)

    def run(path):
        with launch_path(path):
            return _error(lambda: make().trace(A(128), A(128))) or "traced"
    assert run("compiled") == run("pure Python")


def _error(fn):
    try:
        fn()
    except Exception as e:   # the class and message must agree between the paths
        return type(e), str(e)
    return None


class _Checked(_kernel.Adapter):
    """A kernel that refuses the number 13.0 when a launch is recorded."""

    def validate(self, args):
        if 13.0 in [a for a in args if type(a) is float]:
            raise _kernel.KernelArgumentError("checked takes no 13.0")


@pytest.mark.parametrize("last", ["opaque", "validated", "refused by validate",
                                  "host memory", "an address", "an address, opaque",
                                  "a large number"])
def test_a_kernel_off_the_memo_records_and_refuses_as_python_does(last):
    """Launches of a kernel no longer remembered are recorded by the compiled path
    without Tracer.add: its checks (host memory, validate, addresses) and the
    adapter's opacity are those of the Python path."""
    import numpy as np
    kern = _Checked(None, "checked") if "valid" in last else \
        _kernel.Adapter(None, "op", opaque=True) if "opaque" in last else K
    x, y = A(64), A(64)
    extra = {"refused by validate": 13.0, "host memory": np.zeros(8, np.float32),
             "an address": x.ptr + 8, "an address, opaque": x.ptr + 8,
             "a large number": 1 << 62}.get(last, 2.0)

    def make():
        def f(s, x, y):
            for i in range(6):   # new views at every launch: the kernel leaves the memo
                s.launch(kern, 1, 32, x[i:i + 8], 3.0, y[i:i + 8])
            s.launch(kern, 1, 32, x[8:16], extra, y)
        return gt.graph(f)

    out = []
    with memo_limits(_trace._MEMO_SIZE, 1):
        for path in ("compiled", "pure Python"):
            with launch_path(path):
                out.append(_error(lambda: make().trace(x, y)) or
                           (str(make().trace(x, y)), _nodes(make().trace(x, y))))
    assert out[0] == out[1]
    refused = last in ("refused by validate", "host memory", "an address")
    assert isinstance(out[0][0], type) == refused
    if last.endswith("opaque"):
        assert all(node[4] for node in out[0][1])



@pytest.mark.parametrize("misuse", ["after the trace", "another thread", "no arguments",
                                    "no block", "bool grid", "float in a grid"])
def test_misuse_raises_the_same_error_on_both_paths(misuse):
    x = A(64)
    out = []
    for path in ("compiled", "pure Python"):
        with launch_path(path):
            kept = []

            @gt.graph
            def f(s, x):
                s.launch(K, 1, 32, x, x)
                if misuse == "another thread":
                    t = threading.Thread(target=lambda: kept.append(
                        _error(lambda: s.launch(K, 1, 32, x, x))))
                    t.start()
                    t.join()
                elif misuse == "no arguments":
                    kept.append(_error(lambda: s.launch()))
                elif misuse == "no block":
                    kept.append(_error(lambda: s.launch(K, 1)))
                elif misuse == "bool grid":   # not an int: refused at this line
                    kept.append(_error(lambda: s.launch(K, True, 32, x, x)))
                elif misuse == "float in a grid":   # equal to (1,), which is remembered
                    s.launch(K, (1,), 32, x, x)
                    kept.append(_error(lambda: s.launch(K, (1.0,), 32, x, x)))
                kept.append(s)
            f.trace(x)
            if misuse == "after the trace":
                kept.insert(0, _error(lambda: kept[-1].launch(K, 1, 32, x, x)))
            out.append(kept[0])
    assert out[0] is not None and out[0] == out[1]
    if misuse in ("after the trace", "another thread"):
        assert issubclass(out[0][0], GraphtraceError)
        assert "outside its trace" in out[0][1]


def test_traces_in_two_threads_at_once_record_each_their_own():
    x, y = A(64), A(64)

    def make(n, ready=None):
        def f(s, x, y):
            if ready is not None:
                ready.wait()   # both traces active: each thread's launches interleave
            for i in range(n):
                s.launch(K, 1, 32, x, y)
                s.launch(K, 1, 32, y, x)
        return gt.graph(f)

    alone = {n: _nodes(make(n).trace(x, y)) for n in (5, 7)}
    ready, got = threading.Barrier(2), {}

    def run(n):
        got[n] = _nodes(make(n, ready).trace(x, y))
    threads = [threading.Thread(target=run, args=(n,)) for n in (5, 7)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got[5]) == 10 and len(got[7]) == 14
    for n in (5, 7):   # the same but for the source's line (the barrier's branch)
        assert [node[3:] for node in got[n]] == [node[3:] for node in alone[n]]


def test_the_compiled_launch_keeps_the_methods_name_doc_and_signature():
    python_launch = Stream.launch.__wrapped__
    assert Stream.launch.__doc__ == python_launch.__doc__
    assert Stream.launch.__name__ == "launch"
    assert inspect.signature(Stream.launch) == inspect.signature(python_launch)

    @gt.graph
    def f(s, x):
        assert inspect.signature(s.launch) == inspect.signature(python_launch.__get__(s))
        s.launch(K, 1, 32, x, x)
    f.trace(A(64))


def test_again_refuses_bad_arguments():
    fast = _kernel.speedups_module
    with pytest.raises(TypeError):
        fast.again(None, K, 1, 32, None)
    with pytest.raises(TypeError):
        fast.again(None, K, 1, 32, None, [1, 2])


NUMBA_STEPS = st.lists(st.tuples(st.integers(0, 1), st.lists(st.integers(0, 4), min_size=3,
                                                             max_size=3),
                                 st.integers(0, 5), st.sampled_from([(1, 32), (2, 32), (1, 64)])),
                       max_size=25)


def _numba_program(steps):
    """numba's launch syntax on a proxy stream: ``kernel[grid, block, s]`` (the
    compiled path), with shared memory or tuples (the Python one), on a forked
    stream and in a loop's body, with views made again at each launch."""
    from numba import cuda
    from step_kernels import add, scale

    def f(s, x, y, z):
        pool = [lambda: x, lambda: y, lambda: z, lambda: x[0:16], lambda: y[16:32]]
        other = s.fork()
        for k, picks, where, (g, b) in steps:
            arrays = [pool[p]() for p in picks]
            kernel, args = (scale, (arrays[0], 2.0, arrays[1])) if k == 0 else \
                (add, (arrays[0], arrays[1]))
            if where == 0:
                kernel[g, b, s](*args)
            elif where == 1:
                kernel[g, b, other](*args)
            elif where == 2:
                kernel[1, 32, s, 0](*args)
            elif where == 3:
                kernel[(1,), (32,), s](*args)
            elif where == 4:
                with s.while_loop(gt.cond(z[0:1]) > 0, max_iterations=2) as body:
                    kernel[1, 32, body](*args)
            else:
                launch = kernel[g, b, s]
                launch(*args)
                launch(*args)
        s.join(other)
    arrays = [cuda.to_device(__import__("numpy").zeros(64, "float32")) for _ in range(3)]
    return gt.graph(f), arrays


@settings(max_examples=60, deadline=None)
@given(NUMBA_STEPS)
def test_numba_launch_syntax_records_the_same_graph_on_both_paths(steps):
    f, arrays = _numba_program(steps)
    compiled, pure = _both(lambda: f, *arrays)
    assert compiled == pure


def test_numba_launch_syntax_is_compiled_only_for_a_proxy_stream():
    import numpy as np
    from numba import cuda
    from step_kernels import add
    x, y = cuda.to_device(np.ones(32)), cuda.to_device(np.ones(32))
    seen = []
    with launch_path("compiled"):
        @gt.graph
        def f(s, x, y):
            launch = add[1, 32, s]
            seen.append((type(launch).__name__, repr(launch)))
            with pytest.raises(gt.KernelArgumentError, match=r"keyword arguments \(x=\.\.\.\)"):
                launch(x=1)
            launch(x, y)
        assert len(f.trace(x, y).nodes) == 1
        assert seen[0][0] == "ProxyLaunch"
        assert "[1, 32] on <graphtrace proxy stream 0 of f>" in seen[0][1]
        assert getattr(type(add).__getitem__, "_graphtrace", False)
        eager = add[1, 32]   # numba's own configuration, outside a trace, as before
        assert type(eager).__name__ != "ProxyLaunch"
    eager(x, y)   # runs now
    assert y.copy_to_host()[0] == 2.0


class Device:
    """A device array type with the interface (helpers' fakes hold it per object,
    which makes them objects asked one by one): 1-D float32 views by slicing."""

    __slots__ = ("__cuda_array_interface__",)

    def __init__(self, n, ptr):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f4",
                                         "data": (ptr, False), "version": 3}

    def __getitem__(self, key):
        ptr = self.__cuda_array_interface__["data"][0]
        return Device(key.stop - key.start, ptr + 4 * key.start)


@pytest.mark.parametrize("compiled", [False, True], ids=["python views", "compiled views"])
def test_a_view_made_again_is_found_without_the_python_path(monkeypatch, compiled):
    calls = []
    entry = _trace.Tracer._entry

    def counting(self, obj):
        calls.append(obj)
        return entry(self, obj)
    monkeypatch.setattr(_trace.Tracer, "_entry", counting)
    # arrays tagged with simulated devices by other tests keep new views in Python
    monkeypatch.setattr(_arrays, "_sim_devices", {})

    @gt.graph
    def f(s, x, y):
        for i in range(20):   # the same two views, made again at every launch
            s.launch(K, 1, 32, x[0:8], y[i % 2:i % 2 + 8])
    x, y = Device(64, 1 << 44), Device(64, 1 << 45)
    with compiled_buffers(compiled), launch_path("compiled"):
        g = f.trace(x, y)
        made = compiled and regions.TAKE[0] is not None   # new views by _buffers.c's view
    assert len(g.nodes) == 20
    # each geometry once by the Python path (or by _buffers.c); then by its key,
    # in compiled code
    assert len(calls) == (0 if made else 3)
    with launch_path("pure Python"):
        calls.clear()
        assert str(f.trace(x, y)) == str(g)
    assert len(calls) == 40


def test_a_kernel_off_the_memo_is_recorded_without_tracer_add(monkeypatch):
    calls = []
    add = _trace.Tracer.add

    def counting(self, *args, **kwargs):
        calls.append(args[3])
        return add(self, *args, **kwargs)
    monkeypatch.setattr(_trace.Tracer, "add", counting)

    off = []

    @gt.graph
    def f(s, x, y):
        for i in range(20):   # new views at every launch: the kernel leaves the memo
            s.launch(K, 1, 32, x[i:i + 8], y[i:i + 8])
            off.append(id(K) in s.tracer().memo_off)
    x, y = A(64), A(64)
    with memo_limits(_trace._MEMO_SIZE, 3), launch_path("compiled"):
        g = f.trace(x, y)
    assert len(g.nodes) == 20
    assert calls == []   # remembered or not, in compiled code
    assert off == [False] * 3 + [True] * 17   # off the memo at its fourth miss
    off.clear()
    with memo_limits(_trace._MEMO_SIZE, 3), launch_path("pure Python"):
        calls.clear()
        f.trace(x, y)
        assert len(calls) == 20
    monkeypatch.undo()   # the counting frame stood for the user's in a few sources
    with memo_limits(_trace._MEMO_SIZE, 3):
        compiled, pure = _both(lambda: f, x, y)
    assert compiled == pure

"""The call path under warnings made errors, many signatures, and a graph function
handed to s.host."""
import functools
import gc
import warnings
import weakref

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of


@cuda.jit
def inc(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


class Counter:
    def __init__(self):
        self.t = 0
        self.x = cuda.to_device(np.zeros(2, np.float32))

    @gt.graph(backend="sim")
    def step(self, s):
        self.t += 1   # state: changed once, when traced
        inc[1, 2, s](self.x)


def test_a_state_warning_made_an_error_does_not_throw_the_trace_away():
    c = Counter()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(gt.StateWarning):
            c.step()
        c.step()   # the graph was cached before the warning: not traced again
    assert c.t == 1
    assert Counter.step.cache_info().misses == 1
    assert c.x.copy_to_host().tolist() == [1, 1]
    Counter.step.clear_cache()


class Big:
    def __init__(self):
        self.blob = np.zeros(1000)


def test_the_retrace_warning_keeps_no_signature_after_it_is_given():
    @gt.graph(static=("cfg",), maxsize=2, backend="sim")
    def f(s, x, cfg):
        inc[1, 2, s](x)

    x = cuda.to_device(np.zeros(2, np.float32))
    refs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(20):
            cfg = Big()
            refs.append(weakref.ref(cfg))
            f(x, cfg)
            del cfg
    gc.collect()
    alive = sum(r() is not None for r in refs)
    assert alive <= 2 + 1, alive   # the cached graphs' (maxsize), and the last call's


def test_a_graph_function_handed_to_s_host_is_refused_at_the_line():
    @gt.graph(backend="sim")
    def g(s, h):
        pass

    @gt.graph(backend="sim")
    def f(s, h):
        s.host(g, h)   # the line named

    h = gt.pinned_empty(2) if hasattr(gt, "pinned_empty") else np.zeros(2)
    with pytest.raises(gt.ArgumentError, match="is a graph function") as e:
        f.trace(h)
    assert e.value.source[1] == line_of(__file__, "the line named")


def _logged(fn):   # a decorator's wrapper made without functools.wraps
    def wrapper(*a, **k):
        return fn(*a, **k)
    return wrapper


def test_a_wrapper_hiding_the_stream_parameter_is_refused_where_decorated():
    """Its ``*a`` was taken for the stream parameter: the call failed deep in
    inspect with a message about unpacking if_else and switch."""
    with pytest.raises(TypeError, match="without functools.wraps") as e:
        @gt.graph(backend="sim")
        @_logged
        def f(s, x):
            inc[1, 2, s](x)
    assert "*a" in str(e.value) and "@functools.wraps(fn)" in str(e.value)


@cuda.jit
def _scale_into(x, a, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i]


def _wrapped_by(wrapper_of):
    """A graph function over a functools.wraps wrapper of ``step(s, x, y, a=1.0)``."""
    def step(s, x, y, a=1.0):
        _scale_into[1, 4, s](x, a, y)
    return gt.graph(backend="sim")(wrapper_of(step))


def _louder(fn):          # its own default
    @functools.wraps(fn)
    def w(s, x, y, a=5.0):
        return fn(s, x, y, a)
    return w


def _fixed(fn):           # supplies a parameter
    @functools.wraps(fn)
    def w(s, x, y):
        return fn(s, x, y, 3.0)
    return w


def _verbose(fn):         # passes *args on and takes a keyword of its own
    @functools.wraps(fn)
    def w(*args, twice=False, **kwargs):
        fn(*args, **kwargs)
        if twice:
            fn(*args, **kwargs)
    return w


@pytest.mark.parametrize("wrapper_of, calls", [
    (_louder, [((), 5.0), ((2.0,), 2.0), ((), 5.0)]),
    (_fixed, [((), 3.0), ((), 3.0)]),
    (_verbose, [((), 1.0), ((4.0,), 4.0), ((2.0,), 2.0)])])
def test_a_functools_wraps_wrapper_is_called_as_its_own_signature_says(wrapper_of, calls):
    """The wrapped function's signature bound the call: its default (1.0) replaced
    the wrapper's (5.0), and a wrapper supplying a or taking a keyword of its own
    was refused as missing a or given an unexpected keyword."""
    f = _wrapped_by(wrapper_of)
    xh = np.arange(1.0, 5.0)
    for extra, a in calls:
        x, y = cuda.to_device(xh), cuda.to_device(np.zeros(4))
        f(x, y, *extra)
        assert y.copy_to_host().tolist() == (a * xh).tolist()
    if wrapper_of is _verbose:
        x, y = cuda.to_device(xh), cuda.to_device(np.zeros(4))
        f(x, y, 2.0, twice=True)
        assert y.copy_to_host().tolist() == (2.0 * xh).tolist()
        assert list(f._sig.parameters) == ["s", "x", "y", "a", "twice"]


@gt.graph(backend="sim")
def _act(s, x):
    inc[1, 2, s](x)


class _Layer:
    def __init__(self, fn):
        self.fn, self.x = fn, cuda.to_device(np.zeros(2, np.float32))


def test_an_object_holding_a_graph_function_copies_and_pickles_with_it_as_itself():
    """A graph function is copied and pickled as a function is, by itself and by
    its name: deepcopy failed on its lock, pickle on its name's object."""
    import copy
    import pickle
    layer = _Layer(_act)
    assert copy.copy(_act) is _act and copy.deepcopy(_act) is _act
    assert pickle.loads(pickle.dumps(_act)) is _act
    twin = copy.deepcopy(_Layer(_act).__dict__ | {"x": None})
    assert twin["fn"] is _act
    twin = copy.copy(layer)
    assert twin.fn is _act
    twin.fn(twin.x)
    assert twin.x.copy_to_host().tolist() == [1.0, 1.0]


class _Model:
    def __init__(self):
        self.scale = 2

    @gt.graph(backend="sim")
    def step(self, s, x):
        inc[1, 2, s](x)


def test_a_decorated_method_bound_to_its_object_copies_and_pickles_as_a_bound_method():
    """``model.step`` pickles and copies as a bound method does: the object's
    attribute again. Both failed with RecursionError: the object being made
    asked its unset ``function`` through ``__getattr__``."""
    import copy
    import pickle
    model = _Model()
    for twin in (copy.copy(model.step), copy.deepcopy(model.step),
                 pickle.loads(pickle.dumps(model.step))):
        assert twin.function is _Model.step and type(twin.instance) is _Model
        x = cuda.to_device(np.zeros(2, np.float32))
        twin(x)
        assert x.copy_to_host().tolist() == [1.0, 1.0]
    assert copy.copy(model.step).instance is model


@gt.graph(backend="sim")
def _bump(s, x):
    inc[1, 2, s](x)


def test_a_compiled_handle_launched_while_tracing_is_refused_at_its_line():
    """It ran at once, during the trace, and the graph replayed without it."""
    x = cuda.to_device(np.zeros(2, np.float32))
    h = _bump.compile(x)

    @gt.graph(backend="sim")
    def outer(s, y):
        h.launch()   # handle in trace
        inc[1, 2, s](y)
    with pytest.raises(gt.TraceError) as e:
        outer(cuda.to_device(np.zeros(2, np.float32)))
    assert e.value.source[1] == line_of(__file__, "handle in trace")
    assert "the proxy stream" in str(e.value)
    assert x.copy_to_host().tolist() == [0.0, 0.0]   # nothing ran


_OTHER = gt.pinned_empty(2, np.float32)   # (a device array a callback reads is refused at s.host)


def _graph_calling(other=None):
    """A graph function whose host callback calls ``other``, or itself."""
    def callback():
        (other or f)(_OTHER)   # graph from callback

    @gt.graph(backend="sim")
    def f(s, x):
        inc[1, 2, s](x)
        s.host(callback)
    return f


def test_a_graph_function_called_from_a_host_callback_is_refused_at_its_line():
    """The same function from its own callback waited forever for its own lock on
    the simulator; on a GPU, CUDA allows no CUDA call in a host callback."""
    x = cuda.to_device(np.zeros(2, np.float32))
    for f in (_graph_calling(_bump), _graph_calling()):
        with pytest.raises(gt.GraphtraceError) as e:
            f(x)
        assert e.value.source[1] == line_of(__file__, "graph from callback")
        assert "host callback" in str(e.value)

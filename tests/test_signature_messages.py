"""What a call's arguments may not do, each refused at the user's line with what to
do instead: ``type(a)`` of a dynamic scalar, a ``stream=`` that is no stream, too many
positional arguments; and the keywords trace, compile and profile take."""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of

# launches recorded by the compiled path (_speedups.c) and by pure Python
pytestmark = pytest.mark.usefixtures("both_launch_paths")

F = __file__


@cuda.jit
def addc(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += a


def at(err, marker) -> None:
    """``err`` names the line of this file marked ``marker``."""
    assert err.source == (F, line_of(F, marker)), str(err)
    assert str(err).startswith(f"test_signature_messages.py:{line_of(F, marker)}: ")


# --- type(a) of a dynamic scalar ---------------------------------------------

def test_type_of_a_dynamic_scalar_compared_is_refused_at_its_line():
    """``type(a) is float`` was silently False (type() reads the stand-in's own
    type), so the graph recorded the other branch."""
    @gt.graph
    def f(s, x, a):
        if type(a) is float:   # type-is
            addc[1, 32, s](x, a)
        else:
            addc[1, 32, s](x, 100.0)
    with pytest.raises(gt.DynamicScalarError) as e:
        f(cuda.to_device(np.zeros(4)), 1.5)
    at(e.value, "type-is")
    assert "isinstance(a, float)" in str(e.value) and "static=('a',)" in str(e.value)


def test_type_of_a_dynamic_scalar_as_a_dtype_is_refused_at_its_line():
    """Refused where the temporary is made (type(a) as an argument decides nothing
    by itself, so the function's code does not refuse it before it runs)."""
    @gt.graph
    def g(s, x, a):
        t = s.empty(x.shape, type(a))   # type-dtype
        s.copy(t, x)
    with pytest.raises(gt.ArgumentError) as e:
        g(cuda.to_device(np.zeros(4, np.float32)), np.float32(2.0))
    at(e.value, "type-dtype")
    assert "dynamic scalar" in str(e.value) and "a.dtype" in str(e.value)


def test_type_of_a_dynamic_scalar_in_a_nested_function_is_refused():
    @gt.graph
    def f(s, x, a):
        kind = (lambda: type(a))()   # type-lambda
        addc[1, 32, s](x, 1.0 if kind is int else 2.0)
    with pytest.raises(gt.DynamicScalarError) as e:
        f(cuda.to_device(np.zeros(4)), 3)
    at(e.value, "type-lambda")


def test_type_of_a_dynamic_scalar_of_a_nested_graph_function_is_refused():
    @gt.graph
    def inner(s, x, b):
        addc[1, 32, s](x, 1.0 if type(b) is float else 2.0)   # type-inner

    @gt.graph
    def outer(s, x, a):
        inner(s, x, a)
    with pytest.raises(gt.DynamicScalarError) as e:
        outer(cuda.to_device(np.zeros(4)), 1.5)
    at(e.value, "type-inner")


def test_a_dtype_of_a_dynamic_scalars_type_reached_otherwise_is_refused():
    """``type(cfg["a"])``: the stand-in's type handed to ``s.empty`` said only that a
    temporary cannot hold Python objects."""
    @gt.graph
    def g(s, x, cfg):
        t = s.empty(x.shape, type(cfg["a"]))   # type-held
        s.copy(t, x)
    with pytest.raises(gt.ArgumentError) as e:
        g(cuda.to_device(np.zeros(4, np.float32)), {"a": np.float32(2.0)})
    at(e.value, "type-held")
    assert "dynamic scalar" in str(e.value) and "a.dtype" in str(e.value)


def test_type_of_a_dynamic_scalar_that_decides_nothing_is_not_refused():
    """An error message after ``isinstance``, an assert's message, a print: these ran
    before such uses were refused, and decide nothing for a number."""
    @gt.graph
    def validate(s, x, a):
        if not isinstance(a, (int, float)):
            raise TypeError(f"a must be a number, got {type(a).__name__}")
        addc[1, 32, s](x, a)

    @gt.graph
    def asserted(s, x, a):
        assert isinstance(a, float), f"got {type(a)}"
        addc[1, 32, s](x, a)

    @gt.graph
    def branch(s, x, a):
        if isinstance(a, float):
            addc[1, 32, s](x, a)
        else:
            print("not a number:", type(a))
    x = cuda.to_device(np.zeros(4))
    validate(x, 1.0)
    asserted(x, 2.0)
    branch(x, 4.0)
    assert x.copy_to_host()[0] == 7.0


@pytest.mark.parametrize("use", [
    "type(a) == float", "float is type(a)", "type(a) is not float", "type(a) != float",
    "type(a) in (int, float)", "{float: True}.get(type(a), False)",
    "{float: True, int: False}[type(a)]", "type(a).__name__ == 'float'",
    "issubclass(type(a), float)"])
def test_type_of_a_dynamic_scalar_compared_or_looked_up_is_refused(use):
    ns = {"gt": gt, "addc": addc}
    exec(f"@gt.graph\ndef f(s, x, a):\n    addc[1, 32, s](x, 1.0 if {use} else 2.0)\n", ns)
    with pytest.raises(gt.DynamicScalarError, match=r"type\(a\) of dynamic scalar"):
        ns["f"](cuda.to_device(np.zeros(4)), 1.5)


def test_type_of_a_dynamic_scalar_kept_in_a_local_and_compared_is_refused():
    @gt.graph
    def f(s, x, a):
        kind = type(a)
        addc[1, 32, s](x, 1.0 if kind is float else 2.0)   # type-local
    with pytest.raises(gt.DynamicScalarError) as e:
        f(cuda.to_device(np.zeros(4)), 1.5)
    assert "type(a) of dynamic scalar" in str(e.value)


def test_type_of_a_static_or_rebound_parameter_is_not_refused():
    @gt.graph(static="a")
    def f(s, x, a):
        addc[1, 32, s](x, 1.0 if type(a) is float else 2.0)

    @gt.graph
    def g(s, x, a):
        a = 1.5 if isinstance(a, float) else 2.5
        addc[1, 32, s](x, 1.0 if type(a) is float else 2.0)
    x = cuda.to_device(np.zeros(4))
    f(x, 1.5)
    g(x, 3.0)
    assert x.copy_to_host()[0] == 2.0


def test_isinstance_of_a_dynamic_scalar_picks_by_its_type_and_keys_the_graph():
    @gt.graph
    def f(s, x, a):
        addc[1, 32, s](x, 1.0 if isinstance(a, float) else 10.0)
    x = cuda.to_device(np.zeros(4))
    f(x, 1.5)
    f(x, 2)
    assert x.copy_to_host()[0] == 11.0 and f.cache_info().misses == 2


# --- trace takes backend= as the call, compile and profile do -----------------

def test_trace_and_explain_take_a_backend_as_a_call_does():
    """``f.trace(..., backend="sim")`` said f had no parameter backend, though a call,
    ``compile`` and ``profile`` take it (a trace runs nothing: it is unused)."""
    @gt.graph
    def f(s, x, a):
        addc[1, 32, s](x, a)
    x = cuda.to_device(np.zeros(4))
    assert str(f.trace(x, 1.0, backend="sim")) == str(f.trace(x, 1.0))
    assert str(f.trace(x, 1.0, backend="gpu")) == str(f.trace(x, 1.0))
    assert str(gt.explain(f, x, 1.0, backend="sim")) == str(gt.explain(f, x, 1.0))
    with pytest.raises(ValueError, match="backend must be 'gpu' or 'sim'"):
        f.trace(x, 1.0, backend="cpu")


def test_trace_hands_a_parameter_named_backend_to_the_function():
    seen = []

    @gt.graph
    def f(s, x, backend):
        seen.append(backend)
        addc[1, 32, s](x, 1.0)
    f.trace(cuda.to_device(np.zeros(4)), backend="mine")
    assert seen == ["mine"]


# --- stream= is graphtrace's own keyword ---------------------------------------

def test_an_option_named_stream_for_star_star_opts_is_refused_at_the_call():
    """``g(x, a=1.0, stream=2.0)`` with ``def g(s, x, **opts)`` said only ``cannot
    launch on float``, naming no line."""
    @gt.graph
    def g(s, x, **opts):
        for k in sorted(opts):
            addc[1, 32, s](x, opts[k])
    x = cuda.to_device(np.zeros(4))
    with pytest.raises(gt.ArgumentError) as e:
        g(x, a=1.0, stream=2.0)   # option-stream
    at(e.value, "option-stream")
    assert isinstance(e.value, TypeError)
    for phrase in ("cannot launch on float", "stream= is graphtrace's own keyword",
                   "**opts", "rename the option"):
        assert phrase in str(e.value), str(e.value)
    with pytest.raises(gt.ArgumentError) as e:
        g(x, **{"a": 1.0, "stream": "fast"})   # option-stream-dict
    at(e.value, "option-stream-dict")
    with pytest.raises(gt.ArgumentError) as e:
        g.trace(x, a=1.0, stream=2.0)   # option-stream-trace
    at(e.value, "option-stream-trace")
    assert "rename the option" in str(e.value)


def test_no_stream_as_stream_is_refused_at_the_call_on_every_path():
    """The same arguments again (the call's fastest path) refused it as well."""
    @gt.graph
    def f(s, x, a):
        addc[1, 32, s](x, a)
    x = cuda.to_device(np.zeros(4))
    f(x, 1.0)
    f(x, 1.0)
    with pytest.raises(gt.ArgumentError) as e:
        f(x, 1.0, stream=1.5)   # again-stream
    at(e.value, "again-stream")
    assert "cannot launch on float" in str(e.value) and "rename" not in str(e.value)
    f(x, 1.0, stream=cuda.stream())
    assert x.copy_to_host()[0] == 3.0


# --- too many positional arguments ---------------------------------------------

def test_too_many_positional_arguments_counts_those_the_function_takes():
    """``f(x, 1.0, 2.0)`` for ``def f(s, x, a)`` said the proxy stream had been
    passed, which it had not."""
    @gt.graph
    def f(s, x, a, *, k=1):
        addc[1, 32, s](x, a)
    x = cuda.to_device(np.zeros(4))
    with pytest.raises(gt.ArgumentError) as e:
        f(x, 1.0, 2.0)   # one-too-many
    at(e.value, "one-too-many")
    assert "f takes 2 positional arguments (x, a) but 3 were given" in str(e.value)
    assert "not counting s, the proxy stream" in str(e.value)
    assert "receives the proxy stream" not in str(e.value)
    with pytest.raises(gt.ArgumentError) as e:
        f(x, 1.0, 2.0, 3.0)   # two-too-many
    at(e.value, "two-too-many")
    assert "f takes 2 positional arguments (x, a) but 4 were given" in str(e.value)


def test_too_many_positional_arguments_with_a_stream_first_says_it_is_passed_for_you():
    @gt.graph
    def f(s, x, a):
        addc[1, 32, s](x, a)
    with pytest.raises(gt.ArgumentError) as e:
        f(cuda.stream(), cuda.to_device(np.zeros(4)), 1.0)   # stream-first
    at(e.value, "stream-first")
    assert "but 3 were given" in str(e.value)
    assert "receives the proxy stream, which graphtrace passes itself: call it with " \
        "(x, a) only" in str(e.value)


def test_a_stream_passed_first_says_to_pass_it_as_stream_keyword():
    """``g(st, 2.0, x)`` said to call ``g(a, x)`` only, not how to run on ``st``."""
    @gt.graph
    def g(s, a, x):
        addc[1, 32, s](x, a)

    class Model:
        @gt.graph
        def step(self, s, x):
            addc[1, 32, s](x, 1.0)
    st, x = cuda.stream(), cuda.to_device(np.zeros(4))
    with pytest.raises(gt.ArgumentError) as e:
        g(st, 2.0, x)   # stream-positional
    at(e.value, "stream-positional")
    assert str(e.value).endswith("call it with (a, x) only; to run it on stream st, pass it "
                                 "as stream=st: g(2.0, x, stream=st)"), str(e.value)
    m = Model()
    with pytest.raises(gt.ArgumentError) as e:
        m.step(st, x)   # method-stream-positional
    at(e.value, "method-stream-positional")
    assert "to run it on stream st, pass it as stream=st: m.step(x, stream=st)" in \
        str(e.value)
    with pytest.raises(gt.ArgumentError) as e:
        g(*(st, 2.0, x))   # starred
    assert "to run it on that stream, pass it as stream=: g(..., stream=st)" in str(e.value)
    g(2.0, x, stream=st)   # as said: runs
    st.synchronize()
    assert x.copy_to_host().tolist() == [2.0] * 4


def test_too_many_positional_arguments_of_a_nested_graph_function_or_method():
    @gt.graph
    def inner(s, x, a):
        addc[1, 32, s](x, a)

    @gt.graph
    def outer(s, x):
        s.child(inner, x, 1.0, 2.0)   # child-too-many

    class Model:
        @gt.graph
        def step(self, s, x):
            addc[1, 32, s](x, 1.0)
    x = cuda.to_device(np.zeros(4))
    with pytest.raises(gt.ArgumentError) as e:
        outer(x)
    at(e.value, "child-too-many")
    assert "inner takes 2 positional arguments (x, a) but 3 were given" in str(e.value)
    assert "receives the proxy stream" not in str(e.value)
    with pytest.raises(gt.ArgumentError) as e:
        Model().step(x, x)   # method-too-many
    at(e.value, "method-too-many")
    assert "step takes 1 positional argument (x) but 2 were given" in str(e.value)

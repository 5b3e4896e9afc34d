"""Each misuse raises a clear error that names the user's line and says what to do."""
import enum
import functools
import numbers
import threading
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import FakeDeviceArray as A, line_of, any_kernel
from step_kernels import add

# launches recorded by the compiled path (_speedups.c) and by pure Python
pytestmark = pytest.mark.usefixtures("both_launch_paths")

F = __file__


@cuda.jit
def fill(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v


def check(excinfo, marker, *phrases):
    err = excinfo.value
    assert err.source[1] == line_of(F, marker), str(err)
    assert str(err).startswith(f"test_errors.py:{line_of(F, marker)}: ")
    for p in phrases:
        assert p in str(err)


def test_proxy_stream_used_after_its_trace():
    kept = []

    @gt.graph
    def f(s, x):
        kept.append(s)
    f.trace(A(8))
    with pytest.raises(gt.StreamError) as e:
        kept[0].memset(A(8), 0)                              # late
    check(e, "late", "outside its trace")


def test_proxy_stream_used_from_another_thread():
    errors = []

    @gt.graph
    def f(s, x):
        t = threading.Thread(target=lambda: errors.append(_try(lambda: s.memset(x, 0))))
        t.start()
        t.join()
    f.trace(A(8))
    assert isinstance(errors[0], gt.StreamError)


def _try(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return e


def test_untraceable_argument_type():
    @gt.graph
    def f(s, x):
        pass
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(bytearray(b"ab"))                             # badarg
    check(e, "badarg", "argument x of type bytearray", "hashable")


def test_a_numpy_record_argument_says_to_pass_a_one_element_record_array():
    """It was 'type void cannot be traced ... must be hashable, and is then static'."""
    @gt.graph
    def f(s, x):
        pass
    r = np.zeros(1, [("a", np.float64), ("b", np.int32)])[0]
    with pytest.raises(gt.ArgumentError) as e:
        f.trace([r])                                         # record-arg
    check(e, "record-arg", "argument x[0] is a numpy record (np.void)",
          "pass a one-element record array")


def test_pageable_host_memory_in_a_copy():
    @gt.graph
    def f(s, x, h):
        s.copy(h, x)                                         # pageable
    with pytest.raises(gt.PageableMemoryError) as e:
        f.trace(A(8), np.zeros(8, np.float32))
    check(e, "pageable", "copy destination h is pageable", "gt.pinned_empty")


def test_pinned_host_memory_is_accepted_in_a_copy():
    @gt.graph
    def f(s, x, h):
        s.copy(h, x)
    g = f.trace(A(8), gt.pinned_empty(8, np.float32))
    assert g.nodes[0].kind == "memcpy"


def test_mismatched_shapes_in_a_copy():
    @gt.graph
    def f(s, x, y):
        s.copy(y, x)                                         # shapes
    with pytest.raises(gt.ShapeMismatchError) as e:
        f.trace(A(8), A(4))
    check(e, "shapes", "float32[8]", "float32[4]", "matching views")


def test_mismatched_dtypes_in_a_copy():
    @gt.graph
    def f(s, x, y):
        s.copy(y, x)                                         # dtypes
    with pytest.raises(gt.ShapeMismatchError) as e:
        f.trace(A(8, "float32"), A(8, "int32"))
    check(e, "dtypes", "float32[8]", "int32[8]", "convert float32 into int32 with a kernel")
    assert "view(" not in e.value.message   # a view of other elements reinterprets bytes


@pytest.mark.parametrize("call, spelling", [("copy", "s.copy(dst, src)"),
                                            ("memset", "s.memset(dst, value)")])
def test_a_copy_or_memset_missing_an_argument(call, spelling):
    """s.copy(x) raised Python's bare TypeError, with no line of the user's."""
    @gt.graph(static=("call",))
    def f(s, x, call):
        getattr(s, call)(x)                                  # one argument
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(8), call)
    check(e, "one argument", spelling, "is missing an argument")


@pytest.mark.parametrize("call, spelling", [("copy", "s.copy(dst, src)"),
                                            ("memset", "s.memset(dst, value)")])
def test_a_copy_or_memset_given_too_many_arguments(call, spelling):
    """s.copy(y, x, x) raised Python's bare TypeError ("takes from 1 to 3
    positional arguments", counting self), with no line of the user's."""
    @gt.graph(static=("call",))
    def f(s, x, call):
        getattr(s, call)(x, x, 2)                            # three arguments
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(8), call)
    check(e, "three arguments", spelling, "was given 1 argument too many")


@pytest.mark.parametrize("code", ["s.copy(gt.Out(y), x)", "s.copy(y, gt.In(x))",
                                  "s.memset(gt.Out(y), 1.0)"])
def test_an_intent_wrapper_in_a_copy_or_memset_says_to_pass_the_array(code):
    """gt.Out(y) in s.copy was "dst is a Out, not an array"."""
    f = gt.graph(eval(f"lambda s, x, y: {code}"))
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(8), A(8))
    assert "tells a kernel launch what it does with an array" in str(e.value) and \
        "pass the array itself" in str(e.value), str(e.value)


def test_proxy_stream_synchronize():
    @gt.graph
    def f(s):
        s.synchronize()                                      # sync
    with pytest.raises(gt.HostSyncError) as e:
        f.trace()
    check(e, "sync", "s.host")


def test_library_synchronize_inside_a_trace():
    @gt.graph
    def f(s):
        cuda.synchronize()                                   # libsync
    with pytest.raises(gt.HostSyncError) as e:
        f.trace()
    check(e, "libsync", "synchronize() inside a trace")
    cuda.synchronize()  # outside a trace it still works


def test_dynamic_scalar_in_control_flow():
    @gt.graph
    def f(s, x, n):
        if n > 3:                                            # control
            s.memset(x, 0)
    with pytest.raises(gt.DynamicScalarError) as e:
        f.trace(A(8), 4)
    check(e, "control", "'n' is a dynamic scalar", "static=('n',)")


@pytest.mark.parametrize("op", ["divmod(n, 32)", "divmod(32, n)", "1 << n", "1 >> n",
                                "0xff & n", "1 | n", "1 ^ n", "~n", "math.trunc(n)",
                                "math.floor(n)", "math.ceil(n)", "n @ 2", "2 @ n", "2 % n",
                                "2 ** n", "+n", "abs(n)", "round(n)"])
def test_every_operator_on_a_dynamic_scalar_is_refused_at_the_users_line(op):
    """divmod, the reflected bit operators, ~, math.trunc and @ raised a bare
    TypeError naming graphtrace's Scalar, with no line and no advice."""
    import math
    use = eval(f"lambda n: {op}", {"math": math})

    @gt.graph
    def f(s, x, n):
        s.launch(fill, 1, 32, x, use(n))                     # operator
    with pytest.raises(gt.DynamicScalarError) as e:
        f.trace(A(8), 5)
    assert e.value.source == ("<string>", 1)   # the lambda's line: the user's code
    assert "'n' is a dynamic scalar" in e.value.message and "static=('n',)" in e.value.message
    assert "compute the number outside the function and pass the result as an argument" \
        in e.value.message


@pytest.mark.parametrize("how", ["mean", "fraction", "template"])
def test_a_dynamic_scalar_refused_in_the_standard_library_names_the_users_line(how):
    """statistics.mean([n, n]) was refused at statistics.py's line, not the user's;
    string.Template's str(n) is still refused (not shown as the name, as a
    listing's is)."""
    import statistics
    import string
    uses = {"mean": lambda n: statistics.mean([n, n]),                    # mean
            "fraction": lambda n: float(Fraction(n)),                       # fraction
            "template": lambda n: len(string.Template("$n").substitute(n=n))}  # template

    @gt.graph(static=("how",))
    def f(s, x, n, how):
        s.launch(fill, 1, 32, x, uses[how](n))
    with pytest.raises(gt.DynamicScalarError) as e:
        f.trace(A(8), 2, how)
    check(e, how, "'n' is a dynamic scalar", "static=('n',)")


@pytest.mark.parametrize("use", [np.sqrt, lambda n: np.clip(n, 0, 1), np.asarray,
                                 lambda n: n.real, lambda n: n.astype(np.float32)])
def test_dynamic_scalar_given_to_numpy_or_asked_for_a_number_attribute(use):
    @gt.graph
    def f(s, x, n):
        s.launch(fill, 1, 32, x, use(n))                     # numpy
    with pytest.raises(gt.DynamicScalarError) as e:
        f.trace(A(8), 4.0)
    assert e.value.source[0] == F
    assert "'n' is a dynamic scalar" in e.value.message and "static=('n',)" in e.value.message


@pytest.mark.parametrize("convert", [float, int, complex, np.float32, np.int64, np.asarray])
def test_a_dynamic_scalar_converted_says_to_pass_it_as_it_is_or_converted(convert):
    """float(a) or np.float32(a) was refused as control flow, arithmetic or text,
    naming none of what to do for a conversion."""
    @gt.graph
    def f(s, x, n):
        s.launch(fill, 1, 32, x, convert(n))                 # convert
    with pytest.raises(gt.DynamicScalarError) as e:
        f.trace(A(8), 4.0)
    check(e, "convert", "'n' is a dynamic scalar", "cannot be converted (float(a), int(a)",
          "pass it to the kernel as it is", "f(x, np.float32(a))", "static=('n',)")


@pytest.mark.parametrize("how", ["str", "f-string", "percent", "format", "key"])
def test_a_dynamic_scalar_made_text_is_refused(how):
    """``str(n)`` gave the parameter's name, so ``COEF[str(order)]`` or
    ``len(f"{n}")`` baked the name in where the number's value should go."""
    @gt.graph(static=("how",))
    def f(s, x, n, how):
        text = (str(n) if how == "str" else f"{n}" if how == "f-string" else  # made text
                "%s" % n if how == "percent" else "{:>4}".format(n) if how == "format"
                else "3" if {"3": 1.0}[str(n)] else "")
        s.launch(fill, 1, 32, x, float(len(text)))
    with pytest.raises(gt.DynamicScalarError) as e:
        f.trace(A(8), 3, how)
    assert e.value.source[0] == F and \
        e.value.source[1] in (line_of(F, "made text"), line_of(F, "made text") + 1,
                              line_of(F, "made text") + 2)
    assert "'n' is a dynamic scalar" in e.value.message and "static=('n',)" in e.value.message


@pytest.mark.parametrize("how", ["repr", "f-string", "percent", "in a list"])
def test_a_dynamic_scalar_made_text_by_repr_is_refused(how):
    """``repr(n)`` gave the parameter's name, so ``COEF.get(repr(order))`` baked in
    the entry for the name where the number's should go, as ``str(n)`` did."""
    @gt.graph(static=("how",))
    def f(s, x, n, how):
        text = {"repr": repr, "f-string": lambda: f"{n!r}", "percent": lambda: "%r" % n,
                "in a list": lambda: repr([n])}[how]
        s.launch(fill, 1, 32, x, float(len(text(n) if how == "repr" else text())))  # repr
    with pytest.raises(gt.DynamicScalarError) as e:
        f.trace(A(8), 3, how)
    assert e.value.source[0] == F and \
        e.value.source[1] in (line_of(F, "repr") - 2, line_of(F, "repr") - 1, line_of(F, "repr"))
    assert "'n' is a dynamic scalar" in e.value.message and "static=('n',)" in e.value.message


def test_a_traced_graph_shows_a_dynamic_scalar_by_its_name():
    @gt.graph
    def f(s, x, n):
        s.launch(fill, 1, 32, x, n)
    g = f.trace(A(8), 3.0)
    assert repr(g.nodes[0].args[1]) == "n" and "n" in str(g)


@pytest.mark.parametrize("value", [4.0, np.float32(4.0), 4, np.int8(4), 4 + 1j])
def test_a_dynamic_scalar_answers_questions_about_its_type_as_its_value(value):
    """Its type is part of the graph's signature: ``isinstance(a, float)``,
    ``np.isscalar(a)``, ``hasattr(a, "dtype")`` and ``getattr(a, "dtype", d)`` of a
    numpy number answered for the stand-in, so code picking a kernel by them took
    the other branch."""
    def questions(n):
        return (isinstance(n, float), isinstance(n, numbers.Real), isinstance(n, np.generic),
                isinstance(n, numbers.Integral), isinstance(n, complex), np.isscalar(n),
                hasattr(n, "dtype"), getattr(n, "shape", None), getattr(n, "dtype", None),
                hasattr(n, "_x"), hasattr(n, "not_an_attribute"))
    seen = []

    @gt.graph
    def f(s, x, n):
        seen.append(questions(n))
        s.launch(fill, 1, 32, x, n)
    f.trace(A(8), value)
    assert seen == [questions(value)]


@pytest.mark.parametrize("attr", ["value", "name", "param", "function"])
def test_a_dynamic_scalar_has_no_attribute_its_value_lacks(attr):
    """``getattr(x, "value", x)`` (unwrapping an Enum member or a number) found the
    stand-in's own ``value``, the first call's number, which the graph baked in."""
    seen = []

    @gt.graph
    def f(s, x, n):
        seen.append(hasattr(n, attr))
        s.launch(fill, 1, 32, x, getattr(n, attr, n))
    g = f.trace(A(8), 4.0)
    assert seen == [False] and g.nodes[0].args[1] is not None
    assert type(g.nodes[0].args[1]).__name__ == "Scalar"


@pytest.mark.parametrize("value", [4.0, np.float32(4.0)])
def test_hasattr_of_a_value_attribute_of_a_dynamic_scalar_is_refused(value):
    """``hasattr(a, "real")`` is True of the value; it read False (the refusal was an
    AttributeError, which hasattr and getattr with a default swallow)."""
    @gt.graph
    def f(s, x, n):
        s.launch(fill, 1, 32, x, getattr(n, "real", 0.0))   # real attribute
    with pytest.raises(gt.DynamicScalarError) as e:
        f.trace(A(8), value)
    assert e.value.source == (F, line_of(F, "real attribute"))
    assert "'n' is a dynamic scalar" in e.value.message


def test_static_scalar_may_steer_control_flow():
    @gt.graph(static=("n",))
    def f(s, x, n):
        for _ in range(n):
            s.memset(x, 0)
    assert len(f.trace(A(8), 3).nodes) == 3


def test_kernel_arity_mismatch():
    @gt.graph
    def f(s, x):
        fill[1, 8, s](x)                                     # arity
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace(A(8))
    check(e, "arity", "fill takes 2 arguments (out, v) but 1 was given")


def test_host_array_passed_to_a_kernel():
    @gt.graph
    def f(s, x):
        fill[1, 8, s](x, 1.0)                                # hostarg
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(np.zeros(8))
    check(e, "hostarg", "argument out of kernel fill is host memory", "cuda.to_device")


def test_kernel_launched_on_a_real_stream_inside_a_trace():
    @gt.graph
    def f(s, x):
        fill[1, 8](x, 1.0)                                   # eager
    with pytest.raises(gt.StreamError) as e:
        f.trace(A(8))
    check(e, "eager", "escape the graph", "kernel[grid, block, s]", "on no stream")

    st = cuda.stream()

    @gt.graph
    def g(s, x):
        fill[1, 8, st](x, 1.0)                               # realstream
    with pytest.raises(gt.StreamError) as e:
        g.trace(A(8))
    check(e, "realstream", "on a real stream", "kernel[grid, block, s]")


def test_forall_launched_on_no_stream_inside_a_trace_says_so():
    """fill.forall(n)(...) without stream= runs on numba's default stream, as
    fill[1, 8](...) does, and is told so, not "launched on a real stream"."""
    @gt.graph
    def f(s, x):
        fill.forall(8)(x, 1.0)                               # foralleager
    with pytest.raises(gt.StreamError) as e:
        f.trace(A(8))
    check(e, "foralleager", "escape the graph", "on no stream (numba's default one)",
          "fill.forall(n, stream=s)")
    assert "real stream" not in str(e.value)

    st = cuda.stream()

    @gt.graph
    def g(s, x):
        fill.forall(8, stream=st)(x, 1.0)                    # forallreal
    with pytest.raises(gt.StreamError) as e:
        g.trace(A(8))
    check(e, "forallreal", "on a real stream", "fill.forall(n, stream=s)")


def test_device_array_passed_to_a_host_callback():
    @gt.graph
    def f(s, x):
        s.host(print, x)                                     # hostcb
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(8))
    check(e, "hostcb", "cannot touch the GPU")


def test_keyword_arguments_to_a_host_callback_say_to_pass_them_by_position():
    def report(h, scale):
        pass

    @gt.graph
    def f(s, h, a):
        s.host(report, h, scale=a)                           # host kwargs
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(np.zeros(4), 2.0)
    check(e, "host kwargs", "s.host(report, ..., scale=...)", "pass scale positionally")


def test_memset_value_without_a_repeating_pattern_fills_a_word_at_a_time():
    """1.5 as float64 is no repeated 4-byte pattern: one memset node per word of an
    element (it was refused, "fill it with a kernel")."""
    @gt.graph
    def f(s, x):
        s.memset(x, 1.5)                                     # pattern
    g = f.trace(A(8, "float64"))
    assert [(n.kind, n.attrs.get("lane"), n.attrs.get("lanes")) for n in g.nodes] == \
        [("memset", 0, 2), ("memset", 1, 2)]
    assert "x = 1.5 (word 1 of 2 of each)" in str(g)


@pytest.mark.parametrize("dtype, value, phrase", [
    ("S3", 0, "x.view(np.uint8)"), ("U2", 1, "x.view(np.uint8)"),
    ("float32", 1 + 2j, "pass a real number"), ("float32", "1.5", "not str"),
    ("int32", 1.5, "would be cut to fit int32"), ("uint8", 0.7, "would be cut to fit uint8"),
    ("int8", -0.5, "would be cut"), ("int16", float("nan"), "would be cut"),
    ("bool", 2, "pass False or True"), ("bool", 0.5, "holds 0 and 1 alone"),
    ("int32", float("inf"), "has no integer value")])
def test_memset_values_a_dtype_cannot_take(dtype, value, phrase):
    @gt.graph
    def f(s, x):
        s.memset(x, value)                                   # odd value
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(8, dtype))
    check(e, "odd value", phrase)


def test_copies_and_memsets_of_no_bytes_record_no_node():
    """A graph's copy and memset nodes need bytes to move; empty views are still
    checked (shapes, values) and leave nothing in the graph."""
    @gt.graph
    def f(s, x, y):
        s.copy(y[3:3], x[5:5])
        s.memset(x[:0], 0)
        s.memset(y, 2.0)
    g = f.trace(A(8, "float32"), A(8, "float32"))
    assert [n.kind for n in g.nodes] == ["memset"]

    @gt.graph
    def anywhere(s, x):   # an empty view may have any address (numba's: 0)
        s.copy(A(0, "float32", 0), x[:0])
        s.memset(A(0, "float32", 0), 0)
        s.memset(x, 0)
    assert [n.kind for n in anywhere.trace(A(8, "float32")).nodes] == ["memset"]

    @gt.graph
    def bad(s, x, y):
        s.copy(y[3:3], x[:0])                                # empty
    with pytest.raises(gt.ShapeMismatchError) as e:
        bad.trace(A(8, "int32"), A(8, "float32"))
    check(e, "empty", "converts no values")


def test_graph_function_returning_a_value():
    """Refused at its return line where one return alone gives a value, else at the
    call's."""
    @gt.graph
    def f(s, x):
        return x                                             # returns
    with pytest.raises(gt.TraceError) as e:
        f.trace(A(8))
    check(e, "returns", "f returned an array (FakeDeviceArray)", "returns nothing",
          "drop the return value")

    @gt.graph
    def g(s, x):
        if x.shape[0] > 100:
            return None
        return 3                                             # a number
    with pytest.raises(gt.TraceError) as e:
        g.trace(A(8))
    check(e, "a number", "g returned int: a graph function returns nothing")

    @gt.graph
    def h(s, x, big):
        if big:
            return 1
        return 2
    with pytest.raises(gt.TraceError) as e:
        h.trace(A(8), False)                                 # two returns
    check(e, "two returns", "h returned int")


def test_grid_from_a_dynamic_scalar():
    @gt.graph
    def f(s, x, n):
        s.launch(fill, n, 8, x, 1.0)                         # grid
    with pytest.raises(gt.TraceError) as e:
        f.trace(A(8), 2)
    check(e, "grid", "'n' is a dynamic scalar")


def test_unknown_kernel_object():
    @gt.graph
    def f(s, x):
        s.launch(len, 1, 1, x)                               # notkernel
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(8))
    check(e, "notkernel", "cannot launch 'builtin_function_or_method'")


def test_a_library_kernel_object_launched_is_sent_to_a_captured_region():
    class ElementwiseKernel:          # a library's kernel: callable, launched by calling
        def __call__(self, *args, **kwargs):
            pass

    @gt.graph
    def f(s, x):
        s.launch(ElementwiseKernel(), 1, 1, x)               # library-kernel
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(8))
    check(e, "library-kernel", "cannot launch 'ElementwiseKernel'",
          "in a captured region instead: s.captured(fn")


def test_bad_decorator_arguments():
    with pytest.raises(ValueError, match="deps must be"):
        gt.graph(lambda s: None, deps="capture")
    with pytest.raises(ValueError, match="names no parameter"):
        gt.graph(lambda s, x: None, static=("y",))
    with pytest.raises(TypeError, match="proxy stream"):
        gt.graph(lambda: None)


def test_nested_trace_is_refused():
    inner = gt.graph(lambda s: None)

    @gt.graph
    def outer(s):
        inner.trace()                                        # nested
    with pytest.raises(gt.TraceError) as e:
        outer.trace()
    check(e, "nested", "cannot trace")


def test_wrong_intent_count_for_a_declared_kernel():
    with pytest.raises(gt.ArgumentError, match="3 intents for kernel fill"):
        gt.kernel(fill, "in, out, in")


def test_any_kernel_helper_is_not_confused_with_errors():
    # sanity: a well-formed program traces without error
    @gt.graph
    def f(s, x):
        s.launch(any_kernel(), 1, 1, x)
    assert len(f.trace(A(8)).nodes) == 1


def test_graph_function_called_without_the_proxy_stream_inside_a_trace():
    @gt.graph
    def inner(s, x):
        s.memset(x, 0)

    @gt.graph
    def outer(s, x):
        inner(x)                                             # nostream
    with pytest.raises(gt.TraceError) as e:
        outer.trace(A(8))
    check(e, "nostream", "without the proxy stream", "inner(s, ...)")


def test_overlapping_copy():
    @gt.graph
    def f(s, x):
        s.copy(x[1:], x[:-1])                                # overlap
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(8))
    check(e, "overlap", "share bytes", "temporary array")


def test_memset_of_8_byte_elements_with_a_dynamic_value_fills_a_word_at_a_time():
    """A later call may pass any number: the fill is traced in word lanes even where
    this call's value is a pattern (it was refused, but with static=)."""
    @gt.graph
    def f(s, x, v):
        s.memset(x, v)                                       # dynmemset
    for dtype, lanes in (("float64", 2), ("int64", 2), ("complex128", 4)):
        g = f.trace(A(8, dtype), 0.0 if dtype != "int64" else 0)
        assert [n.attrs.get("lane") for n in g.nodes] == list(range(lanes))
    assert gt.graph(f.fn, static=("v",)).trace(A(8, "float64"), 0.0).nodes[0].attrs.get(
        "lanes") is None   # a static pattern: one node


@pytest.mark.parametrize("dtype, values", [
    ("float64", [0.0, 1.0, -2.5, 1e300, float("nan")]), ("int64", [5, -7, 2**62, 0]),
    ("uint64", [2**64 - 1, 3]), ("complex128", [1 + 2j, -0.5j, 0j]),
    ("complex64", [1 + 2j, 3 + 0j]), ("datetime64[s]", [np.datetime64(7, "s")])])
def test_memsets_of_8_and_16_byte_elements_fill_what_numpy_fills(dtype, values):
    """On the simulator, byte for byte as the driver's word lanes write them, also
    through reversed and Fortran-ordered views, with values rebound at each call."""
    @gt.graph(backend="sim")
    def f(s, x, y, v):
        s.memset(x, v)
        s.memset(y[::-1, :].T, v)

    x = cuda.to_device(np.zeros(6, dtype))
    y = cuda.to_device(np.zeros((3, 4), dtype))
    for v in values:
        f(x, y, v)
        want = np.full(6, v, dtype)
        assert x.copy_to_host().tobytes() == want.tobytes(), v
        assert y.copy_to_host().tobytes() == np.full((3, 4), v, dtype).tobytes(), v
    assert f.cache_info().misses == 1


@cuda.jit
def grid_reduce(x, out):
    i = cuda.grid(1)
    cuda.atomic.add(out, 0, x[i])
    cuda.cg.this_grid().sync()
    x[i] = out[0]


@cuda.jit(device=True)
def sync_everyone():
    g = cuda.cg.this_grid()
    g.sync()


@cuda.jit
def calls_grid_sync(x):
    x[cuda.grid(1)] = 1
    sync_everyone()


def test_grid_synchronisation_said_not_cooperative_is_refused_at_the_launch_line():
    """A kernel that synchronises its grid runs cooperatively, as numba launches it
    eagerly; said not to be (cooperative=False), it is refused at the line."""
    @gt.graph(backend="sim")
    def f(s, x, out):
        s.launch(grid_reduce, 1, 8, x, out, cooperative=False)   # gridsync
    x, out = cuda.to_device(np.ones(8)), cuda.to_device(np.zeros(1))
    with pytest.raises(gt.KernelArgumentError) as e:
        f(x, out)
    check(e, "gridsync", "numba kernel grid_reduce synchronises the whole grid",
          "cooperative=True")
    assert out.copy_to_host().tolist() == [0.0]               # nothing ran

    @gt.graph(backend="sim")
    def g(s, x, out):
        grid_reduce[1, 8, s](x, out)
    g(x, out)
    assert out.copy_to_host().tolist() == [8.0] and x.copy_to_host().tolist() == [8.0] * 8


def test_grid_synchronisation_in_a_device_function_is_seen():
    @gt.graph
    def f(s, x):
        s.launch(gt.kernel(calls_grid_sync, "out"), 1, 8, x, cooperative=False)  # devsync
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace(A(8))
    check(e, "devsync", "calls_grid_sync synchronises the whole grid")

    @gt.graph
    def g(s, x):
        s.launch(gt.kernel(calls_grid_sync, "out"), 1, 8, x)
    assert g.trace(A(8)).nodes[0].attrs["cooperative"]


def test_device_function_launched_as_a_kernel():
    @gt.graph
    def f(s, x):
        s.launch(sync_everyone, 1, 8)                        # devfn
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace(A(8))
    check(e, "devfn", "sync_everyone is a numba device function",
          "call it from inside a kernel")


def test_device_function_launched_with_numba_syntax():
    @gt.graph
    def f(s, x):
        sync_everyone[1, 8, s]()                             # devfn2
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace(A(8))
    check(e, "devfn2", "sync_everyone is a numba device function")


@pytest.mark.parametrize("value, what", [({1: 2.0}, "dict"), ({1.0}, "set")])
def test_python_dict_or_set_where_a_numba_kernel_takes_an_array(value, what):
    @gt.graph
    def f(s):
        fill[1, 8, s](value, 1.0)                            # container
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace()
    check(e, "container", f"argument out of numba kernel fill is a Python {what}, which "
          "numba cannot pass to a kernel")


def test_python_list_where_a_numba_kernel_takes_an_array():
    @gt.graph
    def f(s):
        fill[1, 8, s]([0.0] * 8, 1.0)                        # list
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace()
    check(e, "list", "argument out of numba kernel fill is a Python list, which numba "
          "cannot pass to a kernel", "pass a device array")


def test_a_string_where_a_numba_kernel_takes_a_number():
    """A number read as text: numba's simulator loses the kernel's error, and a
    GPU fails to compile it, away from the launch."""
    @gt.graph(static=("a",))
    def f(s, x, a):
        fill[1, 8, s](x, a)                                  # text
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace(A(8), "1.0")
    check(e, "text", "argument v of numba kernel fill is a Python str, which numba "
          "cannot pass to a kernel", "float(text)")


@pytest.mark.parametrize("value, what", [
    (object(), "an object of class object"), (len, "an object of class builtin_function"),
    ((1, object()), "an object of class object")])
def test_a_value_numba_has_no_type_for_is_refused_at_the_trace(value, what):
    """numba types no object() (nor a function): a GPU fails to compile the kernel,
    and the simulator ran it with the object, failing only when the graph ran."""
    @gt.graph
    def f(s, x, a):
        fill[1, 8, s](x, a)                                  # no numba type
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace(A(8), value)
    check(e, "no numba type", "argument v of numba kernel fill ", what,
          "numba has no type for it), which numba cannot pass to a kernel", "float(text)")


def test_values_numba_has_a_type_for_are_taken():
    """A numpy bool and an Enum's member: numba types them."""
    class Color(enum.Enum):
        RED = 1

    @cuda.jit
    def take(out, b, c):
        out[0] = 1.0 if b and c == Color.RED else 0.0

    @gt.graph
    def f(s, x, b, c):
        take[1, 1, s](x, b, c)
    x = cuda.to_device(np.zeros(1, np.float32))
    f(x, np.bool_(True), Color.RED)
    assert x.copy_to_host()[0] == 1.0


@pytest.mark.parametrize("static", [True, False])
@pytest.mark.parametrize("value, words", [
    (Fraction(1, 3), "a Fraction (float(x)"), (Decimal("1.5"), "a Decimal (float(x)"),
    (2 ** 70, "wider than 64 bits"), (np.longdouble(1.5), "(longdouble)")])
def test_a_number_numba_has_no_type_for_is_refused_at_the_launch(value, words, static):
    """numba types none of these, so no GPU launch can pass them; the simulator
    ran the kernel with Python's arithmetic on them, silently."""
    if isinstance(value, np.longdouble) and np.dtype(np.longdouble).itemsize <= 8:
        pytest.skip("long double is a double here")

    @gt.graph(static=("a",) if static else ())
    def f(s, x, a):
        fill[1, 8, s](x, a)                                  # untyped number
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace(A(8), value)
    check(e, "untyped number", "argument v of numba kernel fill is", words)
    assert "which a kernel cannot take" in e.value.message or \
        "which numba cannot pass to a kernel" in e.value.message


def test_the_gpu_backend_asked_for_without_a_gpu_says_so_at_the_call(monkeypatch):
    from graphtrace import _driver
    monkeypatch.setattr(_driver, "available", lambda: False)

    @gt.graph
    def f(s, x):
        fill[1, 8, s](x, 1.0)
    x = cuda.to_device(np.zeros(8))
    with pytest.raises(gt.ArgumentError) as e:
        f(x, backend="gpu")                                  # nogpu
    check(e, "nogpu", "backend='gpu' was asked for", "backend='sim'")
    with pytest.raises(gt.ArgumentError, match="no CUDA driver"):
        gt.graph(backend="gpu")(lambda s, x: fill[1, 8, s](x, 1.0))(x)
    f(x, backend="sim")
    assert x.copy_to_host().tolist() == [1.0] * 8


def test_passing_the_stream_yourself_says_graphtrace_passes_it():
    @gt.graph
    def f(s, x):
        fill[1, 8, s](x, 1.0)
    x = cuda.to_device(np.zeros(8))
    with pytest.raises(gt.ArgumentError) as e:
        f(cuda.stream(), x)                                  # own stream
    check(e, "own stream", "too many positional arguments",
          "its first parameter, s, receives the proxy stream, which graphtrace passes "
          "itself: call it with (x) only")
    assert "def f(s, s" not in e.value.message and "stream parameter" not in e.value.message

    @gt.graph
    def g(x, s, y):   # the array first: x takes the stream, s is meant as an argument
        fill[1, 8, x](s, 1.0)
    with pytest.raises(gt.ArgumentError) as e:
        g(x, x, x)                                           # array first
    check(e, "array first", "give g a stream parameter: def g(stream, x, s, y)")


def test_a_function_without_a_stream_parameter_is_told_to_take_one():
    @gt.graph
    def f(x, y):
        fill[1, 8](x, 1.0)
    x, y = cuda.to_device(np.zeros(8)), cuda.to_device(np.zeros(8))
    with pytest.raises(gt.ArgumentError) as e:
        f(x, y)                                              # no stream
    check(e, "no stream", "give f a stream parameter: def f(s, x, y)")

    class Model:
        @gt.graph
        def step(self, x, y):
            fill[1, 8](x, 1.0)
    with pytest.raises(gt.ArgumentError) as e:
        Model().step(x, y)                                   # method without
    check(e, "method without", "first parameter after self, x, receives the proxy stream",
          "def step(self, s, x, y)")


@cuda.jit
def sum_into(out, parts):
    out[cuda.grid(1)] = parts[1]


@pytest.mark.parametrize("parts, what", [((A(8), [1.0, 2.0]), "holds a Python list"),
                                         (None, "is None"), ((1.0, None), "holds None")])
def test_list_or_none_anywhere_in_a_numba_argument(parts, what):
    @gt.graph(static=("p",))
    def f(s, x, p):
        s.launch(sum_into, 1, 8, x, p)                       # nestedlist
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace(A(8), parts)
    check(e, "nestedlist", f"argument parts of numba kernel sum_into {what}, which numba "
          "cannot pass")


@pytest.mark.parametrize("value, what", [((0.0,) * 8, "a Python tuple"),
                                         (3.0, "a number (float)"),
                                         (np.float32(3), "a number (float32)")])
def test_number_or_tuple_where_a_numba_kernel_writes_an_array(value, what):
    @gt.graph(static=("v",))
    def f(s, v):
        fill[1, 8, s](v, 1.0)                                # tuplearg
    with pytest.raises(gt.KernelArgumentError) as e:
        f(value)
    check(e, "tuplearg", f"argument out of numba kernel fill is {what}, but the kernel "
          "uses it as an array", "pass a device array")


def test_dynamic_number_where_a_numba_kernel_writes_an_array():
    @gt.graph
    def f(s, v):
        fill[1, 8, s](v, 1.0)                                # dynarg
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace(2.0)
    check(e, "dynarg", "argument out of numba kernel fill is a number (float)")


def test_python_list_for_a_cupy_pointer_parameter():
    cp = pytest.importorskip("cupy")
    k = cp.RawKernel('extern "C" __global__ void scale(const float* x, float* y, int n) {}',
                     "scale")

    @gt.graph
    def f(s, y):
        s.launch(k, 1, 8, [1.0, 2.0], y, 2)                  # cupylist
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace(A(8))
    check(e, "cupylist", "parameter const float* x of cupy kernel scale is a pointer but "
          "was given a Python list", "cupy.asarray")


def test_python_list_for_a_cuda_core_kernel():
    class Kernel:  # what graphtrace recognises as a cuda.core Kernel
        pass
    Kernel.__module__ = "cuda.core._module"

    @gt.graph
    def f(s, x):
        s.launch(Kernel(), 1, 8, x, [1, 2])                  # corelist
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace(A(8))
    check(e, "corelist", "argument #1 of cuda.core kernel (unnamed) is a Python list")


@pytest.mark.parametrize("symbol, name", [(b"saxpy", "saxpy"),
                                          (b"_Z5scaleIfEvPT_S0_", "scale<float>")])
def test_a_cuda_core_kernel_is_named_as_the_driver_names_it(monkeypatch, symbol, name):
    """cuda.core's Kernel keeps no name: the driver's (cuKernelGetName) is asked."""
    from types import SimpleNamespace
    from graphtrace.ops import _core
    ok = object()
    drv = SimpleNamespace(CUresult=SimpleNamespace(CUDA_SUCCESS=ok), CUkernel=int,
                          cuKernelGetName=lambda h: (ok, symbol) if h == 7 else (None, b""))
    monkeypatch.setattr(_core, "driver", lambda: drv)
    Kernel = type("Kernel", (), {"__module__": "cuda.core._module", "handle": 7})

    @gt.graph
    def f(s, x):
        s.launch(Kernel(), 1, 8, x, [1, 2])                  # corename
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace(A(8))
    check(e, "corename", f"argument #1 of cuda.core kernel {name} is a Python list")


@pytest.mark.parametrize("grid", [True, 0, -1, (2, 0), np.bool_(1), (1, 1, 1, 1)])
def test_bad_grid_sizes(grid):
    @gt.graph(static=("g",))
    def f(s, x, g):
        fill[g, 8, s](x, 1.0)                                # badgrid
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(8), grid)
    check(e, "badgrid", "grid must be a positive int or a tuple of up to 3 positive ints")
    empty = "a grid of 0 launches nothing" in str(e.value)
    assert empty == (type(grid) in (int, tuple) and grid in (0, (2, 0))), str(e.value)
    assert ("skip the launch when there is nothing to do" in str(e.value)) == empty


@pytest.mark.parametrize("grid, block", [((1, 1, 1, 1), 8), (-1, 8), (None, 8), (True, 8),
                                         (1, "8"), (np.array([2]), 8)])
def test_a_literal_bad_launch_size_gets_no_advice_about_static_numbers(grid, block):
    """The advice on sizes fixed when the graph is built (static=) came with every
    bad size, a literal (1, 1, 1, 1) or None too, which no static= changes."""
    @gt.graph
    def f(s, x):
        fill[grid, block, s](x, 1.0)                         # literal
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(8))
    check(e, "literal", "must be a positive int or a tuple of up to 3 positive ints")
    assert "static=" not in str(e.value) and "fixed when the graph is built" not in str(e.value)


def test_a_launch_size_read_off_a_device_array_says_sizes_are_fixed_when_built():
    @gt.graph
    def f(s, x, n):
        fill[n, 8, s](x, 1.0)                                # devsize
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(8), A(1, "int32"))
    check(e, "devsize", "a device array's values are not known while tracing",
          "pass it as static=")
    with pytest.raises(gt.DynamicScalarError) as e:   # a dynamic number: its own error
        f.trace(A(8), 2)
    check(e, "devsize", "static=('n',)")


@pytest.mark.parametrize("grid", [2.0, (np.int64(2), 1.5), np.float32(0.25)])
def test_a_float_grid_size_says_to_divide_with_floor_division(grid):
    @gt.graph(static=("g",))
    def f(s, x, g):
        fill[g, 8, s](x, 1.0)                                # floatgrid
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(8), grid)
    check(e, "floatgrid", "holds a float: launch sizes are whole numbers", "(n + 255) // 256")


@pytest.mark.parametrize("grid, block, phrase", [
    (1, 2048, "block (2048, 1, 1) has 2048 threads"), (1, (32, 64), "has 2048 threads"),
    (1, (1, 1, 128), "at most (1024, 1024, 64) along x, y, z"),
    ((1, 70000), 32, "grid (1, 70000, 1) is over CUDA's limits")])
def test_launch_sizes_past_cudas_limits_are_refused(grid, block, phrase):
    @gt.graph
    def f(s, x):
        fill[grid, block, s](x, 1.0)                         # limits
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(8))
    check(e, "limits", phrase)


def test_varargs_kernel_needs_its_fixed_arguments():
    @gt.graph
    def f(s):
        s.launch(add_all, 1, 8)                              # varargs
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace()
    check(e, "varargs", "add_all takes at least 1 arguments (out, *xs) but 0 were given")


@cuda.jit
def add_all(out, *xs):
    i = cuda.grid(1)
    for x in xs:
        out[i] += x[i]


def test_kernel_failing_on_the_simulator_names_its_launch():
    @gt.graph(backend="sim")
    def f(s, x, t):
        sum_into[1, 8, s](x, t)                              # simfail
    with pytest.raises(gt.SimulationError) as e:
        f(cuda.to_device(np.zeros(8)), (1.0,))
    check(e, "simfail", "kernel sum_into failed on the simulator: IndexError")


@pytest.mark.parametrize("event, shown", [("ev", "str 'ev'"), (None, "None"), (42, "int 42")])
def test_record_and_wait_refuse_what_is_no_event(event, shown):
    for word in ("record", "wait"):
        @gt.graph
        def f(s, x, ev):
            getattr(s, word)(ev)                             # no event
        with pytest.raises(gt.StreamError) as e:
            f.trace(A(8), event)
        check(e, "no event", f"{word}() takes an event, not {shown}", "create_event()")


def test_join_says_what_it_was_given():
    @gt.graph
    def f(s, x):
        s.join(x)                                            # join array
    with pytest.raises(gt.StreamError) as e:
        f.trace(A(8))
    check(e, "join array", "join() takes proxy streams (made by s.fork()), not a "
          "FakeDeviceArray")


def _launches_fill(s, x, v):
    fill[1, 8, s](x, v)


@pytest.mark.parametrize("what, phrase", [
    (fill, "fill is a numba kernel: decorate the Python function that launches it"),
    (functools.partial(_launches_fill, v=1.0), "a functools.partial cannot be a graph function"),
    (classmethod(_launches_fill), "a classmethod cannot be a graph function"),
    (print, "gt.graph decorates a function (def step(s, ...)), not builtin_function_or_method")])
def test_what_is_no_graph_function_is_refused_where_it_is_decorated(what, phrase):
    with pytest.raises(gt.ArgumentError) as e:
        gt.graph(what)                                       # decorated
    check(e, "decorated", phrase)


def test_a_graph_function_decorated_again_says_it_is_one_already():
    """Running a ``step = gt.graph(step)`` cell again said only "gt.graph decorates a
    function (def step(s, ...)), not GraphFunction"."""
    def step(s, x):
        fill[1, 8, s](x, 1.0)
    step = gt.graph(step)
    with pytest.raises(gt.ArgumentError) as e:
        step = gt.graph(step)                                # again
    check(e, "again", "step is already a graph function: gt.graph was applied to it "
          "before (running a cell or a line step = gt.graph(step) again", "decorate the "
          "plain function once, with @gt.graph on its def")

    class M:
        @gt.graph
        def run(self, s, x):
            fill[1, 8, s](x, 1.0)
    with pytest.raises(gt.ArgumentError) as e:
        gt.graph(M().run)                                    # bound again
    check(e, "bound again", "run is already a graph function")


def test_a_classmethod_over_the_decorator_says_it_cannot_be_a_graph_function():
    class M:
        @classmethod
        @gt.graph
        def step(cls, s, x):
            fill[1, 8, s](x, 1.0)
    with pytest.raises(gt.ArgumentError) as e:
        M.step(cuda.to_device(np.zeros(8)))                  # over it
    check(e, "over it", "a classmethod cannot be a graph function")


def test_a_method_whose_first_parameter_is_not_self_says_to_name_it_self():
    class M:
        def __init__(self):
            self.v = 2.0

        @gt.graph
        def step(this, s, x):
            fill[1, 8, s](x, this.v)
    with pytest.raises(gt.ArgumentError) as e:
        M().step(cuda.to_device(np.zeros(8)))                # not self
    check(e, "not self", "only a first parameter named self makes a graph function a "
          "method: here this is taken as the proxy stream; name it self")

    @gt.graph
    def plain(this, x):   # not in a class: no word of methods
        fill[1, 8, this](x, 1.0)
    with pytest.raises(gt.ArgumentError) as e:
        plain()
    assert "named self" not in str(e.value)


def test_a_bound_method_may_be_decorated():
    class Filler:
        def __init__(self, v):
            self.v = v

        def step(self, s, x):
            fill[1, 8, s](x, self.v)
    step = gt.graph(Filler(2.0).step)
    x = cuda.to_device(np.zeros(8))
    step(x)
    step(x)
    assert x.copy_to_host().tolist() == [2.0] * 8 and step.cache_info().misses == 1


def test_a_bound_method_made_a_graph_watches_its_object():
    """gt.graph(obj.step) is the method's graph bound to obj, as the decorator on the
    method makes it: a value or array of obj changed between calls is seen."""
    class Filler:
        def __init__(self, v, w):
            self.v, self.w = v, w

        def step(self, s, x):
            fill[1, 8, s](x, self.v)
            add[1, 8, s](self.w, x)   # x += self.w
    w1, w2 = cuda.to_device(np.ones(8)), cuda.to_device(np.full(8, 10.0))
    obj = Filler(2.0, w1)
    step, x = gt.graph(obj.step), cuda.to_device(np.zeros(8))
    for v, w in ((2.0, w1), (3.0, w1), (3.0, w2), (5.0, w2)):
        obj.v, obj.w = v, w
        step(x)
        assert x.copy_to_host().tolist() == [v + w.copy_to_host()[0]] * 8
    assert gt.graph(deps="streams")(obj.step).trace(x).nodes


def test_a_method_bound_through_another_first_parameter_is_refused():
    class Filler:
        v = 2.0

        def step(this, s, x):
            fill[1, 8, s](x, this.v)

        @classmethod
        def class_step(cls, s, x):
            fill[1, 8, s](x, cls.v)
    for bound, what in ((Filler().step, "'this'"), (Filler.class_step, "'cls'")):
        with pytest.raises(gt.ArgumentError, match=f"bound to an? .*takes as {what}.*self") \
                as e:
            gt.graph(bound)   # refused here
        check(e, "refused here")


def test_a_static_method_under_the_decorator_is_its_function():
    class Steps:
        @gt.graph
        @staticmethod
        def step(s, x, v):
            fill[1, 8, s](x, v)
    x = cuda.to_device(np.zeros(8))
    Steps.step(x, 2.0)
    Steps().step(x, 3.0)
    assert x.copy_to_host().tolist() == [3.0] * 8


def test_copies_and_memsets_take_any_gapless_layout():
    """A copy node moves bytes from the lowest address on, a memset fills them: a
    Fortran-ordered or reversed view is one run of bytes like a C-ordered one."""
    @gt.graph
    def g(s, dst, src, y, x, m):
        s.copy(dst, src)             # Fortran-ordered on both sides
        s.copy(y[::-1], x[::-1])     # reversed on both sides
        s.memset(m[:, 1:3], 1.0)     # a block of whole columns of a Fortran array
    a = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    src, dst = cuda.to_device(a), cuda.to_device(np.asfortranarray(np.zeros((3, 4))))
    x, y = cuda.to_device(np.arange(8.0)), cuda.to_device(np.zeros(8))
    m = cuda.to_device(np.asfortranarray(np.zeros((3, 5), np.float32)))
    g(dst, src, y, x, m)
    want = np.zeros((3, 5), np.float32)
    want[:, 1:3] = 1
    assert np.array_equal(dst.copy_to_host(), a)
    assert np.array_equal(y.copy_to_host(), np.arange(8.0))
    assert np.array_equal(m.copy_to_host(), want)
    b = np.asfortranarray(a + 7)   # rebound: the new arrays' layouts are honoured too
    g(dst, cuda.to_device(b), y, cuda.to_device(np.arange(8.0) * 2), m)
    assert np.array_equal(dst.copy_to_host(), b)
    assert np.array_equal(y.copy_to_host(), np.arange(8.0) * 2)


def test_copy_between_layouts_and_gapped_views():
    @gt.graph
    def c_from_f(s, dst, src):
        s.copy(dst, src)                                     # layouts
    src = cuda.to_device(np.asfortranarray(np.zeros((3, 4))))
    with pytest.raises(gt.ArgumentError) as e:
        c_from_f.trace(cuda.to_device(np.zeros((3, 4))), src)
    check(e, "layouts", "lie in another order", "both Fortran-ordered")

    @gt.graph
    def columns(s, m):
        s.memset(m[:, 1:3], 1.0)                             # gaps
    with pytest.raises(gt.ArgumentError) as e:
        columns.trace(cuda.to_device(np.zeros((3, 4))))
    check(e, "gaps", "is not contiguous", "fill the data with a kernel")

    @gt.graph
    def broadcast(s, h, d):
        s.copy(d, h)                                         # sharing
    h = np.lib.stride_tricks.as_strided(gt.pinned_empty(4), shape=(3, 4), strides=(0, 8))
    with pytest.raises(gt.ArgumentError) as e:
        broadcast.trace(h, cuda.to_device(np.zeros((3, 4))))
    check(e, "sharing", "share bytes", "is not contiguous", "a contiguous view")
    assert "gaps" not in str(e.value)


def test_keyword_arguments_to_a_numba_launch():
    @gt.graph
    def f(s, x):
        fill[1, 8, s](x, v=1.0)                              # keywords
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace(cuda.to_device(np.zeros(8)))
    check(e, "keywords", "numba kernel fill given keyword arguments (v=...)",
          "positional arguments only")

    @gt.graph
    def g(s, x):
        fill.forall(8, stream=s)(out=x, v=1.0)               # forall keywords
    with pytest.raises(gt.KernelArgumentError) as e:
        g.trace(cuda.to_device(np.zeros(8)))
    check(e, "forall keywords", "given keyword arguments (out=..., v=...)")


def test_a_numba_launch_configuration_of_five_items_is_refused_as_numba_refuses_it():
    @gt.graph
    def f(s, x):
        fill[1, 8, s, 0, 256](x, 1.0)                        # five items
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace(cuda.to_device(np.zeros(8)))
    check(e, "five items", "numba kernel fill launched with 5 items",
          "kernel[grid, block, stream, shared_mem_bytes]")


@cuda.jit
def _scale_by_default(x, out, c=2.0):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = c * x[i]


def test_a_kernel_argument_left_to_its_default_is_to_be_passed():
    @gt.graph
    def f(s, x, y):
        _scale_by_default[1, 8, s](x, y)                     # default left out
    with pytest.raises(gt.KernelArgumentError) as e:
        f.trace(cuda.to_device(np.zeros(8)), cuda.to_device(np.zeros(8)))
    check(e, "default left out", "takes 3 arguments (x, out, c) but 2 were given",
          "its defaults too; pass c explicitly")

    @gt.graph
    def g(s, x, y):
        _scale_by_default[1, 8, s](x, y, 3.0)
    x, y = cuda.to_device(np.ones(8)), cuda.to_device(np.zeros(8))
    g(x, y)
    assert np.array_equal(y.copy_to_host(), np.full(8, 3.0))


def test_a_temporarys_dtype_that_is_no_dtype():
    @gt.graph
    def f(s, x):
        s.empty(3, "notadtype")                              # no dtype
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(8))
    check(e, "no dtype", "a temporary's dtype 'notadtype' is no numpy dtype")


def test_keywords_for_a_captured_region():
    @gt.graph
    def f(s, x):
        s.captured(lambda x, scale: None, x, scale=3.0)     # region keywords
    with pytest.raises(gt.ArgumentError) as e:
        f.trace(A(8))
    check(e, "region keywords", "not by keyword (scale=...)", "pass them positionally")


def _fails(h):
    raise ValueError("callback failed")                     # callback raises


def test_a_host_callback_raising_on_the_simulator_names_its_node():
    """The callback's own exception comes out as it is (a program may catch it),
    with a note naming the callback, the line that raised and its node's line."""
    @gt.graph(backend="sim")
    def f(s, x, h):
        s.copy(h, x)
        s.host(_fails, h)                                    # recorded here
    with pytest.raises(ValueError, match="callback failed") as e:
        f(cuda.to_device(np.ones(4)), gt.pinned_empty(4))
    note = " ".join(getattr(e.value, "__notes__", []))
    assert f"raised at test_errors.py:{line_of(F, 'callback raises')} by host callback " \
        f"_fails, recorded at test_errors.py:{line_of(F, 'recorded here')}" in note


FILL_CONFIGURED = fill[1, 8]   # configured before any trace: a common idiom


def test_a_launch_configured_before_the_trace_is_refused_inside_it():
    @gt.graph
    def f(s, x):
        FILL_CONFIGURED(x, 1.0)                                    # configured
    x = cuda.to_device(np.zeros(8))
    with pytest.raises(gt.StreamError) as e:
        f(x)
    check(e, "configured", "configured before the trace", "fill[grid, block, s]")
    assert x.copy_to_host().tolist() == [0.0] * 8   # it did not run
    FILL_CONFIGURED(x, 2.0)   # outside a trace it runs as before
    assert x.copy_to_host().tolist() == [2.0] * 8


def test_a_launch_missing_its_block_names_where_the_proxy_stream_goes():
    @gt.graph
    def f(s, x):
        fill[1, s](x, 1.0)                                         # noblock
    with pytest.raises(gt.StreamError) as e:
        f(cuda.to_device(np.zeros(8)))
    check(e, "noblock", "fill[1, s]", "the proxy stream goes third", "fill[grid, block, s]")


def test_simulate_given_the_graph_function_and_pinned_empty_given_a_bad_shape_say_so():
    @gt.graph
    def f(s, x):
        s.memset(x, 0)
    with pytest.raises(gt.ArgumentError, match=r"gt.simulate\(f.trace\(\*arguments\)\)"):
        gt.simulate(f)   # was an AttributeError from inside the simulator
    with pytest.raises(TypeError, match="shape must be an int or a tuple of ints, not 2.5"):
        gt.pinned_empty(2.5)
    with pytest.raises(ValueError, match=r"shape \(4, -1\) has a negative size"):
        gt.pinned_empty((4, -1))
    assert gt.pinned_empty(np.int64(3), np.float32).shape == (3,)


def test_a_stream_passed_as_an_argument_or_no_stream_as_stream_is_refused():
    """Eager code hands a stream first (``f(stream, x, y)``): the stream went to the
    kernel as ``x``; and ``stream="abc"`` ran on the simulator."""
    @gt.graph(backend="sim")
    def f(s, x):
        s.memset(x, 0)
    x = cuda.to_device(np.ones(4))
    with pytest.raises(gt.ArgumentError, match=r"argument x of f is a stream") as e:
        f(cuda.stream())                                     # stream first
    check(e, "stream first", "f(..., stream=...)")
    for bogus in ("abc", x, 1.5):
        with pytest.raises(TypeError, match="cannot launch on"):
            f(x, stream=bogus)
        with pytest.raises(TypeError, match="cannot launch on"):
            f.compile(x).launch(bogus)
    f(x, stream=cuda.stream())
    assert x.copy_to_host().tolist() == [0.0] * 4


def test_a_later_calls_number_no_kernel_takes_is_refused_before_the_graph_runs():
    """The traced 5 fitted; a later call's 2**70 rebound silently, and the
    simulator computed with the Python int."""
    @gt.graph(backend="sim")
    def f(s, x, a):
        fill[1, 8, s](x, a)
    x = cuda.to_device(np.zeros(8))
    f(x, 5)
    with pytest.raises(gt.KernelArgumentError, match="wider than 64 bits in this call"):
        f(x, 2 ** 70)
    assert x.copy_to_host().tolist() == [5.0] * 8
    f(x, 7)
    assert x.copy_to_host().tolist() == [7.0] * 8


def test_a_dynamic_scalar_in_a_log_record_shows_its_name_and_print_says_why_not(caplog):
    import logging
    log = logging.getLogger("graphtrace.tests.text")

    @gt.graph
    def logged(s, x, a):
        log.warning("scaling by %s", a)
        fill[1, 8, s](x, a)

    @gt.graph
    def printed(s, x, a):
        print("a is", a)                                    # printed
        fill[1, 8, s](x, a)
    with caplog.at_level(logging.WARNING, logger="graphtrace.tests.text"):
        logged.trace(A(8), 2.0)
    assert "scaling by a" in caplog.text
    with pytest.raises(gt.DynamicScalarError) as e:
        printed.trace(A(8), 2.0)
    check(e, "printed", "print it outside the function")


def test_graphtrace_own_abstract_class_checks_see_the_stand_in():
    """``isinstance(v, numbers.Number)`` runs ``abc.py``'s Python code, which asked
    for the stand-in's class on behalf of graphtrace's own code: it was told the
    value's class, and took the stand-in for a plain number."""
    from graphtrace import arguments
    from graphtrace.scalar import Scalar
    s = Scalar("a", 2.5, 0, "a", "f")
    assert not arguments._is_number(s) and isinstance(s, numbers.Real)


_USER_MODULE = '''
import graphtrace as gt
from flow_kernels import count, shift


@gt.graph(backend="sim")
def by_text(s, x, a):
    s.memset(x, len(f"{a}"))                                # text
    shift[1, 4, s](x, x)


@gt.graph(backend="sim")
def pingpong(s, u, v, n):
    with s.while_loop(gt.cond(n) < 3) as body:              # swap
        shift[1, 4, body](u, v)
        count[1, 1, body](n)
        u, v = v, u
'''


def _user_module(folder, name, text):
    """Import ``text`` as the user's module ``name`` written in ``folder``."""
    import importlib.util
    folder.mkdir(parents=True)
    path = folder / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, str(path)


@pytest.mark.parametrize("library", ["numba", "numpy", "cupy", "torch"])
def test_user_code_in_a_folder_named_as_a_library_is_the_users(tmp_path, library):
    """backends/numba/solver.py was taken for numba's code (a path holding /numba/):
    f"{a}" of a dynamic scalar gave its name, a loop body swapping its arrays ran
    on the first iteration's, and errors named the line calling into it."""
    from flow_kernels import dev
    user, path = _user_module(tmp_path / "backends" / library, f"solver_{library}",
                              _USER_MODULE)
    with pytest.raises(gt.DynamicScalarError) as e:
        user.by_text(dev(0, 0, 0, 0), 2.0)
    assert e.value.source == (path, line_of(path, "text"))
    with pytest.raises(gt.ArgumentError, match="Python runs the body once") as e:
        user.pingpong(dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32))
    assert e.value.source == (path, line_of(path, "swap"))


_BESIDE_PACKAGE = '''
import graphtrace as gt


@gt.graph(backend="sim")
def readback(s, x):
    if x[0] > 0:
        s.memset(x, 0)


@gt.graph(backend="sim")
def by_text(s, x, a):
    s.memset(x, len(f"{a}"))
'''


@pytest.mark.parametrize("beside", ["_demo.py", "-experiments/solver.py"])
def test_user_code_beside_the_package_is_not_graphtraces(beside):
    """graphtrace_demo.py or graphtrace-experiments/ beside the package were taken
    for graphtrace's own code (its folder's path was a prefix of theirs): x[0] of a
    device array in a trace was not refused, f"{a}" of a dynamic scalar gave its name."""
    import os
    from flow_kernels import dev
    path = os.path.dirname(gt.__file__) + beside
    user = {}
    exec(compile(_BESIDE_PACKAGE, path, "exec"), user)
    with pytest.raises(gt.HostSyncError) as e:
        user["readback"](dev(0, 0, 0, 0))
    assert e.value.source == (path, 7)
    with pytest.raises(gt.DynamicScalarError) as e:
        user["by_text"](dev(0, 0, 0, 0), 2.0)
    assert e.value.source == (path, 13)


def test_a_kernel_numba_launches_itself_inside_a_trace_is_named_with_the_operation():
    """numba's own kernels (a device array's .T, a transposed copy) launched while
    tracing are refused naming the array operation, not as "numba kernel kernel
    launched on a real stream", which named a kernel the user never wrote."""
    from graphtrace.ops._numba_launch import _not_a_proxy
    msg = _not_a_proxy("kernel", ((1,), (32,), object()), "numba.cuda.kernels.transpose")
    assert "numba.cuda.kernels.transpose.kernel" in msg and "a.T" in msg
    assert "kernel[grid, block, s]" in msg
    assert "a.T" not in _not_a_proxy("scale", ((1,), (32,), object()), "mymodule")


def test_a_number_none_or_a_list_where_a_copy_or_memset_takes_an_array_names_the_side():
    """A dynamic number showed as graphtrace's own Scalar ("cannot use Scalar as an
    array"), and no message said which side was wrong."""
    @gt.graph
    def cp(s, dst, src):
        s.copy(dst, src)                                     # the copy

    @gt.graph
    def ms(s, dst):
        s.memset(dst, 0)                                     # the memset

    x = A(8, "float64")
    for dst, src, phrase in [(3, x, "s.copy's dst is a number, not an array"),
                             (x, 2.5, "s.copy's src is a number"),
                             (x, None, "s.copy's src is None"), (x, [1.0], "s.copy's src is a list")]:
        with pytest.raises(gt.ArgumentError) as e:
            cp.trace(dst, src)
        check(e, "the copy", phrase)
    with pytest.raises(gt.ArgumentError) as e:
        ms.trace(7)
    check(e, "the memset", "s.memset's dst is a number, not an array")


def test_a_large_memset_in_word_lanes_warns_that_it_is_slow():
    @gt.graph
    def f(s, x, v):
        s.memset(x, v)                                       # big lanes
    with pytest.warns(UserWarning, match=r"writes 2 memset nodes of rows one word wide.*fill "
                      r"a large array with a kernel") as rec:
        f.trace(A(1 << 17, "float64"), 1.0)
    assert rec[0].lineno == line_of(F, "big lanes")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f.trace(A(1 << 16, "float64"), 1.0)   # small: no warning


def _decorated(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


def test_a_return_in_a_with_block_a_finally_or_a_decorated_function_is_named_at_its_line():
    """The return instruction's own line was the with statement's, the finally
    block's last, or the decorator's."""
    import contextlib

    @gt.graph
    def in_with(s, x):
        with contextlib.nullcontext():
            return x                                         # with return
    @gt.graph
    def in_finally(s, x):
        try:
            return x                                         # finally return
        finally:
            s.memset(x, 0)
    @gt.graph
    @_decorated
    def decorated(s, x):
        return x                                             # decorated return
    for f, marker in ((in_with, "with return"), (in_finally, "finally return"),
                      (decorated, "decorated return")):
        with pytest.raises(gt.TraceError) as e:
            f.trace(A(8))
        check(e, marker, "returns nothing")


def test_a_generator_or_a_coroutine_graph_function_says_so():
    @gt.graph
    def gen(s, x):
        s.memset(x, 0)
        yield
    with pytest.raises(gt.TraceError, match="gen is a generator or a coroutine.*plain def"):
        gen.trace(A(8))


class _KeepsScalar:
    def __init__(self):
        self.prev = None

    @gt.graph(backend="sim")
    def step(self, s, out, a):
        fill[1, 2, s](out, a)
        self.prev = 1.0 if out is None else a   # MARK: keeps a


_LAST: dict = {}


@gt.graph(backend="sim")
def _keeps_scalar_in_a_global(s, out, a):
    fill[1, 2, s](out, a)
    _LAST["a"] = a   # MARK: global keeps a


@pytest.mark.parametrize("call, marker, by", [
    (lambda out: _KeepsScalar().step(out, 2.0), "MARK: keeps a", "argument self"),
    (lambda out: _keeps_scalar_in_a_global(out, 2.0), "MARK: global keeps a",
     "global or closure name _LAST")])
def test_a_dynamic_scalar_kept_past_the_trace_is_refused_at_its_line(call, marker, by):
    """The stand-in escaped the trace: the next call read it as a value that is
    not None (eager: the number), and printing it raised about a trace long over."""
    with pytest.raises(gt.TraceError) as e:
        call(cuda.to_device(np.zeros(2)))
    check(e, marker, f"dynamic scalar argument 'a' is kept by {by} after the trace",
          "keep the number outside the function", "static=('a',)")

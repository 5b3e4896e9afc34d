"""What tells two calls' arguments apart, at its edges: record dtypes of one
size, an object whose class hashes by value but which does not hash, numpy
time numbers, one empty array passed twice, and dict keys that Python finds
equal but a kernel does not. Each was replayed from the first call's graph
(or, for the time numbers, crashed inside graphtrace)."""
import math
from dataclasses import dataclass

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace import arrays
from helpers import line_of
from step_kernels import fill


@cuda.jit
def _field_a(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i].a


def test_record_dtypes_of_one_size_with_other_fields_trace_apart():
    @gt.graph(backend="sim")
    def f(s, x, out):
        _field_a[1, 32, s](x, out)
    layouts = [[("a", np.float64), ("b", np.float64)], [("b", np.float64), ("a", np.float64)],
               [("a", np.int64), ("b", np.float64)]]
    for fields in layouts:
        h = np.zeros(4, np.dtype(fields))
        h["a"], h["b"] = [1, 2, 3, 4], [-1, -2, -3, -4]
        out = cuda.device_array(4)
        f(cuda.to_device(h), out)
        assert out.copy_to_host().tolist() == [1, 2, 3, 4], fields
    assert f.cache_info().misses == 3


def test_record_dtypes_of_one_field_trace_apart_and_rebind():
    """A record of one field ([('a', f8)]) was keyed and rebuilt by its typestr
    ('|V8') alone: [('a', i8)] found the graph traced for [('a', f8)], and a new
    array of the traced dtype was rebound as a view with no fields."""
    @gt.graph(backend="sim")
    def f(s, x, out):
        _field_a[1, 32, s](x, out)
    arrays.as_buffer(np.zeros(2, "V8"))   # a plain '|V8' is known (the compiled path's dtypes)
    for t in (np.float64, np.float64, np.int64):
        h = np.zeros(4, np.dtype([("a", t)]))
        h["a"] = [1, 2, 3, 4]
        x, out = cuda.to_device(h), cuda.device_array(4)
        f(x, out)
        assert out.copy_to_host().tolist() == [1, 2, 3, 4], t
        assert arrays.as_buffer(x).dtype == h.dtype
    assert f.cache_info().misses == 2


@dataclass(frozen=True)
class _Sink:   # says it hashes by value, but holds a list: hash() raises
    values: list


def _record(h, sink):
    sink.values.append(float(h.sum()))


def test_an_object_whose_class_hashes_by_value_but_which_does_not_hash_is_itself():
    """A frozen dataclass holding a list (a results sink) was keyed by its values:
    a second, equal sink found the first call's graph, and the callback appended
    the second call's result to the first sink."""
    @gt.graph(backend="sim")
    def f(s, x, h, sink):
        s.copy(h, x)
        s.host(_record, h, sink)
    x, h = cuda.to_device(np.ones(4)), gt.pinned_empty(4)
    sinks = [_Sink([]), _Sink([]), _Sink([])]
    for sink in sinks:
        f(x, h, sink)
    assert [sink.values for sink in sinks] == [[4.0]] * 3


@cuda.jit
def _add_time(t0, td, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = t0[i] + td


@pytest.mark.parametrize("value", [np.timedelta64(1, "s"), np.datetime64(3, "D")])
def test_a_numpy_time_number_to_a_kernel_is_refused_at_its_line(value):
    """Its unit is no part of its type, which is what a graph keeps of a number
    (np.timedelta64 is a numpy integer): it crashed in graphtrace's own code."""
    @gt.graph(backend="sim")
    def f(s, t0, td, out):
        _add_time[1, 32, s](t0, td, out)   # time number
    t0 = cuda.to_device(np.zeros(4, "m8[ms]"))
    with pytest.raises(gt.KernelArgumentError) as e:
        f(t0, value, cuda.device_array(4, "m8[ms]"))
    assert e.value.source[1] == line_of(__file__, "time number")
    assert type(value).__name__ in str(e.value) and "unit" in str(e.value)


def test_one_empty_array_passed_twice_is_told_from_two():
    """Empty arrays share no byte, so which arguments alias did not see that one
    was passed twice, though the function can tell (``x is y``)."""
    @gt.graph(backend="sim")
    def f(s, x, y, flag):
        fill[1, 1, s](flag, 1.0 if x is y else 2.0)
    flag, e = cuda.device_array(1), cuda.device_array(0)
    for x, y, want in [(e, e, 1.0), (cuda.device_array(0), cuda.device_array(0), 2.0),
                       (e, e, 1.0)]:
        f(x, y, flag)
        assert flag.copy_to_host()[0] == want


_SCALE = {float: 2.0, int: 3.0, bool: 4.0}


def _signed(k):   # what a kernel makes of a key: its sign and its type
    return _signed(k[0]) * 5.0 if type(k) is tuple else math.copysign(1.0, k) * _SCALE[type(k)]


@pytest.mark.parametrize("keys", [(0.0, -0.0), (1, 1.0), (True, 1), ((0.0,), (-0.0,))])
def test_dict_keys_python_finds_equal_but_a_kernel_does_not_trace_apart(keys):
    @gt.graph(backend="sim")
    def g(s, d):
        for k, v in d.items():
            fill[1, 32, s](v, _signed(k))
    for k in keys:
        v = cuda.device_array(4)
        g({k: v})
        assert v.copy_to_host()[0] == _signed(k), k
    same = cuda.device_array(4)   # the same array: the call shortcut compares the keys
    for k in keys + keys:
        g({k: same})
        assert same.copy_to_host()[0] == _signed(k), k


@cuda.jit
def _inc(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


@pytest.mark.parametrize("static", [(), ("sl",)])
def test_a_slice_argument_is_keyed_by_its_start_stop_and_step(static):
    """A slice does not hash before Python 3.12: it was refused, static or not."""
    @gt.graph(static=static)
    def f(s, x, sl):
        _inc[1, 32, s](x[sl[0]] if isinstance(sl, tuple) else x[sl])

    slices = [slice(0, 8), slice(8, 16), slice(0, 16, 2), slice(0, 8), (slice(8, 16),),
              slice(0, np.int64(8))]   # a numpy stop packs apart from an int's
    for sl in slices:
        x = cuda.to_device(np.zeros(32))
        want = np.zeros(32)
        want[sl] += 1
        f(x, sl)
        assert np.array_equal(x.copy_to_host(), want)
    assert f.cache_info().misses == 5


@pytest.mark.parametrize("nest", [lambda o: o, lambda o: [o], lambda o: {"opts": o}])
def test_a_set_argument_is_keyed_by_its_items_and_read_again_at_every_call(nest):
    """A set was refused as unhashable; it is keyed as a frozenset is, and one
    changed in place between calls (the same object) traces anew."""
    @gt.graph
    def f(s, x, opts):
        opts = opts if isinstance(opts, set) else (opts[0] if isinstance(opts, list)
                                                   else opts["opts"])
        if "double" in opts:
            _inc[1, 32, s](x)
        _inc[1, 32, s](x)

    x = cuda.to_device(np.zeros(4))
    opts = {"double"}
    for change, total in [(None, 2), (None, 4), (opts.clear, 5), (None, 6),
                          (lambda: opts.add("double"), 8)]:
        if change is not None:
            change()
        f(x, nest(opts))
        assert np.array_equal(x.copy_to_host(), np.full(4, total))
    f(x, nest({"double"}))   # an equal set: its graph
    assert f.cache_info().misses == 2 and np.array_equal(x.copy_to_host(), np.full(4, 10))

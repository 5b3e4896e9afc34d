"""What a captured region's refusals call the user's objects: a view or a number
named in reads=/writes=, and a temporary it holds by the user's name for it."""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of


def _copy(x, y):
    y[...] = x


def _args():
    return cuda.to_device(np.arange(8.0)), cuda.to_device(np.zeros(8))


def test_reads_naming_a_view_of_an_argument_says_so_not_its_class():
    """Bug: it said the region 'names FakeCUDAArray'."""
    @gt.graph(backend="sim")
    def f(s, x, y):
        s.captured(_copy, x, y, reads=[x[:4]], writes=[y])   # view in reads
    with pytest.raises(gt.ArgumentError) as e:
        f(*_args())
    assert e.value.source[1] == line_of(__file__, "view in reads")
    text = str(e.value)
    assert "reads= of captured region _copy names a view of x made anew there, not one " \
        "of the arrays it is given" in text
    assert "name the array passed (x)" in text
    assert "FakeCUDAArray" not in text and "DeviceNDArray" not in text


def test_writes_naming_a_view_of_an_array_not_given_says_to_pass_that_array():
    @gt.graph(backend="sim")
    def f(s, x, y, z):
        s.captured(_copy, x, y, writes=[z[:4]])
    with pytest.raises(gt.ArgumentError, match="names a view of z made anew there.*pass z to "
                       r"s.captured\(...\) as an argument too"):
        f(*_args(), cuda.to_device(np.zeros(8)))


@pytest.mark.parametrize("static", [False, True])
def test_reads_naming_a_number_says_it_is_a_number(static):
    """Bug: a dynamic number was said to be a 'Scalar' (graphtrace's own type)."""
    @gt.graph(backend="sim", static=("a",) if static else ())
    def f(s, x, y, a):
        s.captured(_copy, x, y, reads=[a], writes=[y])      # number in reads
    with pytest.raises(gt.ArgumentError) as e:
        f(*_args(), 1.0)
    assert e.value.source[1] == line_of(__file__, "number in reads")
    number = "1.0" if static else "a"
    assert f"reads= of captured region _copy names the number {number}: reads= names " \
        "arrays the region is given" in str(e.value)
    assert "Scalar" not in str(e.value)


def test_a_region_holding_a_temporary_is_told_to_take_it_by_the_users_name():
    """Bug: the fix suggested was s.captured(rt, ..., tmp0), the listing's name."""
    @gt.graph(backend="sim")
    def f(s, x, y):
        t = s.empty(8, np.float64)
        s.copy(t, x)

        def rt(y):
            y[...] = t
        s.captured(rt, y)                                     # closure over t
    with pytest.raises(gt.ArgumentError) as e:
        f(*_args())
    assert e.value.source[1] == line_of(__file__, "closure over t")
    assert str(e.value).endswith("s.captured(rt, ..., t)")


def _make_reader(scratch):
    def reader(y):
        y[...] = scratch
    return reader


def test_a_temporary_held_under_another_name_takes_the_name_of_the_recording_code():
    @gt.graph(backend="sim")
    def f(s, x, y):
        work = s.empty(8, np.float64)
        s.copy(work, x)
        s.captured(_make_reader(work), y)
    with pytest.raises(gt.ArgumentError) as e:
        f(*_args())
    assert str(e.value).endswith("s.captured(reader, ..., work)")
    assert "by closure name 'scratch'" in str(e.value)


def test_a_temporary_without_a_name_there_is_described_by_where_it_was_made():
    @gt.graph(backend="sim")
    def f(s, x, y):
        s.captured(_make_reader(s.empty(8, np.float64)), y)   # unnamed temporary
    with pytest.raises(gt.ArgumentError) as e:
        f(*_args())
    line = line_of(__file__, "unnamed temporary")
    assert str(e.value).endswith("s.captured(reader, ..., the temporary made at "
                                 f"test_region_words.py:{line})")

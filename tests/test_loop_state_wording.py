"""What a loop body's refusal counts as a number its work takes, and how it
reads.

A counter only reported (``n += 1; log.debug(n)``) changes no work; the body
is refused only where the value it held when the body was recorded is a
number of the same type a kernel of the body takes,
which graphtrace cannot tell from the counter. A memset's value is no
kernel's number: a body zeroing an accumulator (``body.memset(acc, 0)``)
beside such a counter was refused, saying the body read the counter again.
The refusal names what the body changes in backticks (a counter named ``it``
read "changes it, which it reads again"), and says when the reason is a
number equal to the counter's value.
"""
import logging

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host
from helpers import line_of

_log = logging.getLogger("graphtrace.tests.wording")


def test_a_counter_only_reported_beside_a_memset_of_its_value_runs_as_eagerly():
    """The README's counter, only logged, in a body zeroing an accumulator with
    a memset of 0 (the counter's first value) and of 1: each iteration records
    the same work."""
    @gt.graph(backend="sim")
    def f(s, a, acc, n):
        k = 0
        with s.while_loop(gt.cond(n) < 3) as body:
            body.memset(acc, 0)
            body.memset(a[:1], 1)
            add[1, 4, body](acc, 2.0)
            k += 1
            _log.debug("iteration %d recorded", k)
            count[1, 1, body](n)

    a, acc, n = dev(0, 1, 2, 3, dtype=np.int32), dev(5, 5, 5, 5), dev(0, dtype=np.int32)
    f(a, acc, n)
    assert host(acc) == [2, 2, 2, 2] and host(a) == [1, 1, 2, 3] and host(n) == [3]


def test_a_memset_taking_a_counter_the_body_changes_is_refused():
    """A memset whose value is the counter itself fills with the recorded value
    at every iteration: refused, as a kernel taking it is."""
    @gt.graph(backend="sim")
    def f(s, a, n):
        k = 0
        with s.while_loop(gt.cond(n) < 3) as body:   # memset counter
            body.memset(a, k)
            k += 1
            count[1, 1, body](n)

    with pytest.raises(gt.ArgumentError) as info:
        f(dev(0, 0, 0, 0, dtype=np.int32), dev(0, dtype=np.int32))
    assert info.value.source[1] == line_of(__file__, "memset counter"), str(info.value)
    assert "changes `k`," in str(info.value), str(info.value)


def test_a_counter_equal_to_a_kernel_number_is_refused_saying_why():
    """A counter only logged whose value when recorded is a number a kernel of
    the body takes: refused, and the message says that equality is the reason
    and where the kernel is."""
    @gt.graph(backend="sim")
    def f(s, a, n):
        k = 1
        with s.while_loop(gt.cond(n) < 3) as body:   # equal counter
            add[1, 4, body](a, 1)   # the kernel taking 1
            k += 1
            _log.debug("iteration %d", k)
            count[1, 1, body](n)

    with pytest.raises(gt.ArgumentError) as info:
        f(dev(0, 0, 0, 0, dtype=np.int32), dev(0, dtype=np.int32))
    e = str(info.value)
    assert info.value.source[1] == line_of(__file__, "equal counter"), e
    assert "changes `k`," in e and "1, is also a number a kernel of the body takes" in e, e
    assert f"line {line_of(__file__, 'the kernel taking 1')}" in e, e


def test_the_refusal_names_a_counter_called_it_so_that_it_reads_right():
    @gt.graph(backend="sim")
    def f(s, a, n):
        it = 0
        with s.while_loop(gt.cond(n) < 3) as body:
            add[1, 4, body](a, float(it))
            it += 1
            count[1, 1, body](n)

    with pytest.raises(gt.ArgumentError) as info:
        f(dev(0, 0, 0, 0), dev(0, dtype=np.int32))
    assert "changes `it`, which it reads again in the next iteration" in str(info.value)


def test_what_code_after_a_branch_reads_is_named_in_backticks():
    @gt.graph(backend="sim")
    def f(s, a, n):
        it = 0
        with s.if_then(gt.cond(n) < 3) as then:
            add[1, 4, then](a, 1.0)
            it = 1
        add[1, 4, s](a, float(it))

    with pytest.raises(gt.ArgumentError) as info:
        f(dev(0, 0, 0, 0), dev(0, dtype=np.int32))
    assert "changes `it`, which line" in str(info.value), str(info.value)


@pytest.mark.parametrize("start, taken, refused", [
    (0, 0, True), (0.0, 0.0, True), (1.0, 1.0, True),   # the value it began the body with
    (0, 1.0, False), (0, 0.0, False), (0, 1, False), (0.0, 1.0, False)])
def test_a_counter_only_reported_is_compared_by_its_recorded_value_and_type(
        start, taken, refused):
    """As the README says: the counter's value when the body was recorded
    (before ``n += 1``), with a number of the same type a kernel takes; an int
    is not compared with a float, nor the value the body leaves."""
    @gt.graph(backend="sim")
    def f(s, x, c):
        n = start
        with s.while_loop(gt.cond(c) < 3) as body:   # compared counter
            n += 1
            _log.debug("%s", n)
            add[1, 4, body](x, taken)
            count[1, 1, body](c)

    x, c = dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    if refused:
        with pytest.raises(gt.ArgumentError) as info:
            f(x, c)
        assert info.value.source[1] == line_of(__file__, "compared counter"), str(info.value)
        assert "changes `n`," in str(info.value), str(info.value)
    else:
        f(x, c)
        assert host(c) == [3] and host(x) == [3.0 * taken] * 4

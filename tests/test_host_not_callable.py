"""s.host handed something other than a function says what it was handed, as the
program wrote it, at the user's line.

Before, ``s.host(h)`` with a pinned array said "host() needs a callable, not
TracedHostArray", and ``s.host(k, h)`` with a dynamic number "not Scalar":
graphtrace's own type names.
"""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of


@pytest.mark.parametrize("pick, says", [
    (lambda h, k: h, "was given the host array h:"),
    (lambda h, k: k, "was given the number k:"),
    (lambda h, k: None, "was given None:"),
    (lambda h, k: 3, "was given the number 3:"),
    (lambda h, k: "report", "was given the string 'report' (pass the function itself"),
    (lambda h, k: object(), "was given an object of class object, which is not callable")])
def test_host_handed_no_function_says_what_it_was_handed_at_the_users_line(pick, says):
    @gt.graph(backend="sim")
    def f(s, h, k):
        s.host(pick(h, k), h)                                # not-callable
    with pytest.raises(gt.ArgumentError) as e:
        f(gt.pinned_empty(4), 2.0)
    message = str(e.value)
    assert e.value.source[1] == line_of(__file__, "not-callable"), message
    assert says in message and "pass the function, then its arguments" in message, message
    assert "Traced" not in message and "Scalar" not in message, message


def test_host_handed_a_device_array_in_place_of_the_function_says_so():
    d = cuda.to_device(np.ones(4))

    @gt.graph(backend="sim")
    def f(s, h):
        s.host(d, h)
    with pytest.raises(gt.ArgumentError, match="was given the device array"):
        f(gt.pinned_empty(4))

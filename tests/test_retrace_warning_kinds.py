"""The retrace warning names an argument given a number on some calls and another
value (None, a string) on others.

Before, with the same array at every call and ``k`` taking 1, 2.5, True, 1j,
False, None, "a", "b", ..., the warning said "the aliasing of arrays keeps
changing", though the log named ``k``.
"""
import pytest

import graphtrace as gt
from helpers import line_of


def _cb(h, k):
    pass


def test_retrace_warning_names_an_argument_changing_between_a_number_and_other_values():
    @gt.graph(backend="sim")
    def f(s, h, k):
        s.host(_cb, h, k)
    h = gt.pinned_empty(2)
    with pytest.warns(gt.RetraceWarning) as rec:
        for k in [1, 2.5, True, 1j, False, None, "a", "b", "c"]:
            f(h, k)                                          # kinds
    assert len(rec) == 1 and rec[0].lineno == line_of(__file__, "kinds")
    message = str(rec[0].message)
    assert "aliasing" not in message, message
    assert "argument(s) k keep changing between a number (int, float, bool, complex) and " \
        "other values (None, str)" in message, message
    assert "a number of one type (float(k))" in message, message

"""An option ``@graph`` cannot take is refused where it decorates: a graphtrace error
naming the decorator's line and saying what the option takes (a ValueError or a
TypeError too, as before)."""
import os

import pytest

import graphtrace as gt
from helpers import line_of


def here(marker):
    return (os.path.abspath(__file__), line_of(__file__, marker))


@pytest.mark.parametrize("static", [1, 5, -1])
def test_a_static_position_out_of_range_names_the_positions(static):
    with pytest.raises(gt.ArgumentError, match=r"no position of a parameter of h: "
                       r".*proxy stream left out \(0 to 0: x\)") as info:
        @gt.graph(static=static)   # position
        def h(s, x):
            pass
    assert info.value.source == here("position")
    assert isinstance(info.value, ValueError)


def test_static_none_says_what_static_takes():
    with pytest.raises(gt.ArgumentError, match=r"static=None: static= takes a parameter "
                       r"of h by name or position.*static=\(\) for none") as info:
        @gt.graph(static=None)   # none
        def h(s, x):
            pass
    assert info.value.source == here("none")
    assert isinstance(info.value, TypeError)


@pytest.mark.parametrize("option, message", [
    ({"deps": "capture"}, "deps must be"), ({"maxsize": 0}, "maxsize must be a positive int"),
    ({"backend": "cpu"}, "backend must be 'gpu' or 'sim'"),
    ({"check_intents": "yes"}, "check_intents must be True"),
    ({"static": ("y",)}, "names no parameter")])
def test_a_bad_option_names_the_decorators_line(option, message):
    with pytest.raises(gt.ArgumentError, match=message) as info:
        gt.graph(lambda s, x: None, **option)   # option
    assert info.value.source == here("option")
    assert str(info.value).startswith(f"test_decorator_options.py:{here('option')[1]}: ")

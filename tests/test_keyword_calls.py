"""Calls with keyword arguments read from bytecode as their positional spelling is.

On Python 3.11 and 3.12 a keyword call loads its arguments as a positional one
does, then names the keywords (``KW_NAMES``; 3.11's ``dis`` leaves the names
unknown) before the call; 3.13 loads the names as a constant and calls with
``CALL_KW``.
"""
import types

from graphtrace.bytecode import instructions, keyword_names, past_keywords


def test_keyword_names_are_read_off_the_call_on_every_version():
    """``keyword_names`` names the keywords of a call (3.11's ``KW_NAMES`` too,
    whose value ``dis`` leaves unknown there), none for a positional call."""
    def f(g, a, b):
        g(a, b)
        g(a, y=b)
        g(x=a, y=b)

    ins = list(instructions(f.__code__))
    calls = [i for i, c in enumerate(ins) if c.opname in ("CALL", "CALL_KW")]
    assert [keyword_names(ins, i) for i in calls] == [(), ("y",), ("x", "y")]


def _shaped(*ops):
    """Instructions of a version not running here, as records of what the readers
    read (``opname``, ``argval``, ``arg``)."""
    return [types.SimpleNamespace(opname=op, argval=v, arg=v if type(v) is int else None)
            for op, v in ops]


# show(x=held[0]) on 3.13: the keywords' names loaded as a constant, then CALL_KW
_SHOW_ITEM_313 = _shaped(("LOAD_GLOBAL", "show"), ("LOAD_DEREF", "held"), ("LOAD_CONST", 0),
                         ("BINARY_SUBSCR", None), ("LOAD_CONST", ("x",)), ("CALL_KW", 1),
                         ("POP_TOP", None))


def test_the_keywords_of_a_313_call_are_read_and_stepped_over():
    assert keyword_names(_SHOW_ITEM_313, 5) == ("x",)
    assert past_keywords(_SHOW_ITEM_313, 4) == 5 and past_keywords(_SHOW_ITEM_313, 2) == 2

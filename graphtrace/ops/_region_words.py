"""How the refusals of captured regions (``captured.py``) name what the user
wrote: what ``reads=``/``writes=`` named that is not one of the region's arrays
(a view of an argument, a number), and the name a temporary the region holds
has in the user's code."""
from __future__ import annotations

import numbers

import numpy as np

from ..arrays import as_buffer, is_array
from ..errors import format_source, user_frame_object
from ..scalar import Scalar

__all__ = ["not_given", "temporary_label"]


def not_given(t, region: str, word: str, obj, buf, given: list) -> str:
    """The message for ``word=`` (reads or writes) of captured region ``region``
    naming ``obj`` (of Buffer ``buf`` in the trace, or None), which is none of the
    arrays (``given``: their Buffers) the region is given."""
    head = f"{word}= of captured region {region} names"
    if type(obj) is Scalar or isinstance(obj, (numbers.Number, np.generic)):
        number = obj._name if type(obj) is Scalar else repr(obj)
        return (f"{head} the number {number}: {word}= names arrays the region is given, "
                "and a number is passed by value, which a region only reads; drop it "
                f"from {word}=")
    root = _root_of(t, obj) if buf is None and is_array(obj) else None
    if root is not None:
        label = root.label or "an array"
        fix = f"name the array passed ({label})" if any(b is root for b in given) else \
            f"pass {label} to s.captured(...) as an argument too and name it"
        return (f"{head} a view of {label} made anew there, not one of the arrays it is "
                f"given ({word}= names them by identity): {fix}, or pass the view itself "
                "as an argument and name that")
    if buf is None and not is_array(obj):
        return (f"{head} a {type(obj).__name__}, which is not an array: {word}= names "
                "arrays the region is given as arguments")
    what = (buf.label or "an array") if buf is not None else \
        f"an array ({type(obj).__name__})"
    return (f"{head} {what}, which is not one of the arrays it is given: pass the array to "
            "s.captured(...) as an argument too (the region is captured again with new "
            "arrays only through its arguments)")


def _root_of(t, obj):
    """The array of the trace that array ``obj`` lies in, or None."""
    try:
        made = as_buffer(obj)
        return t.root_holding(made.lo) if made.hi > made.lo else None
    except Exception:  # noqa: BLE001  (an object's own error)
        return None


def temporary_label(value, tmp) -> str:
    """What to call temporary ``tmp``, which a region holds as ``value``, in the
    ``s.captured(fn, ..., x)`` the refusal suggests: the user's name for it in the
    code recording the region (a local or closure variable there), else where it
    was made (a helper's own names are not in scope at that call)."""
    frame = user_frame_object(2)
    names = frame.f_locals if frame is not None else {}
    found = next((k for k, v in names.items() if v is value and k.isidentifier()), None)
    return found or f"the temporary made at {format_source(tmp._life.source)}"

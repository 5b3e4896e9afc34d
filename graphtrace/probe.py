"""Asking a program's object for an attribute the way graphtrace's probes do
(``hasattr(v, "py_func")``, ``getattr(t, "__cuda_array_interface__", None)``),
where the object's own lookup may raise anything: a module's ``__getattr__``,
a metaclass's, an instance's ``__getattr__`` or ``__getattribute__``, a
property. ``hasattr`` and ``getattr`` with a default swallow AttributeError
alone; these take any error of the object's own lookup for "not there", so an
odd object is never taken for a kernel, helper or array, and is read (or
keyed, or refused) as what it is; and for its ``repr`` (``_repr``), which a
listing, a log line or a warning shows. The lowest of graphtrace's modules: it
imports none of them.
"""
from __future__ import annotations

__all__ = ["_answers_oddly", "_attr", "_has", "_repr"]

_ABSENT = object()


def _attr(v, name: str, default=None):
    """``getattr(v, name, default)``, but ``default`` too where the object's own
    lookup raises other than AttributeError (an attribute dict, whose
    ``__getattr__`` is ``dict.__getitem__``, raises KeyError; a module's or a
    metaclass's ``__getattr__`` may raise RuntimeError): an attribute graphtrace
    cannot ask for is one the object lacks, not an error of the call."""
    try:
        return getattr(v, name, default)
    except Exception:  # noqa: BLE001  (whatever the object's own lookup raises)
        return default


def _has(v, name: str) -> bool:
    """``hasattr`` that takes any error of the object's own lookup for no (``_attr``)."""
    return _attr(v, name, _ABSENT) is not _ABSENT


def _answers_oddly(v) -> bool:
    """Whether asking ``v`` for an attribute it lacks raises other than
    AttributeError (a dict whose ``__getattr__`` is ``dict.__getitem__``): it is
    then no kernel, helper or array, and only read for settings."""
    try:
        getattr(v, "__graphtrace_no_such_attribute__", None)
    except Exception:  # noqa: BLE001  (whatever the object's own lookup raises)
        return True
    return False


def _repr(v) -> str:
    """``repr(v)``, or ``<type>`` where the object's own ``__repr__`` raises (a
    listing, a log line or a warning shows what it can)."""
    try:
        return repr(v)
    except Exception:  # noqa: BLE001  (an object's own __repr__ raising)
        return f"<{type(v).__name__}>"

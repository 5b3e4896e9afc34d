"""Flags a trace read and then set, set again by each replay of their graph.

A graph keyed by a value its trace read and then set (``first_reads``: ``if
not self.started: ...; self.started = True``; a parity flag, ``self.odd = not
self.odd``) holds the work that value decided, but not the store: Python ran
once, when traced. A later call finding the value as it was before that trace
(the user reset the flag; the code toggles it every call) replays that graph,
and eager code would set the flag again there: so the graph keeps the values
its trace left (``stores_of``), and each call replaying it sets them first
(``apply``), as the traced Python did; the next call, finding the new value,
takes the other graph.

Only values are set again (numbers, strings, None, enum members, and tuples of
them): an object the trace made (``self.opt = SGD(0.1)``) stays as the trace left
it. A value is found by its label (``self.started``, ``self.opt.started``,
``STATE['init']``, ``box[0]``, ``STARTED``), off the call's ``self`` or off the
name of the function that holds it, at each call: another instance of the
class, or an object the name holds now, is the one set.
"""
from __future__ import annotations

import ast
import enum
import re

from .chains import MISSING, lookup

__all__ = ["apply", "roots", "stores_of"]

_STEP = re.compile(r"\.(\w+)|\[([^\[\]]+)\]")
_VALUES = frozenset({bool, int, float, complex, str, bytes, type(None)})
_SELF = None   # the function of a store off the call's self
_ATTRIBUTES = frozenset({"attr", "default", "has"})   # Chain's steps reading attributes


def roots(self_param, reaches, places) -> dict:
    """label -> ``(function, name, steps)`` of what values are found off: the chains
    the ``Reach``-es ``reaches`` store (``STATE['init']``, ``STARTED``), the objects
    of ``places`` held by names (``(function, name, label)``: ``OPT``), and self."""
    out: dict = {}
    for fn, name, label in places:
        out.setdefault(label, (fn, name, ()))
    for r in reaches:
        for fn, chain in r.stored:
            out.setdefault(str(chain), (fn, chain.head, tuple(chain.steps)))
    if self_param is not None:
        out[self_param] = (_SELF, self_param, ())
    return out


def stores_of(labels, roots: dict, self_obj) -> tuple:
    """``(function or None, name, steps, value)`` for each of ``labels`` whose
    value is a value (module docstring) and is found from ``roots``: label of a
    name -> ``(function, name, steps)``, a function of None for ``self``."""
    out = []
    for label in sorted(labels):
        where = _parse(label, roots)
        if where is None:
            continue
        fn, name, steps = where
        try:
            v = _read(fn, name, steps, self_obj)
        except Exception:  # noqa: BLE001  (whatever the object raises: not set again)
            continue
        if _is_value(v):
            out.append((fn, name, steps, v))
    return tuple(out)


def apply(stores, self_obj) -> None:
    """Set the values of ``stores`` again (off ``self_obj`` for those of self)."""
    for fn, name, steps, v in stores:
        try:
            if not steps:
                _set_name(fn, name, v)
                continue
            o = _read(fn, name, steps[:-1], self_obj)
            how, key = steps[-1]
            if how == "attr":
                setattr(o, key, v)
            else:
                o[key] = v
        except Exception:  # noqa: BLE001  (gone since, or refused: the next call's key
            pass           # finds what is there)


def _parse(label: str, roots: dict):
    """``(function, name, steps)`` of ``label``: the longest root it starts with,
    then ``.attribute`` and ``[constant]`` steps; None where it cannot be told."""
    best = None
    for head in roots:
        if label.startswith(head) and (len(label) == len(head) or label[len(head)] in ".[") \
                and (best is None or len(head) > len(best)):
            best = head
    if best is None:
        return None
    fn, name, steps = roots[best]
    rest, at, out = label[len(best):], 0, list(steps)
    while at < len(rest):
        m = _STEP.match(rest, at)
        if m is None:
            return None
        if m.group(1) is not None:
            out.append(("attr", m.group(1)))
        else:
            try:
                out.append(("item", ast.literal_eval(m.group(2))))
            except (ValueError, SyntaxError):
                return None
        at = m.end()
    return fn, name, tuple(("attr" if how in _ATTRIBUTES else "item", key) for how, key in out)


def _read(fn, name, steps, self_obj):
    o = self_obj if fn is _SELF else lookup(fn, name)
    for how, key in steps:
        o = getattr(o, key) if how == "attr" else o[key]
    if o is MISSING:
        raise LookupError(name)
    return o


def _set_name(fn, name: str, v) -> None:
    code = fn.__code__
    if name in code.co_freevars:
        fn.__closure__[code.co_freevars.index(name)].cell_contents = v
    else:
        fn.__globals__[name] = v


def _is_value(v) -> bool:
    if type(v) in _VALUES or isinstance(v, enum.Enum):
        return True
    return type(v) is tuple and all(map(_is_value, v))

"""Stores a loop body makes through a setter of the program's own.

``m.v = 7.0``, where ``v`` is a property of ``m``'s class, runs its setter
(``self._v = val``), and a later read of ``m.v`` runs its getter (``return
self._v * self.k``), which need not give back what was stored. Such a store
sets the slot ``m.v`` for none of its reads: they still read what the getter
reads (``m._v``, ``m.k``), so a body changing ``m.k`` and reading ``m.v`` is
refused as one reading ``m.k`` is. What the setter stores off its self on every
way through it (``m._v``) is set by the store, from the value stored and what
the setter reads off its self: a read of ``m._v`` after it is not carried.
"""
from __future__ import annotations

import types

from ..bytecode import instructions
from ..chains import MISSING
from ..owners import own_object
from ..static_attrs import getattr_static
from ._loop_paths import _resolve
from ._loop_stack import _JUMPS

_SELF_LOADS = ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST")


def by_setter(scope: dict, path) -> bool:
    """Whether a store of the slot at ``path`` (``m.v``), the attribute of an
    object of the program's own that ``scope`` names, runs a setter: its class
    holds a property, or another descriptor with a ``__set__``, by that name."""
    if path is None or len(path) < 2 or type(path[0]) is not str or path[-1][0] != ".":
        return False
    return _setter(scope, path) is not None


def _setter(scope: dict, path):
    """The descriptor ``by_setter`` finds for ``path``, else None."""
    if path is None or len(path) < 2 or type(path[0]) is not str or path[-1][0] != ".":
        return None
    holder = _resolve(scope, path[:-1])
    if holder is MISSING or not own_object(holder):
        return None
    found = getattr_static(type(holder), path[-1][1], None)
    if isinstance(found, property) or found is not None and \
            getattr_static(type(found), "__set__", None) is not None:
        return found
    return None


def setter_sets(scope: dict, path, value: set) -> dict:
    """The slots a store of ``path`` through a property's setter sets on every
    way through it, each -> what its value is computed from: ``value`` (what the
    stored value reads) and the attributes the setter reads off its self
    (``self._v = val * self.s`` for ``m.v = 7.0``: ``m._v`` -> ``m.s``). Empty
    where the setter branches, or is not a property's plain function."""
    fset = getattr(_setter(scope, path), "fset", None)
    if not isinstance(fset, types.FunctionType) or not fset.__code__.co_argcount:
        return {}
    code = fset.__code__
    ins = instructions(code)
    if any(c.opcode in _JUMPS for c in ins):
        return {}
    me = code.co_varnames[0]
    on_me = [j for j in range(1, len(ins)) if ins[j - 1].opname in _SELF_LOADS and
             (ins[j - 1].argval if type(ins[j - 1].argval) is str else
              ins[j - 1].argval[-1]) == me]
    reads = {path[:-1] + ((".", ins[j].argval),) for j in on_me
             if ins[j].opname == "LOAD_ATTR"}
    return {path[:-1] + ((".", ins[j].argval),): set(value) | reads for j in on_me
            if ins[j].opname == "STORE_ATTR"}

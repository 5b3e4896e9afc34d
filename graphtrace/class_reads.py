"""The attribute names code reads through an object's class, not off the object.

``type(self).N``, ``self.__class__.N``, ``cls = type(self); cls.N`` and a class
method's ``cls.N`` read what the class holds by ``N`` even where the object
holds an ``N`` of its own (``m.N = 1``), which an attribute read off the object
(``self.N``) gives instead. The cache key holds an object's own value of a
name it reads; for the names ``class_reads`` finds, it holds the class's too
(``values.instance_values``, ``held_keys.held_key``), so ``Model.N = 0`` after
a trace is another graph where an instance's ``N`` hides the class's.

Found from the bytecode once, when traced; a name read after any call in code
that names ``type`` is taken for one (``type(self.sub).N``): at worst the class's
value is keyed where only the object's is read, and a change of it traces anew.
"""
from __future__ import annotations

import dis
import types

__all__ = ["class_reads", "classmethod_codes"]

_SKIPPED = frozenset({"PRECALL", "CACHE", "EXTENDED_ARG", "NOP"})
_CALLS = frozenset({"CALL", "CALL_FUNCTION"})
_LOCAL_STORES = frozenset({"STORE_FAST", "STORE_DEREF"})
_LOCAL_LOADS = frozenset({"LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_FAST_CHECK"})
_READS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})


def _code_reads(code, first: str | None) -> frozenset:
    """The names ``code`` reads off a class: after ``.__class__``, after a call
    where it names ``type`` (``type(self).N``), off a local set from either
    (``cls = type(self)``), and off ``first`` (a class method's ``cls``)."""
    typed = "type" in code.co_names
    classes = {first} if first else set()   # the locals holding a class
    out, last = set(), None   # last: whether the instruction before gave a class
    for ins in dis.get_instructions(code):
        op = ins.opname
        if op in _SKIPPED:
            continue
        if op in _READS:
            if last:
                out.add(ins.argval)
            last = ins.argval == "__class__"
        elif op in _CALLS or op.startswith("CALL_FUNCTION"):
            last = typed
        elif op in _LOCAL_LOADS:
            last = ins.argval in classes
        elif op in _LOCAL_STORES:
            if last:
                classes.add(ins.argval)
            elif ins.argval != first:
                classes.discard(ins.argval)
            last = False
        else:
            last = False
    out.discard("__class__")
    return frozenset(out)


def class_reads(codes, classmethods=frozenset()) -> frozenset:
    """The attribute names the code objects ``codes`` read through a class
    (module docstring); ``classmethods``: those of them of class methods, whose
    first parameter is the class."""
    out: set = set()
    for code in codes:
        first = code.co_varnames[0] if code in classmethods and code.co_argcount else None
        out |= _code_reads(code, first)
    return frozenset(out)


def classmethod_codes(*classes) -> frozenset:
    """The code of the class methods ``classes`` (and their bases) define."""
    out = set()
    for cls in classes:
        for c in getattr(cls, "__mro__", ()):
            for v in list(vars(c).values()):
                f = getattr(v, "__func__", None) if isinstance(v, classmethod) else None
                if isinstance(f, types.FunctionType):
                    out.add(f.__code__)
    return frozenset(out)

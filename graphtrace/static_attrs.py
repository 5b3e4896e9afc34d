"""An attribute looked up without running the object's code: ``getattr_static``.

``inspect.getattr_static`` does this, but Python 3.12's, which graphtrace calls
on every object a call reaches:

- tells a class from an instance by ``type in <the MRO of its class>``, which
  compares ``type`` with each class of that MRO by ``==``: a class whose
  metaclass defines ``==`` (an ORM's, a symbolic library's) answers with what
  it likes, and one whose answer has no truth value raises TypeError;
- keeps the MRO of each class it is asked of in a cache of its own (128 of
  them), so a class made per call (a ``namedtuple``) outlives its graphs.

This one looks the same places up in the same order (the object's own
``__dict__`` where its class does not shadow it, the MRO's classes' ``__dict__``,
a data descriptor first, a class's metaclass last), by identity and with no
cache, on every version.
"""
from __future__ import annotations

import types

__all__ = ["getattr_static"]

_SENTINEL = object()
_mro = type.__dict__["__mro__"].__get__           # a class's MRO, not its metaclass's
_class_dict = type.__dict__["__dict__"].__get__   # a class's namespace, likewise


def _instance_value(obj, name: str):
    try:
        space = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return _SENTINEL
    return dict.get(space, name, _SENTINEL)


def _shadowed_dict(klass):
    """The ``__dict__`` attribute of ``klass``'s MRO where one of its classes
    defines its own (not the plain slot of instance dictionaries), else none."""
    for entry in _mro(klass):
        space = _class_dict(entry)
        if "__dict__" in space:
            found = space["__dict__"]
            if not (type(found) is types.GetSetDescriptorType and
                    found.__name__ == "__dict__" and found.__objclass__ is entry):
                return found
    return _SENTINEL


def _class_value(klass, name: str):
    for entry in _mro(klass):
        if _shadowed_dict(type(entry)) is _SENTINEL:
            space = _class_dict(entry)
            if name in space:
                return space[name]
    return _SENTINEL


def getattr_static(obj, name: str, default=_SENTINEL):
    """``obj``'s attribute ``name`` as ``inspect.getattr_static`` finds it (no
    descriptor, ``__getattr__`` or ``__getattribute__`` run): ``default`` where
    it has none, AttributeError where no default is given."""
    found = _SENTINEL
    is_class = any(c is type for c in _mro(type(obj)))
    klass = obj if is_class else type(obj)
    if not is_class:
        shadow = _shadowed_dict(klass)
        if shadow is _SENTINEL or type(shadow) is types.MemberDescriptorType:
            found = _instance_value(obj, name)
    on_class = _class_value(klass, name)
    if found is not _SENTINEL and on_class is not _SENTINEL and \
            _class_value(type(on_class), "__get__") is not _SENTINEL and (
                _class_value(type(on_class), "__set__") is not _SENTINEL or
                _class_value(type(on_class), "__delete__") is not _SENTINEL):
        return on_class   # a data descriptor of the class over the instance's own
    if found is not _SENTINEL:
        return found
    if on_class is not _SENTINEL:
        return on_class
    if is_class:   # a class: its metaclass's too
        for entry in _mro(type(klass)):
            if _shadowed_dict(type(entry)) is _SENTINEL:
                space = _class_dict(entry)
                if name in space:
                    return space[name]
    if default is not _SENTINEL:
        return default
    raise AttributeError(name)

"""``Scalar``: a dynamic number of a traced function, as recorded arguments hold it."""
from __future__ import annotations

import abc
import logging
import math
import sys

import numpy as np

from .context import current_tracer
from .errors import _PKG_DIR, DynamicScalarError, _is_ours
from .probe import _attr as _probe

__all__ = ["Scalar", "value_key", "same_value", "has_fraction"]

_FLOATS, _COMPLEX = (float, np.floating), (complex, np.complexfloating)
# What a numpy number's type alone fixes: the same for every value of the type.
_BY_TYPE = frozenset({"dtype", "itemsize", "nbytes", "ndim", "shape", "size"})


class DynamicScalarAttributeError(DynamicScalarError, AttributeError):
    """An attribute a dynamic scalar's value does not have (``hasattr`` answers False,
    as of the value), or that graphtrace's own code asked for (its ``getattr(a, name,
    default)`` probes): refused, and an ``AttributeError``."""


# abc.ABCMeta's checks, Python code that asks on behalf of the code calling isinstance
_ABC_CODES = frozenset({abc.ABCMeta.__instancecheck__.__code__,
                        abc.ABCMeta.__subclasscheck__.__code__})
_OWN: dict[str, bool] = {}   # file name -> whether it is graphtrace's own


def _from_graphtrace(depth: int) -> bool:
    """Whether the code ``depth`` frames above the caller is graphtrace's own; an
    ``isinstance`` against an abstract class (``numbers.Number``) is asked for by
    ``abc.py``'s code on behalf of the code above it. (Unlike ``errors._is_ours``,
    numpy's and numba's code is the user's here: ``np.isscalar(a)`` asks for them.)"""
    f = sys._getframe(1)
    for _ in range(depth):
        f = f.f_back if f is not None else None
    while f is not None and f.f_code in _ABC_CODES:
        f = f.f_back
    if f is None:
        return False
    name = f.f_code.co_filename
    own = _OWN.get(name)
    if own is None:
        own = _OWN[name] = name.startswith(_PKG_DIR)
    return own


def value_key(v):
    """A number as cache keys and comparisons hold it: ``v``, but for a zero float
    (or a complex with a zero part) ``v`` with the signs of its zeros, since a kernel
    tells -0.0 from 0.0 (``copysign``, ``1 / x``) though Python finds them equal;
    and one key for every NaN of the same bits (sign and payload: a static NaN is
    baked into the graph as it is), which Python finds equal to nothing."""
    if isinstance(v, _FLOATS):
        if v != v:   # NaN: equal to no NaN, a new one at every read (a config reloaded)
            return "nan", np.asarray(v).tobytes()
        return v if v != 0 else (v, math.copysign(1.0, v))
    if isinstance(v, _COMPLEX) and (v.real == 0 or v.imag == 0):
        return v, math.copysign(1.0, v.real), math.copysign(1.0, v.imag)
    return v


def number_of_key(k):
    """The number a ``value_key`` stands for (its first part, which keeps the signs
    of zeros, or the NaN of those bits), or ``MISSING_NUMBER`` where ``k`` is none."""
    if type(k) is tuple and len(k) in (2, 3):
        if k[0] == "nan" and type(k[1]) is bytes and len(k) == 2:
            return float("nan")
        if isinstance(k[0], _FLOATS + _COMPLEX) and all(type(x) is float for x in k[1:]):
            return k[0]
    return MISSING_NUMBER


MISSING_NUMBER = object()


def same_value(x, y) -> bool:
    """``x == y`` as a kernel sees numbers: -0.0 is not 0.0 (on the call path: the
    common types at once)."""
    t = type(x)
    if t is int or t is bool:
        return x == y
    if t is float:
        return x == y and (x != 0 or math.copysign(1.0, x) == math.copysign(1.0, y))
    return x == y and value_key(x) == value_key(y)


def has_fraction(v) -> bool:
    """Whether the real number ``v`` is a float (Python or numpy) that is no whole
    number, a NaN or an infinity included: an integer type would cut it."""
    return isinstance(v, _FLOATS) and not float(v).is_integer()


class Scalar:
    """A dynamic numeric argument of a traced function.

    It stands for the number during the trace, so that a later call with
    another number rebinds the parameter instead of tracing again. Using it in
    Python control flow or arithmetic would bake one value into the graph,
    so it raises and suggests ``static=``.
    """

    __slots__ = ("_name", "_value", "slot", "_param", "_function")

    def __init__(self, name: str, value, slot: int, param: str | None = None,
                 function: str | None = None):
        self._name, self._value, self.slot = name, value, slot
        self._param = param or name   # the parameter it came in (``dims`` of ``dims[0]``)
        self._function = function   # the name of the graph function it is a parameter of

    def _refuse(self, *_args, _error=DynamicScalarError, **_kw):
        raise _error(
            f"argument {self._name!r} is a dynamic scalar{self._of()}: its value is a graph "
            "parameter that later calls may change, so it cannot steer Python "
            "control flow, arithmetic or text (str, repr, f-strings, print: its value is not "
            "known while tracing; print it outside the function) during a trace; pass its parameter in "
            f"{self._on()}@graph(static=({self._param!r},)) to trace a graph per value, "
            "compute the number outside the function and pass the result as an argument "
            "(dynamic too: a call with another result rebinds it), or compute on the device")

    def _converted(self, *_args, **_kw):
        """Refuse a conversion (``float(a)``, ``int(a)``, ``np.float32(a)``)."""
        raise DynamicScalarError(
            f"argument {self._name!r} is a dynamic scalar{self._of()}: its value is a graph "
            "parameter that later calls may change, so it cannot be converted (float(a), "
            "int(a), complex(a), np.float32(a), np.asarray(a)) during a trace, which would "
            "fix the traced value in the graph; pass it to the kernel as it is (the kernel "
            "converts it to its parameter's type), pass the number already converted "
            "(f(x, np.float32(a)): a kernel takes a numpy number as its type), or pass its "
            f"parameter in {self._on()}@graph(static=({self._param!r},)) to trace a graph per "
            "value")

    def refuse_static(self, callee: str, param: str):
        """Raise for a nested graph function ``callee`` given this scalar for its
        static parameter ``param``: the function it is a parameter of must make it
        static too."""
        raise DynamicScalarError(
            f"argument {self._name!r} is a dynamic scalar{self._of()}, but {callee} takes "
            f"{param!r} as static (static=({param!r},)): a dynamic scalar's value is a graph "
            "parameter that later calls may change, which a graph of "
            f"{callee} traced for one value would not follow; pass {self._param!r} in "
            f"{self._on()}@graph(static=({self._param!r},)) too, to trace a graph per value")

    def _of(self) -> str:
        return f" of {self._function}" if self._function else ""

    def _on(self) -> str:
        return f"{self._function}'s " if self._function else ""

    def _compared(self, other):
        if _probe(type(other), "_reflects_comparisons", False):
            return NotImplemented   # tol < gt.cond(x): the condition's own comparison
        self._refuse()

    __bool__ = __index__ = __hash__ = _refuse
    __int__ = __float__ = __complex__ = _converted
    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _compared
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _refuse
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = _refuse
    __mod__ = __rmod__ = __pow__ = __rpow__ = __neg__ = __pos__ = __abs__ = _refuse
    __and__ = __or__ = __xor__ = __lshift__ = __rshift__ = __round__ = _refuse
    __rand__ = __ror__ = __rxor__ = __rlshift__ = __rrshift__ = __invert__ = _refuse
    __divmod__ = __rdivmod__ = __matmul__ = __rmatmul__ = _refuse
    __trunc__ = __floor__ = __ceil__ = _refuse   # math.trunc(a), math.floor(a)
    # numpy's functions and ufuncs (np.sqrt(a), np.clip(a, 0, 1)); its conversions
    # (np.float32(a), np.asarray(a)) ask __array__
    __array_ufunc__ = __array_function__ = _refuse
    __array__ = _converted

    # Its type is part of the graph's signature (a later call with a number of another
    # type traces anew), so the user's code may ask about it and gets the value's
    # answer: isinstance(a, float), numbers.Real, np.isscalar(a), singledispatch; and,
    # of a numpy number, the attributes its type fixes (a.dtype). graphtrace's own
    # code sees the stand-in. (type(a) is the stand-in's type: refused where the
    # function asks it of a parameter, type_calls.py; use isinstance.)
    @property
    def __class__(self):
        return Scalar if _from_graphtrace(1) else type(self._value)

    def __getattr__(self, name):   # a.real, a.item(), a.astype(...): numpy's scalars' own
        if name.startswith("_"):
            raise AttributeError(name)
        if _from_graphtrace(1) or not hasattr(self._value, name):
            # an AttributeError, as the value's would be (its type is in the key)
            self._refuse(_error=DynamicScalarAttributeError)
        if name in _BY_TYPE and isinstance(self._value, np.generic):
            return getattr(self._value, name)
        self._refuse()   # not an AttributeError: hasattr(a, "real") is not False

    def __str__(self):   # str(a), f"{a}", "%s" % a in the user's code: its name would
        return self._text()   # go where its value should (COEF[str(order)]): refused

    def __repr__(self):   # repr(a), f"{a!r}", "%r" % a in a trace: as str(a); after
        return self._name if current_tracer() is None else self._text()   # it, the name

    def __format__(self, spec):
        return self._text()

    def _text(self):
        caller = sys._getframe(2).f_code.co_filename
        if _is_ours(caller) or caller == logging.__file__:   # listings, log records:
            return self._name                                   # shown, not computed on
        self._refuse()


def _own(attr: str) -> property:
    """A Scalar's own ``name``, ``value``, ``param`` or ``function`` to graphtrace's
    code; to the user's, what the value has by that name: the AttributeError raised
    here makes Python ask ``__getattr__`` (``getattr(x, "value", x)`` unwrapping a
    number got the first call's value, which the graph then baked in)."""
    field = Scalar.__dict__["_" + attr].__get__

    def get(self):
        if _from_graphtrace(1):
            return field(self)
        raise AttributeError(attr)
    return property(get, doc=f"graphtrace's own {attr} of the scalar")


for _attr in ("name", "value", "param", "function"):
    setattr(Scalar, _attr, _own(_attr))
del _attr

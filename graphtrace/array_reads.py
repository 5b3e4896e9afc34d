"""Numbers a chain (``chains.Chain``) reads off a host numpy array, keyed by value
as any setting it reads is: an item by constant indices (``LR[0]``, ``W[1][2]``,
``LR[I]`` of ``I = np.int64(0)``, ``LR.flat[0]``: ``host_item``), or a method of
the array reading one number with constant arguments (``LR.item(0)``,
``LR.sum()``: a step ``("call", (name, args))``, ``array_read``); and the parts of
``chains.value_chains``' walk of bytecode that find them (``_array_call``,
``_numpy_reduction`` for ``np.sum(LR)``, ``_numpy_int_key`` for ``LR[np.int64(0)]``).
"""
from __future__ import annotations

import numpy as np

from .named_keys import MISSING

__all__ = ["ARRAY_READS", "ARRAY_VIEWS", "NUMBER", "array_read", "array_step", "host_item"]


def host_item(a, key):
    """The number a host numpy array holds at constant index ``key`` (``LR[0]``,
    ``W[1, 2]``: one int per dimension, numpy's too: ``LR[I]`` of ``I =
    np.int64(0)``), the row fewer give (``W[1]`` of ``W[1][2]``), the item of its
    ``flat`` (``LR.flat[0]``); MISSING for anything else (a slice, a bool)."""
    if type(a) is np.flatiter:
        a, index = a.base, key if _whole(key) else None
        if index is None or a.dtype.kind not in "biufc" or not -a.size <= index < a.size:
            return MISSING
        return a.flat[index]
    index = key if type(key) is tuple else (key,)
    if not (0 < len(index) <= a.ndim or a.ndim == 0 == len(index)) or \
            a.dtype.kind not in "biufc" or \
            not all(_whole(i) and -n <= i < n for i, n in zip(index, a.shape)):
        return MISSING
    return a[index]


def _whole(i) -> bool:
    """An integer an index may be: Python's (not a bool) or numpy's."""
    return type(i) is int or isinstance(i, np.integer)


# numpy's methods that read a host array's values into one number (``LR.item(0)``,
# ``W.item(1, 2)``, ``LR.sum()``, ``LR.max()``): with constant arguments, a chain's
# step ``("call", (name, args))``, read at each call and keyed by the number it gives
ARRAY_READS = frozenset({"item", "sum", "prod", "max", "min", "mean", "std", "var",
                         "any", "all", "argmax", "argmin"})
# an array's attributes that are views of its elements (``LR.flat[0]``, ``W.T[2, 1]``)
ARRAY_VIEWS = frozenset({"flat", "T"})
_NUMBERS = (int, float, complex, np.generic)
# what float(LR), int(LR), complex(LR) of a host array of one element read (its
# number, as LR.item()): a step ("call", (NUMBER, ())); anything else is kept as it
# is (float(N) of a number, int(OBJ) of an object of the program's own)
NUMBER = "__number__"
_CONVERSIONS = frozenset({"float", "int", "complex"})


def array_read(v, key):
    """The number ``v.name(*args)`` gives (``key`` is ``(name, args)``) where ``v`` is
    a host numpy array of numbers, MISSING for anything else (an object of
    another class is not called: its method may do anything; an array given back,
    ``W.sum(0)``, is no number; an empty array's reduction, which numpy warns of
    and which the program's own test may never reach: ``if W.size: W.mean()``).
    A reduction costs every call what numpy takes over the array: a key read
    cheaply enough would miss a change in place (the graph replaying stale)."""
    name, args = key
    if name == NUMBER:
        return v.item() if type(v) is np.ndarray and v.size == 1 and \
            v.dtype.kind in "biufc" else v
    if type(v) is not np.ndarray or v.dtype.kind not in "biufc" or \
            name != "item" and not v.size:
        return MISSING
    try:
        if name == "item":
            out = v.item(*args)
        else:   # (numpy's warnings, the program's to give: NaNs, overflows)
            with np.errstate(all="ignore"):
                out = getattr(np.ndarray, name)(v, *args)
    except (ValueError, IndexError, TypeError, ArithmeticError):   # W.item() of many,
        return MISSING                                             # LR.item(9)
    return out if isinstance(out, _NUMBERS) else MISSING


def array_step(key):
    """A step of ``Chain.calls`` reading ``array_read(v, key)``, raising LookupError
    where it gives no number (the chain's ``read`` then says what it holds)."""
    def read(v):
        out = array_read(v, key)
        if out is MISSING:
            raise LookupError(key[0])
        return out
    return read


def _array_call(args: tuple, op: str, ins) -> tuple:
    """``(args, done)`` one instruction on in ``LR.item(0, ...)`` after the method's
    name: a constant argument loaded (``args`` grows), or the call of as many
    (``done``: its arguments); ``(None, None)`` where anything else comes (an
    argument a variable gives, a keyword: no constant read)."""
    if op in ("LOAD_CONST", "LOAD_SMALL_INT") and type(ins.argval) in (int, tuple):
        return args + (ins.argval,), None
    if op in ("PUSH_NULL", "CACHE", "NOP", "EXTENDED_ARG") or \
            op == "PRECALL" and ins.arg == len(args):   # (3.11)
        return args, None
    if op == "CALL" and ins.arg == len(args):
        return None, args
    return None, None


def _numpy_reduction(held: tuple):
    """The method ``np.sum(LR)`` is read as (``LR.sum()``) where ``held``, the chain
    loaded before the argument, is numpy's function of one of ``ARRAY_READS``;
    ``NUMBER`` where it is ``float``, ``int`` or ``complex``; None for anything else."""
    head, steps = held
    if head in ("np", "numpy") and len(steps) == 1 and steps[0][0] == "attr" and \
            steps[0][1] in ARRAY_READS and steps[0][1] != "item":
        return steps[0][1]
    if head in _CONVERSIONS and not steps:   # float(LR): its one number
        return NUMBER
    return None


# the numpy integer types an index may be made as (LR[np.int64(0)])
_NUMPY_INTS = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                         "uint64", "intp", "uintp", "int_", "intc", "uintc", "longlong",
                         "ulonglong"})
_SUBSCRIPT = ("BINARY_SUBSCR", "STORE_SUBSCR", "DELETE_SUBSCR")


def _numpy_int_key(ins: list, n: int):
    """``(int, end)`` where the instructions ``ins`` from ``n`` make a numpy integer
    of a constant used as a subscript (``LR[np.int64(0)]``, ``from numpy import
    intp``: ``LR[intp(0)]``), read as the constant key it equals; ``end`` the index
    of the call's instruction. None for anything else."""
    name = ins[n].argval
    m = n + 1
    if name in ("np", "numpy") and m < len(ins) and \
            ins[m].opname in ("LOAD_ATTR", "LOAD_METHOD"):
        name, m = ins[m].argval, m + 1
    if name not in _NUMPY_INTS:
        return None
    rest = [(i, x) for i, x in enumerate(ins[m:m + 6], m)
            if x.opname not in ("PUSH_NULL", "PRECALL", "CACHE")]
    if len(rest) < 3 or rest[0][1].opname not in ("LOAD_CONST", "LOAD_SMALL_INT") or \
            type(rest[0][1].argval) is not int or \
            rest[1][1].opname != "CALL" or rest[1][1].arg != 1 or \
            not (rest[2][1].opname in _SUBSCRIPT or rest[2][1].argrepr == "[]"):
        return None
    return rest[0][1].argval, rest[1][0]

"""Keys read by a name: a dict indexed by a constant the code reaches through a
global or closure name (``ST[Phase.A]``, ``STATE[KEY]`` with ``KEY = "init"``,
``self.state[Keys.INIT]``), rather than by a literal (``ST["init"]``).

The bytecode says only which name and attributes give the key; the key itself
is read when the chain is (``Named.value``, against the globals and closure of
the function that reads it), so a chain off such a key is read, keyed, stored
and set again as one with a literal key is (``chains.py``, ``first_reads.py``,
``replayed_stores.py``). Its label names the key by its name (``ST[Phase.A]``,
``ST.get(KEY)``), which ``named_key`` reads back. Only a key that is a value
(a number, a string, an enum member, a class, a tuple of them) or an object
hashed by its identity counts: any other object the name holds reads as no key
at all (``MISSING``).
"""
from __future__ import annotations

import builtins
import dataclasses
import enum
import types

import numpy as np

from .static_attrs import getattr_static

__all__ = ["KEY_PARTS", "MISSING", "Named", "by_name", "keyed_chain", "keys_read_by", "name_end",
           "named_key", "resolved"]

MISSING = object()   # (chains.MISSING is this object: chains imports it from here)
_VALUES = (int, float, complex, str, bytes, enum.Enum, type, np.generic)


class Named:
    """A key read by a global or closure name and constant attributes off it
    (``Phase.A``, ``KEY``, ``Keys.INIT``): ``name`` as written, ``fn`` the function
    whose names it is read by (None: the one reading the chain, ``value``'s).
    Equal to another of the same name: where it is read is no part of what the
    code reads or changes (``chains.changes``)."""

    __slots__ = ("name", "parts", "fn")

    def __init__(self, name: str, fn=None):
        self.name, self.parts, self.fn = name, tuple(name.split(".")), fn

    def __eq__(self, other) -> bool:
        return type(other) is Named and other.name == self.name

    def __hash__(self) -> int:
        return hash((Named, self.name))

    def __repr__(self) -> str:   # (the label's: ST[Phase.A])
        return self.name

    def value(self, fn=None):
        """The key the name gives inside ``self.fn`` (or ``fn``) now; MISSING where
        the name is not there, or holds no value a key may be."""
        try:
            return self.getter(fn)()
        except (LookupError, AttributeError, ValueError, TypeError):
            return MISSING

    def step(self, how: str, fn, missing):
        """A step of ``Chain.calls`` reading the item of this key off a dict
        (``ST[Phase.A]``; ``ST.get(KEY)``: ``missing`` where it is not there), the key
        read at each call."""
        now = self.getter(fn)
        if how == "get":
            return lambda v: v.get(now(), missing)
        return lambda v: v[now()]

    def getter(self, fn=None):
        """A call without arguments giving the key now (for the call path, which
        reads it at each call), raising LookupError where there is none."""
        scope = self.fn if self.fn is not None else fn
        head, rest = self.parts[0], self.parts[1:]
        if getattr(scope, "__code__", None) is None:   # (read by no function's names)
            def none():
                raise LookupError(self.name)
            return none
        code = scope.__code__
        if head in code.co_freevars:
            cell = scope.__closure__[code.co_freevars.index(head)]

            def root():
                return cell.cell_contents   # (an empty cell: ValueError)
        else:
            scope_globals = scope.__globals__

            def root():   # (a builtin too: S[float])
                return scope_globals[head] if head in scope_globals else \
                    vars(builtins)[head]

        def get():
            v = root()
            for a in rest:
                v = _attribute(v, a)
            if not _key_value(v):
                raise LookupError(self.name)
            return v
        return get


def _attribute(v, name: str):
    """``v.name`` as a key is read off a name: a member of an enum (not its class's
    descriptor of that name), a class's or a module's own value, or read
    statically (no property's code runs); an enum member's ``value`` or ``name``."""
    if isinstance(v, enum.EnumMeta) and name in v._member_map_:
        return v._member_map_[name]
    if isinstance(v, enum.Enum) and name in ("value", "name"):
        return getattr(v, name)
    if isinstance(v, types.ModuleType):
        return v.__dict__[name]
    if isinstance(v, type):
        for c in v.__mro__:
            if name in c.__dict__:
                return c.__dict__[name]
        raise AttributeError(name)
    got = getattr_static(v, name, MISSING)
    if got is MISSING:
        raise AttributeError(name)
    return got


def _key_value(v, depth: int = 0) -> bool:
    """A key a name may give: a value (hashable and unchanging: a number, numpy's
    too, a string, an enum member, a class; a tuple, a namedtuple, a frozenset or
    a frozen dataclass of them), or an object hashed by its identity (``SENTINEL
    = object()``)."""
    if isinstance(v, _VALUES) or type(v).__hash__ is object.__hash__:
        return True
    if depth >= 4:
        return False
    if isinstance(v, (tuple, frozenset)):
        return all(_key_value(x, depth + 1) for x in v)
    params = getattr(type(v), "__dataclass_params__", None)
    return params is not None and params.frozen and all(
        _key_value(getattr(v, f.name), depth + 1) for f in dataclasses.fields(v))


def named_key(text: str):
    """The ``Named`` key a label writes as ``text`` (``Phase.A`` of ``ST[Phase.A]``);
    None where ``text`` is no dotted name."""
    parts = text.split(".")
    return Named(text) if all(p.isidentifier() for p in parts) else None


def by_name(steps: tuple) -> bool:
    """Whether a chain's ``steps`` read an item by a key a name gives."""
    return any(type(k) is Named for _, k in steps)


def keys_read_by(steps: tuple, fn) -> tuple:
    """``steps`` (a chain's ``(how, key)``) with their ``Named`` keys read by the
    names of ``fn``, the function whose code reads them (a held object's method)."""
    if not by_name(steps):
        return steps
    return tuple((how, Named(k.name, fn) if type(k) is Named and k.fn is None else k)
                 for how, k in steps)


def resolved(steps: tuple, fn) -> tuple | None:
    """``steps`` with their ``Named`` keys read now (against ``fn``, where a key is
    bound to none); None where one gives no key."""
    out = []
    for how, k in steps:
        if type(k) is Named:
            k = k.value(fn)
            if k is MISSING:
                return None
        out.append((how, k))
    return tuple(out)


_SUBSCRIPTS = frozenset({"BINARY_SUBSCR", "STORE_SUBSCR", "DELETE_SUBSCR"})
_DEFAULTS = frozenset({"LOAD_CONST", "LOAD_SMALL_INT", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF",
                       "LOAD_FAST", "LOAD_FAST_BORROW", "LOAD_FAST_CHECK"})


KEY_PARTS = frozenset({"LOAD_ATTR", "CACHE", "NOP", "EXTENDED_ARG"})   # a key's name's load


def keyed_chain(container: tuple, key: tuple, ins):
    """What ``chains.value_chains`` holds (``(chain, constant key)``) where ``ins``,
    the instruction after the chain ``key`` (a name and attributes: ``Phase.A``),
    uses the key that chain gives on the chain ``container`` (``(head, steps)``) as a
    subscript's (``ST[Phase.A]``, ``= v``, ``del``, ``+= 1``): ``(container,
    (Named,))``, as a literal key loaded; or ``.get``'s (``ST.get(KEY)``,
    ``ST.get(KEY, False)``): ``(the chain read, None)``. None for another use."""
    head, steps = key
    if any(how != "attr" for how, _ in steps):
        return None
    named = Named(".".join((head,) + tuple(k for _, k in steps)))
    op = ins.opname
    if op in _SUBSCRIPTS or op == "COPY" and ins.arg == 2 or \
            op == "BINARY_OP" and ins.argrepr == "[]":
        return container, (named,)
    if container[1][-1:] == (("attr", "get"),) and (
            op in ("PRECALL", "CALL") and ins.arg == 1 or op in _DEFAULTS or
            op in ("BUILD_MAP", "BUILD_LIST", "BUILD_TUPLE") and ins.arg == 0):
        return (container[0], container[1][:-1] + (("get", named),)), None
    return None


def name_end(ins: list, n: int, key: Named):
    """Where the load of ``key``'s name at ``n`` in the instructions ``ins`` ends: the
    index of its last attribute's load; None where no such chain is loaded there
    (another attribute read off it too: ``Phase.A.value`` is another key)."""
    m = n
    for part in key.parts[1:]:
        m += 1
        if m >= len(ins) or ins[m].opname != "LOAD_ATTR" or ins[m].argval != part:
            return None
    if m + 1 < len(ins) and ins[m + 1].opname in ("LOAD_ATTR", "LOAD_METHOD"):
        return None
    return m

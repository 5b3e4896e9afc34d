"""Whether a function's code reads a list or dict a name holds whole.

A container read by constant keys alone (``CFG["lr"]``, ``CFG.get("lr", 0.1)``,
``L[0]``) is watched by those keys; one the code also reads whole (``len(L)``,
``for k in D``, ``"z" in D``, ``sum(D.values())``, ``D.get(k)``) is watched by
every value it holds, else a change to another key replays the graph traced
before it (``Reach``: ``wholes``).
"""
from __future__ import annotations

import dis
from collections import deque

from .chain_steps import NAME_LOADS
from .chains import callback_codes
from .handed import hands
from .probe import _attr

__all__ = ["loads", "loads_to_hand", "read_attribute_whole", "read_whole"]

_SKIPPED = frozenset({"CACHE", "NOP", "EXTENDED_ARG", "PRECALL"})
_CONSTS = frozenset({"LOAD_CONST", "LOAD_SMALL_INT"})
_ATTRS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})
_INDEXED = frozenset({"BINARY_SUBSCR", "STORE_SUBSCR", "DELETE_SUBSCR", "COPY",
                      "DUP_TOP_TWO"})


def read_whole(code, name: str, v, changes=True, hosted=frozenset()) -> bool:
    """Whether ``code`` (or code nested in it, a host callback's left out: it reads
    when it runs) uses what ``name`` holds (``v``) otherwise than by a constant
    key or attribute: handed on, iterated, tested for a key, sized, or a method
    of its type called on it (a local assigned from it counts as it; ``changes``
    False: not ``.pop`` or ``.setdefault`` of a constant key, which change it;
    nor the methods named in ``hosted``, which the code only hands to ``s.host``:
    ``s.host(HIST.record, h)`` reads what ``HIST`` holds when it runs)."""
    for listed in _baked_code(code):
        aliases: set = set()   # d = GD: d["a"], len(d)
        for at, ins in enumerate(listed):
            if (ins.opname in NAME_LOADS and ins.argval == name or
                    ins.opname == "LOAD_FAST" and ins.argval in aliases) and \
                    not _keyed_use(listed, at + 1, v, aliases, changes, hosted):
                return True
    return False


def read_attribute_whole(code, root: str, attr: str) -> bool:
    """Whether ``code`` (as ``read_whole`` with ``changes`` False) uses the list, set
    or dict ``root.attr`` holds (``self.d``) otherwise than by a constant key: ``if
    self.d:``, ``len(self.d)``, ``"k" in self.d``, a method of a container called on it."""
    for listed in _baked_code(code):
        aliases: set = set()   # d = self.d: d["a"], len(d)
        for at, ins in enumerate(listed):
            if ins.opname not in _FAST:
                continue
            if ins.argval == root and at + 1 < len(listed) and \
                    listed[at + 1].opname in _ATTRS and listed[at + 1].argval == attr and \
                    not _keyed_use(listed, at + 2, _ANY, aliases, False) or \
                    ins.argval in aliases and not _keyed_use(listed, at + 1, _ANY, aliases, False):
                return True
    return False


_FAST = frozenset({"LOAD_FAST", "LOAD_FAST_BORROW", "LOAD_FAST_CHECK"})


class _Container:
    """A value whose type has the methods of a list, a set, a dict and a deque: what
    ``_keyed_use`` asks of a container not at hand (``self.d`` of any instance)."""


for _t in (deque, set, list, dict):
    for _name in dir(_t):
        if not _name.startswith("__") and callable(getattr(_t, _name)):
            setattr(_Container, _name, getattr(_t, _name))
_ANY = _Container()


def loads(code, name: str) -> bool:
    """Whether ``code`` (or code nested in it, a host callback's left out) loads
    ``name``: reads it, not only stores it (``NEWS = True``)."""
    return any(ins.opname in NAME_LOADS and ins.argval == name
               for listed in _baked_code(code) for ins in listed)


def loads_to_hand(code, name: str, hosted, whole: bool) -> bool:
    """Whether each load of ``name`` in ``code`` (or code nested in it, a host
    callback's left out) takes off it a method of ``hosted`` (``s.host(HIST.record,
    h)``), or, ``whole``, hands it whole to ``s.host`` alone; not where the code also
    hands it on (``pick(M)``, ``dict.get(M, "k")``, ``itemgetter("k")(M)``) or tests
    it (``"k" in M``): those read what it holds."""
    for listed in _baked_code(code):
        for at, ins in enumerate(listed):
            if ins.opname in NAME_LOADS and ins.argval == name and not whole and not (
                    at + 1 < len(listed) and listed[at + 1].opname in _ATTRS and
                    listed[at + 1].argval in hosted):
                return False
    return True


def _baked_code(code):
    """The instructions of ``code`` and of the code nested in it but host
    callbacks' (``callback_codes``), one list a code object."""
    codes = [code]
    while codes:
        c = codes.pop()
        inner = callback_codes(c)
        codes += [k for k in c.co_consts if hasattr(k, "co_code") and k not in inner]
        yield [i for i in dis.get_instructions(c) if i.opname not in _SKIPPED]


def _keyed_use(listed: list, at: int, v, aliases: set, changes=True,
               hosted=frozenset()) -> bool:
    """Whether the instructions from ``at`` on, after a load of ``v``, read a constant
    key or attribute off it (or store it in a local: an alias, whose uses tell), or a
    method of ``hosted``, handed to ``s.host`` alone."""
    if at >= len(listed):
        return False
    ins = listed[at]
    if ins.opname == "STORE_FAST":
        aliases.add(ins.argval)
        return True
    if ins.opname in _ATTRS:
        if ins.argval in hosted:
            return True
        if ins.argval == "get" or not changes and ins.argval in ("pop", "setdefault"):
            # D.get("k"[, default]) by its key; D.get(k): whole
            return _key_end(listed, at + 1) is not None
        return not callable(_attr(type(v), ins.argval))   # D.values(), L.index(x)
    end = _key_end(listed, at)
    return end is not None and end < len(listed) and (
        listed[end].opname in _INDEXED or
        listed[end].opname == "BINARY_OP" and listed[end].argrepr == "[]")


def _key_end(listed: list, at: int) -> int | None:
    """The index after a constant key loaded at ``at`` (``"k"``, or a name's
    constant attributes: ``Phase.A``), None where none is."""
    if at >= len(listed):
        return None
    if listed[at].opname in _CONSTS:
        return at + 1
    if listed[at].opname not in NAME_LOADS:
        return None
    at += 1
    while at < len(listed) and listed[at].opname == "LOAD_ATTR":
        at += 1
    return at


def handed_attributes(functions, function, self_param: str) -> frozenset:
    """The attributes of self that ``functions`` (``function``, whose self is
    ``self_param``, and methods of its class) read only to hand a method of what
    they hold to ``s.host`` (``s.host(self.history.append, v)``): the callback reads
    and changes it when it runs, so its values are no setting of the graph."""
    handed, other = set(), set()
    for f in functions:
        code = f.__code__
        root = self_param if f is function else code.co_varnames[:1]
        hand = hands(code)
        for listed in _baked_code(code):
            for at, ins in enumerate(listed[:-1]):
                if ins.opname not in _FAST or ins.argval not in root or \
                        listed[at + 1].opname not in _ATTRS:
                    continue
                attr, after = listed[at + 1].argval, listed[at + 2:at + 3]
                h = hand.get((ins.argval, (attr, after[0].argval))) \
                    if after and after[0].opname in _ATTRS else None
                (handed if h is not None and h.callbacks_alone else other).add(attr)
    return frozenset(handed - other)

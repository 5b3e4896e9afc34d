"""Values a function reads off the names it loads: the lookup of a name, or of
an attribute chain read statically, as the function would see it now; and
the settings read off an object by constant keys and attributes
(``CFG["lr"]``, ``cfg.opt.lr``, ``Config.lr``), found in the bytecode, which
``reach`` watches by value, with the objects the code changes in place.
"""
from __future__ import annotations

import dis
import enum
import inspect
import types

__all__ = ["Chain", "MISSING", "NAME_LOADS", "chain", "lookup", "value_chains"]

MISSING = object()   # what a lookup gives for a name, attribute or key not there
NAME_LOADS = ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLASSDEREF")


def lookup(fn, name):
    """What ``name`` means inside ``fn`` now (closure cell first, then globals); a
    dotted name (``K.step``), its attributes read statically, None where absent; a
    ``Chain``'s value (MISSING where absent)."""
    if type(name) is Chain:
        return name.read(fn)
    if "." in name:
        head, *rest = name.split(".")
        v = lookup(fn, head)
        for a in rest:
            v = inspect.getattr_static(v, a, None)
        return v
    code = fn.__code__
    if name in code.co_freevars:
        try:
            return fn.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:   # an empty cell
            return None
    return fn.__globals__.get(name)


class Chain(str):
    """A value read off a name by constant attributes and items (``CFG["lr"]``,
    ``cfg.opt.lr``, ``TABLE[2]``, ``CFG.get("lr")``), as its label; ``steps`` are
    ``(how, key)``: ``"attr"`` read statically (no property's code runs), ``"item"``
    of an exact dict, list or tuple only, ``"get"`` of an exact dict (a key not
    there is a value too: one put there later traces anew). Watched by value like
    a name's number: an object keeps its settings in place (``cfg.lr = 0.2``) or
    a new object replaces it, and either way the graph baked in the value it
    read."""

    __slots__ = ("head", "steps")

    def read(self, fn):
        v = lookup(fn, self.head)
        for how, key in self.steps:
            if how == "attr":
                v = _static_attr(v, key)
            elif type(v) is dict:   # CFG.get("lr"): a key not there is watched too
                v = v.get(key, _NoKey.NONE if how == "get" else MISSING)
            elif type(v) in (list, tuple) and type(key) is int and -len(v) <= key < len(v):
                v = v[key]
            else:
                v = MISSING
            if v is MISSING:
                return MISSING
        return v


class _NoKey(enum.Enum):
    """What ``CFG.get(key)`` reads where the key is not there (a value, watched)."""
    NONE = "no such key"


def chain(head: str, steps: tuple) -> Chain:
    label = head + "".join(f".{k}" if how == "attr" else f".get({k!r})" if how == "get" else
                           f"[{k!r}]" for how, k in steps)
    out = Chain(label)
    out.head, out.steps = head, steps
    return out


def _hashable(key) -> bool:
    try:
        hash(key)
    except TypeError:
        return False
    return True


def _static_attr(v, name):
    """``v.name`` read without running a property's code: an instance's own value,
    a slot's, a class's or a module's; MISSING where there is none."""
    got = inspect.getattr_static(v, name, MISSING)
    if type(got).__name__ == "member_descriptor" and not isinstance(v, type):
        try:
            return got.__get__(v, type(v))   # a __slots__ attribute: the C getter
        except AttributeError:
            return MISSING
    return got


# methods that change a list, dict or set in place: a name they are called on in a
# walked function's line is state it keeps, not a setting it reads
_MUTATORS = frozenset({"append", "extend", "insert", "pop", "popitem", "update",
                       "setdefault", "clear", "remove", "add", "discard", "sort",
                       "reverse", "__setitem__", "__delitem__", "__iadd__"})
_CHANGES = frozenset({"STORE_ATTR", "STORE_SUBSCR", "DELETE_ATTR", "DELETE_SUBSCR"})


def value_chains(code) -> tuple[list, set]:
    """``([(name, steps)], changed)`` for ``code`` and the code nested in it: each
    chain of constant attributes and items read off a name it loads (every
    prefix), and the names it changes in place: loaded on a line that stores an
    attribute or item, calls a method of ``_MUTATORS``, ``setattr`` or ``delattr``."""
    out, changed, codes = [], set(), [code]
    while codes:
        c = codes.pop()
        codes.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        lines: dict = {}   # line -> (names loaded on it, whether it changes one)
        held = const = None
        for ins in dis.get_instructions(c):
            op, line = ins.opname, ins.positions.lineno if ins.positions else None
            names, changes = lines.setdefault(line, (set(), [False]))
            if op in _CHANGES or op in ("LOAD_ATTR", "LOAD_METHOD") and \
                    ins.argval in _MUTATORS or op in NAME_LOADS and \
                    ins.argval in ("setattr", "delattr"):
                changes[0] = True
            if op in NAME_LOADS:
                names.add(ins.argval)
                held, const = (ins.argval, ()), None
                continue
            if held is None:
                continue
            if op in ("LOAD_ATTR", "LOAD_METHOD") and const is None:
                held = (held[0], held[1] + (("attr", ins.argval),))
            elif op == "LOAD_CONST" and const is None and _hashable(ins.argval):
                const = (ins.argval,)
                if held[1] and held[1][-1] == ("attr", "get"):   # CFG.get("lr"[, default])
                    held = (held[0], held[1][:-1] + (("get", ins.argval),))
                    out.append(held)
                    held = None
                continue
            elif (op == "BINARY_SUBSCR" or op == "BINARY_OP" and ins.argrepr == "[]") and \
                    const is not None:
                held = (held[0], held[1] + (("item", const[0]),))
            else:
                held = None
                continue
            const = None
            out.append(held)
        for names, changes in lines.values():
            if changes[0]:
                changed |= names
    return out, changed

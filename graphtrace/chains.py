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
import operator
import types

__all__ = ["Chain", "MISSING", "NAME_LOADS", "chain", "changes", "host_callbacks", "lookup",
           "value_chains"]

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

    def getter(self, fn, root):
        """A call without arguments giving ``read(fn)``, for the call path: ``root``
        looks the name up (in C), then each step is one C call (``attrgetter``,
        ``itemgetter``); anything odd (the key gone, an empty cell, another type
        of object now) is left to ``read``."""
        steps = tuple(operator.attrgetter(k) if how == "attr" else operator.itemgetter(k)
                      if how == "item" else operator.methodcaller("get", k, _NoKey.NONE)
                      for how, k in self.steps)
        read = self.read

        def get():
            try:
                v = root()
                for step in steps:
                    v = step(v)
                return v
            except Exception:  # noqa: BLE001  (whatever the object raises: read says)
                return read(fn)
        return get

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


# methods that change a list, dict or set in place: the object they are called on
# in a walked function is state it keeps, not a setting it reads
_MUTATORS = frozenset({"append", "extend", "insert", "pop", "popitem", "update",
                       "setdefault", "clear", "remove", "add", "discard", "sort",
                       "reverse", "__setitem__", "__delitem__", "__iadd__"})
_STORES = {"STORE_ATTR": "attr", "DELETE_ATTR": "attr", "STORE_SUBSCR": "item",
           "DELETE_SUBSCR": "item"}


def value_chains(code) -> tuple[list, set]:
    """``([(name, steps)], changed)`` for ``code`` and the code nested in it: each
    chain of constant attributes and items read off a name it loads (every
    prefix), and ``(name, steps)`` of what it changes in place: the chain a store
    or ``del`` names (``CFG["lr"] = v``, ``ns.n = 1``), or ``()``, the whole object,
    where the store's target is no constant chain (``STATS["n"] += 1``, ``D[k] =
    v``), a method of ``_MUTATORS`` is called on it, or ``setattr``/``delattr``."""
    out, changed, codes = [], set(), [code]
    while codes:
        c = codes.pop()
        codes.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        held = const = last = None   # last: the name loaded last (a store's container)
        whole = False                # setattr/delattr loaded: the next name is changed
        for ins in dis.get_instructions(c):
            op = ins.opname
            if op in NAME_LOADS:
                if whole:
                    changed.add((ins.argval, ()))
                whole = ins.argval in ("setattr", "delattr")
                held, const, last = (ins.argval, ()), None, ins.argval
                continue
            if op in _STORES:
                key = ins.argval if op.endswith("ATTR") else const[0] if const else None
                if held is not None and key is not None:
                    changed.add((held[0], held[1] + ((_STORES[op], key),)))
                elif last is not None:
                    changed.add((last, ()))
                held = const = last = None
                continue
            if op.startswith("LOAD_FAST"):
                last = None   # a local's store (self.n = ...) changes no name
            if held is None:
                continue
            if op in ("LOAD_ATTR", "LOAD_METHOD") and const is None:
                if ins.argval in _MUTATORS:
                    changed.add(held)   # HISTORY.append(v), CFG["log"].append(v)
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
    return out, changed


def changes(steps: tuple, changed: tuple) -> bool:
    """Whether a change of ``changed`` (steps, ``()`` the whole object) may change
    the value read by ``steps`` (a ``get`` reads what an item store writes)."""
    norm = tuple(("item" if how == "get" else how, k) for how, k in steps)
    return norm[:len(changed)] == changed


def host_callbacks(code) -> set:
    """The names ``code`` (and the code nested in it) hands to ``.host(...)`` first:
    host callbacks, which read what they read when they run, so nothing of it is
    baked into the graph (their settings are not watched)."""
    out, codes = set(), [code]
    while codes:
        c = codes.pop()
        codes.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        after = False
        for ins in dis.get_instructions(c):
            if after and ins.opname in NAME_LOADS:
                out.add(ins.argval)
            after = ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and ins.argval == "host"
    return out

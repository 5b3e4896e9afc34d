"""Values a function reads off the names it loads: the lookup of a name, or of
an attribute chain read statically, as the function would see it now; and
the settings read off an object by constant keys and attributes
(``CFG["lr"]``, ``cfg.opt.lr``, ``Config.lr``), found in the bytecode, which
``reach`` watches by value, with the objects the code changes in place. The
code of the host callbacks it defines (``callback_codes``) reads when it
runs: its settings are left out (``host_chains.py`` finds the rest of what
code hands to ``s.host``).
"""
from __future__ import annotations

import collections
import dis
import enum
import importlib.util
import operator
import sys
import types
import weakref
from functools import partial

import numpy as np

from .array_reads import (ARRAY_READS, ARRAY_VIEWS, NUMBER, _array_call, _numpy_int_key,
                          _numpy_reduction, array_read, array_step, host_item)
from .chain_steps import (NAME_LOADS, _MUTATORS, _UNPACKS, _by_name, _get_call, _item_taken,
                          _stored_once, _unpacked, imported)
from .named_keys import KEY_PARTS, MISSING, Named, keyed_chain
from .probe import _attr, _has
from .static_attrs import getattr_static

__all__ = ["Chain", "MISSING", "NAME_LOADS", "NoKey", "Slot", "attribute_loads", "callback_codes",
           "chain", "changes", "imported", "lookup", "slot", "value_chains"]

# MISSING: what a lookup gives for a name, attribute or key not there


def lookup(fn, name):
    """What ``name`` means inside ``fn`` now (closure cell first, then globals); a
    dotted name (``K.step``), its attributes read statically, None where absent; a
    ``Chain``'s value (MISSING where absent)."""
    if type(name) is Chain:
        return name.read(fn)
    if type(name) is Slot:
        return name.read()
    if name[:1] == "=":   # "=cfg": the default of fn's parameter cfg
        return default_of(fn, name[1:])
    if name[:1] == "<":   # "<kmod>.kk": a module the function imports itself (imported)
        module, _, rest = name[1:].partition(">")
        v = _module(fn, module)
        for a in rest.split(".")[1:]:
            v = getattr_static(v, a, None)
        return v
    if "." in name:
        head, *rest = name.split(".")
        v = lookup(fn, head)
        for a in rest:
            v = getattr_static(v, a, None)
        return v
    code = fn.__code__
    if name in code.co_freevars:
        try:
            return fn.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:   # an empty cell
            return None
    return fn.__globals__.get(name)


def defined(fn, name: str) -> bool:
    """Whether the global or closure ``name`` of ``fn`` holds anything now (not
    deleted, ``del GONE``; a cell filled)."""
    code = fn.__code__
    if name in code.co_freevars:
        try:
            fn.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:   # an empty cell
            return False
        return True
    return name in fn.__globals__


def _module(fn, name: str):
    """The module ``import name`` inside ``fn`` gives now (a relative name resolved
    against ``fn``'s package), None where it is not imported (yet)."""
    try:
        return sys.modules.get(importlib.util.resolve_name(
            name, fn.__globals__.get("__package__")))
    except (ImportError, ValueError):   # a relative name with no package
        return None


def default_of(fn, param: str):
    """The default value of ``fn``'s parameter ``param`` (None where it has none)."""
    kw = fn.__kwdefaults__
    if kw and param in kw:
        return kw[param]
    code, defaults = fn.__code__, fn.__defaults__ or ()
    params = code.co_varnames[:code.co_argcount]
    i = params.index(param) - (len(params) - len(defaults)) if param in params else -1
    return defaults[i] if i >= 0 else None


class Chain(str):
    """A value read off a name by constant attributes and items (``CFG["lr"]``,
    ``cfg.opt.lr``, ``TABLE[2]``, ``CFG.get("lr")``), as its label; ``steps`` are
    ``(how, key)``: ``"attr"`` read statically (no property's code runs), ``"item"``
    of an exact dict, list or tuple only, ``"get"`` of an exact dict (a key not
    there is a value too: one put there later traces anew), ``"call"`` of a host numpy
    array's method reading a number with constant arguments (``LR.item(0)``,
    ``LR.sum()``: ``(name, args)``); a key read by a name
    (``ST[Phase.A]``) is a ``Named``, read when the chain is. Watched by value like
    a name's number: an object keeps its settings in place (``cfg.lr = 0.2``) or
    a new object replaces it, and either way the graph baked in the value it
    read."""

    __slots__ = ("head", "steps")

    def getter(self, fn, root):
        """A call without arguments giving ``read(fn)``, for the call path: ``root``
        looks the name up (in C), then each step is one C call (``attrgetter``,
        ``itemgetter``); anything odd (the key gone, an empty cell, another type
        of object now) is left to ``read``."""
        steps, read = self.calls(fn), self.read

        def get():
            try:
                v = root()
                for step in steps:
                    v = step(v)
                return v
            except Exception:  # noqa: BLE001  (whatever the object raises: read says)
                return read(fn)
        return get

    def calls(self, fn=None) -> tuple:
        """One call per step, each taking the object before it (``plain_attr``,
        ``itemgetter``, ``dict.get``): what ``read`` does, at C speed where it can;
        a key read by a name, by the names of ``fn`` (``Named``: at each call)."""
        return tuple(k.step(how, fn, NoKey.NONE) if type(k) is Named else plain_attr(k)
                     if how == "attr" else array_step(k) if how == "call" else
                     operator.itemgetter(k) if how == "item" else
                     operator.methodcaller("get", k, NoKey.NONE)
                     if how == "get" else _attr_or(k)
                     for how, k in self.steps)

    def read(self, fn):
        v = lookup(fn, self.head)
        for how, key in self.steps:
            if type(key) is Named:   # ST[Phase.A]: the key the name gives now
                key = key.value(fn)
                if key is MISSING:
                    return MISSING
            if how == "call":   # LR.item(0), LR.sum(): of a host array alone
                v = array_read(v, key)
            elif how == "attr" and key in ARRAY_VIEWS and type(v) is np.ndarray:
                v = getattr(v, key)   # LR.flat[0], W.T[2, 1]
            elif how == "attr":
                v = _static_attr(v, key)
            elif how in _DEFAULTED:   # getattr(X, "k", default), hasattr(X, "k")
                v = _static_attr(v, key)
                v = NoKey.ATTR if v is MISSING else v
            elif isinstance(v, dict) and _plain(v, dict):   # OrderedDict, a subclass
                v = dict.get(v, key, NoKey.NONE if how == "get" else MISSING)  # (a missing
            elif _layered(v) and all(type(m) is dict for m in _maps(v)):
                v = v.get(key, NoKey.NONE if how == "get" else MISSING)   # ChainMap of dicts
            elif isinstance(v, (list, tuple)) and type(key) is int and \
                    _plain(v, list if isinstance(v, list) else tuple) and \
                    -len(v) <= key < len(v):   # key: watched for CFG.get("lr") too)
                v = v[key]
            elif type(v) is np.ndarray or type(v) is np.flatiter:   # LR[0] of a host
                v = host_item(v, key)                                  # array: by value
            else:
                v = MISSING
            if v is MISSING:
                return MISSING
        return v


class Slot(str):
    """What class ``owner`` holds itself by ``attr`` (in its ``__dict__``; None where
    it holds nothing by it), as its label (``Sched.rate``): a method of a class the
    traced code makes objects of, watched by identity and looked up in C
    (``getter``): one put on the class later (``Sched.rate = new_rate``) is another
    graph. The class is watched by the name that holds it: one defined again finds
    its places, and its slots, anew."""

    __slots__ = ("owner", "attr")

    def read(self, fn=None):
        return self.owner.__dict__.get(self.attr)

    def getter(self):
        return partial(vars(self.owner).get, self.attr)   # (the class's own dict)


def slot(owner: type, attr: str) -> Slot:
    out = Slot(f"{owner.__qualname__}.{attr}")
    out.owner, out.attr = owner, attr
    return out


def _layered(v) -> bool:
    """A ``ChainMap`` or a mapping proxy: read by key as a dict is (told by identity:
    a metaclass may answer ``==`` oddly)."""
    t = type(v)
    return t is collections.ChainMap or t is types.MappingProxyType


def _maps(v) -> list:
    """The dicts a ``ChainMap`` looks in (a mapping proxy: none of its own to check)."""
    return v.maps if type(v) is collections.ChainMap else []


class NoKey(enum.Enum):
    """What ``CFG.get(key)`` reads where the key is not there, and ``getattr(CFG,
    "k", default)`` where the attribute is not (a value, watched: one put there
    later traces anew)."""
    NONE = "no such key"
    ATTR = "no such attribute"


# steps reading an attribute that may be absent, getattr with a default ("default")
# and hasattr ("has"): the value, or NoKey.ATTR (one put there later, or changed
# after, traces anew: the read of X.k that hasattr guards is found once it is there)
_DEFAULTED = ("default", "has")


def chain(head: str, steps: tuple) -> Chain:
    label = head
    for how, k in steps:
        label = f"type({label})" if (how, k) == ("attr", "__class__") else \
            f"getattr({label}, {k!r}, ...)" if how == "default" else \
            f"hasattr({label}, {k!r})" if how == "has" else \
            f"float({label})" if (how, k) == ("call", (NUMBER, ())) else \
            f"{label}.{k[0]}({', '.join(map(repr, k[1]))})" if how == "call" else label + (
                f".{k}" if how == "attr" else f".get({k!r})" if how == "get" else f"[{k!r}]")
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
    if name == "__class__":   # (type(OBJ).N: the class's N)
        return type(v)
    got = getattr_static(v, name, MISSING)
    if type(got).__name__ in _C_GETTERS and not isinstance(v, type):
        try:   # a __slots__ attribute, a namedtuple's field: the C getter
            return got.__get__(v, type(v))
        except (AttributeError, IndexError):
            return MISSING
    if got is MISSING and isinstance(v, dict) and _plain(v, dict) and \
            _attr(type(v), "__getattr__") is not None and dict.__contains__(v, name):
        return dict.__getitem__(v, name)   # an AttrDict: CFG.lr is CFG["lr"]
    return got


_C_GETTERS = frozenset({"member_descriptor", "_tuplegetter"})


def _plain(v, base) -> bool:
    """Whether ``v``'s class reads items as ``base`` does (no ``__getitem__`` of its own)."""
    return type(v).__getitem__ is base.__getitem__


_STORES = {"STORE_ATTR": "attr", "DELETE_ATTR": "attr", "STORE_SUBSCR": "item",
           "DELETE_SUBSCR": "item"}


def value_chains(code, live=frozenset(), roots=frozenset(), own=None,
                 callbacks=True, hosted: set | None = None) -> tuple[list, set]:
    """``([(name, steps)], changed)`` for ``code`` and the code nested in it: each
    chain of constant attributes and items read off a name it loads (every
    prefix), and ``(name, steps)`` of what it changes in place: the chain a store,
    augmented store or ``del`` names (``CFG["lr"] = v``, ``STATS["n"] += 1``,
    ``ns.n = 1``), or ``()``, the whole object, where the store's target is no
    constant chain (``D[k] = v``), a method of ``_MUTATORS`` is called on it, or
    ``setattr``/``delattr``. The code objects in ``live`` (host callbacks: they read
    when they run) give their changes only. The locals named in ``roots`` count as
    names too (a method's ``self``: ``self.cfg.lr``). ``own`` maps a name to the
    methods its object's class defines itself: calling one on it
    (``self.update(...)``, ``M.update(...)``) is no change of it by itself.
    ``callbacks=False`` leaves the host callbacks' code out altogether; ``hosted``,
    a set, gets the changes their code makes too (they run between calls)."""
    out, changed, codes = [], set(), [(code, code in live)]
    while codes:
        c, quiet = codes.pop()
        inner = callback_codes(c)
        codes.extend((k, quiet or k in live or k in inner) for k in c.co_consts
                     if isinstance(k, types.CodeType) and
                     (callbacks or k not in live and k not in inner))
        held = const = aug = None   # aug: an augmented store's target
        changed_here: set = set()
        once = _stored_once(c)      # locals assigned once: an alias (opt = CFG["opt"])
        aliases: dict = dict(imported(c))   # such a local -> the chain it holds
        out += [] if quiet else [v for v in aliases.values() if v[1]]   # from m import x
        loads: list = []            # each value loaded since the last store: its name
        whole = False               # (None: a local or constant); setattr/delattr
        by_name = (0, None)         # getattr(X, "k"[, default]), hasattr(X, "k")
        got = 0                     # CFG.get("k"[, default]): the arguments loaded
        reading = None              # LR.item(0, ...): the constant arguments loaded
        skip = -1                   # LR[np.int64(0)]: the last instruction of its key
        seq: list = []              # the chains loaded one after another before held
        stack: list = []            # what stores in a row take (a, b = CFG.a, CFG.b)
        by_key = None               # the chain a key held may index (ST of ST[Phase.A])
        listed = [i for i in dis.get_instructions(c) if i.opname != "CACHE"]
        for at, ins in enumerate(listed):   # loaded: the next name is changed
            op, name = ins.opname, ins.argval
            if op == "LOAD_FAST_LOAD_FAST":   # 3.13's pair: the second is what follows
                op, name = "LOAD_FAST", name[1]
            if at <= skip:
                continue
            if op in NAME_LOADS and held is not None and const is None and \
                    (cast := _numpy_int_key(listed, at)) is not None:
                const, skip = (cast[0],), cast[1]   # LR[np.int64(0)]: as LR[0]
                continue
            if by_key is not None and op not in KEY_PARTS:   # a key read by a name ends
                keyed, by_key = keyed_chain(by_key, held, ins) if held is not None and \
                    const is None else None, None   # (ST[Phase.A]: read as ST["k"] is)
                if keyed is not None:
                    seq, (held, const) = seq[:-1], keyed
                    if const is None:   # ST.get(KEY): this instruction is the call's
                        got = 1
                        out += [] if quiet else [held]
            by_name, step = _by_name(by_name, op, ins, const)
            if by_name[0] == 4 or by_name[0] == 3 and op == "PRECALL":
                continue   # (the default, kept off the chain held)
            if got:   # the rest of CFG.get("opt"[, default]): its value is read on
                got, done = _get_call(got, op, ins)   # (CFG.get("opt", {}).get("lr"))
                if got or done:
                    const = None if done else const
                    continue
                held = None
            if reading is not None:   # LR.item(0), W.item(1, 2), LR.sum(): a number read
                reading, args = _array_call(reading, op, ins)   # by constant arguments
                if reading is not None:
                    continue
                if args is not None and held is not None:
                    held = (held[0], held[1][:-1] + (("call", (held[1][-1][1], args)),))
                    if not quiet:
                        out.append(held)
                    continue
            if step is not None and held is not None:   # getattr(X, "k"): X.k
                held, const = (held[0], held[1] + (step,)), None
                seq = seq[:-1] if seq and seq[-1][0] in ("getattr", "hasattr") else seq
                if not quiet:
                    out.append(held)
                if step[0] == "has":   # a bool: nothing read off it
                    held = None
                continue
            if op in ("PRECALL", "CALL") and ins.arg == 1 and held is not None and \
                    const is None and seq and seq[-1] == ("type", ()) and held[0] not in roots:
                if op == "CALL":   # type(OBJ): its class, read as OBJ.__class__ (type(OBJ).N:
                    seq, held = seq[:-1], (held[0], held[1] + (("attr", "__class__"),))
                    if not quiet:   # the class's value, not the N OBJ may hold itself)
                        out.append(held)
                continue
            if op in ("PRECALL", "CALL") and ins.arg == 1 and held is not None and \
                    const is None and seq and _numpy_reduction(seq[-1]) is not None and \
                    not (_numpy_reduction(seq[-1]) == NUMBER and held[1] and
                         held[1][-1][0] in ("item", "get", "call")):   # (float(LR[0]): a number)
                if op == "CALL":   # np.sum(LR): read as LR.sum()
                    seq, held = seq[:-1], (held[0], held[1] + (
                        ("call", (_numpy_reduction(seq[-1]), ())),))
                    if not quiet:
                        out.append(held)
                continue
            if op in _UNPACKS:   # opt = CFG["opt"]: opt["lr"] reads CFG["opt"]["lr"]
                stored, stack = _unpacked(op, ins.arg, stack if held is None else
                                          seq + [held] if const is None else seq + [held, None])
                for local, v in zip(name if type(name) is tuple else (name,), stored):
                    if type(v) is tuple and local in once:   # a chain (not a tuple built
                        aliases[local] = v                    # of them, a list here)
            elif op not in ("CACHE", "NOP", "EXTENDED_ARG"):
                stack = []
            named = op in NAME_LOADS or roots and op == "LOAD_FAST" and name in roots
            if named or op.startswith("LOAD_FAST") and name in aliases:   # a chain begins:
                seq = seq + [held] if held is not None and const is None else []   # the one
            if op.startswith("LOAD_FAST") and name in aliases:   # before it stays loaded
                held, const = aliases[name], None
                loads.append(held[0])
                continue
            if named or op.startswith("LOAD_FAST") or op in ("LOAD_CONST", "LOAD_SMALL_INT"):
                loads.append(name if named else None)
            if named:
                if whole:
                    changed_here.add((name, ()))
                whole = name in ("setattr", "delattr")
                by_key = seq[-1] if seq and op in NAME_LOADS else None   # ST[Phase.A]
                held, const = (name, ()), None
                continue
            if op in _STORES:
                key = ins.argval if op.endswith("ATTR") else const[0] if const else None
                if held is None and aug is not None:   # STATS["n"] += 1, ns.n += 1
                    held, key = aug[0], ins.argval if op.endswith("ATTR") else \
                        aug[1][0] if aug[1] else None
                if held is not None and key is not None:
                    changed_here.add((held[0], held[1] + ((_STORES[op], key),)))
                else:   # D[k] = v: the container is the value loaded before the key
                    at = loads[-2] if op.endswith("SUBSCR") and len(loads) > 1 else \
                        loads[-1] if loads else None
                    if at is not None:
                        changed_here.add((at, ()))
                held = const = aug = None
                loads = []
                continue
            if held is not None and op in ("COPY", "DUP_TOP", "DUP_TOP_TWO"):
                aug = (held, const)   # the target an augmented store writes back
            if held is None:
                continue
            if op in ("LOAD_ATTR", "LOAD_METHOD") and const is None:
                if ins.argval in _MUTATORS and not (held[1] == () and own and
                                                    ins.argval in own.get(held[0], ())):
                    changed_here.add(_item_taken(held, ins.argval, listed[at + 1:at + 8]))
                held = (held[0], held[1] + (("attr", ins.argval),))
                reading = () if ins.argval in ARRAY_READS else None
            elif op == "LOAD_CONST" and const is None and _hashable(ins.argval):
                const = (ins.argval,)
                if held[1] and held[1][-1] == ("attr", "get"):   # CFG.get("lr"[, default])
                    held, got = (held[0], held[1][:-1] + (("get", ins.argval),)), 1
                    if not quiet:
                        out.append(held)
                continue
            elif (op == "BINARY_SUBSCR" or op == "BINARY_OP" and ins.argrepr == "[]") and \
                    const is not None:
                held = (held[0], held[1] + (("item", const[0]),))
            else:
                held = None
                continue
            const = None
            if not quiet:
                out.append(held)
        changed |= changed_here
        if quiet and hosted is not None:
            hosted |= changed_here
    return out, changed


def plain_attr(name: str):
    """A step reading attribute ``name`` as ``_static_attr`` does (no property's
    code runs), at C speed where the instance's ``__dict__`` holds it and its class
    has no data descriptor of that name."""
    if name == "__class__":
        return type

    def get(v):
        if isinstance(v, type):   # a class's own, or a base's (Config.lr)
            for c in v.__mro__:
                if name in c.__dict__:
                    return c.__dict__[name]
            raise AttributeError(name)
        d = _attr(v, "__dict__")   # (an object's own lookup may raise anything)
        if type(d) is dict and name in d:
            cls_attr = _attr(type(v), name, MISSING)
            if cls_attr is MISSING or not _has(type(cls_attr), "__set__"):
                return d[name]
        if name in ARRAY_VIEWS and type(v) is np.ndarray:   # LR.flat, W.T
            return getattr(v, name)
        got = _static_attr(v, name)
        if got is MISSING:
            raise AttributeError(name)
        return got
    return get


def _attr_or(name: str):
    """A step of ``getattr(v, name, default)`` or ``hasattr(v, name)``: the value
    read as ``plain_attr`` does, or ``NoKey.ATTR`` where there is none."""
    get = plain_attr(name)

    def read(v):
        try:
            return get(v)
        except AttributeError:
            return NoKey.ATTR
    return read


def changes(steps: tuple, changed: tuple) -> bool:
    """Whether a change of ``changed`` (steps, ``()`` the whole object) may change
    the value read by ``steps`` (a ``get`` reads what an item store writes; a key
    read by a name, ``ST[Phase.A]``, may be any other key: ``ST["init"]``, ``ST[P.A]``;
    a ``call``, ``LR.sum()``, reads the whole array: any item of it)."""
    norm = tuple(("item" if how == "get" else "attr" if how in _DEFAULTED else how, k)
                 for how, k in steps)
    if norm[:len(changed)] == changed:
        return True
    whole = next((i for i, (how, _) in enumerate(norm) if how == "call"), None)
    if whole is not None and len(changed) > whole and changes(steps[:whole], changed[:whole]):
        return True
    return len(norm) >= len(changed) and all(
        a == b or a[0] == b[0] == "item" and Named in (type(a[1]), type(b[1]))
        for a, b in zip(norm, changed))


def nested_codes(code) -> list:
    """``code`` and the code objects nested in it."""
    out, todo = [], [code]
    while todo:
        c = todo.pop()
        out.append(c)
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return out


def own_methods(cls) -> frozenset:
    """The names of the methods, properties and static or class methods a class of
    the program's own defines (a subclass of dict's own ``update``), not those of
    a built-in base."""
    return frozenset(name for c in getattr(cls, "__mro__", ())
                     if c.__module__ != "builtins"
                     for name, v in vars(c).items()
                     if isinstance(v, (types.FunctionType, staticmethod, classmethod, property)))


_ATTRIBUTE_OPS = frozenset({"LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR", "STORE_ATTR",
                            "DELETE_ATTR"})
_ATTRIBUTES_OF: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def attribute_loads(code) -> frozenset:
    """The names ``code`` itself uses as attributes: not all of ``co_names``,
    which holds its global names too (a kernel launched by the global name ``add``
    does not call a held object's method ``add``)."""
    hit = _ATTRIBUTES_OF.get(code)
    if hit is None:
        hit = _ATTRIBUTES_OF[code] = frozenset(
            ins.argval for ins in dis.get_instructions(code) if ins.opname in _ATTRIBUTE_OPS)
    return hit


def _through_partial(ins) -> bool:
    """``partial``, ``functools`` or ``.partial``: the callback follows."""
    return ins.opname in NAME_LOADS and ins.argval in ("partial", "functools") or \
        ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and ins.argval == "partial"


def callback_codes(code) -> set:
    """The code objects ``code`` itself hands to ``.host(...)`` as the callback: a
    lambda, or a function defined in it (``def cb(h): ...; s.host(cb, h)``), also
    through ``partial``."""
    made: dict = {}   # local name -> the code of the function stored there
    out, after, pending = set(), 0, None
    for ins in dis.get_instructions(code):
        op = ins.opname
        if op == "LOAD_CONST" and isinstance(ins.argval, types.CodeType):
            pending = ins.argval
            if after:
                out.add(ins.argval)
        elif op.startswith("STORE_") and pending is not None and op != "STORE_ATTR":
            made[ins.argval] = pending
            pending = None
        elif after and (op.startswith("LOAD_FAST") or op in NAME_LOADS):
            name = ins.argval[0] if isinstance(ins.argval, tuple) else ins.argval   # 3.13's
            if name in made:                                                     # pairs
                out.add(made[name])
        if after and _through_partial(ins):
            after = 2
            continue
        if op not in ("MAKE_FUNCTION", "MAKE_CELL", "PUSH_NULL", "PRECALL", "COPY_FREE_VARS",
                      "BUILD_TUPLE", "LOAD_CLOSURE", "SET_FUNCTION_ATTRIBUTE", "LOAD_FAST"):
            # (LOAD_FAST: 3.13 loads a lambda's closure cells so)
            after = 1 if op in ("LOAD_ATTR", "LOAD_METHOD") and ins.argval == "host" else 0
    return out

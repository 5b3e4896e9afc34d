"""graphtrace's logger, ``logging.getLogger("graphtrace")``: silent unless configured.

INFO records each trace and why it happens (the first call, what differs
from the closest cached signature, another backend, a graph no longer
cached), each build (the graph's nodes and edges, as its listing counts
them, and with those of its loop and branch bodies and child graphs; time
taken), and the decisions graphtrace takes for the user: the backend when
none is named, a graph dropped from a full cache, a broken one traced
again, an executable graph instantiated anew. DEBUG records each
rebinding: how many nodes it updated and, on the GPU, by which route::

    import logging
    logging.basicConfig(format="%(name)s: %(message)s")
    logging.getLogger("graphtrace").setLevel(logging.INFO)    # or DEBUG
"""
from __future__ import annotations

import logging

import numpy as np

from .arguments import untyped
from .chains import NoKey
from .code_parts import _Code
from .errors import counted
from .object_keys import Identity
from .probe import _attr, _has, _repr
from .scalar import MISSING_NUMBER, number_of_key
from .tree import wrapped
from .values import _is_number

__all__ = ["logger", "why_traced", "tracing", "compiled", "differences", "rebound", "route",
           "decision", "backend_chosen"]

logger = logging.getLogger("graphtrace")
logger.addHandler(logging.NullHandler())   # silent by default, even at WARNING

_BUILT = {"CompiledGraph": "a CUDA graph, instantiated",
          "SimGraph": "a graph for the CPU simulator",
          "CheckedGraph": "node by node with the intent check (check_intents)"}
_FIELDS = ("shape", "strides", "dtype", "device", "pinned", "read-only")   # Buffer.signature


def decision(message: str, *args) -> None:
    """A choice graphtrace made for the user (a fallback, a cache drop)."""
    logger.info(message, *args)


def backend_chosen(backend: str, named: bool) -> None:
    if not named:
        decision("backend: %s (%s; GRAPHTRACE_BACKEND=gpu|sim or backend= chooses)", backend,
                 "a CUDA driver and a GPU are there" if backend == "gpu" else
                 "no CUDA driver or no GPU device: graphs run on the CPU simulator")


def why_traced(fn, backend: str, key, cached) -> str | None:
    """Why a call of ``fn`` traces: ``key`` its cache key, ``cached`` the
    ``(backend, key)`` pairs cached now. None when INFO is not logged."""
    if not logger.isEnabledFor(logging.INFO):
        return None
    keys = [k for _, k in cached]
    if key in keys:
        return f"another backend: {backend} (cached for " \
               f"{', '.join(b for b, k in cached if k == key)})"
    if _dropped(fn, (backend, key)):
        return f"its graph was dropped from the full cache (maxsize={fn.maxsize}; " \
               "gt.graph(maxsize=...) keeps more, or None for no bound)"
    if keys:   # the closest: the fewest differences, then the fewest helpers changed
        found = min(((differences(fn.params, k, key), len(_helpers_changed(k[1], key[1])))
                     for k in keys), key=lambda t: (len(t[0]), t[1]))[0]
        return "the signature differs from the closest cached one: " + \
            ("; ".join(found) or "in what the key holds")
    if getattr(fn, "_traced", fn.cache_info().misses):
        return "its graph is no longer cached (dropped from a full cache, or cleared)"
    return "first call"


def tracing(name: str, why: str | None) -> None:
    """A trace starts, and why (logged before it, so that it shows if it fails)."""
    if why is not None:
        logger.info("trace %s: %s", name, why)


def compiled(name: str, backend: str, ir, entry, trace_s: float, build_s: float) -> None:
    """A trace and a build are done."""
    if logger.isEnabledFor(logging.INFO):
        kind = type(entry).__name__
        # the graph's own nodes and edges, as its listing counts them (no Nodes made)
        inner = sum(r.count() for n in ir.structured() for r in n.regions)
        counts = f"{counted(ir.count() - inner, 'node')}, {counted(len(ir.edges()), 'edge')}"
        if inner:
            counts += f" ({counted(ir.count(), 'node')}, {counted(_edges(ir), 'edge')} with " \
                      "those of its bodies and child graphs)"
        logger.info("built %s for %s: %s, deps=%s (trace %.1f ms, build %.1f ms): %s", name,
                    backend, counts, ir.mode, trace_s * 1e3, build_s * 1e3,
                    _BUILT.get(kind, kind))


def _edges(ir) -> int:
    """The edges of ``ir`` and of its regions, theirs too."""
    return len(ir.edges()) + sum(_edges(r) for n in ir.structured() for r in n.regions)


def rebound(name: str, changed: int, total: int) -> None:
    """A call with new arrays or numbers: the nodes that use them were updated."""
    if changed and logger.isEnabledFor(logging.DEBUG):
        logger.debug("rebind %s: %d of %d nodes use new arrays or numbers", name, changed,
                     total)


def route(name: str, how: str, nodes: int, reason: str) -> None:
    """The GPU update route of a rebinding: per node, the whole graph, or anew."""
    logger.debug("rebind %s on the GPU: %s for %d nodes (%s)", name, how, nodes, reason)


# --- what differs between two cache keys --------------------------------------
def differences(params, old, new) -> list[str]:
    """What differs between two cache keys (``arguments.Call.key``) of a function
    with parameters ``params``: per argument (shapes, strides, dtypes, devices,
    types, static values, containers), arrays and numbers reached by name,
    helpers, and which arrays share memory."""
    (parts_o, fixed_o, alias_o, *regions_o), (parts_n, fixed_n, alias_n, *regions_n) = old, new
    out: list[str] = []
    for name, a, b in zip(params, parts_o, parts_n):
        _tree(name, a, b, out)
    _reached(fixed_o, fixed_n, out)
    if alias_o != alias_n:
        _aliasing(_names(params, parts_o, fixed_o), alias_o,
                  _names(params, parts_n, fixed_n), alias_n, out)
    if regions_o != regions_n:   # where captured regions reached arrays (region_places.py)
        labels = sorted({str(e[0]) for e in set(regions_o and regions_o[0][0]) ^
                         set(regions_n and regions_n[0][0])}) or ["how they share memory"]
        out.append("what captured regions reach through modules, classes, globals() or "
                   f"object arrays: {', '.join(labels)}")
    return out


def _kind(t) -> str:
    if isinstance(t, Identity):
        return "self"
    if isinstance(t, type):
        return "number"
    if isinstance(t, tuple) and len(t) == 3 and t[0] == "static":
        return "static"
    if isinstance(t, tuple) and len(t) == 4 and t[0] == "object":
        return "object"
    if isinstance(t, tuple) and len(t) == 4 and t[0] in ("function", "namespace"):
        return t[0]   # (kind, type, identity, values read)
    if isinstance(t, tuple) and len(t) in (2, 3) and t[0] == "dict":
        return "dict"   # (a subclass's type third: arguments._tagged)
    if isinstance(t, tuple) and isinstance(t[0], type) and (
            issubclass(t[0], (list, tuple)) or wrapped(t[0]) is not None):
        return "sequence"   # (a deque, a UserDict...: arguments._tagged)
    return "array"


def _type(t) -> str:
    return f"{t.__module__.split('.')[0]}.{t.__qualname__}" \
        if t.__module__ != "builtins" else t.__qualname__


def _show(field: str, v) -> str:
    return np.dtype(v).name if field == "dtype" else repr(v)


def _what(t) -> str:
    kind = _kind(t)
    if kind == "array":
        return f"{_show('dtype', t[1][2])} array of shape {t[1][0]}"
    if kind == "number":
        return f"a number ({t.__name__})"
    if kind == "static":
        return f"static {_number(t[2])}"
    if kind == "dict":
        return "a dict" if len(t) == 2 else f"a {t[2][0].__name__}"
    if kind == "object":
        return f"an object of {t[1].__name__}"
    if kind in ("function", "namespace"):
        return f"a {kind} argument"
    if kind == "self":
        return "self"
    return f"a {t[0].__name__}" if wrapped(t[0]) not in (None, "deque") else \
        f"a {t[0].__name__} of {len(t[1])}"   # (a UserDict holds its items in one attribute)


def _setting(e) -> str:
    """An argument object's attribute as the key holds it (``object_keys._entry``)."""
    if type(e) is tuple and len(e) == 2 and (type(e[1]) is not tuple or
                                             number_of_key(e[1]) is not MISSING_NUMBER):
        return _number(e[1])   # a value, or values (_Held)
    return "absent" if e is None else "another value"


def _tree(path: str, a, b, out: list) -> None:
    if a == b:
        return
    kind = _kind(a)
    if kind != _kind(b):
        out.append(f"{path}: {_what(a)} -> {_what(b)}")
    elif kind == "array":
        if a[0] is not b[0]:
            out.append(f"{path}: type {_type(a[0])} -> {_type(b[0])}")
        out += [f"{path}: {f} {_show(f, x)} -> {_show(f, y)}"
                for f, x, y in zip(_FIELDS, a[1], b[1]) if x != y]
    elif kind == "number":
        out.append(f"{path}: a number of type {a.__name__} -> {b.__name__}")
    elif kind == "static":
        out.append(f"{path}: static value {_number(a[2])} ({a[1].__name__}) -> {_number(b[2])} "
                   f"({b[1].__name__})")
    elif kind == "self":
        out.append(f"{path}: another instance")
    elif kind == "object":   # ("object", class, itself or None, ((name, entry), ...))
        if a[1] is not b[1]:
            out.append(f"{path}: {_what(a)} -> {_what(b)}")
        elif a[2] != b[2]:
            out.append(f"{path}: another object")
        else:
            old, new = (dict(e for e in t[3] if len(e) == 2) for t in (a, b))
            out += [f"{path}.{k}: {_setting(old.get(k))} -> {_setting(new.get(k))}"
                    for k in dict.fromkeys([*old, *new]) if old.get(k) != new.get(k)]
    elif kind in ("function", "namespace"):
        out.append(f"{path}: {'another ' + kind if a[1:3] != b[1:3] else _what(a)}"
                   f"{'' if a[1:3] != b[1:3] else '; what it reads changed'}")
    elif kind == "dict":
        keys_a, keys_b = [k for k, _ in a[1]], [k for k, _ in b[1]]
        if a[2:] != b[2:]:   # a dict and a subclass of it (a Config, an OrderedDict)
            out.append(f"{path}: {_what(a)} -> {_what(b)}" if len(a) != len(b) or
                       a[2][0] is not b[2][0] else f"{path}: {_state_change(a[2][1], b[2][1])}")
        elif keys_a != keys_b:
            out.append(f"{path}: keys {list(map(untyped, keys_a))} -> "
                       f"{list(map(untyped, keys_b))}")
        else:
            for (k, x), (_, y) in zip(a[1], b[1]):
                _tree(f"{path}[{untyped(k)!r}]", x, y, out)
    elif a[0] is not b[0] or len(a[1]) != len(b[1]):
        out.append(f"{path}: {_what(a)} -> {_what(b)}")
    elif a[2:] != b[2:]:   # a subclass's object's attributes (arguments._tagged)
        out.append(f"{path}: {_state_change(*(t[2] if len(t) > 2 else () for t in (a, b)))}")
    else:
        for i, (x, y) in enumerate(zip(a[1], b[1])):
            _tree(_item(path, a[0], i), x, y, out)


def _item(path: str, t: type, i: int) -> str:
    """The name of item ``i`` of a sequence's key (``_kind``) of class ``t``: the
    attribute holding a UserDict's, a UserList's or a ChainMap's items
    (``tree.wrapped``: ``cfg.data``), else ``path[i]``."""
    kind = wrapped(t)
    return f"{path}.{kind}" if kind is not None and kind != "deque" else f"{path}[{i}]"


def _state_change(a, b) -> str:
    """What changed of a container subclass's object's attributes
    (``arguments._state``: ``(name, entry)`` pairs): a defaultdict's factory and a
    deque's maxlen by name."""
    old, new = dict(a), dict(b)
    changed = [k for k in dict.fromkeys([*old, *new]) if old.get(k) != new.get(k)]
    return f"its {changed[0]} changed" if changed in (["default_factory"], ["maxlen"]) else \
        "its attributes changed"


def _split(fixed) -> tuple:
    """Arrays ``(name, type, signature, address)``, values ``(name, type, value)``
    and helpers (functions, kernels) reached by name, as the key holds them."""
    arrays = {e[0]: e for e in fixed if type(e) is tuple and len(e) == 4}
    numbers = {e[0]: e for e in fixed if type(e) is tuple and len(e) == 3}
    return arrays, numbers, [e for e in fixed if type(e) is not tuple]


def _reached(old, new, out: list) -> None:
    arrays_o, numbers_o, helpers_o = _split(old)
    arrays_n, numbers_n, helpers_n = _split(new)
    for name in dict.fromkeys([*arrays_o, *arrays_n]):
        a, b = arrays_o.get(name), arrays_n.get(name)
        where = f"{name} (reached by name)"
        if a is None or b is None:
            out.append(f"{where}: {'now holds' if a is None else 'no longer holds'} an array")
        elif a[1:3] != b[1:3]:
            _tree(where, a[1:3], b[1:3], out)
        elif a[3] != b[3]:
            out.append(f"{where}: another array (a graph keeps the arrays it reaches by "
                       "name; pass it as an argument to rebind it instead)")
    for name in dict.fromkeys([*numbers_o, *numbers_n]):
        a, b = numbers_o.get(name), numbers_n.get(name)
        if a != b:
            what = "number" if all(e is None or _is_number(e[2]) or number_of_key(e[2])
                                   is not MISSING_NUMBER for e in (a, b)) else "value"
            out.append(f"{name} (reached by name): {_value(a)} -> {_value(b)} (a {what} "
                       "reached by name is baked into the graph; pass it as an argument to "
                       "make it dynamic)")
    if len(helpers_o) != len(helpers_n) or any(map(_differ, helpers_o, helpers_n)):
        changed = _helpers_changed(old, new) or ["(their number)"]
        out.append(f"functions or kernels reached by name changed: {', '.join(changed)}")


def _dropped(fn, key) -> bool:
    """Whether the full cache of ``fn`` dropped the graph of ``key`` (``(backend,
    cache key)``; ``GraphFunction._dropped`` holds the hashes of those it dropped)."""
    try:
        return hash(key) in getattr(fn, "_dropped", ())
    except TypeError:
        return False


def _helpers_changed(old, new) -> list[str]:
    """The names of the helpers (functions, kernels) reached by name that ``new``'s
    key holds and ``old``'s does not (those it no longer holds where none is new),
    each once, in the order the key reaches them: one whose code or defaults alone
    changed, the object kept (``%autoreload 2``), as ``h (its code or defaults)``.
    Matched as a set, not place by place: a helper reached or no longer reached
    moves those after it."""
    helpers_o, helpers_n = _split(old)[2], _split(new)[2]
    gone = [y for y in helpers_n if all(_differ(x, y) for x in helpers_o)] or \
        [x for x in helpers_o if all(_differ(x, y) for y in helpers_n)]
    plain = [_attr(y, "__name__") or _repr(y) for y in gone if type(y) is not _Code]
    coded = [f"{y.name} (its code or defaults)" for y in gone
             if type(y) is _Code and y.name not in plain]   # (a new h and its code: h)
    return list(dict.fromkeys(plain + coded))   # (k by f and by its helper: once)


def _differ(x, y) -> bool:
    """Whether a helper in the key differs: by identity, or a function's code and
    defaults (``code_parts._Code``) by theirs."""
    return x is not y and not (type(x) is type(y) and _has(x, "differs") and
                               not x.differs(y))


def _value(entry) -> str:
    return "undefined" if entry is None else "absent" if entry[1] is NoKey else \
        _number(entry[2])   # (CFG.w, getattr(CFG, "w", 1.0) not set yet)


def _number(k) -> str:
    """A value as a key holds it, as Python writes it: 0.0 for a zero's key (which
    keeps its sign, ``scalar.value_key``)."""
    v = number_of_key(k)
    return _repr(k if v is MISSING_NUMBER else v)


def _names(params, parts, fixed) -> list[str]:
    """The array leaves of a key in the order its aliasing pattern counts them."""
    out: list[str] = []

    def walk(path, t):
        kind = _kind(t)
        if kind == "array":
            out.append(path)
        elif kind == "dict":
            for k, x in t[1]:
                walk(f"{path}[{untyped(k)!r}]", x)
        elif kind == "sequence":
            for i, x in enumerate(t[1]):
                walk(_item(path, t[0], i), x)
    for name, t in zip(params, parts):
        walk(name, t)
    return out + [f"{name} (reached by name)" for name in _split(fixed)[0]]


def _aliasing(names_o, alias_o, names_n, alias_n, out: list) -> None:
    """Pairs of arrays that came to share memory, or stopped, or moved apart."""
    old = {(hi, lo): (d, same) for hi, lo, d, same in alias_o}
    new = {(hi, lo): (d, same) for hi, lo, d, same in alias_n}
    for (hi, lo), (d, same) in new.items():
        pair = f"{_name(names_n, lo)} and {_name(names_n, hi)}"
        if (hi, lo) not in old:
            out.append(f"{pair} now share memory ({_apart(d, same)})")
        elif old[(hi, lo)] != (d, same):
            out.append(f"{pair} share memory otherwise ({_apart(*old[(hi, lo)])} -> "
                       f"{_apart(d, same)})")
    out += [f"{_name(names_o, lo)} and {_name(names_o, hi)} no longer share memory"
            for hi, lo in old if (hi, lo) not in new]


def _name(names: list, i: int) -> str:
    """The name of array ``i`` of a key (one reached through a host callback or a
    held object has none here: it is numbered)."""
    return names[i] if 0 <= i < len(names) else f"array {i} (reached by name)"


def _apart(d: int, same: bool) -> str:
    return "the same array" if same else \
        "the same address" if d == 0 else f"{abs(d)} bytes apart"

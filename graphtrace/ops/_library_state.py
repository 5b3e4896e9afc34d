"""What a captured region reaches of the libraries it calls.

``libraries(fn)``: which of cupy and torch the region's code names, imports,
or reaches through the objects it holds (a bound method's ``self.net``, a
closure's model, a list of modules by a global name): their streams are
switched to the capture. ``torch_roots(fn)``: the torch objects it reaches so
(modules, tensors, optimizers, schedulers).

``snapshot(roots)`` is the state of those objects that no argument shows and
that the captured work depends on: the parameters, buffers and submodules of
each module (by identity, and each tensor by its address), each module's
``training``, an optimizer's groups (``lr``...) and per-parameter state, and
the settings other torch objects keep (a scheduler's ``last_epoch``).
``first_change(entries)`` names the first entry that no longer holds: at a
launch, a change made between calls (``model.eval()``, a new ``Parameter``,
``model.half()``, ``opt.param_groups[0]["lr"] = 0.01``) captures the region
again; during a capture, one the region's own Python made (a scheduler's
``step()``, an optimizer's state made at its first step) is refused, since a
replay repeats only the captured GPU work.
"""
from __future__ import annotations

import sys
import types
from itertools import islice

from ..chains import MISSING, imported, nested_codes
from ..names import _filled, _global_names
from ..owners import _attributes, own_object
from ..tree import leaves

__all__ = ["libraries", "torch_roots", "snapshot", "first_change", "grown", "describe"]

_LIBRARIES = {"cupy": "cupy", "cupyx": "cupy", "torch": "torch"}   # a module's top name ->
#                                                                    the library switched
_LEAVES = 64   # the items of a container looked at
# what holds no library object of interest: code, classes, modules, plain values
_NOT_HOLDERS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type,
                types.ModuleType, str, bytes, int, float, complex, bool)


class _Import(str):
    """The name of a module a function imports inside itself (``import torch as T``)."""


def libraries(fn) -> set:
    """cupy and torch where the region's function ``fn`` (a function, a ``partial``,
    a bound method, a callable object), the code nested in it, the functions of
    the program's it names (two levels), or the objects it names or holds (their
    attributes two levels deep, their methods' code) name, import or hold
    something of theirs (``cp.exp``, ``import torch as T``, a user's
    ``nn.Module``; cupyx counts as cupy)."""
    return {lib for v in _reached(fn) if (lib := library_of(v))}


def torch_roots(fn, given=()) -> list:
    """The torch objects ``fn`` reaches as ``libraries`` reads it, and those among
    ``given`` (the region's arguments): modules, device tensors, and its other
    objects with attributes (optimizers, schedulers)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return []
    out: dict = {}
    for v in (*given, *_reached(fn)):
        if isinstance(v, torch.Tensor):
            if v.is_cuda:
                out[id(v)] = v
        elif library_of(v) == "torch" and not isinstance(v, _NOT_HOLDERS) and \
                isinstance(getattr(v, "__dict__", None), dict):
            out[id(v)] = v
    return list(out.values())


def library_of(v) -> str | None:
    """"cupy" or "torch" where ``v`` is one of theirs: a module, a function of
    theirs, a class that is or derives from one of theirs, or an object of such a
    class; None otherwise."""
    try:
        if isinstance(v, _Import):
            modules = [v]
        elif isinstance(v, types.ModuleType):
            modules = [v.__name__]
        elif isinstance(v, type):   # a class of theirs, or a user's subclass of one
            modules = [c.__module__ for c in v.__mro__]
        else:
            modules = [getattr(v, "__module__", None) or type(v).__module__,
                       *(c.__module__ for c in type(v).__mro__)]
    except Exception:  # noqa: BLE001  (a dead weak proxy, an object answering oddly)
        return None
    for module in modules:
        top = module.split(".")[0] if isinstance(module, str) else ""
        if top in _LIBRARIES:
            return _LIBRARIES[top]
    return None


def _reached(fn, depth: int = 0, seen=None):
    """The values ``fn`` holds and names, the modules it imports (``_Import``),
    and, through those not of a library, what the functions it names (two
    levels) and the objects of the program's it names or holds reach."""
    seen = set() if seen is None else seen
    try:
        held = [*getattr(fn, "args", ()), *getattr(fn, "keywords", {}).values()] \
            if hasattr(fn, "func") else []
        fn = getattr(fn, "func", fn)   # (a partial)
        held.append(getattr(fn, "__self__", None))
        fn = getattr(fn, "__func__", fn)   # (a bound method)
        if not isinstance(fn, types.FunctionType):
            held.append(fn)
            fn = getattr(type(fn), "__call__", None)
            if not isinstance(fn, types.FunctionType):
                fn = None
    except Exception:  # noqa: BLE001  (an object whose attribute lookup raises)
        return
    named = held
    if fn is not None and id(fn) not in seen:
        seen.add(id(fn))
        codes = nested_codes(fn.__code__)
        named += [fn.__globals__.get(name) for code in codes for name in _global_names(code)]
        named += [c.cell_contents for c in fn.__closure__ or () if _filled(c)]
        yield from (_Import(head.strip("<>")) for code in codes
                    for head, _ in imported(code).values())
    for v in named:
        try:
            for x in [v] if not isinstance(v, (list, tuple, dict)) else \
                    [v, *islice(leaves(v), _LEAVES)]:   # NETS["enc"], models[0]
                if x is None:
                    continue
                yield x
                if library_of(x) or depth >= 2:
                    continue
                if isinstance(x, types.FunctionType):
                    if x is not fn:
                        yield from _reached(x, depth + 1, seen)
                elif not isinstance(x, _NOT_HOLDERS):
                    yield from _held(x, depth, seen)
        except Exception:  # noqa: BLE001  (a dead weak proxy, an object answering oddly)
            continue


def _held(obj, depth: int, seen: set, level: int = 0):
    """What an object of the program's holds (its attributes, and theirs, two
    levels deep; the first ``_LEAVES`` items of a container) and what its
    methods' code reaches (``self.forward`` naming torch)."""
    if id(obj) in seen or not own_object(obj):
        return
    seen.add(id(obj))
    for _, v in _attributes(obj):
        for x in [v, *islice(leaves(v), _LEAVES)] if isinstance(v, (list, tuple, dict)) else [v]:
            yield x
            if level < 1 and not library_of(x) and not isinstance(x, _NOT_HOLDERS):
                yield from _held(x, depth, seen, level + 1)
    methods = [f for c in type(obj).__mro__ if c is not object
               for f in vars(c).values() if isinstance(f, types.FunctionType)]
    for f in methods:
        yield from _reached(f, depth + 1, seen)


# --- the state the captured work depends on -------------------------------------
_SAME, _AT, _EQ, _FILLED, _LEN, _GRAD = "same", "at", "eq", "filled", "len", "grad"


def snapshot(roots) -> list:
    """``(how, where, key, expected, label, torch's)`` for the state of ``roots``
    that the captured work depends on (see the module's docstring); ``torch's``
    tells entries of torch's own classes (a user's module's settings are not)."""
    torch = sys.modules.get("torch")
    out: list = []
    seen: set = set()
    for v in roots if torch is not None else ():
        try:
            if isinstance(v, torch.Tensor):
                _tensor(out, None, None, v, f"a {type(v).__name__} it holds")
            elif isinstance(v, torch.nn.Module):
                for name, m in v.named_modules():
                    if id(m) not in seen:
                        seen.add(id(m))
                        _module(out, m, f"{type(v).__name__}{'.' if name else ''}{name}")
            elif id(v) not in seen:
                seen.add(id(v))
                _object(out, v, type(v).__name__)
        except Exception:  # noqa: BLE001  (a library object answering oddly: not watched)
            continue
    return out


def _module(out, m, label) -> None:
    """A module's parameters (and their gradients), buffers and submodules, how
    many of each, and its settings (``training``, ``negative_slope``...)."""
    params = m._parameters
    for d in (params, m._buffers):
        for k in list(d.keys()):
            x = d[k]
            if x is None:
                out.append((_SAME, d, k, None, f"{label}.{k}", True))
            else:
                _tensor(out, d, k, x, f"{label}.{k}")
                if d is params:   # eager zero_grad(set_to_none=True) between calls
                    out.append((_GRAD, None, None, (x, x.grad), f"{label}.{k}.grad", True))
    modules = m._modules
    out.extend((_SAME, modules, k, modules[k], f"{label}.{k}", True) for k in list(modules.keys()))
    out.extend((_LEN, d, None, len(d), f"{label} ({what})", True)   # appended, deleted
               for d, what in ((params, "parameters"), (m._buffers, "buffers"),
                               (modules, "submodules")))
    ours = type(m).__module__.startswith("torch")
    for k, v in list(vars(m).items()):
        if _plain(v):
            out.append((_EQ, vars(m), k, tuple(v) if isinstance(v, list) else v,
                        f"{label}.{k}", ours))


def _tensor(out, where, key, x, label) -> None:
    try:
        at = x.data_ptr()
    except Exception:  # noqa: BLE001  (a tensor without storage: sparse, uninitialised)
        if where is not None:
            out.append((_SAME, where, key, x, label, True))
        return
    out.append((_AT, where, key, (x, at), label, True))


def _object(out, obj, label) -> None:
    """An optimizer's groups and state, and the settings of other torch objects."""
    ours = type(obj).__module__.startswith("torch")
    groups = getattr(obj, "param_groups", None) if hasattr(obj, "state") else None
    if isinstance(groups, list):
        for i, g in enumerate(groups):
            for k, v in list(g.items()) if isinstance(g, dict) else ():
                _value(out, g, k, v, f"{label}.param_groups[{i}][{k!r}]", ours)
        state = obj.state
        out.append((_FILLED, state, None, _filled_count(state), f"{label}.state", ours))
        for p, st in list(state.items()):
            for k, v in list(st.items()) if isinstance(st, dict) else ():
                _value(out, st, k, v, f"{label}.state[{k!r}]", ours)
        return
    for k, v in list(vars(obj).items()):
        if _plain(v):
            _value(out, vars(obj), k, v, f"{label}.{k}", ours)


def _value(out, where, key, v, label, ours) -> None:
    torch = sys.modules["torch"]
    if isinstance(v, torch.Tensor):
        _tensor(out, where, key, v, label)
    elif _plain(v):
        out.append((_EQ, where, key, tuple(v) if isinstance(v, list) else v, label, ours))


def _plain(v, depth: int = 0) -> bool:
    if v is None or isinstance(v, (bool, int, float, str)):
        return True
    return depth == 0 and isinstance(v, (list, tuple)) and len(v) <= _LEAVES and \
        all(_plain(x, 1) for x in v)


def _filled_count(state) -> int:
    return sum(1 for st in list(state.values()) if st)


def _now(how, where, key):
    if how is _FILLED:
        return _filled_count(where)
    if how is _LEN:
        return len(where)
    v = where[key]
    return tuple(v) if how is _EQ and isinstance(v, list) else v


def first_change(entries, ours_only: bool = False, given=()):
    """The first entry that no longer holds, or None. ``ours_only``: of the
    settings and state of torch's own classes (not tensors, gradients, counts),
    but a setting now one of the numbers ``given`` (the region's: an optimizer's
    ``lr`` set from its argument is captured again with the next one)."""
    for entry in entries:
        how, where, key, expected, _, ours = entry
        if ours_only and (how is not _EQ and how is not _FILLED or not ours):
            continue
        try:
            if how is _AT:
                x, at = expected
                if where is not None and where[key] is not x or x.data_ptr() != at:
                    return entry
            elif how is _SAME:
                if where[key] is not expected:
                    return entry
            elif how is _GRAD:
                if expected[0].grad is not expected[1]:
                    return entry
            else:
                now = _now(how, where, key)
                if now != expected and not (ours_only and how is _EQ and _among(now, given)):
                    return entry
        except Exception:  # noqa: BLE001  (gone from its dict, or answering oddly)
            return entry
    return None


def grown(before) -> list:
    """The entries of ``before`` (taken before a capture) of gradients that were
    None and are set now: the capture took torch's path for a first gradient
    (assign, not accumulate), which eager calls take only once; the region is
    captured again, with them there, after its first launch."""
    return [e for e in before if e[0] is _GRAD and e[3][1] is None and
            getattr(e[3][0], "grad", None) is not None]


def _among(v, given) -> bool:
    """Whether ``v`` is a number one of ``given`` equals (``float(lr)`` of an
    ``np.float32`` argument too)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and any(g == v for g in given)


def describe(entry) -> str:
    """What changed, for an error: ``SGD.param_groups[0]['lr'] (0.1 -> 0.05)``."""
    how, where, key, expected, label, _ = entry
    try:
        now = _now(how, where, key)
    except Exception:  # noqa: BLE001
        now = MISSING
    if how is _FILLED:
        return f"{label} (state for {expected} parameters, now {now}: made at its first use)"
    if how is _EQ:
        return f"{label} ({expected!r} -> {'gone' if now is MISSING else repr(now)})"
    return label

"""Numbers the traced Python draws on the host, which its graph bakes in
(``host_draws``): ``random.random()``, ``rng.normal()`` off a global numpy
``Generator``, ``np.random.rand()``, ``self.rng.normal()``, ``gauss()`` imported
from ``random``, ``time.perf_counter()``, ``datetime.now()``, ``os.urandom(8)``,
``uuid.uuid4()``. The function's Python runs once, when traced: every call
replays the number drawn then, where eager code would draw a new one, and no
cache key can hold a value that differs at every call, so a call says so
(``CallWarnings._warn_draws``, a ``StateWarning`` at the line of the draw).

Told from the bytecode of the code the trace runs (``Holdings.traced_code``:
the function, its helpers, the methods of its class and of held objects'
classes it calls; not host callbacks, which run at every launch, nor the code
it hands to ``s.host``): each name or attribute chain off one that the code
calls (found once per code object, ``_calls``) is looked up statically, at
each trace, against the function's globals and closure, and ``self`` for a
method: a draw is a method of a ``random.Random`` (``SystemRandom`` too),
numpy ``Generator``, ``RandomState`` or ``BitGenerator``, looked up on such an
object or bound to one (numpy's module-level ``np.random.rand`` is a method of
its global ``RandomState``, ``random.random`` one of ``random``'s hidden
``Random``); or one of a few clocks and sources of entropy (``_FIXED``).
"""
from __future__ import annotations

import dis
import functools
import random
import sys
import types
import weakref

from .chains import MISSING, callback_codes, imported, lookup
from .static_attrs import getattr_static

__all__ = ["host_draws", "region_draws"]

# the functions that give another number at every call: (where, what, names)
_FIXED = (("time", "clock", ("time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic",
                             "monotonic_ns", "process_time", "process_time_ns")),
          ("datetime.datetime", "clock", ("now", "utcnow", "today")),
          ("datetime.date", "clock", ("today",)),
          ("os", "draw", ("urandom", "getrandom")),
          ("uuid", "draw", ("uuid1", "uuid4")),
          ("secrets", "draw", ("token_bytes", "token_hex", "token_urlsafe", "randbelow",
                               "randbits", "choice")))
_MODULES = tuple(dict.fromkeys(where.partition(".")[0] for where, _, _ in _FIXED))
# a generator's methods that draw nothing (its state set, read or split)
_NO_DRAW = frozenset({"seed", "getstate", "setstate", "get_state", "set_state", "spawn",
                      "jumped", "advance"})
_STEPS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})
_NAMES = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})
_CELLS = frozenset({"LOAD_DEREF", "LOAD_CLASSDEREF"})
_LOCALS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW"})
# before 3.13 the NULL of a call of a local or cell comes first (PUSH_NULL; LOAD_FAST f),
# from 3.13 after the callable (LOAD_FAST f; PUSH_NULL); 3.10 pushes none
_NULL_FIRST = sys.version_info < (3, 13)
_NO_NULL = sys.version_info < (3, 11)
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
_CALLS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def host_draws(functions) -> list:
    """``(code, line, spelled, callee, kind)`` for each call the code of each
    ``(function, object)`` of ``functions`` makes, or a function nested in it (not
    one it hands to ``s.host``), that draws a number on the host: ``spelled`` as
    the code names it (``rng.normal``), ``callee`` what that is
    (``numpy.random.Generator.normal``), ``kind`` ``"draw"`` or ``"clock"``.
    ``object``: where the function is a method of its class, what its first
    parameter holds (a method's ``self``), else None."""
    found: dict = {}
    fixed = _fixed()
    for fn, obj in functions:
        code = getattr(fn, "__code__", None)
        calls = _calls(code) if code is not None else ()
        if not calls:
            continue
        mine = obj if obj is not None and _runs_on(fn, obj) else None
        for line, how, head, steps, spelled in calls:
            hit = _callee(fn, how, head, steps, mine, fixed)
            if hit is not None:
                found.setdefault((code.co_filename, line, spelled), (code, line, spelled) + hit)
    return list(found.values())


def region_draws(ir) -> list:
    """``host_draws`` of the captured regions of graph ``ir`` (``s.captured(fn,
    ...)``): a GPU runs a region's Python only when it captures it and each launch
    replays that work, so a number drawn there is baked in as the trace's is. Each
    draw is ``host_draws``' tuple with the region's node after it."""
    out, seen = [], set()
    for node in _captured(ir):
        fn, obj = node.target, None
        while isinstance(fn, functools.partial):
            fn = fn.func
        if isinstance(fn, types.MethodType):
            fn, obj = fn.__func__, fn.__self__
        elif not isinstance(fn, types.FunctionType) and callable(fn):
            fn, obj = getattr(type(fn), "__call__", None), fn   # a callable object
        for draw in host_draws([(fn, obj)]) if isinstance(fn, types.FunctionType) else ():
            if draw[:3] not in seen:
                seen.add(draw[:3])
                out.append(draw + (node,))
    return out


def _captured(ir):
    """The captured regions' nodes of graph ``ir`` and of its regions, without making
    the Nodes of its launches (a build adds those from the recorded columns): a
    region is recorded as a Node (``Tracer.record``), as a loop or branch is."""
    rec = ir.recording()
    if rec is None:
        yield from (node for node in ir.walk() if node.kind == "captured")
        return
    early = rec.early()
    yield from (early[pos] for pos in sorted(early) if early[pos].kind == "captured")
    for node in ir.structured():
        for region in node.regions:
            yield from _captured(region)


def _calls(code) -> tuple:
    """``(line, how, head, steps, spelled)`` of each name or attribute chain off one
    (``steps``) that ``code`` and the code nested in it (but what it hands to
    ``s.host``) call: ``how`` ``"name"`` (a global, or a module it imports itself:
    ``"<random>"``, ``chains.lookup``), ``"cell"`` (a closure's) or ``"self"``
    (its first parameter, a method's self). Found once per code object."""
    hit = _CALLS.get(code)
    if hit is None:
        hit = _CALLS[code] = tuple(_scan(code))
    return hit


def _scan(top) -> list:
    first = top.co_varnames[0] if top.co_argcount else None
    out, todo = [], [top]
    while todo:
        code = todo.pop()
        hosted = callback_codes(code)
        todo += [c for c in code.co_consts if isinstance(c, types.CodeType) and c not in hosted]
        local = imported(code)   # import random as r; from time import perf_counter as pc
        ins = [i for i in dis.get_instructions(code) if i.opname not in ("CACHE", "EXTENDED_ARG")]
        line, n = code.co_firstlineno, 0
        while n < len(ins):
            i, m = ins[n], n + 1
            line = _line(i, line)
            head = _head(i, code is top, first, local)
            if head is None:
                n += 1
                continue
            while m < len(ins) and ins[m].opname in _STEPS:
                m += 1
            if _called(ins, n, m):
                how, name, steps = head
                more = tuple(k.argval for k in ins[n + 1:m])
                spelled = ".".join((i.argval,) + more)
                out.append((line, how, name, steps + more, spelled))
            n = m
    return out


def _line(i, last: int) -> int:
    at = getattr(i, "positions", None)   # (3.11 on)
    if at is not None and at.lineno is not None:
        return at.lineno
    start = i.starts_line   # (a bool from 3.13, which has positions)
    return start if type(start) is int else last


def _head(i, top: bool, first, local):
    """``(how, name, steps)`` of a chain ``i`` starts, None for any other load."""
    if i.opname in _NAMES:
        return "name", i.argval, ()
    if i.opname in _CELLS:
        return "cell", i.argval, ()
    if i.opname in _LOCALS and top:
        if i.argval in local:
            head, steps = local[i.argval]
            return "name", head, tuple(k for _, k in steps)
        if i.argval == first:
            return "self", i.argval, ()
    return None


def _called(ins, n: int, m: int) -> bool:
    """Whether the chain of ``ins[n:m]`` is what a call calls: loaded as a method
    (``LOAD_METHOD``, or ``LOAD_ATTR`` with its NULL from 3.12), or with the NULL of
    a call of it (``LOAD_GLOBAL`` loading it, or ``PUSH_NULL`` beside it); not one
    handed to a call (``s.host(random.random)``)."""
    last = ins[m - 1]
    if last.opname == "LOAD_METHOD" or m - 1 > n and _with_null(last):
        return True
    if _with_null(ins[n]) and all(k.opname == "LOAD_ATTR" for k in ins[n + 1:m]):
        return True   # LOAD_GLOBAL (NULL + random); LOAD_ATTR (random)
    if _NO_NULL:
        return _calls_it(ins, m)
    beside = ins[n - 1] if _NULL_FIRST else ins[m] if m < len(ins) else None
    return n > 0 and beside is not None and beside.opname == "PUSH_NULL"


def _calls_it(ins, m: int) -> bool:
    """(3.10, whose calls push no NULL) whether the first call taking the value
    ``ins[m - 1]`` leaves takes it as the callable: the values above it on the stack
    are that call's arguments (read in straight code, to the first jump)."""
    above = 0
    for k in ins[m:]:
        op = k.opname
        takes = k.arg + (op == "CALL_FUNCTION_KW") if op in ("CALL_FUNCTION", "CALL_FUNCTION_KW") \
            else 1 + (k.arg & 1) if op == "CALL_FUNCTION_EX" else None
        if takes is not None and above <= takes:
            return above == takes
        if k.opcode in _JUMPS:
            return False
        above += dis.stack_effect(k.opcode, k.arg, jump=False)
        if above < 0:
            return False
    return False


def _with_null(i) -> bool:
    """Whether ``i`` pushes a call's NULL with what it loads (``dis`` shows it)."""
    return i.argrepr.startswith(("NULL + ", "NULL|self + ")) or \
        i.argrepr.endswith((" + NULL", " + NULL|self"))


def _runs_on(fn, obj) -> bool:
    """Whether ``fn`` is a method of ``obj``'s class (or a base's), whose first
    parameter is ``obj`` in the trace."""
    owner = fn.__qualname__.rpartition(".")[0]
    return any(c.__qualname__ == owner for c in type(obj).__mro__)


def _callee(fn, how: str, head: str, steps: tuple, self_obj, fixed):
    """``(callee, kind)`` where the chain names a draw now, else None."""
    code = fn.__code__
    if how == "name":
        v = lookup(fn, head)
    elif how == "cell" and head in code.co_freevars:
        v = lookup(fn, head)
    elif self_obj is not None and code.co_argcount and head == code.co_varnames[0]:
        v = self_obj   # self, or a closure's self
    else:
        return None
    owner = None
    for step in steps:
        if v is None or v is MISSING:
            return None
        owner, v = v, _static(v, step)
    hit = fixed.get(id(v))
    if hit is not None and hit[0] is v:
        return hit[1:]
    if owner is not None and isinstance(owner, _generators()):   # rng.normal, self.rng.gauss
        drawn = steps[-1][:1] != "_" and steps[-1] not in _NO_DRAW and \
            callable(_static(type(owner), steps[-1]))
        return (f"{_maker(owner)}.{steps[-1]}", "draw") if drawn else None
    if isinstance(v, (types.MethodType, types.BuiltinMethodType)):   # random.random, gauss,
        maker, name = v.__self__, v.__name__                          # np.random.rand
        if isinstance(maker, _generators()) and name[:1] != "_" and name not in _NO_DRAW:
            return f"{_maker(maker)}.{name}", "draw"
    return None


def _static(v, name: str):
    """``v.name`` read statically (no property's code runs); a module's submodule
    loaded lazily (``numpy.random``) from ``sys.modules``; MISSING where absent."""
    try:
        got = getattr_static(v, name, MISSING)
    except Exception:   # (an object whose own lookup raises)
        return MISSING
    if got is MISSING and isinstance(v, types.ModuleType):
        return sys.modules.get(f"{v.__name__}.{name}", MISSING)
    return got


def _generators() -> tuple:
    """The classes of the generators whose methods draw (numpy's where it is loaded)."""
    mine = sys.modules.get("numpy.random")
    if mine is None:
        return (random.Random,)
    return (random.Random, mine.Generator, mine.RandomState, mine.BitGenerator)


def _maker(obj) -> str:
    """How a message names a generator: ``random`` and ``numpy.random`` for the
    modules' own, else its class (``numpy.random.Generator``, ``random.Random``)."""
    if obj is getattr(random, "_inst", None):
        return "random"
    mine = sys.modules.get("numpy.random.mtrand")
    if mine is not None and obj is getattr(mine, "_rand", None):
        return "numpy.random"
    t = type(obj)
    where = "numpy.random" if t.__module__.startswith("numpy.random") else t.__module__
    return f"{where}.{t.__qualname__}"


_fixed_for: list = [None, {}]   # (which of _MODULES were loaded, the table then)


def _fixed() -> dict:
    """id -> ``(function, callee, kind)`` of the ``_FIXED`` functions of the modules
    loaded now (found again when another is)."""
    loaded = tuple(m in sys.modules for m in _MODULES)
    if _fixed_for[0] != loaded:
        table = {}
        for where, kind, names in _FIXED:
            head, _, rest = where.partition(".")
            v = sys.modules.get(head, MISSING)
            for step in rest.split(".") if rest else ():
                v = _static(v, step)
            for name in names if v is not MISSING else ():
                f = _static(v, name)
                if f is not MISSING:
                    table[id(f)] = (f, f"{where}.{name}", kind)
        _fixed_for[:] = [loaded, table]
    return _fixed_for[1]

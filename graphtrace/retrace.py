"""The warnings a call of a graph function gives: ``RetraceWarning`` when it
keeps being traced for new signatures (saying what keeps changing), and
``StateWarning`` when a trace changed state kept on the objects it holds, the
list and dict arguments it was handed as copies, reads a value its host
callbacks change, or draws a number on the host (``host_draws.py``).
``GraphFunction`` (``function.py``) derives from ``CallWarnings``, whose methods
``_compiled`` calls after a trace.
"""
from __future__ import annotations

import dataclasses
import functools
import numbers
import re
import types
import warnings
import weakref
from collections import deque

import numpy as np

from .arguments import path_str
from .chain_steps import item_change_line, rebind_line
from .errors import format_source, user_frame
from .host_draws import host_draws, region_draws
from .made_functions import MadeFunction
from .object_keys import Identity
from .owners import _library
from .probe import _repr

__all__ = ["RetraceWarning", "StateWarning", "CallWarnings"]

RETRACE_WARNING = 8  # distinct signatures before the retrace warning


def _type_name(t: type) -> str:
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__.split('.')[0]}." \
        f"{t.__name__}"


def _number_type(entry) -> type | None:
    """The type of the number a parameter's cache key entry stands for: a dynamic
    scalar's (its entry), a static bool's or number's; None for anything else."""
    if isinstance(entry, type):
        return entry
    if type(entry) is tuple and len(entry) == 3 and entry[0] == "static" and \
            issubclass(entry[1], (numbers.Number, np.bool_)):
        return entry[1]
    return None


def _kinds_changing(mixed) -> str:
    """The retrace warning's advice for parameters given a number on some calls and
    another value on others (``None``, a string): a dynamic number is keyed by its
    type, anything else by its value."""
    names = ", ".join(p for p, _ in mixed)
    numbers = dict.fromkeys(_type_name(t) for _, seen in mixed for v in seen
                            if (t := _number_type(v)) is not None)
    others = dict.fromkeys("None" if v[1] is type(None) else _type_name(v[1])
                           for _, seen in mixed for v in seen if _number_type(v) is None and
                           type(v) is tuple and len(v) > 1 and isinstance(v[1], type))
    return (f"argument(s) {names} keep changing between a number ({', '.join(numbers)}) and "
            f"other values ({', '.join(others) or 'objects'}): a number is keyed by its type, "
            "any other value by itself, each a new signature; pass the same kind at every "
            f"call: a number of one type (float({mixed[0][0]})), or one fixed value")


class RetraceWarning(UserWarning):
    """A decorated function keeps being traced for new signatures."""


class StateWarning(UserWarning):
    """A trace changed state kept on the objects a decorated function holds
    (``self.t += 1``): the code doing so ran once, when traced; or the graph reads
    a value its host callbacks change (each call after a change traces again); or
    the traced code draws a number on the host (``random.random()``,
    ``time.perf_counter()``), which every call replays."""


def _regions_changing(parts: list) -> str | None:
    """What keeps changing among the places captured regions reached arrays through
    (``Call.key``'s fourth part: ``region_places.py``), for the retrace warning; None
    where those are the same in every key."""
    if len({_repr(p) for p in parts}) < 2:
        return None
    entries = [p[0] if p else () for p in parts]
    common = set.intersection(*({_repr(e) for e in es} for es in entries))
    labels = sorted({str(e[0]) for es in entries for e in es if _repr(e) not in common}) or \
        sorted({str(e[0]) for es in entries for e in es})   # (how they alias changes)
    shown = ", ".join(labels[:4]) + (f" and {len(labels) - 4} more" if len(labels) > 4 else "")
    return (f"what its captured regions reach through a module, class, globals(), "
            f"sys.modules or an object array keeps changing ({shown}): the array there, and "
            "how it shares memory with the arguments, is part of the signature, as an array "
            "reached by name is; pass such an array to s.captured(...) as an argument "
            "instead (a new one is then captured again, without tracing)")


def _reached_changing(fixed: list, params=()) -> str:
    """What keeps changing among what the key holds of the names a function
    reaches (``Call.key``'s second part: arrays, helpers, values), for the retrace
    warning: those names, or the aliasing of arrays where none changed."""
    seen: dict = {}
    for entries in fixed:
        for e in entries:
            seen[_repr(e)] = e
    common = set.intersection(*({_repr(e) for e in entries} for entries in fixed)) \
        if fixed else set()
    changing = [e for r, e in seen.items() if r not in common and isinstance(e, tuple) and e]
    names = sorted({str(e[0]) for e in changing})
    if not names:
        return "the aliasing of arrays keeps changing"
    if all(len(e) == 3 and type(e[1]) is str and e[1] == "s.host" for e in changing):
        return (f"the object whose method it hands to s.host is another at every call "
                f"({', '.join(names[:4])}): a graph runs the very callback it was traced "
                "with, so each new object traces anew; keep one object and change what it "
                "holds instead of replacing it")
    wholes = sorted({str(e[0]) for e in changing if len(e) == 3 and isinstance(e[1], type)
                     and issubclass(e[1], _WHOLES)})
    # a container keyed by its values beside the item read off it (OPT.hp, OPT.hp['lr']):
    # the item's name says which
    names = [n for n in names if not any(m.startswith(n) and m[len(n)] in ".[" for m in names
                                         if len(m) > len(n))]
    wholes = [n for n in wholes if n in names]
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    if all(len(e) == 3 and isinstance(e[1], type) and issubclass(e[1], _VALUE_TYPES)
           for e in changing) or not any(len(e) == 4 for e in changing):   # (no array:
        # a dtype, an enum member, a string read by name)
        off = "self" if all(n.startswith("self.") for n in names) else \
            "an argument object" if all(re.split(r"[.\[]", n)[0] in params for n in names) \
            else "a global or closure name"   # (cfg.lr[0] of a host array: argument_items)
        return (f"the value(s) read by name keep changing ({shown}), and each is baked into "
                "the graph: pass a number that changes as an argument of the function (a "
                "dynamic scalar, rebound without tracing again) instead of reading it off "
                f"{off}" + (f"; a list, dict or set the graph's code reads whole "
                            f"({', '.join(wholes[:4])}) is keyed by every value it holds, so "
                            "one that grows at every call (a history) traces anew each "
                            "time: read only the values the graph needs, by constant keys, "
                            "or pass them as arguments" if wholes else ""))
    return (f"what the names it reaches hold keeps changing ({shown}): arrays reached by "
            "name are part of the signature, so a list the graph uses that gains arrays "
            "at every call traces anew each time; keep results in arrays made once, or "
            "pass the arrays as arguments")


# values, and containers of them: a list, dict, set or deque is keyed as a (label, type,
# value) entry only where it holds values alone (values.pure_values; arrays are keyed
# by (label, type, signature, address))
_WHOLES = (list, dict, set, deque)
_VALUE_TYPES = (int, float, complex, str, bytes, np.number, np.bool_, tuple, frozenset) + _WHOLES


_MAX_INSTANCES = 64   # method instances whose signatures are counted at once


def _forget(instances: dict, at: int, ref) -> None:
    """Drop the record of the instance ``ref`` named, gone (unless it is another's now)."""
    hit = instances.get(at)
    if hit is not None and hit[0] is ref:
        del instances[at]


def _made_anew(entry) -> bool:
    """Whether an argument's key entry is an object of the program's own keyed by
    identity (``arguments.Call._leaf``: ``("object", its class, Identity, ...)``)."""
    return type(entry) is tuple and len(entry) > 2 and entry[0] == "object" and \
        type(entry[2]) is Identity


def _made_functions(entries) -> bool:
    """Whether a parameter's key entries are functions of one code made anew at each
    call: ``made_functions.MadeFunction``s whose defaults differ, or functions with
    closure cells, each keyed by identity."""
    made = [e[2] for e in entries if type(e) is tuple and len(e) > 2 and
            e[0] in ("static", "function") and (type(e[2]) is MadeFunction or
                                                type(e[2]) is types.FunctionType)]
    return len(made) == len(entries) and len({
        m.code if type(m) is MadeFunction else m.__code__ for m in made}) == 1


def _fresh_advice(fresh) -> str:
    """The retrace warning's advice for objects made anew at each call: their values
    read repeat, but each is keyed by identity. A class of the program's own may be
    made a frozen dataclass; a ``SimpleNamespace`` (another library's class, a
    dataclass that is not frozen) is replaced by a frozen dataclass or a ``NamedTuple``."""
    names = ", ".join(p for p, _ in fresh)
    classes = {v[1] for _, seen in fresh for v in seen}
    unread = [p for p, seen in fresh if all(not v[3:] or v[3:] == ((),) for v in seen)]
    mine = all(c.__module__ not in ("types", "builtins") and not _library(c) for c in classes)
    thawed = sorted(f"{c.__qualname__} (a dataclass not frozen)" if dataclasses.is_dataclass(c)
                    else c.__qualname__ for c in classes
                    if not mine or dataclasses.is_dataclass(c) and
                    not c.__dataclass_params__.frozen)
    make = f"pass a frozen dataclass or a typing.NamedTuple in place of {', '.join(thawed)}" \
        if thawed else "make its class a frozen dataclass"
    return (f"argument(s) {names} are objects "
            + ("of the program's own" if mine else "made anew at each call")
            + ", each new one a new signature even where equal (it is keyed by identity, "
            "with what the code reads off it): pass the same object at every call, changing "
            f"its attributes, or {make}, whose equal objects share a graph"
            + (f" (the code reads nothing off {', '.join(unread)}: where the graph needs "
               "nothing of it, leave it out of the call)" if unread else ""))


class CallWarnings:
    """The warnings of ``GraphFunction``'s calls, said once each (mixed into
    ``GraphFunction``: ``self`` is the decorated function)."""

    def _note_retrace(self, key) -> None:
        """Warn once when a function keeps tracing new signatures; a method, when
        one instance does (a graph per instance, and its arrays, is expected)."""
        if self._warned:   # said: the keys (which hold objects) are kept no longer
            return
        seen = self._keys_seen
        if self._lead:   # what self holds (self.lr, a history read) keyed too
            seen, key = self._instance_keys(key[0][0].obj, key)
        seen.setdefault(key, None)
        if len(seen) <= RETRACE_WARNING:
            return
        self._warned = True
        self._instances_seen.clear()
        parts = [k[0] for k in seen]
        changing = [(p, [k[i] for k in parts]) for i, p in enumerate(self.params[self._lead:])
                    if len({_repr(k[i]) for k in parts}) > 1]
        # a dynamic scalar's key is its type: a number of another type is a new
        # signature; so is a bool (static) given where numbers are
        typed = [(p, [_number_type(v) for v in seen]) for p, seen in changing
                 if any(isinstance(v, type) for v in seen) and
                 all(_number_type(v) is not None for v in seen)]
        other = [p for p, seen in changing if all(not isinstance(v, type) for v in seen)]
        mixed = [(p, seen) for p, seen in changing if p not in other and p not in dict(typed)]
        advice = [_kinds_changing(mixed)] if mixed else []   # a number, then None or a str
        if typed:
            types = ", ".join(dict.fromkeys(_type_name(v) for _, seen in typed for v in seen))
            names = ", ".join(p for p, _ in typed)
            bools = "; a bool is static, a graph per value" if any(
                issubclass(v, (bool, np.bool_)) for _, seen in typed for v in seen) else ""
            advice.append(f"the type of the number(s) {names} keeps changing ({types}"
                          f"{bools}): pass one type every call (float({typed[0][0]}) or "
                          f"np.float32({typed[0][0]}))")
        fresh = [(p, seen) for p, seen in changing if p in other and
                 all(map(_made_anew, seen)) and   # fewer values read off them than objects:
                 len({_repr(v[3:]) for v in seen}) < len({id(v[2].obj) for v in seen})]
        if fresh:
            advice.append(_fresh_advice(fresh))
            other = [p for p in other if p not in dict(fresh)]
        made = [p for p, seen in changing if p in other and _made_functions(seen)]
        if made:
            advice.append(f"argument(s) {', '.join(made)} are functions made anew at each "
                          "call (a lambda or a nested function): one closing over "
                          "variables is another function each time (what its cells hold "
                          "may change after the call), and one without is keyed by its "
                          "code and what its defaults hold (numbers, strings and tuples "
                          "of them by value, anything else by identity): define the "
                          "function once, outside the loop, or pass "
                          "functools.partial(f, ...) of a function defined once (a "
                          "partial is keyed by what it holds)")
            other = [p for p in other if p not in made]
        if other or not (typed or fresh or made or mixed):
            what = f"argument(s) {', '.join(other)} keep changing" if other else \
                _regions_changing([k[3] if len(k) > 3 else () for k in seen]) or \
                _reached_changing([k[1] for k in seen if len(k) > 1], self.params)
            advice.append(what if other == [] and what.startswith(
                ("the value(s)", "what its captured")) else
                          f"{what}: keep shapes, dtypes and static values fixed between "
                          "calls, or pass changing numbers as dynamic scalars (not in static=)")
        file, line = user_frame()
        count = len(seen)
        seen.clear()
        warnings.warn_explicit(f"{self.__name__} was traced for {count} different signatures; "
                               + "; ".join(advice), RetraceWarning, file, line)

    def _note_thrash(self) -> None:
        """Warn once when the cache keeps dropping graphs it is asked for again: the
        function is called with more signatures in turn than ``maxsize`` holds (a
        method on many objects: a graph per object whose arrays it reads)."""
        self._thrashed += 1
        if self._thrashed != RETRACE_WARNING:
            return
        per = (" (a method has a graph per object whose arrays or values it reads, so "
               "calling it on more objects in turn than that traces each call again)"
               if self._lead else "")
        file, line = user_frame()
        warnings.warn_explicit(
            f"{self.__name__} traced {self._thrashed} graphs again that its full cache "
            f"(maxsize={self.maxsize}) had dropped: it is called with more signatures in "
            f"turn than the cache holds{per}, so every call traces and builds anew; raise "
            f"maxsize (@gt.graph(maxsize={4 * self.maxsize}), or maxsize=None for no "
            "bound)", RetraceWarning, file, line)

    def _instance_keys(self, obj, key) -> tuple:
        """``(record, key)``: the signatures traced for method instance ``obj``, kept
        while it lives (named by a weak reference; what its keys hold, as a bound
        method of it held by self, may keep it alive: ``_MAX_INSTANCES`` records at
        most, the oldest dropped first), and ``key`` without ``obj``. An object no
        weak reference can name is counted with all the others by its arguments
        alone."""
        rest = (key[0][1:],) + key[1:]
        hit = self._instances_seen.get(id(obj))
        if hit is not None and hit[0]() is obj:
            return hit[1], rest
        try:
            ref = weakref.ref(obj, functools.partial(_forget, self._instances_seen, id(obj)))
        except TypeError:   # (__slots__ without __weakref__)
            return self._keys_seen, (key[0][1:],)
        if len(self._instances_seen) >= _MAX_INSTANCES:
            del self._instances_seen[next(iter(self._instances_seen))]
        record: dict = {}
        self._instances_seen[id(obj)] = (ref, record)
        return record, rest

    def _warn_rebound(self, labels, self_obj) -> None:
        """Say that a trace put other arrays in names or attributes the graph reads
        (``self.a, self.b = self.b, self.a``; ``global A, B; A, B = B, A``): at the
        line of the store in the function or a method it calls (the caller's line
        where none is found)."""
        what = ", ".join(sorted(labels))
        functions = [self.fn] + [f for f, _ in self._holdings.traced_code(self_obj)
                                 if f is not self.fn]
        where = next(((code.co_filename, line) for label in sorted(labels)
                      for code in dict.fromkeys(getattr(f, "__code__", None)
                                                for f in functions) if code is not None
                      for line in (rebind_line(code, label),) if line), None)
        file, line = where or user_frame()
        warnings.warn_explicit(
            f"tracing {self.__name__} rebound {what} to other arrays: the traced Python "
            "code does that once, when traced, not at every call; later calls run the "
            "graph on the arrays they hold then and rebind nothing (ping-pong buffers "
            "stay where they are). Swap them outside the graph function, between calls, "
            "or pass both arrays as arguments and swap them at the call: f(a, b), then "
            "f(b, a)", StateWarning, file, line)

    def _warn_state(self, labels, unkeyed: bool = False) -> None:
        """Say once per attribute that a trace changed state kept on an object
        (``unkeyed``: changed values whose reads the code does not name, ``unkeyed.py``)."""
        what = ", ".join(sorted(labels))
        text = (f"tracing {self.__name__} changed {what}: state kept on an object or by a "
                "global name, which "
                "the traced Python code changes once, when traced, not at every call; "
                "what the graph computed from it then is replayed as it was (and a "
                "change to it traces nothing anew). Keep a value the kernels need at "
                "every call in a device array a kernel updates, or change it outside the "
                "function and pass it as an argument; run bookkeeping that must happen "
                "at every call in s.host")
        if unkeyed:
            text += (". Graphtrace cannot tell whether the code read it first (a key "
                     "computed, ST[k + \"0\"]; a value "
                     "in a host array), so no later call traces anew for it: where it is a "
                     "flag deciding work, name it by a constant (OB.started, ST[\"init\"], "
                     "ST[Phase.A]) in a global or an object of your own, which keys the "
                     "graph by it")
        file, line = user_frame()
        warnings.warn_explicit(text, StateWarning, file, line)

    def _warn_live(self, labels) -> None:
        """Say once per value that the graph reads one its host callbacks change:
        watched, so every call after such a change traces again."""
        self._live_warned |= labels
        what = ", ".join(sorted(labels))
        file, line = user_frame()
        warnings.warn_explicit(
            f"{self.__name__} reads {what}, which a host callback of its graph changes: "
            "the graph bakes in the value it read when traced, so every call after the "
            "callback changed it traces again (as eager code would use the new value). "
            "Pass the value as an argument instead (a dynamic scalar, which each call "
            "rebinds without tracing), or keep it in a device array that a kernel "
            "reads and updates", StateWarning, file, line)

    def _draws(self, obj, ir=None) -> list:
        """The numbers the code a trace runs draws on the host (``host_draws``; ``obj``:
        a method's self), and those its captured regions draw (``region_draws``), but
        those of the lines already named."""
        drawn = host_draws(self._holdings.traced_code(obj)) + \
            (region_draws(ir) if ir is not None else [])
        return [d for d in drawn if d[:2] not in self._draws_warned]

    def _warn_draws(self, drawn) -> None:
        """Say once per line that the traced code draws a number on the host
        (``random.random()``, ``rng.normal()``, ``time.perf_counter()``): the graph
        replays the number of the trace, and no key can hold one new at every call."""
        for code, line, spelled, callee, kind, *region in drawn:
            self._draws_warned.add((code, line))
            what = f"{spelled}()" + ("" if callee == spelled else f" ({callee})") + \
                ("" if code is self.fn.__code__ or region else f" in {code.co_name}") + \
                f" at {format_source((code.co_filename, line))}"
            if region:
                text = _region_draw(self.__name__, region[0], what, kind)
            elif kind == "clock":
                text = (f"tracing {self.__name__} reads the clock with {what}: the traced "
                        "Python code runs once, when traced, so the graph bakes in the time "
                        "read then and every call replays it (eager code would read it anew "
                        "at each call). Read the clock outside the function and pass the "
                        "number as an argument (a dynamic scalar, which each call rebinds "
                        "without tracing), or read it in a host callback, s.host(fn), which "
                        "runs at every launch")
            else:
                text = (f"tracing {self.__name__} draws a random value on the host with "
                        f"{what}: the traced Python code runs once, when traced, so the "
                        "graph bakes in the value drawn then and every call replays it "
                        "(eager code would draw a new one at each call). Draw on the device "
                        "instead (numba.cuda.random or cupy.random into an array the graph "
                        "takes, or a kernel's generator keyed by a step counter kept in a "
                        "device array), or draw on the host outside the function and pass "
                        "the number as an argument (a dynamic scalar, which each call "
                        "rebinds without tracing)")
            warnings.warn_explicit(text, StateWarning, code.co_filename, line)

    def _warn_copies(self, paths) -> None:
        """Say that a trace changed list or dict arguments (``paths``), which it was
        handed as copies: at the line doing it (the function's where none is found)."""
        what = ", ".join(path_str(p) for p in paths)
        code = self.fn.__code__
        line = item_change_line(code, paths[0][0]) if len(paths[0]) == 1 else None
        params = self._sig.parameters
        defaults = [p[0] for p in paths if p[0] in params and
                    isinstance(params[p[0]].default, (list, dict))]
        shown = ", ".join(f"{n}={'[]' if isinstance(params[n].default, list) else '{}'}"
                          for n in dict.fromkeys(defaults))
        kept = (f"neither the caller's container nor the function's default ({shown}) "
                "is changed, so a default "
                "kept as a memo or counter holds nothing for later calls, which") if defaults \
            else "the caller's container is not changed, and later calls"
        warnings.warn_explicit(
            f"tracing {self.__name__} changed its list or dict argument {what} (items "
            "rebound, added, removed or reordered, or a key added that the code read "
            "first): the traced function is handed a copy of each list and dict argument "
            "(of a default too), so that change happens once, at the trace, on the copy; "
            f"{kept} replay the graph without it (ping-pong buffers stay where they are). "
            "Swap or change it outside the function (after each call), or pass both "
            "arrays as arguments and swap them at the call: f(b, a); keep state that "
            "decides the work outside the function and pass what it decides",
            StateWarning, code.co_filename, line or code.co_firstlineno)


def _region_draw(name: str, node, what: str, kind: str) -> str:
    """The warning for captured region ``node`` of graph ``name`` drawing a number
    on the host (``kind`` ``"draw"``) or reading the clock (``"clock"``)."""
    region = node.target
    while isinstance(region, functools.partial):
        region = region.func
    region = getattr(region, "__qualname__", type(region).__qualname__)
    does = "reads the clock" if kind == "clock" else "draws a random value on the host"
    return (f"captured region {region} of {name} (recorded at {format_source(node.source)}) "
            f"{does} with {what}: on a GPU the region's Python runs only when it is "
            "captured (when the graph is built, or a call brings it new arrays or numbers), "
            "and each launch replays the GPU work captured, so the graph bakes in the "
            "value of that capture (the simulator, which runs the region at every launch, "
            "gets a new one at each call). " + ("Read the clock" if kind == "clock" else
            "Draw on the device (cupy.random or torch's generators into an array the "
            "region writes), or draw") + " on the host outside the graph function and pass "
            "the number to s.captured as an argument, which is captured again with each "
            "new one")

"""Lists, sets and dicts a trace changed in place as a flag, told from histories.

A trace that changes a container whose items the cache key holds (``if not
self.log: ...; self.log.append("started")``, ``if "w" not in self.seen: ...;
self.seen.add("w")``, ``self.state.update(init=True)``) ran that Python once.
Where the change is made once, as a flag is raised (the next trace, from the
container as this one left it, would leave it so), the graph is keyed by the
items the trace found, and each call replaying it fills the container as the
trace left it (``refill.Contents``): a container the user empties again runs
the first-call work again, as eager code would. A container the code grows at
every call (a history: ``self.log.append(step)``) is state, as a counter is.

Told at the trace, from the items before and after it (``settles``) and from
the bytecode of the code the trace may run:

- a set or dict given only members or keys of a flag's kind (strings and
  tuples the code names as constants or holds by a global name, enum members,
  None, booleans; not numbers: ``self.seen.add(self.n)``), each holding a value
  set from absent (not a number) or moved as a flag or phase is
  (``held_keys._settled_value``), or some taken away; a list or deque whose
  items changed so in place; any of them emptied (``self.pending.clear()``);
- or a container every change of which in the code sits on one side of a test
  reading it (``guarded``: ``if not self.log:``, ``while len(self.q) < 3:``, the
  ``else`` of ``if DONE:``, the code after ``if DONE: return``);

and a container a trace changes from what an earlier trace left it holding
(``refilled``'s ``afters``: a second trace from the value the first left
changed it again) is no flag: state, whatever the first trace looked like.
"""
from __future__ import annotations

import dis
import enum
from collections import deque

from .branches import EXITS, effect, jumps, returns_none, sides
from .chains import _MUTATORS
from .first_reads import _NAME_LOADS, _NAME_STORES, _codes, label_step
from .held_keys import _settled_value
from .named_keys import Named
from .values import Unwatched, _Held, _typed, pure_values

__all__ = ["Code", "decides", "entry_pairs", "guarded", "read", "refilled", "settles"]

_AFTERS = 32   # the values a container was left holding, remembered per label
_WHOLE = (list, dict, set, deque)
_FLAGS = frozenset({bool, type(None)})   # keys, members and values of a flag's kind
_NUMBERS = frozenset({int, float, complex})   # a count's
# what may lie between a container's load and the jump of a test reading it
_TESTING = frozenset({
    "LOAD_ATTR", "LOAD_METHOD", "LOAD_CONST", "LOAD_SMALL_INT", "LOAD_FAST", "LOAD_FAST_BORROW",
    "LOAD_GLOBAL", "LOAD_DEREF", "PRECALL", "CALL", "CALL_KW", "KW_NAMES", "PUSH_NULL",
    "CONTAINS_OP", "COMPARE_OP", "IS_OP", "UNARY_NOT", "TO_BOOL", "BINARY_SUBSCR", "NOP",
    "EXTENDED_ARG", "CACHE"})
_KEY_LOADS = _NAME_LOADS | {"LOAD_CONST", "LOAD_SMALL_INT", "LOAD_FAST", "LOAD_FAST_BORROW",
                            "LOAD_FAST_CHECK"}


def entry_pairs(before, after, changed) -> dict:
    """label -> ``(old, new, unwatched)`` for each container of one class whose items
    the key entries (``held_key``, ``Holdings.entries``) hold before and after a
    trace (``_Held`` forms) that it changed: of the labels ``changed``
    (``state_changed``), and those the key does not hold by themselves
    (``unwatched``: ``values.Unwatched``, which ``state_changed`` passes over)."""
    old, new, out = _forms(before), _forms(after), {}
    for label in changed | {label for label, v in new.items()
                            if type(v) is Unwatched and old.get(label, v) != v}:
        a, b = old.get(label), new.get(label)
        if a is not None and b is not None and a.value[0] is b.value[0]:
            out[label] = (a, b, type(b) is Unwatched)
    return out


def _forms(entries) -> dict:
    """label -> the form of the container an entry holds (one the key holds by
    itself before an ``Unwatched`` one: ``self.cfg.state`` read whole and stored in)."""
    out: dict = {}
    for e in entries:
        v = e[2] if len(e) == 3 and isinstance(e[2], _Held) else None
        form = v.value if v is not None else None
        if type(form) is tuple and len(form) == 2 and isinstance(form[0], type) and \
                issubclass(form[0], _WHOLE) and type(out.get(e[0])) is not _Held:
            out[e[0]] = v
    return out


def refilled(pairs: dict, functions, afters=None) -> tuple:
    """``(filled, quiet, again)``: the labels of ``pairs`` (``entry_pairs``) a trace
    changed as a flag (``settles``; ``functions()``, the code it may run), those of
    the others the key does not hold by themselves (left alone, as before), and
    those changed from what an earlier trace left them holding (``afters``, label
    -> the forms traces left, kept between them; None: not kept): no fixed point,
    a history (state)."""
    filled, quiet, again, code = set(), set(), set(), None
    for label, (old, new, unwatched) in pairs.items():
        seen = afters.setdefault(label, set()) if afters is not None else None
        if seen is not None and (old in seen or len(seen) >= _AFTERS):
            again.add(label)   # (or a count kept in it)
            continue
        code = code or Code(functions())
        if settles(label, old.value, new.value, code):
            filled.add(label)
            if seen is not None:
                seen.add(new)
        elif unwatched:
            quiet.add(label)
    return filled, quiet, again


class Code:
    """The code of the functions a trace may run, as ``settles`` reads it: the code
    objects (``codes``, nested ones among them) and, found once, the constants they
    name (``constants``)."""

    def __init__(self, functions):
        self.functions, self.codes, self._constants = functions, _codes(functions), None

    @property
    def constants(self) -> set:
        """The constants of the code (those in tuples too: keyword names, a dict
        display's keys) and the strings and tuples the global names it loads hold
        (``KEY = "init"``), as ``_typed`` forms of ``pure_values``."""
        if self._constants is None:
            found = [x for code in self.codes for c in code.co_consts
                     for x in ((c, *c) if isinstance(c, (tuple, frozenset)) else (c,))]
            for f in self.functions:
                scope = getattr(f, "__globals__", None)
                for code in _codes((f,)) if type(scope) is dict else ():
                    found += [scope[n] for n in code.co_names if type(scope.get(n)) in
                              (str, tuple)]
            self._constants = set()
            for x in found:
                try:
                    self._constants.add(_typed(pure_values(x) if isinstance(
                        x, (tuple, frozenset)) else x))
                except TypeError:   # (unhashable)
                    pass
        return self._constants


def settles(label: str, old: tuple, new: tuple, code: Code) -> bool:
    """Whether the container ``label`` names went from items ``old`` to ``new``
    (``pure_values``' forms) as a flag (module docstring), ``code`` (``Code``)
    telling constants and tests."""
    cls, was, now = old[0], old[1], new[1]
    if not now:   # emptied (self.pending.clear())
        return True
    if issubclass(cls, set):
        loose = all(_constant(m, code) for m in now - was)
    elif issubclass(cls, dict):
        a, b = dict(was), dict(now)
        moved = {k for k in a.keys() | b.keys()
                 if k not in a or k not in b or _typed(a[k]) != _typed(b[k])}
        loose = all(_constant(k, code) and (k not in b or type(b[k]) not in _NUMBERS and (
            k not in a or _settled_value(a[k], b[k]))) for k in moved)   # (not a count)
    else:   # a list or deque: its items set in place (flags[0] = True), not appended
        loose = len(was) == len(now) and all(
            _typed(x) == _typed(y) or _settled_value(x, y) for x, y in zip(was, now))
    return loose or guarded(code.codes, label)


def _constant(v, code: Code) -> bool:
    """A member or key of a flag's kind: None, a bool or an enum member, or a string or
    a tuple the code names as a constant (``self.seen.add("w")``, ``update(init=True)``,
    ``self.seen.add(("a", 1))``, ``self.seen.add(KEY)``); not a number
    (``self.seen.add(self.n)``: a history)."""
    if type(v) in _FLAGS or isinstance(v, enum.Enum):
        return True
    return type(v) not in _NUMBERS and _typed(v) in code.constants


def guarded(codes, label: str) -> bool:
    """Whether every change the code of ``codes`` makes to the container ``label``
    names (told by its last step, as ``first_reads`` tells values: an attribute, a
    constant key, a name) runs on one side of a test in the same code that reads it
    only (``branches.sides``: ``if not self.log: self.log.append("x")``, ``if "w"
    not in SEEN:``, ``while len(self.q) < 3:``, the ``else`` of ``if DONE:``, the
    code after ``if DONE: return``), and there is one; False where the label cannot
    be told."""
    step = label_step(label)
    if step is None or step[0] == "key" and type(step[1]) is Named:
        return False
    found = False
    for code in codes:
        ins = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
        loads = _loads(ins, step)
        changes = _changes(ins, step, loads)
        if not changes:
            continue
        found = True
        at = {i.offset: n for n, i in enumerate(ins)}
        moves = jumps(code, ins, at)
        spans = [r for a, b in _tests(ins, [n for n in loads if n not in changes], at)
                 for r in sides(ins, moves, a, b)]
        if not all(any(start <= n < end for start, end in spans) for n in changes):
            return False
    return found


def read(functions, label: str) -> bool:
    """Whether the code of ``functions`` reads the container ``label`` names other than
    to change it (``if not self.log:``, ``len(SEEN)``; not ``seen["k"] = v`` alone,
    a container the code only fills); False where the label cannot be told."""
    found = _reads(functions, label)
    return found is not None and any(set(loads) - changes for _, loads, changes in found)


def _reads(functions, label: str):
    """Per code of ``functions``: ``(instructions, loads, changes)`` of the container
    ``label`` names (``_loads``, and the indexes of those changing it); None where
    the label cannot be told."""
    step = label_step(label)
    if step is None or step[0] == "key" and type(step[1]) is Named:
        return None
    out = []
    for code in _codes(functions):
        ins = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
        loads = _loads(ins, step)
        out.append((ins, loads, set(_changes(ins, step, loads))))
    return out


def decides(functions, label: str) -> bool:
    """Whether the code of ``functions`` reads the container ``label`` names to decide
    work (``if len(LOG) < 2: add[...](x)``, ``add[...](x, float(len(LOG)))``, ``if
    DONE: return``, ``c = 1.0 if LOG else 5.0``), as ``read`` tells reads, but those
    that decide nothing: a log line's (``log.debug("%d", len(LOG))``, ``print(...)``)
    and a test of ``len``, ``in``, ``.get`` or the like whose branches only report,
    load or compare, or change the container itself, and meet again (``if len(LOG) >
    100: del LOG[0]``, ``if k not in SEEN: log.info(...)``; ``_quiet``). True where
    the label cannot be told."""
    found = _reads(functions, label)
    if found is None:
        return True
    for ins, loads, changes in found:
        at = {i.offset: n for n, i in enumerate(ins)}
        lines = _lines(ins)
        changed = changes | {_subscript(ins, n) for n in changes} - {None}
        for n in (n for n in loads if n not in changes):
            if _reports(lines[_line(ins[n])]):
                continue
            tests = _tests(ins, [n], at)
            if not tests or not _plain(ins, n, tests[0][0]) or any(
                    not _quiet(ins, lines, at, a, b, changed) for a, b in tests):
                return True
    return False


_REPORTS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical",
                      "log", "print"})
# builtins and methods a test may call on the container and decide nothing by
_READERS = frozenset({"len", "bool", "any", "all", "sum", "min", "max", "sorted", "set",
                      "frozenset", "list", "tuple", "isinstance"})
_READING = frozenset({"get", "keys", "values", "items", "count", "index", "copy",
                      "__len__", "__contains__", "__getitem__", "isdisjoint", "issubset",
                      "issuperset"})


def _line(i):
    return i.positions.lineno if i.positions is not None else None


def _lines(ins) -> dict:
    """line -> the instructions of ``ins`` on it."""
    out: dict = {}
    for i in ins:
        out.setdefault(_line(i), []).append(i)
    return out


def _reports(on_line) -> bool:
    """Whether a line (its instructions) calls a log method or print."""
    return any(i.opname in ("LOAD_ATTR", "LOAD_METHOD", "LOAD_GLOBAL", "LOAD_NAME") and
               i.argval in _REPORTS for i in on_line)


def _plain(ins, n: int, a: int) -> bool:
    """Whether the calls between the container's load ``n`` and the jump ``a`` of a
    test reading it are ``_READERS``' and ``_READING``'s (``len(LOG)``, ``.get(k)``),
    not a function's that may launch work by it (``if helper(LOG):``)."""
    calls = sum(ins[j].opname.startswith("CALL") for j in range(n + 1, a))
    known = int(n + 1 < a and ins[n + 1].opname in ("LOAD_ATTR", "LOAD_METHOD") and
                ins[n + 1].argval in _READING)
    for j in range(n - 1, max(n - 5, -1), -1):   # len(LOG), len(CFG.log)
        if ins[j].opname in _NAME_LOADS and ins[j].argval in _READERS:
            known += 1
            break
        if not ins[j].opname.startswith("LOAD_") and ins[j].opname != "PUSH_NULL":
            break
    return calls <= known


def _quiet(ins, lines, at, a: int, b: int, changed) -> bool:
    """Whether the test jumping at ``a`` to ``b`` decides nothing: its value goes on
    to no expression (``LOG and 1.0``), and its branches do nothing but what
    ``_runs`` lets through and meet again, the stack as they found it (not a
    conditional expression's ``1.0 if LOG else 5.0``), or both return None at once
    (an ``if`` ending a function; not ``if DONE: return`` before work)."""
    if "OR_POP" in ins[a].opname:
        return False
    went = _runs(ins, lines, at, a + 1, b, changed)
    if went is None:
        return False
    if went is _RETURN:   # the other way, from b, must return too
        return _runs(ins, lines, at, b, len(ins), changed, True) is _RETURN
    if went <= b:
        return went == b
    other = _runs(ins, lines, at, b, went, changed)   # an else branch, to where both meet
    return other == went or other is _RETURN and \
        _runs(ins, lines, at, went, len(ins), changed, True) is _RETURN


_RETURN = "return"
_PASSIVE = _KEY_LOADS | {"LOAD_ATTR", "NOP", "EXTENDED_ARG", "RESUME", "COMPARE_OP",
                         "CONTAINS_OP", "IS_OP", "UNARY_NOT", "TO_BOOL", "POP_TOP",
                         "BINARY_SUBSCR"}


def _runs(ins, lines, at, start: int, stop: int, changed, follow=False):
    """Where the instructions from ``start`` go, running nothing but ``_PASSIVE``
    ones, log lines, and the container's changes (``changed``: their loads, and the
    stores and ``del`` of its items; not an item stored in another dict): ``stop``,
    reached with the stack as they found it, or the index a jump forward takes them
    to (``follow``: on from there); ``_RETURN`` where they return None; None where
    they do more (a call, a store, a ``return x``, ``raise``, ``break``)."""
    depth, n = 0, start
    while n < stop:
        i = ins[n]
        reporting = _reports(lines[_line(i)])
        if i.opname in EXITS or "JUMP" in i.opname:
            if returns_none(ins, n):
                return _RETURN
            target = at.get(i.argval) if "JUMP" in i.opname and \
                isinstance(i.argval, int) else None
            if reporting and target is not None and target > n and \
                    _line(ins[target]) == _line(i):   # print("a" if x else "b")
                n += 1
                continue
            if i.opname != "JUMP_FORWARD" or target is None or depth:
                return None
            if not follow:
                return target
            n = target
            continue
        if not (reporting or n in changed or i.opname in _PASSIVE):
            return None
        if not reporting:
            moved = effect(i)
            if moved is None:
                return None
            depth += moved
        n += 1
    return stop if depth == 0 and not follow else None


def _loads(ins, step) -> list:
    """The indexes in ``ins`` where the container ``step`` names is loaded (for a key,
    the instruction taking the item: ``d["seen"]``, ``d.get("seen")``)."""
    kind, name = step
    out = []
    for n, i in enumerate(ins):
        op = i.opname
        if kind == "attr" and op in ("LOAD_ATTR", "LOAD_METHOD") and i.argval == name or \
                kind == "name" and op in _NAME_LOADS and i.argval == name:
            out.append(n)
        elif kind == "key" and op == "LOAD_CONST" and type(i.argval) is type(name) and \
                i.argval == name and n + 1 < len(ins):
            after = ins[n + 1]
            if after.opname == "BINARY_SUBSCR" or after.opname == "BINARY_OP" and \
                    after.argrepr == "[]":
                out.append(n + 1)
            elif n and ins[n - 1].opname in ("LOAD_ATTR", "LOAD_METHOD") and \
                    ins[n - 1].argval == "get":
                call = next((m for m in range(n + 1, min(n + 4, len(ins)))
                             if ins[m].opname == "CALL"), None)
                if call is not None:
                    out.append(call)
    return out


def _changes(ins, step, loads) -> list:
    """The indexes of ``loads`` whose container the next instructions change in place
    (a method of ``chains._MUTATORS`` called, an item stored, deleted or changed by
    an augmented assignment), and those storing the name or attribute anew
    (``self.log += [x]``, ``self.log = []``)."""
    out = []
    for n in loads:
        j = n + 1
        if j >= len(ins):
            continue
        if ins[j].opname in ("LOAD_ATTR", "LOAD_METHOD") and ins[j].argval in _MUTATORS:
            out.append(n)
            continue
        if _subscript(ins, n, ("STORE_SUBSCR", "DELETE_SUBSCR", "COPY")) is not None:
            out.append(n)
    kind, name = step
    stores = ("STORE_ATTR", "DELETE_ATTR") if kind == "attr" else \
        _NAME_STORES if kind == "name" else ()
    out += [n for n, i in enumerate(ins) if i.opname in stores and i.argval == name]
    return sorted(out)


def _subscript(ins, n: int, ops=("STORE_SUBSCR", "DELETE_SUBSCR")):
    """The index of the instruction storing or deleting (``ops``) the item of the
    container loaded at ``n`` that a key loaded next names (``d[k] = v``, ``del
    d[k]``, ``d[Phase.A]``; ``COPY``: ``d[k] += 1``); None where there is none."""
    j = n + 1
    if j >= len(ins) or ins[j].opname not in _KEY_LOADS:
        return None
    j += 1
    while j < len(ins) and ins[j].opname == "LOAD_ATTR":   # d[Phase.A]
        j += 1
    return j if j < len(ins) and ins[j].opname in ops else None


def _tests(ins, loads, at) -> list:
    """``(jump, target)`` index pairs of the branches that the tests reading the loads
    ``loads`` skip: a conditional jump forward the loaded value reaches through a
    few calls and comparisons (``not``, ``in``, ``len(...) == 0``, ``.get(k)``)."""
    out = []
    for n in loads:
        for j in range(n + 1, min(n + 12, len(ins))):
            i = ins[j]
            if "JUMP" in i.opname and "IF" in i.opname:
                if isinstance(i.argval, int) and i.argval > i.offset and i.argval in at:
                    out.append((j, at[i.argval]))
                break
            if i.opname not in _TESTING or \
                    i.opname in ("LOAD_ATTR", "LOAD_METHOD") and i.argval in _MUTATORS:
                break
    return out

"""What code hands to ``s.host`` off a container, and what it uses otherwise:
``s.host(TABLE["log"], h)`` beside ``TABLE["sgd"](s, w)``, ``for cb in CBS:
s.host(cb, h)`` beside ``for fn in OPS: fn(s, w)``, ``cb = self.hooks["log"]``.

A callable handed to ``s.host`` is a host callback: it reads what it reads when
it runs, and what it changes is its state, not a setting the cache key watches.
A callable the graph's own code calls (or hands anywhere else) runs when traced:
what it reads is baked in and watched. So the watching (``reach.py`` for the
containers names hold, ``holding.py`` for those ``self`` holds, ``object_keys``
for an argument's) asks, per container, which of its items are callbacks alone
(``Hand.callback``): those handed to ``s.host`` that the code uses no other way.

``hands`` finds, per source (a name and the attributes read off it:
``("TABLE", ())``, ``("self", ("hooks",))``), the items handed to ``s.host``
and those used otherwise, by a constant key (``TABLE["log"]``, ``.get("log")``)
or all of them (a loop over it, ``.values()``, ``.items()``). It follows values
through locals (``cb = TABLE["log"]``, loop variables) by the stores that may
reach each load (a variable reused by two loops takes each loop's own), into
comprehensions and the functions nested in the code (those handed to ``s.host``
use what they use as callbacks). Where it cannot tell, an item is used: the
watching then takes it for one the graph calls (it watches more, never less).
"""
from __future__ import annotations

import dis
import types
import weakref

from .bytecode import CALLS, past_inlined
from .chains import NAME_LOADS, _through_partial, callback_codes

__all__ = ["ALL", "Hand", "hands", "merged"]

ALL = ("every item",)      # a key: every item of the container (a loop over it)
WHOLE = ("the container",)   # a key: the container itself (s.host(FN, h) of FN)
_CONTAINER = ("itself",)   # a value's path: the container itself, not an item of it

# calls that read nothing of a container's items: len(CBS), isinstance(CBS, list)
_HARMLESS_CALLS = frozenset({"len", "isinstance", "id", "type", "bool", "callable"})
# calls whose result iterates the container's items: enumerate(CBS) (index, item)
_ITERATORS = frozenset({"enumerate", "reversed", "iter", "list", "tuple", "sorted"})
_TESTS = ("POP_JUMP", "JUMP_IF", "COMPARE_OP", "CONTAINS_OP", "IS_OP", "TO_BOOL")
_ATTRS = ("LOAD_ATTR", "LOAD_METHOD")
_CALLS = ("PRECALL", "CALL", "KW_NAMES", "PUSH_NULL")
_STORES = ("STORE_FAST", "STORE_DEREF")
_UNCONDITIONAL = ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP",
                  "JUMP_NO_INTERRUPT", "JUMP_ABSOLUTE", "RETURN_VALUE", "RETURN_CONST",
                  "RAISE_VARARGS", "RERAISE")


class Hand:
    """What code does with the items of one container: ``hosted``, the keys of those
    it hands to ``s.host`` (``ALL``: every item; ``WHOLE``: the container itself);
    ``used``, those it uses otherwise (``ALL`` where it cannot tell which; with
    ``WHOLE`` where it uses the container itself)."""

    __slots__ = ("hosted", "used")

    def __init__(self, hosted=frozenset(), used=frozenset()):
        self.hosted, self.used = frozenset(hosted), frozenset(used)

    @property
    def escapes(self) -> bool:
        """Whether the code uses the value itself otherwise than by its items and
        attributes: hands it to a call (``sgd(OPT, s, w)``), stores it."""
        return WHOLE in self.used

    @property
    def whole_callback(self) -> bool:
        """Whether the code only hands the value itself to ``s.host`` (``s.host(self.fn,
        h)``: a callback)."""
        return WHOLE in self.hosted and not self.used

    @property
    def callbacks_alone(self) -> bool:
        """Whether the code only hands the container's items to ``s.host``."""
        return bool(self.hosted) and not self.used

    def callback(self, key) -> bool:
        """Whether the item of ``key`` is a callback alone: handed to ``s.host``,
        used no other way."""
        if not self.hosted or ALL in self.used:
            return False
        return (key in self.hosted or ALL in self.hosted) and key not in self.used

    def __repr__(self):
        return f"Hand(hosted={set(self.hosted)}, used={set(self.used)})"


def merged(a, b: Hand) -> Hand:
    """What two codes (``a`` None: none) do with one container's items, together."""
    return b if a is None else Hand(a.hosted | b.hosted, a.used | b.used)


_HANDS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def hands(code) -> dict:
    """``(head, attributes)`` -> ``Hand`` for each container ``code`` (and the code
    nested in it) hands items of to ``s.host``, or takes items of; found once per
    code object."""
    hit = _HANDS.get(code)
    if hit is None:
        found: dict = {}
        _Code(code, found, {}, {}, False).run()
        hit = _HANDS[code] = {src: Hand(h, u) for src, (h, u) in found.items()}
    return hit


class _Code:
    """The walk of one code object: the values its loads take off the sources
    (``(source, path)``), the locals they are stored in, and what each is used for
    (``found``: source -> (hosted keys, used keys))."""

    def __init__(self, code, found: dict, cells: dict, given: dict, hosted: bool):
        self.code, self.found, self.hosted = code, found, hosted
        self.cells = cells   # a cell of the code around it -> the values stored there
        self.given = given   # a parameter -> the values it is handed (.0 of a comprehension)
        self.ins = [i for i in dis.get_instructions(code)
                    if i.opname not in ("CACHE", "EXTENDED_ARG", "NOP")]
        self.defs: list = []   # (index, local, value or None)
        self.uses: list = []   # (index, local, what is done: a function of a value)
        self.comprehensions: dict = {}   # nested code -> {".0": values}
        self.live = callback_codes(code)
        self.parts = _partial_parts(self.ins)

    def run(self) -> None:
        c, ins = self.code, self.ins
        params = c.co_varnames[:c.co_argcount + c.co_kwonlyargcount +
                                bool(c.co_flags & 4) + bool(c.co_flags & 8)]
        self.locals = set(c.co_varnames) | set(c.co_cellvars)
        self.params = set(params)
        i = 0
        while i < len(ins):
            i = max(i + 1, self._load(i) if self._is_load(ins[i]) else self._store(i))
        reach = self._reaching()
        memo: dict = {}
        for at, local, act in self.uses:
            for value in self._values(local, at, reach, memo, set()):
                act(value)
        cells = dict(self.cells)
        for name in c.co_cellvars:   # what a nested function's closure cells may hold
            cells[name] = [v for n, (_, local, _) in enumerate(self.defs) if local == name
                           for v in self._def_values(n, reach, memo, set())] + \
                ([(name, (), _CONTAINER)] if name in self.params else [])
        for k in c.co_consts:
            if isinstance(k, types.CodeType):
                _Code(k, self.found, cells, self.comprehensions.get(k, {}),
                      self.hosted or k in self.live).run()

    def _is_load(self, i) -> bool:
        op = i.opname
        return op in NAME_LOADS or op.startswith("LOAD_FAST") and op != "LOAD_FAST_AND_CLEAR"

    def _store(self, i: int) -> int:
        ins = self.ins[i]
        if ins.opname == "STORE_FAST_LOAD_FAST":   # (3.13) a store, then a load: used
            self.defs.append((i, ins.argval[0], None))
            self._use(i, ins.argval[1], True, (), _CONTAINER, self._used)
        elif ins.opname in _STORES or ins.opname.startswith("STORE_FAST") or \
                ins.opname in ("DELETE_FAST", "DELETE_DEREF"):
            for name in ins.argval if isinstance(ins.argval, tuple) else (ins.argval,):
                self.defs.append((i, name, None))   # a value of no source
        return i + 1

    def _load(self, i: int) -> int:
        """Read the value loaded at ``i``, its attributes and item, and what is done
        with it; the index of the instruction after."""
        ins, at = self.ins, self.ins[i]
        names = at.argval if isinstance(at.argval, tuple) else (at.argval,)
        local = at.opname.startswith("LOAD_FAST") or at.opname == "LOAD_DEREF" and (
            at.argval in self.code.co_cellvars or at.argval in self.cells)
        if len(names) > 1:   # LOAD_FAST_LOAD_FAST: each used some way
            for name in names:
                self._use(i, name, local, (), None, self._used)
            return i + 1
        name, j, attrs = names[0], i + 1, []
        # called, not handed: s.host(make(h)) hands what make returns (a NULL pushed
        # before the callee, or a method loaded to be called)
        called = i > 0 and ins[i - 1].opname == "PUSH_NULL" or "NULL" in at.argrepr
        while j < len(ins) and ins[j].opname in _ATTRS and \
                ins[j].argval not in ("values", "items", "keys", "get"):
            attrs.append(ins[j].argval)
            called = ins[j].opname == "LOAD_METHOD" or "NULL" in ins[j].argrepr
            j += 1
        key, items = None, False
        if j + 1 < len(ins) and ins[j].opname == "LOAD_CONST" and \
                ins[j + 1].opname == "BINARY_SUBSCR":
            key, j = _key(ins[j].argval), j + 2
        elif j + 1 < len(ins) and ins[j].opname in _ATTRS and ins[j].argval == "get" and \
                ins[j + 1].opname == "LOAD_CONST":   # TABLE.get("log")
            key, j = _key(ins[j + 1].argval), _after_call(ins, j + 2)
        elif j < len(ins) and ins[j].opname in _ATTRS and ins[j].argval in ("values", "items"):
            items, j = ins[j].argval == "items", _after_call(ins, j + 1)
            key = ALL
        elif j < len(ins) and ins[j].opname in _ATTRS and ins[j].argval == "keys":
            return j + 1   # the keys alone
        path = key if key is not None else _CONTAINER
        if (self._host_arg(i) or i in self.parts) and not called or self.hosted:
            if not (j < len(ins) and ins[j].opname.startswith(_TESTS)):
                self._use(i, name, local, attrs, path, self._hosted)
            return j
        if j < len(ins) and ins[j].opname.startswith(_TESTS):
            return j   # if CBS:, "log" in TABLE, fn is None
        before = ins[i - 1] if i and ins[i - 1].opname != "PUSH_NULL" else \
            ins[i - 2] if i > 1 else None
        call = before is not None and before.opname in NAME_LOADS and j < len(ins) and \
            ins[j].opname in _CALLS
        if call and before.argval in _HARMLESS_CALLS:
            return j
        if call and before.argval in _ITERATORS:   # enumerate(CBS): (index, item)
            first = before.argval == "enumerate"
            path, j, items = ALL, _after_call(ins, j), first
        if j < len(ins) and ins[j].opname in ("GET_ITER", "FOR_ITER"):
            # (a comprehension's .0; 3.12: one inlined, past the names it saves)
            loop = j if ins[j].opname == "FOR_ITER" else past_inlined(ins, j + 1)
            if loop < len(ins) and ins[loop].opname == "FOR_ITER":
                stores, j = _loop_stores(ins, loop + 1)
                for n, (k, target) in enumerate(stores):
                    if items and n == 0 and len(stores) == 2:   # the key, the index
                        self.defs.append((k, target, None))
                    else:
                        self._define(k, target, name, local, attrs, ALL)
                return j
            if i > 1 and ins[i - 1].opname == "MAKE_FUNCTION" and \
                    isinstance(ins[i - 2].argval, types.CodeType):   # [f(x) for x in OPS]
                self._use(i, name, local, attrs, ALL,
                          lambda v, c=ins[i - 2].argval: self.comprehensions.setdefault(
                              c, {}).setdefault(".0", []).append(v))
                return j + 1
        if j < len(ins) and ins[j].opname in _STORES and not items:   # cb = TABLE["log"]
            self._define(j, ins[j].argval, name, local, attrs, path)
            return j + 1
        self._use(i, name, local, attrs, path, self._used)
        return j

    def _host_arg(self, i: int) -> bool:
        """Whether the load at ``i`` begins the callback handed to ``.host(...)``
        (also through ``partial``)."""
        k = i - 1
        while k >= 0 and (self.ins[k].opname == "PUSH_NULL" or _through_partial(self.ins[k])):
            k -= 1
        return k >= 0 and self.ins[k].opname in _ATTRS and self.ins[k].argval == "host"

    def _define(self, at: int, target: str, name, local: bool, attrs, path) -> None:
        self.defs.append((at, target, (name, local, tuple(attrs), path)))

    def _use(self, at, name, local: bool, attrs, path, act) -> None:
        """Apply ``act`` to the value(s) the load of ``name`` at ``at`` takes."""
        if local:
            self.uses.append((at, name, lambda v: act(_extend(v, attrs, path))))
        else:
            act((name, tuple(attrs), path))

    def _hosted(self, v) -> None:
        src, path = (v[0], v[1]), v[2]
        self.found.setdefault(src, (set(), set()))[0].add(WHOLE if path is _CONTAINER else path)
        self._parent(v)

    def _used(self, v) -> None:
        src, path = (v[0], v[1]), v[2]
        used = self.found.setdefault(src, (set(), set()))[1]
        used.add(ALL if path is _CONTAINER else path)
        if path is _CONTAINER:   # the value itself: handed to a call (sgd(OPT, s, w))
            used.add(WHOLE)
        self._parent(v)

    def _parent(self, v) -> None:
        """An attribute read off a container is one of its methods, maybe, that takes
        an item (``TABLE.pop("sgd")(s, w)``, ``self.hooks.copy()``): each item used."""
        if v[1] and v[2] is _CONTAINER:
            self.found.setdefault((v[0], v[1][:-1]), (set(), set()))[1].add(ALL)

    def _values(self, local: str, at: int, reach, memo: dict, busy: set) -> list:
        """The values ``(head, attributes, path)`` local ``local`` may hold when loaded
        at ``at``: those the stores reaching there put in it (a parameter or a cell
        of the code around: what it holds from there)."""
        key = (local, at)
        if key in memo:
            return memo[key]
        if key in busy:
            return []
        busy.add(key)
        out = []
        for d in reach(local, at):
            if d is None:   # the value it enters the code with
                out += self.given.get(local) or self.cells.get(local) or (
                    [(local, (), _CONTAINER)] if local in self.params or
                    local not in self.locals else [])
            else:
                out += self._def_values(d, reach, memo, busy)
        busy.discard(key)
        memo[key] = out
        return out

    def _def_values(self, d: int, reach, memo: dict, busy: set) -> list:
        """The values store number ``d`` may put in its local."""
        at, _, value = self.defs[d]
        if value is None:
            return []
        name, is_local, attrs, path = value
        bases = self._values(name, at, reach, memo, busy) if is_local \
            else [(name, (), _CONTAINER)]
        return [_extend(b, attrs, path) for b in bases]

    def _reaching(self):
        """A function ``(local, index) -> [def numbers, None for the entry]`` of the
        stores that may reach a load: by the flow between the code's blocks; every
        store of it where the code handles exceptions (a try or with block)."""
        ins, defs = self.ins, self.defs
        by_local: dict = {}
        for n, (_, local, _) in enumerate(defs):
            by_local.setdefault(local, []).append(n)
        if getattr(self.code, "co_exceptiontable", b""):
            return lambda local, at: [None] + by_local.get(local, [])
        offsets = {x.offset: k for k, x in enumerate(ins)}
        starts = {0}
        for k, x in enumerate(ins):
            if x.opcode in dis.hasjrel or x.opcode in dis.hasjabs:
                if x.argval in offsets:
                    starts.add(offsets[x.argval])
                starts.add(k + 1)
            elif x.opname in _UNCONDITIONAL:
                starts.add(k + 1)
        starts = sorted(s for s in starts if s < len(ins))
        block_of = {}
        for b, s in enumerate(starts):
            end = starts[b + 1] if b + 1 < len(starts) else len(ins)
            for k in range(s, end):
                block_of[k] = b
        succ: dict = {b: set() for b in range(len(starts))}
        for b, s in enumerate(starts):
            last = (starts[b + 1] if b + 1 < len(starts) else len(ins)) - 1
            x = ins[last]
            if (x.opcode in dis.hasjrel or x.opcode in dis.hasjabs) and x.argval in offsets:
                succ[b].add(block_of[offsets[x.argval]])
            if x.opname not in _UNCONDITIONAL and b + 1 < len(starts):
                succ[b].add(b + 1)
        gen: dict = {}   # block -> local -> its last def there
        for n, (at, local, _) in enumerate(defs):
            gen.setdefault(block_of[at], {})[local] = n
        into = {b: {} for b in succ}   # block -> local -> defs reaching its start
        into[0] = {local: {None} for local in by_local}
        changed = True
        while changed:
            changed = False
            for b in succ:
                out = {local: set(ds) for local, ds in into[b].items()}
                for local, n in gen.get(b, {}).items():
                    out[local] = {n}
                for t in succ[b]:
                    for local, ds in out.items():
                        have = into[t].setdefault(local, set())
                        if not ds <= have:
                            have |= ds
                            changed = True

        def reach(local, at):
            b = block_of.get(at, 0)
            last = None
            for n, (k, name, _) in enumerate(defs):
                if name == local and block_of[k] == b and k < at:
                    last = n
            return [last] if last is not None else sorted(
                into[b].get(local, {None}), key=lambda d: -1 if d is None else d)
        return reach


def _partial_parts(ins: list) -> set:
    """The indices of the instructions that load what a ``partial`` handed to
    ``.host(...)`` binds (``s.host(partial(Sink.notify, SINK), h)``: SINK too is
    the callback's), up to the partial's call (one nested call in its arguments
    ends them: what follows is taken for a use of the graph's)."""
    out = set()
    for k, x in enumerate(ins):
        if not (x.opname in _ATTRS and x.argval == "host"):
            continue
        j = k + 1
        while j < len(ins) and ins[j].opname == "PUSH_NULL":
            j += 1
        if j >= len(ins) or not _through_partial(ins[j]):
            continue
        while j < len(ins) and (_through_partial(ins[j]) or ins[j].opname == "PUSH_NULL"):
            j += 1
        while j < len(ins) and ins[j].opname not in CALLS:   # (partial(f, k=SINK): CALL_KW
            out.add(j)                                          # on 3.13)
            j += 1
    return out


def _extend(v, attrs, path):
    """The value ``v`` (a local's) with ``attrs`` read off it and then ``path``."""
    head, steps, at = v
    if at is _CONTAINER:
        return head, steps + tuple(attrs), path
    return head, steps, at   # (an attribute or item of an item: that item, used)


def _key(k):
    """A constant key, as the walk names the item (hashable, or ALL)."""
    try:
        hash(k)
    except TypeError:
        return ALL
    return k


def _after_call(ins: list, j: int) -> int:
    """The index after the call whose arguments begin at ``j``."""
    while j < len(ins) and ins[j].opname != "CALL":
        if ins[j].opname not in _CALLS and ins[j].opname != "LOAD_CONST":
            return j
        j += 1
    return j + 1


def _loop_stores(ins: list, j: int) -> tuple:
    """``([(index, local)], next index)`` of the locals a loop's ``FOR_ITER`` stores
    its items in at ``j`` (``for k, cb in TABLE.items()``: both)."""
    if j < len(ins) and ins[j].opname == "UNPACK_SEQUENCE":
        n, j = ins[j].argval, j + 1
        stores = [(j + k, ins[j + k].argval) for k in range(n)
                  if j + k < len(ins) and ins[j + k].opname in _STORES]
        return stores, j + len(stores)
    if j < len(ins) and ins[j].opname in _STORES:
        return [(j, ins[j].argval)], j + 1
    return [], j

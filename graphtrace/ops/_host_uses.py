"""What a host callback's code does with the values it loads, for ``host.py``'s
refusal of device memory a callback uses: the load paths (``self.sink.d``,
``G.out``, ``held[0]``) it reads off, indexes or hands to a call, as opposed to
those it only moves, compares or sizes (``len(d)``, ``d.shape``), and whether
one of them reaches what a label names (``_uses``; ``_reaches_by``: a value
held at steps past it, a temporary its object holds)."""
from __future__ import annotations

import ast
import dis
import re
import types

from ..bytecode import CALLS, past_inlined, past_keywords


def _uses(label: str, used: frozenset, item: bool = False, keys=None) -> bool:
    """Whether a load path in ``used`` (``_used_in``) reaches what ``label`` (as
    ``_names_of`` gives it) names: the very global or closure name and attributes
    (``G.out``), or, through another value than a global (``self``, a parameter),
    the attributes it ends in (``self.out`` for ``attribute 'out'``); ``item``:
    an item of it (``G.out[0]``) by a key among ``keys`` (None: any) or one the code
    computes."""
    if label.startswith("item ") and " of " not in label:
        return _uses_own_item(label[len("item "):], used)
    used = {_item_path(p, keys) if item else p for p in used}
    root = label.split(" of ")[-1]
    kind = "global" if root.startswith("global name") else \
        "closure" if root.startswith("closure name") else None
    names = tuple(w for part in reversed(label.split(" of "))
                  for q in re.findall(r"'([^' ]*)'", part) for w in re.findall(r"\w+", q))
    names += ("[]",) if item else ()
    tail = names[1:] if kind else names
    return any(kind and (k, head, *attrs) == (kind, *names) or
               k != "global" and 0 < len(attrs) <= len(tail) and attrs[0] != "[]" and
               tuple(attrs) == tail[len(tail) - len(attrs):] for k, head, *attrs in used)


def _uses_own_item(key: str, used: frozenset) -> bool:
    """Whether a load path in ``used`` reads an item of a method's own object (a list,
    tuple or dict of a class of the program's own: ``self[0].copy_to_host()``,
    ``for d in self``) by the key ``key`` (its ``repr``; a list's or tuple's also
    from its end: ``0 (or -2)``) or one the code computes."""
    both = re.fullmatch(r"(-?\d+) \(or (-?\d+)\)", key)
    try:
        keys = {int(both[1]), int(both[2])} if both else {ast.literal_eval(key)}
    except (ValueError, SyntaxError, TypeError):
        keys = None
    return any(p[0] == "local" and p[1] in _SELVES and len(p) > 3 and p[2] == "[]" and
               (p[3] is _ANY_KEY or keys is None or _key_in(p[3], keys)) for p in used)


def _key_in(key, keys: set) -> bool:
    try:
        return key in keys
    except TypeError:   # (an unhashable constant)
        return False


SELF = "self"   # a method's own object, as ``_used`` names its first parameter
_SELVES = (SELF, "cls")   # (and as other code names it)


def as_method(code, paths) -> set:
    """The load paths ``paths`` of a method's ``code`` with those off its first
    parameter named as off ``self`` (``def dump(me): me[-1].copy_to_host()``)."""
    first = code.co_varnames[0] if code.co_argcount else None
    return {("local", SELF, *p[2:]) if p[0] == "local" and p[1] == first else p
            for p in paths}


def method_codes(classes) -> set:
    """The code of the methods (classmethods too) ``classes`` and their bases define,
    whose first parameter is the object (or class) they are called on."""
    out = set()
    for k in {b for c in classes if isinstance(c, type) for b in c.__mro__} - {object}:
        for v in vars(k).values():
            v = v.__func__ if isinstance(v, classmethod) else v
            if isinstance(v, types.FunctionType):
                out.add(v.__code__)
    return out


def _reaches_by(name: str, steps: tuple, used: frozenset) -> bool:
    """Whether code using the load paths ``used`` reaches what ``name`` holds at
    ``steps`` (``held_temporaries``'): the item of the first container on the
    way, or the attributes past the last one (all of them where there is none)."""
    items = [i for i, (how, _) in enumerate(steps) if how == "item"]
    label = name
    for how, k in steps[:items[0] if items else len(steps)]:
        label = f"attribute {k!r} of {label}"
    if not items:
        return _uses(label, used)
    if _uses(label, used, item=True, keys=steps[items[0]][1]):
        return True
    tail = [k for _, k in steps[items[-1] + 1:]]
    return bool(tail) and _uses(" of ".join(f"attribute {k!r}" for k in reversed(tail)), used)


def _item_path(path: tuple, keys) -> tuple:
    """A load path of an item (``(..., "[]", key)``) as ``_uses`` compares it:
    without its key, or unmatched (``"[]?"``) where its constant key holds no
    device array."""
    if len(path) < 2 or path[-2] != "[]":
        return path
    key = path[-1]
    return (*path[:-1],) if keys is None or key is _ANY_KEY or key in keys else \
        (*path[:-2], "[]?")


_ANY_KEY = object()   # an item read by a key the code computes (held[i])


def _used_in(code, given=None) -> set:
    """The load paths ``code`` reads off (not the geometry: ``d.shape``), indexes or
    hands to a call: ``(kind, name, *attributes)``, kind ``"global"``, ``"closure"``
    (a free name), ``"local"`` or None (``f().d``); ending in ``"[]"`` and the key
    where it so uses an item of it at once (``held[0].copy_to_host()``,
    ``cb(box["d"])``). A local set from a load path stands for it
    (``out = self.out`` then ``out.copy_to_host()``: ``self.out``), and a loop's
    variable for an item of what it runs over (``for d in self.bufs: d.sum()``, also
    through such a local: ``bufs = self.bufs`` then ``for d in bufs``),
    a comprehension's too (``[d.sum() for d in self.bufs]``: ``_nested``).
    ``given``: the load paths a local of ``code`` stands for from the start (a
    comprehension's iterator, ``.0``, or a lambda's parameter)."""
    ins = [i for i in dis.get_instructions(code) if i.opname not in ("CACHE", "NOP")]
    out, aliases, given = set(), {}, given or {}

    def paths(k: int) -> list:
        return [(*g, *p[2:]) if p[0] == "local" and p[1] in given else p
                for p in _paths(code, ins, k) for g in given.get(p[1], (p,))]
    for k, i in enumerate(ins):
        if i.opname in _NAME_LOADS and k + 1 < len(ins) and ins[k + 1].opname == "STORE_FAST":
            aliases.setdefault(ins[k + 1].argval, []).extend(paths(k))
        for loop in _loop_variables(ins, k) if i.opname in _NAME_LOADS else ():
            aliases.setdefault(loop, []).extend(
                (*p, "[]", _ANY_KEY) for p in _through(paths(k), aliases))
        if i.opname in _NAME_LOADS and _use(ins[k + 1:k + 12]) and not _host_side(ins, k):
            out.update(paths(k))
        if i.opname in _NAME_LOADS and _item_use(ins, k):
            key = ins[k + 1].argval if ins[k + 1].opname in ("LOAD_CONST", "LOAD_SMALL_INT") \
                else _ANY_KEY
            out.update((*p, "[]", key) for p in paths(k))
        if i.opname in _NAME_LOADS:
            out.update(_nested(code, ins, k, paths))
    return out | {(*a, *p[2:]) for p in out if p[0] == "local"
                  for a in aliases.get(p[1], ()) if a[0] is not None}


def _through(paths: list, aliases: dict) -> list:
    """``paths`` and, for those off a local set from a load path before, the same off
    that path (``bufs[]`` and ``self.bufs[]`` after ``bufs = self.bufs``)."""
    return paths + [(*a, *p[2:]) for p in paths if p[0] == "local"
                    for a in aliases.get(p[1], ()) if a[0] is not None]


def _loop_variables(ins, k: int) -> tuple:
    """The names a loop over the value ``ins[k]`` loads binds each item to
    (``for d in self.bufs``; 3.12: a comprehension inlined, past its prologue; one
    of its own code runs over its iterator, ``.0``, at once): all those a target
    unpacks, each standing for a possible item, where the loop runs over it through
    ``enumerate``, ``zip``, ``.items()`` or ``.values()`` (``for i, d in
    enumerate(self.bufs)``)."""
    j = _iterated(ins, k)[1]
    if j < len(ins) and ins[j].opname == "GET_ITER":
        j = past_inlined(ins, j + 1)
    if j + 1 >= len(ins) or ins[j].opname != "FOR_ITER":
        return ()
    if ins[j + 1].opname == "STORE_FAST":
        return (ins[j + 1].argval,)
    stores = ins[j + 2:j + 2 + ins[j + 1].arg] if ins[j + 1].opname == "UNPACK_SEQUENCE" \
        else ()
    return tuple(s.argval for s in stores if s.opname == "STORE_FAST")


def _iterated(ins, k: int) -> tuple:
    """The indices of the first instruction of the expression whose items stand for
    items of the value ``ins[k]`` loads, and of the one just past it: that value
    itself, its ``.items()`` or ``.values()`` (``self.table.items()``), or a call of
    ``enumerate`` or ``zip`` it is an argument of (``zip(self.keys, self.bufs)``)."""
    start = k
    while start > 0 and ins[start].opname in ("LOAD_ATTR", "LOAD_METHOD"):
        start -= 1
    j = k + 1
    if j < len(ins) and ins[j].opname in ("LOAD_ATTR", "LOAD_METHOD") and \
            ins[j].argval in _ITEM_VIEWS:
        return start, _past_call(ins, j + 1, 0)
    if j < len(ins) and ins[j].opname in ("LOAD_ATTR", "LOAD_METHOD"):
        return start, j   # (only a part of the value's path: self of self.bufs)
    while j < len(ins) and ins[j].opname in _ARGUMENTS:
        j += 1
    p = start - 1
    while p >= 0 and ins[p].opname in _ARGUMENTS and not _pairing(ins[p]):
        p -= 1
    if p < 0 or not _pairing(ins[p]):
        return start, k + 1
    n = sum(1 for q in ins[p + 1:j] if q.opname not in ("LOAD_ATTR", "LOAD_METHOD"))
    past = _past_call(ins, j, n)
    return (p, past) if past != j else (start, k + 1)


def _past_call(ins, j: int, n: int) -> int:
    """The index past a call of ``n`` arguments beginning at ``ins[j]`` (3.11: its
    ``PRECALL``), or ``j`` where none begins there."""
    at = j + (j < len(ins) and ins[j].opname == "PRECALL")
    return at + 1 if at < len(ins) and ins[at].opname == "CALL" and ins[at].arg == n else j


def _pairing(i) -> bool:
    return i.opname in ("LOAD_GLOBAL", "LOAD_NAME") and i.argval in _PAIRINGS


_ITEM_VIEWS = frozenset({"items", "values"})   # self.table.items(): (key, item) pairs
_PAIRINGS = frozenset({"enumerate", "zip"})    # enumerate(self.bufs): (i, item) pairs
_ARGUMENTS = ("LOAD_FAST", "LOAD_DEREF", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_ATTR",
              "LOAD_METHOD", "LOAD_CONST", "LOAD_SMALL_INT", "LOAD_FAST_CHECK")


def _nested(code, ins, k: int, paths) -> set:
    """The load paths the code of a comprehension (3.11; 3.12: a generator
    expression) or of a lambda ``map`` or ``filter`` runs on the items of the value
    ``ins[k]`` loads uses through them (``[d.sum() for d in self.bufs]``,
    ``map(lambda d: d.sum(), self.bufs)``): its code, made just before that value's
    load, called with its iterator (``.0``) or handed it with that value."""
    start, end = _iterated(ins, k)
    if start < 2 or ins[start - 1].opname != "MAKE_FUNCTION" or \
            not isinstance(ins[start - 2].argval, types.CodeType):
        return set()
    inner, after = ins[start - 2].argval, ins[end:end + 2]
    if after and after[0].opname == "GET_ITER" and len(after) == 2 and \
            after[1].opname in CALLS and after[1].arg == 0 and ".0" in inner.co_varnames:
        return _used_in(inner, {".0": paths(k)})
    callee = ins[start - 3] if start > 2 else None
    if callee is not None and callee.opname in ("LOAD_GLOBAL", "LOAD_NAME") and \
            callee.argval in _ITEM_CALLS and inner.co_argcount == 1 and \
            k + 1 < len(ins) and ins[k + 1].opname in CALLS and ins[k + 1].arg == 2:
        return _used_in(inner, {inner.co_varnames[0]: [(*p, "[]", _ANY_KEY)
                                                        for p in paths(k)]})
    return set()


_ITEM_CALLS = frozenset({"map", "filter"})   # map(lambda d: ..., held): an item of held


def _host_side(ins, k, last=None) -> bool:
    """Whether the value instruction ``k`` leaves (its item, where ``last``, the
    index of the ``BINARY_SUBSCR``, is given: ``len(self[0])``) is the first argument
    of a call that reads no device memory: a builtin answering from the host side
    (``len(self.d)``, ``isinstance(held[0], X)``, ``getattr(held[0], "shape")``)."""
    start = k
    while start > 0 and ins[start].opname in ("LOAD_ATTR", "LOAD_METHOD"):
        start -= 1
    callee = ins[start - 1] if start else None
    if callee is None or callee.opname not in ("LOAD_GLOBAL", "LOAD_NAME") or \
            callee.argval not in _HOST_SIDE:
        return False
    j, n = (k if last is None else last) + 1, 1
    if callee.argval in _SECOND_ARGUMENT:   # isinstance(d, np.ndarray), hasattr(d, "x")
        at = j
        while j < len(ins) and ins[j].opname in _ARGUMENTS:
            j += 1
        n = 2
        if j == at or callee.argval == "getattr" and (
                j != at + 1 or ins[at].argval not in _GEOMETRY):
            return False
    call = ins[j:j + 2]
    one = [c for c in call if c.opname in ("PRECALL", "CALL")]
    return bool(one) and one[0] is call[0] and one[0].arg == n


_HOST_SIDE = frozenset({"len", "id", "type", "isinstance", "hasattr", "getattr"})
_SECOND_ARGUMENT = frozenset({"isinstance", "hasattr", "getattr"})   # (getattr: _GEOMETRY)
#   (a method, such as an append, may be the program's own, reading what it is handed)


def _item_use(ins, k: int) -> bool:
    """Whether the value ``ins[k]`` loads is indexed by a constant or a name and the
    item read off, indexed or handed to a call straight away (also by a keyword:
    ``show(x=held[0])``, whose names come between the item and the call)."""
    if k + 3 >= len(ins) or not ins[k + 1].opname.startswith("LOAD_") or \
            ins[k + 2].opname != "BINARY_SUBSCR" or _host_side(ins, k, k + 2):
        return False
    nxt = ins[min(past_keywords(ins, k + 3), len(ins) - 1)]
    return nxt.opname in ("LOAD_ATTR", "LOAD_METHOD") and nxt.argval not in _GEOMETRY or \
        nxt.opname == "BINARY_SUBSCR" or nxt.opname in CALLS


def _paths(code, ins, k) -> list:
    """The load paths of the value instruction ``k`` leaves (``self.sink.d``)."""
    attrs: tuple = ()
    while k >= 0 and ins[k].opname in ("LOAD_ATTR", "LOAD_METHOD"):
        attrs, k = (ins[k].argval, *attrs), k - 1
    head = ins[k] if k >= 0 else None
    if head is None or head.opname not in _NAME_LOADS:
        return [(None, None, *attrs)]
    kind = "global" if head.opname in ("LOAD_GLOBAL", "LOAD_NAME") else "closure" if \
        head.opname in ("LOAD_DEREF", "LOAD_CLASSDEREF") and head.argval in code.co_freevars \
        else "local"
    names = head.argval if isinstance(head.argval, tuple) else (head.argval,)
    return [(kind, n, *attrs) for n in (names[-1:] if attrs else names)]


def _use(after) -> bool:
    if after and after[0].opname in ("LOAD_ATTR", "LOAD_METHOD"):
        return after[0].argval not in _GEOMETRY   # d.shape reads no device memory
    if after and after[0].opname in ("BINARY_SUBSCR", "BINARY_SLICE"):
        return True
    for op in after:
        if op.opname in CALLS:   # (CALL_KW: 3.13's call with keywords)
            return True
        if op.opname.startswith(_MOVES):
            return False
    return False


_GEOMETRY = frozenset({"shape", "dtype", "size", "ndim", "strides", "itemsize", "nbytes"})
_NAME_LOADS = ("LOAD_FAST", "LOAD_DEREF", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_ATTR",
               "LOAD_METHOD", "LOAD_FAST_LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_CLASSDEREF")
_MOVES = ("STORE", "DELETE", "IS_OP", "COMPARE_OP", "CONTAINS_OP", "POP_JUMP", "JUMP",
          "RETURN", "POP_TOP", "SWAP", "ROT", "YIELD")

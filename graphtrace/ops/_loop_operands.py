"""What the values an instruction takes off the stack read, for ``_loop_code.py``.

``_read_by`` walks back from an instruction over the code computing the values
it takes (``_loop_stack.py``) and tells the slots, by their path
(``_loop_paths.py``), those loads read: names the body stored before count for
what they were computed from (``made``), not for themselves. On it stand what
the arguments of a call read, by the parameter each fills (``_arguments``,
``_parameters``; ``_handed_on``: but those a clamp such as ``min(k, 3)``
computes), what a for loop's iterable reads (``_iterated``), how many values
a call takes (``_taken``), whether a store's value settles (``_settles``:
``blocks = min(blocks, 1)``), and what the names a store sets were computed
from (``_made``). ``_Region`` notes each instruction of a body so.
"""
from __future__ import annotations

import sys

from ..bytecode import keyword_names
from ._loop_paths import _WHOLE
from ._loop_stack import (_ANY_KEY, _ATTR_LOADS, _CONSTS, _JUMPS, _LOADS, _begin, _chain,
                          _copy, _holder, _item_read, _reads_item, _swapped, _unpacked)

_CALLS = {"PRECALL": 0, "CALL": 0, "CALL_KW": 1}   # -> values beyond the arguments


def _read_by(code_ins: list, i: int, values: int, stored: set, made: dict) -> set:
    """The slots (paths: ``("k",)``, ``("st", (".", "k"))``, ``("idx", ("[]", 0))``)
    loaded to compute the ``values`` values the instruction ``code_ins[i]`` takes
    off the stack, not counting names the body stored before (for those, what
    they were computed from). A slot reached through something the code does not
    name from a name (``objs[i].k``, or a name the body set) is ``("*", step)``;
    one taken whole, not only for an item or attribute of it (``b.zeros(shape)``,
    ``slice(*lims)``), is also its path with ``_WHOLE`` after it."""
    out: set = set()
    keyed: set = set()   # st[k]: what its class's __getitem__ reads (in made)
    via: dict = {}   # a name the body set to another's object -> what its reads read
    start, beyond = _begin(code_ins, i, values)
    held = {_holder(code_ins, j) for j in range(start, i)}
    for j in range(start, i):
        ins = code_ins[j]
        if ins.opname in _LOADS:
            names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
            names = names[beyond:] if j == start else names
            out.update((n,) for n in names)
            out.update((n, _WHOLE) for n in (names[:-1] if j in held else names))
        elif ins.opname in _ATTR_LOADS or _reads_item(ins):
            path = _chain(code_ins, j)
            step = (".", ins.argval) if ins.opname in _ATTR_LOADS else \
                path[-1] if path is not None else None
            if path is not None and path[:1] not in stored:
                out.update((path,) if j in held else (path, path + (_WHOLE,)))
            elif step is not None:
                out.add(("*", step))
                if path is not None and len(path) > 1 and path in stored:   # h.v = 7.0,
                    via.setdefault(path[0], set()).update(made.get(path, ()))   # then h.v
                    continue
                for q in through(path, stored, made) if path is not None else ():
                    via.setdefault(path[0], set()).update(   # h = m, then h.v: m.v,
                        (q,) if j in held else (q, q + (_WHOLE,)))   # not all of m
            else:
                keyed.add(_item_read(code_ins, j))
    kept = {p for p in out if p[:1] not in stored}
    keyed = {p for p in keyed if p is not None and p[:1] not in stored}
    for name in [p for p in out | keyed if p in made]:   # (k += 1 then bufs[k % 2]: k
        if name[0] in via and (name[0], _WHOLE) not in out:   # itself; st.src, a
            picks = made.get((SAME,) + name, ())   # property, st[k]: what it reads)
            kept |= via[name[0]] | (made[name] - {r for q in picks for r in (q, q + (_WHOLE,))})
        else:
            kept |= made[name]
    return kept


def _arguments(code_ins: list, i: int, n: int, stored: set, made: dict,
               clamps: bool = True) -> dict:
    """What each argument of the call ``code_ins[i]`` reads, by the parameter it
    fills: its position, or its keyword (None where the keywords are unknown);
    with ``clamps`` False, but those a clamp computes (``min(k, 3)``: past its
    bound, the number changes it no more)."""
    out: dict = {}
    for key, end in _parameters(code_ins, i, n):
        if clamps or not _settles(code_ins, end, _CLAMPS):
            out.setdefault(key, set()).update(_read_by(code_ins, end, 1, stored, made))
    return out


def _parameters(code_ins: list, i: int, n: int) -> list:
    """``(parameter, where its code ends)`` of each argument of the call
    ``code_ins[i]``: its position, or its keyword (None where the keywords are
    unknown)."""
    kw = keyword_names(code_ins, i)
    if code_ins[i].opname == "CALL_KW":
        n -= 1   # (the names' tuple, taken with the arguments)
    named = len(kw) if isinstance(kw, tuple) else n
    return [(m if m < n - named else kw[m - n + named] if isinstance(kw, tuple) else None,
             _begin(code_ins, i, n - m - 1)[0]) for m in range(n)]


def _handed_on(code_ins: list, i: int, n: int, stored: set, made: dict) -> set:
    """What the arguments of the call ``code_ins[i]`` read, but those a clamp
    computes."""
    if code_ins[i].opname == "CALL_FUNCTION_EX":
        return _read_by(code_ins, i, n, stored, made)
    return set().union(*_arguments(code_ins, i, n, stored, made, False).values())


def _iterated(code_ins: list, f: int, stored: set, made: dict) -> set:
    """What the iterable of the loop whose ``FOR_ITER`` is ``code_ins[f]`` reads
    (``for o in offs``: offs): the items its target takes."""
    if f > 0 and code_ins[f - 1].opname in _LOADS:   # a comprehension's .0
        return _read_by(code_ins, f, 1, stored, made)
    g = next((j for j in range(f - 1, -1, -1) if code_ins[j].opname == "GET_ITER"), None)
    return _read_by(code_ins, g, 1, stored, made) if g is not None else set()


_SETTLING = frozenset({"min", "max", "abs", "round", "int", "float", "bool"})
_CLAMPS = frozenset({"min", "max"})


def _taken(ins) -> int:
    """How many values below the callable the call ``ins`` takes: its arguments
    (and keyword names); for ``f(*args, **kw)``, the tuple and the dict."""
    if ins.opname == "CALL_FUNCTION_EX":   # (3.14: the dict or a NULL, always)
        return 2 if sys.version_info >= (3, 14) or ins.arg & 1 else 1
    return ins.arg + _CALLS[ins.opname]


def _settles(code_ins: list, i: int, builtins=_SETTLING) -> bool:
    """Whether the value ``code_ins[i]`` stores (or takes) is one of ``builtins``
    called on names and constants (``blocks = min(blocks, 1)``): set so again
    from what it became, it stays."""
    start = _begin(code_ins, i, 1)[0]
    return code_ins[start].opname == "LOAD_GLOBAL" and code_ins[start].argval in builtins \
        and code_ins[i - 1].opname in _CALLS and all(
            c.opname in _LOADS or c.opname in _CONSTS or c.opname in _ATTR_LOADS or
            c.opname in _CALLS or c.opname in ("KW_NAMES", "PUSH_NULL")
            for c in code_ins[start + 1:i])


def _made(code_ins: list, i: int, names: tuple, stored: set, made: dict,
          taken=None) -> None:
    """Note in ``made`` what the names the instruction ``code_ins[i]`` stores were
    computed from: a loop's target, what its iterable reads; names stored
    together (``v, w = t, 2.0``, one instruction on 3.13), what either value
    reads; a clamp (``blocks = min(blocks, 1)``), not the name itself."""
    if len(names) > 1:
        read = _read_by(code_ins, i, len(names), stored, made)
        made.update(((n,), read) for n in names)
        picks = _picks(code_ins, *_value(code_ins, i, len(names)))
        made.update(((ALIASED, n), picks) for n in names)
        made.update(((SAME, n), _UNKNOWN) for n in names)
        return
    at = i - 1 if _copy(code_ins[i - 1], 1) else i   # (t := t + dt): its value
    at = _unpacked(code_ins, at)   # (src, dst = pick(k): what pick(k) reads)
    if code_ins[at - 1].opname == "FOR_ITER":
        made[names] = _iterated(code_ins, at - 1, stored, made)
        made[(ALIASED,) + names] = _each(code_ins, at - 1)
        made[(SAME,) + names] = _items(code_ins, at - 1)   # (for h in tab: any item)
    else:
        made[(SAME,) + names] = _same(code_ins, *_swapped(code_ins, at), taken) if at == i \
            else _UNKNOWN   # (h = m, h = m.sub, d = D["k"]: the very object; t := ..., unpacked)
        made[names] = _read_by(code_ins, *_swapped(code_ins, at), stored, made)
        made[(ALIASED,) + names] = frozenset() if code_ins[at - 1].opname in _ENTERS else \
            _picks(code_ins, *_value(code_ins, *_swapped(code_ins, at)))   # (as body: a
        #                                                     stream, no function to call)
    if _settles(code_ins, at):
        made[names] -= {names, names + (_WHOLE,)}


ALIASED = "=>"   # made[(ALIASED, name)]: the paths the value stored in name may be
SAME = "is"   # made[(SAME, name)]: the paths whose very object it may be
UNKNOWN = ("?",)   # among them: a value computed otherwise (a call's result, a lambda)
_UNKNOWN = frozenset({UNKNOWN})
_ENTERS = frozenset({"BEFORE_WITH", "SETUP_WITH", "BEFORE_ASYNC_WITH"})
_PICKING = frozenset({"BUILD_LIST", "BUILD_TUPLE", "BUILD_MAP", "BUILD_CONST_KEY_MAP",
                      "BUILD_SET", "LIST_EXTEND", "COPY", "SWAP", "NOP", "NOT_TAKEN", "POP_TOP",
                      "PUSH_NULL", "COMPARE_OP", "IS_OP", "CONTAINS_OP", "UNARY_NOT", "TO_BOOL",
                      "BINARY_OP", "BINARY_SUBSCR", "LOAD_ATTR", "EXTENDED_ARG"})


def _value(code_ins: list, i: int, values: int) -> tuple:
    """``(start, end)``: the instructions computing the ``values`` values
    ``code_ins[i]`` takes."""
    return _begin(code_ins, i, values)[0], i


def _items(code_ins: list, f: int) -> frozenset:
    """The paths whose object the target of the loop whose ``FOR_ITER`` is
    ``code_ins[f]`` may be: any item of a container the code names (``for h in
    tab``: ``("tab", _ANY_KEY)``), each of a tuple or a list it builds (``for h in
    (m, q)``: ``m`` and ``q``); else ``_UNKNOWN``."""
    g = next((j for j in range(f - 1, -1, -1) if code_ins[j].opname == "GET_ITER"), None)
    if g is None or f > 0 and code_ins[f - 1].opname in _LOADS:   # (a comprehension's .0)
        return _UNKNOWN
    built = code_ins[g - 1]
    if built.opname in ("BUILD_TUPLE", "BUILD_LIST"):
        got = _built(code_ins, g - 1, built.arg, _begin(code_ins, g, 1)[0], 0)
    else:
        got = _objects(code_ins, g, 0)
        got = got and {p + (_ANY_KEY,) for p in got if _ANY_KEY not in p}
    return frozenset(got) if got else _UNKNOWN


def _each(code_ins: list, f: int) -> frozenset:
    """The paths the items of the iterable of the loop whose ``FOR_ITER`` is
    ``code_ins[f]`` may be (``for step in (a, b)``: ``a`` and ``b``; ``for step in
    STEPS``: ``STEPS``, whose items they are; a comprehension's, its ``.0``)."""
    if f > 0 and code_ins[f - 1].opname in _LOADS:   # a comprehension's .0
        return frozenset({_chain(code_ins, f - 1)})
    g = next((j for j in range(f - 1, -1, -1) if code_ins[j].opname == "GET_ITER"), None)
    return _picks(code_ins, *_value(code_ins, g, 1)) if g is not None else _UNKNOWN


def picked(code_ins: list, start: int, end: int):
    """The paths a value the instructions ``code_ins[start:end]`` compute may be,
    where they only pick it (a name, an attribute, an item, one of a
    conditional expression's values, an item of a list or a dict the code
    makes: ``step if m == "j" else other``, ``TABLE[name]``, ``[step][0]``); an
    item by a key computed is its holder's path and ``_ANY_KEY``, what a test
    reads is among them too. None where they compute it otherwise."""
    out = []
    holders = {_holder(code_ins, j) for j in range(start, end)}
    for j in range(start, end):
        ins = code_ins[j]
        if not (ins.opname in _LOADS or ins.opname in _CONSTS or ins.opname in _PICKING or
                ins.opcode in _JUMPS) or ins.opname == "LOAD_ATTR" and ins.arg & 1 and \
                sys.version_info >= (3, 12):   # (3.12: a method loaded for a call)
            return None
        if ins.opname in _LOADS or ins.opname == "LOAD_ATTR" or _reads_item(ins):
            path = _chain(code_ins, j)
            if path is None and _reads_item(ins):
                path = _keyed_any(code_ins, j)
            if path is not None and j not in holders:
                out.append(path)
    return out


def _keyed_any(code_ins: list, j: int, depth: int = 0):
    """The path of the item ``code_ins[j]`` reads, each item by a key computed on
    its way ``_ANY_KEY`` (``("T", _ANY_KEY)`` of ``T[k]``, ``("T", _ANY_KEY, ("[]",
    "a"))`` of ``T[k]["a"]``), where the code names its holders from a name, else None."""
    path = _chain(code_ins, j)
    if path is not None or depth > 8:
        return path
    h = _holder(code_ins, j)
    if h < 0 or not (_reads_item(code_ins[h]) or code_ins[h].opname in _ATTR_LOADS):
        return _chain(code_ins, h) + (_ANY_KEY,) if h >= 0 and \
            _chain(code_ins, h) is not None else None
    holder = _keyed_any(code_ins, h, depth + 1)
    if holder is None:
        return None
    if code_ins[j].opname in _ATTR_LOADS:
        return holder + ((".", code_ins[j].argval),)
    key = code_ins[j - 1]
    whole = h == j - 2 and key.opname in _CONSTS   # (its key a constant)
    return holder + ((("[]", key.argval),) if whole and _hashable(key.argval) else (_ANY_KEY,))


def _hashable(k) -> bool:
    try:
        hash(k)
    except TypeError:
        return False
    return True


def _picks(code_ins: list, start: int, end: int) -> frozenset:
    got = picked(code_ins, start, end)
    return _UNKNOWN if got is None else frozenset(got)


def _same(code_ins: list, i: int, values: int, taken=None) -> frozenset:
    """The paths whose object the one value ``code_ins[i]`` takes may be: a name,
    an attribute or an item by a constant key of one (``m``, ``m.sub``,
    ``D["k"]``), or any of those a conditional expression, an ``or``, an ``and``
    or an item of a tuple, a list or a dict built there picks (``m if flag else
    q``, ``m or q``, ``(m, q)[i]``: ``m`` and ``q``); else ``_UNKNOWN`` (a container
    built, a call's result, an item by a key computed)."""
    got = _objects(code_ins, i, 0, taken) if values == 1 else None
    return _UNKNOWN if not got else frozenset(got)


_BUILDS = {"BUILD_TUPLE": 1, "BUILD_LIST": 1, "BUILD_MAP": 2, "BUILD_CONST_KEY_MAP": 0}
# -> how the items lie among the values the build takes (0: below the keys' tuple;
#    2: key, value pairs, the value on top)


def _objects(code_ins: list, i: int, depth: int, taken=None):
    """The paths whose object the value on top of the stack when ``code_ins[i]``
    runs may be (``_same``), or None; ``taken``: jump -> where it goes at each
    iteration (``_loop_flow._decided``), for a conditional expression's test."""
    start = _begin(code_ins, i, 1)[0]
    if depth > 8 or start >= i:
        return None
    end = code_ins[i].offset
    exits = [j for j in range(start, i) if code_ins[j].opcode in _JUMPS and
             code_ins[j].argval == end]   # (a first branch's value, an or's left one)
    if taken and len(exits) == 1 and "_IF_" not in code_ins[exits[0]].opname:
        j = exits[0]
        t = next((t for t in range(start, j) if t in taken and
                  code_ins[t].argval == code_ins[j + 1].offset), None)
        if t is not None:   # m if FLAG else q, FLAG the body leaves alone: m
            return _objects(code_ins, j, depth + 1) if taken[t] != j + 1 else \
                _piece(code_ins, j + 1, i, depth)
    if exits:
        out: set = set()
        for j in exits:
            at = j - 1 if j > start and code_ins[j - 1].opname == "TO_BOOL" else j
            at = at - 1 if at > start and _copy(code_ins[at - 1], 1) else at   # (3.12 on)
            got = _objects(code_ins, at, depth + 1)
            if got is None:
                return None
            out |= got
        last = max(exits) + 1   # the last branch's value, or the right operand
        while last < i and code_ins[last].opname in ("POP_TOP", "NOT_TAKEN"):
            last += 1
        got = _piece(code_ins, last, i, depth)
        return None if got is None else out | got
    return _piece(code_ins, start, i, depth)


def _piece(code_ins: list, start: int, i: int, depth: int):
    """``_objects`` of the value ``code_ins[start:i]`` computes, with no branch:
    a path named from a name, or an item of a container built there."""
    if start >= i:
        return None
    last = code_ins[i - 1]
    if _reads_item(last):
        b = _holder(code_ins, i - 1)
        how = _BUILDS.get(code_ins[b].opname) if b >= start else None
        if how is not None:   # (m, q)[i], {"a": m, "b": q}[k]: m and q
            k = code_ins[b + 1].argval if b + 2 == i - 1 and \
                code_ins[b + 1].opname in _CONSTS else None
            n = code_ins[b].arg
            if how == 1 and type(k) in (int, bool) and -n <= k < n:   # (m, q)[0]: m
                end = _begin(code_ins, b, n - 1 - k % n)[0]
                return _objects(code_ins, end, depth + 1) if end > start else None
            return _built(code_ins, b, n * (how or 1), start, depth, how)
        path = _keyed_any(code_ins, i - 1) if _chain(code_ins, i - 1) is None else None
        if path is not None and _ANY_KEY in path:   # objs[i], T[k]["a"]: any item
            return {path}
    path = _got(code_ins, start, i)   # getattr(tab, "m"): tab.m
    if path is not None:
        return {path}
    path = _chain(code_ins, i - 1)
    if path is None or _ANY_KEY in path or not all(
            c.opname in _LOADS or c.opname in _ATTR_LOADS or c.opname in _CONSTS or
            _reads_item(c) or c.opname in ("EXTENDED_ARG", "CACHE", "NOP")
            for c in code_ins[start:i]):
        return None
    return {path}


def _built(code_ins: list, b: int, n: int, start: int, depth: int, how: int = 1):
    """``_objects`` of each item of the tuple, list or dict ``code_ins[b]`` builds
    of ``n`` values (``how``: as ``_BUILDS`` tells), or None."""
    ends = [_begin(code_ins, b, m)[0] - 1 for m in range(n + (how == 0))]
    ends = ends[1:] if how == 0 else ends[::2] if how == 2 else ends
    out: set = set()
    for e in ends:
        got = _objects(code_ins, e + 1, depth + 1) if e >= start else None
        if got is None:
            return None
        out |= got
    return out


def _got(code_ins: list, start: int, i: int):
    """The path ``getattr(<path>, "name")``, computed by ``code_ins[start:i]``,
    reads (``getattr(tab, "m")``: ``tab.m``), else None."""
    c = i - 2 if i > 1 and code_ins[i - 2].opname == "PRECALL" else i - 1   # (3.11)
    if c < start or code_ins[c].opname not in ("PRECALL", "CALL") or _taken(code_ins[c]) != 2:
        return None
    j = _begin(code_ins, c, 2)[0]
    if j < 1 or code_ins[j - 1].opname != "LOAD_GLOBAL" or code_ins[j - 1].argval != "getattr":
        return None
    (_, end0), (_, end1) = _parameters(code_ins, c, 2)
    key = code_ins[end1 - 1]
    if end1 != end0 + 1 or key.opname not in _CONSTS or type(key.argval) is not str:
        return None
    holder = _chain(code_ins, end0 - 1)
    if holder is None or _ANY_KEY in holder or not all(
            c.opname in _LOADS or c.opname in _ATTR_LOADS or c.opname in _CONSTS or
            _reads_item(c) or c.opname in ("EXTENDED_ARG", "CACHE", "NOP")
            for c in code_ins[j:end0]):
        return None
    return holder + ((".", key.argval),)


def through(path: tuple, stored, made: dict, depth: int = 0) -> list:
    """The paths the slot at ``path`` is, where its name was set by the body to
    another name or a path under one (``h = m`` then ``h.v``: ``m.v``), or to
    one of several (``h = m if flag else q``: ``m.v`` and ``q.v``): each
    path the stores of the name picked, followed while those names were set by
    the body too; none where a store computed it otherwise (a call's result, a
    tuple built)."""
    picks = made.get((SAME,) + path[:1])
    if len(path) < 2 or not picks or UNKNOWN in picks or depth > 8:
        return []
    out = []
    for q in picks:
        q = tuple(q) + path[1:]
        out += through(q, stored, made, depth + 1) if q[:1] in stored else [q]
    return out

"""The steps of ``chains.value_chains``' walk of bytecode that read a call: an
attribute read by ``getattr``/``hasattr`` with a constant name (``_by_name``),
``X.get("k"[, default])`` (``_get_call``), the item a ``.pop``/``.setdefault`` of a
constant key or a key read by a name changes (``_item_taken``), and the values
stores in a row take (``_unpacked``), the locals a function binds once by an
import (``imported``) or assigns once (``_stored_once``: an alias); the line of
a local's first change in place (``item_change_line``), and of a store that
rebinds a name, an attribute or an item a trace reached (``rebind_line``).
"""
from __future__ import annotations

import dis
import weakref

from .named_keys import Named

NAME_LOADS = ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLASSDEREF")

# methods that change a list, dict or set in place: the object they are called on
# in a walked function is state it keeps, not a setting it reads
_MUTATORS = frozenset({"append", "extend", "insert", "pop", "popitem", "update",
                       "setdefault", "clear", "remove", "add", "discard", "sort",
                       "reverse", "__setitem__", "__delitem__", "__iadd__"})


def _item_taken(held, method: str, after) -> tuple:
    """What a call of a changing ``method`` on ``held`` changes: the item of a
    constant key ``.pop`` or ``.setdefault`` takes or sets (``REQS.pop("req")``: as
    ``del REQS["req"]``), else the whole object (``HISTORY.append(v)``)."""
    after = [i for i in after if i.opname not in ("PUSH_NULL", "PRECALL")]
    if method not in ("pop", "setdefault") or not after:
        return held
    if after[0].opname == "LOAD_CONST" and type(after[0].argval) in (str, int):
        return held[0], held[1] + (("item", after[0].argval),)
    if after[0].opname in NAME_LOADS:   # REQS.pop(P.REQ): a key read by a name
        parts = [after[0].argval]
        for i in after[1:]:
            if i.opname != "LOAD_ATTR":
                break
            parts.append(i.argval)
        return held[0], held[1] + (("item", Named(".".join(parts))),)
    return held


def _by_name(state: tuple, op: str, ins, const) -> tuple:
    """``(state, step)`` of ``getattr(X, "k")``, ``getattr(X, "k", default)`` and
    ``hasattr(X, "k")`` read with a constant name, one instruction on; ``state`` is
    ``(stage, function)``, the stage 1 after the function is loaded, 2 after X (and
    its attributes), 3 after the name, 4 after a default loaded by one instruction;
    the step where the call ends it: ``("attr", k)``, ``("default", k)`` with a
    default, ``("has", k)`` of hasattr."""
    stage, fn = state
    if op in NAME_LOADS and ins.argval in ("getattr", "hasattr"):
        return (1, ins.argval), None
    loads = op in NAME_LOADS or op.startswith("LOAD_FAST")
    if stage == 1 and loads:
        return (2, fn), None
    if stage == 2 and op in ("LOAD_ATTR", "LOAD_METHOD"):
        return state, None
    if stage == 2 and op == "LOAD_CONST" and isinstance(ins.argval, str):
        return (3, fn), None
    if stage == 3 and fn == "getattr" and (loads or op in ("LOAD_CONST", "LOAD_SMALL_INT")):
        return (4, fn), None
    args = 3 if stage == 4 else 2
    if stage >= 3 and op == "PRECALL" and ins.arg == args:   # (3.11)
        return state, None
    if stage >= 3 and op == "CALL" and ins.arg == args and const is not None:
        return (0, None), ("has" if fn == "hasattr" else "default" if stage == 4 else "attr",
                           const[0])
    return ((0, None) if op not in ("PUSH_NULL", "CACHE") else state), None


def _get_call(got: int, op: str, ins) -> tuple:
    """``(got, done)`` one instruction on in ``X.get("k"[, default])`` after its key
    (``got`` the arguments loaded): a default loaded by one instruction (a constant,
    a name, ``{}``), the call's; ``done`` where the call of ``got`` arguments ends
    it, ``(0, False)`` where anything else comes."""
    if got == 1 and (op in NAME_LOADS or op.startswith("LOAD_FAST") or
                     op in ("LOAD_CONST", "LOAD_SMALL_INT") or
                     op in ("BUILD_MAP", "BUILD_LIST", "BUILD_TUPLE") and ins.arg == 0):
        return 2, False
    if op == "PRECALL" and ins.arg == got:   # (3.11)
        return got, False
    if op in ("PUSH_NULL", "CACHE"):
        return got, False
    return 0, op == "CALL" and ins.arg == got


_UNPACKS = ("STORE_FAST", "STORE_FAST_STORE_FAST", "SWAP", "BUILD_TUPLE", "UNPACK_SEQUENCE")


def _unpacked(op: str, n, stack: list) -> tuple:
    """``(stored, stack)`` one instruction of ``_UNPACKS`` on: ``stack`` the values
    on top of the stack as far as known (a chain, None for another value, a list
    for a tuple built of them), ``stored`` the values a store takes, in the order
    of its names (``opt, sched = CFG["opt"], CFG["sched"]`` stores the second first)."""
    if op == "STORE_FAST":
        return stack[-1:] or [None], stack[:-1]
    if op == "STORE_FAST_STORE_FAST":   # (3.13)
        padded = [None, None] + stack
        return padded[:-3:-1], stack[:-2]
    padded = [None] * max(0, n - len(stack)) + stack
    if op == "SWAP":
        padded[-1], padded[-n] = padded[-n], padded[-1]
        return [], padded
    if op == "BUILD_TUPLE":
        return [], padded[:len(padded) - n] + [padded[len(padded) - n:]]
    top = stack[-1] if stack else None   # UNPACK_SEQUENCE: the first item stored first
    items = top if type(top) is list and len(top) == n else [None] * n
    return [], stack[:-1] + items[::-1]


def item_change_line(code, local: str) -> int | None:
    """The line of the first change ``code`` itself makes in place to what its local
    ``local`` holds: an item stored or deleted (``bufs[0] = v``, ``del d[k]``, the
    key one load) or a method of ``_MUTATORS`` called on it (``bufs.reverse()``);
    None where none is found."""
    two = one = None   # the two instructions before this one
    stored = []   # the instructions so far
    for ins in dis.get_instructions(code):
        op = ins.opname
        if op in ("CACHE", "EXTENDED_ARG"):
            continue
        stored.append(ins)
        if op in ("STORE_SUBSCR", "DELETE_SUBSCR") and one is not None and (
                _fast_name(two) == local and one.opname.startswith("LOAD_") or
                one.opname == "LOAD_FAST_LOAD_FAST" and one.argval[0] == local) or \
                op in ("LOAD_ATTR", "LOAD_METHOD") and ins.argval in _MUTATORS and \
                _fast_name(one) == local:
            return ins.positions.lineno if ins.positions else None
        two, one = one, ins
    return None


def rebind_line(code, label: str) -> int | None:
    """The line of the first store in ``code`` itself that can rebind what ``label``
    names: ``A`` (``global A; A = B``, or a closure's ``nonlocal a``), ``self.a``
    (``self.a, self.b = self.b, self.a``), ``self.bufs[0]`` or ``BUFS[1]`` (an item
    stored or deleted, or a method of ``_MUTATORS`` called on the container); None
    where none is found."""
    head = label.split("[", 1)[0]
    name = head.rsplit(".", 1)[-1]
    if not name.isidentifier():
        return None
    item, attr = "[" in label, "." in head
    two = one = None   # the two instructions before this one
    stored = []   # the instructions so far
    for ins in dis.get_instructions(code):
        op = ins.opname
        if op in ("CACHE", "EXTENDED_ARG"):
            continue
        stored.append(ins)
        if item:
            hit = op in ("STORE_SUBSCR", "DELETE_SUBSCR") and _loads(two, name, attr) or \
                op in ("LOAD_ATTR", "LOAD_METHOD") and ins.argval in _MUTATORS and \
                _loads(one, name, attr)
        elif attr:
            hit = op == "STORE_ATTR" and ins.argval == name and \
                _stored_on(code, stored, head)
        else:
            hit = op in ("STORE_GLOBAL", "STORE_DEREF", "STORE_NAME") and ins.argval == name
        if hit:
            return ins.positions.lineno if ins.positions else None
        two, one = one, ins
    return None


_ROOT_LOADS = NAME_LOADS + ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST")


def _stored_on(code, done: list, head: str) -> bool:
    """Whether the ``STORE_ATTR`` ending ``done`` stores on the object ``head`` names
    (``self.a``: not ``self.stats.a``): the loads right before it, a name and the
    attributes read off it, spell ``head`` but for its last attribute. ``self``
    (graphtrace's name for the traced method's object) is the method's first
    parameter, whatever the code calls it."""
    chain = []
    for ins in reversed(done[:-1]):
        if ins.opname != "LOAD_ATTR":
            break
        chain.append(ins.argval)
    else:
        return False
    root = ins.argval[-1] if isinstance(ins.argval, tuple) else ins.argval
    if ins.opname not in _ROOT_LOADS or not isinstance(root, str):
        return False
    want = head.split(".")
    if want[0] == "self" and code.co_argcount and root == code.co_varnames[0]:
        root = "self"
    return [root] + chain[::-1] == want[:-1]


def _loads(ins, name: str, attr: bool) -> bool:
    """Whether ``ins`` loads ``name``: as an attribute (``attr``) or by a global or
    closure name."""
    if ins is None or ins.argval != name:
        return False
    return ins.opname in ("LOAD_ATTR", "LOAD_METHOD") if attr else ins.opname in NAME_LOADS


def _fast_name(ins):
    """The local a ``LOAD_FAST`` loads (None for any other instruction, or None)."""
    return ins.argval if ins is not None and ins.opname in (
        "LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW") else None


_IMPORTED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def imported(code) -> dict:
    """local -> ``(head, steps)`` for each local ``code`` itself binds once by an
    import: read like a global name holding the module (``"<kmod>"``, looked up in
    ``sys.modules``: ``lookup``) and the attributes read off it: ``import kmod as
    km``: ``("<kmod>", ())``; ``import pkg.sub``: ``("<pkg>", ())``; ``from kmod
    import kk``: ``("<kmod>", (("attr", "kk"),))`` (a reload or a new value there
    is watched as ``kmod.kk`` is)."""
    hit = _IMPORTED.get(code)
    if hit is not None:
        return hit
    out, consts, held, chained = {}, [0, None], None, False
    for ins in dis.get_instructions(code):
        op = ins.opname
        if op == "IMPORT_NAME":
            level, fromlist = consts[-2:]
            chained = fromlist is None   # import a.b.c (as x): a, then .b, .c
            name = ins.argval.split(".")[0] if chained else ins.argval
            held = ("<" + "." * (level or 0) + name + ">", ())
        elif op == "IMPORT_FROM" and held is not None:
            held = (held[0], (held[1] if chained else ()) + (("attr", ins.argval),))
        elif op == "STORE_FAST" and held is not None:
            out[ins.argval] = held
        elif op not in ("SWAP", "POP_TOP", "CACHE", "LOAD_CONST"):
            held = None
        consts = consts[-1:] + [ins.argval] if op == "LOAD_CONST" else consts
    once = _stored_once(code)
    hit = _IMPORTED[code] = {k: v for k, v in out.items() if k in once}
    return hit


def _stored_once(code) -> frozenset:
    """The locals ``code`` assigns exactly once and that are no parameters, and those
    each of whose assignments takes the same global or closure name (``cf = CFG``
    twice: it holds what that name does wherever it is read)."""
    counts: dict = {}
    sources: dict = {}   # local -> the names its stores take (None: something else)
    loaded = None        # the name the instruction before loaded
    for ins in dis.get_instructions(code):
        if ins.opname in ("CACHE", "EXTENDED_ARG"):
            continue
        if ins.opname.startswith("STORE_FAST") or ins.opname.startswith("DELETE_FAST"):
            names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
            for n in names:
                counts[n] = counts.get(n, 0) + 1
                sources.setdefault(n, set()).add(
                    loaded if ins.opname == "STORE_FAST" else None)
        loaded = ins.argval if ins.opname in NAME_LOADS else None
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    return frozenset(n for n, k in counts.items() if n not in params and (
        k == 1 or len(sources[n]) == 1 and None not in sources[n]))

"""Whether traced code read a value it then stored, in a way that decided work.

A trace that sets a flag or a value from None (``if not self.started: ...;
self.started = True``, ``if "init" not in STATE: ...``, ``k = memo.get("n", 0);
memo["n"] = k + 1``) ran with the value as it was before the store: the graph
holds what that value decided, so it is keyed by that value, and a call that
finds the new one traces again (``Holdings.note_traced``, ``arguments``). A
store the code makes where no read before it decides anything (``if
self.scale is None: self.scale = 1.0``: a test whose branch only stores, with
no ``else``; a value only stored, or read after its last store) leaves a
setting the graph computes the same from: keyed by the new value, no retrace.

Told from the bytecode of the functions the trace may run, by the last step of
a value's label (``self.started``: attribute ``started``; ``STATE['init']``:
key ``'init'``; ``STATE[Phase.A]``: the key the code loads by the name
``Phase.A``; ``STARTED``: the name), which any object's attribute or any
dict's key of that name matches: a wider match costs one trace more, never a
stale graph. ``getattr``/``hasattr`` and ``setattr``/``delattr`` by a constant
name read and store an attribute; ``"GONE" in globals()`` (``.get``, ``[]``)
reads a global name.
"""
from __future__ import annotations

import ast
import dis
import re
import types

from .dynamic_names import by_names
from .named_keys import Named, name_end, named_key

_KEY = re.compile(r"\[([^\[\]]*)\]$")
_GETATTR = re.compile(r"^(?:has|get)attr\(.*, '(\w+)'(?:, \.\.\.)?\)$")

_NAME_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLASSDEREF"})
_NAME_STORES = frozenset({"STORE_GLOBAL", "STORE_NAME", "STORE_DEREF", "DELETE_GLOBAL",
                          "DELETE_NAME", "DELETE_DEREF"})
# a dict's methods reading a key (and those storing it too)
_READS_KEY = frozenset({"get", "setdefault", "pop", "__getitem__", "__contains__"})
_STORES_KEY = frozenset({"setdefault", "pop"})
# what may sit between a read and the jump of a test (``is None``, ``not``, ``== 0``)
_TEST = frozenset({"LOAD_CONST", "IS_OP", "COMPARE_OP", "CONTAINS_OP", "UNARY_NOT", "TO_BOOL",
                   "NOP", "EXTENDED_ARG"})
# what a test's branch may run and still only store: no call, no jump, no local
# set (a local the code after it would read)
_STORING = frozenset({
    "LOAD_CONST", "LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST", "LOAD_GLOBAL",
    "LOAD_DEREF", "LOAD_NAME", "LOAD_ATTR", "STORE_ATTR", "STORE_SUBSCR", "STORE_GLOBAL",
    "STORE_DEREF", "STORE_NAME", "BUILD_TUPLE", "BUILD_LIST", "BUILD_MAP", "BUILD_SET",
    "BUILD_CONST_KEY_MAP", "LIST_EXTEND", "SET_UPDATE", "COPY", "SWAP", "POP_TOP", "NOP",
    "EXTENDED_ARG", "UNARY_NEGATIVE", "UNARY_NOT", "BINARY_OP", "BINARY_SUBSCR", "TO_BOOL"})


def label_step(label: str):
    """The last step of a value's label: ``("attr", name)``, ``("key", constant)``
    (a ``Named`` key, read by a name: ``ST[Phase.A]``) or ``("name", name)``; None
    where it cannot be told."""
    hit = _GETATTR.search(label)   # getattr(OPT, 't', ...): attribute t
    if hit is not None:
        return "attr", hit.group(1)
    hit = _KEY.search(label)
    if hit is not None:
        try:
            return "key", ast.literal_eval(hit.group(1))
        except (ValueError, SyntaxError):
            key = named_key(hit.group(1))
            return ("key", key) if key is not None else None
    head, _, last = label.rpartition(".")
    if head:
        return ("attr", last) if last.isidentifier() else None
    return ("name", label) if label.isidentifier() else None


def never_read(functions, label: str) -> bool:
    """Whether no code of ``functions`` (nor the code nested in them) reads the value
    ``label`` names at all: a signal the code only sets (``self.ran = True``). False
    where the label cannot be told, or an attribute may be read by a name known only
    when the code runs."""
    step = label_step(label)
    if step is None:
        return False
    for code in _codes(functions):
        if step[0] == "attr" and by_names(code) or \
                _accesses([i for i in dis.get_instructions(code) if i.opname != "CACHE"],
                          step)[0]:
            return False
    return True


def _codes(functions) -> list:
    """The code objects of ``functions`` and those nested in them, each once."""
    out, seen = [], set()
    for f in functions:
        code = getattr(getattr(f, "__func__", f), "__code__", None)
        if code is not None and code not in seen:
            seen.add(code)
            out.append(code)
    todo = list(out)
    while todo:
        code = todo.pop()
        for c in code.co_consts:
            if isinstance(c, types.CodeType) and c not in seen:
                seen.add(c)
                out.append(c)
                todo.append(c)
    return out


def read_first(functions, label: str, filled: bool = False) -> bool:
    """Whether the code of ``functions`` (and the code nested in them) may read the
    value ``label`` names before its last store in a way that decides work: a
    read before that store, or in a loop that stores it, or in a function that
    does not store it, other than a test whose branch only stores (``if self.scale
    is None: self.scale = 1.0``). True where the label cannot be told.

    A ``setdefault`` whose value is kept (``b = D.setdefault("k", 32)``) reads what
    was there before its store, which a graph keyed by the value read (its only read
    of it) holds; ``filled``: it reads the value it stores (a default filled in a
    dict argument's copy, which the caller's dict, without it, fills the same at
    each call)."""
    step = label_step(label)
    if step is None:
        return True
    return any(_decides(code, step, filled) or step[0] == "attr" and by_names(code)
               for code in _codes(functions))   # (getattr(OB, NAME): any may be read)


def counted(functions, label: str) -> bool:
    """Whether the code of ``functions`` reads the value ``label`` names only to
    store one computed from it back (``N += 1``, ``M = globals().get("M", 0) + 1``,
    ``try: K += 1`` / ``except NameError: K = 1``): a counter, state its trace
    changes, set from absent or not. False for a value stored straight back
    (``OPT.t = getattr(OPT, "t", 0)``: a default made once) and where the label
    cannot be told."""
    step = label_step(label)
    if step is None:
        return False
    for code in _codes(functions):
        ins = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
        reads, stores = _accesses(ins, step)
        if any(_stored_back(ins, r, stores, computed=True) for r in reads):
            return True
    return False


_DECIDES: dict = {}


def _decides(code, step, filled) -> bool:
    hit = _DECIDES.get((code, step, filled))
    if hit is None:
        if len(_DECIDES) > 4096:
            _DECIDES.clear()
        hit = _DECIDES[(code, step, filled)] = _reads_first(code, step, filled)
    return hit


def _reads_first(code, step, filled) -> bool:
    ins = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    fills = [] if filled else None
    reads, stores = _accesses(ins, step, fills)
    if not reads:
        return False
    last = max(stores) if stores else None
    at = {i.offset: n for n, i in enumerate(ins)}
    loops = [(at.get(i.argval, 0), n) for n, i in enumerate(ins)
             if "JUMP" in i.opname and isinstance(i.argval, int) and i.argval <= i.offset]
    for r in reads:
        if _only_stores(ins, r, at) or _stored_back(ins, r, stores):
            continue
        if last is None or r < last:
            return True
        if fills and r in fills:   # b = opts.setdefault("k", 32), filled: its store
            others = [s for s in stores if s != r]   # first, its value the one stored
        elif r == last and r + 1 < len(ins) and ins[r + 1].opname != "POP_TOP":
            return True   # if D.pop("req", None) is not None: read and taken at once
        else:
            others = stores
        if any(a <= r <= b and any(a <= s <= b for s in others) for a, b in loops):
            return True
    return False


def _accesses(ins, step, fills=None) -> tuple:
    """The indexes in ``ins`` where ``step``'s value is read, and where it is stored
    (and in ``fills``, those of a ``setdefault``, both)."""
    kind, name = step
    reads, stores = [], []
    for n, i in enumerate(ins):
        op = i.opname
        if kind == "attr" and i.argval == name:
            if op in ("LOAD_ATTR", "LOAD_METHOD"):
                reads.append(n)
            elif op in ("STORE_ATTR", "DELETE_ATTR"):
                stores.append(n)
            elif op == "LOAD_CONST":   # getattr(OB, "started"), setattr(OB, "started", v)
                _by_builtin(ins, n, reads, stores)
                if _of_dict(ins, n):   # "started" in self.__dict__, vars(OB).pop("started")
                    _key_access(ins, n, reads, stores, fills=fills)
        elif kind == "name" and i.argval == name:
            if op in _NAME_LOADS:
                reads.append(n)
            elif op in _NAME_STORES:
                stores.append(n)
            elif op == "LOAD_CONST" and type(i.argval) is str:   # "GONE" in globals()
                _in_globals(ins, n, reads, stores, fills)
        elif kind == "key" and op == "LOAD_CONST" and type(i.argval) is type(name) \
                and i.argval == name:
            _key_access(ins, n, reads, stores, fills=fills)
        elif kind == "key" and type(name) is Named and op in _NAME_LOADS and \
                i.argval == name.parts[0]:   # ST[Phase.A]: the key loaded by its name
            end = name_end(ins, n, name)
            if end is not None:
                _key_access(ins, end, reads, stores, n, fills)
    return reads, stores


def _key_access(ins, n, reads, stores, start=None, fills=None) -> None:
    """A constant key loaded at ``n`` (from ``start``, where its name and attributes
    load it): ``d[k] = v``, ``d[k]``, ``d[k] += 1``, ``d.get(k)``,
    ``d.setdefault(k, v)`` (also in ``fills``: a store its read follows), ``k in d``."""
    start = n if start is None else start
    prev = ins[start - 1] if start else None
    if prev is not None and prev.opname in ("LOAD_METHOD", "LOAD_ATTR") and \
            prev.argval in _READS_KEY:
        call = _call_of(ins, n)
        if call is not None:
            reads.append(call)
            if prev.argval in _STORES_KEY:
                stores.append(call)
            if prev.argval == "setdefault" and fills is not None:
                fills.append(call)
        return
    m = n + 1
    while m < len(ins) and ins[m].opname == "COPY":
        m += 1
    if m >= len(ins):
        return
    op = ins[m].opname
    if op in ("STORE_SUBSCR", "DELETE_SUBSCR"):
        stores.append(m)
    elif op == "BINARY_SUBSCR":
        reads.append(m)
        if m > n + 1:   # d[k] += 1: stored after
            store = next((j for j in range(m + 1, len(ins))
                          if ins[j].opname == "STORE_SUBSCR"), None)
            if store is not None:
                stores.append(store)
    else:   # k in d, k in self.d, k in vars(self)
        while m < len(ins) and (ins[m].opname in ("LOAD_FAST", "LOAD_GLOBAL", "LOAD_DEREF",
                                                   "LOAD_NAME", "LOAD_ATTR", "PUSH_NULL",
                                                   "PRECALL") or
                                ins[m].opname == "CALL" and ins[m].arg == 1):
            m += 1
        if m < len(ins) and ins[m].opname == "CONTAINS_OP":
            reads.append(m)


def _call_of(ins, n):
    """The index of the call taking the key loaded at ``n`` as its first argument
    (``d.setdefault("n", len(x))``: not ``len``'s), told by the stack's depth; the
    first call after ``n`` where a jump or an odd step leaves that untold."""
    depth = 1   # the key, and what is loaded after it
    for m in range(n + 1, len(ins)):
        i = ins[m]
        if i.opname in ("PRECALL", "CALL") and i.arg == depth:
            return next((c for c in range(m, len(ins)) if ins[c].opname == "CALL"), None)
        if "JUMP" in i.opname or i.opname.startswith(("RETURN", "RAISE", "KW_NAMES")):
            break
        try:
            depth += dis.stack_effect(i.opcode, i.arg if i.opcode >= dis.HAVE_ARGUMENT else None,
                                      jump=False)
        except ValueError:
            break
        if depth < 1:
            break
    return next((m for m in range(n + 1, len(ins)) if ins[m].opname == "CALL"), None)


def _of_dict(ins, n) -> bool:
    """Whether the constant loaded at ``n`` is a key of an object's attributes as a
    dict, loaded just before or after it: ``X.__dict__`` or ``vars(X)``."""
    near = ins[max(n - 6, 0):n + 5]
    return any(i.opname == "LOAD_ATTR" and i.argval == "__dict__" or
               i.opname in _NAME_LOADS and i.argval == "vars" for i in near)


_BY_NAME = {"getattr": True, "hasattr": True, "setattr": False, "delattr": False}
_OBJECT_LOADS = _NAME_LOADS | {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW"}


def _by_builtin(ins, n, reads, stores) -> None:
    """An attribute's name loaded as a constant at ``n``, the second argument of
    ``getattr``/``hasattr`` (a read, at its call: a test may follow) or of
    ``setattr``/``delattr`` (a store)."""
    j = n - 1
    while j > 0 and ins[j].opname in ("LOAD_ATTR", "LOAD_METHOD"):   # getattr(self.o, "k")
        j -= 1
    if j < 1 or ins[j].opname not in _OBJECT_LOADS or \
            ins[j - 1].opname not in _NAME_LOADS or ins[j - 1].argval not in _BY_NAME:
        return
    if not _BY_NAME[ins[j - 1].argval]:
        stores.append(n)
        return
    call = next((m for m in range(n + 1, len(ins)) if ins[m].opname == "CALL"), None)
    reads.append(call if call is not None else n)


def _in_globals(ins, n, reads, stores, fills=None) -> None:
    """A global's name loaded as a constant at ``n`` and looked up in ``globals()``:
    ``"GONE" in globals()``, ``globals().get("GONE")``, ``globals()["GONE"]`` (reads),
    ``globals()["GONE"] = v``, ``del globals()["GONE"]`` (stores)."""
    m = n + 1
    if m < len(ins) and ins[m].opname in _NAME_LOADS and ins[m].argval == "globals":
        m += 1
        while m < len(ins) and ins[m].opname in ("PRECALL", "PUSH_NULL"):
            m += 1
        if m + 1 < len(ins) and ins[m].opname == "CALL" and not ins[m].arg and \
                ins[m + 1].opname == "CONTAINS_OP":
            reads.append(m + 1)
        return
    j = n - 1 if n and ins[n - 1].opname in ("LOAD_ATTR", "LOAD_METHOD") else n
    if j > 0 and ins[j - 1].opname == "CALL" and not ins[j - 1].arg and any(
            c.opname in _NAME_LOADS and c.argval == "globals" for c in ins[max(j - 3, 0):j - 1]):
        _key_access(ins, n, reads, stores, fills=fills)


def _only_stores(ins, r, at) -> bool:
    """Whether the read at ``r`` is a test whose branch, with no ``else``, only stores."""
    j = r + 1
    while j < len(ins) and ins[j].opname in _TEST:
        j += 1
    if j >= len(ins):
        return False
    jump = ins[j]
    if not (jump.opname.startswith("POP_JUMP") and "IF" in jump.opname) or \
            not isinstance(jump.argval, int) or jump.argval <= jump.offset:
        return False
    end = at.get(jump.argval)
    if end is None:
        return False
    return all(i.opname in _STORING for i in ins[j + 1:end])


def _stored_back(ins, r, stores, computed: bool = False) -> bool:
    """Whether the read at ``r`` is an augmented assignment's (``OPT.t += 1``): its
    value goes only into the value stored there (a counter, state the trace
    tells by its change), or is stored straight back (``OPT.t = getattr(OPT, "t",
    0)``, then ``OPT.t += 1``; not where ``computed``: the first alone)."""
    m = r + 1
    while m < len(ins) and (ins[m].opname in _OBJECT_LOADS or ins[m].opname == "LOAD_ATTR"):
        m += 1
    if m > r + 1 and m in stores and not computed:
        return True
    m = r + 1
    if m + 1 < len(ins) and ins[m].opname.startswith("LOAD_") and \
            ins[m].opname not in ("LOAD_ATTR", "LOAD_METHOD") and ins[m + 1].opname == "BINARY_OP":
        m += 2
        while m < len(ins) and ins[m].opname == "SWAP":
            m += 1
        return m in stores
    return False

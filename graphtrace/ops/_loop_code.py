"""What the code of a while loop's body reads, for ``_loop_state.py``.

``_Region`` reads the bytecode of a body (a ``body=`` function, or the lines of
a ``with`` block in the user's frame, between two offsets): the slots, by their
path (``_loop_paths.py``), that it loads before it stores them, and those it
indexes by, sizes temporaries or launches by, hands to calls, or decides its
control flow by (a for loop's iterable, an if or a while test), with the lines
that decision runs, by every path through the code (``_loop_flow.py``): a slot
is stored before a read where each path to the read stores it, and a name
holds what any store of it reaching a read computed it from. What the code an
instruction takes off the stack reads is told by ``_loop_operands.py`` (the
arguments of a call, a loop's iterable); what reading an attribute or an item
of an object of the program's own reads (its property's or method's getter,
its class's ``__getattr__`` or ``__getitem__``, a namedtuple's field) by the
functions before ``_Region`` here, which read that getter's code with a
``_Region`` of its own. ``LoopState`` asks these of each slot its snapshots
found changed; what a code names (the helpers a body calls) is
``_loop_names.py``'s, what a call calls (a launch, a child's function)
``_loop_callees.py``'s, which slot a path through another name of its object
is (``h = m`` then ``h.v``: ``m.v``) ``_loop_alias.py``'s, and what ``_Region``
answers of a slot from what it noted (``carried``...) ``_loop_queries.py``'s.
"""
from __future__ import annotations

import copy
import types

from ..bytecode import instructions
from ..chains import MISSING
from ..names import _global_names
from ..owners import _attr, _own_module, own_holder, own_object
from ..static_attrs import getattr_static
from ._loop_alias import (forget_names, forget_received, forget_set, others, received,
                          same_names, set_through)
from ._loop_callees import _child_args, _launcher, _made_here, _method_load, _slot_read
from ._loop_flow import _Stored, _controlled, _decided, _graph, _guards, _trips, span, states
from ._loop_names import TABLE_DEPTH, callable_items
from ._loop_receives import callee_may, reached_names
from ._loop_setters import by_setter, setter_sets
from ._loop_operands import (ALIASED, UNKNOWN, _CALLS, _CLAMPS, _arguments, _handed_on,
                             _iterated, _keyed_any, _made, _parameters, _read_by, _taken,
                             picked, through)
from ._loop_paths import _MAX_ITEMS, _WHOLE, _resolve, _text, _within
from ._loop_queries import RegionQueries
from ._loop_stack import (_ANY_KEY, _ATTR_LOADS, _ATTR_STORES, _CONSTS, _ITEM_STORES, _JUMPS,
                          _LOADS, _STORES, _SUBSCRIPTS, _begin, _chain, _holder, _item_read,
                          _reads_item, _reported, _set, _swapped)

_MAKERS = frozenset({"empty", "zeros"})   # s.empty(n), body.zeros((m, 4), np.float32)
_SHIFTS = frozenset({"STORE_FAST_LOAD_FAST", "GET_ITER"})   # (stores too: a comprehension's)


def _computed(code_ins: list, members: set, scope: dict) -> dict:
    """The attributes the code loads off objects of the program's own that are
    properties or methods (``st.src``, ``st.src()``: ``return self.bufs[self.i]``),
    and the items it loads off those whose class defines ``__getitem__`` (``st[0]``;
    ``st[k]``, by ``_ANY_KEY``) or of a namedtuple (``sel[0]``, its field ``sel.i``),
    by their path -> the attributes of the same object
    their code reads, four levels deep (a property or a method reading another),
    each also taken whole."""
    out: dict = {}
    for j, ins in enumerate(code_ins):
        attr = ins.opname in ("LOAD_ATTR", "LOAD_METHOD")
        if j in members and (attr or _reads_item(ins)):
            path = _chain(code_ins, j) if attr else _item_read(code_ins, j)
            if path is not None and len(path) > 1 and path not in out:
                holder = _resolve(scope, path[:-1])
                reads = _field_read(holder, path[-1]) or _getter_reads(
                    holder, path[-1][1] if attr else "__getitem__")   # st[0]: __getitem__
                # what a __getattr__ answers through (a proxy's inner object, a dict of
                # settings) is read for the one attribute asked, not whole
                whole = not (attr and _by_getattr(holder, path[-1][1]))
                if reads:
                    out[path] = {q for r in reads for q in (
                        (path[:-1] + r, path[:-1] + r + (_WHOLE,)) if whole else
                        (path[:-1] + r,))}
    return out


def _field_read(obj, step: tuple) -> list:
    """``[((".", field),)]`` where ``step`` takes an item of a namedtuple by its
    position (``sel[0]``: its field ``sel.i``, as which it is watched), else []."""
    fields = _attr(type(obj), "_fields")
    kind, key = step
    if kind != "[]" or not isinstance(obj, tuple) or not isinstance(fields, tuple) or \
            type(key) is not int or not -len(fields) <= key < len(fields):
        return []
    return [((".", fields[key]),)]


def _getter_reads(obj, name: str, depth: int = 0, start: int = 0) -> list:
    """The steps (``((".", "bufs"),)``) of the attributes of ``obj``, an object of
    the program's own (or a namedtuple of a class it defines), that the getter of
    its property ``name``, or its method ``name``, reads off its self for what it returns (its return statements, and
    the tests deciding which of them runs; not a log line's or an assert's), and,
    where one is a property or a method too, those its code reads so; for an
    attribute neither the object nor its class holds, those its class's
    ``__getattr__`` reads; for a getter calling ``super()``, also those of the
    same name's getter further along the class's MRO (from ``start``)."""
    if obj is not MISSING and own_holder(obj):   # Clock.pick(bufs), pp.next_pair()
        return _held_reads(obj, name, depth)
    if obj is MISSING or not _own_getters(obj):
        return []
    mro = type(obj).__mro__
    at, prop = next(((i, vars(c)[name]) for i, c in enumerate(mro)
                     if i >= start and name in vars(c)), (len(mro), None))
    if prop is None and not start and name not in _own_dict(obj):   # its __getattr__
        prop = getattr_static(type(obj), "__getattr__", None)
    fget = getattr(prop, "fget", None) if isinstance(prop, property) else prop
    if not isinstance(fget, types.FunctionType) or not fget.__code__.co_argcount:
        return []
    code = fget.__code__
    own = _Region((code, -1, 1 << 62), {})
    me = code.co_varnames[0]
    out = []
    for attr in dict.fromkeys(q[1][1] for q in own.returned() if q[0] == me and
                              len(q) > 1 and q[1][0] == "."):
        out.append(((".", attr),))
        if depth < 3:
            out += _getter_reads(obj, attr, depth + 1)
    if "super" in code.co_names and depth < 3:   # return super().src
        out += _getter_reads(obj, name, depth + 1, at + 1)
    return out


def _held_reads(holder, name: str, depth: int) -> list:
    """``_getter_reads`` of a class or a module of the program's own
    (``own_holder``): the steps of its attributes that its function ``name`` (a
    classmethod, by its ``cls``; a staticmethod, by the class's global name; a
    module's function, by the module's globals) reads for what it returns
    (``Clock.pick(bufs)`` returning ``bufs[cls.k % 2]``: ``cls.k``;
    ``pp.next_pair()`` returning ``BUFS[K % 2]``: ``K``, ``BUFS``), and, where one
    is such a function too, those it reads so."""
    module = isinstance(holder, types.ModuleType)
    raw = _own_dict(holder).get(name) if module else \
        next((vars(c)[name] for c in holder.__mro__ if name in vars(c)), None)
    fn = _attr(raw, "__func__", raw)   # (a classmethod's, a staticmethod's function)
    if not isinstance(fn, types.FunctionType) or module and fn.__globals__ is not \
            _own_dict(holder):
        return []
    code = fn.__code__
    me = code.co_varnames[0] if isinstance(raw, classmethod) and code.co_argcount else None
    read = set(_global_names(code))
    names = {g for g in read if fn.__globals__.get(g, MISSING) is holder}
    out = []
    for q in _Region((code, -1, 1 << 62), {}).returned():
        if module and q[0] in read:
            step = (".", q[0])
        elif (q[0] == me or q[0] in names) and len(q) > 1 and q[1][0] == ".":
            step = q[1]
        else:
            continue
        if (step,) not in out:
            out.append((step,))
            if depth < 3:
                out += _getter_reads(holder, step[1], depth + 1)
    return out


def _own_getters(obj) -> bool:
    """Whether the getters of ``obj``'s class are the program's own: an object of its
    own, or a namedtuple of a class it defines (``sel.buf`` reading ``self.i``)."""
    t = type(obj)
    return own_object(obj) or isinstance(obj, tuple) and \
        isinstance(_attr(t, "_fields"), tuple) and _own_module(t)


def _by_getattr(obj, name: str) -> bool:
    """Whether ``obj.name`` is answered by its class's ``__getattr__``: neither the
    object nor its class holds it."""
    return own_object(obj) and getattr_static(type(obj), name, None) is None and \
        name not in _own_dict(obj)


def _own_dict(obj) -> dict:
    """An object's ``__dict__``, read without running its own code (a
    ``__getattr__`` answering for a slotted object): empty where it has none."""
    try:
        d = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return {}
    return d if isinstance(d, dict) else {}


_LAUNCH, _ON_OBJECT = "launch", "on object"   # (_Region._targets)


class _Region(RegionQueries):
    """What a body's code (a code object, and the offsets it lies strictly
    between) reads before it stores it (slots by their path: a name, ``st.k``,
    ``d["k"]``, as ``_slots`` keys them), and what it reads to index by before
    it sets it: every slot a subscript's key loads (``bufs[k % 2]``,
    ``a[k * 4:(k + 1) * 4]``; a launch's ``k[grid, block, body]`` too, and the
    size of ``k.forall(n, stream=body)``), and what a name the body set before
    was computed from (``lo = k * 4`` then ``a[lo:lo + 4]``)."""

    def __init__(self, code: tuple, scope: dict, keep=None, now=None):
        obj, lo, hi = code
        self.scope = scope           # what the names held when the body began
        self.same = same_names(scope)   # name -> the others holding its object then
        self._fresh()
        g = _graph(obj)
        code_ins = g.ins
        entry, members, linear = span(g, lo, hi, keep)   # (keep: the code after a block)
        self.held = {_holder(code_ins, i) for i in members}   # loads of what a step
        #                                                     takes (st of st.k)
        self.reports = _reported(code_ins)   # values only printed, logged, asserted
        self.guards = _guards(code_ins, members)   # tests and for loops: what they decide
        made = _computed(code_ins, members, scope)   # a slot stored -> what its value was
        #                              computed from; a property read -> what it reads
        noted = [i for i in sorted(members) if code_ins[i].positions is not None and
                 code_ins[i].positions.lineno is not None]
        self.taken = None   # jump -> where it goes each iteration (if FLAG:), for _made
        if linear:   # no branch: in code order, stored (the paths stored so far) growing
            stored = _Stored()
            for i in noted:
                self._note(code_ins, i, stored, made)
            return
        self.taken = _decided(g, members, scope, now) if now is not None else None
        scratch, noted = copy.copy(self), set(noted)   # (notes nothing of its own)
        scratch._fresh()
        shifts = "setattr" in obj.co_names   # (setattr(st, "w", v) stores st.w)

        def step(i: int, stored: set, made: dict) -> bool:
            op = code_ins[i].opname
            if i in noted and (op in _SHIFTS or op in _STORES or op in _ATTR_STORES or
                               op in _ITEM_STORES or shifts and op in _CALLS):
                scratch._note(code_ins, i, stored, made)
                return True
            return False
        for block, (stored, made) in states(g, entry, members, (_Stored(), made), step,
                                            self.taken):   # (if FLAG: the branch taken)
            for i in block:
                if i in noted:
                    self._note(code_ins, i, stored, made)

    def _fresh(self) -> None:
        """Empty what the code was found to read."""
        self.indexed: set = set()    # paths read to index by
        self.sized: set = set()      # those read to size a temporary by
        self.first: dict = {}        # path -> "load" where some path of the code loads it
        #                              before storing it, else "store" where it stores it
        self.calls: dict = {}        # line -> the stored paths its calls' arguments read
        self.whole: set = set()      # paths read whole before stored (b.zeros(shape))
        self.read_whole: list = []   # (instruction, path) of each of those reads
        self.handed: dict = {}       # (id of its instruction, path) -> (the callee's path,
        #                              the parameter): those read as a call's argument
        self.passes: list = []       # (line, callee's path, {parameter: what it reads},
        #                              the same but for the arguments clamps compute)
        self.takes: dict = {}        # line -> what its calls' arguments read (but a clamp's)
        self.callees: dict = {}      # line -> what its calls' callees read (go = k[1, 4,
        #                              body] then go(x): k)
        self.decisions: list = []    # (what a for loop's or a test's outcome reads,
        #                              the lines it decides to run)
        self.launches: set = set()   # lines of kernel launches, k[grid, block, body](...)
        self.blind: list = []        # (line, what the arguments read, or None: anything) of
        #                              calls of a function the code cannot tell
        self.returns: set = set()    # what its return statements read
        self.return_lines: set = set()

    def _note(self, code_ins: list, i: int, stored: set, made: dict) -> None:
        ins = code_ins[i]
        names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
        op = ins.opname
        if op == "STORE_FAST_LOAD_FAST":   # one name stored, then one loaded
            forget_names(stored, names[:1])
            stored.add(names[:1])
            self.first.setdefault(names[:1], "store")
            self._loaded(names[-1:], stored)
        elif op in _STORES:
            if op.startswith("STORE"):   # x = <what it reads>
                _made(code_ins, i, names, stored, made, self.taken)
                guarded = self._guarded(code_ins, i, stored, made)
                made.update(((n,), made[(n,)] | guarded) for n in names if guarded)
            forget_names(stored, names)   # (h.v = 7.0, then h = w: h.v is w's)
            for n in names:
                stored.add((n,))
                self.first.setdefault((n,), "store")
        elif op in _LOADS:
            for n in names:
                self._loaded((n,), stored)
            whole = [(n,) for n in (names[:-1] if i in self.held else names)
                     if (n,) not in stored]
            self.whole.update(whole)
            self.read_whole += [(ins, q) for q in whole]
        elif op in _ATTR_STORES or op in _ITEM_STORES:
            at = _set(code_ins, i)
            paths = () if at is None else [at] if at[:1] not in stored else \
                list(dict.fromkeys(through(at, stored, made)))   # h = m, then h.v = 5.0
            forget_set(stored, made, self.same, paths if at is not None and (
                paths or at[:1] not in stored) else None)   # (m.v = 2.0: h.v, maybe)
            value = set()   # st.w = <what it reads>: below what it is stored in (and by)
            if op.startswith("STORE") and code_ins[i - 1].opname != "SWAP":
                held = _begin(code_ins, i, 1 if op in _ATTR_STORES else 2)[0]
                value = (_read_by(code_ins, *_swapped(code_ins, held), stored, made)
                         if held else set()) | self._guarded(code_ins, i, stored, made)
                if paths and at[:1] in stored:   # h.v = 7.0: h.v, then, is 7.0 for sure
                    made[at] = value
                    stored.add(at)
            kept = len(paths) > 1 or by_setter(self.scope, at)   # (m.v = 7.0, a property's)
            for path in paths:   # (m.v stored; h = m if flag else q: m.v or q.v, maybe)
                if op.startswith("STORE") and code_ins[i - 1].opname != "SWAP":
                    made[path] = value | (made.get(path, set())
                                          if kept or _ANY_KEY in path else set())
                for q in [path] + others(self.same, path, True) \
                        if not kept and _ANY_KEY not in path else ():
                    stored.add(q)   # (h = objs[i], then h.v = 5.0: none of them for sure)
                    self.first.setdefault(q, "store")
                    if q != path and path in made:   # objs[0].v = st.v: m.v is st.v
                        made[q] = made[path]
            for q, got in setter_sets(self.scope, at, value).items() \
                    if paths and at[:1] not in stored else ():
                stored.add(q)   # m.v = 7.0, a property's setter storing self._v
                self.first.setdefault(q, "store")
                made[q], made[at] = got, made.get(at, set()) | got   # (and m.v: m.s)
        else:
            path = _chain(code_ins, i)
            if path is not None and path[:1] not in stored:
                self._loaded(path, stored)
                if i not in self.held:
                    self.whole.add(path)
                    self.read_whole.append((ins, path))
            elif path is not None and not set_through(path, stored):   # h = m, then
                for q in through(path, stored, made):   # h.v: a read of m.v
                    self._loaded(q, stored)
            elif op in _ATTR_LOADS or _reads_item(ins):   # objs[k].v: any item's v
                path = _keyed_any(code_ins, i)
                if path is not None and _ANY_KEY in path and path[:1] not in stored:
                    self._loaded(path, stored)
        if op == "RETURN_VALUE" or op == "RETURN_CONST":   # (a getter's: what it gives)
            self.return_lines.add(ins.positions.lineno)
            if op == "RETURN_VALUE":
                self.returns |= _read_by(code_ins, i, 1, stored, made)
        if op == "GET_ITER":   # [x[o:o + 2] for o in offs]: (3.11) its own code
            self._comprehension(code_ins, i, stored, made)
        elif op == "FOR_ITER":   # for _ in lst, range(k): how many times it runs
            self.decisions.append((_trips(_iterated(code_ins, i, stored, made)),
                                   _controlled(code_ins, i)))
        elif "_IF_" in op and ins.opcode in _JUMPS:   # if k == 0, while j < k: which
            self.decisions.append((_read_by(code_ins, i, 1, stored, made),
                                   _controlled(code_ins, i)))
        if (op in _SUBSCRIPTS or _reads_item(ins)) and i not in self.reports and \
                not self._picks_text(code_ins, i, _SUBSCRIPTS.get(op, 2), stored):
            # its key read to index by (or to size a launch by, k[grid, block, body])
            self.indexed |= _read_by(code_ins, i, _SUBSCRIPTS.get(op, 2) - 1, stored, made)
        elif op in _CALLS and code_ins[i - 1].opname != "PRECALL" or \
                op == "CALL_FUNCTION_EX":   # (3.11: PRECALL, CALL)
            self._call(code_ins, i, stored, made)

    def _guarded(self, code_ins: list, i: int, stored: set, made: dict) -> set:
        """What the tests and the for loops deciding whether the store
        ``code_ins[i]`` runs read (``if mode == 0: v = 1.0`` else ``v = 5.0``: ``v``
        holds ``mode`` too, so the work taking ``v`` takes what ``mode`` picked)."""
        at, out = code_ins[i].offset, set()
        for j, lo, hi in self.guards:
            if lo <= at < hi and j != i:
                out |= _trips(_iterated(code_ins, j, stored, made)) \
                    if code_ins[j].opname == "FOR_ITER" else \
                    _read_by(code_ins, j, 1, stored, made)
        return out

    def _loaded(self, path: tuple, stored: set) -> None:
        """Note a load of the slot at ``path``: read before stored, where some path
        to it does not store it first."""
        for q in [path] + others(self.same, path):   # (h.v, where h held m: m.v)
            if q not in stored:
                self.first[q] = "load"

    def _comprehension(self, code_ins: list, i: int, stored: set, made: dict) -> None:
        """Note the code of a comprehension (3.11: a function of its own, called
        on the iterator that ``code_ins[i]`` makes) as the body's, its ``.0``
        made from what the iterable reads (on 3.12 it is inlined)."""
        start = _begin(code_ins, i, 1)[0]
        if start < 2 or code_ins[start - 1].opname != "MAKE_FUNCTION" or \
                not isinstance(code_ins[start - 2].argval, types.CodeType):
            return
        inner = list(instructions(code_ins[start - 2].argval))
        stored.add((".0",))
        made[(".0",)] = _read_by(code_ins, i, 1, stored, made)
        got = picked(code_ins, _begin(code_ins, i, 1)[0], i)
        made[(ALIASED, ".0")] = frozenset({UNKNOWN} if got is None else got)
        held, self.held = self.held, {_holder(inner, j) for j in range(len(inner))}
        reports, self.reports = self.reports, _reported(inner)
        guards, self.guards = self.guards, _guards(inner, range(len(inner)))
        for j, ins in enumerate(inner):
            if ins.positions is not None and ins.positions.lineno is not None:
                self._note(inner, j, stored, made)
        self.held, self.reports, self.guards = held, reports, guards

    def _call(self, code_ins: list, i: int, stored: set, made: dict) -> None:
        """Note the call ``code_ins[i]``: what its arguments read that the body
        stored first, and what a temporary's or a launch's size reads."""
        n, may = _taken(code_ins[i]), stored.may   # (stored on some path to it)
        j = _begin(code_ins, i, n)[0]
        callee = code_ins[j - 1] if j > 0 else None
        child = callee is not None and callee.opname in _ATTR_LOADS and \
            callee.argval == "child" and code_ins[i].opname != "CALL_FUNCTION_EX" and \
            self._on_stream(code_ins, j - 1, stored)   # body.child(step, x)
        # (a child's function is called, as step(body, x) calls step: no argument of work)
        read = _child_args(code_ins, i, n, stored, made) if child else \
            _read_by(code_ins, i, n, stored, made)
        line = code_ins[i].positions.lineno
        if j > 0:   # (the callable, and the NULL or the self beside it)
            self.callees.setdefault(line, set()).update(_read_by(code_ins, j, 2, stored, made))
        self.calls.setdefault(line, set()).update(   # what the body stored first
            q for q in read if any(q[:m] in may for m in range(1, len(q) + 1)) or
            q[-1] == _WHOLE and any(_within(q[:-1], p) for p in may))
        targets = self._targets(code_ins, j, stored, made) if callee is not None else []
        if targets is None:   # (lambda: step(body, st))(), make()(body, st)
            self.blind.append((line, None))
        elif targets is _ON_OBJECT:   # objs[k].step(body, st), make().run(body, st)
            self.blind.append((line, _read_by(code_ins, i, n, stored, made)))
        if targets is _LAUNCH:   # k[grid, block, body](x)
            self.launches.add(line)
        if callee is not None and callee.opname == "LOAD_GLOBAL" and \
                callee.argval == "setattr" and code_ins[i].opname in _CALLS:
            self._setattr(code_ins, i, n, stored, made)
        slot = _slot_read(code_ins, i, n, self.scope)   # getattr(st, "v", 1.0), d.get("k")
        if slot is not None and (i + (code_ins[i].opname == "PRECALL")) in self.reports:
            slot = None   # (print(getattr(st, "v", None)): only reported)
        for q in () if slot is None or set_through(slot, stored) else [slot] \
                if slot[:1] not in stored else through(slot, stored, made):
            self._loaded(q, stored)
        if child:
            self.takes.setdefault(line, set()).update(
                _child_args(code_ins, i, n, stored, made, False))
        elif callee is None or callee.opname != "LOAD_GLOBAL" or callee.argval not in _CLAMPS:
            self.takes.setdefault(line, set()).update(_handed_on(code_ins, i, n, stored, made))
        path = _chain(code_ins, j - 1) if j > 0 else None
        if path is not None and targets == [path] and code_ins[i].opname != "CALL_FUNCTION_EX":
            for key, end in _parameters(code_ins, i, n):   # a slot taken whole: finish(st)
                self.handed[id(code_ins[end - 1]), _chain(code_ins, end - 1)] = (path, key)
        if type(targets) is list and targets:   # each function the callee may be
            if code_ins[i].opname != "CALL_FUNCTION_EX":
                args = (_arguments(code_ins, i, n, stored, made),
                        _arguments(code_ins, i, n, stored, made, False))
            else:   # step(body, *args): which parameter takes what, unknown
                args = ({None: _read_by(code_ins, i, n, stored, made)},) * 2
            self.passes += [(line, q, *args) for q in targets]
        if child:
            self._child(code_ins, i, n, stored, made, line)
        if callee is not None and callee.opname in _ATTR_LOADS:
            if callee.argval in _MAKERS and self._on_stream(code_ins, j - 1, stored):
                self.sized |= _read_by(code_ins, i, n, stored, made)
            elif callee.argval == "forall" or callee.argval == "launch" and \
                    self._on_stream(code_ins, j - 1, stored):
                # k.forall(m, stream=body), body.launch(k, *cfg, x): a launch's size
                self.indexed |= _read_by(code_ins, i, n, stored, made)
        if targets is not _LAUNCH:   # h.set(v), fill(m): may store under h, m
            on = callee is not None and callee.opname in _ATTR_LOADS   # (3.12: may be none)
            may = callee_may(self.scope, targets, on) \
                if type(targets) is list else None   # (print(m), describe(m): keep)
            names = None if targets is None or targets is _ON_OBJECT else \
                received(code_ins, i, j, n, may)
            if names is not None and type(targets) is list and targets:   # setter = m.set: m
                names |= reached_names(self.scope, targets, on, stored)
            forget_received(stored, made, self.same, names)

    def _child(self, code_ins: list, i: int, n: int, stored: set, made: dict,
               line: int) -> None:
        """Note ``body.child(step, x)`` as a call of ``step`` (a graph function, a
        graph method), which records it with ``step(child_stream, x)``: its
        arguments fill the parameters at the same positions, the first, the
        stream's, left out. One the code cannot tell is blind."""
        end = next((end for key, end in _parameters(code_ins, i, n) if key == 0), None)
        picks = picked(code_ins, _begin(code_ins, end, 1)[0], end) if end is not None else None
        got = [] if picks is not None else None   # (step if m else other: each)
        for q in picks or ():
            more = self._aliases(q, stored, made)
            got = None if more is None or got is None else got + more
        if not got:
            self.blind.append((line, _read_by(code_ins, i, n, stored, made)))
            return
        args = tuple({k: v for k, v in _arguments(code_ins, i, n, stored, made, c).items()
                      if k != 0} for c in (True, False))
        self.passes += [(line, q, *args) for q in got]

    def _targets(self, code_ins: list, j: int, stored: set, made: dict):
        """The paths of the functions a call whose arguments begin at ``code_ins[j]``
        may call: its callee's path, or every function a name the body set may
        hold (``g = step``; ``smoother = a if m == "j" else b``; ``step =
        TABLE[name]``; ``for step in (a, b)``), an item of a table by a key
        computed (``TABLE[name](body, st)``: each function it holds), a value of a
        conditional expression; ``_LAUNCH`` for a kernel's launch (``k[grid,
        block, body]``), ``_ON_OBJECT`` for a method of an object the code
        computes (``objs[k].step(...)``), None for a function it cannot tell
        (one a call returns, a lambda made there)."""
        callee = code_ins[j - 1]
        start = _begin(code_ins, j, 1)[0]
        if callee.opname in _ATTR_LOADS and (_method_load(callee) or not any(
                c.opcode in _JUMPS for c in code_ins[start:j - 1])):   # (not each arm of
            path = _chain(code_ins, j - 1)                             # a.f if m else a.g)
            if path is not None:
                got = self._aliases(path, stored, made)
                return _ON_OBJECT if got is None else got   # (t = make(); t.run(body, st))
            h = _holder(code_ins, j - 1)   # ("it {}".format(k): a constant's method)
            return [] if h >= 0 and code_ins[h].opname in _CONSTS else _ON_OBJECT
        if _reads_item(callee) and (code_ins[j - 2].opname == "BUILD_TUPLE" or
                                    type(code_ins[j - 2].argval) is tuple and
                                    code_ins[j - 2].opname in _CONSTS):
            return _LAUNCH   # k[grid, block, body]: a tuple of its launch's settings
        if code_ins[j - 1].opname == "GET_ITER" and \
                _made_here(code_ins, _begin(code_ins, j - 1, 1)[0] - 1):
            return []   # [o for o in offs] (3.11: its own code, noted as the body's)
        if _launcher(code_ins, j - 1):
            return _LAUNCH   # k.forall(m, stream=body)(x)
        picks = picked(code_ins, start, j)
        if picks is None:
            return None
        out = []
        for q in picks:
            got = self._aliases(q, stored, made)
            if got is None:
                return None
            out += got
        if _reads_item(callee) and not out:
            return _LAUNCH   # k[cfg]: an item of no table of functions
        return list(dict.fromkeys(out))

    def _aliases(self, path: tuple, stored: set, made: dict, depth: int = 0):
        """The paths of the functions the callee at ``path`` may be: those a name
        the body set may hold (``made``: what its stores picked), each callable
        item of a table by a key computed; None where a store computed it
        otherwise."""
        if path[:1] in stored.may:
            picks = made.get((ALIASED,) + path[:1])
            if picks is None or UNKNOWN in picks or depth > 8:
                return None
            out = []
            for q in picks:
                got = self._aliases(q + path[1:], stored, made, depth + 1)
                if got is None:
                    return None
                out += got
            return out
        if _ANY_KEY not in path:
            items = callable_items(_resolve(self.scope, path), path, TABLE_DEPTH)   # (for step in
            #                                   STEPS, for name, step in PAIRS: any it holds)
            return None if items is None else [path] + items
        at = path.index(_ANY_KEY)
        holder, rest = _resolve(self.scope, path[:at]), path[at + 1:]
        if rest and type(holder) in (list, tuple, dict):   # NESTED[k]["a"](body, x): what
            if len(holder) > _MAX_ITEMS or depth > 8:      # each item holds there
                return None
            out = []
            for k in holder if type(holder) is dict else range(len(holder)):
                got = self._aliases(path[:at] + (("[]", k),) + rest, stored, made, depth + 1)
                if got is None:
                    return None
                out += got
            return out
        items = callable_items(holder, path[:at]) if holder is not MISSING else None
        return None if items is None else [q + rest for q in items]

    def _setattr(self, code_ins: list, i: int, n: int, stored: set, made: dict) -> None:
        """``setattr(st, "w", 1.0 / (it + 1))``, a name the code spells: a store of
        ``st.w`` made from what its value reads, as ``st.w = ...`` is."""
        ends = [end for key, end in _parameters(code_ins, i, n) if type(key) is int]
        if len(ends) != 3 or code_ins[ends[1] - 1].opname not in _CONSTS or \
                type(code_ins[ends[1] - 1].argval) is not str:
            return
        holder = _chain(code_ins, ends[0] - 1)
        forget_set(stored, made, self.same, None if holder is None or holder[:1] in stored
                   else [holder + ((".", code_ins[ends[1] - 1].argval),)])
        if holder is not None and holder[:1] not in stored:
            path = holder + ((".", code_ins[ends[1] - 1].argval),)
            made[path] = _read_by(code_ins, ends[2], 1, stored, made) | \
                self._guarded(code_ins, i, stored, made)
            stored.add(path)
            self.first.setdefault(path, "store")

    def _picks_text(self, code_ins: list, i: int, values: int, stored: set) -> bool:
        """Whether the subscript ``code_ins[i]`` picks from a string, or a list,
        tuple or dict of strings, that the code names and the body has not set
        (``PHASES[k % 3]`` handed to a log): no work is picked by it."""
        start, beyond = _begin(code_ins, i, values - 1)   # the key's code
        path = _chain(code_ins, start - 1) if start > 0 and not beyond else None
        if path is None or any(path[:n] in stored.may for n in range(1, len(path) + 1)):
            return False
        return _text(_resolve(self.scope, path))

    def _on_stream(self, code_ins: list, j: int, stored: set) -> bool:
        """Whether the ``.zeros``/``.empty``/``.launch`` that ``code_ins[j]`` loads
        may be a graphtrace stream's (the body's, ``s``'s): not where it is a
        module's or another object's the body began with (``np.zeros(k)`` on the
        host)."""
        path = _chain(code_ins, j)
        if path is None or any(path[:n] in stored.may for n in range(1, len(path))):
            return True
        holder = _resolve(self.scope, path[:-1])
        return holder is MISSING or type(holder).__module__.startswith("graphtrace")

"""The program's own objects a graph method's ``self`` holds (``self.opt``,
``self.layers[0]``, and those they hold in turn), and those a graph function
reaches by a global or closure name (``OPT``, ``STATE``: ``Reach.objects``).

Such an object is part of what the method computes with. Its arrays are the
graph's, named ``self.opt.v`` and rebound as ``self``'s own are; what its
methods read off it when traced (``self.lr`` of ``self.opt.update(s, g, w)``)
is baked into the graph. So its arrays join the method's reached arrays, and
the cache key holds each object's class and the values it holds by the names
the traced code reads: ``m.opt.lr = 0.1``, or another optimizer put in
``m.opt``, traces anew.

Those names are the attributes the method's code (and that of the methods of
its class it calls) loads, and those the methods of the held objects' classes
it names load in turn. State is left out of the key: what methods handed to
``s.host`` change on their object (they run between calls), what the graph's
code changes off self or a name (``self.state.step += 1``), and what the trace
itself is seen to change (``state_changed``).

Objects of a library's class are not walked; nor are containers beyond
``_MAX_DEPTH`` levels. An object held by a name whose methods the graph does
not call and that holds no array (``CFG.lr``) is left to ``Reach``'s chains
(the call keeps its shortcut); one that does takes the full check.
"""
from __future__ import annotations

import dataclasses
import types
from functools import partial

from .arrays import _kinds
from .bases import _holder, _super_bases, _with_wrapped
from .chains import MISSING, _static_attr, chain, changes, value_chains
from .held_keys import _ALL, _SKIPPED, Watched
from .weak_types import store
from .host_chains import host_callbacks, host_chain_names, host_chains, host_methods
from .named_keys import keys_read_by
from .names import _loaded, _methods_named, reads_fields, widest
from .owners import _ARRAY_KINDS, _attr, _attributes, _bound_class, _bound_to, _dunders, \
    _followed, _graph_class, _holds_own, _python_function, _python_helper, class_attribute, \
    class_held, container, contents, own_class, own_object
from .probe import _repr
from .tree import children
from .values import _MAX_DEPTH, _is_value, _leaves

__all__ = ["callback_arrays", "held_objects", "held_arrays", "held_functions", "held_methods",
           "loaded_names", "own_class", "settings_alone"]


def held_objects(obj, label: str | None = None, seen: set | None = None,
                 names: frozenset | None = None, deep: list | None = None,
                 handed: dict | None = None, hosted: list | None = None,
                 bound: list | None = None) -> list:
    """``(label, object, its attributes)`` for each object of the program's own (``own_class``)
    that ``obj`` (a method's ``self``) holds in its attributes of ``names`` (the
    attribute names the traced code loads: all where None), directly or in lists,
    tuples and dicts, deques, sets and the standard library's other containers
    (``owners.contents``), bound to a method or handed to a ``functools.partial`` it
    holds (``self.fn.__self__`` of ``self.fn = act.apply``: ``_bound``), and those
    these hold so in turn; each object once, under the first label found
    (``self`` itself never). With ``label``, ``obj`` is such an object held by a
    global or closure name (``OPT``): itself and what it holds, not those in
    ``seen`` (ids, updated). The walk goes ``_MAX_DEPTH`` objects and containers
    deep: the labels of those it finds deeper are appended to ``deep``. The
    callbacks the code only hands to ``s.host`` (``handed``: label ->
    ``handed.Hand`` of a container or value, ``self.hooks``, ``TABLE``, ``self.fn``)
    are no methods the graph calls: ``(class, function)`` of those bound to an
    object or handed one by a partial are appended to ``hosted`` (followed as
    callbacks by ``held_methods``), the objects walked for their arrays; those of
    the others, which the graph calls, to ``bound`` (what ``held_methods`` found
    depends on them: ``m.layer.forward = MethodType(fwd, m.layer)``)."""
    out: list = []
    walk = _Walk(set() if seen is None else seen, out, names, deep, handed, hosted, bound)
    if label is not None:
        walk(obj, label, 0)
        return out
    walk.seen.add(id(obj))
    attributes = _attributes(obj)
    for name, v in attributes + _class_objects(type(obj), names, attributes):
        if names is None or name in names:
            walk(v, f"self.{name}", 0)
    return out


def _class_objects(t: type, names, attributes) -> list:
    """``(name, object)`` of the objects of the program's own class ``t`` (or a
    base) holds by the names the code loads that its instance does not hold
    itself (``class Model: opt = SGD(0.1)`` read as ``self.opt``): walked as the
    instance's (their settings watched; one put on the class anew, found anew)."""
    if not names:
        return []
    held = _CLASS_HELD.get((t, names))
    if held is None:   # once per class and names: which of them the class holds so
        held = store(_CLASS_HELD, (t, names), tuple(
            name for name in sorted(names) if not name.startswith("__") and
            own_object(class_attribute(t, name))), t)
    if not held:
        return []
    own = {name for name, _ in attributes}
    return [(name, v) for name in held if name not in own and
            own_object(v := class_attribute(t, name))]


_CLASS_HELD: dict = {}   # (class, names) -> the names its class holds objects by
# (weak_types.store: a class made at run time is not kept by it)



class _Walk:
    """One walk of ``held_objects``: what it found, and what it was told."""

    __slots__ = ("seen", "out", "names", "deep", "handed", "hosted", "bound")

    def __init__(self, seen, out, names, deep, handed, hosted, bound):
        self.seen, self.out, self.names, self.deep = seen, out, names, deep
        self.handed, self.hosted, self.bound = handed, hosted, bound

    def __call__(self, v, label: str, depth: int, callback: bool = False) -> None:
        hand = self.handed.get(label) if self.handed else None
        callback = callback or hand is not None and hand.whole_callback   # s.host(self.fn)
        if depth > _MAX_DEPTH:
            if self.deep is not None and id(v) not in self.seen and _holds_own(v):
                self.deep.append(label)   # not walked: Holdings.walk warns (DepthWarning)
            return
        t = type(v)
        if t in _SKIPPED or _kinds.get(t) in _ARRAY_KINDS:
            return
        names = self.names
        if own_object(v):
            if id(v) in self.seen:
                return
            self.seen.add(id(v))
            attributes = _attributes(v)
            self.out.append((label, v, attributes))
            for name, x in attributes + _class_objects(t, names, attributes):
                k = type(x)
                if k not in _SKIPPED and _kinds.get(k) not in _ARRAY_KINDS and \
                        (names is None or name in names):   # (at once)
                    self(x, f"{label}.{name}", depth + 1)
            return
        if t is partial or _bound_class(t):   # self.fn = act.apply, partial(apply, act)
            for at, x in _bound(v, self.hosted if callback else None, self.bound):
                if type(x) not in _SKIPPED:
                    self(x, f"{label}{at}", depth + 1)
            return
        if (isinstance(v, (list, tuple)) or container(t) in ("seq", "set")) and not any(
                own_class(k) or issubclass(k, _WALKED) or container(k) or _bound_class(k)
                for k in set(map(type, v))):   # numbers or arrays alone: at C speed
            return
        items = children(v)
        if items is None:   # a deque, a set, a mapping, a weak reference (owners.contents)
            items = contents(v, label) if container(t) else ()
            label = None
        for k, x in items:
            if type(x) not in _SKIPPED:
                self(x, k if label is None else f"{label}[{_repr(k)}]", depth + 1,
                     callback or hand is not None and hand.callback(k))


_WALKED = (list, tuple, dict, types.MethodType, partial)   # what a list's items are walked for
_BOUND: dict = {}   # class -> the functions bound to its objects held as methods or partials


def _bound(v, hosted=None, found=None) -> list:
    """``(label suffix, value)`` of what a bound method (a graph method's too,
    ``gt.graph(act.apply)``) or a ``functools.partial`` holds: the object it is
    bound to, the function, the arguments. A call of it
    runs its function on them, so that function is recorded (``_BOUND``) for
    the class of each object of the program's own among them: ``held_methods``
    reads it as a method of that class (``self.fn = act.apply`` reading
    ``self.a``; ``partial(apply, act)`` reading ``layer.a``), and appended to
    ``found`` as ``(class, function)``; but a callback's is appended to
    ``hosted`` instead."""
    bound = _bound_to(v)
    if bound is not None:
        parts = [(".__self__" if type(v) is types.MethodType else ".instance", bound[0])]
        fn = bound[1]
    else:
        parts = [(".func", v.func)] + [(f".args[{i}]", x) for i, x in enumerate(v.args)] + \
            [(f".keywords[{_repr(k)}]", x) for k, x in v.keywords.items()]
        fn = v.func
    fn = _python_function(fn)
    for _, x in parts if fn is not None else ():
        if not own_object(x):
            continue
        if hosted is None:
            _BOUND.setdefault(type(x), {})[fn] = None
            if found is not None:
                found.append((type(x), fn))
        elif (type(x), fn) not in hosted:   # a callback handed to s.host: no method called
            hosted.append((type(x), fn))
    return parts


def held_functions(obj, objects, names: frozenset, mine=None, handed=None) -> tuple:
    """The Python functions (not a library's) ``obj`` (a method's ``self``; None
    for none) and the objects of ``held_objects`` hold in their attributes of
    ``names``: directly, as a partial's function, a graph function's (``self.sub
    = inner`` of ``@gt.graph``), a method bound to ``obj`` (``self.fn =
    self.update``), or in containers (``self.acts = [relu]``, ``self.ops =
    {"sgd": self.update}``): the graph calls them as helpers, so what they reach
    by name is the graph's too (their ``Reach``, ``Holdings.walk``), and the
    names they load are read off the objects. Each once, in the order found.
    ``mine``, a list, gets those that run on ``obj`` (bound to it, a partial or
    closure holding it: ``lambda s, g: self.update(s, g)``), whose reads off it
    the call reads, but the callbacks the code only hands to ``s.host``
    (``handed``, as ``held_objects``')."""
    found: dict = {}
    for label, attributes in ([("self", _attributes(obj))] if obj is not None else []) + \
            [(label, attributes) for label, _, attributes in objects]:
        for name, v in attributes:
            if type(v) not in _SKIPPED and name in names and \
                    _kinds.get(type(v)) not in _ARRAY_KINDS:
                _functions(v, found, 0, obj, mine, f"{label}.{name}", handed)
    return tuple(found)


def _functions(v, found: dict, depth: int, obj=None, mine=None, label="", handed=None) -> None:
    hand = handed.get(label) if handed else None
    if hand is not None and hand.whole_callback:
        mine = None
    t = type(v)
    bound = None if obj is None else _bound_to(v) if _bound_class(t) else _bound_to(
        v.func) if t is partial and _bound_class(type(v.func)) else None   # partial(self.m)
    if t is types.FunctionType or t is partial or _graph_class(t) or bound is not None:
        f = _followed(bound[1] if bound else v.func if t is partial else v)   # self.sub = inner
        if f is not None and (bound is None or bound[0] is obj):   # self.fn = self.update
            found[f] = None
            if mine is not None and obj is not None and (bound or _runs_on(v, obj)):
                mine.append(f)
        return
    if depth > _MAX_DEPTH or t in _SKIPPED or own_class(t):
        return
    if (isinstance(v, (list, tuple)) or container(t) in ("seq", "set")) and not any(
            k is types.FunctionType or k is partial or issubclass(k, (list, tuple, dict)) or
            container(k) or _graph_class(k) or _bound_class(k)
            for k in set(map(type, v))):   # numbers or arrays alone: at C speed
        return
    items = children(v)
    for k, x in items if items is not None else contents(v, "") if container(t) else ():
        _functions(x, found, depth + 1, obj,
                   None if hand is not None and hand.callback(k) else mine,
                   f"{label}[{_repr(k)}]", handed)


def _runs_on(v, obj) -> bool:
    """Whether function or partial ``v`` is handed ``obj`` (by a partial, or bound
    to it) or holds it by its closure or a default (``lambda s: self.update(s)``)."""
    if type(v) is partial:
        return _attr(v.func, "__self__", None) is obj or \
            any(x is obj for x in (*v.args, *v.keywords.values()))
    return any(_attr(cell, "cell_contents") is obj for cell in _attr(v, "__closure__") or ()) \
        or any(x is obj for x in (*(_attr(v, "__defaults__") or ()),
                                  *(_attr(v, "__kwdefaults__") or {}).values()))


def held_arrays(objects, names: frozenset | None = None) -> list:
    """``(label, array)`` for the arrays the objects of ``held_objects`` hold in
    their attributes of ``names`` (all where None; lists, tuples and dicts of
    them too)."""
    out = []
    for label, _, attributes in objects:
        for name, v in attributes:
            t = type(v)
            if t in _SKIPPED or names is not None and name not in names or own_object(v):
                continue
            if _kinds.get(t) in _ARRAY_KINDS:
                out.append((f"{label}.{name}", v))
            elif t is list and not set(map(type, v)) - _SKIPPED:
                continue   # a history of numbers (at C speed)
            else:
                out += _leaves(v, f"{label}.{name}")
    return out


def callback_arrays(objects, watched: Watched) -> list:
    """``(label, array)`` for the arrays the objects of ``held_objects`` hold by the
    attributes the key leaves out (not of ``watched.names``) where host callbacks
    are among their methods, which read them when they run (``s.host(SINK.report)``
    reading ``self.buf``), and those their classes hold by the names the callbacks
    read (``self.BUF`` of ``class Sink: BUF = h``, where ``sink`` holds no ``BUF`` of
    its own): but those the callbacks change in place (a history)."""
    if not watched.callbacks:
        return []
    out = []
    for label, obj, attributes in objects:
        state = set().union(*(watched.state.get(c, ()) for c in type(obj).__mro__))
        if _ALL not in state:
            held = attributes + [(k, v) for k, v in class_held(obj, attributes)
                                 if k in watched.reached]
            out += held_arrays([(label, obj, [(k, v) for k, v in held
                                              if k not in watched.names and k not in state])])
    return out


def settings_alone(roots, objects, names: frozenset) -> bool:
    """Whether the objects held by names (``roots``: ``(label, object)``) hold
    nothing but values by the names the code loads (``CFG.lr``): no other object
    of the program's own, no None or container where an array may come. An object
    a root holds in a dict or list (``CFG["schedule"]``) is another object: the
    code may hand it whole to a helper reading it, which no chain of names sees;
    a list, dict or set its class holds is read whole as an instance's is."""
    if len(objects) != len(roots) or {id(o) for _, o, _ in objects} != {id(v) for _, v in roots}:
        return False
    return all(v is not None and _is_value(v)   # (a kernel held: its identity, watched)
               for _, o in roots for name, v in _attributes(o) if name in names) and \
        not any(isinstance(class_attribute(type(o), name), _CHANGED_IN_PLACE)   # a list its
                for _, o in roots for name in names   # class holds (scales = [2.0]): whole
                if name[:2] != "__" and name not in _attr(o, "__dict__", {}))


_CHANGED_IN_PLACE = (list, dict, set, bytearray)


def held_methods(functions, heads: dict, classes, hosted=(), bound=()) -> tuple:
    """``(methods, watched)`` for the held objects of ``classes``: the methods of
    ``classes`` the code of ``functions`` (a method and the methods of its class
    it calls; a function and its helpers) names, and those they name in turn
    (and the bases' they call, ``super().update(...)``, ``Opt.update(self, ...)``;
    behind a decorator's wrapper, the method it wraps too: ``_with_wrapped``), as
    ``(class, name, what the class holds by that name, function)``, the class
    holding it by that name (a base's, for one reached by ``super()`` or called
    as ``Opt.update(self, ...)``: put on it anew, found again); and what the key
    reads off the objects (``Watched``): the attribute names all that code loads
    but the host callbacks' (they read when they run; a callback is told from
    another class's method of its name by the object its chain off ``heads``,
    name -> object, finds now: ``_callback_targets``), the values those methods
    read off their object by constant keys and attributes, and the state kept
    in held objects, which the key leaves out as ``self``'s own counters: what
    methods handed to ``s.host`` (``s.host(self.log.record, h)``, or a held
    object's ``s.host(self.record, h)``), and those they call, change on their
    object: they run between calls. What the traced code itself changes off
    them (``self.state.step += 1``, ``if not self.opt.started: ...;
    self.opt.started = True``) stays in the key: the trace tells state from a
    setting or a flag it read first (``state_changed``, ``first_reads``). The dunder
    methods of an object's class that syntax runs are followed (``_dunders``:
    ``layer(s, x)``, ``for layer in self.seq``); and the helper functions those
    methods call by a global name, read as methods of the class (``sgd(self, s,
    g, w)`` reading ``opt.lr``), as ``attribute_names`` reads self's methods';
    and the functions of the bound methods and partials held that hand it an
    object of the class (``_bound``: ``self.fn = act.apply``). ``hosted``: the
    functions of self's methods the code hands to ``s.host`` (``s.host(self.notify)``),
    followed as callbacks (``self.sink.read()`` in them); ``bound``, ``(class,
    function)`` of the held objects' methods it hands there off a container
    (``s.host(self.hooks["log"], h)``: ``held_objects``' ``hosted``), followed as
    callbacks of that class."""
    callbacks = frozenset().union(*(host_chain_names(f.__code__) for f in functions))
    # the (class, method) pairs of the callbacks whose objects the chains find now
    # (s.host(self.meter.update, h) beside self.opt.update(...): the meter's alone)
    resolved, targets = _callback_targets(functions, heads)
    todo = [(f, None, False) for f in functions] + [(f, None, True) for f in hosted]
    found, seen, names, reached = [], {}, set(), set()
    # seen: (class, name, function) -> callback
    direct = set()   # the keys of seen queued other than as a callback

    def queue(key, fn, owner, callback: bool) -> bool:
        # each function once; again where a callback reaches it (its changes: state)
        was = seen.get(key)
        if not callback:
            direct.add(key)
        if was is None or callback and not was:
            seen[key] = callback
            todo.append((fn, owner, callback))
        return was is None

    def follow(cls, name: str, method, callback: bool) -> None:
        # the method (a base's one, Opt.update(self, ...), by that base), those
        # behind its decorator, the bases' it reaches by super()
        at = _holder(cls, name, method)
        for at, f in [(at, method)] + _super_bases(cls, name, method, at):
            for fn in _with_wrapped(f):
                if queue((at, name, fn), fn, cls, callback):
                    found.append((at, name, class_attribute(at, name), fn))

    for cls, method in bound:   # s.host(self.hooks["log"], h) of a sink's record
        follow(cls, method.__name__, method, True)
    whole = _hosted_classes(functions, heads)   # s.host(CS): its __call__ a callback
    for cls in classes:   # layer(s, x), for layer in self.seq, cfg.lr of a __getattr__
        for name, method in _dunders(cls):
            follow(cls, name, method, name == "__call__" and cls in whole)
        for method in list(_BOUND.get(cls, ())):   # self.fn(s, x) of self.fn = act.apply
            follow(cls, method.__name__, method, False)
    state: dict = {}
    reads: dict = {}
    whole = ""   # what the code reads whole of what it is handed (names.reads_fields)
    while todo:
        f, owner, callback = todo.pop()
        code = f.__code__
        loaded = _loaded(code)
        if not callback:   # a host callback reads what it reads when it runs
            names |= loaded
            whole = widest((whole, reads_fields(f)))   # astuple(self.cfg), vars(CFG)
        else:   # (the objects it reaches are walked, their values not keyed)
            reached |= loaded
        for name in loaded if owner is not None else ():   # a helper it may hand its
            helper = _python_helper(f.__globals__.get(name))   # object: sgd(self, s, g, w)
            for fn in _with_wrapped(helper) if helper is not None else ():
                queue((owner, None, fn), fn, owner, callback)   # as a method of the class
        first = frozenset(code.co_varnames[:1])
        roots = frozenset(heads) | first if owner is None else first
        read, changed = value_chains(code, roots=roots)
        for head, steps in changed if owner is not None else ():
            if head in first:   # a callback's self.n += 1
                reads.setdefault(owner, set()).add(("changed", steps))
                if callback:
                    state.setdefault(owner, set()).add(steps[0][1] if steps else _ALL)
        for head, steps in read if owner is not None and not callback else ():
            if head in first and len(steps) >= 2:   # self.cfg["m"], self.lrs[0] (and
                # self.cfg[Phase.A]: by f's names)
                reads.setdefault(owner, set()).add(("read", keys_read_by(steps, f)))
        host = callbacks if owner is None else callbacks | host_chain_names(code)
        mine = targets if owner is None else {   # s.host(self.record, h) in its method
            (owner, steps[0]) for head, steps in host_chains(code)
            if (head,) == tuple(first) and len(steps) == 1}
        # the names code loads only as the method it hands to s.host (s.host(self.read)):
        # no call of another class's method of that name (self.sink.read() in read)
        only_hosted = host_methods(code) if owner is None and not callback else ()

        def kind(cls, name):   # True: a callback; False: called; None: neither
            if owner is None and name in resolved:   # found by its object
                hosted = (cls, name) in mine
                return None if not hosted and name in only_hosted else hosted
            return (cls, name) in mine or name in host

        for cls in classes:   # and those a held object's method hands to s.host itself
            for name, method, hosted in _calls_and_callbacks(code, cls, f, kind):
                follow(cls, name, method, callback or hosted)
    chains = {}
    for cls, found_reads in reads.items():
        changes_ = [steps for how, steps in found_reads if how == "changed"]
        chains[cls] = tuple(sorted(
            (str(chain("", steps)), chain("", steps).calls()) for how, steps in found_reads
            if how == "read" and not any(changes(steps, c) for c in changes_)))
    hosted = frozenset(key[2] for key in seen if key not in direct)
    if whole:   # every field of the dataclasses among them (EVERY: held_key reads all)
        names |= {f.name for cls in classes if dataclasses.is_dataclass(cls)
                  for f in dataclasses.fields(cls)}
    return tuple(found), Watched(frozenset(names), state, chains, hosted,
                                 frozenset(reached), whole=whole)


def _calls_and_callbacks(code, cls, fn, kind) -> list:
    """``(name, method, hosted)`` of the methods of ``cls`` that ``code`` (of ``fn``)
    names and those they name in turn (``_methods_named``); ``kind(cls, name)``
    tells one ``code`` hands to ``s.host`` (True), one it calls (False), one it
    names only as another object's callback (None: left out). One reached only
    through those it hands to ``s.host`` is a callback's too (``s.host(S.outer)``
    where ``outer`` calls ``self.read``), not a method the graph calls."""
    found = _methods_named(code, cls, fn=fn)
    kinds = {name: kind(cls, name) for name, _, _ in found}
    roots = {name for name, k in kinds.items() if k is not False}
    if not roots:
        return [(name, method, kinds[name]) for name, method, _ in found]
    called = {id(m) for _, m, _ in _methods_named(code, cls, skip=roots, fn=fn)}
    hosted = {name for name in roots if kinds[name]}
    handed = {id(m) for _, m, _ in _methods_named(code, cls, only=hosted, fn=fn)} \
        if hosted else set()
    return [(name, method, bool(kinds[name]) if id(method) in called else True)
            for name, method, _ in found if id(method) in called or id(method) in handed]


# dunder methods a traced call's use of an object does not run: making, copying,
# printing, pickling, hashing and comparing it, setting attributes, class set-up
# (a dataclass's __eq__ reads every field: its counters would join the key)
def _callback_targets(functions, heads: dict) -> tuple:
    """``(names, {(class, name)})``: the method names of the callbacks ``functions``
    hand to ``s.host`` through attribute chains of ``heads`` whose objects are
    found now (``s.host(self.meter.update, h)``: the meter's class), and those
    pairs. A name handed on by every chain so found is a callback of those
    classes alone, not of another class's method of that name the code calls
    (``self.opt.update(s, g, w)``)."""
    names, pairs, unresolved = set(), set(), set()
    for f in functions:
        for head, steps in host_chains(f.__code__):
            obj = heads.get(head, _NO_OBJECT)
            for step in steps[:-1]:
                obj = _attr(obj, step, _NO_OBJECT) if obj is not _NO_OBJECT else obj
            if obj is _NO_OBJECT:
                unresolved.add(steps[-1])
            else:
                names.add(steps[-1])   # (partial(Sink.notify, S): a class's function)
                pairs.add((obj if isinstance(obj, type) else type(obj), steps[-1]))
    return frozenset(names - unresolved), frozenset(pairs)


_NO_OBJECT = object()


def _hosted_classes(functions, heads: dict) -> frozenset:
    """The classes of the objects of ``heads`` that ``functions`` hand whole to
    ``s.host`` (``s.host(CS)`` of a callable object): their ``__call__`` runs as a
    host callback, reading (and changing) what it reads when it runs; also those
    handed off a name by attributes (``s.host(self.count, h)``)."""
    out = {type(heads[name]) for f in functions for name in host_callbacks(f.__code__)
           if name in heads}
    for head, steps in (c for f in functions for c in host_chains(f.__code__)):
        v = heads.get(head, MISSING)
        for k in steps:
            v = _static_attr(v, k) if v is not MISSING else v
        if v is not MISSING and own_object(v):
            out.add(type(v))
    return frozenset(out)


def loaded_names(fn) -> frozenset:
    """The names the code of function ``fn`` (and the code nested in it) loads."""
    return frozenset(_loaded(fn.__code__))

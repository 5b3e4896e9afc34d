"""The code a graph function runs on the objects of the program's own classes it
makes while traced (``Opts().lr``, ``Sched().rate()``, ``factory().step()``).

A class that walked code reaches by a global or closure name (``Opts``,
``mod.Opts``), its own or a helper's (``factory`` returning ``K()``), is
watched by identity; what its instances run when the trace makes and uses them
is walked as a helper is (``Reach._walk``), so that the globals it reads are
watched and key the graph: ``__init__``, ``__post_init__`` and ``__new__`` of
each class of its MRO, the dunders syntax runs (``owners._dunders``: ``__call__``,
``__getattr__``, ...) and the methods and properties some walked code names
(``self.lr = LR`` in ``__init__``, ``return LR * 2`` in ``rate``; the bases'
of the same names too, which ``super()`` runs). A class
attribute holding a value that walked code reads by its name off an instance
(``o = Opts(); o.lr`` of ``class Opts: lr = 0.5``) is watched by value, as
``Opts.lr`` read off the class is, unless walked code stores an attribute of
that name (an instance's own, which hides it, or the class's, state).

Also the settings a class method reads off its ``cls`` (``class_reads``).
Found once, when a ``Reach`` finds its places; a library's classes, and their
methods, are left alone (``owners``).
"""
from __future__ import annotations

import dis
import types
import weakref

from .bases import _with_wrapped
from .chains import MISSING, Chain, Slot, chain as _chain, changes, lookup as _lookup, slot, \
    value_chains
from .host_chains import host_chains
from .names import _object_steps
from .owners import _PLAIN_BASES, _dunders, _followed, own_class
from .values import _is_value, _plain_items, pure_values

__all__ = ["bound_class_reads", "class_reads", "made", "moved", "record_reads", "walk_classes"]


_MADE = ("__new__", "__init__", "__post_init__")   # what making an instance runs


def walk_classes(reach, seen: set, labels: dict) -> None:
    """Walk, with ``reach._walk``, the code the instances of the classes the walk
    reached (``reach._classes``: ``(function, name, class, depth)``) may run, until
    no walked code names another method; watch the class values read off them."""
    done: set = set()     # ids of the classes whose making code is walked
    names: set = set()    # the attribute names walked code loads
    stores: set = set()   # and those it stores or deletes
    asked: set = set()    # and those it names to getattr, hasattr (constants)
    counted = 0           # the walked functions whose names are in names
    found: set = set()    # (function, label) of the classes values read hold (_contained)
    while True:
        walked = reach._walked
        for f in walked[counted:]:
            loads, stored, constants = _attribute_names(f.__code__)
            names |= loads | constants
            stores |= stored
            asked |= constants
        counted = len(walked)
        _contained(reach, found)
        for fn, name, cls, depth in list(reach._classes):
            if not own_class(cls):
                continue
            if id(cls) not in done:
                done.add(id(cls))
                reach.places.append((fn, name, None, False))   # defined again: found anew
                for f in made(cls):
                    reach._walk(f, seen, depth + 1, labels)
            for f in _methods(cls, names):
                reach._walk(f, seen, depth + 1, labels)
        if len(reach._walked) == counted:
            break
    _class_values(reach, names - stores, asked)
    _class_methods(reach, names)


def _contained(reach, found: set) -> None:
    """Add to ``reach._classes`` the classes of the program's own that values walked
    code reads hold, and the tuples, lists and dicts of values it reads: a chain's
    (``CLASSES["a"]()``, ``CFG.cls()``), a name's items (``for cls in (A, B)``
    of ``PAIR = (A, B)``; ``MODELS[name]()``), each as the chain reading it
    (``MODELS['a']``), watched by identity; each container's classes are kept
    (``reach.contained``), so that a trace finds those put there later (``moved``)."""
    held = [(fn, c) for fn, c, _ in reach._chains] + [
        (fn, _chain(name, ())) for fn, name, _, kind in reach.places
        if kind is None and type(name) is str and name.isidentifier()] + [
        (fn, _chain(name, ())) for fn, name, _ in reach.wholes if type(name) is str]
    for fn, c in held:
        v = c.read(fn)
        items = _items(c, v)
        if any(isinstance(x, type) for _, x in items) or type(v) in (tuple, list, dict) and not v:
            reach.contained[(fn, str(c))] = (c, _classes_held(items))
        for more, x in items:
            if isinstance(x, type) and own_class(x) and \
                    (fn, str(name := _chain(c.head, c.steps + more))) not in found:
                found.add((fn, str(name)))
                reach._classes.append((fn, name, x, 1))


def _items(c, v) -> list:
    """``(steps, value)``: what the chain ``c`` reads (``v``) where it has steps, and
    the items of a tuple, list or dict it reads (but plain values alone: a lookup
    table of a million floats, told at C speed, holds no class)."""
    items = [((), v)] if c.steps else []
    if type(v) in (tuple, list, dict) and not _plain_items(v):
        items += [((("item", k),), x) for k, x in (v.items() if type(v) is dict
                                                   else enumerate(v))]
    return items


def _classes_held(items) -> tuple:
    return tuple(x for _, x in items if isinstance(x, type) and own_class(x))


def moved(contained: dict) -> bool:
    """Whether a container whose classes a walk found (``_contained``) holds others
    now (``LST.append(L2)``, ``REG["b"] = L2``): their code was never walked, so the
    globals it reads are not watched; the walk is to be done again."""
    for (fn, _), (c, classes) in contained.items():
        now = _classes_held(_items(c, c.read(fn)))
        if len(now) != len(classes) or any(a is not b for a, b in zip(now, classes)):
            return True
    return False


def _path(name) -> tuple:
    """``(head, steps)`` of the name or chain that holds a class (``mod.Opts``,
    ``CLASSES['a']``)."""
    if isinstance(name, Chain):
        return name.head, name.steps
    head, *path = name.split(".")
    return head, tuple(("attr", a) for a in path)


def made(cls) -> list:
    """The Python functions making and calling an instance of ``cls`` runs."""
    out = []
    for c in cls.__mro__:
        if c in _PLAIN_BASES:
            continue
        for name in _MADE:
            v = c.__dict__.get(name)
            out += _functions(v) if v is not None else []
    out += [g for _, f in _dunders(cls) for g in _functions(f)]
    for m in type(cls).__mro__:   # a metaclass's __call__ runs first: Meta.__call__
        v = m.__dict__.get("__call__") if m is not type else None
        out += _functions(v) if v is not None else []
    return out


def _methods(cls, names) -> list:
    """The Python functions of the methods and properties of ``cls`` in ``names``,
    each class's of its MRO (an override may run its base's: ``super().rate()``)."""
    out = []
    for name in names:
        if name[:2] == "__" == name[-2:]:
            continue
        for c in cls.__mro__:
            v = c.__dict__.get(name) if c not in _PLAIN_BASES else None
            if v is not None and not isinstance(v, type):
                out += _functions(v)
    return out


def _functions(v) -> list:
    """The program's own Python functions behind a method, a property (each of its
    functions), a static or class method, and those a decorator wraps."""
    parts = (v.fget, v.fset, v.fdel) if isinstance(v, property) else \
        (v.__func__,) if isinstance(v, (staticmethod, classmethod)) else (v,)
    out = []
    for p in parts:
        f = _followed(p) if p is not None else None
        if f is not None:
            out += [g for g in _with_wrapped(f) if _followed(g) is not None]
    return out


def _class_methods(reach, names) -> None:
    """Watch by identity what each class holds itself by the names of the methods
    walked (``Sched.rate``, ``__init__``), and each class of its MRO up to the one
    that holds it (``slot``, looked up in C): one put on a class after a trace
    (``Sched.rate = new_rate``, an override on a subclass) is another graph, whose
    code is walked anew (``Reach._find``)."""
    known = {(id(p.owner), p.attr) for _, p, _, _ in reach.places if type(p) is Slot}
    for fn, _, cls, _ in reach._classes:
        if not own_class(cls):
            continue
        for attr in sorted(_method_names(cls, names)):
            for c in cls.__mro__:
                if c in _PLAIN_BASES:
                    break
                if (id(c), attr) not in known:
                    known.add((id(c), attr))
                    reach.places.append((fn, slot(c, attr), None, False))
                if attr in c.__dict__:
                    break


def _method_names(cls, names) -> set:
    """The names of the methods of ``cls`` walked (``made``, ``_methods``, the
    dunders syntax runs) that a class of its MRO of the program's own defines."""
    out = {name for name, _ in _dunders(cls)}
    for c in cls.__mro__:
        if c in _PLAIN_BASES:
            continue
        for name in (*_MADE, *names):
            v = c.__dict__.get(name)
            if v is not None and not isinstance(v, type) and _functions(v):
                out.add(name)
    return out


def _class_values(reach, names, asked) -> None:
    """Watch by value the class attributes holding values (``lr = 0.5``), or None
    (``lr = None``, read as ``o.lr if o.lr is not None else 0.5``), that walked code
    reads by name, as chains off the name holding the class (``Opts.lr``); those
    it names to getattr or hasattr where the class lacks them, as absent
    (``getattr(Opts(), "lr", 0.5)``: one set later traces anew); and a list or dict
    of values (``s = [1.0]``) whole, by every value it holds (``Scales.s[0] = 4.0``)."""
    known = {str(c) for _, c, _ in reach._chains}
    for fn, name, cls, _ in reach._classes:
        if not own_class(cls):
            continue
        head, steps = _path(name)
        top = _lookup(fn, head)
        for attr in names:
            v = _static(cls, attr)   # None too: a value set there later (Opts.lr = 0.1)
            if v is MISSING and attr in asked and attr[:2] != "__":
                chain = _chain(head, steps + (("default", attr),))
            elif v is MISSING or v is not None and not _is_value(v):   # traces anew
                if v is not MISSING and type(v) in (list, dict) and \
                        pure_values(v) is not None:
                    reach.wholes.append((fn, _chain(head, steps + (("attr", attr),)), id(v)))
                continue
            else:
                chain = _chain(head, steps + (("attr", attr),))
            if str(chain) not in known:
                known.add(str(chain))
                reach._chains.append((fn, chain, id(top)))


def _static(cls, attr: str):
    """What ``cls`` or a class of its MRO holds by ``attr`` (not a dunder)."""
    if attr[:2] == "__" == attr[-2:]:
        return MISSING
    for c in cls.__mro__:
        if c in _PLAIN_BASES:
            return MISSING
        v = c.__dict__.get(attr, MISSING)
        if v is not MISSING:
            return v
    return MISSING


_NAMES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _attribute_names(code) -> tuple:
    """``(loaded, stored, asked)``: the names ``code`` and the code nested in it load
    as attributes or globals (``co_names``), those it stores or deletes as
    attributes, and the constant names of code calling getattr, hasattr (and
    operator's attrgetter, methodcaller): ``getattr(Opts(), "lr", 0.5)``."""
    hit = _NAMES.get(code)
    if hit is None:
        loaded, stored, asked, todo = set(), set(), set(), [code]
        while todo:
            c = todo.pop()
            loaded.update(c.co_names)
            stored.update(ins.argval for ins in dis.get_instructions(c)
                          if ins.opname in ("STORE_ATTR", "DELETE_ATTR"))
            if not _ASKING.isdisjoint(c.co_names):
                asked.update(k for k in c.co_consts if type(k) is str and k.isidentifier())
            todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        hit = _NAMES[code] = (frozenset(loaded), frozenset(stored), frozenset(asked))
    return hit


_ASKING = frozenset({"getattr", "hasattr", "attrgetter", "methodcaller"})


def class_reads(reach, fn, dotted: str, method: classmethod, v, baked: bool) -> None:
    """The settings a class method (``dotted``: ``Model.lr``) reads off its ``cls``
    (``cls.LR`` of ``Model.lr()``), watched as chains off the name holding the
    class (``Model.LR``) unless its code changes them (where ``baked``: the walked
    code runs while traced). One that ``fn`` hands to ``s.host`` (``s.host(Sink.read,
    h)``) reads when it runs: the arrays it reads off ``cls`` (``cls.BUF``, and
    through the class methods it calls on it) are places a host callback reads
    (``Reach.callbacks``), whose aliasing with the call's arrays keys the graph."""
    code = getattr(method.__func__, "__code__", None)
    if code is None or not code.co_argcount:
        return
    owner, head, *attrs = dotted.rsplit(".", 1)[0], *dotted.split(".")
    if (head, tuple(attrs)) in host_chains(fn.__code__):
        own = [(method.__func__, code.co_varnames[0])]
        for steps in _object_steps(code, _chain(owner, ()).read(fn), own=own):
            reach._callback_place(fn, _chain(owner, steps))
    if not baked:
        return
    chains, changed = value_chains(code, roots=frozenset({code.co_varnames[0]}))
    cls = code.co_varnames[0]
    for steps in (steps for head, steps in chains if head == cls and steps):
        if any(head == cls and changes(steps, c) for head, c in changed):
            continue
        chain = _chain(owner, steps)
        value = chain.read(fn)
        if value is None or _is_value(value):
            reach._chains.append((fn, chain, id(v)))


def record_reads(reach, fn, dotted: str, held) -> None:
    """A namedtuple's subclass (``class Sink(namedtuple("Sink", "buf"))``) a class
    or module of the program's own holds (``Cfg.SINK``, ``dotted``), one of whose
    methods ``fn`` hands to ``s.host`` (``s.host(Cfg.SINK.read, t)``): the arrays
    it holds are read by that callback when it runs, a place of ``Reach.callbacks``,
    watched by identity (``Cfg.SINK = Sink(b)``: the callback is another) and keyed
    by how its arrays share memory with the call's; it is no object ``own_object``
    walks, a tuple being a library's class."""
    if not isinstance(held, tuple) or type(held) is tuple:
        return
    head, *attrs = dotted.split(".")
    if any(h == head and len(steps) > len(attrs) and list(steps[:len(attrs)]) == attrs
           for h, steps in host_chains(fn.__code__)):
        reach._callback_place(fn, _chain(head, tuple(("attr", a) for a in attrs)))


def bound_class_reads(reach, fn, name: str, v) -> None:
    """A class method bound to a class of the program's own that a name holds
    (``CB = Sink.read``) and ``fn`` hands to ``s.host`` (``s.host(CB, t)``): the
    arrays it reads off its ``cls`` (``cls.BUF``) are places a host callback reads
    (``Reach.callbacks``), as for ``s.host(Sink.read, t)`` (``class_reads``)."""
    owner = v.__self__ if type(v) is types.MethodType else None
    code = getattr(v.__func__, "__code__", None) if isinstance(owner, type) else None
    if code is None or not code.co_argcount or not own_class(owner):
        return
    own = [(v.__func__, code.co_varnames[0])]
    for steps in _object_steps(code, owner, own=own):
        reach._callback_place(fn, _chain(name, (("attr", "__self__"),) + steps))

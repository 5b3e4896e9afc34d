"""What a graph function reaches beyond its parameters, per function: the
arrays and values its names reach (``Reach``), a method's ``self`` and the
methods of its class it calls, and the program's own objects ``self`` or its
names hold (``held.py``: ``self.opt``, ``OPT``).

``GraphFunction`` owns one ``Holdings``; the cache key (``arguments.Call``)
and the call path ask it which arrays a call reaches (``reached``) and what
the key holds of them by value (``functions``). It remembers, per class of
``self``, what it found: the methods of held objects' classes, the attribute
names their code loads, and the state a trace was seen to change.
"""
from __future__ import annotations

import dataclasses
import functools
import warnings
import weakref

from .callback_state import global_only, live_labels, self_changed
from .chains import Slot, lookup, nested_codes
from .class_reads import class_reads, classmethod_codes
from .errors import DepthWarning, user_frame
from .handed import hands, merged
from .held import (callback_arrays, held_arrays, held_functions, held_methods, held_objects,
                   loaded_names, settings_alone)
from .held_keys import Watched, every_name, held_key
from .helper_methods import helper_methods
from .host_chains import host_callbacks, host_chains, host_methods, host_parameters, self_callbacks
from .names import (_methods_named, attribute_names, chain_heads, callback_methods,
                    EVERY, class_methods, reads_fields, self_chains, self_changes, widest)
from .owners import _attr, _attributes, _dunders, _python_function, class_attribute
from .reach import Reach
from .region_places import RegionPlaces
from .stand_in import stand_in, stands_for
from .trace_changes import TraceChanges
from .tree import leaves
from .values import (_MAX_DEPTH, instance_arrays, instance_chains, instance_held,
                     instance_values, stored_chains)
from .whole_reads import handed_attributes

__all__ = ["Holdings", "Loaded"]

_NOTHING_HELD = (Watched(), (), (), {})
_MAX_PASSES = 16   # walks of held objects a call may take to find their methods' names


class Loaded(frozenset):
    """Names a graph function's code loads (``Holdings.loaded``), with ``hosted``:
    those of them it names only as a method it hands to ``s.host``, whose code an
    argument's cache key does not follow (``object_keys._reads``); and ``fields``:
    whether the code reads every field of a dataclass (``astuple(cfg)``) or every
    attribute of an object (``vars(cfg)``), which no name it loads says
    (``names.reads_fields``: FIELDS, EVERY, or the empty string); and ``handed``:
    label (``self.hooks``, of an argument object's attribute) -> ``handed.Hand`` of
    what the code hands of it to ``s.host`` (``s.host(cfg.hooks["log"], h)``)."""

    def __new__(cls, names, hosted=frozenset(), fields: str = "", handed=None):
        self = super().__new__(cls, names)
        self.hosted = frozenset(hosted)
        self.fields = fields
        self.handed = handed or {}
        return self


def _hosted(code, name: str) -> bool:
    """Whether ``code`` hands what it reaches by ``name`` (``tick``, ``Sink.notify``)
    to ``s.host`` alone, as the callback (also through ``partial``)."""
    if name in host_callbacks(code):
        return True
    head, _, rest = name.partition(".")
    return bool(rest) and rest.rpartition(".")[2] in host_methods(code) and \
        (head, tuple(rest.split("."))) in host_chains(code)


class Holdings(TraceChanges):
    """The names, ``self`` and held objects of one graph function ``function``
    (``self_param``: the name of its ``self``, None for a function)."""

    def __init__(self, function, self_param: str | None):
        self.function, self.self_param = function, self_param
        self._class_reach: dict = {}   # a method's: class -> its methods' Reach
        self._class_code: dict = {}   # class -> the functions of the methods it calls
        self._callback_reach: dict = {}   # class -> its methods' handed to s.host
        self._self_names: dict = {}   # type(self) -> (names it may read of self, chains,
        # what its code stores, what its host callbacks store, those it hands to s.host,
        # whole, the chains it stores, those of them keyed by a name: self_chains'; the
        # names it reads through the class, type(self).N: class_reads)
        self._held: dict = {}   # (type(self), classes of the objects it holds) -> walk's
        self.traced_state: dict = {}   # type(self) (None) -> labels a trace changed
        self.afters: dict = {}   # type(self) (None) -> label -> the items traces left a
        # container holding that they changed as a flag (container_flags.refilled)
        self._function_reach = weakref.WeakKeyDictionary()   # held function -> its Reach
        self._deep: set = set()   # the labels of objects too deep to walk, warned of
        self._handed_by: dict = {}   # type(self) -> label -> what the code hands to s.host
        self._held_names: dict = {}   # type(self) (None) -> (attribute names walked, the
        # places of objects the held objects' methods reach by name)
        self.regional = RegionPlaces()   # where its captured regions reached arrays that
        # no name shows (m.W of a module handed to one): keyed as names are

    @functools.cached_property
    def reach(self) -> Reach:
        """Arrays and helpers reached by name (``reach.py``), found at first use."""
        return Reach(self.function)

    @functools.cached_property
    def loaded(self) -> Loaded:
        """The names the function's code and its helpers' load: the attributes it
        may read off an object passed as an argument (``object_keys._settings``);
        whether it reads every field of one (``astuple(cfg)``); with those it
        names only as a method handed to ``s.host`` (``s.host(rec.add, h)``),
        whose code reads what it reads when it runs (not watched)."""
        names, hosted, other = set(), set(), set()
        functions = self._code(None)
        for f in functions:
            mine, theirs = loaded_names(f), host_methods(f.__code__)
            names |= mine
            hosted |= theirs
            other |= mine - theirs
        code = self.function.__code__   # what it hands to s.host off its parameters
        params = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]) - \
            {self.self_param}
        handed: dict = {}
        for (head, steps), hand in hands(code).items():
            if head in params and steps:
                label = "self." + ".".join(steps)
                handed[label] = merged(handed.get(label), hand)
        handed = {label: hand for label, hand in handed.items() if hand.hosted}
        return Loaded(names, hosted - other, widest(map(reads_fields, functions)), handed)

    def reached(self, arguments, held=None) -> list:
        """``(label, array)`` for the arrays the graph may use that are not in its
        parameters: those reached by name, and a method's ``self`` attributes
        (``held``: ``holds(arguments)``, found already)."""
        if self.self_param is None:
            return self.named_arrays(held)
        return self.arrays_of(arguments[self.self_param], held)

    def callback_arrays(self, self_obj=None, held=None) -> list:
        """``(label, array)`` for the arrays the host callbacks of the graph read
        at places of their own (``Reach.callback_arrays``, and the attributes of
        held objects whose methods they are: ``held.callback_arrays``), which the
        key holds how they share memory with the call's (``held``: ``holds``).
        Called after ``functions``, which finds the places again where a helper
        name means another function: a function whose names reach no callback
        and no object of its own costs the call path nothing here."""
        if self_obj is None and not self.reach.objects:
            return self.reach.callback_arrays() if self.reach.callbacks else []
        out = self.reach.callback_arrays()
        objects, (watched, reaches, _, _) = held if held is not None else self.walk(self_obj)
        if self_obj is not None:   # and self's methods handed to s.host (self.report)
            reaches = self._class_reaches(type(self_obj))[0] + \
                self._callback_reaches(type(self_obj)) + reaches
        for r in reaches:
            out += r.callback_arrays()
        return out + callback_arrays(objects, watched)

    @functools.cached_property
    def hosted_params(self) -> tuple:
        """The parameters the function hands to ``s.host`` itself (``s.host(cb)``,
        ``s.host(partial(cb, h))``, ``s.host(cbs["log"])``): callbacks a call
        passes, which read the arrays they reach when they run."""
        code = self.function.__code__
        params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        return tuple(host_parameters(code, set(params) - {self.self_param}))

    @functools.cached_property
    def own_codes(self) -> frozenset:
        """The function's code and the code nested in it: an ``s.host`` line there
        is the function's own."""
        return frozenset(nested_codes(self.function.__code__))

    def argument_callbacks(self, arguments) -> list:
        """``(label, array)`` for the host arrays the callbacks a call passes
        (``hosted_params``) reach themselves (a global ``LOG``, ``self.buf`` of a
        bound method's object or a callable object, a ``partial``'s arguments):
        the key holds how they share memory with the call's arrays."""
        if not self.hosted_params:
            return []
        from .ops.host import reached_arrays   # (the ops import the tracer)
        return [found for p in self.hosted_params for cb, label in self._passed(p, arguments[p])
                for found in reached_arrays(cb, label)]

    def _passed(self, param: str, value) -> list:
        """``(callback, label)`` of what the function hands to ``s.host`` off parameter
        ``param`` of a call (``value``): a callable it holds, and the method it takes
        off an object it holds (``s.host(logger.record)``: ``hosted_chains``)."""
        out = []
        for v in leaves(value):
            if callable(v):
                out.append((v, param))
            for steps in (steps for head, steps in self.hosted_chains if head == param):
                cb = functools.reduce(_attr, steps, v)
                if callable(cb):
                    out.append((cb, f"{param}.{'.'.join(steps)}"))
        return out

    @functools.cached_property
    def hosted_chains(self) -> tuple:
        """``(parameter, attributes)`` of each attribute chain off a parameter of
        ``hosted_params`` that the function hands to ``s.host`` (``s.host(logger.record)``,
        ``s.host(cfg.on_step)``): a method of an object a call passes."""
        return tuple((head, steps) for head, steps in host_chains(self.function.__code__)
                     if head in self.hosted_params)

    def passed_callables(self, arguments) -> dict:
        """id -> parameter name of each callable the call passes by a parameter the
        function does not hand to ``s.host`` itself (a helper may: ``helper(s, cb)``
        doing ``s.host(cb)``), whose arrays the key does not hold."""
        return {id(v): p for p in arguments if p not in self.hosted_params and
                p != self.self_param for v in leaves(arguments[p]) if callable(v)}

    def holds(self, arguments):
        """``walk`` of a call's ``self`` (or a function's names), or None where a
        function's names hold no object: found once for ``reached`` and
        ``functions``."""
        if self.self_param is not None:
            return self.walk(arguments[self.self_param])
        return self.walk(None) if self.reach.objects else None

    def named_arrays(self, held=None) -> list:
        """A function's reached arrays: by its names, and in the program's own
        objects its names hold (``OPT.v``)."""
        out = self.reach.arrays()
        if self.reach.objects:
            objects, (watched, reaches, _, _) = held if held is not None else self.walk(None)
            for r in reaches:
                out += r.arrays()
            out += held_arrays(objects, watched.read)
        return out

    def arrays_of(self, self_obj, held=None) -> list:
        """A method's reached arrays: by its names, its class's methods' names
        (``_class_reaches``), and ``self``'s attributes."""
        out = self.reach.arrays()
        objects, (watched, reaches, _, _) = held if held is not None else self.walk(self_obj)
        for r in self._class_reaches(type(self_obj))[0] + reaches:
            out += r.arrays()
        kept = self._callback_kept(type(self_obj))   # a history its callbacks keep on self
        return out + instance_arrays(self_obj, kept) + held_arrays(objects, watched.read)

    def walk(self, self_obj) -> tuple:
        """``(objects, (watched, reaches, methods, heads))``: the program's own
        objects ``self_obj`` holds (``held.held_objects``: ``self.opt``) and those
        the names of the function hold (``Reach.objects``: ``OPT``), by the
        attribute names the code loads; the names the code and the methods of
        theirs it calls read, the state it keeps in them (``held.Watched``), the
        ``Reach`` of those methods (their globals are the graph's too), the
        methods (``held.held_methods``, found once per class of each), and
        name -> object for self and those names."""
        places = list(self.reach.objects)
        if self_obj is not None:   # and those the methods of its class reach by name
            places += [p for r in self._class_reaches(type(self_obj))[0] for p in r.objects]
        if not places and self_obj is None:
            return [], _NOTHING_HELD
        hosted = self._callback_functions(type(self_obj)) if self_obj is not None else ()
        handed = self._handed(self_obj)
        known = self._held_names.get(type(self_obj))
        if known is None:   # at first the names the graph's own code (and its callbacks') loads,
            code = self._code(self_obj)   # and whether it reads objects whole (vars(CFG),
            # getattr(self, name)): then the walk reads all they hold
            known = self._held_names[type(self_obj)] = (frozenset().union(
                *(loaded_names(f) for f in code + list(hosted))), (),
                widest(map(reads_fields, code)) == EVERY)
        names, extra, every = known
        places += [p for p in extra if p not in places]
        roots, heads = self._roots(places, self_obj)
        mine: list = []   # the places the functions held reach (this object's alone)
        for _ in range(_MAX_PASSES):   # until the held classes' methods name no new ones
            seen: set = set()
            deep: list = []   # the labels of objects too deep to walk
            walked = None if every else names
            called: list = []   # the functions of the bound methods handed to s.host
            bound: list = []   # and of those the graph calls (self.layer.forward = MethodType)
            objects = [] if self_obj is None else held_objects(self_obj, None, seen, walked, deep,
                                                                handed, called, bound)
            objects += [o for label, v in roots
                        for o in held_objects(v, label, seen, walked, deep, handed, called, bound)]
            on_self: list = []   # those of them that run on self (self.fn = self.update)
            helpers = held_functions(self_obj, objects, every_name(self_obj, objects) if every
                                     else names, on_self, handed)   # self.fn = lambda
            if not objects and not helpers:
                return [], _NOTHING_HELD
            classes = tuple(dict.fromkeys(type(o) for _, o, _ in objects))
            key = (type(self_obj), classes, tuple(f.__code__ for f in helpers),
                   tuple(f.__code__ for f in on_self), tuple((c, f.__code__) for c, f in called),
                   frozenset((c, f.__code__) for c, f in bound))
            hit = self._held.get(key)
            if hit is None or not all(class_attribute(c, n) is v for c, n, v, _ in hit[2]):
                code = self._code(self_obj)
                ran = self._self_methods(type(self_obj), on_self, code)
                methods, watched = held_methods(code + list(helpers) + list(ran),
                                                heads, classes, hosted, called)
                watched.selfs = frozenset().union(
                    *(attribute_names(f, type(self_obj)) for f in on_self))
                watched.classed = class_reads(   # type(self.sub).N
                    [c for f in code + list(helpers) + list(ran) + [f for *_, f in methods]
                     for c in nested_codes(f.__code__)], classmethod_codes(*classes))
                hit = self._held[key] = (watched, tuple(   # a callback's: not baked
                    r for r in (Reach(f, f not in watched.callbacks) for *_, f in methods)
                    if r.places or r.objects or r.callbacks) + tuple(
                    r for r in map(Reach, ran) if r.places or r.objects or r.callbacks),
                    methods)
            reaches = hit[1] + tuple(r for r in map(self._reach_of, helpers)
                                     if r.places or r.objects or r.callbacks)
            more = [p for r in hit[1] for p in r.objects if p not in places]
            theirs = [p for r in reaches[len(hit[1]):] for p in r.objects
                      if p not in places and p not in mine]
            if hit[0].names | hit[0].reached <= names and not more and not theirs and \
                    every == (hit[0].whole == EVERY):
                break
            every = hit[0].whole == EVERY
            names = names | hit[0].names | hit[0].reached
            if more:   # a held object's method reaches another by a global name
                extra = tuple(extra) + tuple(more)
            if more or theirs:
                places += more + theirs
                mine += theirs
                roots, heads = self._roots(places, self_obj)
            self._held_names[type(self_obj)] = (names, extra, every)   # where the next call starts
        if deep:
            self.warn_deep(deep)
        if self_obj is None and not hit[2] and not helpers and not hit[0].whole and \
                not self.reach.escaped.union(*(r.escaped for r in reaches)).intersection(
                    label for label, _ in roots) and \
                not held_arrays(objects, None if every else names) and \
                settings_alone(roots, objects, names):
            return [], _NOTHING_HELD   # settings alone (CFG.lr): Reach's chains watch them
        return objects, (hit[0], reaches, hit[2], heads)

    def warn_deep(self, labels) -> None:
        """Say once per label that an object lies deeper than the walk goes
        (``DepthWarning``): what the graph reads off it is not watched."""
        new = [label for label in dict.fromkeys(labels) if label not in self._deep]
        if not new:
            return
        self._deep.update(new)
        file, line = user_frame()
        warnings.warn_explicit(
            f"{self.function.__name__}: {', '.join(new)} lies more than {_MAX_DEPTH} objects "
            "and containers deep in what it holds, deeper than graphtrace walks: what the "
            "graph reads off it is baked in when traced, and a change to it later is not "
            "seen (the old values replay). Keep such an object (or the values the graph "
            "reads off it) nearer: on self or an object self holds, or pass them as arguments",
            DepthWarning, file, line)

    def _handed(self, self_obj) -> dict:
        """label -> ``handed.Hand`` of each container (or value) the code hands items
        of to ``s.host``: those of self the method and the methods of its class it
        calls hand (``s.host(self.fn, h)``, ``for cb in self.cbs: s.host(cb, h)``,
        ``s.host(self.hooks["log"], h)`` beside ``self.hooks["upd"](s)``; found once
        per class), and those the names of the function and of those methods hold
        (``Reach.handed``): callbacks, which read what they read when they run."""
        out = dict(self.reach.handed)
        if self_obj is None:
            return out
        cls = type(self_obj)
        hit = self._handed_by.get(cls)
        if hit is None:
            hit = {}
            for f in [self.function] + [f for _, f in class_methods(
                    self.function, self.self_param, cls)]:
                code = f.__code__
                first = self.self_param if f is self.function else code.co_varnames[:1]
                for (head, steps), hand in hands(code).items():
                    if head in first and steps:
                        label = "self." + ".".join(steps)
                        hit[label] = merged(hit.get(label), hand)
            hit = self._handed_by[cls] = {label: hand for label, hand in hit.items()
                                          if hand.hosted}
        for r in self._class_reaches(cls)[0]:
            for label, hand in r.handed.items():
                out[label] = merged(out.get(label), hand)
        out.update(hit)
        return out

    @staticmethod
    def _self_methods(cls, functions, code) -> tuple:
        """The functions of the methods of ``cls`` (self's class) that ``functions``
        (held by self, running on it: ``self.fn = lambda s, g: self.update(s, g)``)
        call, and those these call, but those of ``code`` (the method's own)."""
        found: dict = {}
        for f in functions:
            for _, m, _ in _methods_named(f.__code__, cls, supers=True, fn=f):
                found[m] = None
        return tuple(m for m in found if m not in code and m not in functions)

    def _reach_of(self, fn) -> Reach:
        """``Reach`` of a function held by self or a held object (``held_functions``),
        found once while it lives."""
        hit = self._function_reach.get(fn)   # (of its stand_in: a value holding its key
        if hit is None or not stands_for(hit.root, fn):   # would keep it while self lives)
            hit = self._function_reach[fn] = Reach(stand_in(fn))
        return hit

    def _roots(self, places, self_obj) -> tuple:
        """``([(label, object)], {name: object})`` of the ``(function, name, label)``
        places holding objects of the program's own, and self."""
        roots = [(label, lookup(fn, name)) for fn, name, label in places]
        heads = {name: lookup(fn, name) for fn, name, _ in places}
        if self_obj is not None:
            heads[self.self_param] = self_obj
        return roots, heads

    def _code(self, self_obj) -> list:
        """The code whose loads say what held objects the graph reads: the function
        and its helpers, and for a method the methods of its class it calls."""
        functions = [self.function] + [   # not a callback handed to s.host (s.host(tick),
            f for f in (_python_function(v) for fn, name, v in self.reach.helpers   # or
                        if type(name) is not Slot and   # Sink.notify), nor a method watched
                        not _hosted(fn.__code__, name)) if f is not None]   # on its class
        functions += [f for f in self.reach.carried if f not in functions]   # UPD["sgd"]
        if self_obj is not None:   # and those syntax runs on self (self.sc of a __getattr__)
            functions += [f for _, f in class_methods(self.function, self.self_param,
                                                      type(self_obj)) if f is not self.function]
            functions += [f for _, f in _dunders(type(self_obj)) if f not in functions]
        return functions

    def _class_reaches(self, cls) -> tuple:
        """``(reaches, methods)``: ``Reach`` of each method, property and static or
        class method of ``cls`` the method calls (``self.coef()`` reading a global
        ``LR``), whose names are the method's too; and ``(name, what the class
        holds by it)`` of each, which a method put on the class anew changes
        (``Model.coef = ...``: found again, and another graph)."""
        hit = self._class_reach.get(cls)
        if hit is not None and all(class_attribute(cls, name) is v for name, v in hit[1]):
            return hit
        if hit is not None:   # a method put on the class anew: its self names too
            self._self_names.pop(cls, None)
        found = [(name, f) for name, f in class_methods(self.function, self.self_param, cls)
                 if f is not self.function]
        found += helper_methods(self.function, cls, found)   # helper(s, self, x): o.rate()
        self._class_code[cls] = tuple(f for _, f in found)
        reaches = (Reach(f) for _, f in found)
        hit = self._class_reach[cls] = (tuple(r for r in reaches if r.places or r.objects or
                                              r.callbacks), tuple(
            (name, class_attribute(cls, name)) for name, _ in found))
        return hit

    def _callback_reaches(self, cls) -> tuple:
        """``Reach`` (not baked: they read when they run) of each method of ``cls``
        the method hands to ``s.host`` (``s.host(self.report)`` reading a global
        ``LOG``) and those they call, found again where the class holds another."""
        hit = self._callback_reach.get(cls)
        if hit is None or not all(class_attribute(cls, name) is v for name, v in hit[1]):
            found = callback_methods(self.function, self.self_param, cls)
            changed = self_changes(f for _, f in found) if found else frozenset()
            reads = self._graph_reads(cls) if changed else frozenset()
            hit = self._callback_reach[cls] = (tuple(
                r for r in (Reach(f, False) for _, f in found) if r.callbacks),
                tuple((name, class_attribute(cls, name)) for name, _ in found),
                tuple(f for _, f in found), changed - reads,
                self_changed((f for _, f in found), changed & reads))
        return hit[0]

    def _graph_reads(self, cls) -> frozenset:
        """The attribute names the method's code (and that of the methods of ``cls``
        it calls, and of its helpers) may read off ``self``: ``attribute_names``, but
        those it loads only as globals or off them (``math.log`` is no ``self.log``)."""
        codes: list = []
        names = attribute_names(self.function, cls, self.self_param, into=codes)
        return names - global_only(codes)

    def _callback_kept(self, cls) -> frozenset:
        """The attributes of self that the methods the method hands to ``s.host``
        change when they run and its own code does not read (``self.snaps.append(
        h.copy())`` in ``s.host(self.report, h)``): a history they keep, whose
        arrays are not the graph's (left out of ``arrays_of``)."""
        self._callback_reaches(cls)
        return self._callback_reach[cls][3]

    def _callback_live(self, self_obj, entries) -> set:
        """The labels of the key's ``entries`` that read what host callbacks change:
        self's attributes that the methods the method hands to ``s.host`` change
        and its code reads (``self.step_count`` of ``s.host(self.tick)``), and the
        held objects' that their own methods handed so change (``OBJ.scale`` of
        ``s.host(OBJ.bump)``): watched, so each call after such a change traces."""
        changed = set()
        if self_obj is not None:
            self._callback_reaches(type(self_obj))
            changed |= self._callback_reach[type(self_obj)][4]
        if self_obj is not None or self.reach.objects:
            objects, (watched, _, _, _) = self.walk(self_obj)
            changed |= {f"{label}.{n}" for label, o, _ in objects
                        for n in watched.state.get(type(o), ()) if type(n) is str}
        return live_labels(entries, changed)

    def _callback_functions(self, cls) -> tuple:
        """The functions of ``_callback_reaches``: what they read off the objects self
        holds (``self.sink.read()``) is walked as a callback's (``held_methods``)."""
        self._callback_reaches(cls)
        return self._callback_reach[cls][2]

    def functions(self, self_obj=None, held=None) -> tuple:
        """The helpers, kernels and numbers reached by name, and for a method the
        values its ``self`` holds (``self.lr``): what the cache key holds by value."""
        out = self.reach.functions()
        if self.self_param is None:
            if not self.reach.objects:
                return out
            objects, (watched, reaches, methods, heads) = \
                held if held is not None else self.walk(None)
            for r in reaches:
                out += r.functions()
            return out + held_key(objects, watched, self.traced_state.get(None, ())) + \
                tuple(v for _, _, v, _ in methods)
        reaches, methods = self._class_reaches(type(self_obj))
        for r in reaches:
            out += r.functions()
        out += tuple(v for _, v in methods)   # by identity
        known = self._self_names.get(type(self_obj))
        if known is None:   # once per class: the names it reads, less what callbacks store
            chains, stored, hosted, kept, named = self_chains(
                self.function, self.self_param, type(self_obj))
            codes: list = []
            names = attribute_names(self.function, type(self_obj), self.self_param,
                                    into=codes) - hosted - handed_attributes(   # s.host(
                self._code(self_obj), self.function, self.self_param)   # self.log.append, v)
            whole = widest(reads_fields(f) for f in self._code(self_obj))   # astuple(self)
            if whole and dataclasses.is_dataclass(type(self_obj)):
                names |= {f.name for f in dataclasses.fields(type(self_obj))}
            known = self._self_names[type(self_obj)] = (
                names, chains, stored, hosted,
                self_callbacks(self.function.__code__, self.self_param), whole, kept, named,
                class_reads(codes, classmethod_codes(type(self_obj))))   # type(self).N
        names, chains, _, hosted, callbacks, whole, _, _, classed = known
        if whole == EVERY:   # vars(self): every attribute it holds
            names = names | {name for name, _ in _attributes(self_obj)}
        kept = self._callback_kept(type(self_obj))   # a history its callbacks keep
        objects, (watched, reaches, methods, heads) = \
            held if held is not None else self.walk(self_obj)
        for r in reaches:
            out += r.functions()
        # self's values its held objects' methods read (self.owner.c of a layer's), and
        # the functions it holds that run on it (self.fn = self.update reading self.lr)
        if objects or watched.selfs:
            names = names | ((watched.names if objects else frozenset()) | watched.selfs) - \
                hosted
        traced = self.traced_state.get(type(self_obj))
        if traced:   # self's values a trace changed (self.calls += 1, a layer's
            names = names - {t[5:] for t in traced if t.startswith("self.")}   # owner's)
            classed = classed - {t[11:] for t in traced if t.startswith("type(self).")}
        return out + instance_values(self_obj, names - kept, chain_heads(c for c, _ in chains),
                                     callbacks, classed) + \
            instance_held(self_obj) + \
            instance_chains(self_obj, chains) + \
            held_key(objects, watched, self.traced_state.get(type(self_obj), ())) + \
            tuple(v for _, _, v, _ in methods)   # by identity

    def entries(self, self_obj):
        """``(type of self or None, entries)`` of a call whose ``self`` is ``self_obj``
        (None for a function): the ``held_key`` entries of the objects of the
        program's own it holds, and a method's values of the attributes of self
        its code stores; None where there are none."""
        lead = self.self_param is not None
        at = type(self_obj) if lead else None
        named = tuple(e for r in self._reaches(self_obj) for e in r.stored_entries())
        if not lead and not self.reach.objects:   # CFG["lr"] the code may store
            return (at, named) if named else None
        objects, (watched, _, _, heads) = self.walk(self_obj)
        known = self._self_names.get(type(self_obj)) if lead else None
        stored, kept = (known[2], known[6]) if known is not None else (frozenset(), ())
        if not objects and not stored and not kept and not named and not watched.selfs:
            return None
        traced = self.traced_state.get(at, ())
        # self.owner.calls of a layer's; what self's code stores (self.scale = 1.0,
        # self.state["init"] = True)
        mine = instance_values(self_obj, watched.names | watched.selfs | stored) + \
            stored_chains(self_obj, kept) if lead else ()
        return at, (held_key(objects, watched, traced) if objects else ()) + mine + named

    def _reaches(self, self_obj) -> list:
        """The function's ``Reach`` and, for a method, those of the methods of its
        class it calls: the chains the code may store in."""
        if self_obj is None:
            return [self.reach]
        return [self.reach] + list(self._class_reaches(type(self_obj))[0])

    def live(self, self_obj, entries=()) -> set:
        """The labels of the values the graph reads by constant keys and attributes
        that its host callbacks change (``Reach.live``: watched, each change traces),
        and those of the key's ``entries`` that they change on self or a held
        object (``_callback_live``)."""
        return set().union(*(r.live for r in self._reaches(self_obj))) | \
            self._callback_live(self_obj, entries)

    def forget(self) -> None:
        """Forget what traces were seen to change (``GraphFunction.clear_cache``)."""
        self.traced_state.clear()
        self.afters.clear()
        self.regional.clear()
        reaches = ([self.__dict__["reach"]] if "reach" in self.__dict__ else []) + \
            [r for hit in self._class_reach.values() for r in hit[0]]
        for r in reaches:
            r.forget_state()

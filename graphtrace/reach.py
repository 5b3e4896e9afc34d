"""Arrays a graph function reaches by name rather than through its parameters.

A decorated function may use arrays held by global or closure names: its
own, those of the plain helper functions and nested graph functions it calls
by name, and so on down. They are baked into the graph, so the cache key
holds their addresses and the repeated-call shortcut checks that every name
still holds the same object. A name that holds None or an empty container
is watched too: an array put there later changes the graph. Names are found
once from the code objects; later calls only look them up again.

Numbers, strings, dtypes, classes and tuples of them held by a name are read
while tracing and baked in: they are watched by value (a new value traces
anew). So are those the code reads off a name by constant keys and
attributes (``CFG["lr"]``, ``cfg.opt.lr``, ``Config.lr``: ``value_chains``),
also where a host callback changes them (each change traces anew: ``live``,
named once); what only a callback changes (a counter or history) is state;
where the traced code may store there, the trace tells (``stored``: set from
None or left as it was, a setting; changed, state, ``note_state``). Numbers
reached otherwise (a key
held in a variable, a loop over a dict) are not: pass a value that changes as an argument.

Objects of the program's own classes held by such names are walked too
(``Reach.objects``, ``held.py``): their arrays and what their methods read; so
is the code the objects the function makes of such classes run (``Init().lr``:
``class_reach.py``).
An array a graph uses that is reached some other way (a library object's
attribute, a local of a helper, a function passed as a value) is refused by
the tracer.

``Reach`` walks the names from one root; ``names.py`` finds them in the
bytecode, ``values.py`` keys what they hold (by value or by identity), and
``owners.py`` tells the program's own helpers and objects, walked, from
libraries', left alone.
"""
from __future__ import annotations

import builtins
import operator
import types
from functools import partial

from .arrays import is_array
from .chains import MISSING, NoKey, chain as _chain, changes, default_of, defined, \
    lookup as _lookup, value_chains
from .class_reach import bound_class_reads, class_reads, moved, record_reads, walk_classes
from .code_parts import _Code, _code_check, code_parts
from .handed import hands
from .names import _code_chains, _getter, _held_dotted, _names, _nested_callback_codes, \
    _object_steps, _reads, _stored
from .owners import _PLAIN_CONTAINERS, _followed, _holds_own, _library, own_class, own_object
from .probe import _answers_oddly, _attr, _has
from .reach_devices import device_places
from .reach_values import handed_alone, handed_methods
from .reach_values import _IMMUTABLE, _KEYED_ARRAYS, _PROXIES, _dead, _global_places, \
    _held_by_key, _holds_settings, _host_written, _keyed, _kernel_like, _loaded, _method_of, \
    _own_function, _program_attribute, _read_keyed, _settled, absent_names, present_getter
from .values import _MAX_DEPTH, _WHOLES, Unwatched, _Held, _holds_callables, \
    _is_callable_object, _is_value, _keyed_callables, _leaves, _may_hold_arrays, _record, \
    callable_key, held_values, helper_key, identities, pure_values, whole_key
from .whole_reads import loads, read_whole

__all__ = ["Reach", "code_parts"]


_call = getattr(operator, "call", None) or (lambda f: f())   # operator.call: Python 3.11
_HOLDERS = (types.ModuleType, type, types.SimpleNamespace)
_PARAMETER = object()   # the key of a name the root function's parameter has


class Reach:
    """The (function, name) places that hold arrays or helpers, from one root.

    Places are found again whenever a helper name comes to mean another
    function (``arrays`` checks that first).
    """

    __slots__ = ("root", "places", "helpers", "numbers", "has_arrays", "getters", "objects",
                 "partials", "_hosted", "wholes", "stored", "state", "baked", "callbacks", "live",
                 "handed", "escaped", "carried", "containers",
                 "_helper_values", "_number_names", "_chains", "_changed", "_live", "_stores",
                 "_walked", "_hosted_walked", "_codes", "_last", "decided", "_classes",
                 "contained", "present")

    def __init__(self, root, baked: bool = True):
        self.root, self.baked = root, baked   # baked False: a method handed to s.host
        self.state: set = set()   # the labels of chains a trace was seen to change
        self.decided: set = set()   # those a trace read first, then set (note_decided)
        self._find()

    def _find(self) -> None:
        self.places: list[tuple] = []     # (function, name, label, kind): kind True for
        # arrays, False for helpers and kernels (by identity), None for values: numbers,
        # strings, dtypes, classes and tuples of them (by value, _is_value)
        self._chains: list = []           # (function, _Chain, id of the object read)
        self._changed: list = []          # (id of an object, steps) walked code changes
        self._live: list = []             # those code run between calls changes (s.host's)
        self._stores: list = []           # (function, _Chain) the traced code stores in
        self.objects: list[tuple] = []    # (function, name, label): objects of the
        # program's own held by a name (OPT of OPT.update(s, g, w)): walked (held.py)
        self._hosted: list = []           # (function, name) of partials handed to s.host
        # (function, name, id of the list or dict): containers of values alone read
        # whole (for c in COEFS, sum(COEFS)): keyed by value unless walked code changes them
        self.wholes: list = []
        self.containers: set = set()      # the names of those walked code changes in
        # place (SEEN.add("w")): compared before and after a trace (stored), keyed by
        # value where it changes them as a flag (decided: container_flags)
        self.callbacks: list = []         # (function, Chain) host callbacks alone read
        self.handed: dict = {}            # label of an object place -> its handed.Hand
        self.escaped: set = set()         # labels of object places the code hands whole
        # to a call (sgd(OPT, s, w)): what reads them there is no chain off the name
        self.carried: list = []           # the functions of helpers held otherwise than by
        # a name of their own (UPD["sgd"](OPT, s, w), mod.helper): the graph calls them
        self._walked: list = []           # the Python functions walked, the root's first
        self._hosted_walked: set = set()  # those walked as host callbacks (and theirs)
        code = getattr(self.root, "__code__", None)   # its parameters' names are
        params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount] \
            if code is not None else ()                 # taken: a helper's x is touch.x
        self._classes: list = []          # (function, name, class, depth) of the program's
        seen, labels = set(), dict.fromkeys(params, _PARAMETER)   # classes reached by name
        self.contained: dict = {}         # (function, label) -> (Chain, classes) of the
        # containers of classes walked (class_reach.moved: their classes are walked again)
        self._walk(self.root, seen, 0, labels, self.baked)
        walk_classes(self, seen, labels)   # what their instances run (class_reach.py)
        hosted = self._hosted
        # a chain the traced code may change (if CFG.scale is None: CFG.scale = 2.0) is
        # watched until a trace is seen to change it (state: note_state); one a host
        # callback changes too (CFG["scale"] += 1 run at every launch) stays watched:
        # the graph bakes in what it read, so each change traces anew (named: live)
        watched = [(fn, chain, held) for fn, chain, held in self._chains
                   if str(chain) not in self.state]
        self.live = tuple(dict.fromkeys(str(chain) for _, chain, held in watched if any(
            at == held and changes(chain.steps, steps) for at, steps in self._live)))
        self.places += [(fn, chain, None, None) for fn, chain, _ in watched]
        keyed = self.decided - self.state - {str(chain) for _, chain, _ in watched}
        self.places += [(fn, _keyed(chain), None, None) for fn, chain in self._stores
                        if str(chain) in keyed and str(chain) not in self.containers]
        # (read first, then set: by value; a container changed as a flag: read whole)
        self.stored = tuple((fn, chain) for fn, chain, held in watched if any(
            at == held and changes(chain.steps, steps) for at, steps in self._changed))
        known = {str(chain) for _, chain in self.stored}   # and where it stores: a trace
        self.stored += tuple((fn, chain) for fn, chain in self._stores   # changing it
                             if str(chain) not in known)   # warns (STATS["calls"] += 1)
        changed = {at for at, _ in self._changed}
        flags = self.containers & keyed   # changed as a flag: read whole (LOG = [] too)
        self.wholes = tuple(dict.fromkeys(
            [(fn, name) for fn, name, at in self.wholes if at not in changed or name in flags] +
            [(fn, c.head) for fn, c in self._stores if c.head in flags]))
        del self._chains, self._changed, self._hosted, self._live, self._stores, self._classes
        self.helpers = tuple((fn, name, _lookup(fn, name))
                             for fn, name, _, array in self.places if array is False)
        self.numbers = tuple((fn, name) for fn, name, _, array in self.places if array is None)
        self.has_arrays = any(array for _, _, _, array in self.places)
        self.present = _global_places(self.places)   # (absent: keyed apart from None)
        # the helpers' then the numbers' names, looked up in C (functions())
        self.getters = tuple(_getter(fn, name) for fn, name, _ in self.helpers) + \
            tuple(present_getter(fn, name) for fn, name in self.numbers) + \
            tuple(_getter(fn, name) for fn, name in self.wholes) + \
            (_code_check(self._walked),)   # what each walked function runs (%autoreload 2
        # sets its code and defaults on the function): while it does, these parts
        self._codes = tuple(_Code(fn, code_parts(fn)) for fn in self._walked)
        self._last = None   # (what the getters said, the key) of the last call (functions)
        self._helper_values = tuple(v for _, _, v in self.helpers)
        # the partials among them holding values (FN = partial(mix, coefs)): keyed by those
        self.partials = tuple(i for i, (fn, name, v) in enumerate(self.helpers) if type(v) is
                              partial and (v.args or v.keywords) and (fn, name) not in hosted)
        self._number_names = tuple(name for _, name in self.numbers)

    def _walk(self, fn, seen, depth, labels, baked: bool = True) -> None:
        """The places of ``fn``; ``baked`` False for a host callback (and what it
        calls), which reads numbers and settings when it runs: not watched."""
        if id(fn) in seen or depth > _MAX_DEPTH:
            return
        seen.add(id(fn))
        self._walked.append(fn)
        if not baked:
            self._hosted_walked.add(fn)
        code = fn.__code__
        loaded = reads = None
        chains: list = []   # the code's dotted names, found when first needed
        stored = _stored(code)
        handed = hands(code)   # what it hands to s.host: for cb in HOOKS: s.host(cb, h)
        callbacks = {head for (head, steps), hand in handed.items()
                     if not steps and hand.callbacks_alone}
        read = set(_names(code, live=False)) if baked else set()   # baked where used
        if baked and (fn.__defaults__ or fn.__kwdefaults__):
            self._defaults(fn, code)
        for name in _names(code):
            v = _lookup(fn, name)
            if type(v) in _PROXIES and _dead(v):   # a weak proxy whose object is gone
                continue
            if v is None and name[:1] == "<":   # a module imported inside, not yet:
                self.places.append((fn, name, None, None))   # watched till it is there
                continue
            if _answers_oddly(v):   # an AttrDict: any attribute it lacks raises KeyError
                if _holds_settings(v) and name not in stored:
                    reads = reads if reads is not None else _reads(fn, code)
                    self._settings(fn, name, v, reads, baked)
                continue
            if name not in read and name not in stored:   # read by host callbacks alone
                reads = reads if reads is not None else _reads(fn, code)
                self._callback_reads(fn, name, reads)
            # (also one handed to s.host alone, cb = SINK.read: its object's arrays, read)
            if baked and _holds_own(v) and \
                    all(f is not fn or n != name for f, n, _ in self.objects):
                self.objects.append((fn, name, name if fn is self.root else
                                     f"{fn.__name__}.{name}"))
                self._handed_items(handed.get((name, ())), self.objects[-1][2])
            defined = name in code.co_freevars or name in fn.__globals__
            # a global defined nowhere yet (not a builtin) may hold an array later: a
            # place holding None, so that its array is another graph, and is named
            late = not defined and not hasattr(builtins, name) and \
                name in (loaded := loaded if loaded is not None else _loaded(code))
            if name in read and (_leaves(v, name) or late or defined and (  # not what only
                    _may_hold_arrays(v) or _holds_callables(v))):   # host callbacks reach
                key = id(v) if v is not None else (id(fn), name)   # None is one object
                label = name if labels.setdefault(name, key) == key else \
                    f"{fn.__name__}.{name}"
                self.places.append((fn, name, label, True))
                hand = handed.get((name, ()))   # OPS = {"a": helper}: what the helpers
                for key, x in _keyed_callables(v):   # reach (a callback's: not baked)
                    self._walk_into(x, seen, depth, labels, baked and not (
                        name in callbacks or hand is not None and hand.callback(key)))
                if (type(v) is tuple or _holds_settings(v)) and name not in stored:
                    reads = reads if reads is not None else _reads(fn, code)
                    self._settings(fn, name, v, reads, baked)   # MODEL["lr"] beside
                elif v is None and name in stored and baked:    # MODEL["layers"]; global
                    self._stores.append((fn, _chain(name, ())))   # KICK set from None
                if baked and isinstance(v, _WHOLES) and not v and name not in stored:
                    reads = reads if reads is not None else _reads(fn, code)
                    self._container(fn, code, name, v, reads)   # LOG = []: LOG.append("started")
                continue
            if isinstance(v, _HOLDERS) and not _library(v):   # K.step of a user module,
                self._classes += [(fn, name, v, depth)] if baked and isinstance(v, type) else []
                for dotted, held in _held_dotted(fn, code, name, chains):   # class,
                    if baked and isinstance(held, type):   # mod.Opts(): class_reach.py
                        self._classes.append((fn, dotted, held, depth))
                    hand = handed.get((name, tuple(dotted.split(".")[1:])))
                    record_reads(self, fn, dotted, held)   # Cfg.SINK.read of a namedtuple's
                    if held is not None and baked and _holds_own(held) and (
                            hand is None or not hand.callbacks_alone or own_object(held)) and \
                            all(f is not fn or n != dotted for f, n, _ in self.objects):
                        self.objects.append((fn, dotted, dotted))   # mystate.OPT
                        self._handed_items(hand, dotted)
                    if held is not None and _kernel_like(held):
                        self.places.append((fn, dotted, None, False))
                        self._walk_into(held, seen, depth, labels, baked and not (   # and what
                            hand is not None and hand.callbacks_alone))   # it reaches
                        if isinstance(held, classmethod):
                            class_reads(self, fn, dotted, held, v, baked)
            if _holds_settings(v) and name not in stored:   # CFG["lr"], cfg.lr, Config.lr
                reads = reads if reads is not None else _reads(fn, code)
                self._settings(fn, name, v, reads, baked)
            if name in read and name not in stored and isinstance(v, _WHOLES) and \
                    pure_values(v) is not None:   # COEFS = [1.0, 2.0], FLAGS = {"x"}
                reads = reads if reads is not None else _reads(fn, code)
                self._changed += [(id(v), steps) for head, steps in reads[1] if head == name]
                hosted = handed_methods(name, reads[0], handed)   # s.host(HIST.record, h)
                if not handed_alone(name, reads[0], handed, code) and (   # alone (a list or
                        not _holds_settings(v) or read_whole(code, name, v, hosted=hosted) or
                        not any(head == name and not _method_of(v, steps)   # dict read by
                                for head, steps in reads[0])):   # constant keys alone)
                    self.wholes.append((fn, name, id(v)))
                    if baked:   # SEEN.add("w"): the trace tells
                        self._container(fn, code, name, v, reads)
            # baked into the graph where it is used (a condition, STOP = gt.cond(c) < lim,
            # by its comparison and bound): watched by value, unless the function keeps
            # state in it (a counter); a namedtuple of values the code replaces (RS =
            # RS._replace(started=True)) as a value
            if v is None and name in stored and baked and not defined:
                self._stores.append((fn, _chain(name, ())))   # del GONE: the trace tells
                continue
            if _is_value(v) or _held_by_key(v) or name in stored and _record(v) and \
                    pure_values(v) is not None:
                if name not in stored and name in read:
                    self.places.append((fn, name, None, None))
                    self._keyed_arrays(fn, name, v)
                elif name in stored and baked:   # global STARTED; STARTED = True: the
                    self._stores.append((fn, _chain(name, ())))   # trace tells (stored)
                    if name in read and _is_value(v) and loads(code, name):   # a setting
                        self._chains.append((fn, _chain(name, ()), None))   # till changed
                continue
            declared = _has(v, "intents") and _has(_attr(v, "kernel"), "py_func")
            if declared or _has(v, "py_func"):   # a numba kernel (gt.kernel's too): numba
                self.places.append((fn, name, None, False))   # freezes what it reaches,
                device_places(self.places, _attr(_attr(v, "kernel") if declared else v,
                                                 "py_func"), seen, depth + 1)   # not the
                continue   # device functions it calls (reach_devices.py)
            if name in callbacks:   # CB = Sink.read: what it reads off cls
                bound_class_reads(self, fn, name, v)
            inner = _followed(v.func if isinstance(v, partial) else v)
            if inner is not None:
                if type(v) is partial and (not baked or name in callbacks):
                    self._hosted.append((fn, name))   # its values read when it runs
                    self.callbacks += [(fn, place) for place in (   # its arrays too
                        _chain(name, (("attr", at),)) for at in ("args", "keywords"))
                        if _leaves(place.read(fn), place)]
                    self._partial_objects(fn, name, v, inner)
                self.places.append((fn, name, None, False))
                self._walk(inner, seen, depth + 1, labels, baked and name not in callbacks)
            elif _is_callable_object(v) and not isinstance(v, _HOLDERS):   # by identity
                self.places.append((fn, name, None, False))   # gt.kernel(...), cupy's

    def _container(self, fn, code, name, v, reads) -> None:
        """Compare the list, set or dict of values ``name`` holds (``v``) before and after
        a trace (``stored``, ``containers``) where the code of ``fn`` changes it in place:
        whole (``D.update(init=True)``) or, where ``code`` reads it whole (``if D:``), by
        an item of a constant key (``D["init"] = True``, ``D.pop("k")``, ``del D["k"]``)."""
        if (name, ()) in reads[1] or read_whole(code, name, v, False) and any(
                head == name and len(steps) == 1 and steps[0][0] == "item"
                for head, steps in reads[1]):
            self._stores.append((fn, _chain(name, ())))
            self.containers.add(name)

    def _settings(self, fn, name, v, reads, baked: bool) -> None:
        """The values ``fn`` reads off ``v`` (held by ``name``) by constant attributes and
        items, watched by value (where ``baked``) unless walked code changes them (state)."""
        chains, changed, hosted = reads
        if _host_written(v, name, changed):   # (HOST_FLAG[0] = True)
            return
        self._changed += [(id(v), steps) for head, steps in changed if head == name]
        self._live += [(id(v), steps) for head, steps in (hosted if baked else changed)
                       if head == name]
        self._stores += [(fn, _chain(name, steps)) for head, steps in changed if baked and
                         head == name and steps and (head, steps) not in hosted]
        for steps in (steps for head, steps in chains if baked and head == name and
                      steps and _program_attribute(v, steps[0])):
            chain, value = _read_keyed(fn, _chain(name, steps))
            # None (a schedule not set yet: one put there later traces anew), a value, a
            # condition (CFG.stop = gt.cond(c) < lim), a set read whole (CFG.flags = {"x"};
            # a list there may be a history), or a namedtuple the code replaces
            # (CFG.rs = CFG.rs._replace(started=True)), as a value is
            if value is None or _is_value(value) or (isinstance(value, set) or _record(
                    value) and (name, steps) in changed) and pure_values(value) is not None \
                    or _held_by_key(value):
                self._chains.append((fn, chain, id(v)))
                self._keyed_arrays(fn, name, value, steps)
            elif _own_function(v) and _leaves(value, chain):   # h.buf: as OBJ.buf (held.py
                self.places.append((fn, chain, str(chain), True))   # walks no function)

    def _keyed_arrays(self, fn, name, v, steps=()) -> None:
        """The arrays an object ``watch_by_value`` watches holds (``STOP.array`` of
        ``STOP = gt.cond(r) > tol``; ``steps``: read off ``name``, ``CFG.stop``), bound
        as the call's arguments they are: the key holds how they share memory with
        those, as for a callback's (``callbacks``), so a call passing another array in
        their place traces anew (and is refused, as a condition on no argument is)."""
        for at in _KEYED_ARRAYS.get(type(v), ()):
            place = _chain(name, tuple(steps) + (("attr", at),))
            if _leaves(place.read(fn), place):
                self.callbacks.append((fn, place))

    def _callback_reads(self, fn, name, reads) -> None:
        """The places host callbacks read arrays at: ``name``, the chains they read
        off it (``STATE.buf``) and what the methods they call on an object of the
        program's own there read off it, as a bound method's self (``sink.notify()``,
        ``holder.sink.read()`` reading ``.buf``), but what they change in place (a
        history they append to): ``callback_arrays``."""
        chains, changed, hosted = reads
        kept = [c for head, c in (*changed, *hosted) if head == name]
        codes = [fn.__code__, *_nested_callback_codes(fn.__code__)]   # (lambda: ...)
        read = {()} | {steps for head, steps in chains if head == name} | {
            steps for c in codes[1:] for head, steps in _code_chains(c) if head == name}
        for steps in list(read):
            read |= {steps + more for c in codes for more in
                     _object_steps(c, _chain(name, steps).read(fn))}
        for steps in read:
            if not any(changes(steps, c) for c in kept):
                self._callback_place(fn, _chain(name, steps))

    def _callback_place(self, fn, place) -> None:
        """Keep ``place`` among the places host callbacks read (``callbacks``) where it
        holds arrays, or None or containers where one may come."""
        v = place.read(fn)
        if v is not MISSING and (_leaves(v, place) or _may_hold_arrays(v)):
            self.callbacks.append((fn, place))

    def _partial_objects(self, fn, name, v, inner) -> None:
        """The places a host callback ``partial`` (held by ``name``) reads through the
        objects of its arguments whose methods its function calls, as a bound
        method's self (``partial(Sink.notify, sink)`` reading ``sink.buf``)."""
        code = inner.__code__
        params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        given = [((("attr", "args"), ("item", i)), params[i] if i < len(params) else None)
                 for i in range(len(v.args))]
        given += [((("attr", "keywords"), ("item", k)), k if k in params else None)
                  for k in v.keywords]
        for steps, param in given:   # (the parameter it binds: read as self)
            own = [(inner, param)] if param is not None else []
            for more in _object_steps(code, _chain(name, steps).read(fn), own=own):
                self._callback_place(fn, _chain(name, steps + more))

    def _defaults(self, fn, code) -> None:
        """The settings ``fn`` reads off a parameter's mutable default (``def
        helper(s, out, cfg=CFG)`` reading ``cfg["a"]``): watched as chains off the
        default (``"=cfg"``) unless its code changes them."""
        params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        held = [p for p in params if _holds_settings(default_of(fn, p))]
        if not held:
            return
        chains, changed = value_chains(code, roots=frozenset(held))
        for head, steps in chains:
            if head not in held or not steps or \
                    any(h == head and changes(steps, c) for h, c in changed):
                continue
            chain, value = _read_keyed(fn, _chain("=" + head, steps))
            if value is None or _is_value(value) or isinstance(value, set) and \
                    pure_values(value) is not None:
                self._chains.append((fn, chain, id(default_of(fn, head))))

    def stored_entries(self) -> tuple:
        """``(label, type, value)`` of each chain the traced code may change
        (``stored``), read now: compared before and after a trace, which tells a
        setting (set from None, or not changed) from state (``note_state``)."""
        out = []
        for fn, chain in self.stored:
            v = chain.read(fn)   # not there (a name deleted too): set later, as from None
            v = NoKey.NONE if v is MISSING or not chain.steps and not defined(fn, chain.head) \
                else v
            form = _settled(v)   # (a container the key does not hold by itself: Unwatched)
            out.append((str(chain), type(v), Unwatched(form.value) if str(chain) in
                        self.containers and type(form) is _Held else form))
        return tuple(out)

    @property
    def walked(self) -> list:
        """The Python functions walked, the root's first."""
        return self._walked

    @property
    def hosted_walked(self) -> set:
        """The functions of ``walked`` walked as host callbacks, and those they call:
        their code runs at every launch, not when traced."""
        return self._hosted_walked

    def note_state(self, labels) -> None:
        """Leave out of the key, from now on, the chains of ``labels`` a trace changed."""
        new = {str(c) for _, c in self.stored} & set(labels) - self.state
        if new:
            self.state |= new
            self._find()

    def note_decided(self, labels) -> None:
        """Key by value, from now on, the chains of ``labels`` the code stores that a
        trace read first and then set (``if "init" not in STATE: ...; STATE["init"] =
        True``): the next call, finding the new value, traces again (``first_reads``)."""
        new = {str(c) for _, c in self.stored} & set(labels) - self.decided
        if new:
            self.decided |= new
            self._find()

    def forget_state(self) -> None:
        """Watch again the chains ``note_state`` left out."""
        if self.state:
            self.state.clear()
            self._find()

    def classes_moved(self) -> bool:
        """Find the places again where a container of classes walked holds others now
        (``MODELS["b"] = B`` after a trace): asked before each trace, so that the code
        of the classes it makes is walked (what their methods read keys the graph)."""
        if moved(self.contained):
            self._find()
            return True
        return False

    def _walk_into(self, v, seen, depth, labels, baked: bool = True) -> None:
        """Walk the Python function of a helper held otherwise than by a name of its
        own (``mod.helper``, a dict or list of helpers; ``baked`` False: a callback)."""
        inner = _followed(v.func if isinstance(v, partial) else v)
        if inner is not None:
            if baked and inner not in self.carried:
                self.carried.append(inner)
            self._walk(inner, seen, depth + 1, labels, baked)

    def _handed_items(self, hand, label: str) -> None:
        """Keep what the code hands to ``s.host`` of the container ``label`` names
        (``TABLE["log"]`` beside ``TABLE["sgd"](s, w)``): the walk of held objects
        leaves its callbacks alone (``handed``); and whether it hands the object
        whole to a call (``escaped``)."""
        if hand is not None and hand.hosted:
            self.handed[label] = hand
        if hand is not None and hand.escapes:
            self.escaped.add(label)

    def arrays(self) -> list[tuple[str, object]]:
        """``(label, array)`` for each place that holds an array now."""
        self._current()
        out = []
        for fn, name, label, array in self.places:
            if array:
                out += _leaves(_lookup(fn, name), label)
        return out

    def callback_arrays(self) -> list[tuple[str, object]]:
        """``(label, array)`` for each array the host callbacks read at a place of
        their own (``callbacks``) now: the cache key holds how they share memory
        with the call's arrays (a callback reading the array a copy of the graph
        writes runs after it), not which they are (it reads them when it runs)."""
        self._current()
        out = []
        for fn, place in self.callbacks:
            v = place.read(fn)
            out += _leaves(v, place) if v is not MISSING else []
        return out

    def watch(self) -> tuple | None:
        """What the call path's shortcut compares, for the names that hold arrays:
        ``(getters, deep)``. ``getters`` look up, in C, each name holding one array
        or None now (compared by identity); ``deep`` is ``(getter, identities)``
        for each name holding a list, tuple or dict (compared by ``unchanged``).
        None where one holds a container ``identities`` cannot vouch for."""
        places = [(_lookup(fn, name), present_getter(fn, name)) for fn, name, _, array in
                  self.places + [(fn, name, None, True) for fn, name in self.wholes] if array]
        # (a list of values read whole too: changed in place, its items differ); and
        # what host callbacks read (rebound, how it shares memory may differ)
        places += [(place.read(fn), place.getter(fn, _getter(fn, place.head)))
                   for fn, place in self.callbacks]
        getters, deep = [], []
        for v, get in places:
            if v is None or is_array(v):
                getters.append(get)
                continue
            held: list = []
            if not identities(v, held):
                return None
            deep.append((get, held))
        return tuple(getters), tuple(deep)

    def _current(self) -> None:
        """Find the places again if a helper name now means another function."""
        if not all(_lookup(fn, name) is v for fn, name, v in self.helpers):
            self._find()

    def functions(self, again: bool = True) -> tuple:
        """The helper functions and kernels reached now, and the numbers global and
        closure names hold, as ``(name, type, value)`` (part of the cache key: a new
        one traces anew). Runs at every call: the names are looked up in C. Where
        a name holds another kind of thing now, its places are found again, once
        (``again``): a chain that holds what no place reads by value once found
        anew (``_Settings.bufs = (a, b)`` of arrays the trace sets) keys nothing."""
        try:
            now = tuple(map(_call, self.getters))
        except ValueError:   # an empty cell: the way that says None for it
            now = tuple(_lookup(fn, name) for fn, name, _ in self.helpers) + \
                tuple(present_getter(fn, name)() for fn, name in self.numbers) + \
                tuple(_lookup(fn, name) for fn, name in self.wholes) + \
                (self.getters[-1](),)
        last = self._last
        if last is not None and len(now) == len(last[0]) and all(map(operator.is_, now, last[0])):
            return last[1]   # the very helpers and numbers of the last call: its key
        k, m, w = len(self._helper_values), len(self._number_names), len(self.wholes)
        if again and (not all(map(operator.is_, now[:k], self._helper_values)) or
                      now[k + m + w] is not True):
            self._find()   # a helper name means another function now, or a function
            return self.functions(False)   # runs other code: their places
        numbers, wholes = now[k:k + m], tuple(map(whole_key, now[k + m:k + m + w]))
        settled = tuple(map(_settled, numbers))
        # (by identity: a value's class may answer == symbolically, or raise)
        if again and (id(MISSING) in map(id, settled) or id(None) in map(id, wholes)):
            self._find()   # one holds an array, a function or an object now
            return self.functions(False)
        for fn, name, _, array in self.places if self.has_arrays else ():
            v = _lookup(fn, name) if array else None
            if v is not None and type(v) not in _PLAIN_CONTAINERS and not is_array(v) and \
                    (_is_value(v) or _is_callable_object(v) or own_class(type(v)) or
                     _held_by_key(v)) or \
                    isinstance(v, _WHOLES) and v and not _may_hold_arrays(v) and \
                    pure_values(v) is not None:
                if not again:
                    break
                self._find()   # a name that held None (or was not defined yet) holds
                return self.functions(False)   # a number, a function, a kernel or a
                # condition now; an empty list, where arrays may go, holds numbers now
                # (read whole)
        out = tuple(map(helper_key, now[:k])) + self._codes + \
            tuple(callable_key(now[i]) for i in self.partials) + tuple(
            (name, type(v), form)
            for name, v, form in zip(self._number_names, numbers, settled)) + tuple(
            (name, v) for (_, name), v in zip(self.wholes, wholes)) + tuple(
            h for fn, name, label, array in self.places if array   # PARAMS = (W, 2.0)
            for h in held_values(_lookup(fn, name), label)) + absent_names(self.present)
        # kept where it reads nothing a call may change in place (a container, an array)
        self._last = (now, out) if not (self.wholes or self.partials or self.has_arrays) \
            and all(type(v) in _IMMUTABLE for v in numbers) else None
        return out

"""``@graph``: the decorated function, its signature cache and its call path.

A call's arguments give the cache key (``arguments.py``); a miss traces the
function and builds a graph for the backend; a hit rebinds the cached graph
to the call's arrays and numbers. A call with the very objects of the last
call skips all of that and only launches. ``GraphFunction`` takes the binding
of a call to the decorated function's signature from ``decorate.py`` (which
also refuses what cannot be decorated), the trace of a call from
``tracing.py``, and what a call warns of (retracing, state a trace changed)
from ``retrace.py``.
"""
from __future__ import annotations

import functools
import inspect
import os
import threading
import time
import types
from collections import OrderedDict, namedtuple

from . import log
from .arguments import Call, cache_entry, same_call, snapshot
from .backend import resolve, runnable
from .context import STATE, current_tracer, refuse_in_callback
from .debug import checks_intents
from .decorate import (CallSignature, _mutable_defaults, _refuse_undecorable, call_signature,
                       checked_options, static_names)
from .errors import ArgumentError, TraceError
from .handle import Compiled
from .holding import Holdings
from .ir import Graph
from .profile import Profile, profile
from .code_parts import signed
from .reach import Reach
from .first_reads import never_read
from .replayed_stores import apply as apply_stores, argument_values, put_back, stores_of
from .retrace import CallWarnings
from .shortcuts import Shortcuts, call_of, is_
from .stream import Stream
from .bound import BoundGraphFunction
from .tracing import Tracing
from .unkeyed import plain_snapshot, unkeyed
from .values import unchanged

__all__ = ["graph", "GraphFunction", "BoundGraphFunction", "CacheInfo"]


CacheInfo = namedtuple("CacheInfo", "hits misses maxsize currsize")


def _labels(fixed) -> set:
    """The labels of the values a call's key holds (``Call.key``'s second part:
    ``("self.lr", float, 0.1)``, ``("CFG['lr']", ...)``)."""
    return {e[0] for e in fixed if type(e) is tuple and e and type(e[0]) is str}


def _default_backend():
    global _BACKEND
    if _BACKEND is None:
        from .backend import default_backend
        _BACKEND = default_backend()
        log.backend_chosen(_BACKEND, bool(os.environ.get("GRAPHTRACE_BACKEND", "").strip()))
    return _BACKEND


_BACKEND = None


class GraphFunction(CallSignature, Tracing, CallWarnings, Shortcuts):
    """A function traced into a CUDA graph; made by ``@graph``."""

    _graphtrace_graph = True   # what s.child() checks (a numba kernel has __wrapped__ too)

    def __init__(self, fn, deps: str = "data", static=(), backend=None, maxsize=32,
                 check_intents=None):
        if isinstance(fn, staticmethod):   # @gt.graph above @staticmethod: its function
            fn = fn.__func__
        _refuse_undecorable(fn)
        checked_options(deps, backend, maxsize, check_intents)
        self.fn, self.deps, self.backend, self.maxsize = fn, deps, backend, maxsize
        self.check_intents = check_intents
        self._cache: OrderedDict = OrderedDict()
        self._lock = threading.RLock()
        self._hits = self._misses = 0
        self._traced = False   # traced at least once (clear_cache leaves it: log.why_traced)
        self._keys_seen: dict = {}   # distinct signatures traced, in order
        self._dropped: dict = {}     # hashes of the keys the full cache dropped, in order
        self._thrashed = 0           # traces of keys dropped before (_note_thrash)
        self._instances_seen: dict = {}   # a method's: id(self) -> (weak ref, its signatures)
        self._warned = False
        self._live_warned: set = set()   # the values callbacks change, named (_warn_live)
        self._draws_warned: set = set()   # (code, line) of host draws named (_warn_draws)
        self._last = None     # (argument snapshot, compiled graph, backend, what names held,
        # a method's Guard or None)
        self._guard_skip = 0  # slow calls left before a method's Guard is made again
        self._fast = None     # the same, as __call__ checks it first (_fast_check)
        functools.update_wrapper(self, fn)
        self._sig = call_signature(fn)
        self._signed = signed(fn)   # what _sig was read off (_resign)
        names = list(self._sig.parameters)
        if not names or names[0] == "self" and len(names) < 2:
            raise TypeError(f"@graph function {fn.__name__} must take the proxy stream "
                            "as its first parameter (after self, for a method)")
        # A method takes self, then the proxy stream: self is an argument whose
        # array attributes the graph may use (tracked like globals).
        self._lead = 1 if names[0] == "self" else 0
        self.self_param = names[0] if self._lead else None
        self._stream_param = names[self._lead]
        kind = self._sig.parameters[self._stream_param].kind
        if kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            star = "*" if kind is inspect.Parameter.VAR_POSITIONAL else "**"
            raise TypeError(
                f"@graph function {fn.__name__} takes {star}{self._stream_param} where the "
                "proxy stream goes (its first parameter, after self for a method): a "
                "decorator's wrapper made without functools.wraps hides the parameters "
                "of the function it wraps; give the wrapper @functools.wraps(fn), or "
                "put @gt.graph below that decorator, on the function itself")
        self.params = names[:self._lead] + names[self._lead + 1:]
        # what it reaches beyond its parameters: names, self, held objects (holding.py)
        self._holdings = Holdings(fn, self.self_param)
        self._own_keywords = {"stream", "backend"} & set(self.params)
        # defaults that may change in place (a list or dict of numbers): every call
        # takes the full check, which reads them as it reads arguments (_immutable)
        self._mutable_defaults = _mutable_defaults(self._sig)
        self.static = static_names(static, self.params, fn.__name__)
        # the attributes graphtrace keeps on the object: the others are the program's
        # (step.i = 1 - step.i, which a loop body's slots take: ops/_loop_slots.py)
        self._fields = frozenset(self.__dict__) - set(vars(fn)) | {"_fields"}

    def reached(self, arguments, held=None) -> list:
        """``(label, array)`` for the arrays the graph may use that are not in its
        parameters (``Holdings.reached``)."""
        return self._holdings.reached(arguments, held)

    def holds(self, arguments):
        """The program's own objects a call's ``self`` (or the function's names)
        holds, found once for ``reached`` and ``functions`` (``Holdings.holds``)."""
        return self._holdings.holds(arguments)

    def functions(self, self_obj=None, held=None) -> tuple:
        """What the cache key holds by value of what the function reaches beyond
        its parameters (``Holdings.functions``)."""
        return self._holdings.functions(self_obj, held)

    @property
    def reach(self) -> Reach:
        """Arrays and helpers reached by name (``reach.py``), found at first use."""
        return self._holdings.reach

    def trace(self, *args, **kwargs) -> Graph:
        """Trace with these arguments and return the IR; runs nothing on a GPU
        (``stream=`` and ``backend=``, as a call takes them, are accepted and unused:
        the IR is the same on either backend; a backend is checked for its name).

        >>> @gt.graph
        ... def step(s, x, out, a):
        ...     scale[1, 32, s](x, a, out)
        ...     add[1, 32, s](out, x)
        >>> print(step.trace(cuda.device_array(32), cuda.device_array(32), 2.0))
        ... # doctest: +ELLIPSIS
        graph step(x, out, a)  deps=data  2 nodes, 1 edge
          %0 = kernel scale[1, 32](x, a, out)  in(x)  out(out)  # <doctest ...>:3
          %1 = kernel add[1, 32](out, x)  in(out)  inout(x)  after(%0)  # <doctest ...>:4
        """
        if "backend" not in self._own_keywords:
            resolve(kwargs.pop("backend", None), "sim")   # checked, then unused
        self._drop_stream(kwargs)
        arguments = self._bind(args, kwargs).arguments
        obj = arguments[self.self_param] if self._lead else None
        if self._lead:   # what the key reads of self, found (Holdings.entries reads it)
            self._holdings.functions(obj)
        held = self._holdings.entries(obj)
        given = argument_values(arguments, self.self_param, self.fn)
        kept = self._holdings.kept(held, given, obj, arguments, self.params)
        try:
            return self._trace(args, kwargs)[0]
        finally:   # no call: the values its Python set are put back (if not
            # self.started: ...; self.started = True; a signal, NEWS = True)
            self._holdings.put_back(kept, held, given, obj, arguments, self.params)

    def _drop_stream(self, kwargs: dict) -> None:
        """``stream=`` given as a call takes it, where nothing runs on it (a trace, a
        compiled handle, a profile, which times on a stream of its own)."""
        if "stream" not in self._own_keywords:
            self._refuse_stream(kwargs.pop("stream", None))   # stream=1.0: no stream

    def profile(self, *args, **kwargs) -> Profile:
        """Where the time of a launch with these arguments goes (``profile.py``).

        On the GPU: each node's time, replayed alone (median of ``repeat=10``
        runs), the critical path, and the sum of node times against the whole
        graph's; on the simulator: the structure, without times. The arrays end
        as one call leaves them. ``repeat`` and ``backend`` are keywords of
        profile unless the function has parameters of those names.

        >>> @gt.graph
        ... def step(s, x, out):
        ...     scale[1, 32, s](x, 2.0, out)
        ...     add[1, 32, s](out, x)
        >>> p = step.profile(cuda.to_device(np.ones(32)), cuda.device_array(32))
        >>> [n.index for n in p.critical_path]
        [0, 1]
        >>> p.timeline("step.png")           # doctest: +SKIP
        """
        options = {k: kwargs.pop(k) for k in ("repeat", "backend")
                   if k in kwargs and k not in self.params}
        self._drop_stream(kwargs)
        return profile(self, args, kwargs, **options)

    # --- the call path -----------------------------------------------------
    def _compiled(self, args, kwargs, backend=None, replay=False):
        """``(compiled graph, call)``: from the cache, or traced and built now. A call
        that replays (``replay``) a cached graph whose trace read values first, then
        set them, sets them again (``replayed_stores``)."""
        call = Call(self, self._bind(args, kwargs))
        key = (backend or self._backend_now(None), call.key)
        with self._lock:
            entry = cache_entry(self._cache, key, self.__name__)
            if entry is not None and entry.broken:
                del self._cache[key]
                entry = None
                log.decision("%s: a failed update broke its graph for this signature: "
                             "tracing it again", self.__name__)
            if entry is not None:
                self._cache.move_to_end(key)
                self._hits += 1
                if entry.stores:   # if not self.started: ...; self.started = True
                    call.stale = call.stale or entry.settle   # (found set: in full)
                    if replay:
                        apply_stores(entry.stores, self._bind(args, kwargs).arguments)
                return entry, call
            if self._holdings.reach.classes_moved():   # LST.append(B): B's code unwalked
                return self._compiled(args, kwargs, backend, replay)
            log.tracing(self.__name__, log.why_traced(self, key[0], call.key, self._cache))
            if hash(key) in self._dropped:
                self._note_thrash()
            self._misses += 1
            self._traced = True
            self._note_retrace(call.key)
            t0 = time.perf_counter()
            holdings = self._holdings
            arguments = self._bind(args, kwargs).arguments
            obj = arguments[self.self_param] if self._lead else None
            held = holdings.entries(obj)
            bare, plain = holdings.bare_arrays(obj), plain_snapshot(holdings.reach)
            given = argument_values(arguments, self.self_param, self.fn)   # st.init of one
            kept = None if replay else holdings.kept(held, given, obj, arguments, self.params)
            regions = len(holdings.regional)
            ir, arrays, scalars, changed = self._trace(args, kwargs, call.key)
            t1 = time.perf_counter()
            if len(holdings.regional) != regions:   # captured regions reached arrays
                call.add_regions()                   # through places no name shows (m.W):
                key = (key[0], call.key)             # keyed from now on, this graph too
            # held objects' attributes the trace changed: their state
            again, state, decided, made, filled = holdings.note_traced(held, obj) if held else \
                (False, (), (), (), set())
            taken, moved, boxes = holdings.note_arguments(obj, given, argument_values(
                arguments, self.self_param, self.fn))   # an argument's st.init, st.ran = True
            decided, filled = set(decided) | taken, filled | boxes   # (st.log: refilled)
            hidden = unkeyed(plain, plain_snapshot(holdings.reach), {e[0] for e in (
                held or (None, ()))[1] + (holdings.entries(obj) or (None, ()))[1]},
                holdings.reach)
            swapped = holdings.rebound(bare, holdings.bare_arrays(obj))
            live = holdings.live(obj, call.key[1]) - self._live_warned
            drawn = self._draws(obj, ir)   # random.random(), time.time(): baked in
            # keyed without the state, by the settings as the trace left them; but by
            # the old value of one it read first (if not self.started: ...), so that the
            # next call, finding the new one, traces again; and of a signal it only set,
            # never read (self.ran = True), which the caller may clear: the replays set
            # them again
            found = Call(self, self._bind(args, kwargs))   # the key as the trace left it
            after = (key[0], found.key)
            signals = holdings.read_first(obj, made, never_read) & _labels(after[1][1]) \
                if again and made else set()
            if again and not decided and not signals:
                call, key = found, after
            else:   # keyed by what the trace then changed (if "init" not in self.state:
                # ...; self.state["init"] = True): the next call takes the full check,
                # which the snapshots taken after the trace would not vouch for
                call.stale = bool(decided or signals) or after != key
            written = set(made) - _labels(after[1][1]) | signals | moved   # NEWS = True too
            if key[0] == "sim":
                from .sim import SimGraph as Made
            elif checks_intents(self.check_intents):
                from .debug import CheckedGraph as Made
            else:
                from .emit import CompiledGraph as Made
            entry = Made(ir, arrays, scalars)
            if decided or written:   # set again by each replay (replayed_stores): a flag
                # the trace read first, or one it only set (a signal, NEWS = True)
                where = holdings.store_roots(obj, self.params)
                entry.stores = stores_of(decided | written, where, arguments, given, filled)
                entry.settle = bool(decided or signals) or any(   # (a signal off a name
                    fn is None and name != self.self_param   # or self the key does not
                    for fn, name, _, _ in entry.stores)      # hold: set by the shortcuts)
                call.stale = call.stale or entry.settle
                if kept:   # compile: the first call replays it, finding them as they were
                    put_back(kept, where, arguments, (decided | written).intersection)
            log.compiled(self.__name__, key[0], ir, entry, t1 - t0, time.perf_counter() - t1)
            self._cache[key] = entry
            if self.maxsize is not None and len(self._cache) > self.maxsize:
                dropped, gone = self._cache.popitem(last=False)
                gone.wait()  # its arrays may be in use
                self._dropped[hash(dropped)] = None   # (traced again: _note_thrash)
                if len(self._dropped) > 4 * self.maxsize:
                    del self._dropped[next(iter(self._dropped))]
                log.decision("%s: cache full (maxsize=%d): dropped the least recently used "
                             "graph", self.__name__, self.maxsize)
        if state:   # once cached: a warning made an error does not throw the trace away
            self._warn_state(state)
        if hidden:   # setattr(OB, NAME, True), ST[k + "0"] = True, FL[0] = 1: unkeyed
            self._warn_state(hidden, unkeyed=True)
        if swapped:
            self._warn_rebound(swapped, obj)
        if changed:
            self._warn_copies(changed)
        if live:
            self._warn_live(live)
        if drawn:
            self._warn_draws(drawn)
        return entry, call

    def _backend_now(self, backend) -> str:
        if backend is None and self.backend is None:
            return _default_backend()
        return runnable(resolve(backend, self.backend))

    def compile(self, *args, **kwargs):
        """The compiled graph for these arguments, bound to them (nothing launched).

        A ``Compiled`` handle over the function's cached graph for this
        signature (``compiled``; every attribute of it is the handle's too): its
        ``launch`` replays the graph with these arguments, pointing it back at
        them first where a call of the function or another handle has bound it
        to others since (``handle.py``). On the simulator backend the graph is
        a ``SimGraph`` with the same interface.

        >>> @gt.graph
        ... def step(s, x, out, a):
        ...     scale[1, 32, s](x, a, out)
        ...     add[1, 32, s](out, x)
        >>> x, out = cuda.to_device(np.ones(32)), cuda.device_array(32)
        >>> g = step.compile(x, out, 2.0)
        >>> g.node_count, g.edge_count
        (2, 1)
        >>> g.launch()                       # on the GPU: g.launch(stream), asynchronous
        >>> float(x.copy_to_host()[0])
        3.0

        ``backend=`` picks the backend, unless the function has a parameter of
        that name (then it is the function's, as in a call).
        """
        backend = kwargs.pop("backend", None) if "backend" not in self._own_keywords else None
        self._drop_stream(kwargs)
        entry, call = self._compiled(args, kwargs, self._backend_now(backend))
        with entry._lock:
            entry.rebind(call.objs, [b.ptr for b in call.bufs], call.svals)
            entry._bound = None   # a later call must check its arguments again
            return Compiled(entry)

    def __call__(self, *args, **kwargs):
        """Run the graph for these arguments on ``stream=`` (asynchronously).

        On the simulator backend the call runs to completion on the CPU.
        Called with a proxy stream, inside another graph's trace, the
        function's ops join that graph (see ``_inline``). Where the function
        has a parameter named ``stream`` or ``backend``, that keyword is its
        own: launch on another stream with ``f.compile(...).launch(stream)``.
        """
        if getattr(STATE, "callback", False):   # inside a host callback of a graph
            refuse_in_callback(f"graph function {self.__name__}")
        fast = self._fast   # the last call's very objects, checked in C
        if fast is not None and (not kwargs or len(kwargs) == 1 and "stream" in kwargs
                                 and fast[6]) and len(args) == len(fast[0]):
            try:
                same = all(map(is_, args, fast[0])) and \
                    all(map(is_, map(call_of, fast[2]), fast[3])) and \
                    self.backend is fast[4] and _BACKEND == fast[5] and \
                    getattr(STATE, "tracer", None) is None and \
                    (fast[10] is None or tuple(map(call_of, fast[10][0])) == fast[10][1])
            except ValueError:   # a closure cell emptied since: the full check says
                same = False
            for i, kind, items in fast[1]:   # container arguments: what they hold
                a = args[i]
                if kind is None:   # a dict or nested containers (values.identities)
                    if not unchanged(a, items):
                        same = False
                elif type(a) is not kind or len(a) != len(items) or \
                        not all(map(is_, a, items)):
                    same = False
            try:   # names holding containers of arrays: what their leaves depend on
                same = same and all(unchanged(get(), held) for get, held in fast[9])
            except ValueError:
                same = False
            stream = kwargs.get("stream")
            if same and not isinstance(stream, Stream):
                entry = fast[7]
                with entry._lock:
                    if entry._bound is fast[8] and not entry.broken:
                        try:
                            entry.launch(stream)
                        except TypeError:   # stream=1.0: refused at the call's line
                            self._refuse_stream(stream)
                            raise
                        self._hits += 1
                        if entry.stores:   # a signal only set (NEWS = True)
                            apply_stores(entry.stores, {})
                        return
        own = self._own_keywords
        stream = kwargs.pop("stream", None) if "stream" not in own else None
        backend = kwargs.pop("backend", None) if "backend" not in own else None
        self._refuse_stream(stream)   # stream=1.0 (an option meant for **opts): no stream
        if isinstance(stream, Stream) and self._stream_param == "stream":
            kwargs["stream"], stream = stream, None    # f(stream=s, ...) inside a trace
        lead = self._lead
        if isinstance(args[lead] if len(args) > lead else kwargs.get(self._stream_param),
                      Stream):
            return self._inline(args, kwargs, stream, backend)
        if current_tracer() is not None:
            raise TraceError(
                f"{self.__name__}(...) called inside the trace of {current_tracer().name} "
                "without the proxy stream: it would run now, outside the graph; call "
                f"{self.__name__}(s, ...) to record its ops into the graph")
        chosen = self._backend_now(backend)
        last = self._last
        if last is not None and last[2] == chosen and (
                last[4] is not None and self._guarded(args, kwargs, last) or
                same_call(args, kwargs, last[0]) and self._reached_same(args, last[3])):
            entry = last[1]   # the very arguments of the last call: nothing to rebind
            with entry._lock:
                if entry._bound is last[0] and not entry.broken:
                    entry.launch(stream)
                    self._hits += 1
                    if entry.stores:   # a signal only set (self.ran = True, NEWS = True)
                        apply_stores(entry.stores, {self.self_param: args[0]} if self._lead
                                     else {})
                    return
        entry, call = self._compiled(args, kwargs, chosen, replay=True)
        snap = (tuple(snapshot(a) for a in args), snapshot(kwargs) if kwargs else None)
        # what the next call is compared with, read before the launch: a host callback
        # of the graph may change a watched name or a container argument, which the
        # next call must see. Defaults changed in place make each call another call;
        # keywords: the next call's defaults may differ from them (the full check says)
        keep = not self._mutable_defaults
        # callbacks passed reaching host arrays: the full check reads what they hold now
        free = keep and not call.reached[3] and not call.stale
        fast = self._fast_check(args, snap, entry, _BACKEND) if free and not kwargs else None
        # a method's, a function's whose names hold objects (TABLE["sgd"]): a Guard
        guard = self._guard(args) if free and fast is None and (
            len(args) if self._lead else self._holdings.reach.objects) and \
            not self._holdings.regional else None   # (its snapshots hold no region's places)
        with entry._lock:
            entry.rebind(call.objs, [b.ptr for b in call.bufs], call.svals)
            entry._bound = snap
            entry.launch(stream)
        if keep and not call.stale:
            self._last, self._fast = (snap, entry, chosen, call.reached, guard), fast
        else:   # keyed by what its trace changed: the next call finds its key in full
            self._last = self._fast = None

    def __get__(self, obj, objtype=None):
        """A decorated method, bound to its instance."""
        if obj is None or not self._lead:
            return self
        return BoundGraphFunction(self, obj)

    def cache_info(self) -> CacheInfo:
        """Hits (calls and ``compile`` that found a cached graph, the very arguments
        of the last call too), misses (traces), and the number and bound of cached
        graphs."""
        return CacheInfo(self._hits, self._misses, self.maxsize, len(self._cache))

    # the function's defaults, read and set through the decorated object as on the
    # function itself (f.__kwdefaults__["k"] = 8.0, f.__defaults__ = (5.0,)): the
    # wrapper held a __defaults__ of its own, which no call read
    __defaults__ = property(lambda self: self.fn.__defaults__,
                            lambda self, v: setattr(self.fn, "__defaults__", v))
    __kwdefaults__ = property(lambda self: self.fn.__kwdefaults__,
                              lambda self, v: setattr(self.fn, "__kwdefaults__", v))

    def clear_cache(self) -> None:
        """Drop every compiled graph (and the buffers they keep alive), once their
        launches are done, and start ``cache_info``'s counts again (as
        ``functools.lru_cache``'s ``cache_clear`` does)."""
        with self._lock:
            self._hits = self._misses = 0
            for entry in self._cache.values():
                entry.wait()
            self._cache.clear()
            self._keys_seen.clear()
            self._instances_seen.clear()
            self._dropped.clear()
            self._holdings.forget()
            self._last = self._fast = None
            self._guard_skip = 0

    def __repr__(self):
        return f"<graphtrace.graph {self.__name__} deps={self.deps}>"

    def __reduce__(self):
        """Pickled by its name, as a function is (found again where it was defined);
        copied as itself: an object holding it copies and pickles (its graphs, its
        lock and cache are the function's, not the object's)."""
        return self.__qualname__


def graph(fn=None, *, deps: str = "data", static=(), backend=None, maxsize: int = 32,
          check_intents: bool | None = None):
    """Turn a function into an explicit CUDA graph, traced on first call.

    The function receives a proxy stream as its first parameter; callers do
    not pass it. Ops issued on the proxy become graph nodes, ordered by the
    memory they touch (``deps="data"``) or by stream order as stream capture
    would (``deps="streams"``). ``static`` names parameters whose values are
    baked into the graph (a new value traces a new graph). ``backend``
    (``"gpu"`` or ``"sim"``) overrides ``GRAPHTRACE_BACKEND``; ``maxsize``
    bounds the number of compiled graphs kept per function. ``check_intents=True``
    (or ``GRAPHTRACE_CHECK_INTENTS=1``) runs GPU graphs node by node and raises
    ``IntentError`` when a node changes an array it was said to only read
    (``graphtrace/debug.py``); the simulator always checks.

    >>> @gt.graph
    ... def step(s, x, out, a):
    ...     scale[1, 32, s](x, a, out)     # numba's launch syntax on the proxy stream
    ...     s.memset(x[:2], 0)             # after scale, which reads x
    >>> x, out = cuda.to_device(np.arange(4.0)), cuda.device_array(4)
    >>> step(x, out, 2.0)                  # trace, build, launch
    >>> cuda.synchronize()
    >>> out.copy_to_host(), x.copy_to_host()
    (array([0., 2., 4., 6.]), array([0., 0., 2., 3.]))
    >>> step(x, out, 3.0)                  # same signature: rebind the number, launch
    >>> step.cache_info()
    CacheInfo(hits=1, misses=1, maxsize=32, currsize=1)
    """
    if fn is None:
        return lambda f: _graph_of(f, deps, static, backend, maxsize, check_intents)
    return _graph_of(fn, deps, static, backend, maxsize, check_intents)


def _graph_of(fn, *options):
    """A ``GraphFunction``, or for a method bound to its object (``gt.graph(model.step)``)
    the graph of its function bound to that object, as the decorator on the method
    makes it: the object is then the method's ``self``, whose values and arrays the
    graph watches. Hidden by the bound method's signature, they were baked in."""
    if not (isinstance(fn, types.MethodType) and inspect.isfunction(fn.__func__)):
        return GraphFunction(fn, *options)
    first = next(iter(inspect.signature(fn.__func__).parameters), None)
    if first != "self":
        what = "a class" if isinstance(fn.__self__, type) else "an object"
        raise ArgumentError(
            f"{fn.__func__.__qualname__} is bound to {what} it takes as {first!r}: graphtrace "
            "watches the values and arrays of the object a method is bound to through a "
            "first parameter named self, and could not see them change here; make it a "
            "method taking self (def step(self, s, ...)) and decorate that, or pass the "
            "values the graph uses as arguments")
    return BoundGraphFunction(GraphFunction(fn.__func__, *options), fn.__self__)

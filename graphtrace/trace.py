"""The tracer: a trace's recording API, and the regions it records into.

Tracing runs the user's function once with a proxy stream (``stream.py``) as
its first argument (``function.py``). Each method of the proxy hands the op to
its op module (``ops/``), which records a ``Node`` through the tracer's
recording API; the dependency tracker (``deps.py``) gives the node its
predecessors as it is recorded. Nothing runs on a GPU while tracing.
"""
from __future__ import annotations

import os
import threading
from sys import _getframe

import numpy as np

from .buffers import Buffer, _Intent
from .columns import Recording
from .context import (before_trace, run_trace_hooks, ProxyStream, current_tracer,
                      gc_paused, pause_gc, set_tracer)
from .deps import MODE_CODES, MODE_NAMES, Regions, make_tracker
from .errors import StreamError, TraceError, _internal, _is_internal, near, summary, user_frame
from .ir import Graph, Node
from .ops import kernel as _kernel
from .ops.base import record_args
from .ops.kernel import LOWEST_ADDRESS
from .placement import ONE_DEVICE
from .roots import _Roots
from .scalar import Scalar
from . import _driver, arrays as _arrays, placement as _placement, \
    regions as _regions, temporary as _temporary

__all__ = ["Tracer", "Scope"]

_hooks_lock = threading.RLock()   # (a finalizer a collection runs in a hook may trace)


_MEMO_SIZE = 4096   # launches remembered (Tracer.add)
_MEMO_MISSES = 64   # launches bringing new arrays after which a kernel is not remembered
# Arguments that are never arrays: recorded as they are, without a look inside.
_CONSTANTS = frozenset((int, float, bool, complex, str, type(None)))
_OPEN = (list, tuple, dict, _Intent, np.generic)   # looked into by record_args
_NUMPY_NUMBERS = frozenset(t for t in set(np.sctypeDict.values())
                           if issubclass(t, (np.number, np.bool_)))
# What a launch argument of these types is: 0 a constant, _INTEGER an int that is
# an address from LOWEST_ADDRESS on, _DYNAMIC a number given at each call.
_INTEGER, _DYNAMIC = 1, 2
_PLAIN = {t: _INTEGER if t is int or t in _NUMPY_NUMBERS and np.dtype(t).kind in "iu" else 0
          for t in _CONSTANTS | _NUMPY_NUMBERS} | {Scalar: _DYNAMIC}
_TWO = object()   # a launch's arrays and stream are on two devices
# Tracer.again's common case and Tracer._arguments', compiled (_speedups.c;
# use_speedups turns them off)
_fast_record = None if _kernel.speedups_module is None else _kernel.speedups_module.record
_fast_arguments = None if _kernel.speedups_module is None else \
    _kernel.speedups_module.arguments


class _NOWHERE:   # the source of a launch that no frame outside graphtrace issued
    f_code, f_lasti = "<unknown>", 0


class Scope:
    """Where nodes are being recorded: the function's own graph, or a region of
    a structured node. Each has its recording (``columns.Recording``), its own
    dependency tracker (of the trace's mode) and its own events: dependencies
    never cross a region (an event recorded in or waited on in a child region
    orders its node in the parent: Tracer.wait_event)."""

    __slots__ = ("name", "rec", "deps", "online", "events", "closed", "parent",
                 "open_regions", "conditional", "mode", "waits", "body", "opened",
                 "called_at")

    def __init__(self, name: str, mode: str, slots: list, regions: Regions,
                 parent: "Scope | None" = None, conditional: bool = False):
        self.name, self.rec, self.mode = name, Recording(slots), mode
        self.deps = make_tracker(mode, regions)
        self.online = mode == "streams"   # its tracker follows every node as it comes
        self.events: dict[int, tuple] = {}   # id(event) -> (event, its record node)
        self.waits: list[Node] = []   # nodes of the parent that its node must follow
        self.closed = False
        self.parent, self.open_regions = parent, 0
        self.body, self.opened = conditional, None   # a loop or branch body; its last region
        # a conditional body, or a region inside one: CUDA limits what it may hold
        self.conditional = conditional or (parent is not None and parent.conditional)
        self.called_at = ()   # a child graph's: the (file, line) of its s.child(...),
        #                       then of those of the child graphs it is in, up to a body

    def finish(self) -> None:
        """Infer every edge of the recording (once)."""
        if self.rec.deps is None:
            self.rec.deps = self.deps.finish(self.rec)


class _Hot:
    """The tracer's attributes every recorded launch reads, as slots: the
    compiled path (``_speedups.c``) reads them at their offsets."""

    __slots__ = ("_top", "_count", "memo", "memo_off", "_bufs", "_views", "_roots", "_slots",
                 "_root_index", "_fast_view", "_memo_size")


class Tracer(_Hot, _Roots):
    """Records nodes for one trace of one function, in one thread.

    The recording API, which is all an op module may use (with a proxy
    stream's ``tracer()``, ``index`` and ``scope``; ``scope=None`` is the
    function's own graph)::

        Tracer
          name, mode                      the function's name; "data" or "streams"
          buffer(obj) -> Buffer           an array's Buffer for this trace (refuses
                                          arrays the function cannot be handed again)
          cached_buffer(obj)              the Buffer already made for obj, or None
          root_holding(address)           the argument (or global) array whose bytes
                                          hold a raw address, or None
          temporary(shape, dtype, name, device=None) -> Temporary
          library_state() -> Buffer       what every captured region reads and writes
          cooperative() -> Buffer         what every cooperative launch reads and writes
          host_order() -> Buffer          what every host callback reads and writes
                                          a graph-owned array (temporary.py), allocated
                                          by the compiled graph whatever scope asks, on
                                          GPU device (None: placement.finish decides)
          record(op, target, args, accesses, *, stream, attrs=None, opaque=False,
                 source=None, regions=(), scope=None) -> Node
                                          add a node; its deps follow from the mode
                                          when its scope ends
          add(stream, op, target, args, modes, attrs, opaque=False, refuse_host=None,
              validate=None, addresses=None, memo=None, depth=3)  the same, for ops recorded
                                          in bulk (kernel launches): flat arguments,
                                          each with its mode code (deps.MODE_CODES),
                                          placed as a kernel; no Node is made
          memo[key] -> launch             a launch add remembered (memo=(key, owner)),
          again(stream, launch, depth=3)  recorded again on stream (the user's frame
                                          is depth frames up or further); owners
                                          whose ids are in memo_off are no longer
                                          remembered
          open_region(name, parent=None, conditional=False) -> Scope
                                          start recording a region of scope parent
                                          (its own graph and tracker; a conditional
                                          body if said so); Stream(tracer, index,
                                          scope) records into it, and its parent
                                          takes no node until it is closed
          close_region(scope) -> Graph    end it: the Graph to pass in regions=
          reserve_index() -> int          a node index, to pass as record(index=):
                                          a structured node numbered before its body
          fork(stream, scope) -> int      a new stream index, after stream's work so far
          join(stream, other, scope)      later work on stream waits for other's
          record_event(event, node, stream, scope)  node records event: waits on it
                                          in this scope order after it
          wait_event(event, stream, scope) -> Node|None  later work on stream waits
                                          for the node that recorded event in scope;
                                          recorded around it, the child node holding
                                          scope waits for it instead; None if no
                                          node recorded event
          before_child(scope, stream, others=())  the node of child region scope,
                                          recorded next on stream, follows what it
                                          waited on and the work on streams others
                                          (of the parent, handed to the child)
          after_child(scope, node, stream, others=())  that node records the events
                                          scope did; later work on others follows it

    Node indices are unique in the trace, regions included. With
    ``GRAPHTRACE_VERIFY=1`` every traced graph is checked (``Graph.verify``).
    """

    def __init__(self, name: str, params: list[str], mode: str):
        self.name, self.params, self.mode = name, params, mode
        self.written = None   # written_hosts.WrittenHosts: host arrays reached by name
        self._slots: list[Buffer] = []          # every Buffer of the trace, by slot
        self._regions = Regions(self._slots)
        self._top = Scope(name, mode, self._slots, self._regions)
        self._count = 0                         # nodes recorded, regions included
        self._n_streams = 1
        # id(obj) >> 4 -> (obj, Buffer, slot << 2, device bit): every object takes 16
        # bytes at least, so no two living ones share a key; arrays made one after
        # another get keys close together, and a large table's lookups touch
        # neighbouring memory (a third of the cost of new arrays by id)
        self._bufs: dict[int, tuple] = {}
        self.memo: dict[tuple, tuple] = {}      # launches remembered (add)
        self._memo_size = _MEMO_SIZE            # at most (an int: _speedups.c reads it)
        self._misses: dict[int, int] = {}       # id(owner) -> launches with new arrays
        self.memo_off: set[int] = set()         # id(owner) of kernels no longer remembered
        self._filled: set[int] = set()          # id(owner) of kernels that filled the memo
        self._slot_of: dict[int, int] = {}      # id(Buffer) -> slot, for the slots
        self._mapped = 0                        # below _mapped (made when asked: _slot)
        self._views: dict = {}                  # device array key -> (Buffer, slot << 2, device bit)
        self._roots: list[Buffer] = []          # labelled buffers: arguments, globals
        self._root_index = None                 # the roots sorted by address (_index)
        self._root_labels = (0, set())          # roots seen, their labels (_labels)
        self._temps: list[tuple] = []           # (Temporary, its root Buffer)
        self._library = None                    # captured regions' state (library_state)
        self._cooperative = None                # cooperative launches' (cooperative)
        self._host_order = None                 # host callbacks' (host_order)
        self.nested = 0                         # graph functions called inside the trace
        self.inlined: dict = {}                 # graph function -> how deep it is inlined now
        self._nested_names: set[str] = set()    # temporaries' names taken inside them
        self._auto: dict[str, Buffer] = {}      # automatic name -> its temporary's root
        self._free_from: dict[str, int] = {}    # stem -> the first number maybe free (_free)
        self._argument_roots: set[int] = set()  # id of each argument's root (rebound)
        self.key = tuple                        # -> the call's cache key (function.py)
        self._key_objects = None                # the ids of the objects it holds (keyed)
        self.callback_arrays = frozenset()      # ids of the arrays host callbacks read
        # themselves, whose aliasing the key holds (Holdings.callback_arrays)
        self.passed_callbacks: dict[int, str] = {}   # id of each callable an argument
        # holds that the function does not hand to s.host itself -> the argument's name
        self.own_codes = frozenset()             # the function's code and that nested in it
        self.regional = None                     # Holdings.regional: where its captured
        # regions reached arrays no name shows (region_places.py), noted for the key
        self.given: dict = {}                   # parameter -> the object the call passed
        self.self_param = None                  # a graph method's self parameter
        self.copies: dict[int, str] = {}        # id of each list or dict argument the
        # function was handed (a copy, GraphFunction._trace) -> its label
        # structured ops made but not entered: id -> (scope, "s.while_loop(...)", source,
        # the op); and those an exception left, which a caught exception would drop
        self.unentered: dict[int, tuple] = {}
        self.unexited: dict[int, tuple] = {}   # id -> (what, source): blocks entered, open
        self.abandoned: list[tuple] = []
        self.escapes: list = []   # checks of what code after a loop or branch reads of
        # what its body changed, run on the whole graph (ops/_loop_after.py)
        self.loop_slots = None   # the slots of the names loop and branch bodies began
        # and ended with, kept while unchanged (ops/_loop_slots.py: Slots, made by the first)
        self.entered_in = None   # the code of the frame entering the trace: the graph
        # function's frame is the one it calls (the last its blocks' callers scanned)
        # new views of one device made by _buffers.c (view), or None: (view, the
        # simulator's device tags, which must stay empty, the temporaries' base)
        fast = _regions.TAKE[0]
        self._fast_view = None if fast is None or _driver.device_count() > 1 else \
            (fast.view, _arrays._sim_devices, _temporary.VIRTUAL_BASE)

    # --- launches ----------------------------------------------------------
    def add(self, stream: ProxyStream, op, target, args, modes, attrs: dict, opaque: bool = False,
            refuse_host=None, validate=None, addresses=None, memo=None, depth=3) -> None:
        """Record a node of flat arguments (kernel launches), without making its Node.

        Argument ``i`` is accessed as ``modes[i]`` (a mode code) unless
        ``gt.In``/``Out``/``InOut`` wrap it: the fast way through what
        ``ops.base.record_args`` does. Before the node is added,
        ``refuse_host(tracer, args)`` is called (and must raise) if an argument is host
        memory, ``validate(recorded arguments)`` if given (unless the tuple of their
        types is in ``target.valid_types``: ``Adapter.validate``), and, unless ``opaque``,
        ``addresses(tracer, recorded arguments)`` if given and an argument may be an
        address (an int from ``LOWEST_ADDRESS`` on, a dynamic Scalar, anything
        looked into). ``attrs`` may be shared with other nodes (each Node gets a
        copy). The node runs where its arrays are, as a kernel (``placement.py``).

        ``memo``: ``(key, owner)`` to remember the launch by, where ``key`` holds
        the ids of ``args`` and ``owner`` (the kernel) with whatever else decides
        ``op``, ``target``, ``modes`` and ``attrs``. When every array was seen
        before and nothing may be an address, a later launch with that key is
        recorded by ``again`` from ``self.memo[key]``. An ``owner`` whose launches
        keep bringing new arrays (views made at every launch), or that fills the
        memo twice (launches on arrays of their own), stops being remembered:
        its id joins ``self.memo_off``. The user's frame is ``depth`` frames up
        from this one, or further (``record_launch`` and its caller come between).
        """
        got = None if _fast_arguments is None else _fast_arguments(self, args, modes)
        rec, codes, places, numbers, seen = self._arguments(args, modes) if got is None else got
        if places & 1:   # host memory: no device can run it
            refuse_host(self, args)
        if validate is not None and tuple(map(type, rec)) not in target.valid_types:
            validate(rec)
        if not opaque and target.raw_pointers:
            target.refuse_gaps(rec)
        if numbers and not opaque and addresses is not None:
            addresses(self, rec)
        serial = attrs.get("cooperative")
        if serial:   # one at a time: by the byte they all write, and in stream order
            codes = [*codes, self._slot(self.cooperative()) << 2 | 3]
        # the entry holds the objects whose ids a memo key has
        launch = (op, target, rec, attrs, codes, places, opaque, args, memo)
        if _fast_record is None or not _fast_record(self, stream, launch, depth):
            self.again(stream, launch, depth + 1)
        if serial:
            scope = stream._scope or self._top
            if scope.online:
                scope.deps.serial(len(scope.rec.entries) - 1)
        if memo is not None:
            self._remember(memo, launch, seen, numbers)

    def _remember(self, memo, launch, seen: bool, numbers: bool) -> None:
        """Remember a launch ``add`` recorded, by ``memo`` (``(key, owner)``), or
        count it against its owner (see ``add``). ``_speedups.c`` inserts in a memo
        not full itself and calls this for the rest."""
        key, owner = memo
        if seen and not numbers:
            if len(self.memo) >= self._memo_size:   # full: start again
                self.memo.clear()
                if id(owner) in self._filled:   # a kernel that keeps filling it (every
                    self.memo_off.add(id(owner))   # launch on arrays of its own)
                    return
                self._filled.add(id(owner))
            self.memo[key] = launch
        elif not seen:
            misses = self._misses[id(owner)] = self._misses.get(id(owner), 0) + 1
            if misses > _MEMO_MISSES:
                self.memo_off.add(id(owner))

    def again(self, stream: ProxyStream, launch, depth: int = 3) -> None:
        """Append a launch whose arguments are recorded: ``(op, target, recorded
        args, attrs, access codes, placement bits, opaque, ...)``, from ``add`` or
        ``memo``. The user's frame is looked for from ``depth`` frames up, the
        first that may be theirs: each frame object made on the way costs (a
        new one per launch for our frames), so callers say how many frames are
        ours. ``add`` and the op's recording function are called from ours
        (``Stream.launch``, ``kernel[g, b, s]``, ``forall``)."""
        op, target, rec, attrs, codes, places, opaque, _, _ = launch
        # placement.py's rule for a kernel: the one device of its arrays and stream;
        # of two devices, place() decides on its Node
        device = ONE_DEVICE.get(places if stream._device is None
                                else places | 2 << stream._device, _TWO)
        # the same as _append, inlined: this runs once per launch
        scope = stream._scope or self._top
        if scope.closed or scope.open_regions or \
                (scope.conditional and op.refused_in_conditional):
            self._check_scope(scope, op)
        # user_frame_object without the call, past the frames known to be ours:
        # making frame objects for them cost 0.4 us a launch
        f = _getframe(depth)
        while f is not None:
            inside = _internal.get(f.f_code.co_filename)
            if inside is None:
                inside = _is_internal(f.f_code.co_filename)
            if not inside:
                break
            f = f.f_back
        else:
            f = _NOWHERE
        index = self._count
        self._count = index + 1
        r = scope.rec
        # the source is the code and its instruction: its line is found when a
        # Node is made (f_lineno is slow)
        r.entries.append((op, target, rec, attrs, stream._index, f.f_code, f.f_lasti, index,
                          device))
        r.codes += codes
        r.ends.append(len(r.codes))
        if opaque:
            r.opaque.append(len(r.entries) - 1)
        if scope.online:
            scope.deps.add(len(r.entries) - 1, stream._index)
        if device is _TWO:   # rare: its Node is made now, and holds the device
            r.entries[-1] = r.entries[-1][:8] + (None,)
            _placement.place(stream, r.node(len(r.entries) - 1))

    def _arguments(self, args, modes) -> tuple:
        """``(recorded args, access codes, placement bits, whether any may be an
        address, whether every array was seen before as itself)`` of a launch."""
        bufs = self._bufs
        rec, codes, places, numbers, seen = [], [], 0, False, True
        for a, m in zip(args, modes):
            hit = bufs.get(id(a) >> 4)
            if hit is not None:   # an array seen before, as itself (the entry holds it)
                rec.append(hit[1])
                codes.append(hit[2] | m)
                places |= hit[3]
                continue
            plain = _PLAIN.get(type(a))
            if plain is not None:   # a number, a string, None, a dynamic Scalar
                rec.append(a)
                if plain and (plain == _DYNAMIC or a >= LOWEST_ADDRESS):
                    numbers = True   # it may be an address
            elif not isinstance(a, _OPEN) and (hit := self._entry(a)) is not None:
                rec.append(hit[0])   # a new array or view
                codes.append(hit[1] | m)
                places |= hit[2]
                seen = False
            else:   # containers, wrappers, numpy scalars, other objects
                (value,), accesses = record_args(self, (a,), lambda i: MODE_NAMES[m],
                                                 lambda i, b: None)
                rec.append(value)
                numbers, seen = True, False
                for b, mode in accesses:
                    codes.append(self._slot(b) << 2 | MODE_CODES[mode])
                    places |= _placement.device_bit(b)
        return tuple(rec), codes, places, numbers, seen

    # --- nodes -------------------------------------------------------------
    def record(self, op, target, args: tuple, accesses: tuple, *, stream: int,
               attrs: dict | None = None, opaque: bool = False, source: tuple | None = None,
               regions: tuple = (), scope: Scope | None = None,
               index: int | None = None) -> Node:
        """Add a node of ``op`` issued on proxy stream ``stream`` of ``scope``.

        ``accesses`` are ``(Buffer, "r"|"w"|"rw")``; ``opaque`` orders the node after
        and before everything, ``attrs["closes"]`` after everything before it; ``source``
        defaults to the user's line; ``regions`` are the Graphs a structured node owns
        (``close_region``); ``index`` one from ``reserve_index``. Its ``deps`` are set
        when its scope ends (``graph``, ``close_region``)."""
        scope = scope or self._top
        self._check_scope(scope, op)
        codes = []
        for b, m in accesses:
            if m not in MODE_CODES:
                raise ValueError(f"an access mode is 'r', 'w' or 'rw', not {m!r}")
            codes.append(self._slot(b) << 2 | MODE_CODES[m])
        source = source or user_frame()
        if regions and scope.mode == "data" and any(n.attrs.get("closes") for r in regions
                                                    for n in r.walk()):   # a record inside
            attrs = {**(attrs or {}), "closes": True}
        pos = self._append(scope, stream, op, target, tuple(args), codes, attrs or {}, opaque,
                           source, index, regions)
        if attrs and attrs.get("closes") and scope.mode == "data":   # ops/control.py
            scope.deps.closes(pos)
        if self.written is not None:   # named host arrays: reads of one written refused
            self.written.wrote(accesses, op, target, source)
        return scope.rec.node(pos)

    def _append(self, scope: Scope, stream: int, op, target, args: tuple, codes: list,
                attrs: dict, opaque: bool, source: tuple, index: int | None,
                regions: tuple) -> int:
        """``record`` without making the Node (``add`` does the same for launches):
        the node's position in its scope. ``codes``: ``slot << 2 | mode code``."""
        if index is None:
            index = self._count
            self._count = index + 1
        rec = scope.rec
        pos = len(rec.entries)
        rec.entries.append((op, target, args, attrs, stream, source[0], source[1], index, None))
        rec.codes += codes
        rec.ends.append(len(rec.codes))
        if opaque:
            rec.opaque.append(pos)
        if regions:
            rec.regions[pos] = tuple(regions)
        if scope.online:
            scope.deps.add(pos, stream)
        return pos

    def _check_scope(self, scope: Scope, op) -> None:
        if scope.closed:
            raise StreamError(f"a proxy stream of region {scope.name} of {self.name} was "
                              "used after its region ended: issue work on it only inside "
                              "its with block (the loop or branch body)")
        if scope.open_regions:
            self._refuse_unentered(scope)
            if not scope.opened.body:
                raise StreamError(
                    f"work issued on a stream of {scope.name} while the child graph "
                    f"{scope.opened.name} it calls is being recorded: inside "
                    f"{scope.opened.name}, issue work only on the proxy streams handed to "
                    f"it as arguments of the call ({scope.opened.name}(s, s2, ...)), not on "
                    "ones it reaches otherwise (in a list, an object or a global)")
            raise StreamError(f"work issued on a stream of {scope.name} while a loop or "
                              "branch body inside it is being recorded: inside the with "
                              "block, use the body's stream (with s.while_loop(...) as "
                              "body: body.launch(...))")
        if scope.conditional and op is not None and op.refused_in_conditional:
            source = user_frame()
            at = [near(c, source) for c in scope.called_at]   # (in a child graph)
            raise TraceError(f"{op.refused_in_conditional} cannot run inside a loop or "
                             "branch body (CUDA conditional bodies hold only kernels, "
                             "copies, memsets, child graphs and other conditionals)" + (
                                 "; it is recorded in the child graph called at " +
                                 ", called in turn at ".join(at) + ", which the body records"
                                 if at else "") + ": issue it before or after the loop or "
                             "branch", source)

    def _refuse_unentered(self, scope: Scope | None = None) -> None:
        """An error for a loop or branch made (in ``scope``; None: anywhere) but never
        entered: called without ``with``, its body records nothing."""
        for parent, what, source, _ in self.unentered.values():
            if scope is None or parent is scope or (parent is None and scope is self._top):
                raise TraceError(f"{what} is not used as a with block, so its body records "
                                 f"nothing: write `with {what[:-5]}(...) as body:` and "
                                 "issue the body's work on body, or pass body=fn", source)
        for what, source in self.unexited.values() if scope is None else ():
            raise TraceError(f"this {what} block was entered but never left, so its body "
                             "is not in the graph (an ExitStack left open, __enter__ "
                             "called by hand): write it as a with statement, or pass "
                             "body=fn", source)
        for what, source in self.abandoned if scope is None else ():
            if what.endswith(" (generator)"):   # GeneratorExit: no exception the user caught
                raise TraceError(
                    f"the generator holding {what[:-12]} was closed inside it (a break "
                    "out of a for loop over the generator), so its work is not in the "
                    "graph: leave the generator's loop after the block ends", source)
            raise TraceError(f"an exception left {what} here and was caught: its work is not "
                             "in the graph; let the exception end the trace, or raise it "
                             "before", source)

    def reserve_index(self) -> int:
        index, self._count = self._count, self._count + 1
        return index

    def open_region(self, name: str, parent: Scope | None = None,
                    conditional: bool = False, mode: str | None = None) -> Scope:
        """Start recording a region named ``name`` (shown in listings) inside ``parent``,
        its dependencies inferred in ``mode`` (default: the parent's; a child graph
        function's own ``deps``)."""
        parent = parent or self._top
        if parent.closed:
            self._check_scope(parent, None)
        parent.open_regions += 1   # sibling regions (if-else, switch) are open together
        parent.opened = Scope(name, mode or parent.mode, self._slots, self._regions, parent,
                              conditional)
        return parent.opened

    def mode_of(self, scope: Scope | None) -> str:
        """How dependencies are inferred where ``scope`` (None: the top) records."""
        return (scope or self._top).mode

    def close_region(self, scope: Scope) -> Graph:
        """End a region: its Graph, for ``record(..., regions=...)``."""
        if scope.closed or scope is self._top:
            raise TraceError(f"region {scope.name} of {self.name} is not open")
        scope.closed = True
        scope.parent.open_regions -= 1
        scope.finish()
        return Graph(scope.name, [], scope.mode, scope.rec)

    # --- stream structure (ordering only in deps="streams") ----------------
    def fork(self, stream: int, scope: Scope | None = None) -> int:
        child, self._n_streams = self._n_streams, self._n_streams + 1
        (scope or self._top).deps.fork(stream, child)
        return child

    def join(self, stream: int, other: int, scope: Scope | None = None) -> None:
        (scope or self._top).deps.join(stream, other)

    def record_event(self, event, node: Node, stream: int, scope: Scope | None = None) -> None:
        scope = scope or self._top
        scope.events[id(event)] = (event, node)
        scope.deps.record(stream, node.pos)

    def wait_event(self, event, stream: int, scope: Scope | None = None) -> Node | None:
        scope = inner = scope or self._top
        hit = scope.events.get(id(event))
        while hit is None and inner.parent is not None and not scope.conditional:
            inner = inner.parent   # recorded around a child graph: its node waits
            hit = inner.events.get(id(event))
        if hit is None or hit[0] is not event:
            return None
        if inner is scope:
            scope.deps.wait(stream, hit[1].pos)
        else:
            _child_of(scope, inner).waits.append(hit[1])
        return hit[1]

    def before_child(self, scope: Scope, stream: int, others=()) -> None:
        deps = scope.parent.deps
        for other in others:
            deps.join(stream, other)
        for node in scope.waits:
            deps.wait(stream, node.pos)

    def after_child(self, scope: Scope, node: Node, stream: int, others=()) -> None:
        for other in others:   # their later work follows the child's
            scope.parent.deps.fork(stream, other)
        for event, _ in scope.events.values():
            self.record_event(event, node, stream, scope.parent)

    def graph(self) -> Graph:
        """The function's graph; checked when ``GRAPHTRACE_VERIFY=1``."""
        self.loop_slots = None   # (the program's objects its blocks' snapshots held)
        self._refuse_unentered()
        with gc_paused():
            self._top.finish()
        graph = Graph(self.name, self.params, self.mode, self._top.rec,
                      [root for _, root in self._temps])
        _placement.finish(graph, self._temps)
        for check in self.escapes:
            check(graph)
        if os.environ.get("GRAPHTRACE_VERIFY", "").strip().lower() in ("1", "true", "yes", "on"):
            graph.verify()
        return graph

    # --- context -----------------------------------------------------------
    def __enter__(self):
        if current_tracer() is not None:
            raise TraceError(
                f"cannot trace {self.name} while tracing {current_tracer().name}: to "
                "nest a graph, call the decorated function with the proxy stream "
                "as its first argument")
        with _hooks_lock:
            run_trace_hooks()   # each is cheap once done
        before_trace()
        pause_gc(+1)
        self.entered_in = _getframe(1).f_code
        set_tracer(self)
        if _kernel.speedups_module is not None:
            _kernel.speedups_module.active(self)
        return self

    def __exit__(self, *exc):
        set_tracer(None)
        self.given = {}   # (a temporary kept past the trace holds the tracer: not them)
        if _kernel.speedups_module is not None:
            _kernel.speedups_module.active(None)
        failed = None if not exc or exc[0] is None else summary(exc[1])
        for tmp, _ in self._temps:   # any later use of a temporary raises
            tmp._life.alive, tmp._life.failed = False, failed
        pause_gc(-1)
        return False


def _child_of(scope: Scope, ancestor: Scope) -> Scope:
    """The region holding ``scope`` (or ``scope`` itself) whose node is in ``ancestor``."""
    while scope.parent is not ancestor:
        scope = scope.parent
    return scope

"""The proxy ``Stream`` a traced function receives, and ``use_speedups``.

Each method of the proxy hands its op to the op module (``ops/``) that records
it through the trace's ``Tracer`` (``trace.py``): launches, copies, memsets,
host callbacks, temporaries, events and forks, and the structured ops whose
bodies record on proxy streams of their own (loops, branches, child graphs,
captured library code). Where tracing is compiled, ``Stream.launch`` is the
compiled launcher (``_speedups.c``), configured here with the tracer's types.
"""
from __future__ import annotations

import numpy as np

from .columns import Recording
from .context import STATE, ProxyStream
from .errors import ArgumentError, HostSyncError, StreamError, user_frame
from .ops import control as _control, host as _host, kernel as _kernel, memory as _memory
from .ops import _structured, captured as _captured, conditional as _conditional
from .ops.kernel import LOWEST_ADDRESS
from .scalar import Scalar
from .trace import _OPEN, _PLAIN, Scope, Tracer
from . import arrays as _arrays, placement as _placement

__all__ = ["Stream", "use_speedups"]


class _Required:
    """The default of a parameter a call must give: Python's TypeError for its absence
    would name neither the user's line nor the call to write (``_missing``)."""

    def __repr__(self):
        return "<required>"


_REQUIRED = _Required()


def _missing(call: str, what: str, extra: int = 0):
    if extra:
        raise ArgumentError(f"{call.split('(')[0]} was given {extra} argument"
                            f"{'s' * (extra > 1)} too many: {call} {what}; one op per "
                            "call")
    raise ArgumentError(f"{call.split('(')[0]} is missing an argument: {call} {what}; "
                        f"pass both")


def _test(condition) -> str:
    return getattr(condition, "op", "!= 0")


class Stream(ProxyStream):
    """The proxy stream a traced function receives as its first argument.

    Ops issued on it are recorded as graph nodes. It is valid only inside
    its trace. For op modules: ``tracer()`` is the trace's ``Tracer``
    (checked to be active in this thread), ``index`` the stream's number and
    ``scope`` the region it records into (None: the function's own graph)
    and ``device`` the GPU it places work on (None: where its arrays are);
    a structured op records its body through ``Stream(tracer, index, scope, device)``.

    >>> @gt.graph
    ... def step(s, x, host):
    ...     tmp = s.empty(x.shape, name="tmp")     # scratch memory the graph owns
    ...     scale[1, 32, s](x, 2.0, tmp)           # numba's launch syntax
    ...     s.launch(add, 1, 32, tmp, x)           # any kernel, as a method
    ...     s.copy(host, x)                        # into pinned host memory
    ...     s.host(print, gt.In(host[:2]))         # a callback inside the graph
    >>> step(cuda.to_device(np.ones(32)), gt.pinned_empty(32))
    [3. 3.]
    """

    __slots__ = ("_tracer", "_index", "_scope", "_device")

    def __init__(self, tracer: Tracer, index: int = 0, scope: Scope | None = None,
                 device: int | None = None):
        self._tracer, self._index, self._scope = tracer, index, scope
        self._device = device

    @property
    def index(self) -> int:
        """The stream's number in its trace (0: the one the function receives)."""
        return self._index

    @property
    def scope(self) -> Scope | None:
        """The region this stream records into; None for the function's own graph."""
        return self._scope

    @property
    def target_device(self) -> int | None:
        """The GPU this stream places its work on; None: each node runs where its
        arrays are (``placement.py``)."""
        return self._device

    def on(self, device) -> "Stream":
        """This stream, placing its work on GPU ``device``: ``k[g, b, s.on(1)](...)``.

        Work on it is ordered as on ``self`` (it is the same stream); kernels and
        memsets on it must use that device's arrays, copies run there, and
        temporaries made on it (``s.on(1).empty(n)``) live there. Only needed
        where the arrays do not say: work runs on the device of its arrays anyway.
        """
        return type(self)(self.tracer(), self._index, self._scope,
                          _placement.check_device(device))

    def tracer(self) -> Tracer:
        """The tracer this stream records into; raises outside its trace."""
        t = self._tracer
        if getattr(STATE, "tracer", None) is not t:   # active, and in this thread
            raise StreamError(
                f"proxy stream of {t.name} used outside its trace: a proxy stream is "
                "valid only inside the decorated function while it is traced; issue "
                "work there, or launch on a real stream outside")
        return t

    def launch(self, kernel, grid, block=_kernel.NO_BLOCK, *args, shared_mem=None,
               cluster=None, cooperative=None, opaque: bool = False, device=None):
        """Record a kernel launch: ``s.launch(kernel, grid, block, *args)``, or
        ``s.launch(kernel, config, *args)`` with a cuda.core ``LaunchConfig``.

        ``kernel`` is a numba ``@cuda.jit`` kernel, a cupy ``RawKernel``, a
        cuda.core ``Kernel`` or one declared with ``gt.kernel``. Arguments may be
        wrapped in ``gt.In``/``gt.Out``/``gt.InOut`` to override inferred
        intents. ``opaque=True`` orders it after all earlier work and before all
        later work, for a kernel that touches memory it is not given. numba's
        ``kernel[grid, block, s](*args)`` records the same node.

        Launch options: ``shared_mem`` bytes of dynamic shared memory (above
        48 KB the kernel's limit is raised when the graph is built),
        ``cluster`` thread block cluster dimensions (the grid still counts
        blocks, a multiple of the cluster in each dimension), and
        ``cooperative=True`` (all blocks on the GPU at once, for grid-wide
        synchronisation; the grid must fit, which only the GPU can tell). A
        ``LaunchConfig`` carries them instead (``shmem_size``, ``cluster``,
        ``is_cooperative``; its grid counts clusters when it has a cluster,
        as in cuda.core). ``device=1`` runs it on GPU 1, as ``s.on(1).launch(...)``
        does.
        """
        key = None
        if id(kernel) not in self._tracer.memo_off and type(grid) is int \
                and type(block) is int and device is None and shared_mem is None \
                and cluster is None and cooperative is None and not opaque:
            key = _kernel.again(self, kernel, grid, block, None, args)
            if key is True:
                return None   # recorded as an earlier launch with these very arguments
        stream = self if device is None else self.on(device)
        return _kernel.record_launch(stream, kernel, grid, block, args, shared_mem, opaque,
                                     cluster, cooperative, key)

    def copy(self, dst=_REQUIRED, src=_REQUIRED, *more):
        """Record a copy of ``src`` into ``dst`` (same shape and dtype).

        Host arrays must be pinned (``gt.pinned_empty``, ``cupyx.empty_pinned``,
        ``numba.cuda.pinned_array``): a graph cannot copy pageable memory.
        """
        if dst is _REQUIRED or src is _REQUIRED or more:
            _missing("s.copy(dst, src)", "copies the array src into dst", len(more))
        return _memory.record_copy(self, dst, src)

    def memset(self, dst=_REQUIRED, value=_REQUIRED, *more):
        """Record a fill of the device view ``dst`` with ``value`` (converted to its
        dtype, repeated as a 1-, 2- or 4-byte pattern)."""
        if dst is _REQUIRED or value is _REQUIRED or more:
            _missing("s.memset(dst, value)", "fills the device array dst with value",
                     len(more))
        return _memory.record_memset(self, dst, value)

    def empty(self, shape, dtype=np.float64, name: str | None = None):
        """A graph-owned device array, uninitialised: ``tmp = s.empty(n, np.float32)``.

        The compiled graph allocates it once, outside any loop or branch body,
        at an address that stays fixed across launches and rebinding (shared
        with temporaries whose uses all come before or after its); use it as
        any device array on the proxy stream while tracing, and nowhere else.
        ``name`` names it in listings (default ``tmp0``, ``tmp1``...). It lives on
        the stream's device (``s.on(1).empty(n)``), else on that of the kernels
        using it.
        """
        return self._temporary(shape, dtype, name)

    def zeros(self, shape, dtype=np.float64, name: str | None = None):
        """Like ``empty``, set to zero here in every launch (a memset node: inside
        a loop body, in every iteration)."""
        tmp = self._temporary(shape, dtype, name)
        _memory.record_zeros(self, tmp)
        return tmp

    def _temporary(self, shape, dtype, name):
        return self.tracer().temporary(shape, dtype, name, self._device)   # see placement.py

    def host(self, fn, *args, opaque: bool | None = None, **kwargs):
        """Record a host callback ``fn(*args)``, run by the graph on a driver thread.

        Arguments may nest in lists, tuples and dicts; the callback receives
        them as recorded (arrays and dynamic numbers of the current call), in
        containers of its own: a list or dict it changes is not the caller's
        (a warning says so). Results belong in a pinned array, or in an object
        that is passed as itself (an instance of your own class). In data
        mode callbacks run in the order they were recorded, and one handed no
        memory (and reaching none) is opaque unless ``opaque=False``;
        ``opaque=True`` orders the callback after all earlier work and before
        all later work, for one that touches memory it is not given.
        """
        if kwargs:
            names = ", ".join(kwargs)
            raise ArgumentError(
                f"s.host({getattr(fn, '__name__', 'fn')}, ..., {names}=...): the callback's "
                f"arguments are recorded by position only; pass {names} positionally, in "
                "the order its parameters take them (s.host(fn, x, scale) for "
                "def fn(x, scale)), or through a lambda taking them by position "
                "(s.host(lambda x, a: fn(x, scale=a), x, a))")
        return _host.record_host(self, fn, args, opaque)

    def record(self, event):
        """Record ``event`` (a cuda.core ``Event``) once the work issued so far is done."""
        return _control.record_event(self, event)

    def wait(self, event):
        """Make later work wait for ``event``."""
        return _control.wait_event(self, event)

    def fork(self, device=None) -> "Stream":
        """A new proxy stream that starts after the work issued here so far;
        ``device=1`` places its work on GPU 1 (see ``on``), else it places as
        this one does."""
        child = _control.fork(self)
        device = self._device if device is None else _placement.check_device(device)
        return child if device is None else child.on(device)

    def join(self, *others: "Stream") -> None:
        """Make later work here wait for everything issued on ``others``."""
        _control.join(self, others)

    # --- structured ops: bodies recorded on proxy streams of their own ----------
    def while_loop(self, condition, max_iterations: int | None = None, body=None):
        """A loop on the device: its body runs while ``condition`` holds.

        ``condition`` is ``gt.cond(x)`` (x's one element is nonzero) or one
        comparison of it (``gt.cond(x) > tol``; ``tol`` a number, a dynamic
        scalar argument or a one-element array). ``max_iterations`` bounds the
        trip count, so that a condition that never becomes false ends. Use it
        as ``with s.while_loop(...) as body:`` and issue the body's work on
        ``body``; or pass ``body=fn``, called with the body's stream.
        """
        if max_iterations is None:
            bound = _conditional._NO_BOUND
        elif isinstance(max_iterations, Scalar):
            raise ArgumentError(f"max_iterations is the dynamic argument {max_iterations.name!r}:"
                                " it is fixed when the graph is built, so pass its parameter "
                                f"in static=({max_iterations.param!r},)")
        elif isinstance(max_iterations, (bool, np.bool_)) or \
                not isinstance(max_iterations, (int, np.integer)) \
                or not 0 <= max_iterations < _conditional._NO_BOUND:
            raise ArgumentError(f"max_iterations must be a non-negative int below 2**32, "
                                f"not {max_iterations!r} (it is fixed when the graph is "
                                "built: pass the number it depends on in static=)")
        else:
            bound = int(max_iterations)   # a numpy integer too (a shape, a computed count)
        return _structured.structured(
            self, _conditional.WHILE, condition, ("body",),
            {"test": _test(condition), "max_iterations": bound}, user_frame(), body)

    def if_then(self, condition, body=None):
        """A branch on the device: ``with s.if_then(gt.cond(x) > 0) as then:``."""
        return _structured.structured(self, _conditional.IF, condition, ("then",),
                                      {"test": _test(condition)}, user_frame(), body)

    def if_else(self, condition, body=None):
        """Two branches: ``with s.if_else(gt.cond(x) > 0) as (then, otherwise):``;
        ``body=fn`` is called with both streams."""
        return _structured.structured(self, _conditional.IF, condition, ("then", "else"),
                                      {"test": _test(condition), "else": True},
                                      user_frame(), body)

    def switch(self, value, cases: int, body=None):
        """Case ``k`` of ``cases`` bodies runs where ``value`` (``gt.cond(k)``, a
        one-element integer array) holds k; none runs out of range:
        ``with s.switch(gt.cond(k), 3) as cases: cases[0].launch(...)``."""
        if isinstance(cases, Scalar):
            raise ArgumentError(f"the number of cases is the dynamic argument {cases.name!r}: "
                                "it is fixed when the graph is built, so pass its parameter "
                                f"in static=({cases.param!r},)")
        if isinstance(cases, (bool, np.bool_)) or not isinstance(cases, (int, np.integer)) \
                or cases < 1:
            raise ArgumentError(f"switch needs a positive int number of cases, not {cases!r}")
        cases = int(cases)   # a numpy integer too
        if getattr(value, "op", "!= 0") != "!= 0":
            raise ArgumentError("switch takes gt.cond(k) of an integer array, uncompared")
        return _structured.structured(self, _conditional.SWITCH, value,
                                      tuple(f"case {i}" for i in range(cases)),
                                      {"test": "!= 0", "cases": cases}, user_frame(), body)

    def child(self, function, *args, **kwargs):
        """Record the graph function ``function(s, *args)`` as one child-graph node
        (calling ``function(s, *args)`` instead inlines its nodes)."""
        return _structured.record_child(self, function, args, kwargs, user_frame())

    def captured(self, fn, *args, reads=None, writes=None, opaque: bool = False, **kwargs):
        """Record ``fn(*args)``, ordinary library code (cupy expressions, torch), as one
        child-graph node: ``s.captured(mm, x, w, y, reads=[x, w], writes=[y])``.

        Nothing runs now: when the graph is built, ``fn`` is called with the
        arrays while its stream is captured (cupy's and torch's current stream
        switched to the capture), and it is captured again when a later call
        brings new arrays or numbers. ``reads``/``writes`` name arguments by
        identity (an array or a list of them); arguments not named, and all of
        them by default, are read and written. ``gt.In``/``gt.Out`` wrappers
        work too. ``opaque=True`` orders the region after and before
        everything, for code that touches arrays it is not given. On the
        simulator ``fn`` runs with numpy arrays.
        """
        if kwargs:
            raise ArgumentError(
                f"captured() takes the region's arguments in order, not by keyword "
                f"({', '.join(f'{k}=...' for k in kwargs)}): pass them positionally, "
                "s.captured(fn, x, y, 3.0), and let fn take them as parameters; its own "
                "keywords are reads=, writes= and opaque=")
        return _captured.record_captured(self, fn, args, reads, writes, opaque, user_frame())

    def synchronize(self) -> None:
        """Refused: a graph cannot wait for the host midway."""
        raise HostSyncError(
            "synchronize() inside a trace: a graph cannot wait for the host midway; "
            "split the function in two graphs, or use s.host(fn, ...) to run host "
            "code at that point of the graph")

    # numba's own stream methods, kept by code ported from eager numba: a StreamError
    # at the user's line naming the proxy stream's spelling.
    def wait_event(self, event=None, *_):
        """Refused: numba's spelling of ``wait``."""
        raise StreamError(
            "s.wait_event(ev) is numba's stream API: on a proxy stream write s.wait(ev) "
            "(ev recorded by t.record(ev) on the other proxy stream), or s.join(t) to make "
            "s's later work wait for t's work so far")

    def add_callback(self, callback=None, arg=None):
        """Refused: numba's spelling of ``host``."""
        raise StreamError(
            "s.add_callback(cb, arg) is numba's stream API: a host callback in the graph is "
            "s.host(fn, *args), which calls fn(*args) at that point of the graph (not "
            "numba's cb(stream, status, arg): pass fn the arguments it needs)")

    def auto_synchronize(self):
        """Refused: nothing synchronises inside a graph."""
        raise StreamError(
            "with s.auto_synchronize(): is numba's stream API: no synchronisation is "
            "needed inside a graph (its nodes are ordered by their data or streams); drop "
            "the with block and keep its body. The call of the decorated function is "
            "asynchronous: synchronise the stream it ran on after it, if the host needs "
            "the results")

    # What libraries read from a real stream: a StreamError at the user's line that
    # names the spelling to use instead (no CUDA stream stands behind a proxy).
    __cuda_stream__ = property(_kernel.foreign_attribute(
        "handle", "code taking streams by the CUDA stream protocol",
        " (cuda.core's launch does when it was imported before graphtrace, which "
        "replaces it with gt.launch: import graphtrace first, or call gt.launch)"))
    ptr = property(_kernel.foreign_attribute("pointer", "cupy"))
    handle = property(_kernel.foreign_attribute("handle", "numba or cuda.core"))
    cuda_stream = property(_kernel.foreign_attribute("handle", "torch"))
    device = property(_kernel.foreign_attribute("device", "torch"))
    __int__ = __index__ = _kernel.foreign_attribute("handle as an int",
                                                     "an ExternalStream or the like")

    def __iter__(self):
        """Unpacked (``with s.if_then(c) as (then, otherwise):``): one stream is not
        several; say which blocks give how many."""
        raise StreamError(
            "a proxy stream is one stream, and does not unpack: s.if_then(...) and "
            "s.while_loop(...) give one body stream (with ... as body:); s.if_else(...) "
            "gives two, (then, otherwise), and s.switch(...) one per case")

    def __getitem__(self, i):
        """Indexed (``cases[0]`` of a switch's ``body=fn``, which gets its cases as
        parameters): say so."""
        raise StreamError(
            f"a proxy stream is one stream, and has no [{i!r}]: a switch's body=fn is "
            "called with one parameter per case, fn(case0, case1, ...), while its with "
            "block gives them together (with s.switch(...) as cases: cases[0])")

    def __repr__(self):
        on = "" if self._device is None else f" on cuda:{self._device}"
        return f"<graphtrace proxy stream {self._index} of {self._tracer.name}{on}>"


def use_speedups(on: bool) -> bool:
    """Record plain launches by the compiled path (``_speedups.c``: ``Stream.launch``,
    numba's ``kernel[grid, block, s]`` and ``kernel.again``) or, ``on=False``, in
    pure Python; whether it was on before. Both record the same; tests and
    benchmarks compare them."""
    fast = _kernel.speedups_module
    if on and fast is None:
        raise RuntimeError("graphtrace._speedups is not built (no C compiler at install; "
                           "tools/build_speedups.py builds it in a checkout) or "
                           "GRAPHTRACE_PURE_PYTHON is set")
    was = _kernel.again is not _kernel._again
    _kernel.again = fast.again if on else _kernel._again
    if fast is not None:
        fast.enable(on)
    return was


if _kernel.speedups_module is not None:   # the compiled Stream.launch (_speedups.c)
    _kernel.speedups_module.configure_launch(Stream, Scope, Recording, Tracer,
                                              _kernel._record_compiled,
                                              _kernel._launches, _kernel.KERNEL, _PLAIN,
                                              LOWEST_ADDRESS, _OPEN, _arrays._kinds,
                                              _arrays._kind)
    Stream.launch = _kernel.speedups_module.Launcher(Stream.launch)

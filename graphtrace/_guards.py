"""Device data read, written or uploaded on the host inside a trace are errors.

While a thread traces, nothing has run on the GPU yet: a value read from a
device array would be the one of the previous call (and a branch on it is
baked into the graph), an upload or a synchronisation would run once, now,
instead of in every launch. graphtrace guards the libraries' choke points
rather than a list of array methods:

- numba on a GPU: every copy between host and device memory and every
  memset goes through four functions of ``numba.cuda.cudadrv.driver``
  (``x[0]``, ``copy_to_host``, ``to_device``, ``cuda.reduce``'s result...),
  and every synchronisation through ``Context``/``Stream.synchronize``;
- numba's CUDA simulator: its device array wraps a numpy array; every method
  and numpy attribute that reads or writes element values is refused, the
  ones that only make views or tell the geometry pass;
- ``cupy.asnumpy``, ``torch.cuda.synchronize``, and the ``to_device`` and
  ``synchronize`` functions of ``numba.cuda``;
- numba's streams and events (numba-cuda's and the simulator's classes, where
  nothing would fail on its own): their ``synchronize``; an event's
  ``record``/``wait`` and ``device_array`` given a proxy stream, which would
  record nothing into the graph (``_port_hints`` says what to write).

Each is wrapped once, at the first trace; a wrapper costs one thread-local
lookup outside a trace. graphtrace's own calls pass.
"""
from __future__ import annotations

import importlib
import sys
import threading

from . import _port_hints
from .context import ProxyStream, current_tracer, on_trace_start
from .errors import _PKG_DIR, LIBRARY_DIRS, ArgumentError, HostSyncError, StreamError, \
    _is_internal
from .probe import _attr

# (module, attribute path, what it does) of the functions guarded.
_FUNCTIONS = [
    ("numba.cuda.cudadrv.driver", "host_to_device", "an upload to the device"),
    ("numba.cuda.cudadrv.driver", "device_to_host", "a read of device memory"),
    ("numba.cuda.cudadrv.driver", "device_to_device", "an eager device copy"),
    ("numba.cuda.cudadrv.driver", "device_memset", "an eager device memset"),
    ("numba.cuda.cudadrv.driver", "Context.synchronize", "a synchronisation"),
    ("numba.cuda.cudadrv.driver", "Stream.synchronize", "a synchronisation"),
    ("numba.cuda", "synchronize", "a synchronisation"),
    ("numba.cuda", "to_device", "an upload to the device"),
    ("numba.cuda.simulator.cudadrv.devicearray", "to_device", "an upload to the device"),
    ("cupy", "asnumpy", "a read of device memory"),
    ("cupy.cuda", "Stream.synchronize", "a synchronisation"),
    ("cupy.cuda", "Device.synchronize", "a synchronisation"),
    ("torch.cuda", "synchronize", "a synchronisation"),
    ("numba.cuda.cudadrv.driver", "Event.synchronize", "a synchronisation"),
    ("numba.cuda.cudadrv.driver", "Stream.auto_synchronize", "a synchronisation"),
]
# The simulator's: guarded only where numba runs on it (its module is loaded).
_SIM_FUNCTIONS = [
    ("numba.cuda.simulator.api", "Event.synchronize", "a synchronisation"),
    ("numba.cuda.simulator.api", "stream.synchronize", "a synchronisation"),
    ("numba.cuda.simulator.api", "stream.auto_synchronize", "a synchronisation"),
]
# Refused only when handed a proxy stream (module, attribute path): an event's
# record/wait would order nothing in the graph.
_PROXY_TAKERS = [
    ("numba.cuda.cudadrv.driver", "Event.record"),
    ("numba.cuda.cudadrv.driver", "Event.wait"),
    ("numba.cuda.simulator.api", "Event.record"),
    ("numba.cuda.simulator.api", "Event.wait"),
]
# numba's allocations, refused when the traced code calls them (not a library it
# calls), each with the memory it makes: "device" or pinned "host" memory; given
# the proxy stream, by a library too (an array allocated "on" the proxy stream is no
# temporary of the graph).
_ALLOCATIONS = [("device_array", "device"), ("device_array_like", "device"),
                ("mapped_array", "device"), ("managed_array", "device"),
                ("pinned_array", "host"), ("pinned_array_like", "host"),
                ("mapped_array_like", "device"), ("managed_array_like", "device")]

# What numba's simulated device array may do inside a trace: tell its
# geometry and make views (everything else reads or writes element values).
_SIM_GEOMETRY = {"shape", "strides", "dtype", "size", "ndim", "itemsize", "nbytes",
                 "flags", "alloc_size", "stream", "_numba_type_"}
_SIM_VIEWS = {"__init__", "bind", "T", "transpose", "ravel", "reshape", "view", "split",
              "is_c_contiguous", "is_f_contiguous", "__len__", "__repr__", "__str__",
              "__getattr__", "__getitem__", "__cuda_ndarray__", "__dict__", "__module__",
              "__doc__", "__weakref__", "__qualname__"} | _SIM_GEOMETRY
_COMPARISONS = {"__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"}
_SIM_READS = {"__array__", "__array_interface__", "__array_struct__", "__dlpack__",
              "__array_function__", "__array_ufunc__"}


def _tracing() -> bool:
    return current_tracer() is not None and \
        not sys._getframe(2).f_code.co_filename.startswith(_PKG_DIR)


def _message(what: str, why: str) -> str:
    return (f"{what} inside a trace{why}: nothing has run on the GPU yet, and the graph "
            "would not repeat it; a value read now is the previous call's and would be "
            "baked into the graph. Move it after the call of the decorated function, "
            "pass uploaded data as an argument, decide on the device (a kernel), or use "
            "s.copy into pinned host memory plus s.host(fn, ...) to look at results "
            "inside the graph")


def refuse(what: str, why: str = "", name: str = "", args=(), kwargs=None) -> None:
    """Raise the ``HostSyncError`` for ``what``; ``name`` (the function's or method's)
    and its arguments say more where the proxy stream's own op would do it."""
    if _proxy_in(args, kwargs):
        raise HostSyncError(
            f"{what} given the proxy stream inside a trace{why}: it would run now, once, "
            "instead of in each launch of the graph. Record it on the proxy stream: "
            f"{_port_hints.proxy_call(name)}")
    module = _port_hints.imported_module()
    if module is not None:
        raise HostSyncError(f"{what} inside a trace{why}: nothing has run on the GPU "
                            "yet, and the graph would not repeat it"
                            + _port_hints.import_hint(module))
    hint = _port_hints.setitem_hint() if name == "__setitem__" else \
        _port_hints.branch_hint() if "read" in what + why else ""
    raise HostSyncError(_message(what, why) + hint)


def _proxy_in(args, kwargs) -> bool:
    return any(isinstance(a, ProxyStream) for a in args) or \
        any(isinstance(a, ProxyStream) for a in (kwargs or {}).values())


def _guard(original, what, why="", reflect=False, name=""):
    def guarded(*args, **kwargs):
        if reflect and len(args) == 2 and \
                _attr(type(args[1]), "_reflects_comparisons", False):
            return NotImplemented   # lim < gt.cond(x): the condition's own comparison
        if _tracing():
            refuse(what, why, name, args, kwargs)
        return original(*args, **kwargs)
    guarded._graphtrace_guard = True
    guarded.__wrapped__ = original
    return guarded


def _proxy_guard(original, name: str, memory: str | None = None):
    """``original`` refusing a proxy stream among its arguments inside a trace, and
    (``memory``, what an allocation makes) any call of the traced code's own."""
    def guarded(*args, **kwargs):
        if memory is not None and current_tracer() is not None and \
                not _is_internal(sys._getframe(1).f_code.co_filename) and \
                not _proxy_in(args, kwargs):
            raise ArgumentError(_allocation(name, memory))
        if _proxy_in(args, kwargs) and _tracing():
            if name in ("record", "wait"):
                raise StreamError(_port_hints.event_hint(name, None))
            raise StreamError(
                f"{name}() given the proxy stream inside a trace: the array would be "
                "allocated now, once, and is no memory of the graph; make the graph's "
                f"scratch memory on the proxy stream, {_port_hints.proxy_call(name)}, or "
                "pass the array as an argument")
        return original(*args, **kwargs)
    guarded._graphtrace_guard = True
    guarded.__wrapped__ = original
    return guarded


def _allocation(name: str, memory: str) -> str:
    """Why numba's allocation ``name`` (of ``memory``, "device" or "host") is refused
    in a trace, with what to write instead, read off the user's line."""
    why = (f"numba.cuda.{name}() inside a trace makes memory the graph would keep using "
           "at every call: the traced code runs once, so the array is made once, now, "
           "and every later call replays the graph on that same array")
    module = _port_hints.imported_module()
    if module is not None:
        return why + _port_hints.import_hint(module)
    if memory == "host":
        return (f"{why}; allocate pinned host memory outside the graph function, "
                "h = gt.pinned_empty(shape, dtype), and pass it as an argument")
    made = _port_hints.proxy_call(name) if name.startswith("device_array") else \
        "t = s.empty(shape, dtype)"
    kept = _port_hints.stored_attribute(name)
    outside = f"allocate {kept} before the first call (in __init__), where the function " \
        "reads it" if kept else "allocate the array outside the graph function and " \
        "pass it as an argument"
    return (f"{why}; make scratch memory the graph owns on the proxy stream, {made} "
            f"(s.zeros with the same arguments to start from zeros in every launch), or "
            f"{outside}")


def _install_function(module: str, path: str, what: str | None, load: bool = True,
                      memory: str | None = None) -> None:
    """Wrap ``module``'s ``path`` (``what`` None: refusing only a proxy stream, and any
    call of the traced code's own where ``memory`` names what it allocates); a module
    not loaded yet is imported where ``load``."""
    owner = sys.modules.get(module)   # at every trace: the import system only once
    if owner is None:
        if not load:
            return
        try:
            owner = importlib.import_module(module)
        except Exception:  # noqa: BLE001  (a module that cannot load has nothing to guard)
            return
    *parents, attr = path.split(".")
    for p in parents:
        owner = getattr(owner, p, None)
    original = getattr(owner, attr, None)
    if original is None or getattr(original, "_graphtrace_guard", False):
        return
    try:
        setattr(owner, attr, _proxy_guard(original, attr, memory) if what is None else
                _guard(original, f"{module}.{path}()", f" ({what})", name=attr))
    except (AttributeError, TypeError):
        pass


def _guard_sim_array(cls) -> None:
    """numba's simulated device array: refuse every element access, keep views."""
    if getattr(cls, "_graphtrace_guard", False):
        return
    for name, value in list(vars(cls).items()):
        if name not in _SIM_VIEWS and callable(value):
            setattr(cls, name, _guard(value, f"{name}() of a device array",
                                      " (it reads or writes its values on the host)",
                                      name in _COMPARISONS, name))
    getitem, getattr_ = cls.__getitem__, cls.__getattr__

    def __getitem__(self, idx):
        out = getitem(self, idx)
        if type(out) is not cls and _tracing():
            refuse("reading an element of a device array", " (gt.cond and kernels take a "
                   "one-element view instead: x[2:3] for x[2])")
        return out

    def __getattr__(self, name):
        if (name in _SIM_READS or not name.startswith("__") and name not in _SIM_GEOMETRY) \
                and _tracing() and hasattr(self._ary, name):
            refuse(f"{name} of a device array", " (it reads its values on the host)")
        return getattr_(self, name)

    cls.__getitem__, cls.__getattr__ = __getitem__, __getattr__
    if "squeeze" not in vars(cls):   # a view on the GPU: numpy's would leave the device
        def squeeze(self, axis=None, stream=0):
            return cls(self._ary.squeeze(axis), stream=stream or self.stream)
        cls.squeeze = squeeze
    cls._graphtrace_guard = True


@on_trace_start(on_import=True)
def install() -> None:
    for module, path, what in _FUNCTIONS:
        if module.split(".")[0] in sys.modules:
            _install_function(module, path, what)
    for module, path, what in _SIM_FUNCTIONS:
        _install_function(module, path, what, load=False)
    for module, path in _PROXY_TAKERS:
        _install_function(module, path, None, load=False)
    for path, memory in _ALLOCATIONS:
        _install_function("numba.cuda", path, None, load=False, memory=memory)
    sim = sys.modules.get("numba.cuda.simulator.cudadrv.devicearray")
    if sim is not None:
        _guard_sim_array(sim.FakeCUDAArray)


class CupyFence:
    """cupy's current stream, while a thread traces on a GPU: a capturing one.

    cupy refuses every transfer between host and device on a capturing
    stream ("the current stream is capturing"), so ``x.get()``, ``float(x)``,
    ``x.item()``, ``cupy.asarray(numpy_array)`` fail at the user's line; they
    become a ``HostSyncError`` there (``translate``). Array expressions,
    reductions and copies issued meanwhile are captured, not run; the fence
    refuses them when the trace ends, since the graph would not hold them.
    """

    __slots__ = ("stream", "previous", "active")

    def __init__(self):
        self.active = False

    def __enter__(self):
        cp = sys.modules.get("cupy")
        from . import _driver
        if cp is None or not _driver.available():
            return self
        self.stream = _fence_stream(cp)
        self.previous = cp.cuda.get_current_stream()
        self.stream.use()
        cp.cuda.runtime.streamBeginCapture(self.stream.ptr,
                                           cp.cuda.runtime.streamCaptureModeRelaxed)
        self.active = True
        return self

    def __exit__(self, kind, exc, tb):
        if not self.active:
            return False
        cp = sys.modules["cupy"]
        self.previous.use()
        try:
            graph = cp.cuda.runtime.streamEndCapture(self.stream.ptr)
        except Exception:  # noqa: BLE001  (invalidated by the error being raised)
            _FENCES.__dict__.clear()   # the next fence takes a new stream
            return False
        count = _node_count(graph)
        cp.cuda.runtime.graphDestroy(graph)
        if count and kind is None:
            raise HostSyncError(
                f"cupy ran {count} operation(s) eagerly inside the trace (array "
                "expressions, reductions, copies or fills on cupy's current stream): they "
                "would run once, now, and not in the graph; launch kernels on the proxy "
                "stream (s.launch, s.copy, s.memset), or compute outside the decorated "
                "function")
        return False


_FENCES = threading.local()   # device -> the stream this thread's fences capture on


def _fence_stream(cp):
    """This thread's capturing stream on the current device, made at its first fence
    (making one costs more than the capture)."""
    device = cp.cuda.runtime.getDevice()
    stream = getattr(_FENCES, "streams", {}).get(device)
    if stream is None:
        stream = cp.cuda.Stream(non_blocking=True)
        _FENCES.__dict__.setdefault("streams", {})[device] = stream
    return stream


def _node_count(graph: int) -> int:
    from cuda.bindings import driver
    err, _, count = driver.cuGraphGetNodes(driver.CUgraph(graph), 0)
    return int(count) if err == driver.CUresult.CUDA_SUCCESS else 0


def translate(exc: BaseException) -> HostSyncError | None:
    """The ``HostSyncError`` for a library's refusal to transfer or synchronise
    during the fence's capture, at the user's line of the traceback; else None."""
    text = str(exc)
    if "stream is capturing" not in text and "StreamCapture" not in text:
        return None
    return HostSyncError(_message("a transfer between host and device memory",
                                  f" ({text})"), source=raised_at(exc))


def needs_gpu(exc: BaseException) -> bool:
    """Whether ``exc`` is cupy's error for a machine without a usable GPU (a CUDA
    runtime or driver error cupy raised; the simulator runs where there is none)."""
    from . import _driver
    t = type(exc)
    return t.__name__ in ("CUDARuntimeError", "CUDADriverError") and \
        t.__module__.startswith("cupy") and not _driver.available()


def cupy_calls(exc: BaseException) -> list[str]:
    """The qualified names of cupy's functions in ``exc``'s traceback, outermost
    first: ``cupy._core.raw.RawKernel.__call__`` (cupy's compiled frames are named
    so), ``cupy._creation.basic.ones`` (its Python ones by module and name)."""
    out, tb = [], exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name.startswith("cupy."):
            out.append(code.co_name)
        elif str(tb.tb_frame.f_globals.get("__name__")).split(".")[0] == "cupy":
            out.append(f"{tb.tb_frame.f_globals['__name__']}.{code.co_qualname}")
        tb = tb.tb_next
    return out


def raised_at(exc: BaseException):
    """The innermost line of the user's code in ``exc``'s traceback (library,
    Cython and graphtrace frames skipped), or None."""
    source, tb = None, exc.__traceback__
    while tb is not None:
        file = tb.tb_frame.f_code.co_filename
        if not _is_internal(file) and not file.endswith((".pyx", ".pxd", ".pxi")) \
                and not file.startswith(LIBRARY_DIRS):
            source = (file, tb.tb_lineno)
        tb = tb.tb_next
    return source

"""The cuda.core ``Kernel`` adapter, and cuda.core's ``launch`` on proxy streams.

cuda.core's ``Kernel`` says nothing about what a parameter does to memory,
so every array argument is read and written unless ``gt.kernel(k, intents)``
or ``gt.In``/``gt.Out`` say otherwise. A Python float is passed as a double
and an int as an intptr_t, as ``cuda.core.launch`` does; pass numpy scalars
for other C types.

``launch(stream, config, kernel, *args)`` (``gt.launch``) is cuda.core's
launch, which also records on a proxy stream. cuda.core's own cannot be
made to record: it is compiled code that takes the stream's handle
(``__cuda_stream__``) and calls the driver at once, so the only place to
see its config, kernel and arguments is the call itself. graphtrace puts
``gt.launch`` in place of ``cuda.core.launch`` when it is imported: code
that imports cuda.core's launch afterwards records unchanged; a name bound
before keeps cuda.core's own, and a proxy stream handed to it says so.
``cuda.core.LaunchConfig`` is likewise replaced by a subclass that refuses a
dynamic scalar as a size (``_checked_config``) as ``k[n, 8, s]`` does.
"""
from __future__ import annotations

from .._driver import available as _available, driver
from ..buffers import Buffer
from ..context import ProxyStream, current_tracer
from ..errors import ArgumentError, KernelArgumentError, StreamError
from ..scalar import Scalar
from ._adapter import ADAPTERS, misplaced_stream
from ._cupy import demangled
from ._reference import ReferenceAdapter

__all__ = ["CoreAdapter", "launch", "kernel_name"]

UNNAMED = "(unnamed)"


def _is_core_kernel(k) -> bool:
    return type(k).__name__ == "Kernel" and type(k).__module__.startswith("cuda.core")


def kernel_name(k) -> str:
    """The name of a cuda.core ``Kernel``, which keeps none: the driver's
    (``cuKernelGetName``, a C++ symbol demangled as cupy's are), else ``(unnamed)``
    (no GPU, a driver older than 12.3, a stand-in without a handle)."""
    drv = driver()
    try:
        err, symbol = drv.cuKernelGetName(drv.CUkernel(int(k.handle)))
    except (AttributeError, TypeError, RuntimeError):   # no driver, no such call, no handle
        return UNNAMED
    if err != drv.CUresult.CUDA_SUCCESS or not symbol:
        return UNNAMED
    symbol = symbol.decode()
    return demangled(symbol) or symbol


class CoreAdapter(ReferenceAdapter):
    library = "cuda.core"
    raw_pointers = True   # arrays are passed as their addresses

    def __init__(self, k):
        super().__init__(k, kernel_name(k), None, None)

    def validate(self, args) -> None:
        for i, a in enumerate(args):
            if isinstance(a, (list, tuple)):
                raise KernelArgumentError(
                    f"argument {self.param_name(i)} of cuda.core kernel {self.name} is a "
                    f"Python {type(a).__name__}, which cuda.core cannot pass: pass a device "
                    "array (cupy.asarray(values)), or the numbers one by one")
        self.valid_types.add(tuple(map(type, args)))   # decided by the types alone

    def compile(self, args):
        return self.kernel, None

    def pack(self, meta, args, value_of) -> list:
        out = []
        for a in args:
            v = value_of(a)
            out.append(v.ptr if isinstance(v, Buffer) else v)
        return out


ADAPTERS.append((_is_core_kernel, CoreAdapter))


_core_launch = None   # cuda.core's own launch


def launch(stream, config, kernel, *kernel_args):
    """``launch(stream, config, kernel, *args)``: cuda.core's launch, which also records.

    On a proxy stream it records a kernel node, as
    ``stream.launch(kernel, config, *args)`` does: any kernel graphtrace takes
    (numba, cupy ``RawKernel``, cuda.core ``Kernel``, ``gt.kernel``), with the
    options of the ``LaunchConfig`` (or of a dict of its fields). On any other
    stream it is cuda.core's own launch; inside a trace that is refused, since
    the kernel would run now and not in the graph.
    """
    if isinstance(stream, ProxyStream):
        return stream.launch(kernel, config, *kernel_args)
    if current_tracer() is not None:
        misplaced = misplaced_stream(stream)
        if misplaced is not None:
            raise StreamError(f"a kernel launched on {misplaced}")
        raise StreamError(
            "a kernel launched on a real stream inside a trace: it would run now and "
            "escape the graph; launch it on the proxy stream, launch(s, config, kernel, "
            "*args)")
    return _core_launch(stream, config, kernel, *kernel_args)


def _checked_config(base):
    """A subclass of cuda.core's ``LaunchConfig`` (``base``) refusing a dynamic
    scalar among its sizes with the DynamicScalarError ``k[n, 8, s]`` gives, at
    the user's line: cuda.core's takes ints alone (no ``__index__``), and refused
    one with a ValueError naming graphtrace's Scalar class. Its name and module
    are cuda.core's, as everything else about it."""

    class _Kind(type(base)):
        def __instancecheck__(cls, obj):   # cuda.core's own configs (a KernelNode's,
            return isinstance(obj, base)   # one made before graphtrace) are ones too

        def __subclasscheck__(cls, sub):
            return issubclass(sub, base)

    class LaunchConfig(base, metaclass=_Kind):
        __slots__ = ()
        __doc__ = base.__doc__

        def __init__(self, *args, **kwargs):
            for value in (*args, *kwargs.values()):
                for d in value if isinstance(value, (tuple, list)) else (value,):
                    if isinstance(d, Scalar):
                        d._refuse()   # a dynamic scalar cannot size a launch
            try:
                super().__init__(*args, **kwargs)
            except Exception as e:   # (cuda.core asks the GPU about clusters and
                asked = [k for k in ("cluster", "is_cooperative") if kwargs.get(k)]
                if _available() or not asked:   # cooperative launches: none on the
                    raise                       # simulator)
                raise ArgumentError(
                    f"cuda.core's LaunchConfig({', '.join(f'{k}=...' for k in asked)}) "
                    "asks the GPU whether it can launch so, and this machine has none "
                    f"({type(e).__name__}): on the simulator give the options to the "
                    "launch, s.launch(k, grid, block, *args, cluster=(2, 1, 1), "
                    "cooperative=True), which traces, lists and simulates the same "
                    "graph") from None

    LaunchConfig.__module__, LaunchConfig.__qualname__ = base.__module__, base.__qualname__
    return LaunchConfig


def _replace_core_launch() -> None:
    """Put ``launch`` in place of ``cuda.core.launch``, and ``_checked_config``'s
    class in place of ``cuda.core.LaunchConfig`` (once each)."""
    global _core_launch
    try:
        import cuda.core as core
    except (ImportError, RuntimeError, OSError):   # no usable cuda.core: nothing to wrap
        return
    if getattr(core, "launch", launch) is not launch:
        _core_launch, core.launch = core.launch, launch
    config = getattr(core, "LaunchConfig", None)
    if isinstance(config, type) and not getattr(config, "_graphtrace", False):
        core.LaunchConfig = _checked_config(config)
        core.LaunchConfig._graphtrace = True


_replace_core_launch()

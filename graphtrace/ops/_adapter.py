"""What graphtrace knows of one kernel, whatever library made it: its ``Adapter``.

An adapter tells graphtrace what it needs of one kernel: its name and
parameters, what each parameter does to memory (intents), what arguments it
can take, how to pack arguments for a launch, and how to run it on the CPU.
``_numba.py``, ``_cupy.py`` and ``_core.py`` hold one adapter each and
register it in ``ADAPTERS`` (``MODULES``: kernels of a module by name);
``adapter_for`` finds a kernel's, once per kernel. ``Declared`` is a kernel
whose intents ``gt.kernel`` (``kernel.py``) declares; ``untyped_number`` tells
the numbers no kernel takes. ``kernel.py`` records launches of adapters and
holds the ``kernel`` op.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..buffers import Buffer, has_gaps
from ..context import ProxyStream, current_tracer
from ..errors import ArgumentError, KernelArgumentError
from ..owned import keep, kept
from ..scalar import Scalar

__all__ = ["Adapter", "Declared", "ADAPTERS", "MODULES", "adapter_for", "untyped_number",
           "untyped_error", "misplaced_stream"]

# (predicate(obj) -> bool, factory(obj) -> Adapter), tried in order.
ADAPTERS: list = []
# (predicate(module) -> bool, function(module, name) -> Adapter): kernels of a module by name.
MODULES: list = []
_cache: dict[int, tuple] = {}   # id(kernel) -> (kernel, adapter) (owned.keep: by the kernel)


def _not_forward(b: Buffer) -> bool:
    """A view with a negative or zero stride along an axis of two or more
    elements (``x[::-1]``, a broadcast): its address is not its first byte, or its
    elements repeat."""
    strides = b.strides
    return strides is not None and any(
        st <= 0 and n > 1 for n, st in zip(b.shape, strides))


def _overlapping(b: Buffer) -> bool:
    """A forward view (see ``_not_forward``) whose elements share bytes (windows
    that overlap, ``sliding_window_view``): its elements need more bytes than lie
    from its first byte to its last. A forward view without gaps (``has_gaps``)
    or overlaps lies one element after another in some order (a C- or
    F-contiguous array, a transpose), which a bare address tells."""
    return b.hi - b.lo < b.nbytes


class Adapter:
    """What graphtrace knows of one kernel. Subclasses fill in the blanks.

    ``params``: names of the fixed parameters (None when unknown);
    ``vararg``: the name of a ``*args`` parameter taking any number of
    further arguments (or None); ``intents``: per fixed parameter ``"r"``,
    ``"w"`` or ``"rw"`` (None: all ``"rw"``); ``vararg_intent``: that of each
    further argument; ``opaque``: the kernel touches memory it is not given
    as array arguments; ``cooperative_reason``: why the kernel must be
    launched cooperatively, if it must; ``handle_is_function``: the cuda.core
    ``Kernel`` that ``compile`` returns wraps a ``CUfunction``, not a ``CUkernel``.
    """

    library = "?"
    vararg_intent = "rw"
    # the kernel's Intents where a launch's modes depend on its arrays' dimensions
    # (``Intents.modes_for``), else None
    by_arrays = None
    cooperative_reason: str | None = None
    handle_is_function = False
    # arrays reach the kernel as bare addresses (cupy, cuda.core), not as views
    # with their strides (numba): see refuse_gaps
    raw_pointers = False

    def __init__(self, kernel, name: str, params=None, intents=None, opaque=False,
                 vararg=None):
        self.kernel, self.name, self.params = kernel, name, params
        self.intents, self.opaque, self.vararg = intents, opaque, vararg
        # the tuples of argument types ``validate`` passed on their types alone:
        # a launch whose recorded arguments have one of these skips it (Tracer.add)
        self.valid_types: set = set()

    def param_name(self, i: int) -> str:
        if self.params is not None and i < len(self.params):
            return self.params[i]
        if self.vararg is not None:
            return f"{self.vararg}[{i - len(self.params)}]"
        return f"#{i}"

    def check_arity(self, nargs: int) -> None:
        if self.params is None or nargs == len(self.params) or \
                (self.vararg is not None and nargs > len(self.params)):
            return
        names = ", ".join(self.params + ([f"*{self.vararg}"] if self.vararg else []))
        least = "at least " if self.vararg else ""
        defaults = getattr(getattr(self.kernel, "py_func", None), "__defaults__", None) or ()
        left = self.params[nargs:] if nargs < len(self.params) else []
        given = f"{nargs} {'was' if nargs == 1 else 'were'} given"
        if left and len(left) <= len(defaults):
            given += (f": a graph passes every argument of a kernel, its defaults too; pass "
                      f"{', '.join(left)} explicitly")
        raise KernelArgumentError(
            f"{self.library} kernel {self.name} takes {least}{len(self.params)} arguments "
            f"({names}) but {given}")

    def refuse_gaps(self, args) -> None:
        """Raise for a view passed as a bare address that is not its elements one
        after another from its first byte: one laid out backward or repeating its
        elements, one whose elements overlap (the kernel reads as many elements
        forward, past the view's last byte), one with gaps between its elements (a
        2-D block, a step: the kernel may touch the bytes between them). Each
        touches bytes graphtrace cannot see, so it could run unordered with their
        users. An opaque kernel or launch is ordered with everything, and takes it."""
        for i, b in enumerate(args):
            if type(b) is Buffer and _not_forward(b):
                raise KernelArgumentError(
                    f"argument {self.param_name(i)} of {self.library} kernel {self.name} "
                    f"is a view laid out backward or repeating its elements "
                    f"({b.label or 'an array'}, shape {b.shape}, strides {b.strides}), and "
                    "the kernel gets its address alone: it would read and write the bytes "
                    "forward from that address, which are not the view's; pass a forward "
                    "view (and reverse or repeat in the kernel's index), a copy, or launch it "
                    "with opaque=True to order it with everything")
            if type(b) is Buffer and _overlapping(b):
                raise KernelArgumentError(
                    f"argument {self.param_name(i)} of {self.library} kernel {self.name} "
                    f"is a view whose elements overlap ({b.label or 'an array'}, shape "
                    f"{b.shape}, strides {b.strides}: {math.prod(b.shape)} elements in "
                    f"{b.hi - b.lo} bytes), and the kernel gets its address alone: it would "
                    f"read and write {b.nbytes} bytes forward from that address, one element "
                    "after another, which are not the view's; pass a contiguous copy (or the "
                    "array the windows lie in, and their length as a number), or launch it "
                    "with opaque=True to order it with everything")
            if type(b) is Buffer and has_gaps(b):
                raise KernelArgumentError(
                    f"argument {self.param_name(i)} of {self.library} kernel {self.name} "
                    f"is a view with gaps between its elements ({b.label or 'an array'}, "
                    f"shape {b.shape}, strides {b.strides}), and the kernel gets its address "
                    "alone: it may touch the bytes in between, which graphtrace cannot see; "
                    "pass the whole array (and the offset and leading dimension as "
                    "numbers), or launch it with opaque=True (or declare it with "
                    "gt.kernel(k, opaque=True)) to order it with everything")

    def check_number(self, i: int, value, source, traced=None) -> None:
        """Raise (at ``source``, the launch's line) where a later call's ``value`` of
        argument ``i``, a dynamic number traced as ``traced``, cannot be passed; the
        GPU's packing finds out too, every backend asks this before it rebinds the
        graph (``Binding.refuse_numbers``, ``check_values``)."""

    def validate(self, args) -> None:
        """Raise at record time for arguments the kernel cannot take. Where the
        types of ``args`` alone showed them right, add their tuple to
        ``valid_types``: launches of those types then skip this."""

    @property
    def validates(self) -> bool:
        """Whether ``validate`` checks anything (launches skip it otherwise)."""
        return type(self).validate is not Adapter.validate

    def intent(self, i: int) -> str:
        """The intent of argument ``i`` of a launch."""
        if self.vararg is not None and i >= len(self.params):
            return self.vararg_intent
        return self.intents[i] if self.intents and i < len(self.intents) else "rw"

    # Emission and simulation: see the subclasses.
    def compile(self, args):
        """``(cuda.core Kernel, meta)`` for these recorded arguments (needs a GPU)."""
        raise NotImplementedError

    def pack(self, meta, args, value_of) -> list:
        """Flat launch arguments; ``value_of`` maps a Buffer/Scalar to its value now."""
        raise NotImplementedError

    def compiled_cooperative(self, meta) -> bool:
        """Whether the kernel ``compile`` returned with ``meta`` needs a cooperative launch."""
        return False

    def simulate(self, grid, block, shared_mem, values):
        raise NotImplementedError(
            f"the CPU simulator cannot run {self.library} kernel {self.name}")

    def simulation_refusal(self, grid) -> str | None:
        """Why the simulator cannot run this launch correctly, if it cannot."""
        return None

    def __repr__(self):
        return f"<{self.library} kernel {self.name}>"


class Declared(Adapter):
    """A kernel with intents (and opacity) declared by ``gt.kernel``."""

    def __init__(self, inner: Adapter, intents, opaque, name=None):
        self.given = list(intents) if intents is not None else None, bool(opaque)
        super().__init__(inner.kernel, name or inner.name, inner.params, None, opaque,
                         inner.vararg)
        self.follow(inner)

    def follow(self, inner: Adapter) -> None:
        """Take what the kernel's adapter knows: at the declaration, and again where
        graphtrace makes the kernel a new one (a device function it calls defined
        again: ``_numba._drop_stale_adapters``)."""
        self.inner, self.library = inner, inner.library
        self.params, self.vararg = inner.params, inner.vararg
        self.intents = self.given[0] if self.given[0] is not None else inner.intents
        self.valid_types = inner.valid_types   # its validate is the inner one's
        self.raw_pointers = inner.raw_pointers
        self.cooperative_reason = inner.cooperative_reason
        self.handle_is_function = inner.handle_is_function

    @property
    def opaque(self) -> bool:
        """Declared so, or the kernel's adapter finds it so (now: a global it reads
        may come to hold a device array after the declaration)."""
        return self.given[1] or self.inner.opaque

    @opaque.setter
    def opaque(self, value) -> None:
        self.given = self.given[0], bool(value)

    def _declared(self) -> tuple:
        return (id(self.inner.kernel), tuple(self.given[0] or ()), self.given[1], self.name)

    def __eq__(self, other):
        """The same declaration of the same kernel: made again (a notebook cell run
        again), it finds the graphs of the first."""
        return type(other) is Declared and other.inner.kernel is self.inner.kernel and \
            other._declared() == self._declared()

    def __hash__(self):
        return hash(self._declared())

    def __getitem__(self, config):
        """numba's launch syntax: ``k[grid, block, s](*args)`` or ``k[grid, block, s,
        shared_mem](*args)`` with ``s`` a proxy stream, as ``s.launch`` takes it."""
        config = config if isinstance(config, tuple) else (config,)
        if len(config) not in (3, 4) or not isinstance(config[2], ProxyStream):
            raise ArgumentError(
                f"kernel {self.name} declared with gt.kernel launches as k[grid, block, s]"
                "(*args) with s the proxy stream (or k[grid, block, s, shared_mem], or "
                "s.launch(k, grid, block, *args))")
        grid, block, s = config[:3]
        shared_mem = config[3] if len(config) == 4 else None
        return lambda *args: s.launch(self, grid, block, *args, shared_mem=shared_mem)

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        """numba's other launch syntax, for a numba kernel: ``k.forall(ntasks, tpb,
        stream=s)(*args)``, ``ntasks`` threads in blocks of ``tpb`` (``launch_forall``,
        set by ``_numba_launch.py``)."""
        if self.library != "numba" or self.launch_forall is None:
            raise ArgumentError(
                f"kernel {self.name} declared with gt.kernel is a {self.library} kernel, and "
                "k.forall(n, stream=s) is numba's spelling: launch it as k[grid, block, s]"
                "(*args) or s.launch(k, grid, block, *args)")
        if not isinstance(stream, ProxyStream):
            raise ArgumentError(
                f"kernel {self.name} declared with gt.kernel launches as k.forall(n, "
                "stream=s)(*args) with s the proxy stream (or k[grid, block, s](*args))")
        return self.launch_forall(self, ntasks, tpb, stream, sharedmem)

    # numba's forall for a proxy stream (_numba_launch.py's _ProxyForAll), once numba is in
    launch_forall = None

    def intent(self, i: int) -> str:
        """The declared intent, else the kernel's own (declared ones may cover *args)."""
        if self.intents is not None and i < len(self.intents):
            return self.intents[i]
        return self.inner.intent(i)

    def validate(self, args):
        return self.inner.validate(args)

    def check_number(self, i: int, value, source, traced=None) -> None:
        self.inner.check_number(i, value, source, traced)

    @property
    def validates(self) -> bool:
        return self.inner.validates

    def compile(self, args):
        return self.inner.compile(args)

    def pack(self, meta, args, value_of):
        return self.inner.pack(meta, args, value_of)

    def compiled_cooperative(self, meta) -> bool:
        return self.inner.compiled_cooperative(meta)

    def simulate(self, grid, block, shared_mem, values):
        return self.inner.simulate(grid, block, shared_mem, values)

    def simulation_refusal(self, grid) -> str | None:
        return self.inner.simulation_refusal(grid)


def adapter_for(k) -> Adapter:
    """The adapter of a kernel object, made once per kernel."""
    if isinstance(k, Adapter):
        return k
    hit = _cache.get(id(k))
    if hit is not None and type(hit) is not tuple:
        hit = kept(hit)   # owned by the kernel: dies with it
    if hit is not None and hit[0] is k:
        return hit[1]
    for accepts, factory in ADAPTERS:
        if accepts(k):
            adapter = factory(k)
            keep(_cache, id(k), k, (k, adapter))
            return adapter
    library = callable(k) and not isinstance(k, type)
    raise ArgumentError(
        f"cannot launch {type(k).__name__!r}: pass a numba @cuda.jit kernel, a cupy "
        "RawKernel (or RawModule function), or a cuda.core Kernel" + (
            "; run a library's kernel or function (cupy's ElementwiseKernel or "
            "ReductionKernel, a cupy or torch expression) in a captured region instead: "
            "s.captured(fn, *arrays, reads=[...], writes=[...]), where fn calls it"
            if library else ""))


def untyped_error(adapter, i: int, odd: str, source=None) -> KernelArgumentError:
    """The error for argument ``i`` of ``adapter``'s kernel being ``odd`` (``untyped_number``)."""
    return KernelArgumentError(
        f"argument {adapter.param_name(i)} of {adapter.library} kernel {adapter.name} is "
        f"{odd}, which a kernel cannot take: pass a number of 64 bits at most (an int, a "
        "float, np.float64)", source)


def untyped_number(a):
    """What a number no kernel takes is (an int wider than 64 bits, a long double, a
    ``Fraction`` or ``Decimal``: the simulator would compute with it), else None.
    Subclasses of int, float and complex (an ``IntEnum``'s or ``IntFlag``'s member, a
    program's ``class Meters(float)``) are taken as their base, as numba takes them."""
    v = a._value if type(a) is Scalar else a
    if isinstance(v, int):   # bool too
        return None if -(1 << 63) <= v < (1 << 64) else \
            f"the integer {int(v)}, wider than 64 bits"
    if isinstance(v, (float, complex)):
        return None
    if isinstance(v, np.generic):
        if v.dtype.kind in "fc" and v.dtype.itemsize > (16 if v.dtype.kind == "c" else 8):
            return f"a {v.dtype} ({type(v).__name__})"
        return None
    if isinstance(v, numbers.Number):
        how = "int(x) passes it as an int" if isinstance(v, numbers.Integral) else \
            "complex(x) passes it as a complex number" if isinstance(v, numbers.Complex) \
            and not isinstance(v, numbers.Real) else "float(x) passes it as a float"
        return f"a {type(v).__name__} ({how})"
    return None


def misplaced_stream(where) -> str | None:
    """Where a launch's stream ``where`` is what a parameter of the traced graph
    function holds, not a stream (``def f(x, y, s)`` called as ``f(X, Y)``: ``s`` holds
    Y, and ``x`` the proxy stream): which parameter it is, why, and the signature to
    write (a message's end: "launched on parameter s of f, ..."); else None."""
    t = current_tracer()
    given = getattr(t, "given", None) or {}
    if isinstance(where, Scalar):
        param = where._param if where._param in given else None
    elif where is None or isinstance(where, (numbers.Number, str)):   # (by identity: not
        return None                                                 # a small int's)
    else:
        param = next((k for k, v in given.items() if v is where), None)
    if param is None:
        return None
    names = list(given)
    lead = names[:1] if getattr(t, "self_param", None) else []
    stream = names[len(lead)]
    if param == stream:
        return None
    fixed = ", ".join(lead + [param] + [n for n in names[len(lead):] if n != param])
    what = "a number" if isinstance(where, Scalar) else f"a {type(where).__name__}"
    return (f"parameter {param} of {t.name}, which holds {what}, not a stream: graphtrace "
            f"passes the proxy stream to the first parameter"
            f"{' after ' + lead[0] if lead else ''} ({stream}) and the call's arguments to "
            f"the ones after it, in order; make the stream parameter the first: "
            f"def {t.name}({fixed})")

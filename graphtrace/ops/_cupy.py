"""The cupy ``RawKernel`` adapter: the C signature decides everything.

cupy itself passes a Python float as a double and an int as an int64, which
is wrong for a ``float`` or ``int`` parameter; graphtrace reads the kernel's C
signature instead and packs each argument as its exact C type. A pointer to
const data (``const T*``, ``T const* const``) is read-only; other pointers,
``const T**`` among them (its pointers are writable), are read and written.
"""
from __future__ import annotations

import re

import numpy as np

from ..buffers import Buffer
from ..errors import ArgumentError, KernelArgumentError
from ..scalar import Scalar, has_fraction
from ._csignature import HANDLES, AmbiguousKernel, CParam, c_dtype, parse_signature
from ._reference import ReferenceAdapter
from ._adapter import ADAPTERS, MODULES

__all__ = ["CupyAdapter", "CParam", "parse_signature", "c_dtype", "source_name"]

def source_name(k) -> str:
    """The name a cupy kernel has in its source. A ``RawModule``'s
    ``get_function("k<float>")`` returns a kernel named by the compiled symbol
    (``_Z1kIfEvPT_``), which the module maps back to the name expression (else
    the symbol is read)."""
    if not k.name.startswith("_Z"):
        return k.name
    try:
        mapping = k.kernel.module.mapping   # name expression -> symbol (compiled already)
    except AttributeError:
        mapping = None
    found = next((e for e, symbol in (mapping or {}).items() if symbol == k.name), None)
    return found or demangled(k.name) or k.name


# Itanium ABI codes of the builtin types a kernel template is instantiated with
_MANGLED = {"b": "bool", "c": "char", "a": "signed char", "h": "unsigned char", "s": "short",
            "t": "unsigned short", "i": "int", "j": "unsigned int", "l": "long",
            "m": "unsigned long", "x": "long long", "y": "unsigned long long", "f": "float",
            "d": "double"}


def demangled(symbol: str) -> str | None:
    """``k<float, 256>`` for the symbol of a function template instantiated with
    builtin types and integer constants (``_Z1kIfLi256EEvPT_``), ``impl::k`` for a
    function of a namespace (``_ZN4impl1kEPfS0_``); None for others."""
    names, rest = [], symbol[3:] if symbol.startswith("_ZN") else symbol[2:]
    while (m := re.match(r"\d+", rest)) is not None and (names == [] or symbol[2] == "N"):
        start = m.end() + int(m.group())
        names.append(rest[m.end():start])
        rest = rest[start:]
    if not names or not symbol.startswith("_Z"):
        return None
    name = "::".join(names)   # _ZN4impl1kE...: impl::k
    if not rest.startswith("I"):
        return name if symbol[2] != "N" or rest.startswith("E") else None
    args, i = [], 1
    while i < len(rest) and rest[i] != "E":
        if rest[i] == "L" and rest[i + 1:i + 2] in _MANGLED:   # a constant: L<type><value>E
            end = rest.find("E", i)
            value = rest[i + 2:end]
            args.append("-" + value[1:] if value.startswith("n") else value)
            i = end + 1
        elif rest[i] in _MANGLED:
            args.append(_MANGLED[rest[i]])
            i += 1
        else:
            return None
    if symbol[2] == "N" and not rest[i + 1:].startswith("E"):
        return None
    return f"{name}<{', '.join(args)}>"


class CupyAdapter(ReferenceAdapter):
    library = "cupy"
    raw_pointers = True   # arrays are passed as their addresses
    handle_is_function = True   # Kernel.from_handle of cupy's CUfunction

    def __init__(self, k):
        name = source_name(k)
        try:
            self.signature = parse_signature(k.code, name, getattr(k, "options", ()),
                                             k.name)
        except ValueError as e:   # launches refuse it (validate); gt.kernel's intents
            self.signature, self.unread = [], str(e)   # may be declared meanwhile
            self.unread_advised = isinstance(e, AmbiguousKernel)   # says what to do
            super().__init__(k, name)
        else:
            self.unread, self.unread_advised = None, False
            super().__init__(k, name, [p.name for p in self.signature],
                             ["r" if p.const else "rw" if p.pointer else "r"
                              for p in self.signature])
        if getattr(k, "enable_cooperative_groups", False):
            self.cooperative_reason = ("is built with enable_cooperative_groups=True, which "
                                       "cupy launches cooperatively")
        self._core: dict = {}   # device -> cuda.core Kernel of cupy's module there
        # per parameter: pointer, int, float (incl. complex) or other; and its numpy type
        self._kinds = ["p" if p.pointer else "x" if p.dtype is None else
                       "i" if p.dtype.kind in "iu" else "f" if p.dtype.kind in "fc" else "x"
                       for p in self.signature]
        self._types = [None if p.dtype is None else p.dtype.type for p in self.signature]

    def validate(self, args) -> None:
        """Check at record time that every argument can be packed: the usual cases
        by type alone, the others as ``pack`` takes them (which raises)."""
        if self.unread is not None:
            self._refuse_unread()
        by_type = True
        for p, kind, scalar, a in zip(self.signature, self._kinds, self._types, args):
            t = type(a)
            if kind == "p":
                if t is Buffer:
                    continue
            elif t is scalar or kind == "f" and (t is float or t is int):
                continue
            by_type = False   # an int checked against its range, or any other case
            if kind == "i" and t is int and p.lo <= a <= p.hi:
                continue
            self._pack_slow(p, a, a._value if t is Scalar else a)
        if by_type and len(args) == len(self.signature):
            self.valid_types.add(tuple(map(type, args)))

    def _refuse_unread(self):
        """The launch of a kernel whose C parameters the source does not tell."""
        param = re.match(r"cannot read kernel parameter '(.*)'$", self.unread)
        if self.unread_advised:
            raise KernelArgumentError(f"cupy kernel {self.name}: {self.unread}")
        hint = " (a name made by a macro's ##, T##_name, is not expanded)" \
            if "##" in (self.kernel.code or "") and "macro" not in self.unread else ""
        why = (f"its parameter {param.group(1)} is of a C type graphtrace cannot read; "
               "take it as a void* (or an unsigned long long) and cast it in the kernel"
               if param else
               f"{self.unread}{hint}; add a "
               f"plain declaration of it to the source, extern \"C\" __global__ void "
               f"{self.name}(const float* x, float* y, int n); with its own parameters")
        raise KernelArgumentError(
            f"cupy kernel {self.name}: graphtrace packs each argument as the C type of its "
            f"parameter, read off the kernel's source, and cannot read them: {why} "
            "(intents declared with gt.kernel(k, intents) do not tell the C types)")

    def compile(self, args):
        """The kernel as cupy loaded it for the current device (the graph's): cupy keeps
        a module per device, and its functions belong to that device's context."""
        import cupy
        device = cupy.cuda.runtime.getDevice()
        core = self._core.get(device)
        if core is None:
            from cuda.core import Kernel
            core = self._core[device] = Kernel.from_handle(self.kernel.kernel.ptr)
        return core, None

    def pack(self, meta, args, value_of) -> list:
        out = []
        for p, kind, scalar, a in zip(self.signature, self._kinds, self._types, args):
            if kind == "p" and type(a) is Buffer:       # the usual cases first
                out.append(value_of(a).ptr)
                continue
            v = value_of(a)
            if kind == "f" and (type(v) is float or type(v) is int):
                out.append(scalar(v))
            elif kind == "i" and type(v) is int and p.lo <= v <= p.hi:
                out.append(scalar(v))
            elif type(v) is scalar:   # np.float32 for a float: as it is
                out.append(v)
            else:
                out.append(self._pack_slow(p, a, v))
        return out


    def _pack_slow(self, p: CParam, arg, value):
        """Every other case, with the checks and the errors."""
        if p.pointer:
            if arg is None or (isinstance(arg, int) and self.opaque):
                return arg or 0
            if isinstance(arg, (list, tuple)):
                raise KernelArgumentError(
                    f"parameter {p.ctype} {p.name} of cupy kernel {self.name} is a pointer "
                    f"but was given a Python {type(arg).__name__}: pass a device array "
                    "(cupy.asarray(values))")
            raise KernelArgumentError(
                f"parameter {p.ctype} {p.name} of cupy kernel {self.name} needs a device "
                f"array, not {type(arg).__name__} (a raw pointer needs "
                "gt.kernel(k, opaque=True), since graphtrace cannot see what it touches)")
        if p.ctype.split()[-1] in HANDLES:
            return value
        return self._number(p, value)

    def _number(self, p: CParam, value, source=None):
        """``value`` as parameter ``p``'s C type; ``KernelArgumentError`` (at
        ``source``) where that is no number of it, or a number the conversion changes."""
        dtype = p.dtype
        if isinstance(value, np.generic) and (dtype is None or value.dtype == dtype):
            return value
        where = f"parameter {p.ctype} {p.name} of cupy kernel {self.name}"
        if dtype is None:
            raise KernelArgumentError(
                f"{where} has a C type graphtrace cannot pack from a Python value; pass a "
                "numpy scalar of the exact type (np.void for a struct)", source)
        if isinstance(value, Buffer) or not isinstance(value, (int, float, complex, np.generic)):
            raise KernelArgumentError(f"{where} needs a number, not {type(value).__name__}",
                                      source)
        if isinstance(value, (complex, np.complexfloating)) and dtype.kind != "c":
            raise KernelArgumentError(
                f"value {value!r} is complex, and {where} is real: the imaginary part would "
                "be dropped; pass a real number (v.real where that is meant)", source)
        if dtype.kind in "iu" and has_fraction(value):
            raise KernelArgumentError(
                f"value {value!r} does not fit {where}, which takes whole numbers: the C "
                "conversion would cut it; pass an int (int(v) or round(v), where the cut "
                "is meant)", source)
        try:
            if dtype.kind in "iu":
                if not p.lo <= int(value) <= p.hi:
                    raise OverflowError
                return dtype.type(int(value))
            return dtype.type(value)   # a bool: true for any nonzero number, as in C
        except (OverflowError, TypeError, ValueError):
            fits = f"an int from {p.lo} to {p.hi}" if dtype.kind in "iu" else \
                f"a value {dtype} holds"
            raise KernelArgumentError(f"value {value!r} does not fit {where}: pass {fits}",
                                      source) from None

    def simulate(self, grid, block, shared_mem, values):
        """Run the stand-in with each number as the kernel gets it: a numpy scalar of
        its parameter's C type (``np.int32(2)`` for an ``int n`` passed 2.0,
        ``np.float32`` for a ``float``), so that it computes what the GPU would."""
        typed = [v if p.pointer or p.dtype is None or p.ctype.split()[-1] in HANDLES
                 else self._number(p, v) for p, v in zip(self.signature, values)]
        super().simulate(grid, block, shared_mem, typed + list(values[len(typed):]))

    def check_number(self, i: int, value, source, traced=None) -> None:
        if i < len(self.signature) and not self.signature[i].pointer and \
                self.signature[i].ctype.split()[-1] not in HANDLES:
            self._number(self.signature[i], value, source)


def _is_cupy_raw_kernel(k) -> bool:
    return type(k).__name__ == "RawKernel" and type(k).__module__.startswith("cupy")


ADAPTERS.append((_is_cupy_raw_kernel, CupyAdapter))


class _ModuleFunction:
    """What ``CupyAdapter`` reads of a ``RawKernel``, for function ``name`` of a
    ``RawModule``: its source, name and options come from the module, and cupy's
    kernel (``module.get_function``, which compiles and loads it on the current
    GPU) is asked for only when a graph is built on a GPU, so that the simulator,
    listings and ``@gt.reference`` work without one."""

    def __init__(self, module, name: str):
        self.module, self.name, self.code = module, name, module.code
        self.enable_cooperative_groups = getattr(module, "enable_cooperative_groups", False)
        self.options = getattr(module, "options", ())
        self._raw = None

    @property
    def kernel(self):
        if self._raw is None:
            self._raw = self.module.get_function(self.name)   # a RawKernel in cupy 14
        return self._raw.kernel


# (id(module), name) -> (module, its adapter): gt.kernel(module, name=...) made again
# (a notebook cell run again) is the same kernel, and finds its reference and graphs
_functions: dict = {}


def raw_module_function(module, name: str) -> CupyAdapter:
    """The adapter of function ``name`` (a name expression, ``"k<float>"``, for a
    template) of a cupy ``RawModule``."""
    hit = _functions.get((id(module), name))
    if hit is not None and hit[0] is module:
        return hit[1]
    if getattr(module, "code", None) is None:
        raise ArgumentError(
            "the RawModule has no source code (it was loaded from a cubin or PTX file), "
            "and graphtrace reads a kernel's parameters from its source: build the "
            "module from code=..., or load the file with cuda.core and declare its "
            "kernel with gt.kernel(kernel, intents)")
    expressions = tuple(getattr(module, "name_expressions", None) or ())
    if "<" in name and name not in expressions:
        raise ArgumentError(
            f"{name!r} is not one of the RawModule's name_expressions "
            f"({', '.join(map(repr, expressions)) or 'none given'}): cupy compiles only "
            "the template instances named there; add it to "
            "RawModule(..., name_expressions=[...])")
    adapter = CupyAdapter(_ModuleFunction(module, name))
    if adapter.unread is not None and adapter.unread_advised:
        raise ArgumentError(f"gt.kernel(module, name={name!r}): {adapter.unread}")
    if adapter.unread is not None:   # no such kernel in the source
        pasted = " (one named by a macro's ##: add a plain declaration of it to the code)" \
            if "##" in module.code else ""
        raise ArgumentError(f"gt.kernel(module, name={name!r}): {adapter.unread}; name a "
                            f"__global__ function of the RawModule's code{pasted}")
    _functions[(id(module), name)] = (module, adapter)
    return adapter


MODULES.append((lambda m: type(m).__name__ == "RawModule", raw_module_function))

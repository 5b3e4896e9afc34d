"""The cupy ``RawKernel`` adapter: the C signature decides everything.

cupy itself passes a Python float as a double and an int as an int64, which
is wrong for a ``float`` or ``int`` parameter; graphtrace reads the kernel's C
signature instead and packs each argument as its exact C type. ``const T*``
parameters are read-only; other pointers are read and written.
"""
from __future__ import annotations

import re

import numpy as np

from ..buffers import Buffer
from ..errors import ArgumentError, KernelArgumentError
from ..scalar import Scalar
from ._reference import reference_for
from .kernel import ADAPTERS, MODULES, Adapter

__all__ = ["CupyAdapter", "CParam", "parse_signature", "c_dtype", "source_name"]

_INT = {"char": "int8", "signed char": "int8", "unsigned char": "uint8",
        "short": "int16", "short int": "int16", "unsigned short": "uint16",
        "unsigned short int": "uint16", "int": "int32", "signed": "int32",
        "signed int": "int32", "unsigned": "uint32", "unsigned int": "uint32",
        "long": "int64", "long int": "int64", "unsigned long": "uint64",
        "unsigned long int": "uint64", "long long": "int64", "long long int": "int64",
        "unsigned long long": "uint64", "unsigned long long int": "uint64",
        "size_t": "uint64", "ptrdiff_t": "int64", "ssize_t": "int64"}
_INT.update({f"{u}int{n}_t": f"{u}int{n}" for u in ("", "u") for n in (8, 16, 32, 64)})
_OTHER = {"float": "float32", "double": "float64", "half": "float16", "__half": "float16",
          "bool": "bool", "complex<float>": "complex64", "complex<double>": "complex128",
          "thrust::complex<float>": "complex64", "thrust::complex<double>": "complex128"}
_HANDLES = {"cudaGraphConditionalHandle", "CUgraphConditionalHandle"}
_QUALIFIERS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict|struct)\b")


def c_dtype(ctype: str):
    """numpy dtype of a C scalar type name, or None if graphtrace does not know it."""
    name = " ".join(_QUALIFIERS.sub(" ", ctype).split())
    name = name.replace("std::", "")
    found = _INT.get(name) or _OTHER.get(name)
    return np.dtype(found) if found else None


_TYPE_WORDS = {w for t in list(_INT) + list(_OTHER) for w in t.split()} | {"void"}
_ATTRIBUTES = re.compile(r"\b(__attribute__|__align__|alignas|__declspec|__launch_bounds__|"
                         r"__maxnreg__|__cluster_dims__)\s*\(")
_IDENT = re.compile(r"[A-Za-z_]\w*")


class CParam:
    """One kernel parameter: its name, C type, and whether it is a pointer.

    ``aliases`` maps type names (typedefs, template parameters) to C types;
    a parameter without a name is called ``#index``.
    """

    __slots__ = ("name", "ctype", "pointer", "const", "lo", "hi")

    def __init__(self, text: str, aliases=None, index: int = 0):
        text = " ".join(_drop_attributes(text).split())
        m = re.search(r"([A-Za-z_]\w*)\s*(\[[^\]]*\])?\s*$", text)
        if m is None and not text.endswith(("*", "&")):
            raise ValueError(f"cannot read kernel parameter {text!r}")
        ctype = text[: m.start()].strip() if m else text
        if m and (not _QUALIFIERS.sub("", ctype).strip() or m.group(1) in _TYPE_WORDS
                  or m.group(1) in (aliases or ())):
            m, ctype = None, text        # a type alone: an unnamed parameter
        self.name = m.group(1) if m else f"#{index}"
        ctype = _substitute(ctype, aliases or {})
        self.pointer = "*" in ctype or bool(m and m.group(2))
        if self.pointer:
            before = ctype.rsplit("*", 1)[0] if "*" in ctype else ctype
            self.const = re.search(r"\bconst\b", before) is not None
        else:
            self.const = False
        self.ctype = ctype
        self.bounds()

    def bounds(self):
        """The range of an integer parameter (``lo``/``hi``), for quick packing."""
        dt = self.dtype
        info = np.iinfo(dt) if dt is not None and dt.kind in "iu" else None
        self.lo, self.hi = (int(info.min), int(info.max)) if info else (0, -1)

    @property
    def dtype(self):
        return None if self.pointer else c_dtype(self.ctype)

    def __repr__(self):
        return f"CParam({self.ctype} {self.name})"


def _strip_comments(code: str) -> str:
    code = re.sub(r"/\*.*?\*/", " ", code, flags=re.S)
    return re.sub(r"//[^\n]*", " ", code)


def _closing(text: str, i: int) -> int:
    """The index just past the bracket that closes the one opened before ``i``."""
    depth = 1
    while depth and i < len(text):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return i


def _split_commas(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return parts


def _split_top(text: str) -> list[str]:
    """Parameters (or template parameters) without their default values."""
    parts = [p.split("=")[0].strip() for p in _split_commas(text)]
    return [p for p in parts if p and p != "void"]


def _drop_attributes(text: str) -> str:
    """``text`` without ``__attribute__((...))``, ``__align__(n)``, ``[[...]]`` and the like."""
    text = re.sub(r"\[\[.*?\]\]", " ", text)
    while (m := _ATTRIBUTES.search(text)) is not None:
        text = text[: m.start()] + " " + text[_closing(text, m.end()):]
    return text.replace("__grid_constant__", " ")


def _substitute(text: str, names: dict, passes: int = 8) -> str:
    """Replace whole identifiers of ``text`` by their entries in ``names``.

    Several passes by default: a typedef may name another typedef.
    """
    if not names:
        return text
    for _ in range(passes):
        new = _IDENT.sub(lambda m: names.get(m.group(), m.group()), text)
        if new == text:
            break
        text = new
    return text


_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\([^)]*\))?(.*)$", re.M)


def _expand(text: str, macros: dict) -> str:
    """``text`` with the source's ``#define`` macros expanded (a few levels deep)."""
    for _ in range(8):
        out, pos = [], 0
        for m in _IDENT.finditer(text):
            if m.start() < pos or m.group() not in macros:
                continue
            params, body = macros[m.group()]
            end = m.end()
            if params is not None:
                call = re.match(r"\s*\(", text[end:])
                if call is None:
                    continue
                close = _closing(text, end + call.end())
                args = [a.strip() for a in _split_commas(text[end + call.end(): close - 1])]
                body, end = _substitute(body, dict(zip(params, args)), 1), close
            out += [text[pos: m.start()], " ", body, " "]
            pos = end
        if not out:
            return text
        text = "".join(out) + text[pos:]
    return text


def _declarations(code: str):
    """``(macros, typedefs, code)``: what the preprocessor and typedefs define."""
    code = _strip_comments(code.replace("\\\n", " "))
    macros = {m.group(1): (None if m.group(2) is None else
                           [p.strip() for p in m.group(2)[1:-1].split(",")], m.group(3).strip())
              for m in _DEFINE.finditer(code)}
    code = re.sub(r"^[ \t]*#.*$", " ", code, flags=re.M)   # preprocessor lines
    typedefs = {m.group(2): m.group(1).strip()
                for m in re.finditer(r"\btypedef\s+([^;{}()]+?)\s*\b([A-Za-z_]\w*)\s*;", code)}
    typedefs.update((m.group(1), m.group(2).strip())
                    for m in re.finditer(r"\busing\s+([A-Za-z_]\w*)\s*=\s*([^;{}]+);", code))
    return macros, typedefs, code


def parse_signature(code: str, name: str) -> list[CParam]:
    """The parameters of ``__global__ void name(...)`` in CUDA C++ source.

    Whatever cupy's compiler takes may stand around the name: ``extern "C"``,
    ``__launch_bounds__(...)`` and other attributes, templates, macros,
    typedefs, ``__restrict__``, ``__align__``. A definition wins over a
    declaration.
    """
    base = name.split("<")[0].split("::")[-1].strip()
    macros, typedefs, code = _declarations(code)
    found = None
    for m in re.finditer(r"\b" + re.escape(base) + r"\s*\(", code):
        head = code[max(code.rfind(c, 0, m.start()) for c in ";{}") + 1: m.start()]
        head = _expand(head, macros)
        if not re.search(r"\b__global__\b", head):
            continue
        end = _closing(code, m.end())
        defined = code[end:].lstrip().startswith("{")
        if found is None or defined:
            found = (head, code[m.end(): end - 1])
        if defined:
            break
    if found is None:
        raise ValueError(f"no __global__ function {base!r} in the kernel source")
    head, text = found
    aliases = {**typedefs, **_template_arguments(head, name)}
    return [CParam(p, aliases, i) for i, p in enumerate(_split_top(_expand(text, macros)))]


def _template_arguments(head: str, name: str) -> dict:
    """Template parameter -> the type named in ``k<float, ...>`` (or its default)."""
    m = re.search(r"\btemplate\s*<", head)
    if m is None:
        return {}
    depth, i = 1, m.end()
    while depth and i < len(head):
        depth += {"<": 1, ">": -1}.get(head[i], 0)
        i += 1
    formals = [f.strip() for f in _split_commas(head[m.end(): i - 1])]
    actuals = _split_top(name[name.index("<") + 1: name.rindex(">")]) if "<" in name else []
    out = {}
    for k, formal in enumerate(formals):
        decl, _, default = formal.partition("=")
        words = decl.split()
        if not words:
            continue
        value = actuals[k] if k < len(actuals) else default.strip()
        if value:
            out[words[-1].lstrip(".")] = value
    return out


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
    builtin types and integer constants (``_Z1kIfLi256EEvPT_``); None for others."""
    m = re.match(r"_Z(\d+)", symbol)
    if m is None:
        return None
    start = m.end() + int(m.group(1))
    name, rest = symbol[m.end():start], symbol[start:]
    if not rest.startswith("I"):
        return name
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
    return f"{name}<{', '.join(args)}>"


class CupyAdapter(Adapter):
    library = "cupy"
    handle_is_function = True   # Kernel.from_handle of cupy's CUfunction

    def __init__(self, k):
        name = source_name(k)
        self.signature = parse_signature(k.code, name)
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
            self._pack_slow(p, a, a.value if t is Scalar else a)
        if by_type and len(args) == len(self.signature):
            self.valid_types.add(tuple(map(type, args)))

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
            if kind == "f" and type(v) in (float, int):
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
        if p.ctype.split()[-1] in _HANDLES:
            return value
        dtype = p.dtype
        if isinstance(value, np.generic) and (dtype is None or value.dtype == dtype):
            return value
        if dtype is None:
            raise KernelArgumentError(
                f"parameter {p.ctype} {p.name} of cupy kernel {self.name} has a C type "
                "graphtrace cannot pack from a Python value; pass a numpy scalar of the "
                "exact type (np.void for a struct)")
        if isinstance(value, Buffer) or not isinstance(value, (int, float, complex, np.generic)):
            raise KernelArgumentError(
                f"parameter {p.ctype} {p.name} of cupy kernel {self.name} needs a number, "
                f"not {type(value).__name__}")
        try:
            if dtype.kind in "iub":
                if dtype.kind != "b" and not p.lo <= int(value) <= p.hi:
                    raise OverflowError
                return dtype.type(int(value))
            return dtype.type(value)
        except (OverflowError, TypeError, ValueError):
            raise KernelArgumentError(
                f"value {value!r} does not fit parameter {p.ctype} {p.name} of cupy "
                f"kernel {self.name}") from None

    def simulate(self, grid, block, shared_mem, values):
        reference_for(self)(grid, block, *values)


def _is_cupy_raw_kernel(k) -> bool:
    return type(k).__name__ == "RawKernel" and type(k).__module__.startswith("cupy")


ADAPTERS.append((_is_cupy_raw_kernel, CupyAdapter))


def raw_module_function(module, name: str) -> CupyAdapter:
    """The adapter of function ``name`` of a cupy ``RawModule``."""
    try:
        module.code
    except AttributeError:
        raise ArgumentError("the RawModule has no source code (built from a cubin/PTX "
                            "file): declare the kernel with gt.kernel instead") from None

    class _Function:  # what CupyAdapter reads of a RawKernel
        code, raw = module.code, module.get_function(name)  # a RawKernel in cupy 14
        enable_cooperative_groups = getattr(module, "enable_cooperative_groups", False)

        @property
        def kernel(self):
            return self.raw.kernel

    _Function.name = name
    return CupyAdapter(_Function())


MODULES.append((lambda m: type(m).__name__ == "RawModule", raw_module_function))

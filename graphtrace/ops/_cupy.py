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
from ..ir import Scalar
from .kernel import ADAPTERS, Adapter

__all__ = ["CupyAdapter", "CParam", "parse_signature", "c_dtype"]

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


class CParam:
    """One kernel parameter: its name, C type, and whether it is a pointer."""

    __slots__ = ("name", "ctype", "pointer", "const", "lo", "hi")

    def __init__(self, text: str):
        text = " ".join(text.split())
        m = re.search(r"([A-Za-z_]\w*)\s*(\[\s*\])?\s*$", text)
        if m is None:
            raise ValueError(f"cannot read kernel parameter {text!r}")
        self.name = m.group(1)
        ctype = text[: m.start()].strip()
        self.pointer = "*" in ctype or bool(m.group(2))
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


def _split_top(text: str) -> list[str]:
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
    return [p.split("=")[0].strip() for p in parts if p.strip() and p.strip() != "void"]


def parse_signature(code: str, name: str) -> list[CParam]:
    """The parameters of ``__global__ void name(...)`` in CUDA C++ source."""
    base = name.split("<")[0].strip()
    code = _strip_comments(code)
    m = re.search(r"__global__[^;{(]*?\b" + re.escape(base) + r"\s*\(", code)
    if m is None:
        raise ValueError(f"no __global__ function {base!r} in the kernel source")
    depth, i = 1, m.end()
    while depth and i < len(code):
        depth += {"(": 1, ")": -1}.get(code[i], 0)
        i += 1
    params = [CParam(p) for p in _split_top(code[m.end(): i - 1])]
    return _instantiate(code[: m.start()], name, params)


def _instantiate(prefix: str, name: str, params: list[CParam]) -> list[CParam]:
    """Replace template type parameters by the types named in ``k<float, ...>``."""
    if "<" not in name:
        return params
    tmpl = re.findall(r"template\s*<([^>]*)>\s*$", prefix.rstrip())
    if not tmpl:
        return params
    formals = [p.split()[-1] for p in _split_top(tmpl[-1])]
    actuals = _split_top(name[name.index("<") + 1: name.rindex(">")])
    subst = dict(zip(formals, actuals))
    for p in params:
        p.ctype = " ".join(subst.get(tok, tok) for tok in re.findall(r"[\w:<>]+|\*|&", p.ctype))
        p.bounds()
    return params


class CupyAdapter(Adapter):
    library = "cupy"

    def __init__(self, k):
        self.signature = parse_signature(k.code, k.name)
        super().__init__(k, k.name, [p.name for p in self.signature],
                         ["r" if p.const else "rw" if p.pointer else "r"
                          for p in self.signature])
        self._core = None
        # per parameter: pointer, int, float (incl. complex) or other; and its numpy type
        self._kinds = ["p" if p.pointer else "x" if p.dtype is None else
                       "i" if p.dtype.kind in "iu" else "f" if p.dtype.kind in "fc" else "x"
                       for p in self.signature]
        self._types = [None if p.dtype is None else p.dtype.type for p in self.signature]

    def validate(self, args) -> None:
        """Check at record time that every argument can be packed."""
        self.pack(None, args, lambda v: v.value if isinstance(v, Scalar) else v)

    def compile(self, args):
        if self._core is None:
            from cuda.core import Kernel
            self._core = Kernel.from_handle(self.kernel.kernel.ptr)
        return self._core, None

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
            else:
                out.append(self._pack_slow(p, a, v))
        return out


    def _pack_slow(self, p: CParam, arg, value):
        """Every other case, with the checks and the errors."""
        if p.pointer:
            if arg is None or (isinstance(arg, int) and self.opaque):
                return arg or 0
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
        from ..sim import reference_for
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

        @property
        def kernel(self):
            return self.raw.kernel

    _Function.name = name
    return CupyAdapter(_Function())

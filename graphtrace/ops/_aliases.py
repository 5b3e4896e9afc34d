"""What a numba kernel's values may alias, in the terms of ``_intents.py``'s
source analysis: the kinds of alias (the memory of a parameter, a tuple holding
it, its metadata...), the shapes built of them (``_index``: what indexing gives,
``_join``: either of two), what builtins and numba.cuda's functions do to the
arguments they are given (``_cuda_kind``), and the dotted names calls are
resolved by; and ``Intents``, what the analysis finds a function does to its
parameters.
"""
from __future__ import annotations

import ast
import inspect
import re
import sys

__all__ = ["Intents"]

# Kinds of alias: "a" may be (a view of) the parameter's memory, "t" may be a
# tuple holding such, "m" may be its metadata (or, in a namedtuple, a field); an
# int ``n``: the parameter (0), or what ``n`` integer indices of it give (``p[i]``,
# ``p[i, 1:]``, a loop item), a number where ``p`` has ``n`` dimensions, else a view;
# "p" the parameter where it is a tuple, "e" an array in it (neither where it is an array).
_A, _T, _M, _P, _E = "a", "t", "m", "p", "e"
_TUPLES = (_T, _P)
_NONE: frozenset = frozenset()

# Builtins by what their result may be: new, what they are given (or its items), or a
# tuple of what they are given (``max((p,), (q,))``; numbers otherwise).
_BUILTINS = {**{id(f): "fresh" for f in (len, range, int, float, bool, complex, round, abs,
                                         divmod, pow, print, isinstance, hash, ord, chr, slice)},
             **{id(f): "passing" for f in (enumerate, zip, reversed, iter, next, tuple, list,
                                           sorted, getattr)},
             **{id(f): "tuple" for f in (min, max, sum)}}
_VIEW_METHODS = {"reshape", "view", "transpose", "ravel", "squeeze", "swapaxes"}
_METADATA = {"shape", "strides", "size", "ndim", "dtype", "itemsize", "nbytes"}
# numba.cuda names, relative to the module, that return new values and write nothing.
_CUDA_FRESH = set("""grid gridsize syncthreads syncthreads_count syncthreads_and syncthreads_or
    syncwarp threadfence threadfence_block threadfence_system activemask lanemask_lt
    match_any_sync match_all_sync all_sync any_sync eq_sync ballot_sync shfl_sync shfl_up_sync
    shfl_down_sync shfl_xor_sync popc brev clz ffs fma cbrt nanosleep local.array shared.array
    const.array_like ldca ldcg ldcs ldcv ldlu cg.this_grid""".split())
_CUDA_SCALAR_MODULES = ("libdevice.", "fp16.", "bf16.")
_CUDA_VECTOR = re.compile(r"(u?(char|short|int|long|longlong)|float|double|u?int(8|16|32|64)"
                          r"|float(16|32|64))(x)?[1-4]$")
_CUDA_STORES = {"stcg", "stcs", "stwb", "stwt"}   # first argument written, like atomics
_CUDA_INTS = {f"{v}.{d}" for v in ("threadIdx", "blockIdx", "blockDim", "gridDim")
              for d in "xyz"} | {"laneid", "warpsize"}


def _names(r) -> set:
    return {p for p, _ in r}


def _elem(r) -> frozenset:
    """Roots of an element, view or field of something with roots ``r``."""
    return _index(r, None)


def _index(r, n: int | None) -> frozenset:
    """Roots of ``x[...]`` for ``x`` with roots ``r``, the index taking ``n``
    dimensions (None: unknown, or a field or view of ``x`` other than by index)."""
    return frozenset((p, _E if k == _P else (k + n if n is not None and type(k) is int else _A)
                      if k == _T or type(k) is int else k) for p, k in r) \
        | {x for x in r if x[1] in _TUPLES}


def _loose(r) -> frozenset:
    """``r`` with its dimensions forgotten (a reshape, what a call passes on)."""
    return frozenset((p, _A if type(k) is int else k) for p, k in r)


def _pack(r) -> frozenset:
    return frozenset((p, _T) for p, _ in r)


def _full(r) -> frozenset:
    return frozenset((p, k) for p, _ in r for k in (_A, _T))


def _flat(shape) -> frozenset:
    """Roots of a value from its shape: a tuple of shapes (known positions) or roots."""
    if isinstance(shape, tuple):
        return _pack(frozenset().union(*map(_flat, shape)))
    return shape


def _join(a, b):
    """A shape that may be ``a`` or ``b``."""
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return tuple(map(_join, a, b))
    if a == _NONE or b == _NONE:   # ``return 0`` beside ``return p, q`` keeps the positions
        return b if a == _NONE else a
    return _flat(a) | _flat(b)


def _dotted(expr) -> str:
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if isinstance(expr, ast.Name):
        parts.append(expr.id)
        return ".".join(reversed(parts))
    return ""


def _is_element(expr) -> bool:
    """``p[i]`` / ``p[i, j]`` (no slice) as opposed to ``p[1:]``."""
    idx = expr.slice
    elts = idx.elts if isinstance(idx, ast.Tuple) else [idx]
    return not any(isinstance(e, ast.Slice) for e in elts)


def _cuda_name(head, rest) -> str | None:
    """``"atomic.add"`` for ``cuda.atomic.add``, however numba.cuda was imported."""
    if inspect.ismodule(head):
        mod = head.__name__
        if mod == "numba" and rest[:1] == ["cuda"]:
            return ".".join(rest[1:])
        if mod == "numba.cuda" or mod.startswith("numba.cuda."):
            return ".".join(mod.split(".")[2:] + rest)
        return None
    cuda = sys.modules.get("numba.cuda")
    if head is not None and cuda is not None:
        for name, v in vars(cuda).items():
            if v is head:
                return ".".join([name, *rest])
    return None


def _cuda_kind(rel: str) -> str:
    if rel.startswith("atomic.") or rel in _CUDA_STORES:
        return "store"
    if rel in _CUDA_FRESH or rel.startswith(_CUDA_SCALAR_MODULES) or _CUDA_VECTOR.match(rel):
        return "fresh"
    return "passing" if rel in ("selp", "literal_unroll") else "unknown"


class Intents:
    """What a function does to its parameters (``"r"``, ``"w"`` or ``"rw"``)."""

    def __init__(self, params, modes, vararg=None, kwonly=None, returns=_NONE, outside=(),
                 numbers=None):
        self.params, self.modes = list(params), list(modes)   # positional parameters
        self.vararg = vararg            # (name, intent) of ``*args``, or None
        self.kwonly = dict(kwonly or {})
        self.returns = returns          # shape of what the return value may alias
        # global or closure names it (or a device function it calls) stores into:
        # memory it is not given, so a kernel doing so is opaque
        self.outside = frozenset(outside)
        # parameter -> (n, its mode where it is an array of at most n dimensions of
        # numbers): it is written (in ``modes``) only by ``q += v`` of a name bound to
        # ``p[i..]`` (n indices), which then is a number, not a view
        self.numbers = dict(numbers or {})

    def modes_for(self, arrays) -> list[str]:
        """``modes`` for a launch whose argument ``i`` is ``arrays[i]``: ``(ndim,
        dtype)`` of an array, or None where not known."""
        out = list(self.modes)
        for i, p in enumerate(self.params[:len(arrays)]):
            hit, a = self.numbers.get(p), arrays[i]
            if hit is not None and a is not None and 1 <= a[0] <= hit[0] and \
                    a[1].kind in "biufc" and a[1].fields is None and a[1].subdtype is None:
                out[i] = hit[1]
        return out

    def mode(self, name) -> str | None:
        if name in self.params:
            return self.modes[self.params.index(name)]
        if self.vararg and name == self.vararg[0]:
            return self.vararg[1]
        return self.kwonly.get(name)

    def for_args(self, n: int) -> list[str]:
        """Intents of ``n`` positional arguments; those past the fixed ones go to ``*args``."""
        extra = [self.vararg[1] if self.vararg else "rw"] * max(0, n - len(self.modes))
        return self.modes[:n] + extra

    def __repr__(self):
        return f"<Intents {dict(zip(self.params, self.modes))} *{self.vararg} {self.kwonly}>"

"""Device-side conditions of ``while_loop``, ``if_then``, ``if_else`` and ``switch``.

A condition compares the one element of a device array with a value:
``gt.cond(flag)`` (nonzero), ``gt.cond(residual) > tol`` where ``tol`` is a
number, a dynamic scalar argument or another one-element array. A CUDA
conditional node reads a *handle* that a kernel sets on the device; the
small kernels here evaluate the comparison and set it, so a user writes only
the bodies. A loop's kernel also counts iterations in a word of device
memory, so that a bound on the trip count ends a loop whose condition never
becomes false. ``evaluate`` is the same test on the host, for the simulator.
"""
from __future__ import annotations

import operator
import threading

import numpy as np

from ..arrays import is_array
from ..buffers import unwrap_intent
from ..errors import ArgumentError
from ..reach_values import watch_by_value
from ..scalar import Scalar, value_key

__all__ = ["Condition", "cond", "evaluate", "condition_kernel", "C_TYPES"]

# comparison -> (code in the kernel, Python function)
OPERATORS = {"!= 0": (0, lambda a, b: a != 0), ">": (1, operator.gt), ">=": (2, operator.ge),
             "<": (3, operator.lt), "<=": (4, operator.le), "==": (5, operator.eq),
             "!=": (6, operator.ne)}
C_TYPES = {np.dtype(k): v for k, v in {
    "bool": "bool", "int8": "signed char", "uint8": "unsigned char", "int16": "short",
    "uint16": "unsigned short", "int32": "int", "uint32": "unsigned int",
    "int64": "long long", "uint64": "unsigned long long", "float32": "float",
    "float64": "double"}.items()}


class Condition:
    """A test of a one-element device array, evaluated on the device.

    Made by ``gt.cond(x)`` and refined by one comparison: ``gt.cond(x) > tol``.
    """

    __slots__ = ("array", "op", "rhs")
    _reflects_comparisons = True   # tol < gt.cond(x), lim < gt.cond(x): Python asks it

    def __init__(self, array, op: str = "!= 0", rhs=None):
        self.array, self.op, self.rhs = array, op, rhs

    def _compare(self, op, rhs) -> "Condition":
        if self.op != "!= 0":
            raise ArgumentError("a condition compares once: gt.cond(x) > tol; compute "
                                "anything more complex into a flag array with a kernel")
        if isinstance(rhs, Condition):
            raise ArgumentError("compare gt.cond(x) with a number, a dynamic scalar or a "
                                "one-element array, not with another condition")
        rhs = unwrap_intent(rhs, "r")[0]   # the condition only reads it
        if not isinstance(rhs, (int, float, complex, np.number, np.bool_, Scalar)) and \
                not is_array(rhs):
            raise ArgumentError(f"gt.cond(x) {op} {rhs!r}: compare a device condition with a "
                                "number, a dynamic scalar or a one-element array; for a "
                                "default such as tol=None, pass a number")
        return Condition(self.array, op, rhs)

    def __gt__(self, rhs): return self._compare(">", rhs)
    def __ge__(self, rhs): return self._compare(">=", rhs)
    def __lt__(self, rhs): return self._compare("<", rhs)
    def __le__(self, rhs): return self._compare("<=", rhs)
    def __eq__(self, rhs): return self._compare("==", rhs)   # noqa: E704
    def __ne__(self, rhs): return self._compare("!=", rhs)   # noqa: E704
    __hash__ = None

    def __bool__(self):
        raise ArgumentError(
            "a device condition has no value during the trace (nothing has run yet): "
            "pass it to s.while_loop / s.if_then / s.if_else instead of using it in "
            "Python control flow; a chained comparison (0 < gt.cond(x) < 3) and "
            "and/or/not between conditions ask for its value too: a condition compares "
            "once, so compute a combined test into a flag array with a kernel and pass "
            "gt.cond(flag)")

    def _combined(self, *_):
        raise ArgumentError(
            "a device condition is one comparison of a one-element array (gt.cond(x) > "
            "tol): it does not combine with &, |, ~ or arithmetic; compute the combined "
            "test or value into an array with a kernel and pass gt.cond(flag)")

    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = __invert__ = _combined
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __neg__ = _combined
    __truediv__ = __rtruediv__ = __abs__ = _combined

    def __repr__(self):
        return f"cond({self.array!r}) {self.op}" + ("" if self.rhs is None else f" {self.rhs!r}")


def _key(c: Condition) -> tuple:
    """A condition a global or closure name holds, as the cache key holds it: its
    comparison and its number bound (baked in) by value."""
    number = isinstance(c.rhs, (int, float, complex, np.number, np.bool_))
    return c.op, type(c.rhs), value_key(c.rhs) if number else None


watch_by_value(Condition, _key, ("array", "rhs"))


def cond(array) -> Condition:
    """The device-side condition "``array[0]`` is nonzero"; compare it to refine it.

    >>> @gt.graph
    ... def countdown(s, x, left, minus_one):
    ...     with s.while_loop(gt.cond(left) > 0, max_iterations=100) as body:
    ...         scale[1, 4, body](x, 2.0, x)
    ...         add[1, 1, body](minus_one, left)      # left[0] -= 1
    >>> x, left = cuda.to_device(np.ones(4)), cuda.to_device(np.array([3.0]))
    >>> countdown(x, left, cuda.to_device(np.array([-1.0])))
    >>> x.copy_to_host()
    array([8., 8., 8., 8.])
    """
    if isinstance(array, Condition):
        return array
    return Condition(unwrap_intent(array, "r")[0])


def evaluate(op: str, value, rhs) -> bool:
    """The condition on the host (the simulator), with the device's semantics."""
    return bool(OPERATORS[op][1](value, rhs))


_SOURCE = r'''
extern "C" __device__ __cudart_builtin__ void CUDARTAPI
cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned int value);

template <typename T, int OP> __device__ bool gt_test(T a, T b) {
  switch (OP) {
    case 0: return a != T(0);  case 1: return a > b;   case 2: return a >= b;
    case 3: return a < b;      case 4: return a <= b;  case 5: return a == b;
    default: return a != b;
  }
}

// A loop's condition, set before the loop (entry != 0: the count starts at 0)
// and as the last node of its body (the count goes up by one).
template <typename T, int OP>
__global__ void gt_loop(cudaGraphConditionalHandle h, const T* x, T rhs, const T* rhs_at,
                        unsigned int* trips, unsigned int max_trips, int entry) {
  unsigned int n = entry ? 0u : trips[0] + 1u;
  trips[0] = n;
  bool go = gt_test<T, OP>(x[0], rhs_at ? rhs_at[0] : rhs) && n < max_trips;
  cudaGraphSetConditional(h, go ? 1u : 0u);
}

// An if's or if-else's condition.
template <typename T, int OP>
__global__ void gt_if(cudaGraphConditionalHandle h, const T* x, T rhs, const T* rhs_at) {
  cudaGraphSetConditional(h, gt_test<T, OP>(x[0], rhs_at ? rhs_at[0] : rhs) ? 1u : 0u);
}

// A switch's case: the value itself; out of range (or negative) runs no case.
template <typename T>
__global__ void gt_switch(cudaGraphConditionalHandle h, const T* x, unsigned int n) {
  long long v = (long long)x[0];
  cudaGraphSetConditional(h, (v < 0 || v >= (long long)n) ? n : (unsigned int)v);
}
'''

_lock = threading.Lock()
_modules: dict = {}   # device id -> (ObjectCode, kernels by name)


def _names():
    for t in C_TYPES.values():
        for code, _ in OPERATORS.values():
            yield f"gt_loop<{t}, {code}>"
            yield f"gt_if<{t}, {code}>"
        yield f"gt_switch<{t}>"


def condition_kernel(kind: str, dtype, op: str | None, device):
    """The cuda.core ``Kernel`` that sets a handle for ``kind`` ("loop", "if",
    "switch") over ``dtype`` with comparison ``op``; compiled once per device."""
    with _lock:
        hit = _modules.get(device.device_id)
        if hit is None:
            from cuda.core import Program, ProgramOptions
            major, minor = device.compute_capability
            prog = Program(_SOURCE, "c++", ProgramOptions(arch=f"sm_{major}{minor}",
                                                          std="c++17"))
            hit = _modules[device.device_id] = (prog.compile("cubin", tuple(_names())), {})
    code, kernels = hit
    t = C_TYPES[np.dtype(dtype)]
    name = f"gt_switch<{t}>" if kind == "switch" else \
        f"gt_{kind}<{t}, {OPERATORS[op][0]}>"
    k = kernels.get(name)
    if k is None:
        k = kernels[name] = code.get_kernel(name)
    return k


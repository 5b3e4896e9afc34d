"""Host callbacks: ``s.host(fn, *args)`` runs a Python function inside the graph.

The graph calls ``fn(*args)`` on a driver thread once everything it depends
on is done. Array arguments must be host memory (numpy arrays); they take
part in dependency inference like any other access (read and written unless
wrapped in ``gt.In``/``gt.Out``). The callback must not call CUDA.
"""
from __future__ import annotations

import ctypes

import numpy as np

from ..buffers import Buffer, unwrap_intent
from ..errors import ArgumentError
from . import Op, register, stream_method

__all__ = ["host"]


@stream_method
def host(self, fn, *args, opaque: bool = False):
    """Record a host callback ``fn(*args)``.

    ``opaque=True`` orders it after all earlier work and before all later
    work, for a callback that touches memory it is not given.
    """
    t = self._check()
    if not callable(fn):
        raise ArgumentError(f"host() needs a callable, not {type(fn).__name__}")
    rec, accesses = [], []
    for i, a in enumerate(args):
        obj, mode = unwrap_intent(a, "rw")
        if hasattr(obj, "__cuda_array_interface__") or hasattr(obj, "__array_interface__") \
                or type(obj).__name__ == "FakeCUDAArray":
            buf = t.buffer(obj)
            if not buf.is_host:
                raise ArgumentError(
                    f"argument {i} of host callback {getattr(fn, '__name__', fn)} is device "
                    f"memory ({buf.label or 'array'}): a callback cannot touch the GPU; copy "
                    "it to pinned host memory with s.copy first and pass that")
            accesses.append((buf, mode))
            rec.append(buf)
        else:
            rec.append(obj)
    return self._record("host", fn, tuple(rec), tuple(accesses), opaque=opaque)


def _describe(node, namer):
    name = getattr(node.target, "__qualname__", None) or namer.value(node.target)
    return f"{name}({', '.join(namer.value(a) for a in node.args)})"


def host_array(b: Buffer):
    """A numpy array over host view ``b``: the traced object, or one at its new address."""
    if b.obj is not None:
        return b.obj
    raw = (ctypes.c_uint8 * (b.hi - b.lo)).from_address(b.lo)
    return np.ndarray(b.shape, b.dtype, buffer=raw, offset=b.ptr - b.lo, strides=b.strides)


def host_args(node, value_of) -> list:
    out = []
    for a in node.args:
        v = value_of(a)
        out.append(host_array(v) if isinstance(v, Buffer) else v)
    return out


def _emit(em, node, parent):
    cell = [host_args(node, em.value_of)]
    fn = node.target
    em.state[node.index] = cell
    return parent.callback(lambda: fn(*cell[0]))


def _update(cg, node, gnode):
    cg.state[node.index][0] = host_args(node, cg.value_of)  # read by the callback


def _simulate(sim, node):
    node.target(*[sim.value(a) for a in node.args])


register(Op("host", _describe, _emit, _update, _simulate))

"""The optional compiled parts: the tracing path (``_speedups.c``), configured,
the emitter (``_emitter.c``), the dependency search (``_reduce.c``) and the
taking in of new arrays (``_buffers.c``); each None where it is not built.

They are built by ``pip install`` where a C compiler is present (``setup.py``;
``tools/build_speedups.py`` builds them in a checkout) and used unless the
environment sets ``GRAPHTRACE_PURE_PYTHON=1``. Without them graphtrace records
the same graphs in pure Python (``ops/kernel.py``'s ``_again``) and adds the
same nodes through ``cuda.bindings`` (``ops/_driver_nodes.py``), only slower.
"""
from __future__ import annotations

import os

from . import arrays as _arrays
from .buffers import Buffer
from .context import STATE
from .errors import _internal, _is_internal
from .placement import ONE_DEVICE

__all__ = ["buffers", "emitter", "reducer", "speedups", "PURE"]

PURE = os.environ.get("GRAPHTRACE_PURE_PYTHON", "") not in ("", "0")


def speedups():
    """The compiled module, ready to use; None where it was not built, or when
    ``GRAPHTRACE_PURE_PYTHON`` asks for pure Python."""
    if PURE:
        return None
    try:
        from . import _speedups
    except ImportError:
        return None
    _speedups.configure(STATE, ONE_DEVICE, _internal, _is_internal)
    return _speedups


def emitter():
    """The compiled emitter (``_emitter.c``), not yet configured (ops/_driver_nodes.py
    does that once the driver is loaded); None as for ``speedups``."""
    if PURE:
        return None
    try:
        from . import _emitter
    except ImportError:
        return None
    return _emitter


def reducer():
    """The compiled search of ``reduction.reduce_pairs`` (``_reduce.c``); None as
    for ``speedups``."""
    if PURE:
        return None
    try:
        from . import _reduce
    except ImportError:
        return None
    return _reduce


def buffers():
    """New arrays taken in by a trace (``_buffers.c``), configured; None as for
    ``speedups``, and where ``Buffer`` is not a class of plain slots."""
    if PURE:
        return None
    try:
        from . import _buffers
    except ImportError:
        return None
    a = _arrays
    a.use_address_reader(_buffers.address)
    return _buffers if _buffers.configure(Buffer, a._dtypes, a._kinds) else None

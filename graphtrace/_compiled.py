"""The optional compiled tracing path (``_speedups.c``), configured, or None.

It is built by ``pip install`` where a C compiler is present (``setup.py``;
``tools/build_speedups.py`` builds it in a checkout) and used unless the
environment sets ``GRAPHTRACE_PURE_PYTHON=1``. Without it graphtrace records
the same graphs in pure Python, only slower (``ops/kernel.py``'s ``_again``).
"""
from __future__ import annotations

import os

from .context import STATE
from .errors import _internal, _is_internal
from .placement import ONE_DEVICE

__all__ = ["speedups", "PURE"]

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

"""The ops: one ``Op`` subclass per node kind (``base.py``), one module per family.

``kernel`` (launches), ``memory`` (copies and memsets), ``host`` (host
callbacks) and ``control`` (fork/join and events) each record their nodes
through the tracer's recording API and define their kinds' ``Op``; the
kernel adapters (``_numba``, ``_cupy``, ``_core``) register themselves in
``_adapter``'s table, which ``kernel`` launches from. Importing this package
loads all of them.
"""
from . import base, kernel, memory, host, control  # noqa: F401  (the op families)
from . import _numba, _cupy, _core  # noqa: F401  (kernel adapters: each registers itself)
from . import _numba_launch  # noqa: F401  (numba's kernel[grid, block, s] spelling, patched)

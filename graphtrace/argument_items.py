"""Numbers the traced code reads by constant indices off host numpy arrays that
its arguments hold (``float(cfg.lr[0])`` of ``cfg.lr = np.array([0.1])``), keyed
by value as ``self.lr[0]`` and a global's ``LR[0]`` are (``chains.host_item``): a
learning rate changed in place between calls traces anew, as eager code would
use the new value, instead of the graph replaying the first."""
from __future__ import annotations

import functools

import numpy as np

from .array_reads import _NUMBERS, array_read, host_item
from .chains import MISSING, chain, value_chains
from .named_keys import Named
from .scalar import value_key

__all__ = ["item_chains", "host_items"]


@functools.lru_cache(maxsize=256)
def item_chains(code, params: tuple) -> tuple:
    """The chains ``code`` reads off parameters ``params`` that end in a number read
    off what an argument holds by constant indices (``cfg.lr[0]``, ``cfg.w[1, 2]``,
    ``cfg.w[1][2]``, ``cfg.lr[I]`` of a name holding one) or a method of a host
    array with constant arguments (``cfg.lr.item(0)``, ``cfg.lr.sum()``), but off
    one the code writes in (``cfg.flag[0] = True``: state, as a global's)."""
    chains, changed = value_chains(code, roots=frozenset(params))
    return tuple(chain(head, steps) for head, steps in chains
                 if head in params and len(steps) > 1 and _read_off(steps[-1]) and
                 all(how in ("attr", "item", "call") and type(k) in _KEYS for how, k in steps) and
                 not any(h == head and s[:len(steps) - 1] == steps[:-1] for h, s in changed))


_KEYS = (str, int, tuple, Named)


def _read_off(step) -> bool:
    """A last step that may read a number off a host array: an item by a constant
    index or one a name gives, or a method's call (``call``)."""
    how, k = step
    return how == "call" or how == "item" and type(k) in (int, tuple, Named)


def host_items(chains, arguments, fn=None) -> tuple:
    """``(label, type, value)`` of each of ``chains`` (``item_chains``) that reads a
    number off a host numpy array of a call's ``arguments``, as the key holds it
    (a key a name gives read by the names of ``fn``)."""
    out = []
    for c in chains:
        v = arguments.get(c.head, MISSING)
        try:
            for step in c.calls(fn)[:-1]:
                v = step(v)
        except Exception:  # noqa: BLE001  (whatever the object raises: not read)
            continue
        how, key = c.steps[-1]
        if type(key) is Named:
            key = key.value(fn)
        x = array_read(v, key) if how == "call" else host_item(v, key) \
            if type(v) is np.ndarray or type(v) is np.flatiter else MISSING
        if x is not MISSING and isinstance(x, _NUMBERS):
            out.append((str(c), type(x), value_key(x.item() if isinstance(x, np.generic)
                                                   else x)))   # (np.float64(0.1) ==
            # value_key's (zero, sign) of np.float64(0.0) would be an array)
    return tuple(out)

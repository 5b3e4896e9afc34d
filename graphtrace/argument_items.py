"""Numbers the traced code reads by constant indices off host numpy arrays that
its arguments hold (``float(cfg.lr[0])`` of ``cfg.lr = np.array([0.1])``), keyed
by value as ``self.lr[0]`` and a global's ``LR[0]`` are (``chains.host_item``): a
learning rate changed in place between calls traces anew, as eager code would
use the new value, instead of the graph replaying the first."""
from __future__ import annotations

import functools

import numpy as np

from .chains import MISSING, chain, host_item, value_chains
from .scalar import value_key

__all__ = ["item_chains", "host_items"]


@functools.lru_cache(maxsize=256)
def item_chains(code, params: tuple) -> tuple:
    """The chains ``code`` reads off parameters ``params`` that end in an item read
    by a constant index off what an argument holds (``cfg.lr[0]``, ``cfg.w[1, 2]``),
    but off one the code writes in (``cfg.flag[0] = True``: state, as a global's)."""
    chains, changed = value_chains(code, roots=frozenset(params))
    return tuple(chain(head, steps) for head, steps in chains
                 if head in params and len(steps) > 1 and steps[-1][0] == "item" and
                 type(steps[-1][1]) in (int, tuple) and
                 all(how in ("attr", "item") and type(k) in (str, int, tuple)
                     for how, k in steps) and
                 not any(h == head and s[:len(steps) - 1] == steps[:-1] for h, s in changed))


def host_items(chains, arguments) -> tuple:
    """``(label, type, value)`` of each of ``chains`` (``item_chains``) that reads a
    number off a host numpy array of a call's ``arguments``, as the key holds it."""
    out = []
    for c in chains:
        v = arguments.get(c.head, MISSING)
        try:
            for step in c.calls()[:-1]:
                v = step(v)
        except Exception:  # noqa: BLE001  (whatever the object raises: not read)
            continue
        x = host_item(v, c.steps[-1][1]) if type(v) is np.ndarray else MISSING
        if x is not MISSING:
            out.append((str(c), type(x), value_key(x.item())))   # (np.float64(0.1) ==
            # value_key's (zero, sign) of np.float64(0.0) would be an array)
    return tuple(out)

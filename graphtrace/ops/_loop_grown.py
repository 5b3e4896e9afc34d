"""Slots new to an object or a dict that a while loop's body reads before it
sets them, for ``LoopState.refuse`` (``_loop_state.py``).

``getattr(st, "v", 1.0)`` (or ``d.get("k", 1.0)``, ``st.v if hasattr(st, "v")
else 1.0``) read in the body, then ``st.v = 3.0`` later in it: run eagerly the
first iteration reads the default and the next ones what the body set, where
the graph repeats the first. The slot held nothing when the body began, so it
is not among the slots the body changed (``LoopState.changed``); it is among
those it gave the objects it began with (``LoopState.grown``), and is refused
as a changed slot is where the body's code reads it before setting it and
the read reaches the work: taken by it, indexing or sizing by it, or deciding
which work runs.
"""
from __future__ import annotations

from ..arrays import is_array
from ._loop_held import handed_use
from ._loop_work import work_callable


def first_reads(state, region, work: set, recorded: dict, regions) -> list:
    """``(path, kind)`` of each slot new to an object or a dict the body began
    with (``state.grown``) that ``region``, the body's code, reads before it
    sets it, where that read reaches the body's work (``work``: the lines
    recording some; ``recorded``: the numbers its nodes took)."""
    hits = []
    for p, (new, _, _) in state.grown.items():
        read = state._carried(region, p)
        if read is not True or region.first.get(p) != "load":
            continue   # (set before it is read, or never read by its path)
        via = handed_use(state, region, p, regions)
        if region.decides_with(p, work) or via == "flow":   # st.v if hasattr(st, "v")
            hits.append((p, "flow"))
        elif via or region.indexes_with(p) or region.sizes_with(p) or \
                state._took(region, p, [new], read, recorded, regions) or \
                state._hands_on(region, p, read, regions) or \
                state._helper_returns(region, p, regions):
            kind = "array" if is_array(new) else "work" if work_callable(new) else "number"
            hits.append((p, kind))
    return hits

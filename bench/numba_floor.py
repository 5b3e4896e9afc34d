"""The floor of tracing numba views: graphtrace's share beside numba's own slicing.

``numba views new`` (trace_cost.py) makes two numba views per launch. On a GPU
numba makes each in Python in about 25 us, so its own loop is 50-60 us/op and
graphtrace's share (the trace less that loop) is a small difference of two
large, noisy times. Here each program times its own part inside the loop as
well (``perf_counter`` around it, in the trace and alone), and the programs
run side by side:

- views new: trace_cost's, fake arrays (no own part);
- beside numba slicing: the same launches on fake views, with numba's slicing
  of two views made and dropped before each (graphtrace never sees them): the
  work graphtrace does is that of views new, and the program's own part that of
  numba views new;
- beside numba slicing, kept: the same, with numba's views kept to the end of
  the loop (a list holds them, in the trace and alone), as a trace keeps the
  views it is given: what keeping them costs numba's own slicing, which the
  share of numba views new holds (its loop alone drops them);
- numba views new: the launches on those numba views.

Columns: trace and user (the loop alone, on a stream that records nothing),
best of the turns, us/op; share = trace - user; own part: the timed part in the
trace and alone; rest share = (trace - own part in it) - (user - own part in
it): graphtrace's code, with whatever numba's slicing running between launches
does to it. The floor of numba views new is the share of beside numba slicing:
graphtrace's work on views it takes at the least cost, with numba's Python
running between launches.

    python bench/numba_floor.py          (writes bench/NUMBA_FLOOR.md)
"""
from __future__ import annotations

import datetime
import gc
import os
import sys
import time

import numpy as np


HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import graphtrace as gt  # noqa: E402
import trace_cost as tc  # noqa: E402

W, P = tc.WINDOW, tc.PLACES
PROGRAMS = ("views new", "beside numba slicing", "beside numba slicing, kept", "numba views new")


def _programs():
    """name -> make(n, null) -> body(s) that leaves the seconds of its own part in
    ``own[0]``: a numpy array, whose values a trace does not put back (``f.trace``
    puts back a list's items the traced Python set, as for any setting)."""
    axpy, nx, ny = tc.numba_arrays()
    bx, by = tc.Fake(W * P + W), tc.Fake(W * P + W)
    clock, own = time.perf_counter, np.zeros(1)

    def fake(numba_slicing, kept=False):
        def make(n, null=False):
            def body(s):
                total, held = 0.0, []
                for k in range(n):
                    i = k % P * W
                    t0 = clock()
                    if kept:   # made and kept to the end, as a trace keeps its views
                        held.append((nx[i:i + W], ny[i:i + W]))
                    elif numba_slicing:
                        nx[i:i + W], ny[i:i + W]   # made and dropped
                    total += clock() - t0
                    s.launch(tc.K3, 1, 64, bx[i:i + W], 2.0, by[i:i + W])
                own[0] = total
            return body
        return make

    def numba_views(n, null=False):
        kern = tc.NullKernel() if null else axpy

        def body(s):
            total = 0.0
            for k in range(n):
                i = k % P * W
                t0 = clock()
                a, b = nx[i:i + W], ny[i:i + W]
                total += clock() - t0
                kern[1, 64, s](a, 2.0, b)
            own[0] = total
        return body

    return dict(zip(PROGRAMS, (fake(False), fake(True), fake(True, True), numba_views))), own


def _once(fn, own) -> tuple:
    gc.collect()
    t0 = time.perf_counter()
    out = fn()
    seconds = time.perf_counter() - t0
    del out
    return seconds, float(own[0])


def run(sizes=(10_000, 100_000), turns=(8, 4)) -> list:
    """Rows ``{program, ops, trace, user, share, own_in_trace, own_alone, rest_share}``
    in us/op; the best of ``turns`` (one count per size) traces and as many loops
    alone, each program's trace and loop alone taken in turn (the three programs
    one after another), so that a drift of the host's speed reaches all alike."""
    programs, own = _programs()
    rows = []
    for n, count in zip(sizes, turns):
        made = {name: (gt.graph(programs[name](n)), programs[name](n, null=True))
                for name in PROGRAMS}
        best = {}
        for _ in range(count):
            for name, (f, null) in made.items():
                for mode, fn in (("trace", f.trace), ("user", lambda: null(tc.NullStream()))):
                    got = _once(fn, own)
                    best[name, mode] = min(best.get((name, mode), got), got)
        us = 1e6 / n
        for name in PROGRAMS:
            traced, alone = best[name, "trace"], best[name, "user"]
            row = {"program": name, "ops": n, "trace": traced[0] * us, "user": alone[0] * us,
                   "own_in_trace": traced[1] * us, "own_alone": alone[1] * us}
            row["share"] = row["trace"] - row["user"]
            row["rest_share"] = (row["trace"] - row["own_in_trace"]) - \
                (row["user"] - row["own_alone"])
            rows.append(row)
            print("  ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}"
                            for k, v in row.items()), flush=True)
        del made
    return rows


def report(rows, gpu: str, versions: str) -> str:
    cols = ("trace", "user", "share", "own_in_trace", "own_alone", "rest_share")
    out = [f"# The floor of tracing numba views ({gpu}, {datetime.date.today()}; {versions})",
           "", "`python bench/numba_floor.py`; us/op, best of 8 turns each at 10,000 ops and "
           "of 4 at 100,000, the programs taken in turn (the module's docstring says what "
           "each column is).", "",
           "| program | ops | " + " | ".join(c.replace("_", " ") for c in cols) + " |",
           "| --- | ---: |" + " ---: |" * len(cols)]
    out += [f"| {r['program']} | {r['ops']} | " + " | ".join(f"{r[c]:.2f}" for c in cols) +
            " |" for r in rows]
    return "\n".join(out) + "\n"


def main() -> list:
    """Measure, write NUMBA_FLOOR.md, return the rows (``bench/run.py``'s section)."""
    from common import gpu_name, versions
    rows = run()
    vers = ", ".join(f"{k} {v}" for k, v in versions().items())
    text = report(rows, gpu_name(), vers)
    with open(os.path.join(HERE, "NUMBA_FLOOR.md"), "w") as f:
        f.write(text)
    print(text)
    return rows


if __name__ == "__main__":
    main()

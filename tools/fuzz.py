"""Differential fuzzing outside CI: many random programs, eager runs against graphs.

    python3 tools/fuzz.py [--n 10000] [--seed 0] [--backend sim|gpu] [--jobs N]
                          [--families views,indirect,globals,unset,methods]
    python3 tools/fuzz.py --case I [--seed S]     # program I of seed S, in full

The programs are those of the CI tests (tests/programs.py): program ``i``
belongs to family ``families[i % len(families)]`` and is drawn from
``random.Random(f"{seed}/{i}")``, so any failure can be run again alone
with ``--case i``. On the simulator each graph is checked with
``gt.check``, run in random topological orders and then called with
reassigned arrays; on a GPU (``--backend gpu``) it is replayed as a real
graph and called the same way, against eager numba runs. Prints counts per
family, failures by kind, and the first failures; exits 1 if any failed.
"""
from __future__ import annotations

import argparse
import collections
import multiprocessing
import os
import random
import re
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLUMNS = ("programs", "orders", "calls", "rebinds", "traces", "failed",
           "mismatch", "intent", "race", "error")


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10000, help="number of programs")
    ap.add_argument("--seed", default="0")
    ap.add_argument("--backend", choices=("sim", "gpu"), default="sim")
    ap.add_argument("--jobs", type=int, default=None,
                    help="worker processes (default: every core on sim, 1 on gpu)")
    ap.add_argument("--families", default="views,indirect,globals,unset,methods")
    ap.add_argument("--orders", type=int, default=None,
                    help="random orders (sim) or replays (gpu) of each graph's first call")
    ap.add_argument("--show", type=int, default=3, help="failures to print per family")
    ap.add_argument("--case", type=int, default=None, help="run only program CASE, verbosely")
    return ap.parse_args()


ARGS = parse()
os.environ["GRAPHTRACE_BACKEND"] = ARGS.backend   # before graphtrace is imported
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]
import programs  # noqa: E402

FAMILIES = ARGS.families.split(",")
ORDERS = programs.ORDERS if ARGS.orders is None else ARGS.orders


def case_of(i: int):
    rng = random.Random(f"{ARGS.seed}/{i}")
    return programs.gen_case(programs.Draws(rng=rng), FAMILIES[i % len(FAMILIES)],
                             gpu=ARGS.backend == "gpu")


def run_one(i: int):
    """``(i, family, counts, op kinds, failures)`` of program ``i``."""
    case = case_of(i)
    out = programs.run_case(case, ARGS.backend, ORDERS)
    counts = collections.Counter(programs=1, orders=out.orders, calls=out.calls,
                                 rebinds=out.rebinds, traces=out.traces,
                                 failed=int(bool(out.failures)))
    for what, _, _ in out.failures:
        counts[what.split()[0]] += 1
    kinds = sorted({op[0] for op in case.prog})
    return i, case.family, counts, kinds, [(w, where, _last_line(t)) for w, where, t in out.failures]


def _last_line(text: str) -> str:
    return text.strip().splitlines()[-1] if text.strip() else ""


def main():
    if ARGS.case is not None:
        case = case_of(ARGS.case)
        out = programs.run_case(case, ARGS.backend, ORDERS)
        print(programs.describe(case, out))
        print(out)
        sys.exit(1 if out.failures else 0)
    jobs = ARGS.jobs or (os.cpu_count() if ARGS.backend == "sim" else 1)
    t0 = time.perf_counter()
    totals = collections.defaultdict(collections.Counter)
    by_kind = collections.defaultdict(collections.Counter)   # (family, op kind) -> programs, failed
    by_kernel = collections.Counter()                         # intent errors by kernel
    first = collections.defaultdict(list)
    pool = multiprocessing.get_context("fork").Pool(jobs) if jobs > 1 else None
    results = pool.imap_unordered(run_one, range(ARGS.n), chunksize=16) if pool else \
        map(run_one, range(ARGS.n))
    for done, (i, family, counts, kinds, failures) in enumerate(results, 1):
        totals[family].update(counts)
        for k in kinds:
            by_kind[family, k].update(programs=1, failed=counts["failed"])
        for what, where, line in failures:
            m = re.search(r"kernel (\w+) wrote to", line)
            if what == "intent" and m:
                by_kernel[m.group(1)] += 1
        if failures and len(first[family]) < ARGS.show:
            first[family].append((i, failures[0]))
        if done % 1000 == 0:
            print(f"  {done} programs, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    if pool:
        pool.close()
        pool.join()
    report(totals, by_kind, by_kernel, first, jobs, time.perf_counter() - t0)
    sys.exit(1 if any(t["failed"] for t in totals.values()) else 0)


def report(totals, by_kind, by_kernel, first, jobs, secs):
    print(f"fuzz: {ARGS.n} programs on {ARGS.backend}, seed {ARGS.seed}, {jobs} job(s), "
          f"{secs:.0f} s")
    print(f"{'family':<10}" + "".join(f"{c:>10}" for c in COLUMNS))
    rows = [(f, totals[f]) for f in FAMILIES] + [("all", sum(totals.values(), collections.Counter()))]
    for name, t in rows:
        print(f"{name:<10}" + "".join(f"{t[c]:>10}" for c in COLUMNS))
    print("(orders: random orders a traced graph ran in on the simulator; calls: calls that "
          "ran, replays on a GPU included; rebinds: later calls with other arrays in a slot; "
          "traces: graphs traced; failed: programs with failures; mismatch, intent (a write "
          "graphtrace missed), race, error: failures)")
    if by_kernel:
        print("intent errors (a write graphtrace missed) by kernel: " +
              ", ".join(f"{k} {n}" for k, n in by_kernel.most_common()))
    kinds = sorted(k for f, k in by_kind if f == "indirect" and k in programs.INDIRECT)
    if kinds:
        print("indirect: programs by their indirect kernel, and how many failed: " +
              ", ".join(f"{k} {by_kind['indirect', k]['programs']} "
                        f"({by_kind['indirect', k]['failed']})" for k in kinds))
    for family in FAMILIES:
        for i, (what, where, line) in first[family]:
            print(f"  #{i} {family}: {what} at {where}: {line[:200]}")
    if any(first.values()):
        print(f"  (python3 tools/fuzz.py --case I --seed {ARGS.seed} --families {ARGS.families} "
              f"--backend {ARGS.backend} prints program I whole)")


if __name__ == "__main__":
    main()

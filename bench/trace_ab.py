"""Trace cost of two versions of graphtrace, side by side, in turns.

    git archive <rev> graphtrace | tar -x -C /tmp/before
    python bench/trace_ab.py /tmp/before 30000 chain "views new" ...   [ROUNDS=8]
    python bench/trace_ab.py --bytecodes /tmp/before 5000 chain ...

Each round traces every named program of ``trace_cost.py`` (``n`` ops, best of
3 traces) once with the package under the given folder ("before") and once
with this checkout's ("after"), each in a fresh process; the table keeps the
best of the rounds. Timing one version after the other read 10-30% apart on
the same machine from one run to the next; in turns, the ratios held to a
few percent. ``--bytecodes`` counts the Python bytecodes each version runs
per op instead (``trace_cost.bytecodes``), the same on any machine: for small
differences, which timings cannot tell apart. On the CPU it runs the fake and
numba-simulator programs; on a GPU also the cupy ones.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CHILD = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
import graphtrace
assert graphtrace.__file__.startswith(sys.argv[1]), graphtrace.__file__
sys.path.insert(1, sys.argv[2])
import trace_cost
if sys.argv[3].startswith("b"):   # bytecodes, of n ops
    print(json.dumps({name: trace_cost.bytecodes(name, int(sys.argv[3][1:]))[0]
                      for name in sys.argv[4:]}))
else:
    print(json.dumps({name: trace_cost.measure(name, int(sys.argv[3]), 3)["us_per_op"]
                      for name in sys.argv[4:]}))
'''


def measure(tree: str, n: int, names: list, count: bool = False) -> dict:
    """``{program: us per op}`` (``count``: Python bytecodes per op) of one fresh
    process tracing with ``tree``'s graphtrace."""
    done = subprocess.run([sys.executable, "-c", CHILD, os.path.abspath(tree), HERE,
                           f"b{n}" if count else str(n), *names], capture_output=True,
                          text=True)
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv) -> None:
    count = "--bytecodes" in argv
    argv = [a for a in argv if a != "--bytecodes"]
    if len(argv) < 3:
        raise SystemExit(__doc__)
    before, n, names = argv[0], int(argv[1]), argv[2:]
    if count:   # the same every time: one round
        b, a = measure(before, n, names, True), measure(ROOT, n, names, True)
        print(f"| program | before bytecodes/op | after bytecodes/op | after / before |   "
              f"({n} ops)")
        print("| --- | ---: | ---: | ---: |")
        for name in names:
            print(f"| {name} | {b[name]:.1f} | {a[name]:.1f} | {a[name] / b[name]:.3f} |")
        return
    rounds = int(os.environ.get("ROUNDS", "8"))
    best = {"before": {}, "after": {}}
    for _ in range(rounds):
        for label, tree in (("before", before), ("after", ROOT)):
            for name, us in measure(tree, n, names).items():
                best[label][name] = min(us, best[label].get(name, us))
    print(f"| program | before us/op | after us/op | after / before |   "
          f"(best of {rounds} rounds, {n} ops)")
    print("| --- | ---: | ---: | ---: |")
    for name in names:
        b, a = best["before"][name], best["after"][name]
        print(f"| {name} | {b:.2f} | {a:.2f} | {a / b:.3f} |")


if __name__ == "__main__":
    main(sys.argv[1:])

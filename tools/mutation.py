"""Mutation testing: how many small edits of graphtrace's core the CPU suite notices.

    pip install "mutmut>=3.8,<4"
    python3 tools/mutation.py     # deps.py, reduction.py, buffers.py, arrays.py, check.py
    python3 tools/mutation.py graphtrace/arguments.py graphtrace/ops/_intents.py

The second line mutates the cache key and the call snapshots (arguments.py) and
the numba intent analysis (ops/_intents.py) instead; any module of
graphtrace/ can be named. mutmut (configured in ``[tool.mutmut]`` of
pyproject.toml) copies the package and the tests to mutants/ (git-ignored),
rewrites every function of the named modules so that an environment variable
picks one mutant, records which tests call each function, then runs just
those tests against each mutant, hypothesis with fixed examples (the
"mutation" profile in tests/conftest.py). tests/gpu and the examples (run in
subprocesses, which cannot see the mutants) are left out.

``--tests FILE`` (repeatable) runs only those test files instead of the
suite: much faster where every test calls the mutated function, but a mutant
only other files kill is then reported as survived. The subsets used:

    buffers.py arrays.py tests/test_buffers.py test_deps_random.py test_deps.py
                         test_callpath.py test_check.py test_verify.py
    arguments.py function.py reach.py   tests/test_callpath.py tests/test_reach.py
    ops/_intents.py ops/_aliases.py ops/_kernel_source.py
                         tests/test_intents.py tests/test_intents_chains.py

Each run starts from an empty mutants/, so no verdict comes from older tests
(``--resume`` keeps them; ``--retry`` keeps them and runs again every mutant
of each function that had one not killed, the quick way to see what new
tests kill; ``--only GLOB`` runs just the mutants whose names match, the rest
stay "not checked"). It prints, per module, the mutants, how many the
tests killed (a timeout counts as killed), survived or reached no test, the
score (killed / all), the surviving mutants' names (``mutmut show NAME``
prints one's diff, from the repository root), and the run's time.
Survivors that cannot change any result are listed, with the reason, in
tools/mutation_equivalents.md.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORE = ["graphtrace/deps.py", "graphtrace/reduction.py", "graphtrace/buffers.py",
        "graphtrace/arrays.py", "graphtrace/check.py"]
KILLED = {"killed", "timeout", "caught by type check"}


def statuses(path) -> dict:
    """Mutant name -> mutmut's verdict, for one module."""
    from mutmut.mutation.data import SourceFileMutationData
    from mutmut.stats import status_by_exit_code
    data = SourceFileMutationData(path=path)
    data.load()
    return {name: status_by_exit_code[code] for name, code in data.exit_code_by_key.items()}


def report(modules) -> int:
    print(f"\n{'module':<32} {'mutants':>8} {'killed':>7} {'survived':>9} {'no tests':>9} "
          f"{'score':>7}")
    survivors, total, killed = [], 0, 0
    for path in modules:
        status = statuses(path)
        n, k = len(status), sum(s in KILLED for s in status.values())
        left = sorted(name for name, s in status.items() if s not in KILLED)
        print(f"{path:<32} {n:>8} {k:>7} {sum(s == 'survived' for s in status.values()):>9} "
              f"{sum(s == 'no tests' for s in status.values()):>9} {k / max(n, 1):>7.1%}")
        survivors += [f"{name}: {status[name]}" for name in left]
        total, killed = total + n, killed + k
    print(f"{'all':<32} {total:>8} {killed:>7} {'':>9} {'':>9} {killed / max(total, 1):>7.1%}")
    if survivors:
        print("\nnot killed:\n  " + "\n  ".join(survivors))
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("modules", nargs="*", default=CORE, help="paths under graphtrace/")
    ap.add_argument("--resume", action="store_true", help="keep the verdicts in mutants/")
    ap.add_argument("--retry", action="store_true", help="--resume, and run the survivors again")
    ap.add_argument("--only", action="append", default=[], metavar="GLOB",
                    help="just the mutants whose names match, e.g. 'graphtrace.arrays.x_is_pinned*'")
    ap.add_argument("--tests", action="append", default=[], metavar="PATH",
                    help="run only these test files (repeatable), e.g. tests/test_buffers.py: "
                         "faster, but a mutant only other tests kill then counts as survived")
    ap.add_argument("--max-children", type=int, default=os.cpu_count())
    args = ap.parse_args()
    os.chdir(ROOT)   # mutmut reads pyproject.toml and writes mutants/ here
    if not (args.resume or args.retry):
        shutil.rmtree("mutants", ignore_errors=True)
    from mutmut.configuration import config
    config().only_mutate = list(args.modules)
    if args.tests:
        config().pytest_add_cli_args_test_selection = list(args.tests)
    from mutmut.__main__ import cli

    # every mutant of each function with a survivor: a changed function's mutants are new
    again = sorted({name.rpartition("__mutmut_")[0] + "__mutmut_*" for path in args.modules
                    if args.retry for name, s in statuses(path).items() if s not in KILLED})
    again += args.only
    t0 = time.perf_counter()
    try:
        cli.main(["run", "--max-children", str(args.max_children), *again],
                 standalone_mode=False)
    except SystemExit as e:   # mutmut exits on a failing clean run
        if e.code:
            raise
    secs = time.perf_counter() - t0
    if report(args.modules) == 0:
        sys.exit("no mutants: are the modules paths under graphtrace/?")
    print(f"\none run: {secs:.0f} s with {args.max_children} workers")


if __name__ == "__main__":
    main()

"""The whole GPU check in one run: the compiled tracing path built in place,
GPU tests (with the IR checked; and as a user builds, without, in pure
Python), examples, then (optionally) compute-sanitizer runs and benchmarks.

    python tools/gpu_check.py [--sanitizer memcheck,racecheck,synccheck]
                              [--sanitizer-tests PATH ...] [--bench] [--out DIR]

Each sanitizer tool runs the GPU tests (or the ``--sanitizer-tests`` subset:
racecheck and synccheck are slow) and every example as steps of their own,
with the errors it found in the summary line; any error fails the check.
Prints one summary block last, so every check reads the same.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
# memcheck, synccheck, initcheck: "ERROR SUMMARY: 3 errors"; racecheck:
# "RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)". One per process.
_SUMMARY = re.compile(r"(?:ERROR SUMMARY: |RACECHECK SUMMARY: .*?\()(\d+) errors?")


def last_line(text: str) -> str:
    return ([ln for ln in text.strip().splitlines() if ln.strip()][-1:] or [""])[0]


def sanitizer_verdict(text: str, rc: int) -> tuple[int, str]:
    """``(exit status, summary line)`` of a run under compute-sanitizer."""
    counts = [int(n) for n in _SUMMARY.findall(text)]
    if not counts:
        return rc or 1, f"no sanitizer summary found; {last_line(text)}"
    errors, n = sum(counts), len(counts)
    return (rc or (1 if errors else 0)), \
        f"{errors} errors in {n} process{'es' * (n != 1)}; {last_line(text)}"


def run(name, cmd, out_dir, results, env=None, verdict=None):
    t0 = time.perf_counter()
    log = os.path.join(out_dir, f"{name}.log") if out_dir else None
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})})
    text = proc.stdout + proc.stderr
    if log:
        with open(log, "w") as f:
            f.write(text)
    rc, tail = verdict(text, proc.returncode) if verdict else (proc.returncode, last_line(text))
    results.append((name, rc, time.perf_counter() - t0, tail))
    print(f"==== {name}: exit {rc}\n{text[-6000:]}", flush=True)


def find_sanitizer() -> str | None:
    return shutil.which("compute-sanitizer") or next(
        (p for p in ("/usr/local/cuda/bin/compute-sanitizer",) if os.path.exists(p)), None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", action="store_true", help="also run the benchmarks")
    ap.add_argument("--sanitizer", default="",
                    help=f"comma-separated compute-sanitizer tools ({', '.join(TOOLS)}), "
                         "each run over the GPU tests and the examples")
    ap.add_argument("--sanitizer-tests", nargs="+", metavar="PATH",
                    default=["tests/gpu", "--ignore=tests/gpu/test_differential_gpu.py"],
                    help="pytest arguments run under the sanitizer (default: tests/gpu but "
                         "the random differential programs, which take too long "
                         "instrumented)")
    ap.add_argument("--sanitizer-examples", nargs="*", metavar="NAME",
                    default=["quickstart", "heat"],
                    help="examples run under the sanitizer (default: quickstart heat; "
                         "cg's thousands of iterations take too long instrumented)")
    ap.add_argument("--out", default=os.environ.get("OUT"), help="folder for logs")
    args = ap.parse_args()
    tools = [t.strip() for t in args.sanitizer.split(",") if t.strip()]
    bad = [t for t in tools if t not in TOOLS]
    if bad:
        ap.error(f"unknown sanitizer tool {bad[0]!r}: choose from {', '.join(TOOLS)}")
    sanitizer = find_sanitizer() if tools else None
    if tools and sanitizer is None:
        ap.error("compute-sanitizer is not on PATH nor in /usr/local/cuda/bin")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    py, results = sys.executable, []
    env = {"GRAPHTRACE_BACKEND": "gpu"}
    pytest = [py, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    # graphtrace runs from this checkout: its compiled tracing path (_speedups.c) is
    # built here, as pip install builds it; the step fails where it cannot be
    run("build-speedups", [py, os.path.join("tools", "build_speedups.py")], args.out, results)
    run("gpu-tests", pytest + ["-rP", "--hypothesis-show-statistics", "tests/gpu"],
        args.out, results, env)
    # The tests check every graph's IR (GRAPHTRACE_VERIFY=1, tests/conftest.py), which
    # makes every Node; a user's build adds launches from the recorded columns
    # without them (GpuContext._emit_recorded, in C where _emitter.c is built): the
    # GPU tests run that way too, compiled and in pure Python (as an install
    # without a C compiler traces and emits).
    run("gpu-tests-unverified", pytest + ["tests/gpu"], args.out, results,
        {**env, "GRAPHTRACE_VERIFY": "0"})
    run("gpu-tests-unverified-pure", pytest + ["tests/gpu"], args.out, results,
        {**env, "GRAPHTRACE_VERIFY": "0", "GRAPHTRACE_PURE_PYTHON": "1"})
    examples = sorted(f for f in os.listdir(os.path.join(ROOT, "examples")) if f.endswith(".py"))
    for ex in examples:
        run(f"example-{ex[:-3]}", [py, os.path.join("examples", ex)], args.out, results, env)
    for tool in tools:
        under = [sanitizer, "--tool", tool, "--target-processes", "all"]
        run(f"{tool}-gpu-tests", under + pytest + args.sanitizer_tests, args.out, results, env,
            sanitizer_verdict)
        for ex in (e for e in examples if e[:-3] in args.sanitizer_examples):
            run(f"{tool}-example-{ex[:-3]}", under + [py, os.path.join("examples", ex)],
                args.out, results, env, sanitizer_verdict)
    if args.bench:
        run("bench", [py, "bench/run.py"], args.out, results, env)
    print("\n==== summary")
    for name, rc, secs, tail in results:
        print(f"{'ok  ' if rc == 0 else 'FAIL'} {name:<28} {secs:7.1f}s  {tail[:100]}")
    sys.exit(max(rc for _, rc, _, _ in results))


if __name__ == "__main__":
    main()

"""The whole GPU check in one run: GPU tests, examples, then (optionally) benchmarks.

    python tools/gpu_check.py [--bench] [--out DIR]

Prints one summary block last, so every check reads the same.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(name, cmd, out_dir, results, env=None):
    t0 = time.perf_counter()
    log = os.path.join(out_dir, f"{name}.log") if out_dir else None
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})})
    text = proc.stdout + proc.stderr
    if log:
        with open(log, "w") as f:
            f.write(text)
    tail = [ln for ln in text.strip().splitlines() if ln.strip()][-1:] or [""]
    results.append((name, proc.returncode, time.perf_counter() - t0, tail[0]))
    print(f"==== {name}: exit {proc.returncode}\n{text[-6000:]}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", action="store_true", help="also run the benchmarks")
    ap.add_argument("--out", default=os.environ.get("OUT"), help="folder for logs")
    args = ap.parse_args()
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    py, results = sys.executable, []
    env = {"GRAPHTRACE_BACKEND": "gpu"}
    run("gpu-tests", [py, "-m", "pytest", "-q", "-rP", "-p", "no:cacheprovider",
                     "--hypothesis-show-statistics", "tests/gpu"],
        args.out, results, env)
    examples = sorted(f for f in os.listdir(os.path.join(ROOT, "examples")) if f.endswith(".py"))
    for ex in examples:
        run(f"example-{ex[:-3]}", [py, os.path.join("examples", ex)], args.out, results, env)
    if args.bench:
        run("bench", [py, "bench/run.py"], args.out, results, env)
    print("\n==== summary")
    for name, rc, secs, tail in results:
        print(f"{'ok  ' if rc == 0 else 'FAIL'} {name:<28} {secs:7.1f}s  {tail[:100]}")
    sys.exit(max(rc for _, rc, _, _ in results))


if __name__ == "__main__":
    main()

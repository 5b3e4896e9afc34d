"""Host cost of tracing: per recorded op, record + dependency inference.

Programs of N kernel launches, traced with ``f.trace()``:

- chain: one read-modify-write chain on one array;
- ring64: a ring of 64 arrays, each op reads one and writes the next
  (stencil / pipeline code);
- disjoint new arrays: every op on two arrays of its own (made before the trace,
  so each launch brings arrays the trace has not seen);
- views new: ``s.launch(k, 1, 64, x[i:i+64], a, y[i:i+64])``, a fresh view of
  two large arrays made by every launch (windows cycle over 1024 places);
- overlapping views new: the same with windows that overlap their neighbours
  by half (the exact interval path of the inference);
- numba views new / numba cached: ``k[1, 64, s](x[i:i+64], a, y[i:i+64])`` and
  ``k[1, 64, s](x, a, y)`` with numba device arrays (the CUDA simulator's on
  the CPU, real ones on a GPU);
- on a GPU also cupy views new / cupy chain: cupy arrays and a ``RawKernel``.

Columns: ``trace`` is the wall time of ``f.trace()`` per op (what
``results.json`` reports as ``us_per_op``); ``gc`` the young-generation
collection the trace leaves to the next allocations; ``user`` the time the
same loop takes with a stream that records nothing (the user's own slicing
and calls), so ``trace - user`` is graphtrace's share; ``nodes`` the time to
make the graph's ``Node`` objects afterwards (emission and listings do).

    python bench/trace_cost.py [N ...]     (default 10000 100000 1000000, the
                                            last for the programs in LARGEST;
                                            writes bench/TRACE_COST.md)
    python bench/trace_cost.py --quick     (10000 only)
    python bench/trace_cost.py --bytecodes [program ...]   (Python bytecodes per
                                            op, by function: independent of the
                                            machine's speed)

Runs on the CPU (fake arrays, numba's simulator) and on a GPU machine (real
arrays as well). ``bench/run.py`` adds these rows to ``results.json``.
"""
from __future__ import annotations

import contextlib
import cProfile
import datetime
import gc
import io
import os
import platform
import pstats
import resource
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import graphtrace as gt  # noqa: E402
from graphtrace import deps  # noqa: E402
from graphtrace.ops.kernel import Adapter, speedups_module  # noqa: E402
try:   # (trace_ab.py runs this file against older versions too: trace.py held it)
    from graphtrace.stream import use_speedups  # noqa: E402
except ImportError:
    from graphtrace.trace import use_speedups  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
WINDOW, PLACES = 64, 1024


class Fake:
    """A device array as a library without a GPU hands it over: its
    ``__cuda_array_interface__`` only, sliced cheaply (1-D, step 1)."""

    __slots__ = ("__cuda_array_interface__",)
    _next = 1 << 40

    def __init__(self, n=256, ptr=None):
        if ptr is None:
            ptr, Fake._next = Fake._next, Fake._next + 4 * n + 4096
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f4",
                                         "data": (ptr, False), "version": 3}

    def __getitem__(self, key):
        ptr = self.__cuda_array_interface__["data"][0]
        return Fake(key.stop - key.start, ptr + 4 * key.start)


K = Adapter(None, "k", ["x", "y"], ["r", "w"])
K3 = Adapter(None, "k3", ["x", "a", "y"], ["r", "r", "w"])


class NullStream:
    """Takes the same calls as a proxy stream and records nothing."""

    def launch(self, *args, **kwargs):
        pass


class NullKernel:
    """``kernel[grid, block, s](*args)`` that runs nothing."""

    def __getitem__(self, config):
        return NullStream().launch


def fake_programs():
    """name -> factory(n) -> body(s): fake arrays, no GPU needed."""
    x = Fake()
    ring = [Fake() for _ in range(64)]
    bx, by = Fake(WINDOW * PLACES + WINDOW), Fake(WINDOW * PLACES + WINDOW)

    def chain(n, null=False):
        def body(s):
            for _ in range(n):
                s.launch(K, 1, 32, x, x)
        return body

    def ring64(n, null=False):
        def body(s):
            for i in range(n):
                s.launch(K, 1, 32, ring[i % 64], ring[(i + 1) % 64])
        return body

    def disjoint(n, null=False):
        bufs = [(Fake(), Fake()) for _ in range(n)]

        def body(s):
            for a, b in bufs:
                s.launch(K, 1, 32, a, b)
        return body

    def views(step):
        def make(n, null=False):
            def body(s):
                for k in range(n):
                    i = k % PLACES * step
                    s.launch(K3, 1, 64, bx[i:i + WINDOW], 2.0, by[i:i + WINDOW])
            return body
        return make

    return {"chain": chain, "ring64": ring64, "disjoint new arrays": disjoint,
            "views new": views(WINDOW), "overlapping views new": views(WINDOW // 2)}


def numba_arrays():
    """``(axpy, x, y)``: the numba kernel and the two device arrays the numba
    programs make their views of (``bench/numba_floor.py`` too)."""
    from numba import cuda

    @cuda.jit
    def axpy(x, a, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] += a * x[i]

    return (axpy, cuda.device_array(WINDOW * PLACES + WINDOW, np.float32),
            cuda.device_array(WINDOW * PLACES + WINDOW, np.float32))


def numba_programs():
    axpy, nx, ny = numba_arrays()

    def views(n, null=False):
        kern = NullKernel() if null else axpy

        def body(s):
            for k in range(n):
                i = k % PLACES * WINDOW
                kern[1, 64, s](nx[i:i + WINDOW], 2.0, ny[i:i + WINDOW])
        return body

    def cached(n, null=False):
        kern = NullKernel() if null else axpy

        def body(s):
            for _ in range(n):
                kern[1, 64, s](nx, 2.0, ny)
        return body

    return {"numba views new": views, "numba cached": cached}


def cupy_programs():
    """Real cupy arrays and a RawKernel, where a GPU is present."""
    from graphtrace import _driver
    if not _driver.available():
        return {}
    import cupy as cp
    k = cp.RawKernel(r'''extern "C" __global__ void axpy(const float* x, float a, float* y,
        int n) { int i = threadIdx.x; if (i < n) y[i] += a * x[i]; }''', "axpy")
    cx = cp.zeros(WINDOW * PLACES + WINDOW, cp.float32)
    cy = cp.zeros(WINDOW * PLACES + WINDOW, cp.float32)
    a, m = np.float32(2.0), np.int32(WINDOW)

    def views(n, null=False):
        def body(s):
            for j in range(n):
                i = j % PLACES * WINDOW
                s.launch(k, 1, 64, cx[i:i + WINDOW], a, cy[i:i + WINDOW], m)
        return body

    def chain(n, null=False):
        def body(s):
            for _ in range(n):
                s.launch(k, 1, 64, cx, a, cy, m)
        return body

    return {"cupy views new": views, "cupy chain": chain}


def programs():
    out = fake_programs()
    out.update(numba_programs())
    out.update(cupy_programs())
    return out


def _best(fn, reps) -> tuple:
    """Best of ``reps``: (seconds of ``fn()``, seconds of the young-generation
    collection it leaves behind, which the next allocations would run, bytes of
    memory it touched first: the pages the kernel faulted in and cleared)."""
    best = (float("inf"), 0.0, 0)
    for _ in range(reps):
        gc.collect()
        faults = _faults()
        t0 = time.perf_counter()
        out = fn()
        t1 = time.perf_counter()
        fresh = (_faults() - faults) * PAGE
        gc.collect(1)
        best = min(best, (t1 - t0, time.perf_counter() - t1, fresh))
        del out
    return best


PAGE = resource.getpagesize()


def _faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def fresh_memory(mb=256, reps=3) -> float:
    """Seconds per byte of memory touched the first time: the kernel's page fault
    and clearing, which a trace pays where it grows the heap. Python's allocator
    maps its arenas 1 MiB at a time; so does this, touching each page once."""
    import mmap
    best = float("inf")
    for _ in range(reps):
        maps = [mmap.mmap(-1, 1 << 20) for _ in range(mb)]
        t0 = time.perf_counter()
        for m in maps:
            np.frombuffer(m, np.uint8)[::PAGE] = 1
        best = min(best, time.perf_counter() - t0)
        for m in maps:
            m.close()
    return best / (mb << 20)


@contextlib.contextmanager
def pure_python():
    """Every compiled part of tracing off (the launch path, the dependency search,
    the taking in of new arrays), as an install without a C compiler traces."""
    # (an older graphtrace, as trace_ab.py runs, has fewer switches)
    switches = [use_speedups] + [getattr(deps, name) for name in
                                 ("use_compiled_search", "use_compiled_buffers")
                                 if hasattr(deps, name)]
    was = [switch(False) for switch in switches]
    try:
        yield
    finally:
        for switch, on in zip(switches, was):
            switch(on)


def measure(name, n, reps):
    make = programs()[name]
    f, null = gt.graph(make(n)), make(n, null=True)
    # the trace and the program's own loop in turns, the best of each: the share,
    # their difference, is not skewed by a slow spell of the host falling on one
    best_trace, t_user = (float("inf"), 0.0, 0), float("inf")
    for _ in range(reps):
        best_trace = min(best_trace, _best(f.trace, 1))
        t_user = min(t_user, _best(lambda: null(NullStream()), 1)[0])
    t_trace, t_gc, fresh = best_trace
    t_pure = None
    if speedups_module is not None:   # the same trace in pure Python, as without a compiler
        with pure_python():
            t_pure = _best(f.trace, reps)[0]
    g = f.trace()
    gc.collect()
    t0 = time.perf_counter()
    edges = sum(len(node.deps) for node in g.nodes)
    t_nodes = time.perf_counter() - t0
    del g
    gc.collect()
    return {"program": name, "ops": n, "us_per_op": t_trace / n * 1e6,
            "pure_us_per_op": None if t_pure is None else t_pure / n * 1e6,
            "gc_us_per_op": t_gc / n * 1e6, "user_us_per_op": t_user / n * 1e6,
            "fresh_bytes_per_op": fresh / n,
            "nodes_us_per_op": t_nodes / n * 1e6, "edges": edges}


def new_array_floor(n=200_000, reps=3) -> dict:
    """What a trace does per new array at the least, in this run: a launch
    recorded (the chain program, arrays reused) and its arrays taken in alone
    (``Tracer.add_arguments`` naming them, ``Regions.update`` placing their
    bytes: a Buffer, a slot, a cache entry and a region each, compiled where
    built). The disjoint program cannot trace faster than the first plus twice
    the second; and the cost of memory touched the first time (``fresh_memory``):
    ``{us_per_array, pure_us_per_array, chain_us_per_op, fresh_ns_per_byte}``."""
    from graphtrace.context import gc_paused
    from graphtrace.trace import Tracer
    arrays = [(f"a[{i}]", Fake()) for i in range(n)]

    def take():   # the collector paused, as in a trace
        with gc_paused():
            t = Tracer("floor", [], "data")
            t.add_arguments(arrays)
            t._regions.update()
        return t
    take()   # the dtype and the array type become known
    chain = gt.graph(fake_programs()["chain"](n // 2))
    out = {"us_per_array": _best(take, reps)[0] / n * 1e6,
           "chain_us_per_op": _best(chain.trace, reps)[0] / (n // 2) * 1e6}
    with pure_python():
        out["pure_us_per_array"] = _best(take, reps)[0] / n * 1e6
    out["fresh_ns_per_byte"] = fresh_memory() * 1e9
    print(f"floor: a new array taken in {out['us_per_array']:.2f} us (pure Python "
          f"{out['pure_us_per_array']:.2f}); a launch recorded {out['chain_us_per_op']:.2f} "
          f"us; memory touched first {out['fresh_ns_per_byte']:.2f} ns/B", flush=True)
    return out


# Traced at 1,000,000 ops too; the others (slow on purpose or heavy in memory) up to 100,000.
LARGEST = {"chain", "ring64", "disjoint new arrays", "views new", "numba cached", "cupy chain",
           "cupy views new"}


def run(sizes=(10_000, 100_000, 1_000_000), names=None, on_row=None) -> list:
    """Rows ``{program, ops, us_per_op, gc_us_per_op, user_us_per_op,
    nodes_us_per_op, edges}``; "new" in a program's name: new views every launch.
    ``on_row(rows)`` after each row (a run cut short keeps what it measured)."""
    rows = []
    for name in names or programs():
        for n in sizes:
            if n > 100_000 and name not in LARGEST:
                continue
            # best of 2 at a million ops (the first trace of a program pays its
            # one-time costs), of 5 at 10,000 (where the program's own loop is
            # most of the time, the share is a small difference of two bests)
            row = measure(name, n, 2 if n >= 1_000_000 else 5 if n <= 10_000 else 3)
            rows.append(row)
            if on_row is not None:
                on_row(list(rows))
            pure = row["pure_us_per_op"]
            print(f"{name:<24} {n:>8}  trace {row['us_per_op']:7.2f}  pure Python "
                  f"{'-' if pure is None else f'{pure:7.2f}'}  gc "
                  f"{row['gc_us_per_op']:6.2f}  user "
                  f"{row['user_us_per_op']:6.2f}  nodes {row['nodes_us_per_op']:6.2f} us/op  "
                  f"{row['edges']} edges", flush=True)
    return rows


def profile(name, n=20_000, top=14) -> str:
    """cProfile's top entries (own time) of one trace; cProfile inflates calls."""
    f = gt.graph(programs()[name](n))
    f.trace()
    prof = cProfile.Profile()
    prof.enable()
    f.trace()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
    lines = [ln for ln in out.getvalue().splitlines() if ln.strip()]
    start = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("ncalls"))
    head = [ln.strip() for ln in lines[:start] if "function calls" in ln]
    return "\n".join(head + lines[start:]).replace(ROOT + os.sep, "")


def bytecodes(name, n=5_000) -> tuple:
    """``(Python bytecodes per op, {(file, function): per op})`` of one trace after a
    first one: a count that does not depend on the machine's speed or load, for
    comparing versions where timings are noisy (``trace_ab.py --bytecodes``)."""
    f = gt.graph(programs()[name](n))
    f.trace()
    counts: dict = {}

    def tracer(frame, event, arg):
        frame.f_trace_opcodes = True
        if event == "opcode":
            where = (os.path.basename(frame.f_code.co_filename), frame.f_code.co_name)
            counts[where] = counts.get(where, 0) + 1
        return tracer
    sys.settrace(tracer)
    try:
        f.trace()
    finally:
        sys.settrace(None)
    return sum(counts.values()) / n, {k: v / n for k, v in counts.items()}


def floor_text(floor, rows=()) -> str:
    least = floor["chain_us_per_op"] + 2 * floor["us_per_array"]
    text = (f"Least for disjoint new arrays, with a Buffer per array (`new_array_floor`, "
            f"this run): a launch recorded {floor['chain_us_per_op']:.2f} + 2 arrays taken "
            f"in x {floor['us_per_array']:.2f} = {least:.2f} us/op (pure Python: "
            f"{floor['pure_us_per_array']:.2f} per array).")
    fresh = fresh_share(floor, rows)
    if fresh:
        text += (f" Memory touched the first time costs {floor['fresh_ns_per_byte']:.2f} ns "
                 f"per byte here (page faults and clearing, `fresh_memory`); the "
                 f"{fresh['ops']}-op disjoint trace touched {fresh['bytes']:.0f} new bytes "
                 f"per op: {fresh['us']:.2f} of its {fresh['of']:.2f} us/op.")
    return text


def fresh_share(floor, rows) -> dict | None:
    """The share of fresh memory in the largest disjoint trace: ``{ops, bytes, us, of}``."""
    rows = [r for r in rows if r["program"] == "disjoint new arrays" and
            r.get("fresh_bytes_per_op") is not None]
    if not rows or not floor or "fresh_ns_per_byte" not in floor:
        return None
    r = max(rows, key=lambda r: r["ops"])
    return {"ops": r["ops"], "bytes": r["fresh_bytes_per_op"], "of": r["us_per_op"],
            "us": r["fresh_bytes_per_op"] * floor["fresh_ns_per_byte"] / 1000}


def report(rows, profiles, floor=None) -> str:
    out = [f"# Trace cost ({datetime.date.today()}, Python {platform.python_version()}, "
           f"{platform.machine()}, {os.cpu_count()} cores, numpy {np.__version__})", "",
           "`python bench/trace_cost.py`. trace: wall time of `f.trace()` per op (best of "
           "3, in turns with the program's own loop; one run at 1,000,000 ops); gc: the young-generation collection it leaves "
           "to the next allocations (`gc.collect(1)` right after); user: the same loop on "
           "a stream that records nothing (the program's own slicing and calls); nodes: "
           "making the graph's `Node` objects afterwards (listing, emission); pure Python: "
           "the same trace with every compiled part of tracing off (`_speedups.c`, "
           "`_reduce.c`, `_buffers.c`), as an "
           f"install without a C compiler runs ({_path()}).", "",
           "| program | ops | trace us/op | pure Python us/op | gc us/op | user us/op "
           "| trace - user | nodes us/op | edges |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    out += [f"| {r['program']} | {r['ops']} | {r['us_per_op']:.2f} | {_pure(r)} "
            f"| {r['gc_us_per_op']:.2f} "
            f"| {r['user_us_per_op']:.2f} | {r['us_per_op'] - r['user_us_per_op']:.2f} "
            f"| {r['nodes_us_per_op']:.2f} | {r['edges']} |" for r in rows]
    if floor:
        out += ["", floor_text(floor, rows)]
    out += ["", "## Where the time goes (cProfile, 20,000 ops, top entries by own time)", "",
            "cProfile adds a fixed cost to every Python call, so the shares of small "
            "functions read high."]
    for name, text in profiles:
        out += ["", f"### {name}", "", "```", text, "```"]
    return "\n".join(out) + "\n"


def _pure(row) -> str:
    pure = row.get("pure_us_per_op")
    return "-" if pure is None else f"{pure:.2f}"


def _path() -> str:
    return ("trace: compiled path on" if speedups_module is not None else
            "the compiled path was not built: trace is pure Python")


def write_report(rows, floor=None) -> str:
    """TRACE_COST.md: the rows, the floor, and where the time goes in the main programs."""
    names = [p for p in ("chain", "ring64", "disjoint new arrays", "views new",
                         "numba views new", "cupy views new") if p in programs()]
    text = report(rows, [(name, profile(name)) for name in names], floor)
    with open(os.path.join(HERE, "TRACE_COST.md"), "w") as f:
        f.write(text)
    return text


def main(argv):
    if "--bytecodes" in argv:
        for name in [a for a in argv if not a.startswith("--")] or programs():
            total, by = bytecodes(name)
            print(f"{name}: {total:.1f} bytecodes/op; "
                  + ", ".join(f"{fn} ({file}) {v:.1f}" for (file, fn), v in
                              sorted(by.items(), key=lambda kv: -kv[1])[:6] if v >= 1))
        return
    quick = "--quick" in argv
    sizes = [int(a) for a in argv if a.isdigit()] or \
        ([10_000] if quick else [10_000, 100_000, 1_000_000])
    print(write_report(run(sizes), new_array_floor()))


if __name__ == "__main__":
    main(sys.argv[1:])

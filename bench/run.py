"""The benchmark entry point: runs every workload on the GPU in one run.

Writes bench/RESULTS.md (tables with the GPU, versions and date),
bench/results.json and bench/chain.png.

    python bench/run.py [--quick]
    python bench/run.py --sections chain,callpath,wide   (those again, the rest kept)
    python bench/run.py --render     (RESULTS.md again from results.json)
"""
from __future__ import annotations

import datetime
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import build_phases  # noqa: E402
import callpath  # noqa: E402
import chain  # noqa: E402
import numba_floor  # noqa: E402
import temporaries  # noqa: E402
import trace_cost  # noqa: E402
import wide  # noqa: E402
import workloads  # noqa: E402
from common import gpu_name, versions  # noqa: E402


def table(rows, cols):
    head = "| " + " | ".join(c for c, _ in cols) + " |"
    sep = "| " + " | ".join("---" for _ in cols) + " |"
    body = ["| " + " | ".join(fmt(r) for _, fmt in cols) + " |" for r in rows]
    return "\n".join([head, sep] + body)


def chain_section(rows):
    sizes = sorted({r["n"] for r in rows})
    names = list(dict.fromkeys(r["variant"] for r in rows))
    per = {(r["variant"], r["n"]): r["us_per_node"] for r in rows}
    lines = ["| variant | " + " | ".join(f"N={n} us/node" for n in sizes) +
             " | vs hand-built (N=max) |", "| --- |" + " ---: |" * (len(sizes) + 1)]
    top = sizes[-1]
    for name in names:
        ratio = per[(name, top)] / per[("cuda.core hand-built", top)]
        lines.append(f"| {name} | " + " | ".join(f"{per[(name, n)]:.3f}" for n in sizes) +
                     f" | {ratio:.3f}x |")
    return "\n".join(lines)


def wide_section(rows):
    ws = sorted({r["w"] for r in rows})
    us = {(r["variant"], r["w"]): r["us"] for r in rows}
    lines = ["| W chains | serial capture us | hand-forked capture us | graphtrace (data) us "
             "| graphtrace / hand-forked | same DAG recorded chain by chain us "
             "| bare launch of graphtrace's graph us | cuda.core hand-built chains us |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for w in ws:
        a, b, c = us[("serial capture", w)], us[("hand-forked capture", w)], \
            us[("graphtrace (data)", w)]
        d = us[("graphtrace, chain-major code", w)]
        e, f = us[("graphtrace (bare launch)", w)], us[("cuda.core hand-built", w)]
        lines.append(f"| {w} | {a:.1f} | {b:.1f} | {c:.1f} | {c / b:.3f} | {d:.1f} | {e:.1f} "
                     f"| {f:.1f} |")
    return "\n".join(lines)


def workload_section(rows):
    lines = ["| workload | variant | wall us | speedup vs first |", "| --- | --- | ---: | ---: |"]
    base = {}
    for r in rows:
        base.setdefault(r["workload"], r["us"])
        lines.append(f"| {r['workload']} | {r['variant']} | {r['us']:.1f} | "
                     f"{base[r['workload']] / r['us']:.2f}x |")
    return "\n".join(lines)


_MET = {True: "yes", "floor": "no; its floor is over too"}


def trace_targets(trace_rows, least=None, numba_rows=None) -> list:
    """The tracing targets, at every size traced, on graphtrace's share of a trace
    (the trace less the program's own loop, ``user``: numba's slicing alone costs
    about 50 us a launch): the slowest program with arrays reused (at most 2 us/op)
    and with new views (or arrays) every launch (at most 4 us/op). ``numba_rows``:
    ``numba_floor.run``'s, where measured: the floor of numba views new."""
    def share(r):
        return r["us_per_op"] - r["user_us_per_op"]

    items = []
    for new, limit, what in ((False, 2.0, "arrays reused"), (True, 4.0, "new views or arrays")):
        rows = [r for r in trace_rows if ("new" in r["program"]) == new]
        if not rows:
            continue
        worst = max(rows, key=share)
        pure = worst.get("pure_us_per_op")
        over = [f"{r['program']} at {r['ops']} {share(r):.2f}" for r in rows
                if share(r) > limit and r is not worst]
        floor = ""
        if new and least and worst["program"] == "disjoint new arrays":
            floor = ("; least with a Buffer per array: "
                     f"{least['chain_us_per_op'] + 2 * least['us_per_array']:.2f}")
            fresh = trace_cost.fresh_share(least, [worst])
            if fresh:
                floor += (f"; of its time, memory touched the first time "
                          f"({fresh['bytes']:.0f} B/op): {fresh['us']:.2f}")
        met = share(worst) <= limit
        if new and not met and numba_rows:
            floor, met = numba_floor_reading(rows, share, limit, numba_rows)
        items.append((f"trace at most {limit:g} us/op, {what} (less the program's own loop)",
                      f"{share(worst):.2f} ({worst['program']}, {worst['ops']} ops: traced in "
                      f"{worst['us_per_op']:.2f}, of which its own loop "
                      f"{worst['user_us_per_op']:.2f})" + (
                          "" if pure is None else f"; in pure Python {pure:.2f}") + floor +
                      ("; also over: " + ", ".join(over) if over else ""), met))
    return items


def numba_floor_reading(rows, share, limit, numba_rows) -> tuple:
    """``(text, met)`` where only numba views new is over the limit: "floor" if at
    every size it is over, its floor (numba_floor's program beside numba slicing:
    the work of views new on fake views, with numba's slicing between launches) is
    over too, in numba_floor's run; else False. Each side's trace time is given: the
    shares differ by the loops alone (``user``), two times of 50-60 us/op that move
    by several us/op from run to run."""
    over = {r["ops"] for r in rows if share(r) > limit and r["program"] == "numba views new"}
    if not over or any(share(r) > limit and r["program"] != "numba views new" for r in rows):
        return "", False
    by = {(r["program"], r["ops"]): r for r in numba_rows}
    parts, at_floor = [], True
    for n in sorted(over):
        floor, numba = by.get(("beside numba slicing", n)), by.get(("numba views new", n))
        if floor is None or numba is None:
            return "", False
        at_floor = at_floor and floor["share"] > limit
        parts.append(f"{n} ops: numba views new {numba['share']:.2f} (rest "
                     f"{numba['rest_share']:.2f}; traced in {numba['trace']:.2f}), its floor "
                     f"{floor['share']:.2f} (rest {floor['rest_share']:.2f}; traced in "
                     f"{floor['trace']:.2f})")
    return ("; its floor, the work of views new with numba's slicing between launches, in "
            "this run (results.json's numba_floor; bench/numba_floor.py alone writes "
            "bench/NUMBA_FLOOR.md): " + "; ".join(parts)), \
        "floor" if at_floor else False


def targets(chain_rows, call_rows, wide_rows, trace_rows=(), phases=None, trace_floor=None,
            numba_rows=None):
    per = {(r["variant"], r["n"]): r["us_per_node"] for r in chain_rows}
    top = max(r["n"] for r in chain_rows)
    replay = per[("graphtrace", top)] / per[("cuda.core hand-built", top)]
    call = {r["what"]: r for r in call_rows}
    us = {(r["variant"], r["w"]): r["us"] for r in wide_rows}
    w = max(r["w"] for r in wide_rows)
    wide_ratio = us[("graphtrace (data)", w)] / us[("hand-forked capture", w)]
    build = call["build: graphtrace trace+emit+instantiate"]["us_per_node"]
    capture = call["build: cupy capture+instantiate"]["us_per_node"]
    overhead = call["cached call, same arguments"]["us"] - call["bare Graph.launch, 1000 nodes"]["us"]
    rebind = call["call rebinding the array (all 1000 nodes)"]["us_per_node"]
    floor = call.get("floor, each update followed by a launch") or \
        call.get("floor: definition sets of prebuilt params + whole update")
    bare_ratio = us[("graphtrace (bare launch)", w)] / us[("hand-forked capture", w)]
    items = [
        ("replay within 2% of the hand-built graph", f"{replay:.3f}x at N={top}", replay <= 1.02),
        ("wide DAG within 2% of hand-forked capture",
         f"{wide_ratio:.3f}x at W={w} through the call; the graph's bare launch "
         f"{bare_ratio:.3f}x", wide_ratio <= 1.02),
        ("build cost per node at most cupy capture+instantiate",
         f"{build:.1f} vs {capture:.1f} us/node" + (
             "" if not phases else "; least with this trace (trace + driver add + "
             f"instantiation): {build_phases.least(phases):.1f}"), build <= capture),
        ("cached call at most bare launch + 5 us", f"+{overhead:.2f} us", overhead <= 5),
        ("rebinding at most 1 us per updated node", f"{rebind:.2f} us/node" + (
            f"; the driver's own floor in this run, a launch in flight as in the call: "
            f"{floor['us_per_node']:.2f}" if floor
            else ""), rebind <= 1),
        *trace_targets(trace_rows, trace_floor, numba_rows),
    ]
    lines = ["| target | measured | met |", "| --- | --- | --- |"]
    lines += [f"| {t} | {m} | {_MET.get(ok, 'no')} |" for t, m, ok in items]
    return "\n".join(lines)


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name in dict.fromkeys(r["variant"] for r in rows):
        pts = sorted((r["n"], r["us_per_node"]) for r in rows if r["variant"] == name)
        ax.plot(*zip(*pts), marker="o", label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("kernels in the chain")
    ax.set_ylabel("us per kernel (wall, CUDA events)")
    ax.set_title("Chain of dependent tiny kernels")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


SECTIONS = ("chain", "callpath", "wide", "workloads", "temporaries", "trace", "trace_floor",
            "numba_floor", "build_phases_us_per_node", "build_small")


def measure(quick: bool, sections=SECTIONS, into: dict | None = None, save=None) -> dict:
    """Every workload, side by side in this run: what results.json holds. With
    ``sections``, only those, into ``into`` (the other sections as they were);
    ``save(results)`` after each one, so that a run cut short keeps what it did."""
    res = dict(into or {})

    def keep_rows(rows):   # a trace section cut short keeps the rows it measured
        res["trace"] = rows
        if save is not None:
            save(res)
    runs = {
        "chain": lambda: chain.run((10, 100, 1000) if quick else (10, 100, 1000, 10000)),
        "callpath": callpath.run,
        "wide": wide.run,
        "workloads": workloads.run,
        "temporaries": lambda: temporaries.run(sizes_mb=(1,) if quick else (1, 16)),
        "trace": lambda: trace_cost.run((10_000,) if quick else (10_000, 100_000, 1_000_000),
                                        on_row=keep_rows),
        "trace_floor": trace_cost.new_array_floor,
        "numba_floor": numba_floor.main,
        "build_phases_us_per_node": build_phases.run,
        "build_small": build_phases.small,
    }
    res.update({"gpu": gpu_name(), "versions": versions(),
                "date": datetime.date.today().isoformat()})
    for name in sections:
        res[name] = runs[name]()
        tracing = [n for n in sections if n in ("trace", "trace_floor")]
        if tracing and name == tracing[-1] and res.get("trace"):   # both, once measured
            trace_cost.write_report(res["trace"], res.get("trace_floor"))
        if save is not None:
            save(res)
    return res


def small_section(rows) -> list:
    """The builds of short chains (``build_phases.small``), where measured."""
    if not rows:
        return []
    return ["## Builds of short chains (host us, medians of 15, timed in turn)", "",
            "`bench/build_phases.py`: the whole build (trace, emission, instantiation) "
            "against cupy stream capture of the same launches and instantiation, in the "
            "same run; trace: `f.trace()` alone.", "",
            table(rows, [("nodes", lambda r: str(r["n"])),
                         ("graphtrace build us", lambda r: f"{r['graphtrace us']:.1f}"),
                         ("trace us", lambda r: f"{r['trace us']:.1f}"),
                         ("cupy capture + instantiate us", lambda r: f"{r['capture us']:.1f}"),
                         ("build / capture",
                          lambda r: f"{r['graphtrace us'] / r['capture us']:.2f}x")]), ""]


def render(res: dict) -> str:
    """RESULTS.md from what ``measure`` returned."""
    chain_rows, call_rows, wide_rows = res["chain"], res["callpath"], res["wide"]
    work_rows, temp_rows, trace_rows = res["workloads"], res["temporaries"], res["trace"]
    phases = res["build_phases_us_per_node"]
    vers = ", ".join(f"{k} {v}" for k, v in res["versions"].items())
    md = ["# Benchmarks", "", f"{res['gpu']}, {res['date']}; {vers}.", "",
          "Medians; each table's variants were measured side by side in one run "
          "(`python bench/run.py` on the GPU machine).", "",
          "## Targets", "", targets(chain_rows, call_rows, wide_rows, trace_rows, phases,
                                    res.get("trace_floor"), res.get("numba_floor")), "",
          "## Chain of N dependent tiny kernels (1 block of 32 threads each)", "",
          chain_section(chain_rows), "",
          "## Build cost and call path (1000-node chain)", "",
          table(call_rows, [("what", lambda r: r["what"]),
                            ("host us", lambda r: f"{r['us']:.2f}"),
                            ("us per node", lambda r: "" if r["us_per_node"] is None
                             else f"{r['us_per_node']:.3f}"),
                            ("note", lambda r: r["note"])]), "",
          f"## W independent chains of {wide.L} one-block kernels, written sequentially", "",
          wide_section(wide_rows), "",
          "## Real workloads", "", workload_section(work_rows), "",
          "## Temporaries: packed block vs unshared block vs alloc/free nodes", "",
          f"A chain of {temp_rows[0]['k']} kernels, each reading the previous temporary "
          "and writing its own (`python bench/temporaries.py` says more). graphtrace "
          "packs temporaries whose uses the graph orders into shared bytes of one block. "
          "Taken: device "
          "memory the built and launched graph took (cuMemGetInfo); graph pool: the graph "
          "allocator's reserve; after trim: still taken after cuDeviceGraphMemTrim.", "",
          table(temp_rows, [("MB per temporary", lambda r: str(r["mb"])),
                            ("temporaries MB", lambda r: str(r["k"] * r["mb"])),
                            ("variant", lambda r: r["variant"]),
                            ("replay us", lambda r: f"{r['replay_us']:.1f}"),
                            ("us per kernel", lambda r: f"{r['us_per_kernel']:.2f}"),
                            ("taken MB", lambda r: f"{r['taken_mb']:.1f}"),
                            ("graph pool MB", lambda r: f"{r['reserved_mb']:.1f}"),
                            ("after trim MB", lambda r: f"{r['after_trim_mb']:.1f}"),
                            ("launch after trim us",
                             lambda r: f"{r['after_trim_launch_us']:.1f}")]), "",
          "## Tracing cost (host, `f.trace()` per recorded op)", "",
          "Record and dependency inference; \"new\": new views (or arrays) every launch; "
          "pure Python: the same trace with every compiled part of tracing off "
          "(`_speedups.c`, `_reduce.c`, `_buffers.c`), as an install without a C compiler "
          "runs; user: the "
          "program's own loop and slicing alone (bench/TRACE_COST.md has more).", "",
          table(trace_rows, [("program", lambda r: r["program"]),
                             ("ops", lambda r: str(r["ops"])),
                             ("us per op", lambda r: f"{r['us_per_op']:.2f}"),
                             ("pure Python us per op", trace_cost._pure),
                             ("user us per op", lambda r: f"{r['user_us_per_op']:.2f}"),
                             ("Node objects us per op",
                              lambda r: f"{r['nodes_us_per_op']:.2f}")]), "",
          *([trace_cost.floor_text(res["trace_floor"], trace_rows), ""]
            if res.get("trace_floor") else []),
          "## Where a build's time goes (1000-node chain, best of 5, us per node)", "",
          "`bench/build_phases.py`. Node objects: making the graph's Nodes afterwards (a "
          "build adds launches from the recorded columns, and makes them at the first "
          "rebind or listing). "
          "The floors, in the same run: stream capture recording the same chain (no "
          "instantiation), and `cuGraphAddKernelNode` adding it with one prebuilt "
          "parameter struct.", "",
          table([phases], [(k, lambda r, k=k: f"{r[k]:.2f}") for k in phases]), "",
          build_phases.floor_text(phases), "", *small_section(res.get("build_small")),
          "`bench/STUDIES.md` has the studies behind these figures (why explicit graphs "
          "instantiate through the driver, rebinding by rewriting address words, the "
          "temporaries' layout).", ""]
    return "\n".join(md)


def main():
    """``python bench/run.py [--quick]`` measures and writes everything;
    ``--sections trace,wide`` measures those sections only, keeping the others of
    results.json (a full run can take longer than one sitting on the GPU machine
    allows; each table is still one run's); ``--render`` writes RESULTS.md again
    from results.json (after a change to how the tables read)."""
    path = os.path.join(HERE, "results.json")

    def save(res):
        with open(path, "w") as f:
            json.dump(res, f, indent=1)

    if "--render" in sys.argv:
        with open(path) as f:
            res = json.load(f)
    else:
        sections, old = SECTIONS, None
        if "--sections" in sys.argv:
            sections = sys.argv[sys.argv.index("--sections") + 1].split(",")
            unknown = set(sections) - set(SECTIONS)
            if unknown:
                sys.exit(f"unknown sections {sorted(unknown)}; known: {', '.join(SECTIONS)}")
            with open(path) as f:
                old = json.load(f)
        res = measure("--quick" in sys.argv, sections, old, save)
        if "chain" in sections:
            plot(res["chain"], os.path.join(HERE, "chain.png"))
    text = render(res)
    with open(os.path.join(HERE, "RESULTS.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()

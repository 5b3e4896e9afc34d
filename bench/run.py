"""The benchmark entry point: runs every workload on the GPU in one run.

Writes bench/RESULTS.md (tables with the GPU, versions and date),
bench/results.json and bench/chain.png.

    python bench/run.py [--quick]
"""
from __future__ import annotations

import datetime
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import callpath  # noqa: E402
import chain  # noqa: E402
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


def main():
    quick = "--quick" in sys.argv
    chain_rows = chain.run((10, 100, 1000) if quick else (10, 100, 1000, 10000))
    call_rows = callpath.run()
    info = {"gpu": gpu_name(), "versions": versions(),
            "date": datetime.date.today().isoformat()}
    with open(os.path.join(HERE, "results.json"), "w") as f:
        json.dump({**info, "chain": chain_rows, "callpath": call_rows}, f, indent=1)
    plot(chain_rows, os.path.join(HERE, "chain.png"))
    vers = ", ".join(f"{k} {v}" for k, v in info["versions"].items())
    md = [f"# Benchmarks", "", f"{info['gpu']}, {info['date']}; {vers}.", "",
          "Medians; each table's variants were measured side by side in one run.", "",
          "## Chain of N dependent tiny kernels (1 block of 32 threads each)", "",
          chain_section(chain_rows), "",
          "## Build cost and call path (1000-node chain)", "",
          table(call_rows, [("what", lambda r: r["what"]),
                            ("host us", lambda r: f"{r['us']:.2f}"),
                            ("us per node", lambda r: "" if r["us_per_node"] is None
                             else f"{r['us_per_node']:.3f}"),
                            ("note", lambda r: r["note"])]), ""]
    with open(os.path.join(HERE, "RESULTS.md"), "w") as f:
        f.write("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Latency-vs-size plots of fabcoll-bench --json results (log-log, one line per series).

    scripts/plot_bench.py ring.json rd.json -o allreduce.png
    scripts/plot_bench.py results/*.json -o out/ --per-collective

A series is one JSON file, labelled by its library and algorithm ("fabcoll ring",
"fabcoll auto"); with --compare-mpi results the MPI column becomes a second series ("MPI").
Nonblocking results plot the overall time (start + compute + wait) unless --metric says
otherwise. The system python3 is used on purpose: scripts/setup.sh installs Debian's
python3-matplotlib for it.
"""
import argparse
import collections
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt  # noqa: E402

METRICS = ("avg_us", "min_us", "max_us", "overall_us", "pure_comm_us", "overlap_pct")


def load(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if doc.get("benchmark") != "fabcoll-bench":
        raise ValueError(f"{path}: not a fabcoll-bench --json result")
    return doc


def label_of(doc, path, by):
    if by == "file":
        return os.path.splitext(os.path.basename(path))[0]
    parts = [doc.get("library", "fabcoll")]
    if by in ("algorithm", "both"):
        parts.append(doc.get("algorithm", "auto"))
    if by == "both":
        parts.append(f"p={doc.get('ranks')}")
    return " ".join(str(x) for x in parts)


def series_of(doc, path, metric, by):
    """[(label, sizes, values)]: the file's own series, plus the MPI one if it has it."""
    rows = doc.get("results", [])
    m = metric or ("overall_us" if doc.get("nonblocking") else "avg_us")
    out = []
    pts = [(r["size"], r[m]) for r in rows if m in r and r.get("size")]
    if pts:
        out.append((label_of(doc, path, by), *zip(*pts)))
    mpi = [(r["size"], r["mpi_avg_us"]) for r in rows if "mpi_avg_us" in r and r.get("size")]
    if mpi and m == "avg_us":
        out.append((doc.get("mpi_library", "MPI"), *zip(*mpi)))
    return m, out


def plot(group, title, metric_name, dest):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, sizes, values in group:
        ax.plot(sizes, values, marker="o", markersize=3, label=label)
    ax.set_xscale("log", base=2)
    if metric_name != "overlap_pct":
        ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("overlap (%)" if metric_name == "overlap_pct" else f"latency (us), {metric_name}")
    ax.set_title(title)
    ax.grid(True, which="both", linewidth=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(dest, dpi=120)
    plt.close(fig)
    print(dest)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+", help="fabcoll-bench --json result files")
    ap.add_argument("-o", "--output", default="bench.png",
                    help="PNG file, or a directory with --per-collective (default bench.png)")
    ap.add_argument("--per-collective", action="store_true",
                    help="one PNG per collective (and form) into the --output directory")
    ap.add_argument("--metric", choices=METRICS,
                    help="the value to plot (default avg_us; overall_us for nonblocking results)")
    ap.add_argument("--label", choices=("algorithm", "library", "both", "file"), default="algorithm",
                    help="how to name each line (default: library + algorithm)")
    ap.add_argument("--title", help="plot title (default: collective, ranks, datatype)")
    args = ap.parse_args(argv)

    groups = collections.OrderedDict()
    metric_used = {}
    for path in args.json:
        try:
            doc = load(path)
        except (OSError, ValueError) as e:
            print(f"plot_bench: {e}", file=sys.stderr)
            return 1
        key = doc.get("command", doc.get("collective")) if args.per_collective else "all"
        m, series = series_of(doc, path, args.metric, args.label)
        if not series:
            print(f"plot_bench: {path}: no sized results to plot", file=sys.stderr)
            continue
        groups.setdefault(key, []).extend(series)
        metric_used.setdefault(key, (m, doc))
    if not groups:
        print("plot_bench: nothing to plot", file=sys.stderr)
        return 1
    if args.per_collective:
        os.makedirs(args.output, exist_ok=True)
    for key, group in groups.items():
        m, doc = metric_used[key]
        title = args.title or (f"{doc.get('command', doc.get('collective'))}, p = {doc.get('ranks')}, "
                               f"{doc.get('datatype')}")
        dest = os.path.join(args.output, f"{key}.png") if args.per_collective else args.output
        plot(group, title, m, dest)
    return 0


if __name__ == "__main__":
    sys.exit(main())

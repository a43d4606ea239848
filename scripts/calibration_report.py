#!/usr/bin/env python3
"""Plots for a fabcoll-calibrate report: python3 scripts/calibration_report.py DIR

Reads DIR/pingpong.csv, DIR/validation.csv and DIR/tuning.json (written by
`fabcoll-calibrate --report DIR`) and writes
  DIR/pingpong.png              measured ping-pong points and the fitted line(s) per link class
  DIR/validation_<coll>.png     predicted (dashed) vs measured (solid) time per algorithm over
                                size, with the predicted crossovers marked
Needs matplotlib (Debian: python3-matplotlib).
"""
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def link_model(link, n):
    """Predicted one-message time from the tuning file's link entry."""
    above = link["break_bytes"] > 0 and n >= link["break_bytes"]
    alpha = link["alpha_above"] if above else link["alpha"]
    # β beyond the cache (quiet shm: fitted to this ping-pong) for whole messages from large_from.
    if link.get("large_from", 0) > 0 and n >= link["large_from"]:
        return alpha + link["beta_large"] * n
    return alpha + (link["beta_above"] if above else link["beta"]) * n


def plot_pingpong(d, tuning):
    rows = read_csv(os.path.join(d, "pingpong.csv"))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for link in tuning["links"]:
        cls = link["class"]
        reps = [(float(r["n"]), float(r["t"])) for r in rows if r["link"] == cls and r["kind"] == "rep"]
        meds = [(float(r["n"]), float(r["t"])) for r in rows if r["link"] == cls and r["kind"] == "median"]
        if reps:
            ax.scatter([n for n, _ in reps], [t * 1e6 for _, t in reps], s=4, alpha=0.25,
                       label=f"{cls}: repetitions")
        if meds:
            ax.scatter([n for n, _ in meds], [t * 1e6 for _, t in meds], s=18, marker="o",
                       label=f"{cls}: medians")
            ns = sorted(n for n, _ in meds)
            fine = []
            x = ns[0]
            while x <= ns[-1]:
                fine.append(x)
                x *= 1.05
            lbl = (f"fit α={link['alpha'] * 1e6:.2f} µs, β={link['beta'] * 1e9:.3f} ns/B"
                   f" (R²={link['r2']:.3f})")
            if link.get("overhead", -1) >= 0:  # the sender's overhead o (absent: o = α)
                lbl += f", o={link['overhead'] * 1e6:.2f} µs"
            if link.get("gap", -1) >= 0:  # the sender's time per byte G (absent: G = β)
                lbl += f", G={link['gap'] * 1e9:.3f} ns/B"
            if link["break_bytes"] > 0:
                lbl += f"; break {link['break_bytes']:.0f} B"
                ax.axvline(link["break_bytes"], color="grey", linestyle=":")
            if link.get("large_from", 0) > 0:
                lbl += f"; β={link['beta_large'] * 1e9:.3f} ns/B from {link['large_from']:.0f} B"
            ax.plot(fine, [link_model(link, n) * 1e6 for n in fine], label=lbl)
        # The bounced ping-pong (every message just received by its sender) that gives ω.
        written = [(float(r["n"]), float(r["t"])) for r in rows
                   if r["link"] == cls and r["kind"] == "written_median"]
        if written:
            ax.scatter([n for n, _ in written], [t * 1e6 for _, t in written], s=18, marker="x",
                       label=f"{cls}: bounced medians (ω={link.get('written', 1):.2f})")
        # The exchanges (both ranks sending at once) that give χα, χβ.
        exch = [(float(r["n"]), float(r["t"])) for r in rows
                if r["link"] == cls and r["kind"] == "exchange_median"]
        if exch:
            ax.scatter([n for n, _ in exch], [t * 1e6 for _, t in exch], s=18, marker="+",
                       label=(f"{cls}: exchange medians (χα={link.get('exchange_alpha', 1):.2f}, "
                              f"χβ={link.get('exchange_beta', 1):.2f})"))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("one-way time (µs)")
    ax.set_title("Ping-pong and fitted α + βn")
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(d, "pingpong.png"), dpi=120)
    plt.close(fig)


def plot_validation(d, tuning):
    rows = read_csv(os.path.join(d, "validation.csv"))
    colls = sorted({r["collective"] for r in rows})
    for coll in colls:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        algs = []
        for r in rows:
            if r["collective"] == coll and r["algorithm"] not in algs:
                algs.append(r["algorithm"])
        for i, alg in enumerate(algs):
            pts = sorted((float(r["n"]), float(r["predicted"]), float(r["measured"]))
                         for r in rows if r["collective"] == coll and r["algorithm"] == alg)
            color = f"C{i % 10}"
            ax.plot([p[0] for p in pts], [p[2] * 1e6 for p in pts], "-o", color=color,
                    markersize=3, label=f"{alg} measured")
            ax.plot([p[0] for p in pts], [p[1] * 1e6 for p in pts], "--", color=color,
                    label=f"{alg} predicted")
        for c in tuning.get("crossovers", []):
            if c["collective"] != coll:
                continue
            for s in c["segments"][1:]:
                ax.axvline(s["lo"], color="grey", linestyle=":", linewidth=1)
        ns = [float(r["n"]) for r in rows if r["collective"] == coll]
        if ns:
            ax.set_xlim(min(ns) / 1.5, max(ns) * 1.5)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("bytes per rank")
        ax.set_ylabel("time (µs)")
        p = tuning.get("validation", {}).get("p", "?")
        ax.set_title(f"{coll}, p = {p}: predicted vs measured (dotted: predicted crossovers)")
        ax.legend(fontsize=6, ncol=2)
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        fig.savefig(os.path.join(d, f"validation_{coll}.png"), dpi=120)
        plt.close(fig)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    d = sys.argv[1]
    with open(os.path.join(d, "tuning.json")) as f:
        tuning = json.load(f)
    plot_pingpong(d, tuning)
    plot_validation(d, tuning)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Plots of a sparsetc_bench CSV (headless, matplotlib's Agg backend).

    python3 bench/scripts/plot_bench.py bench.csv [--out DIR]

Writes, when the CSV has the rows for them:
  spmm_speedup.png    per N, every matrix: speedup of sparsetc and of each vendor variant family
                      (layouts merged: the faster of row/col) over the best cuSPARSE variant
  roofline.png   achieved GFLOP/s against arithmetic intensity (useful flops / floor bytes),
                      under the measured copy-bandwidth roof; and the fraction of that bandwidth
                      reached by the best vendor variant and by sparsetc, per case
  spgemm_speedup.png  per value type and matrix: each SpGEMM variant's speedup over the best
                      cuSPARSE variant of that type
Only results whose status is "ok" (checked, then timed) are drawn.
"""

import argparse
import csv
import math
import os
import sys
from collections import defaultdict


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    ok = []
    for r in rows:
        if r["status"] != "ok" or not r["median_ms"]:
            continue
        for key in ("median_ms", "gflops", "gbps", "bw_fraction", "copy_gbps", "flops", "floor_bytes"):
            r[key] = float(r[key]) if r.get(key) else math.nan
        for key in ("n", "nnz", "rows", "cols"):
            r[key] = int(r[key])
        ok.append(r)
    return rows, ok


def family(r):
    """Variant name without its layout (the faster layout is drawn)."""
    parts = r["variant"].split("/")
    if r["op"] == "spmm" and parts[-1] in ("row", "col"):
        parts = parts[:-1]
    return "/".join(parts)


def best_by(cases, key):
    out = {}
    for r in cases:
        k = key(r)
        if k not in out or r["median_ms"] < out[k]["median_ms"]:
            out[k] = r
    return out


def matrix_order(rs):
    nnz = {}
    for r in rs:
        nnz[r["matrix"]] = r["nnz"]
    return sorted(nnz, key=lambda m: (nnz[m], m))


def style(plt, name, index):
    """sparsetc: thick black/gray stars; vendor families: tab20 colours, dashed for f16/bf16 inputs."""
    if name.startswith("sparsetc"):
        shade = {"f32": "black", "f16": "dimgray", "bf16": "darkgray"}.get(name.split("/")[-1], "black")
        return dict(marker="*", markersize=11, color=shade, linewidth=2.0, zorder=5)
    markers = "os^vD<>pPXhd"
    dashed = "/f16" in name or "/bf16" in name
    return dict(marker=markers[index % len(markers)], markersize=4, linewidth=0.9, alpha=0.85,
                color=plt.get_cmap("tab20")(index % 20), linestyle="--" if dashed else "-")


def plot_spmm_speedup(plt, ok, out_dir):
    spmm = [r for r in ok if r["op"] == "spmm"]
    if not spmm:
        return None
    ns = sorted({r["n"] for r in spmm})
    fig, axes = plt.subplots(len(ns), 1, figsize=(17, 4.6 * len(ns)), squeeze=False)
    for ax, n in zip(axes[:, 0], ns):
        rs = [r for r in spmm if r["n"] == n]
        base = best_by([r for r in rs if r["provider"] == "cusparse"], lambda r: r["matrix"])
        fams = best_by(rs, lambda r: (family(r), r["matrix"]))
        matrices = [m for m in matrix_order(rs) if m in base]
        names = sorted({f for f, _ in fams}, key=lambda f: (f.startswith("sparsetc"), f))
        x = list(range(len(matrices)))
        for i, name in enumerate(names):
            ys = [base[m]["median_ms"] / fams[(name, m)]["median_ms"] if (name, m) in fams else math.nan
                  for m in matrices]
            ax.plot(x, ys, label=name, **style(plt, name, i))
        ax.axhline(1.0, color="gray", linewidth=0.8, linestyle="--")
        ax.set_yscale("log")
        ax.set_title(f"SpMM N={n}: speedup over the best cuSPARSE variant per matrix (> 1: faster)")
        ax.set_xticks(x)
        ax.set_xticklabels(matrices, rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("best cuSPARSE ms / variant ms")
        ax.grid(True, which="both", axis="y", alpha=0.3)
        ax.legend(fontsize=6, ncol=2, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    path = os.path.join(out_dir, "spmm_speedup.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_roofline(plt, ok, out_dir):
    rs = [r for r in ok if r["floor_bytes"] > 0 and r["flops"] > 0 and r["op"] in ("spmm", "spgemm")]
    if not rs:
        return None
    copy = next((r["copy_gbps"] for r in rs if r["copy_gbps"] > 0), math.nan)
    cases = defaultdict(list)
    for r in rs:
        cases[(r["matrix"], r["op"], r["n"])].append(r)
    fig, (left, right) = plt.subplots(1, 2, figsize=(15, 6))
    for who, color, marker in (("vendor", "tab:blue", "o"), ("sparsetc", "black", "*")):
        xs, ys, fr, labels = [], [], [], []
        for key, group in sorted(cases.items()):
            pick = [r for r in group if (r["provider"] == "sparsetc") == (who == "sparsetc")]
            if not pick:
                continue
            best = min(pick, key=lambda r: r["median_ms"])
            xs.append(best["flops"] / best["floor_bytes"])
            ys.append(best["gflops"])
            fr.append(best["bw_fraction"])
            labels.append(f"{key[0]} {key[1]} N={key[2]}" if key[2] else f"{key[0]} {key[1]}")
        if not xs:
            continue
        left.scatter(xs, ys, s=40 if who == "sparsetc" else 18, c=color, marker=marker,
                     label=f"fastest {who} variant per case", alpha=0.8)
        right.scatter(range(len(fr)), fr, s=40 if who == "sparsetc" else 18, c=color, marker=marker,
                      label=who, alpha=0.8)
    if not math.isnan(copy):
        lo = min(r["flops"] / r["floor_bytes"] for r in rs) / 2
        hi = max(r["flops"] / r["floor_bytes"] for r in rs) * 2
        left.plot([lo, hi], [lo * copy, hi * copy], color="tab:red", linewidth=1.2,
                  label=f"bandwidth roof: measured copy {copy:.0f} GB/s x intensity")
        right.axhline(1.0, color="tab:red", linewidth=1.0, linestyle="--")
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("arithmetic intensity: useful flops / floor bytes")
    left.set_ylabel("GFLOP/s (useful: 2 nnz N; SpGEMM 2 products)")
    left.set_title("roofline (memory roof only)")
    left.grid(True, which="both", alpha=0.3)
    left.legend(fontsize=8)
    right.set_xlabel("case (matrix, op, N), sorted")
    right.set_ylabel("floor bytes / time / copy bandwidth")
    right.set_title("fraction of the measured copy bandwidth")
    right.grid(True, alpha=0.3)
    right.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(out_dir, "roofline.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_spgemm(plt, ok, out_dir):
    rs = [r for r in ok if r["op"] == "spgemm"]
    if not rs:
        return None
    types = sorted({r["value_type"] for r in rs})
    fig, axes = plt.subplots(len(types), 1, figsize=(14, 5.5 * len(types)), squeeze=False)
    for ax, vt in zip(axes[:, 0], types):
        typed = [r for r in rs if r["value_type"] == vt]
        base = best_by([r for r in typed if r["provider"] == "cusparse"], lambda r: r["matrix"])
        matrices = [m for m in matrix_order(typed) if m in base]
        names = sorted({r["variant"] for r in typed}, key=lambda v: (v.startswith("sparsetc"), v))
        by = {(r["variant"], r["matrix"]): r for r in typed}
        width = 0.8 / max(1, len(names))
        for i, name in enumerate(names):
            ys = [base[m]["median_ms"] / by[(name, m)]["median_ms"] if (name, m) in by else 0 for m in matrices]
            xs = [j + (i - (len(names) - 1) / 2) * width for j in range(len(matrices))]
            color = "black" if name.startswith("sparsetc") else plt.get_cmap("tab20")(i % 20)
            ax.bar(xs, ys, width=width, label=name, color=color)
        ax.axhline(1.0, color="gray", linewidth=0.8, linestyle="--")
        ax.set_xticks(range(len(matrices)))
        ax.set_xticklabels(matrices, rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("best cuSPARSE ms / variant ms")
        ax.set_title(f"SpGEMM {vt}: speedup over the best cuSPARSE {vt} variant per matrix "
                     "(no bar: failed or wrong)")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    path = os.path.join(out_dir, "spgemm_speedup.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", help="CSV written by sparsetc_bench --csv")
    parser.add_argument("--out", help="output folder (default: the CSV's folder)")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_bench.py: matplotlib is not installed; no plots", file=sys.stderr)
        return 1
    out_dir = args.out or os.path.dirname(os.path.abspath(args.csv))
    os.makedirs(out_dir, exist_ok=True)
    rows, ok = load(args.csv)
    print(f"{len(rows)} rows, {len(ok)} checked and timed")
    for make in (plot_spmm_speedup, plot_roofline, plot_spgemm):
        path = make(plt, ok, out_dir)
        if path:
            print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The SpMM targets of a sparsetc_bench CSV, as Markdown (docs/performance.md takes it as is).

    python3 bench/scripts/spmm_report.py bench.csv [--ours sparsetc_tc] [--types f16,bf16]
                                         [--peak-tflops 780] [--structured NAME,...]

Per (matrix, N): the best cuSPARSE variant (any CSR algorithm, BSR, Blocked-ELL; any input type and
layout), the best Blocked-ELL alone, cuBLAS dense, and ours (the fastest of the variants whose
name starts with --ours, restricted to --types, any layout). Ratios are cuSPARSE ms / our ms (> 1:
we are faster). Geometric means per N over the structured suite (--structured, default: every
matrix in the CSV) and over the rest. Roofline: the larger of the bytes floor (the harness's
floor_bytes at the measured copy bandwidth) and the tensor-core flops floor (the flops the blocks
make the tensor cores do, 2 nnz N / fill, with the fill read from the plan's note, at
--peak-tflops); our fraction of it. Preprocessing: the
plan's setup_ms and the number of SpMM calls whose savings over the best cuSPARSE pay for it.
"""

import argparse
import csv
import math
import re
from collections import defaultdict


def load(path):
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r["op"] == "spmm" and r["status"] == "ok" and r["median_ms"]]


def geomean(xs):
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else math.nan


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--ours", default="sparsetc_tc")
    ap.add_argument("--types", default="f16,bf16")
    ap.add_argument("--peak-tflops", type=float, default=780.0)
    ap.add_argument("--structured", default="")
    args = ap.parse_args()
    types = set(args.types.split(","))
    rows = load(args.csv)
    cases = defaultdict(list)
    for r in rows:
        cases[(r["matrix"], int(r["n"]))].append(r)
    structured = set(args.structured.split(",")) if args.structured else None

    def fastest(rs, pred):
        best = None
        for r in rs:
            if pred(r) and (best is None or float(r["median_ms"]) < float(best["median_ms"])):
                best = r
        return best

    print("| matrix | nnz | N | best cuSPARSE | ms | Blocked-ELL ms | cuBLAS ms | ours | ms | vs cuSPARSE | vs BELL "
          "| % roofline | setup ms | calls to amortize |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    ratios = defaultdict(lambda: defaultdict(list))  # group -> N -> ratios
    bell_ratios = []
    for (matrix, n), rs in sorted(cases.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        vendor = fastest(rs, lambda r: r["provider"] == "cusparse")
        bell = fastest(rs, lambda r: r["provider"] == "cusparse" and r["format"].startswith("bell"))
        gemm = fastest(rs, lambda r: r["provider"] == "cublas")
        ours = fastest(rs, lambda r: r["variant"].startswith(args.ours + "/") and r["value_type"] in types)
        if not vendor or not ours:
            continue
        v, o = float(vendor["median_ms"]), float(ours["median_ms"])
        ratio = v / o
        group = "structured" if structured is None or matrix in structured else "other"
        ratios[group][n].append(ratio)
        bell_text = "-"
        if bell:
            bell_ratios.append(float(bell["median_ms"]) / o)
            bell_text = "%.4f" % float(bell["median_ms"])
        fill = re.search(r"fill ([0-9.]+)", ours["note"])
        flops = float(ours["flops"]) / (float(fill.group(1)) if fill and float(fill.group(1)) > 0 else 1.0)
        floor_s = max(float(ours["floor_bytes"]) / (float(ours["copy_gbps"]) * 1e9),
                      flops / (args.peak_tflops * 1e12))
        setup = float(ours["setup_ms"]) if ours["setup_ms"] else math.nan
        saved = v - o
        calls = "%.0f" % math.ceil(setup / saved) if saved > 0 and math.isfinite(setup) else "never"
        print("| %s | %s | %d | %s | %.4f | %s | %s | %s | %.4f | %.2fx | %s | %.0f%% | %.1f | %s |" % (
            matrix, ours["nnz"], n, vendor["variant"], v, bell_text,
            "%.4f" % float(gemm["median_ms"]) if gemm else "-", ours["variant"], o, ratio,
            "%.2fx" % (float(bell["median_ms"]) / o) if bell else "-", 100 * floor_s / (o * 1e-3), setup, calls))
    print()
    print("| suite | N | cases | geomean vs best cuSPARSE | min | max |")
    print("|---|---|---|---|---|---|")
    for group in ("structured", "other"):
        for n in sorted(ratios[group]):
            xs = ratios[group][n]
            print("| %s | %d | %d | %.2fx | %.2fx | %.2fx |" % (group, n, len(xs), geomean(xs), min(xs), max(xs)))
    if bell_ratios:
        print()
        print("Against cuSPARSE Blocked-ELL where it runs: geomean %.2fx, min %.2fx over %d cases." % (
            geomean(bell_ratios), min(bell_ratios), len(bell_ratios)))


if __name__ == "__main__":
    main()

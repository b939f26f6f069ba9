#!/usr/bin/env python3
"""Plot of a BcsrTcBench run (the tensor-core SpMM against cuSPARSE, same run, same inputs).

    SPARSETC_BENCH=1 sparsetc_gpu_engine_tests --gtest_filter='BcsrTcBench.*' > tc.txt
    python3 bench/scripts/plot_tc_bench.py tc.txt --out docs/img/tc_spmm_speedup.png

One row of panels per measure, one group of bars per matrix, one bar per N: the speedup over the best
cuSPARSE variant of the run (CSR ALG_DEFAULT/ALG2 in fp16, ALG3 in fp32, Blocked-ELL 32 in fp16), the
speedup over Blocked-ELL alone, and the fraction of the roofline (bytes or tensor-core flops,
whichever bounds). The scrambled blocks without reordering are left out, as in issue 5's geomeans.
Headless (matplotlib's Agg backend).
"""

import argparse
import re
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# matrix, N, ours, the cuSPARSE columns (-1: that variant did not run), x best, GFLOP/s, % roofline
ROW = re.compile(r"^(\S+(?: \(1-SA\))?)\s+(\d+)\s+([0-9.]+)\s+(-?[0-9.]+)\s+(-?[0-9.]+)\s+(-?[0-9.]+)\s+(-?[0-9.]+)\s+"
                 r"([0-9.]+)x\s+\d+\s+([0-9.]+)%")


def load(path):
    cases = OrderedDict()  # matrix -> {n: (vs best, vs bell, roofline fraction)}
    for line in open(path):
        m = ROW.match(line)
        if not m:
            continue
        matrix, n, tc = m.group(1), int(m.group(2)), float(m.group(3))
        if matrix.startswith("blocks:") and "(1-SA)" not in matrix:
            continue
        bell = float(m.group(7)) if float(m.group(7)) > 0 else float("nan")
        cases.setdefault(matrix, {})[n] = (float(m.group(8)), bell / tc, float(m.group(9)) / 100.0)
    return cases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench")
    ap.add_argument("--out", default="tc_spmm_speedup.png")
    ap.add_argument("--title", default="BCSR tensor-core SpMM (f16, fp32 C) on H200")
    a = ap.parse_args()
    cases = load(a.bench)
    ns = sorted({n for per in cases.values() for n in per})
    names = list(cases)
    fig, axes = plt.subplots(3, 1, figsize=(max(8, 1.4 * len(names)), 10), sharex=True)
    width = 0.8 / len(ns)
    labels = ["x best cuSPARSE", "x Blocked-ELL 32", "fraction of roofline"]
    for row, ax in enumerate(axes):
        for j, n in enumerate(ns):
            xs = [i + (j - (len(ns) - 1) / 2) * width for i in range(len(names))]
            ys = [cases[m].get(n, (float("nan"),) * 3)[row] for m in names]
            ax.bar(xs, ys, width, label=f"N = {n}")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_ylabel(labels[row])
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(ncol=len(ns), fontsize=8)
    axes[0].set_title(a.title)
    axes[-1].set_xticks(range(len(names)))
    axes[-1].set_xticklabels(names, rotation=20, ha="right", fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print(f"wrote {a.out}: {len(names)} matrices, N = {ns}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Fits the short-row rule of the C-stationary SpMM kernel (row_rule in
src/gpu/spmm/cuda_core/schedule.cu) from a schedule sweep.

Input: the output of
    SPARSETC_BENCH=1 SPARSETC_BENCH_MTX=<files> SPARSETC_BENCH_TYPES=f32,f16 \\
    SPARSETC_BENCH_SCHEDULES=e2,e4,e8,e16,e32,l4,l8,l16,l32 \\
    sparsetc_gpu_engine_tests --gtest_filter=CudaCoreSpmmBench.RealMatricesByPrecision
(every schedule timed on the same inputs, L2 evicted; e<k>: streams of about k entries, l<k>:
groups whose lanes take about k entries of a mean row) and bench/data/spmm_features.csv for each
matrix's mean row length.

The rule per N bucket (8, 32, 128, 512): rows averaging at least T entries go to groups of
lane_entries L, shorter ones to streams of stream_entries E. T, E and L are found by a grid search
on the training matrices (fit_spmm_selector.py's split by kind) maximising the geometric mean of
(fastest schedule / chosen schedule), one rule for f32 and f16 together; the report gives that
score and the geometric mean of (best cuSPARSE / chosen) on the training and held-out matrices.

--paths FILE writes, for the library's current rule (read from row_rule in schedule.cu), the
chosen schedule's time as sparsetc_csr and sparsetc_dcsr (the DCSR kernel runs the same schedule;
these matrices have few empty rows) beside cuSPARSE's times, in the benchmark's CSV columns:
the input of fit_spmm_selector.py for AUTO's kernel rules (3-5).
"""

import argparse
import csv
import math
import re
from collections import defaultdict

from fit_spmm_selector import n_bucket, split

GRID_T = [0, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, float("inf")]
SCHEDULE_CU = "src/gpu/spmm/cuda_core/schedule.cu"


def library_rule(path=SCHEDULE_CU):
    """row_rule's numbers as the library has them: N bucket -> (T, E, L)."""
    body = re.search(r"RowRule row_rule\([^)]*\) \{(.*?)\n\}", open(path).read(), re.S)
    if not body:
        raise SystemExit(f"{path}: no row_rule")
    values = re.findall(r"return RowRule\{([\d.]+), (\d+), (\d+)\};", body.group(1))
    if len(values) != 4:
        raise SystemExit(f"{path}: row_rule has {len(values)} buckets, expected 4")
    return {n: (float(t), int(e), int(l)) for n, (t, e, l) in zip((8, 32, 128, 512), values)}
VENDOR_NAMES = ["csr_default", "csr_alg1", "csr_alg2", "csr_alg3"]


def load_sweep(path):
    names, cases = None, {}
    for line in open(path):
        if line.startswith("matrix ") and "|" in line:
            names = line.split("|")[1].split()
            continue
        m = re.match(r"^(\S+)\s+(f32|f16|bf16)\s+(\d+) \|(.*?)\|(.*?)\|", line)
        if not m or names is None:
            continue
        ours = dict(zip(names, (float(x) for x in m.group(4).split())))
        vendor = dict(zip(VENDOR_NAMES, (float(x) for x in m.group(5).split())))
        cases[(m.group(1), m.group(2), int(m.group(3)))] = (ours, vendor)
    return cases


def best_vendor(vendor):
    return min(t for t in vendor.values() if t == t)


def write_paths(cases, means, path, library):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["matrix", "n", "op", "variant", "value_type", "status", "median_ms"])
        for (matrix, t, n), (ours, vendor) in sorted(cases.items()):
            rt, re_, rl = library[n_bucket(n)]
            kernel = chosen(ours, means[matrix], rt, re_, rl)
            rows = [("sparsetc_csr", kernel), ("sparsetc_dcsr", kernel)] + list(vendor.items())
            for name, ms in rows:
                if ms == ms:
                    w.writerow([matrix, n, "spmm", f"{name}/{t}/row", t, "ok", ms])


def load_features(path):
    """Each matrix's mean row length and entry count (the split's order)."""
    rows = list(csv.DictReader(open(path)))
    return ({r["matrix"]: float(r["row_length_mean"]) for r in rows}, {r["matrix"]: int(r["nnz"]) for r in rows})


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def chosen(ours, mean, t, e, l):
    return ours.get(f"l{l}" if mean >= t else f"e{e}")


def fit(cases, means, members):
    es = sorted({int(k[1:]) for c in cases.values() for k in c[0] if re.fullmatch(r"e\d+", k)})
    ls = sorted({int(k[1:]) for c in cases.values() for k in c[0] if re.fullmatch(r"l\d+", k)})
    rules = {}
    for bucket in (8, 32, 128, 512):
        keys = [k for k in cases if n_bucket(k[2]) == bucket and k[0] in members]
        best = None
        for t in GRID_T:
            for e in es:
                for l in ls:
                    score = []
                    for k in keys:
                        ours = cases[k][0]
                        got = chosen(ours, means[k[0]], t, e, l)
                        score.append(min(ours.values()) / got)
                    g = geomean(score)
                    if best is None or g > best[0] + 1e-9:
                        best = (g, t, e, l)
        rules[bucket] = best[1:]
    return rules


def report(cases, means, rules, train, held):
    print("| set | type | N | rule (T, E, L) | of the fastest schedule | best cuSPARSE / chosen | min |")
    print("|---|---|---|---|---|---|---|")
    for name, members in (("train", train), ("held-out", held)):
        for t in ("f32", "f16"):
            for n in (8, 32, 128, 512):
                keys = [k for k in cases if k[1] == t and k[2] == n and k[0] in members]
                if not keys:
                    continue
                rt, re_, rl = rules[n_bucket(n)]
                of_best, vs_cus = [], []
                for k in keys:
                    ours, vendor = cases[k]
                    got = chosen(ours, means[k[0]], rt, re_, rl)
                    of_best.append(min(ours.values()) / got)
                    vs_cus.append(best_vendor(vendor) / got)
                print(f"| {name} | {t} | {n} | {rt:g}, {re_}, {rl} | {geomean(of_best):.3f} | "
                      f"{geomean(vs_cus):.3f}x | {min(vs_cus):.2f}x |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sweep", required=True, help="the benchmark's output")
    ap.add_argument("--features", default="bench/data/spmm_features.csv")
    ap.add_argument("--paths", help="write the library rule's kernel times and cuSPARSE's as a paths CSV")
    args = ap.parse_args()
    cases = load_sweep(args.sweep)
    means, nnz = load_features(args.features)
    cases = {k: v for k, v in cases.items() if k[0] in means}
    matrices = {k[0]: nnz[k[0]] for k in cases}
    train, held = split(matrices)
    print(f"training ({len(train)}): {', '.join(sorted(train))}")
    print(f"held out ({len(held)}): {', '.join(sorted(held))}\n")
    rules = fit(cases, means, train)
    for bucket, (t, e, l) in rules.items():
        print(f"N bucket {bucket}: groups from a mean row of {t:g}, streams of {e} entries, lanes of {l} entries")
    print()
    report(cases, means, rules, train, held)
    print("\nThe library's rule (row_rule):")
    report(cases, means, library_rule(), train, held)
    print("\nOn all matrices (the rule fitted on all of them):")
    report(cases, means, fit(cases, means, set(matrices)), set(matrices), set())
    if args.paths:
        write_paths(cases, means, args.paths, library_rule())
        print(f"\nwrote {args.paths}")


if __name__ == "__main__":
    main()

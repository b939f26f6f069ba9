#!/usr/bin/env python3
"""One sparsetc variant in two sparsetc_bench CSVs (two builds, or two settings), each run against
the cuSPARSE variants of its own run: the before/after of a change as a ratio of ratios.

    python3 bench/scripts/compare_runs.py BEFORE.csv AFTER.csv [--ours sparsetc/] [--vendor csr_]

Per (matrix, N, input type, layout) present in both: speed-up = (best vendor ms / our ms) in AFTER
over the same in BEFORE, where "best vendor" is the fastest checked variant whose name starts with
--vendor and has our input type. Prints each case and the geometric mean per (type, N) with its
minimum and maximum; > 1 means AFTER is faster.
"""

import argparse
import csv
import math
from collections import defaultdict


def ratios(path, ours, vendor):
    best, mine = {}, {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["op"] != "spmm" or r["status"] != "ok" or not r["median_ms"]:
                continue
            key = (r["matrix"], int(r["n"]), r["value_type"], r["layout"])
            ms = float(r["median_ms"])
            if r["variant"].startswith(ours):
                mine[key] = ms
            elif r["variant"].startswith(vendor):
                best[key] = min(ms, best.get(key, math.inf))
    return {k: best[k] / mine[k] for k in mine if k in best}


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--ours", default="sparsetc/")
    ap.add_argument("--vendor", default="csr_")
    ap.add_argument("--quiet", action="store_true", help="only the geometric means")
    a = ap.parse_args()
    before, after = ratios(a.before, a.ours, a.vendor), ratios(a.after, a.ours, a.vendor)
    groups = defaultdict(list)
    for key in sorted(set(before) & set(after)):
        gain = after[key] / before[key]
        groups[(key[2], key[3], key[1])].append(gain)
        if not a.quiet:
            print(f"{key[0]:24s} {key[2]:5s} {key[3]:4s} N={key[1]:<4d} vs vendor {before[key]:5.2f}x -> "
                  f"{after[key]:5.2f}x  ({gain:5.3f})")
    print("| type | layout | N | cases | after / before (geomean) | min | max |")
    print("|---|---|---|---|---|---|---|")
    for (t, layout, n), gains in sorted(groups.items()):
        print(f"| {t} | {layout} | {n} | {len(gains)} | {geomean(gains):.3f} | {min(gains):.3f} | {max(gains):.3f} |")


if __name__ == "__main__":
    main()

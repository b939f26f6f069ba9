#!/usr/bin/env python3
"""Fit and validate SpMM AUTO's decision list (src/engine/spmm_select.cpp) on timed device paths.

    python3 bench/scripts/fit_spmm_selector.py --times bench/data/spmm_paths_h200.csv \\
                                               --features bench/data/spmm_features.csv [--cpp]

--times: a sparsetc_bench CSV with every device path timed on the same inputs (--all-paths): per
(matrix, N, value type) cuSPARSE's csr_default/alg1/alg2/alg3 and our sparsetc_csr, _dcsr,
_tiled, _tc, and sparsetc (AUTO as it chose then). --features: `sparsetc_cli --analyze
--strip-width W` lines (the library's own sparsetc_analyze) for W = 64, 128, 256 and 512; each
case reads the line of the strip width the tiled kernel uses at its type and N
(tiled_strip_width in src/gpu/spmm/cuda_core/schedule.cu); made with, per matrix and W,
`sparsetc_cli --analyze --matrix M.mtx.gz --strip-width W [--no-header]` (or --gen SPEC for the
generated ones). The tensor cores' block fill is the
one the plan measured after 1-SA, read from the sparsetc_tc row's note ("fill 0.0809").

The candidates per case are every path AUTO can take for that type: tensor cores (f16/bf16 only:
fp32 AUTO is exact, and the tf32 path is taken only when asked for), our CSR, DCSR and tiled DCSR
kernels, and cuSPARSE with CSR_ALG1, ALG2 or ALG3. The oracle is the fastest of them.

Split (deterministic): matrices are grouped by kind (KIND below: FEM/structural, LP, graphs,
circuits, combinatorial); within a kind, sorted by nnz, the 1st, 3rd, 5th... go to training and
the 2nd, 4th... are held out; a kind with a single matrix is held out whole (an unseen kind).
Unknown matrices (generated ones, new ones) are held out.

The decision list, per value-type class (f32: exact fp32/fp64 inputs; f16: f16/bf16 inputs) and
N bucket (8, 32, 128, 512: N <= 16, <= 64, <= 256, larger), first rule that fires wins:
  1. tensor cores      block fill after 1-SA >= tc_fill[type][N]  (one value for N <= 128, one beyond)
  2. B-stationary      SSF >= ssf[type][N]  (the DCSR paper's Eq. 2 and threshold)      -> tiled DCSR
  3. skewed rows       longest row >= skew_rows[type][N]                                 -> our kernel
  4. row length        mean row length <= kernel_mean[type][N]                           -> our kernel
  5. otherwise cuSPARSE: CSR_ALG2 when the longest row >= alg3_skew[type] (ALG3 collapses on
     skewed rows) or alg2[type][N]; CSR_ALG3 else.
Our kernel is DCSR when at least dcsr_empty of the rows are empty, else CSR. Each threshold is
fitted by a grid search on the training set (the geometric mean of fastest/chosen time), one
rule at a time in the order cuSPARSE algorithm, kernel, SSF, tensor cores; ties go to the more
conservative value (the rule firing less). Re-run on a new CSV with the same columns; --cpp prints
the tables for spmm_select.cpp, and the library's current tables (--library) are scored beside the
fit, with their differences listed.
"""

import argparse
import csv
import itertools
import math
import re
from collections import defaultdict

NS = [8, 32, 128, 512]
TYPES = ["f32", "f16"]
INF = float("inf")

KIND = {
    "Dubcova1": "fem", "bcsstk17": "fem", "bcsstk18": "fem", "bcsstk33": "fem", "bloweya": "fem",
    "nasa4704": "fem", "stokes64": "fem",
    "lp_cre_b": "lp", "lp_ken_18": "lp", "lp_nug20": "lp", "lp_osa_30": "lp", "lp_osa_60": "lp",
    "lp_pds_10": "lp", "lp_pds_20": "lp", "pds-50": "lp", "pds-70": "lp", "pds-100": "lp", "rail582": "lp",
    "ca-AstroPh": "graph", "cage11": "graph", "de2010": "graph", "delaunay_n15": "graph",
    "delaunay_n16": "graph", "luxembourg_osm": "graph", "rgg_n_2_15_s0": "graph", "usroads-48": "graph",
    "vt2010": "graph", "wiki-Vote": "graph",
    "memplus": "circuit",
    "EX5": "combinatorial",  # JGD_SL6/EX5
}

OURS = {"sparsetc_csr": "csr", "sparsetc_dcsr": "dcsr", "sparsetc_tiled": "tiled", "sparsetc_tc": "tc"}
CUSPARSE = {"csr_alg1": "alg1", "csr_alg2": "alg2", "csr_alg3": "alg3"}
VENDOR = ["csr_default", "csr_alg1", "csr_alg2", "csr_alg3"]

# Grids (None-free; INF means "never fires", 0 "always fires" for >= rules).
GRID_TC = [0.05, 0.07, 0.09, 0.12, 0.15, 0.2, 0.25, 0.3, INF]
GRID_SSF = [10, 20, 50, 100, 200, 500, 1000, 2000, 5000, INF]
GRID_SKEW = [0, 100, 200, 300, 400, 500, 700, 1000, 2000, 5000, INF]
GRID_MEAN = [INF, 256, 128, 64, 48, 32, 24, 16, 12, 8, 6, 5, 4, 3, 2, -1]  # fires most -> least
GRID_ALG3_SKEW = [100, 200, 300, 400, 500, 700, 1000, INF]
DCSR_EMPTY_DEFAULT = 0.25
TC_GROUPS = [(8, 32, 128), (512,)]


def n_bucket(n):
    return 8 if n <= 16 else 32 if n <= 64 else 128 if n <= 256 else 512


def tiled_strip_width(type_class, n):
    """tiled_strip_width of src/gpu/spmm/cuda_core/schedule.cu."""
    value_bytes = 4 if type_class == "f32" else 2
    vec = 16 // value_bytes
    vectors = (n + vec - 1) // vec
    lanes = 1
    while lanes < 32 and lanes < vectors:
        lanes *= 2
    row_bytes = lanes * vec * value_bytes
    width = 32
    while width < 512 and 2 * width * row_bytes <= 32768:
        width *= 2
    return width


def type_class(value_type):
    return "f32" if value_type in ("f32", "f64") else "f16"


def load_times(path):
    cases = defaultdict(dict)  # (matrix, n, type) -> {"paths": {}, "vendor": {}, "auto": ms, "fill": x}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r.get("op") != "spmm" or r.get("status") != "ok" or not r.get("median_ms"):
                continue
            parts = r["variant"].split("/")
            variant, vtype = parts[0], parts[1] if len(parts) > 1 else r["value_type"]
            if variant == "sparsetc_tc" and vtype == "tf32":
                continue  # fp32 AUTO is exact: tf32 only on request
            key = (r["matrix"], int(r["n"]), type_class(r["value_type"]))
            c = cases[key].setdefault("paths", {})
            ms = float(r["median_ms"])
            if variant in OURS:
                c[OURS[variant]] = ms
                if variant == "sparsetc_tc":
                    m = re.search(r"fill ([0-9.eE+-]+)", r.get("note", "") + " " + r.get("reason", ""))
                    if m:
                        cases[key]["fill"] = float(m.group(1))
            if variant in CUSPARSE:
                c[CUSPARSE[variant]] = ms
            if variant in VENDOR:
                cases[key].setdefault("vendor", {})[variant] = ms
            if variant == "sparsetc":
                cases[key]["auto"] = ms
    return {k: v for k, v in cases.items() if v.get("vendor") and v.get("paths")}


def load_features(path):
    out = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            out[(r["matrix"], int(r["strip_width"]))] = {k: float(v) for k, v in r.items() if k != "matrix"}
    return out


def split(matrices):
    by_kind = defaultdict(list)
    for m, nnz in matrices.items():
        by_kind[KIND.get(m, "unknown")].append((nnz, m))
    train, held = set(), set()
    for kind, ms in by_kind.items():
        ms.sort()
        if kind == "unknown" or len(ms) == 1:
            held.update(m for _, m in ms)
            continue
        for i, (_, m) in enumerate(ms):
            (train if i % 2 == 0 else held).add(m)
    return train, held


def default_params():
    p = {"alg3_skew": {t: INF for t in TYPES}, "dcsr_empty": DCSR_EMPTY_DEFAULT}
    for name, value in (("tc_fill", INF), ("ssf", INF), ("skew_rows", INF), ("kernel_mean", -1), ("alg2", False)):
        p[name] = {(t, n): value for t in TYPES for n in NS}
    return p


def choose(p, t, n, f, fill, available):
    """The decision list: (path, rule). f: features; fill: tensor-core fill or None."""
    nb = n_bucket(n)
    key = (t, nb)
    if t != "f32" and fill is not None and "tc" in available and fill >= p["tc_fill"][key]:
        return "tc", "tensor cores"
    kernel = "dcsr" if f["rows"] > 0 and f["empty_rows"] / f["rows"] >= p["dcsr_empty"] else "csr"
    if "tiled" in available and f["ssf"] >= p["ssf"][key]:  # untimed here (a kernel-only CSV): skipped
        return "tiled", "ssf"
    if f["row_length_max"] >= p["skew_rows"][key]:
        return kernel, "skewed rows"
    if f["row_length_mean"] <= p["kernel_mean"][key]:
        return kernel, "row length"
    alg2 = f["row_length_max"] >= p["alg3_skew"][t] or p["alg2"][key]
    return ("alg2" if alg2 else "alg3"), "cusparse"


class Case:
    def __init__(self, key, data, features):
        self.matrix, self.n, self.t = key
        self.paths = data["paths"]
        self.best_vendor = min(data["vendor"].values())
        self.auto = data.get("auto")
        self.fill = data.get("fill")
        self.f = features[(self.matrix, tiled_strip_width(self.t, self.n))]
        self.best = min(self.paths.values())

    def time(self, path):
        return self.paths.get(path, INF)


def objective(p, cases):
    s = 0.0
    for c in cases:
        path, _ = choose(p, c.t, c.n, c.f, c.fill, c.paths)
        s += math.log(c.time(path) / c.best)
    return s


def grid_search(p, cases, names, grids, key):
    """The values of p[name][key] (name in names, jointly) minimising the objective on `cases`. Grids
    run from the rule firing most to firing least; ties go to the later value (firing less)."""
    if not cases:
        return
    best = None
    for values in itertools.product(*grids):
        for name, value in zip(names, values):
            p[name][key] = value
        score = objective(p, cases)
        if best is None or score <= best[0] + 1e-12:
            best = (score, values)
    for name, value in zip(names, best[1]):
        p[name][key] = value


def fit_cusparse(p, cases):
    """CSR_ALG2 past a longest-row threshold (per type: ALG3 collapses on skewed rows), and ALG2 or
    ALG3 per N on the rows below it; scored against the fastest of ALG1-3 on every case."""
    def vendor_best(c):
        return min(c.time("alg1"), c.time("alg2"), c.time("alg3"))

    for t in TYPES:
        best = None
        for skew in GRID_ALG3_SKEW:
            score = 0.0
            alg2 = {}
            for n in NS:
                sub = [c for c in cases if c.t == t and n_bucket(c.n) == n]
                regular = [c for c in sub if c.f["row_length_max"] < skew]
                alg2[n] = sum(math.log(c.time("alg2") / c.time("alg3")) for c in regular) < 0
                for c in sub:
                    use2 = c.f["row_length_max"] >= skew or alg2[n]
                    score += math.log(c.time("alg2" if use2 else "alg3") / vendor_best(c))
            if best is None or score <= best[0] + 1e-12:
                best = (score, skew, alg2)
        p["alg3_skew"][t] = best[1]
        for n in NS:
            p["alg2"][(t, n)] = best[2][n]


def fit(cases):
    p = default_params()
    fit_cusparse(p, cases)
    for _ in range(2):  # the later rules take cases from the earlier ones: a second sweep settles them
        for t in TYPES:
            for n in NS:
                sub = [c for c in cases if c.t == t and n_bucket(c.n) == n]
                # ALG2/ALG3 below the skew threshold jointly with the kernel rules: which cuSPARSE
                # algorithm the kernel competes with decides where the kernel should take over. On a
                # tie the choice of fit_cusparse (ALG2 against ALG3 on all the regular rows) stays.
                current = p["alg2"][(t, n)]
                grid_search(p, sub, ["skew_rows", "kernel_mean", "alg2"], [GRID_SKEW, GRID_MEAN, [not current, current]],
                            (t, n))
                grid_search(p, sub, ["ssf"], [GRID_SSF], (t, n))
            if t != "f32":  # one fill threshold up to N = 128, one beyond: few points win on the tensor cores
                for group in TC_GROUPS:
                    sub = [c for c in cases if c.t == t and n_bucket(c.n) in group]
                    grid_search(p, sub, ["tc_fill"], [GRID_TC], (t, group[0]))
                    for n in group[1:]:
                        p["tc_fill"][(t, n)] = p["tc_fill"][(t, group[0])]
    return p


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def evaluate(p, cases):
    rows = []
    for c in cases:
        path, _ = choose(p, c.t, c.n, c.f, c.fill, c.paths)
        chosen = c.time(path)
        rows.append({
            "case": c, "path": path, "exact": chosen <= c.best * (1 + 1e-9), "within10": chosen <= 1.1 * c.best,
            "within10_own": chosen <= 1.1 * min(c.time(k) for k in OURS.values()),
            "vs_vendor": c.best_vendor / chosen, "oracle_vs_vendor": c.best_vendor / c.best,
            "auto_vs_vendor": c.best_vendor / c.auto if c.auto else None,
        })
    return rows


def summary(rows):
    if not rows:
        return None
    autos = [r["auto_vs_vendor"] for r in rows if r["auto_vs_vendor"]]
    worst = min(rows, key=lambda r: r["vs_vendor"])
    return {
        "cases": len(rows),
        "exact": sum(r["exact"] for r in rows) / len(rows),
        "within10": sum(r["within10"] for r in rows) / len(rows),
        "within10_own": sum(r["within10_own"] for r in rows) / len(rows),
        "geomean": geomean([r["vs_vendor"] for r in rows]),
        "min": worst["vs_vendor"],
        "min_at": f"{worst['case'].matrix}, {worst['case'].n}",
        "oracle": geomean([r["oracle_vs_vendor"] for r in rows]),
        "auto_then": geomean(autos) if autos else float("nan"),
    }


def fmt(x):
    return "inf" if x == INF else ("%g" % x)


def print_tables(p, cases, train, held):
    print("## Accuracy (fastest of our paths incl. cuSPARSE ALG1-3 = oracle) and ratio vs best cuSPARSE\n")
    print("| set | type | N | cases | exact | within 10% | within 10% of own kernels | geomean vs best cuSPARSE "
          "| min (matrix, N) | oracle geomean | AUTO of the CSV |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, members in (("train", train), ("held-out", held)):
        for t in TYPES:
            for n in NS + ["all"]:
                sub = [c for c in cases if c.matrix in members and c.t == t and (n == "all" or c.n == n)]
                s = summary(evaluate(p, sub))
                if s:
                    print(f"| {name} | {t} | {n} | {s['cases']} | {s['exact']:.0%} | {s['within10']:.0%} | "
                          f"{s['within10_own']:.0%} | "
                          f"{s['geomean']:.2f}x | {s['min']:.2f}x ({s['min_at']}) | {s['oracle']:.2f}x | "
                          f"{s['auto_then']:.2f}x |")
    print("\n## Thresholds (per type and N bucket)\n")
    print("| type | N | tc_fill >= | ssf >= | skew_rows >= | kernel_mean <= | cuSPARSE default |")
    print("|---|---|---|---|---|---|---|")
    for t in TYPES:
        for n in NS:
            k = (t, n)
            print(f"| {t} | {n} | {fmt(p['tc_fill'][k]) if t != 'f32' else '-'} | {fmt(p['ssf'][k])} | "
                  f"{fmt(p['skew_rows'][k])} | {fmt(p['kernel_mean'][k])} | {'ALG2' if p['alg2'][k] else 'ALG3'} |")
    for t in TYPES:
        print(f"\ncuSPARSE {t}: CSR_ALG2 when the longest row >= {fmt(p['alg3_skew'][t])}")
    print(f"\nDCSR instead of CSR when empty rows / rows >= {p['dcsr_empty']} "
          f"(cases with empty rows in the data: {sum(1 for c in cases if c.f['empty_rows'] > 0)})")


def print_ssf_paper(cases, train, held):
    """(a) the paper's rule alone: C-stationary (best of CSR, DCSR) against B-stationary (tiled)."""
    print("\n## (a) SSF threshold between C-stationary (CSR/DCSR) and B-stationary (tiled DCSR)\n")
    print("| type | N | SSF_th (train) | train accuracy | held-out accuracy | tiled faster (train / held) |")
    print("|---|---|---|---|---|---|")
    for t in TYPES:
        for n in NS:
            def sub(members):
                return [c for c in cases if c.matrix in members and c.t == t and c.n == n]

            def acc(th, cs):
                ok = 0
                for c in cs:
                    c_stat = min(c.time("csr"), c.time("dcsr"))
                    ok += (c.f["ssf"] >= th) == (c.time("tiled") < c_stat)
                return ok / len(cs) if cs else float("nan")

            tr, he = sub(train), sub(held)
            if not tr:
                continue
            best = max(GRID_SSF, key=lambda th: (acc(th, tr), th))
            wins = lambda cs: sum(c.time("tiled") < min(c.time("csr"), c.time("dcsr")) for c in cs)
            print(f"| {t} | {n} | {fmt(best)} | {acc(best, tr):.0%} | {acc(best, he):.0%} | "
                  f"{wins(tr)} / {wins(he)} |")


def print_cpp(p):
    print("\n## C++ tables (src/engine/spmm_select.cpp)\n")
    def table(name, fn):
        rows = []
        for t in TYPES:
            rows.append("{" + ", ".join(fn(p[name][(t, n)]) for n in NS) + "}")
        print(f"{name}: {{{', '.join(rows)}}}")
    num = lambda v: "kNever" if v == INF else ("kAlways" if v == 0 else fmt(v))
    table("tc_fill", num)
    table("ssf", num)
    table("skew_rows", num)
    table("kernel_mean", lambda v: "kAll" if v == INF else ("kNone" if v < 0 else fmt(v)))
    table("alg2", lambda v: "true" if v else "false")
    print("alg3_skew:", {t: num(p["alg3_skew"][t]) for t in TYPES})


def library_params(path):
    """The tables of src/engine/spmm_select.cpp as params (to score what the library does now)."""
    text = open(path).read()
    names = {"kTensorCoreFill": "tc_fill", "kTiledSsf": "ssf", "kSkewedRows": "skew_rows",
             "kKernelMeanRow": "kernel_mean"}
    value = lambda v: INF if v.strip() in ("kNever", "kAlways") else (-1.0 if v.strip() == "kNone" else float(v))
    p = default_params()
    for cpp, name in names.items():
        m = re.search(cpp + r"\s*=\s*\{\{([^}]*)\},\s*\{([^}]*)\}\}", text)
        if not m:
            raise SystemExit(f"{path}: no table {cpp}")
        for t, row in zip(TYPES, m.groups()):
            for n, v in zip(NS, row.split(",")):
                p[name][(t, n)] = value(v)
    m = re.search(r"kAlg2ByN\[2\]\[4\]\s*=\s*\{\{([^}]*)\},\s*\{([^}]*)\}\}", text)
    for t, row in zip(TYPES, m.groups()):
        for n, v in zip(NS, row.split(",")):
            p["alg2"][(t, n)] = v.strip() == "true"
    m = re.search(r"kAlg3SkewedRows\[2\]\s*=\s*\{([^}]*)\}", text)
    for t, v in zip(TYPES, m.group(1).split(",")):
        p["alg3_skew"][t] = value(v)
    p["dcsr_empty"] = float(re.search(r"kDcsrEmptyRows\s*=\s*([0-9.]+)", text).group(1))
    return p


def print_library(lib, fitted, cases, train, held):
    diff = [f"{name}{'' if isinstance(k, str) else list(k)}: library {fmt(v)}, fit {fmt(fitted[name][k])}"
            for name in ("tc_fill", "ssf", "skew_rows", "kernel_mean", "alg2", "alg3_skew")
            for k, v in lib[name].items() if v != fitted[name][k]]
    print("\n## The library's tables (src/engine/spmm_select.cpp) on these cases\n")
    print("differences from this fit: " + ("; ".join(diff) if diff else "none"))
    print("\n| set | type | cases | exact | within 10% | geomean vs best cuSPARSE | min (matrix, N) |")
    print("|---|---|---|---|---|---|---|")
    for name, members in (("train", train), ("held-out", held)):
        for t in TYPES:
            s = summary(evaluate(lib, [c for c in cases if c.matrix in members and c.t == t]))
            if s:
                print(f"| {name} | {t} | {s['cases']} | {s['exact']:.0%} | {s['within10']:.0%} | "
                      f"{s['geomean']:.2f}x | {s['min']:.2f}x ({s['min_at']}) |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--times", default="bench/data/spmm_paths_h200.csv")
    ap.add_argument("--features", default="bench/data/spmm_features.csv")
    ap.add_argument("--cpp", action="store_true", help="print the fitted tables for spmm_select.cpp")
    ap.add_argument("--cases", action="store_true", help="print every case's choice")
    ap.add_argument("--library", default="src/engine/spmm_select.cpp",
                    help="score the tables of this file too (empty: skip)")
    args = ap.parse_args()
    times = load_times(args.times)
    features = load_features(args.features)
    missing = sorted({k[0] for k in times if (k[0], tiled_strip_width(k[2], k[1])) not in features})
    if missing:
        print("no features for:", ", ".join(missing), "(skipped)")
    cases = [Case(k, v, features) for k, v in sorted(times.items()) if k[0] not in missing]
    matrices = {c.matrix: c.f["nnz"] for c in cases}
    train, held = split(matrices)
    print(f"training ({len(train)}): {', '.join(sorted(train))}")
    print(f"held out ({len(held)}): {', '.join(sorted(held))}\n")
    p = fit([c for c in cases if c.matrix in train])
    print_tables(p, cases, train, held)
    print_ssf_paper(cases, train, held)
    if args.library:
        print_library(library_params(args.library), p, cases, train, held)
    if args.cpp:
        print_cpp(p)
    if args.cases:
        print("\n## Cases\n")
        for r in evaluate(p, cases):
            c = r["case"]
            print(f"{'T' if c.matrix in train else 'H'} {c.matrix:16s} {c.t} {c.n:4d} {r['path']:6s} "
                  f"{r['vs_vendor']:.2f}x (oracle {r['oracle_vs_vendor']:.2f}x)")


if __name__ == "__main__":
    main()

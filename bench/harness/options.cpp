#include "harness/options.hpp"

#include <algorithm>
#include <stdexcept>

namespace bench {

const char* usage() {
  return "usage: sparsetc_bench [options]\n"
         "Runs cuSPARSE, cuBLAS and sparsetc on the same inputs in one process, checks every result\n"
         "and reports median times, GFLOP/s, bandwidth against the bytes floor, and sparsetc's ratio to\n"
         "the best vendor variant. Needs a CUDA device (docs/benchmarking.md).\n"
         "\n"
         "inputs (both repeatable; lists may be comma-separated):\n"
         "  --matrices DIR|FILE[,..]  Matrix Market files (.mtx, .mtx.gz) or directories of them\n"
         "  --gen SPEC                generated matrix: band:n:hw, poisson2d5:g, poisson3d7:g, poisson3d27:g,\n"
         "                            rmat:scale:degree, uniform:n:per_row[:cols], blocks:n:delta:theta:rho\n"
         "  --min-nnz K               skip matrices with fewer entries (after symmetric expansion)\n"
         "  --max-matrices K          stop after K matrices (0: all)\n"
         "  --values random|file      values of A: random in +-[0.5,1.5] (default) or the file's own\n"
         "  --seed S                  seed of A's values and of the dense B (default 1)\n"
         "what to run:\n"
         "  --suite LIST              spmm, spgemm, convert or all (default all)\n"
         "  --n LIST                  SpMM columns of B (default 8,32,128,512)\n"
         "  --layouts LIST            SpMM dense layouts: row,col (default both)\n"
         "  --dense-offset E[,F]      SpMM: B starts E elements into its buffer and C F (default E),\n"
         "                            off 16-byte boundaries where odd (default 0)\n"
         "  --spmm-types LIST         SpMM input types: f32,f16,bf16 (default all three)\n"
         "  --spgemm-types LIST       SpGEMM types: f32,f64 (default both)\n"
         "  --spgemm-modes LIST       malloc,pool: cuSPARSE buffers from cudaMalloc or a warm pool (default both)\n"
         "  --all-paths               SpMM: also time each of sparsetc's device paths by name\n"
         "                            (sparsetc_csr, sparsetc_dcsr, sparsetc_tiled: the selector's data)\n"
         "  --only LIST, --skip LIST  keep / drop variants whose name contains one of the substrings\n"
         "                            (names: csr_alg2/f16/row, bsr16/f32/col, bell32/f16/row, gemm_tf32/row,\n"
         "                            sparsetc/f32/row, cusparse_alg3/f64/pool, sparsetc/f64/api, csr2csc, ...)\n"
         "  --chunk-fraction X        cuSPARSE SpGEMM ALG2/ALG3 chunk fraction (default 0.2)\n"
         "  --dense-max-gb X          cuBLAS GEMM only when the dense A takes at most X GB (default 8)\n"
         "  --ell-max-gb X            Blocked-ELL only when its arrays take at most X GB (default 4)\n"
         "  --ref-max-products X      count nnz(C) on the host for the SpGEMM check up to X products (2e9)\n"
         "timing and checks:\n"
         "  --warmup K                untimed runs before timing (default 3)\n"
         "  --iters K                 timed runs; the median is reported (default 20)\n"
         "  --min-iters K             floor of timed runs when --variant-budget cuts them (default 5)\n"
         "  --variant-budget S        aim at most S seconds of timed runs per variant (default 2; 0: off)\n"
         "  --timeout-per-case S      skip the remaining variants of a case after S seconds (0: none)\n"
         "  --max-seconds S           start no new matrix after S seconds; what ran is reported (0: none)\n"
         "  --no-flush                do not evict L2 before each timed run (warm-cache numbers)\n"
         "  --sample-rows K           rows checked against the float64 host reference (default 256)\n"
         "  --device D                CUDA device (default 0)\n"
         "output:\n"
         "  --csv FILE, --json FILE   every variant's numbers\n"
         "  --help                    this text\n"
         "exit status: 0 done (vendor variants may have failed), 1 a sparsetc variant was wrong,\n"
         "             2 bad arguments or no CUDA device, 3 the CUDA context broke (partial output written)\n";
}

namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

void require_subset(const std::vector<std::string>& got, const std::vector<std::string>& allowed, const char* option) {
  if (got.empty()) throw std::invalid_argument(std::string(option) + " needs at least one value");
  for (const std::string& g : got)
    if (std::find(allowed.begin(), allowed.end(), g) == allowed.end())
      throw std::invalid_argument(std::string(option) + ": unknown value " + g);
}

}  // namespace

Options parse_options(int argc, char** argv) {
  Options o;
  auto value = [&](int& i) -> std::string {
    if (i + 1 >= argc) throw std::invalid_argument(std::string(argv[i]) + " needs a value");
    return argv[++i];
  };
  auto real = [&](int& i) -> double {
    const std::string option = argv[i], text = value(i);
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text.size() || !(v >= 0)) throw std::invalid_argument(option + ": bad number " + text);
    return v;
  };
  auto integer = [&](int& i) -> int64_t {
    const std::string option = argv[i];
    const double v = real(i);
    if (v != double(int64_t(v))) throw std::invalid_argument(option + ": not an integer");
    return int64_t(v);
  };
  std::string suite = "all";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") o.help = true;
    else if (a == "--matrices") {
      for (auto& s : split(value(i))) o.matrices.push_back(s);
    }
    else if (a == "--gen") o.generated.push_back(value(i));
    else if (a == "--min-nnz") o.min_nnz = integer(i);
    else if (a == "--max-matrices") o.max_matrices = integer(i);
    else if (a == "--values") o.values = value(i);
    else if (a == "--seed") o.seed = uint64_t(integer(i));
    else if (a == "--suite") suite = value(i);
    else if (a == "--n") {
      o.n_list.clear();
      for (auto& s : split(value(i))) {
        size_t used = 0;
        long long v = 0;
        try {
          v = std::stoll(s, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != s.size() || v < 1) throw std::invalid_argument("--n: bad value " + s);
        o.n_list.push_back(v);
      }
      if (o.n_list.empty()) throw std::invalid_argument("--n needs at least one value");
    } else if (a == "--layouts") o.layouts = split(value(i));
    else if (a == "--dense-offset") {
      const std::vector<std::string> parts = split(value(i));
      if (parts.empty() || parts.size() > 2) throw std::invalid_argument("--dense-offset takes E or E,F");
      size_t used = 0;
      for (size_t p = 0; p < parts.size(); ++p) {
        const int64_t v = std::stoll(parts[p], &used);
        if (used != parts[p].size() || v < 0) throw std::invalid_argument("--dense-offset: bad value " + parts[p]);
        (p == 0 ? o.b_offset : o.c_offset) = v;
      }
      if (parts.size() == 1) o.c_offset = o.b_offset;
    }
    else if (a == "--spmm-types") o.spmm_types = split(value(i));
    else if (a == "--spgemm-types") o.spgemm_types = split(value(i));
    else if (a == "--spgemm-modes") o.spgemm_modes = split(value(i));
    else if (a == "--only") {
      for (auto& s : split(value(i))) o.only.push_back(s);
    } else if (a == "--skip") {
      for (auto& s : split(value(i))) o.skip.push_back(s);
    }
    else if (a == "--chunk-fraction") o.chunk_fraction = real(i);
    else if (a == "--dense-max-gb") o.dense_max_gb = real(i);
    else if (a == "--ell-max-gb") o.ell_max_gb = real(i);
    else if (a == "--ref-max-products") o.ref_max_products = real(i);
    else if (a == "--warmup") o.warmup = int(integer(i));
    else if (a == "--iters") o.iters = int(integer(i));
    else if (a == "--min-iters") o.min_iters = int(integer(i));
    else if (a == "--variant-budget") o.variant_budget_s = real(i);
    else if (a == "--timeout-per-case") o.timeout_per_case_s = real(i);
    else if (a == "--max-seconds") o.max_seconds = real(i);
    else if (a == "--no-flush") o.flush_l2 = false;
    else if (a == "--all-paths") o.all_paths = true;
    else if (a == "--sample-rows") o.sample_rows = int(integer(i));
    else if (a == "--device") o.device = int(integer(i));
    else if (a == "--csv") o.csv = value(i);
    else if (a == "--json") o.json = value(i);
    else throw std::invalid_argument("unknown option " + a);
  }
  const std::vector<std::string> suites = split(suite);
  require_subset(suites, {"spmm", "spgemm", "convert", "all"}, "--suite");
  const bool all = std::find(suites.begin(), suites.end(), "all") != suites.end();
  auto has = [&](const char* s) { return all || std::find(suites.begin(), suites.end(), s) != suites.end(); };
  o.spmm = has("spmm");
  o.spgemm = has("spgemm");
  o.convert = has("convert");
  require_subset(o.layouts, {"row", "col"}, "--layouts");
  require_subset(o.spmm_types, {"f32", "f16", "bf16"}, "--spmm-types");
  require_subset(o.spgemm_types, {"f32", "f64"}, "--spgemm-types");
  require_subset(o.spgemm_modes, {"malloc", "pool"}, "--spgemm-modes");
  if (o.values != "random" && o.values != "file") throw std::invalid_argument("--values: random or file");
  if (o.iters < 1) throw std::invalid_argument("--iters must be at least 1");
  if (o.min_iters < 1) o.min_iters = 1;
  if (o.min_iters > o.iters) o.min_iters = o.iters;
  if (o.sample_rows < 1) throw std::invalid_argument("--sample-rows must be at least 1");
  if (o.chunk_fraction <= 0 || o.chunk_fraction > 1) throw std::invalid_argument("--chunk-fraction: in (0, 1]");
  if (!o.help && o.matrices.empty() && o.generated.empty())
    throw std::invalid_argument("no inputs: give --matrices and/or --gen");
  return o;
}

bool variant_selected(const Options& o, const std::string& name) {
  auto any = [&](const std::vector<std::string>& list) {
    for (const std::string& s : list)
      if (name.find(s) != std::string::npos) return true;
    return false;
  };
  if (!o.only.empty() && !any(o.only)) return false;
  return !any(o.skip);
}

}  // namespace bench

// Command line of sparsetc_bench.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bench {

struct Options {
  // Inputs.
  std::vector<std::string> matrices;  // Matrix Market files or directories (searched for *.mtx, *.mtx.gz)
  std::vector<std::string> generated; // generator specs (sparsetc_matrix_generate)
  int64_t min_nnz = 0;                // skip matrices with fewer stored entries (after symmetric expansion)
  int64_t max_matrices = 0;           // 0: all that pass the filter
  std::string values = "random";      // random (±[0.5, 1.5], seeded) or file (keep the file's values)
  uint64_t seed = 1;

  // What to run.
  bool spmm = true, spgemm = true, convert = true;
  std::vector<int64_t> n_list = {8, 32, 128, 512};
  std::vector<std::string> layouts = {"row", "col"};
  int64_t b_offset = 0, c_offset = 0;  // SpMM: B and C start this many elements into their buffers
  std::vector<std::string> spmm_types = {"f32", "f16", "bf16"};
  std::vector<std::string> spgemm_types = {"f32", "f64"};
  std::vector<std::string> spgemm_modes = {"malloc", "pool"};
  std::vector<std::string> only, skip;  // substrings of variant names
  double chunk_fraction = 0.2;          // cuSPARSE SpGEMM ALG2/ALG3
  double dense_max_gb = 8.0;            // cuBLAS GEMM only when the dense A fits in this
  double ell_max_gb = 4.0;              // Blocked-ELL only when its arrays fit in this
  double ref_max_products = 2e9;        // host count of nnz(C) for the SpGEMM check up to this

  // Timing and checks.
  int warmup = 3;
  int iters = 20;
  int min_iters = 5;
  double variant_budget_s = 2.0;  // fewer timed runs (not under min_iters) when a variant would take longer
  double timeout_per_case_s = 0;  // 0: none
  double max_seconds = 0;         // start no new matrix after this many seconds (0: no limit)
  bool flush_l2 = true;
  bool all_paths = false;  // SpMM: time each of sparsetc's device paths too (--all-paths)
  int sample_rows = 256;
  int device = 0;

  // Output.
  std::string csv, json;
  bool help = false;
};

// Parses argv; throws std::invalid_argument naming the bad option.
Options parse_options(int argc, char** argv);
const char* usage();

// True when a variant named `name` passes --only / --skip.
bool variant_selected(const Options& o, const std::string& name);

}  // namespace bench

// sparsetc_cli: multiply a Matrix Market file or a generated matrix (SpMM with N columns, SpGEMM
// A*A or A*B) on the GPU when one is present and on the CPU otherwise, verify every result against
// the float64 CPU reference, and print a table. With no arguments it runs an embedded problem.
// With --analyze it prints A's structure statistics as CSV (the SpMM selector's features).
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "cli/runs.hpp"

using namespace sparsetc_cli;

namespace {

sparsetc_matrix_t load(sparsetc_handle_t h, const std::string& path_or_spec, bool is_path, uint64_t seed) {
  sparsetc_matrix_t m = nullptr;
  if (is_path) CLI_CHECK(h, sparsetc_matrix_read_mtx(h, path_or_spec.c_str(), SPARSETC_VALUE_F64, SPARSETC_INDEX_64, &m));
  else CLI_CHECK(h, sparsetc_matrix_generate(h, path_or_spec.c_str(), seed, SPARSETC_VALUE_F64, &m));
  return m;
}

bool looks_like_file(const std::string& s) { return s.find(".mtx") != std::string::npos || s.find('/') != std::string::npos; }

// The matrix's short name: a file's base name without .mtx(.gz), or the generator spec.
std::string short_name(const std::string& path_or_spec) {
  std::string name = path_or_spec.substr(path_or_spec.find_last_of('/') + 1);
  for (const char* suffix : {".gz", ".mtx"}) {
    const std::string s = suffix;
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0)
      name.resize(name.size() - s.size());
  }
  return name;
}

// sparsetc_analyze of A as CSV, every field of sparsetc_analysis_t in declaration order (the
// features bench/scripts/fit_spmm_selector.py joins with the SpMM timings).
void print_analysis(sparsetc_handle_t handle, sparsetc_matrix_t A, const std::string& name, const Options& o) {
  sparsetc_analysis_t a{};
  a.struct_size = sizeof a;
  a.strip_width = o.strip_width;
  CLI_CHECK(handle, sparsetc_analyze(handle, A, nullptr, &a));
  if (o.header)
    std::printf("matrix,rows,cols,nnz,empty_rows,row_length_min,row_length_max,row_length_mean,row_length_std,"
                "density,products,bandwidth,blocks_16x8,blocks_16x16,blocks_8x8,fill_16x8,fill_16x16,fill_8x8,"
                "tile_density_median,tile_density_mean,tile_density_std,strip_width,nonempty_rows,"
                "nonempty_rows_per_strip_mean,h_norm,ssf\n");
  std::printf("%s,%lld,%lld,%lld,%lld,%lld,%lld,%.17g,%.17g,%.17g,%lld,%lld,%lld,%lld,%lld,%.17g,%.17g,%.17g,"
              "%.17g,%.17g,%.17g,%lld,%lld,%.17g,%.17g,%.17g\n",
              name.c_str(), (long long)a.rows, (long long)a.cols, (long long)a.nnz, (long long)a.empty_rows,
              (long long)a.row_length_min, (long long)a.row_length_max, a.row_length_mean, a.row_length_std,
              a.density, (long long)a.products, (long long)a.bandwidth, (long long)a.blocks_16x8,
              (long long)a.blocks_16x16, (long long)a.blocks_8x8, a.fill_16x8, a.fill_16x16, a.fill_8x8,
              a.tile_density_median, a.tile_density_mean, a.tile_density_std, (long long)a.strip_width,
              (long long)a.nonempty_rows, a.nonempty_rows_per_strip_mean, a.h_norm, a.ssf);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parse_options(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "error: %s\n%s", e.what(), usage());
    return 2;
  }
  if (o.help) {
    std::printf("%s", usage());
    return 0;
  }
  const sparsetc_backend_t backend = o.backend == "cpu" ? SPARSETC_BACKEND_CPU
                                     : o.backend == "gpu" ? SPARSETC_BACKEND_GPU
                                                          : SPARSETC_BACKEND_AUTO;
  sparsetc_handle_t handle = nullptr, reference = nullptr;
  CLI_CHECK(nullptr, sparsetc_create_with_backend(&handle, backend, -1));
  CLI_CHECK(nullptr, sparsetc_create_with_backend(&reference, SPARSETC_BACKEND_CPU, -1));
  CLI_CHECK(handle, sparsetc_set_num_threads(handle, o.threads));
  CLI_CHECK(reference, sparsetc_set_num_threads(reference, o.threads));

  char build[256];
  sparsetc_get_build_info(build, sizeof build);
  const std::string name = o.matrix.empty() ? o.generate : o.matrix;
  sparsetc_matrix_t A = load(reference, name, !o.matrix.empty(), o.seed);
  if (o.analyze) {
    print_analysis(reference, A, short_name(name), o);
    sparsetc_matrix_destroy(A);
    sparsetc_destroy(reference);
    sparsetc_destroy(handle);
    return 0;
  }
  sparsetc_matrix_t B = o.matrix_b.empty() ? A : load(reference, o.matrix_b, looks_like_file(o.matrix_b), o.seed + 7);

  std::vector<Row> rows;
  if (o.op != "spgemm") rows.push_back(run_spmm(handle, reference, A, o));
  if (o.op != "spmm") rows.push_back(run_spgemm(handle, reference, A, B, o));

  std::printf("%s\nmatrix: %s, precision %s, median of %d runs after %d warm-up\n\n", build, name.c_str(),
              o.precision.c_str(), o.iterations, o.warmup);
  std::printf("%-7s %-4s %-14s %9s %9s %11s %5s %11s %10s %10s %s\n", "op", "on", "algorithm", "rows", "cols", "nnz",
              "N", "time(ms)", "GFLOP/s", "rel.err", "check");
  bool all_ok = true;
  for (const Row& r : rows) {
    std::printf("%-7s %-4s %-14s %9lld %9lld %11lld %5s %11.4f %10.2f %10.2e %s\n", r.op.c_str(), r.where.c_str(),
                r.alg.c_str(), (long long)r.rows, (long long)r.cols, (long long)r.nnz,
                r.n ? std::to_string(r.n).c_str() : "-", r.median_ms, r.gflops, r.error,
                r.verified ? "ok" : "FAILED");
    all_ok = all_ok && r.verified;
  }
  if (B != A) sparsetc_matrix_destroy(B);
  sparsetc_matrix_destroy(A);
  sparsetc_destroy(reference);
  sparsetc_destroy(handle);
  return all_ok ? 0 : 1;
}

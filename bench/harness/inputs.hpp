// Input matrices: Matrix Market files and generator specs, loaded through the sparsetc C API into a
// host CSR that every suite, format builder and reference reads.
#pragma once

#include <sparsetc/sparsetc.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "harness/options.hpp"

namespace bench {

// Zero-based CSR on the host, sorted column indices within each row.
struct HostCsr {
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> row_ptr;  // rows + 1
  std::vector<int32_t> col;      // nnz
  std::vector<double> val;       // nnz
  int64_t nnz() const { return int64_t(col.size()); }
};

struct InputSpec {
  std::string name;  // file name without .mtx/.mtx.gz, or the generator spec
  std::string source;
  bool generated = false;
};

struct MatrixInput {
  std::string name;
  HostCsr A;
};

// The inputs named by --matrices (directories expanded, sorted by name) and --gen, in that order.
// Throws std::runtime_error for a path that does not exist.
std::vector<InputSpec> list_inputs(const Options& o);

// Reads or generates one input with `cpu` (a CPU-backend handle); with --values random the values
// are replaced by sparse_value(seed, i, j). Throws std::runtime_error with the library's message.
HostCsr load_input(sparsetc_handle_t cpu, const InputSpec& spec, const Options& o);

HostCsr transpose(const HostCsr& a);
// Multiplications of A·B (sum over A's entries (i, k) of B's row length k).
int64_t count_products(const HostCsr& a, const HostCsr& b);
int64_t max_row_length(const HostCsr& a);
double max_abs_value(const HostCsr& a);

// Runs body(begin, end) over [0, n) split among the hardware threads.
template <typename Body>
void parallel_for(int64_t n, Body body) {
  const int64_t threads = std::max<int64_t>(1, std::min<int64_t>(std::thread::hardware_concurrency(), n / 1024 + 1));
  if (threads == 1) {
    body(int64_t(0), n);
    return;
  }
  std::vector<std::thread> pool;
  const int64_t chunk = (n + threads - 1) / threads;
  for (int64_t t = 0; t < threads; ++t) {
    const int64_t begin = t * chunk, end = std::min(n, begin + chunk);
    if (begin < end) pool.emplace_back([=, &body] { body(begin, end); });
  }
  for (auto& th : pool) th.join();
}

}  // namespace bench

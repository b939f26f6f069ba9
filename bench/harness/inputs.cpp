#include "harness/inputs.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <stdexcept>

#include "harness/values.hpp"

namespace bench {
namespace {

namespace fs = std::filesystem;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_matrix_file(const std::string& name) { return ends_with(name, ".mtx") || ends_with(name, ".mtx.gz"); }

std::string matrix_name(const fs::path& path) {
  std::string name = path.filename().string();
  if (ends_with(name, ".gz")) name.resize(name.size() - 3);
  if (ends_with(name, ".mtx")) name.resize(name.size() - 4);
  return name;
}

std::string library_error(sparsetc_handle_t h, sparsetc_status_t s) {
  char message[1024] = {0};
  sparsetc_get_last_error(h, message, sizeof message);
  return std::string(sparsetc_get_status_name(s)) + ": " + message;
}

// Sorts the column indices of rows that are not sorted (values follow).
void sort_rows(HostCsr& a) {
  parallel_for(a.rows, [&](int64_t begin, int64_t end) {
    std::vector<std::pair<int32_t, double>> entries;
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = a.row_ptr[r], e = a.row_ptr[r + 1];
      if (std::is_sorted(a.col.begin() + b, a.col.begin() + e)) continue;
      entries.clear();
      for (int64_t k = b; k < e; ++k) entries.emplace_back(a.col[k], a.val[k]);
      std::sort(entries.begin(), entries.end());
      for (int64_t k = b; k < e; ++k) {
        a.col[k] = entries[size_t(k - b)].first;
        a.val[k] = entries[size_t(k - b)].second;
      }
    }
  });
}

}  // namespace

std::vector<InputSpec> list_inputs(const Options& o) {
  std::vector<InputSpec> out;
  for (const std::string& entry : o.matrices) {
    const fs::path path(entry);
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<fs::path> files;
      for (const auto& f : fs::directory_iterator(path, ec))
        if (f.is_regular_file() && is_matrix_file(f.path().filename().string())) files.push_back(f.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) out.push_back({matrix_name(f), f.string(), false});
    } else if (fs::is_regular_file(path, ec)) {
      out.push_back({matrix_name(path), path.string(), false});
    } else {
      throw std::runtime_error("--matrices: no such file or directory: " + entry);
    }
  }
  for (const std::string& spec : o.generated) out.push_back({spec, spec, true});
  return out;
}

HostCsr load_input(sparsetc_handle_t cpu, const InputSpec& spec, const Options& o) {
  sparsetc_matrix_t m = nullptr, csr = nullptr;
  sparsetc_status_t s = spec.generated
                            ? sparsetc_matrix_generate(cpu, spec.source.c_str(), o.seed, SPARSETC_VALUE_F64, &m)
                            : sparsetc_matrix_read_mtx(cpu, spec.source.c_str(), SPARSETC_VALUE_F64, SPARSETC_INDEX_64, &m);
  if (s != SPARSETC_STATUS_SUCCESS) throw std::runtime_error(library_error(cpu, s));
  s = sparsetc_matrix_convert(cpu, m, SPARSETC_FORMAT_CSR, SPARSETC_INDEX_64, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO,
                              SPARSETC_VALUE_F64, &csr);
  sparsetc_matrix_destroy(m);
  if (s != SPARSETC_STATUS_SUCCESS) throw std::runtime_error(library_error(cpu, s));
  sparsetc_matrix_info_t info = {};
  info.struct_size = sizeof info;
  void *offsets = nullptr, *indices = nullptr, *values = nullptr;
  s = sparsetc_matrix_get_info(csr, &info);
  if (s == SPARSETC_STATUS_SUCCESS) s = sparsetc_matrix_get_arrays(csr, &offsets, &indices, &values);
  if (s != SPARSETC_STATUS_SUCCESS) {
    sparsetc_matrix_destroy(csr);
    throw std::runtime_error(library_error(nullptr, s));
  }
  HostCsr a;
  a.rows = info.rows;
  a.cols = info.cols;
  a.row_ptr.assign(static_cast<const int64_t*>(offsets), static_cast<const int64_t*>(offsets) + info.rows + 1);
  a.col.assign(static_cast<const int32_t*>(indices), static_cast<const int32_t*>(indices) + info.nnz);
  a.val.assign(static_cast<const double*>(values), static_cast<const double*>(values) + info.nnz);
  sparsetc_matrix_destroy(csr);
  sort_rows(a);
  if (o.values == "random") {
    parallel_for(a.rows, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r)
        for (int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) a.val[k] = sparse_value(o.seed, r, a.col[k]);
    });
  }
  return a;
}

HostCsr transpose(const HostCsr& a) {
  HostCsr t;
  t.rows = a.cols;
  t.cols = a.rows;
  t.row_ptr.assign(size_t(a.cols + 1), 0);
  for (int32_t c : a.col) ++t.row_ptr[size_t(c) + 1];
  std::partial_sum(t.row_ptr.begin(), t.row_ptr.end(), t.row_ptr.begin());
  t.col.resize(a.col.size());
  t.val.resize(a.val.size());
  std::vector<int64_t> next(t.row_ptr.begin(), t.row_ptr.end() - 1);
  for (int64_t r = 0; r < a.rows; ++r)  // rows in order: each column of the transpose comes out sorted
    for (int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      const int64_t slot = next[size_t(a.col[k])]++;
      t.col[slot] = int32_t(r);
      t.val[slot] = a.val[k];
    }
  return t;
}

int64_t count_products(const HostCsr& a, const HostCsr& b) {
  int64_t total = 0;
  for (int32_t k : a.col) total += b.row_ptr[size_t(k) + 1] - b.row_ptr[size_t(k)];
  return total;
}

int64_t max_row_length(const HostCsr& a) {
  int64_t best = 0;
  for (int64_t r = 0; r < a.rows; ++r) best = std::max(best, a.row_ptr[r + 1] - a.row_ptr[r]);
  return best;
}

double max_abs_value(const HostCsr& a) {
  double best = 0;
  for (double v : a.val) best = std::max(best, std::fabs(v));
  return best;
}

}  // namespace bench

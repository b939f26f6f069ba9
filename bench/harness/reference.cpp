#include "harness/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "harness/values.hpp"

namespace bench {
namespace {

std::string format(const char* fmt, double a, double b, double c) {
  char text[160];
  std::snprintf(text, sizeof text, fmt, a, b, c);
  return text;
}

}  // namespace

double spmm_tolerance(cudaDataType input_type) { return input_type == CUDA_R_32F ? 1e-4 : 1e-2; }
double spgemm_tolerance(cudaDataType type) { return type == CUDA_R_64F ? 1e-10 : 1e-4; }

std::vector<int64_t> sample_rows(const HostCsr& a, int count, uint64_t seed) {
  std::vector<int64_t> rows;
  if (a.rows == 0) return rows;
  int64_t longest = 0;
  for (int64_t r = 0; r < a.rows; ++r)
    if (a.row_ptr[r + 1] - a.row_ptr[r] > a.row_ptr[longest + 1] - a.row_ptr[longest]) longest = r;
  rows = {0, a.rows - 1, longest};
  const int64_t want = std::min<int64_t>(count, a.rows);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> pick(0, a.rows - 1);
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  while (int64_t(rows.size()) < want) {
    const int64_t r = pick(rng);
    auto at = std::lower_bound(rows.begin(), rows.end(), r);
    if (at == rows.end() || *at != r) rows.insert(at, r);
  }
  return rows;
}

std::vector<double> rounded_values(const HostCsr& a, cudaDataType type) {
  std::vector<double> out(a.val.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = round_to(type, a.val[i]);
  return out;
}

SpmmReference spmm_reference(const HostCsr& a, const std::vector<double>& a_values, int64_t n, cudaDataType b_type,
                             uint64_t b_seed, const std::vector<int64_t>& rows) {
  SpmmReference ref;
  ref.rows = rows;
  ref.n = n;
  ref.value.assign(rows.size() * size_t(n), 0.0);
  ref.bound.assign(rows.size() * size_t(n), 0.0);
  parallel_for(int64_t(rows.size()), [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s) {
      const int64_t r = rows[size_t(s)];
      double* value = &ref.value[size_t(s * n)];
      double* bound = &ref.bound[size_t(s * n)];
      for (int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
        const double av = a_values[size_t(k)];
        for (int64_t j = 0; j < n; ++j) {
          const double bv = round_to(b_type, dense_value(b_seed, a.col[k], j));
          value[j] += av * bv;
          bound[j] += std::fabs(av * bv);
        }
      }
    }
  });
  return ref;
}

CheckResult check_spmm(const SpmmReference& ref, const std::vector<float>& got, unsigned long long nonfinite,
                       double tol) {
  CheckResult c;
  double num = 0, den = 0;
  int64_t bad = 0, first_bad = -1;
  for (size_t e = 0; e < ref.value.size(); ++e) {
    const double g = got[e], w = ref.value[e], d = g - w;
    num += d * d;
    den += w * w;
    if (!(std::fabs(d) <= tol * ref.bound[e])) {  // NaN fails too
      if (first_bad < 0) first_bad = int64_t(e);
      ++bad;
    }
  }
  c.rel_err = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  if (nonfinite > 0) {
    c.ok = false;
    c.message = std::to_string(nonfinite) + " entries of C are NaN/Inf (unwritten or overflowed)";
  }
  if (bad > 0) {
    c.ok = false;
    const int64_t row = ref.rows[size_t(first_bad / ref.n)], col = first_bad % ref.n;
    if (!c.message.empty()) c.message += "; ";
    c.message += std::to_string(bad) + " of " + std::to_string(ref.value.size()) + " sampled entries off, first C(" +
                 std::to_string(row) + "," + std::to_string(col) + ")" +
                 format(": got %.9g, want %.9g (bound %.3g)", got[size_t(first_bad)], ref.value[size_t(first_bad)],
                        tol * ref.bound[size_t(first_bad)]);
  }
  return c;
}

int64_t spgemm_nnz(const HostCsr& a, const HostCsr& b) {
  std::vector<int64_t> per_row(size_t(a.rows), 0);
  parallel_for(a.rows, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> mark(size_t(b.cols), -1);
    for (int64_t r = begin; r < end; ++r) {
      int64_t count = 0;
      for (int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
        const int64_t br = a.col[k];
        for (int64_t q = b.row_ptr[br]; q < b.row_ptr[br + 1]; ++q) {
          int64_t& m = mark[size_t(b.col[q])];
          if (m != r) {
            m = r;
            ++count;
          }
        }
      }
      per_row[size_t(r)] = count;
    }
  });
  int64_t total = 0;
  for (int64_t c : per_row) total += c;
  return total;
}

SpgemmReference spgemm_reference(const HostCsr& a, const std::vector<double>& a_values, const HostCsr& b,
                                 const std::vector<double>& b_values, const std::vector<int64_t>& rows,
                                 int64_t nnz_total) {
  SpgemmReference ref;
  ref.rows = rows;
  ref.nnz = nnz_total;
  std::vector<std::vector<int32_t>> cols(rows.size());
  std::vector<std::vector<double>> value(rows.size()), bound(rows.size());
  parallel_for(int64_t(rows.size()), [&](int64_t begin, int64_t end) {
    std::vector<double> acc(size_t(b.cols), 0.0), abs_acc(size_t(b.cols), 0.0);
    std::vector<char> seen(size_t(b.cols), 0);
    for (int64_t s = begin; s < end; ++s) {
      const int64_t r = rows[size_t(s)];
      auto& c = cols[size_t(s)];
      for (int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
        const int64_t br = a.col[k];
        const double av = a_values[size_t(k)];
        for (int64_t q = b.row_ptr[br]; q < b.row_ptr[br + 1]; ++q) {
          const int32_t j = b.col[q];
          if (!seen[size_t(j)]) {
            seen[size_t(j)] = 1;
            c.push_back(j);
          }
          acc[size_t(j)] += av * b_values[size_t(q)];
          abs_acc[size_t(j)] += std::fabs(av * b_values[size_t(q)]);
        }
      }
      std::sort(c.begin(), c.end());
      for (int32_t j : c) {
        value[size_t(s)].push_back(acc[size_t(j)]);
        bound[size_t(s)].push_back(abs_acc[size_t(j)]);
        acc[size_t(j)] = abs_acc[size_t(j)] = 0;
        seen[size_t(j)] = 0;
      }
    }
  });
  ref.offsets.push_back(0);
  for (size_t s = 0; s < rows.size(); ++s) {
    ref.cols.insert(ref.cols.end(), cols[s].begin(), cols[s].end());
    ref.value.insert(ref.value.end(), value[s].begin(), value[s].end());
    ref.bound.insert(ref.bound.end(), bound[s].begin(), bound[s].end());
    ref.offsets.push_back(int64_t(ref.cols.size()));
  }
  return ref;
}

CheckResult check_spgemm(const SpgemmReference& ref, const SpgemmOutput& got, double tol) {
  CheckResult c;
  auto fail = [&](const std::string& why) {
    c.ok = false;
    if (!c.message.empty()) c.message += "; ";
    c.message += why;
  };
  if (ref.nnz >= 0 && got.nnz != ref.nnz)
    fail("nnz(C) = " + std::to_string(got.nnz) + ", want " + std::to_string(ref.nnz));
  if (got.row_ptr.empty() || got.row_ptr.front() != 0 || got.row_ptr.back() != got.nnz)
    fail("row offsets do not run from 0 to nnz(C)");
  if (got.bad_rows) fail(std::to_string(got.bad_rows) + " rows with bad offsets");
  if (got.bad_entries) fail(std::to_string(got.bad_entries) + " entries out of range or unsorted");
  if (got.nonfinite) fail(std::to_string(got.nonfinite) + " NaN/Inf values");
  if (!c.ok) return c;

  double num = 0, den = 0;
  size_t at = 0;
  for (size_t s = 0; s < ref.rows.size(); ++s) {
    const int64_t r = ref.rows[s];
    const int64_t want_begin = ref.offsets[s], want_len = ref.offsets[s + 1] - want_begin;
    const int64_t got_len = got.row_ptr[size_t(r + 1)] - got.row_ptr[size_t(r)];
    if (got_len != want_len) {
      fail("row " + std::to_string(r) + " has " + std::to_string(got_len) + " entries, want " +
           std::to_string(want_len));
      return c;
    }
    for (int64_t i = 0; i < want_len; ++i, ++at) {
      const size_t w = size_t(want_begin + i);
      if (got.cols[at] != ref.cols[w]) {
        fail("row " + std::to_string(r) + " entry " + std::to_string(i) + ": column " + std::to_string(got.cols[at]) +
             ", want " + std::to_string(ref.cols[w]));
        return c;
      }
      const double d = got.values[at] - ref.value[w];
      num += d * d;
      den += ref.value[w] * ref.value[w];
      if (!(std::fabs(d) <= tol * ref.bound[w])) {
        fail("C(" + std::to_string(r) + "," + std::to_string(ref.cols[w]) + ")" +
             format(": got %.17g, want %.17g (bound %.3g)", got.values[at], ref.value[w], tol * ref.bound[w]));
        return c;
      }
    }
  }
  c.rel_err = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return c;
}

}  // namespace bench

// Random corruptions of valid sparse arrays through the C API (host memory, CPU backend): each round
// builds a valid CSR, CSC or COO matrix (index widths, base and value type drawn), checks that it
// is accepted, then breaks it in one drawn way (entries out of order, a repeated entry, an index out
// of range, offsets that do not rise or do not start or end where they must, a NaN value at the
// VALUES level, a missing array, a negative size) and requires the status documented for that
// fault, a message, and no matrix. The valgrind leak check of the error paths
// (capi_error_paths_leak_free) runs it too. SPARSETC_FUZZ_ROUNDS sets the rounds (default 150);
// SPARSETC_TEST_SEED replays a run.
#include <gtest/gtest.h>
#include <sparsetc/sparsetc.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "capi_support.hpp"
#include "test_support.hpp"

using namespace sparsetc_test;

namespace {

enum class Fault { none, unsorted, repeated, index_too_large, index_below_base, offsets_fall, first_offset,
                   last_offset, nan_value, null_indices, negative_rows };

const char* fault_name(Fault f) {
  static const char* names[] = {"none",          "unsorted",       "repeated",     "index too large",
                                "index below base", "offsets fall", "first offset", "last offset",
                                "NaN value",     "NULL indices",   "negative rows"};
  return names[int(f)];
}

// The arrays of one matrix as int64 and double; written out in the drawn types at the end.
struct Arrays {
  sparsetc_format_t format = SPARSETC_FORMAT_CSR;
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> first, second;  // CSR/CSC: offsets, indices; COO: row indices, column indices
  std::vector<double> values;
};

// A valid matrix: entries sorted within each compressed line (CSR/CSC) or in row-major order (COO).
Arrays valid_arrays(std::mt19937_64& rng, sparsetc_format_t format, int64_t base) {
  std::uniform_int_distribution<int64_t> size(1, 40);
  std::uniform_real_distribution<double> u(0, 1);
  Arrays a;
  a.format = format;
  a.rows = size(rng);
  a.cols = size(rng);
  const double density = 0.05 + 0.3 * u(rng);
  const bool csc = format == SPARSETC_FORMAT_CSC;
  const int64_t lines = csc ? a.cols : a.rows, extent = csc ? a.rows : a.cols;
  a.first.push_back(base);
  for (int64_t i = 0; i < lines; ++i) {
    for (int64_t j = 0; j < extent; ++j)
      if (u(rng) < density) {
        if (format == SPARSETC_FORMAT_COO) a.first.push_back(i + base);
        a.second.push_back(j + base);
        a.values.push_back((u(rng) < 0.5 ? -1 : 1) * (0.5 + u(rng)));
      }
    if (format != SPARSETC_FORMAT_COO) a.first.push_back(int64_t(a.second.size()) + base);
  }
  if (format == SPARSETC_FORMAT_COO) a.first.erase(a.first.begin());
  return a;
}

// Positions p with a next entry in the same compressed line (CSR/CSC) or row (COO).
std::vector<size_t> pairs_in_a_line(const Arrays& a) {
  std::vector<size_t> out;
  if (a.format == SPARSETC_FORMAT_COO) {
    for (size_t p = 0; p + 1 < a.second.size(); ++p)
      if (a.first[p] == a.first[p + 1]) out.push_back(p);
    return out;
  }
  for (size_t line = 0; line + 1 < a.first.size(); ++line)
    for (int64_t p = a.first[line]; p + 1 < a.first[line + 1]; ++p) out.push_back(size_t(p - a.first[0]));
  return out;
}

// Breaks `a` by `fault` where it can; returns the status the library must give, or SUCCESS when the
// fault does not apply to this matrix (no pair in a line, no entry).
sparsetc_status_t corrupt(Arrays& a, Fault fault, int64_t base, std::mt19937_64& rng, sparsetc_duplicates_t* policy) {
  const std::vector<size_t> pairs = pairs_in_a_line(a);
  auto any = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  const bool compressed = a.format != SPARSETC_FORMAT_COO;
  const int64_t extent = a.format == SPARSETC_FORMAT_CSC ? a.rows : a.cols;
  switch (fault) {
    case Fault::unsorted: {
      if (pairs.empty()) return SPARSETC_STATUS_SUCCESS;
      const size_t p = pairs[any(pairs.size())];
      std::swap(a.second[p], a.second[p + 1]);
      // A COO in any order is valid; its entries only have to be distinct.
      return compressed ? SPARSETC_STATUS_UNSORTED_INDICES : SPARSETC_STATUS_SUCCESS;
    }
    case Fault::repeated: {
      if (pairs.empty()) return SPARSETC_STATUS_SUCCESS;
      const size_t p = pairs[any(pairs.size())];
      a.second[p + 1] = a.second[p];
      if (!compressed && std::uniform_int_distribution<int>(0, 1)(rng)) {
        *policy = SPARSETC_DUPLICATES_SUM;  // a COO's repeats are summed when the handle says so
        return SPARSETC_STATUS_SUCCESS;
      }
      return SPARSETC_STATUS_DUPLICATE_ENTRY;
    }
    case Fault::index_too_large:
    case Fault::index_below_base: {
      if (a.second.empty()) return SPARSETC_STATUS_SUCCESS;
      const bool too_large = fault == Fault::index_too_large;
      const int64_t beyond = extent + base + std::uniform_int_distribution<int64_t>(0, 3)(rng);
      if (!compressed) {  // a COO's entries may come in any order: any entry, its row or its column
        const size_t p = any(a.second.size());
        const bool row = std::uniform_int_distribution<int>(0, 1)(rng) == 1;
        (row ? a.first : a.second)[p] = too_large ? (row ? a.rows + base : beyond) : base - 1;
        return SPARSETC_STATUS_INVALID_INDEX;
      }
      // The last entry of a line made too large, or its first made too small: still in order, so
      // the fault is the range alone.
      std::vector<size_t> lines;
      for (size_t line = 0; line + 1 < a.first.size(); ++line)
        if (a.first[line + 1] > a.first[line]) lines.push_back(line);
      const size_t line = lines[any(lines.size())];
      const int64_t first = a.first[line] - a.first[0], last = a.first[line + 1] - a.first[0] - 1;
      if (too_large) a.second[size_t(last)] = beyond;
      else a.second[size_t(first)] = base - 1;
      return SPARSETC_STATUS_INVALID_INDEX;
    }
    case Fault::offsets_fall: {
      if (!compressed || a.first.size() < 3) return SPARSETC_STATUS_SUCCESS;
      const size_t i = 1 + any(a.first.size() - 2);
      a.first[i] = a.first[i + 1] + 1;
      return SPARSETC_STATUS_INVALID_ROW_OFFSETS;
    }
    case Fault::first_offset:
      if (!compressed) return SPARSETC_STATUS_SUCCESS;
      a.first[0] += 1 + int64_t(any(3));
      return SPARSETC_STATUS_INVALID_ROW_OFFSETS;
    case Fault::last_offset:
      if (!compressed) return SPARSETC_STATUS_SUCCESS;
      a.first.back() += 1;
      return SPARSETC_STATUS_INVALID_ROW_OFFSETS;
    case Fault::nan_value:
      if (a.values.empty()) return SPARSETC_STATUS_SUCCESS;
      a.values[any(a.values.size())] = std::uniform_int_distribution<int>(0, 1)(rng)
                                           ? std::numeric_limits<double>::quiet_NaN()
                                           : -std::numeric_limits<double>::infinity();
      return SPARSETC_STATUS_NAN_OR_INF;
    case Fault::null_indices:
      return a.second.empty() ? SPARSETC_STATUS_SUCCESS : SPARSETC_STATUS_NULL_POINTER;
    case Fault::negative_rows:
      a.rows = -a.rows;
      return SPARSETC_STATUS_INVALID_VALUE;
    default:
      return SPARSETC_STATUS_SUCCESS;
  }
}

// Values in the drawn value type (f64 or f32).
std::vector<uint8_t> as_values(const std::vector<double>& x, sparsetc_value_type_t type) {
  std::vector<uint8_t> out(x.size() * (type == SPARSETC_VALUE_F64 ? 8 : 4));
  for (size_t i = 0; i < x.size(); ++i) {
    if (type == SPARSETC_VALUE_F64) {
      std::memcpy(out.data() + 8 * i, &x[i], 8);
    } else {
      const float v = float(x[i]);
      std::memcpy(out.data() + 4 * i, &v, 4);
    }
  }
  return out;
}

struct Drawn {
  sparsetc_index_type_t offsets, indices;
  sparsetc_index_base_t base;
  sparsetc_value_type_t type;
};

sparsetc_status_t create(sparsetc_handle_t h, const Arrays& a, const Drawn& t, bool null_indices,
                         sparsetc_matrix_t* m) {
  const std::vector<uint8_t> first =
      index_bytes(a.first, a.format == SPARSETC_FORMAT_COO ? t.indices : t.offsets);
  const std::vector<uint8_t> second = index_bytes(a.second, t.indices), values = as_values(a.values, t.type);
  const void* indices = null_indices ? nullptr : second.data();
  const int64_t nnz = int64_t(a.second.size());
  const sparsetc_ownership_t ownership = SPARSETC_COPY;  // the arrays here live for this call only
  switch (a.format) {
    case SPARSETC_FORMAT_CSR:
      return sparsetc_matrix_create_csr(h, m, a.rows, a.cols, nnz, first.data(), indices, values.data(), t.offsets,
                                        t.indices, t.base, t.type, SPARSETC_MEMORY_HOST, ownership);
    case SPARSETC_FORMAT_CSC:
      return sparsetc_matrix_create_csc(h, m, a.rows, a.cols, nnz, first.data(), indices, values.data(), t.offsets,
                                        t.indices, t.base, t.type, SPARSETC_MEMORY_HOST, ownership);
    default:
      return sparsetc_matrix_create_coo(h, m, a.rows, a.cols, nnz, first.data(), indices, values.data(), t.indices,
                                        t.base, t.type, SPARSETC_MEMORY_HOST, ownership);
  }
}

}  // namespace

TEST(ErrorFuzz, RandomCorruptionsOfValidArraysAreRefusedWithTheirStatus) {
  const char* env = std::getenv("SPARSETC_FUZZ_ROUNDS");
  const int rounds = env ? std::max(1, std::atoi(env)) : 150;
  const uint64_t seed = fresh_seed();
  std::cout << "[ fuzz ] seed " << seed << " (SPARSETC_TEST_SEED replays the run), " << rounds << " rounds\n";
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  int refused = 0, accepted = 0;
  for (int round = 0; round < rounds; ++round) {
    const sparsetc_format_t format =
        pick(3) == 0 ? SPARSETC_FORMAT_COO : pick(2) ? SPARSETC_FORMAT_CSR : SPARSETC_FORMAT_CSC;
    const Drawn t{pick(2) ? SPARSETC_INDEX_64 : SPARSETC_INDEX_32, pick(2) ? SPARSETC_INDEX_64 : SPARSETC_INDEX_32,
                  pick(4) == 0 ? SPARSETC_BASE_ONE : SPARSETC_BASE_ZERO,
                  pick(2) ? SPARSETC_VALUE_F64 : SPARSETC_VALUE_F32};
    Drawn drawn = t;
    if (format == SPARSETC_FORMAT_COO) drawn.offsets = drawn.indices;
    const int64_t base = drawn.base == SPARSETC_BASE_ONE ? 1 : 0;
    Arrays a = valid_arrays(rng, format, base);
    const Fault fault = Fault(1 + pick(10));
    const std::string what = "round " + std::to_string(round) + ": " + std::to_string(a.rows) + "x" +
                             std::to_string(a.cols) + " " +
                             (format == SPARSETC_FORMAT_CSR   ? "CSR"
                              : format == SPARSETC_FORMAT_CSC ? "CSC"
                                                              : "COO") +
                             " with " + std::to_string(a.second.size()) + " entries, base " + std::to_string(base) +
                             ", fault: " + fault_name(fault);
    SCOPED_TRACE(what);
    sparsetc_handle_t h = nullptr;
    ASSERT_EQ(sparsetc_create_with_backend(&h, SPARSETC_BACKEND_CPU, 0), SPARSETC_STATUS_SUCCESS);
    // The valid matrix first.
    sparsetc_matrix_t m = nullptr;
    ASSERT_EQ(create(h, a, drawn, false, &m), SPARSETC_STATUS_SUCCESS) << message_of(h);
    sparsetc_matrix_destroy(m);
    m = nullptr;
    // Then broken.
    sparsetc_duplicates_t policy = SPARSETC_DUPLICATES_ERROR;
    const sparsetc_status_t want = corrupt(a, fault, base, rng, &policy);
    ASSERT_EQ(sparsetc_set_duplicates(h, policy), SPARSETC_STATUS_SUCCESS);
    if (fault == Fault::nan_value) {
      ASSERT_EQ(sparsetc_set_validation(h, SPARSETC_VALIDATE_VALUES), SPARSETC_STATUS_SUCCESS);
    }
    const sparsetc_status_t got = create(h, a, drawn, fault == Fault::null_indices, &m);
    EXPECT_EQ(got, want) << sparsetc_get_status_name(got) << " (want " << sparsetc_get_status_name(want)
                         << "): " << message_of(h);
    if (got == SPARSETC_STATUS_SUCCESS) {
      ++accepted;
    } else {
      ++refused;
      EXPECT_EQ(m, nullptr) << "a refused matrix was made";
      EXPECT_FALSE(message_of(h).empty()) << "a refusal without a message";
    }
    sparsetc_matrix_destroy(m);
    sparsetc_destroy(h);
  }
  std::cout << "[ fuzz ] refused " << refused << ", accepted " << accepted << " (faults that do not apply)\n";
}

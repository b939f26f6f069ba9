// validate_raw: checks of raw user arrays at a selectable level, naming the first offender in the
// caller's numbering. Scans are O(nnz) and parallel; each chunk finds its first offender and the
// smallest position wins, so the report does not depend on the schedule.
#include <algorithm>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "core/types.hpp"
#include "formats/raw.hpp"
#include "formats/values.hpp"

namespace sparsetc::detail {
namespace {

constexpr int64_t kRowChunk = 1024;
constexpr int64_t kMaxSize = int64_t(1) << 60;  // keeps every byte count and "+ 1" far from overflow
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kNone = std::numeric_limits<int64_t>::max();

bool is_valid_format(sparsetc_format_t f) {
  return f == SPARSETC_FORMAT_CSR || f == SPARSETC_FORMAT_CSC || f == SPARSETC_FORMAT_COO;
}

const char* offsets_name(sparsetc_format_t f) {
  return f == SPARSETC_FORMAT_CSR ? "row_offsets" : f == SPARSETC_FORMAT_CSC ? "col_offsets" : "row_indices";
}
const char* indices_name(sparsetc_format_t f) { return f == SPARSETC_FORMAT_CSC ? "row_indices" : "col_indices"; }

// " (1-based)" after a message whose positions are one-based.
const char* numbering(const RawSparse& raw) { return raw.base == SPARSETC_BASE_ONE ? " (1-based)" : ""; }

void check_arguments(const RawSparse& raw, sparsetc_duplicates_t duplicates) {
  const auto invalid = SPARSETC_STATUS_INVALID_VALUE;
  require(is_valid_format(raw.format), invalid, "unknown format ", raw.format);
  require(is_valid_index_type(raw.offset_type), invalid, "unknown offset type ", raw.offset_type);
  require(is_valid_index_type(raw.index_type), invalid, "unknown index type ", raw.index_type);
  require(is_valid_base(raw.base), invalid, "unknown index base ", raw.base);
  require(is_valid_value_type(raw.value_type), invalid, "unknown value type ", raw.value_type);
  require(duplicates == SPARSETC_DUPLICATES_ERROR || duplicates == SPARSETC_DUPLICATES_SUM, invalid,
          "unknown duplicates policy ", duplicates);
  require(raw.rows >= 0, invalid, "rows = ", raw.rows, " is negative");
  require(raw.cols >= 0, invalid, "cols = ", raw.cols, " is negative");
  require(raw.nnz >= 0, invalid, "nnz = ", raw.nnz, " is negative");
  const bool coo = raw.format == SPARSETC_FORMAT_COO;
  require(!coo || raw.offset_type == raw.index_type, SPARSETC_STATUS_TYPE_MISMATCH,
          "COO row and column indices must have one type, but offset_type is ", index_type_name(raw.offset_type),
          " and index_type is ", index_type_name(raw.index_type));

  const auto overflow = SPARSETC_STATUS_SIZE_OVERFLOW;
  require(raw.rows <= kMaxSize, overflow, "rows = ", raw.rows, " is too large (at most 2^60)");
  require(raw.cols <= kMaxSize, overflow, "cols = ", raw.cols, " is too large (at most 2^60)");
  require(raw.nnz <= kMaxSize, overflow, "nnz = ", raw.nnz, " is too large (at most 2^60)");
  if (raw.index_type == SPARSETC_INDEX_32) {
    // Both dimensions: row and column numbers of an int32 matrix are int32 everywhere (kernels,
    // cuSPARSE's 32-bit mode), not only the ones its index array stores.
    require(raw.rows <= kInt32Max, overflow, "rows = ", raw.rows, " does not fit int32 indices (at most ", kInt32Max,
            ")");
    require(raw.cols <= kInt32Max, overflow, "cols = ", raw.cols, " does not fit int32 indices (at most ", kInt32Max,
            ")");
  }
  if (!coo && raw.offset_type == SPARSETC_INDEX_32)
    require(raw.nnz + raw.base <= kInt32Max, overflow, "nnz = ", raw.nnz, " does not fit int32 offsets (at most ",
            kInt32Max - raw.base, " with base ", raw.base, ")");

  const auto null = SPARSETC_STATUS_NULL_POINTER;
  if (coo)
    require(raw.offsets != nullptr || raw.nnz == 0, null, "row_indices is NULL but nnz = ", raw.nnz);
  else
    require(raw.offsets != nullptr, null, offsets_name(raw.format), " is NULL (it holds ",
            raw.format == SPARSETC_FORMAT_CSR ? "rows" : "cols", " + 1 = ",
            (raw.format == SPARSETC_FORMAT_CSR ? raw.rows : raw.cols) + 1, " offsets)");
  require(raw.indices != nullptr || raw.nnz == 0, null, indices_name(raw.format), " is NULL but nnz = ", raw.nnz);
  require(raw.values != nullptr || raw.nnz == 0, null, "values is NULL but nnz = ", raw.nnz);
}

// CSR or CSC: offsets (outer + 1) of type O, indices (nnz) of type I.
template <typename O, typename I>
struct Compressed {
  const RawSparse& raw;
  bool csr = raw.format == SPARSETC_FORMAT_CSR;
  int64_t outer = csr ? raw.rows : raw.cols;
  int64_t inner = csr ? raw.cols : raw.rows;
  const char* outer_word = csr ? "row" : "column";
  const char* inner_word = csr ? "column" : "row";
  const O* off = static_cast<const O*>(raw.offsets);
  const I* idx = static_cast<const I*>(raw.indices);
  int64_t base = raw.base;
  int64_t nnz = raw.nnz;

  explicit Compressed(const RawSparse& r) : raw(r) {}

  int64_t offset(int64_t i) const { return int64_t(off[i]); }
  int64_t index(int64_t k) const { return int64_t(idx[k]); }

  // The list (row of CSR, column of CSC) holding entry k (zero-based), offsets being valid.
  int64_t list_of(int64_t k) const {
    return int64_t(std::upper_bound(off, off + outer + 1, O(k + base)) - off) - 1;
  }

  void check_offsets() const {
    const char* one = numbering(raw);
    if (offset(0) != base)
      fail(SPARSETC_STATUS_INVALID_ROW_OFFSETS, "offsets[", base, "] = ", offset(0), " but the index base is ", base,
           one);
    const int64_t j = first_where(outer, [&](int64_t i) { return off[i + 1] < off[i]; });
    if (j >= 0)
      fail(SPARSETC_STATUS_INVALID_ROW_OFFSETS, outer_word, " offsets not monotone: offsets[", j + 1 + base,
           "] = ", offset(j + 1), " < offsets[", j + base, "] = ", offset(j), one);
    if (offset(outer) != nnz + base) {
      const char* count = csr ? "rows" : "cols";
      if (base == 0)
        fail(SPARSETC_STATUS_INVALID_ROW_OFFSETS, "offsets[", count, "] = ", offset(outer), " but nnz = ", nnz);
      fail(SPARSETC_STATUS_INVALID_ROW_OFFSETS, "offsets[", count, " + 1] = ", offset(outer), " but nnz + 1 = ",
           nnz + 1, one);
    }
  }

  // Entry k is out of range, or not above its predecessor in the same list.
  bool bad_entry(int64_t k, int64_t list) const {
    const int64_t c = index(k);
    if (c < base || c >= base + inner) return true;
    return k > offset(list) - base && c <= index(k - 1);
  }

  void check_entries() const {
    const int64_t chunks = (nnz + kElementChunk - 1) / kElementChunk;
    std::vector<int64_t> first(size_t(chunks), -1);
    parallel_chunks(nnz, 0, kElementChunk, [&](int64_t begin, int64_t end) {
      int64_t list = list_of(begin);
      for (int64_t k = begin; k < end; ++k) {
        while (offset(list + 1) - base <= k) ++list;
        if (bad_entry(k, list)) {
          first[size_t(begin / kElementChunk)] = k;
          return;
        }
      }
    });
    int64_t k = -1;
    for (int64_t f : first)
      if (f >= 0) {
        k = f;
        break;
      }
    if (k < 0) return;
    const char* one = numbering(raw);
    const int64_t list = list_of(k), c = index(k);
    if (c < base || c >= base + inner)
      fail(SPARSETC_STATUS_INVALID_INDEX, inner_word, " index ", c, " out of range [", base, ", ", base + inner,
           ") at ", outer_word, " ", list + base, ", entry ", k + base, one);
    const int64_t previous = index(k - 1);
    if (c < previous)
      fail(SPARSETC_STATUS_UNSORTED_INDICES, inner_word, "s not sorted in ", outer_word, " ", list + base,
           ": entry ", k + base, " (", inner_word, " ", c, ") after ", inner_word, " ", previous, one);
    fail(SPARSETC_STATUS_DUPLICATE_ENTRY, "duplicate ", inner_word, " ", c, " in ", outer_word, " ", list + base,
         " (entries ", k - 1 + base, " and ", k + base, ")", one);
  }

  // (row, column) of entry k in the caller's numbering.
  std::pair<int64_t, int64_t> position(int64_t k) const {
    const int64_t list = list_of(k) + base, c = index(k);
    return csr ? std::make_pair(list, c) : std::make_pair(c, list);
  }
};

template <typename I>
struct Coordinates {
  const RawSparse& raw;
  const I* ri = static_cast<const I*>(raw.offsets);
  const I* ci = static_cast<const I*>(raw.indices);
  int64_t base = raw.base;
  int64_t nnz = raw.nnz;

  explicit Coordinates(const RawSparse& r) : raw(r) {}

  int64_t row(int64_t k) const { return int64_t(ri[k]); }
  int64_t col(int64_t k) const { return int64_t(ci[k]); }
  bool row_bad(int64_t k) const { return row(k) < base || row(k) >= base + raw.rows; }
  bool col_bad(int64_t k) const { return col(k) < base || col(k) >= base + raw.cols; }
  bool same(int64_t a, int64_t b) const { return ri[a] == ri[b] && ci[a] == ci[b]; }

  void check_ranges() const {
    const int64_t k = first_where(nnz, [&](int64_t e) { return row_bad(e) || col_bad(e); });
    if (k < 0) return;
    const char* one = numbering(raw);
    if (row_bad(k))
      fail(SPARSETC_STATUS_INVALID_INDEX, "row index ", row(k), " out of range [", base, ", ", base + raw.rows,
           ") at entry ", k + base, one);
    fail(SPARSETC_STATUS_INVALID_INDEX, "column index ", col(k), " out of range [", base, ", ", base + raw.cols,
         ") at entry ", k + base, ", row ", row(k), one);
  }

  // The entry that repeats an earlier (row, column) and comes first in the input, or -1.
  int64_t first_repeat() const {
    if (nnz < 2) return -1;
    auto less = [&](int64_t a, int64_t b) { return ri[a] < ri[b] || (ri[a] == ri[b] && ci[a] < ci[b]); };
    // Sorted input (the common case): a repeat is next to its twin.
    if (first_where(nnz - 1, [&](int64_t e) { return less(e + 1, e); }) < 0) {
      const int64_t pair = first_where(nnz - 1, [&](int64_t e) { return same(e, e + 1); });
      return pair < 0 ? -1 : pair + 1;
    }
    // Otherwise a stable counting sort by row, then (column, entry) order within each row.
    const int64_t rows = raw.rows;
    std::vector<int64_t> start(size_t(rows + 1), 0);
    for (int64_t k = 0; k < nnz; ++k) ++start[size_t(row(k) - base + 1)];
    for (size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
    std::vector<std::pair<int64_t, int64_t>> order(static_cast<size_t>(nnz));
    {
      std::vector<int64_t> next(start.begin(), start.end() - 1);
      for (int64_t k = 0; k < nnz; ++k) order[size_t(next[size_t(row(k) - base)]++)] = {col(k), k};
    }
    std::vector<int64_t> first(size_t((rows + kRowChunk - 1) / kRowChunk), kNone);
    parallel_chunks(rows, 0, kRowChunk, [&](int64_t begin, int64_t end) {
      int64_t& best = first[size_t(begin / kRowChunk)];
      for (int64_t i = begin; i < end; ++i) {
        auto lo = order.begin() + start[size_t(i)], hi = order.begin() + start[size_t(i + 1)];
        std::sort(lo, hi);
        for (auto it = lo + (lo != hi); it < hi; ++it)
          if (it->first == (it - 1)->first) best = std::min(best, it->second);
      }
    });
    int64_t k = kNone;
    for (int64_t f : first) k = std::min(k, f);
    return k == kNone ? -1 : k;
  }

  void check_duplicates() const {
    const int64_t k = first_repeat();
    if (k < 0) return;
    int64_t twin = 0;
    while (!same(twin, k)) ++twin;  // the earliest occurrence
    fail(SPARSETC_STATUS_DUPLICATE_ENTRY, "duplicate entry (row ", row(k), ", column ", col(k), ") at entries ",
         twin + base, " and ", k + base, numbering(raw));
  }
};

[[noreturn]] void report_non_finite(const RawSparse& raw, int64_t k, std::pair<int64_t, int64_t> position) {
  double value = 0;
  load_values(static_cast<const unsigned char*>(raw.values) + size_t(k) * value_size(raw.value_type),
              raw.value_type, 1, &value);
  fail(SPARSETC_STATUS_NAN_OR_INF, "value ", format_number(value), " at entry ", k + raw.base, " (row ",
       position.first, ", column ", position.second, ")", numbering(raw));
}

template <typename O, typename I>
void check_typed(const RawSparse& raw, sparsetc_validation_t level, sparsetc_duplicates_t duplicates) {
  if (raw.format == SPARSETC_FORMAT_COO) {
    if constexpr (std::is_same_v<O, I>) {
      const Coordinates<I> coo(raw);
      coo.check_ranges();
      if (duplicates == SPARSETC_DUPLICATES_ERROR) coo.check_duplicates();
      if (level >= SPARSETC_VALIDATE_VALUES) {
        const int64_t k = find_non_finite(raw.values, raw.value_type, raw.nnz);
        if (k >= 0) report_non_finite(raw, k, {coo.row(k), coo.col(k)});
      }
    }
    return;
  }
  const Compressed<O, I> compressed(raw);
  compressed.check_offsets();
  compressed.check_entries();
  if (level >= SPARSETC_VALIDATE_VALUES) {
    const int64_t k = find_non_finite(raw.values, raw.value_type, raw.nnz);
    if (k >= 0) report_non_finite(raw, k, compressed.position(k));
  }
}

}  // namespace

void validate_raw(const RawSparse& raw, sparsetc_validation_t level, sparsetc_duplicates_t duplicates) {
  require(level >= SPARSETC_VALIDATE_NONE && level <= SPARSETC_VALIDATE_VALUES, SPARSETC_STATUS_INVALID_VALUE,
          "unknown validation level ", level);
  if (level == SPARSETC_VALIDATE_NONE) return;
  check_arguments(raw, duplicates);
  if (level < SPARSETC_VALIDATE_STRUCTURE) return;
  const bool o32 = raw.offset_type == SPARSETC_INDEX_32, i32 = raw.index_type == SPARSETC_INDEX_32;
  if (o32 && i32) check_typed<int32_t, int32_t>(raw, level, duplicates);
  else if (o32) check_typed<int32_t, int64_t>(raw, level, duplicates);
  else if (i32) check_typed<int64_t, int32_t>(raw, level, duplicates);
  else check_typed<int64_t, int64_t>(raw, level, duplicates);
}

}  // namespace sparsetc::detail

// formats/raw: validate_raw at every level, every error with its status and exact message, in
// both bases and both index widths, and the first offender on large inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/half.hpp"
#include "core/types.hpp"
#include "formats/raw.hpp"
#include "test_support.hpp"

namespace {

using namespace sparsetc::detail;
using sparsetc_test::fresh_seed;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr auto CSR = SPARSETC_FORMAT_CSR;
constexpr auto CSC = SPARSETC_FORMAT_CSC;
constexpr auto COO = SPARSETC_FORMAT_COO;
constexpr auto I32 = SPARSETC_INDEX_32;
constexpr auto I64 = SPARSETC_INDEX_64;
constexpr auto ERR = SPARSETC_DUPLICATES_ERROR;
constexpr auto SUM = SPARSETC_DUPLICATES_SUM;
constexpr auto ARGUMENTS = SPARSETC_VALIDATE_ARGUMENTS;
constexpr auto STRUCTURE = SPARSETC_VALIDATE_STRUCTURE;
constexpr auto VALUES = SPARSETC_VALIDATE_VALUES;

template <typename T>
std::vector<unsigned char> bytes_of(const std::vector<int64_t>& v) {
  std::vector<unsigned char> out(v.size() * sizeof(T));
  for (size_t i = 0; i < v.size(); ++i) {
    const T x = T(v[i]);
    std::memcpy(out.data() + i * sizeof(T), &x, sizeof(T));
  }
  return out;
}

// Raw arrays written in the caller's numbering (offsets and indices already include the base).
struct Case {
  sparsetc_format_t format = CSR;
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> offsets, indices;
  std::vector<double> values;
  sparsetc_index_type_t offset_type = I64, index_type = I32;
  sparsetc_index_base_t base = SPARSETC_BASE_ZERO;
  sparsetc_value_type_t value_type = SPARSETC_VALUE_F64;
  std::vector<unsigned char> ob, ib, vb;  // storage of the last raw()

  RawSparse raw() {
    ob = offset_type == I32 ? bytes_of<int32_t>(offsets) : bytes_of<int64_t>(offsets);
    ib = index_type == I32 ? bytes_of<int32_t>(indices) : bytes_of<int64_t>(indices);
    vb.assign(values.size() * 8, 0);
    for (size_t k = 0; k < values.size(); ++k) {
      const double v = values[k];
      switch (value_type) {
        case SPARSETC_VALUE_F64: std::memcpy(vb.data() + 8 * k, &v, 8); break;
        case SPARSETC_VALUE_F32: {
          const float f = float(v);
          std::memcpy(vb.data() + 4 * k, &f, 4);
          break;
        }
        case SPARSETC_VALUE_F16: {
          const uint16_t h = double_to_half(v);
          std::memcpy(vb.data() + 2 * k, &h, 2);
          break;
        }
        default: {
          const uint16_t h = double_to_bfloat16(v);
          std::memcpy(vb.data() + 2 * k, &h, 2);
        }
      }
    }
    RawSparse r;
    r.format = format;
    r.rows = rows;
    r.cols = cols;
    r.nnz = int64_t(indices.size());
    r.offsets = ob.data();
    r.indices = ib.data();
    r.values = vb.data();
    r.offset_type = offset_type;
    r.index_type = index_type;
    r.base = base;
    r.value_type = value_type;
    return r;
  }
};

template <typename F>
void expect_error(F&& f, sparsetc_status_t status, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "no error; expected: " << message;
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    EXPECT_EQ(std::string(e.what()), message);
  }
}

void expect_invalid(Case& c, sparsetc_validation_t level, sparsetc_duplicates_t dup, sparsetc_status_t status,
                    const std::string& message) {
  const RawSparse raw = c.raw();
  expect_error([&] { validate_raw(raw, level, dup); }, status, message);
}

void expect_valid(Case& c, sparsetc_validation_t level, sparsetc_duplicates_t dup = ERR) {
  const RawSparse raw = c.raw();
  EXPECT_NO_THROW(validate_raw(raw, level, dup));
}

// 5 x 8, zero-based:
//   row 0: columns 0, 3      (entries 0, 1)
//   row 1: empty
//   row 2: columns 1, 2, 7   (entries 2, 3, 4)
//   row 3: column 5          (entry 5)
//   row 4: columns 0, 6      (entries 6, 7)
// As CSC the same arrays are an 8 x 5 matrix with the roles of rows and columns swapped.
Case small(sparsetc_format_t format, sparsetc_index_type_t ot, sparsetc_index_type_t it, int64_t b) {
  Case c;
  c.format = format;
  c.offset_type = format == COO ? it : ot;
  c.index_type = it;
  c.base = sparsetc_index_base_t(b);
  c.rows = format == CSC ? 8 : 5;
  c.cols = format == CSC ? 5 : 8;
  c.offsets = format == COO ? std::vector<int64_t>{0, 0, 2, 2, 2, 3, 4, 4} : std::vector<int64_t>{0, 2, 2, 5, 6, 8};
  c.indices = {0, 3, 1, 2, 7, 5, 0, 6};
  for (auto& o : c.offsets) o += b;
  for (auto& i : c.indices) i += b;
  c.values = {1, 2, 3, 4, 5, 6, 7, 8};
  return c;
}

struct Combo {
  sparsetc_index_type_t ot, it;
  int64_t b;
  std::string one;  // suffix of one-based messages
};
std::vector<Combo> combos() {
  std::vector<Combo> v;
  for (auto ot : {I32, I64})
    for (auto it : {I32, I64})
      for (int64_t b : {0, 1}) v.push_back({ot, it, b, b ? " (1-based)" : ""});
  return v;
}
#define TRACE_COMBO(c) SCOPED_TRACE(testing::Message() << "offsets " << index_type_name(c.ot) << ", indices " \
                                                       << index_type_name(c.it) << ", base " << c.b)

// ---------------------------------------------------------------- ARGUMENTS

TEST(Validate, LevelsAndNone) {
  Case c = small(CSR, I64, I32, 0);
  RawSparse raw = c.raw();
  expect_error([&] { validate_raw(raw, 7, ERR); }, SPARSETC_STATUS_INVALID_VALUE, "unknown validation level 7");
  expect_error([&] { validate_raw(raw, -1, ERR); }, SPARSETC_STATUS_INVALID_VALUE, "unknown validation level -1");
  // NONE checks nothing at all.
  RawSparse garbage;
  garbage.format = 99;
  garbage.rows = -5;
  garbage.nnz = 10;
  garbage.offsets = garbage.indices = garbage.values = nullptr;
  EXPECT_NO_THROW(validate_raw(garbage, SPARSETC_VALIDATE_NONE, 42));
  // Levels are cumulative: structure errors pass ARGUMENTS, value errors pass STRUCTURE.
  c.indices[3] = 0;
  expect_valid(c, ARGUMENTS);
  EXPECT_THROW(validate_raw(c.raw(), STRUCTURE, ERR), Error);
  Case n = small(CSR, I64, I32, 0);
  n.values[2] = kNaN;
  expect_valid(n, ARGUMENTS);
  expect_valid(n, STRUCTURE);
  EXPECT_THROW(validate_raw(n.raw(), VALUES, ERR), Error);
}

TEST(Validate, Enumerations) {
  const auto invalid = SPARSETC_STATUS_INVALID_VALUE;
  Case c = small(CSR, I64, I32, 0);
  c.format = 0;
  expect_invalid(c, ARGUMENTS, ERR, invalid, "unknown format 0");
  c = small(CSR, I64, I32, 0);
  c.offset_type = 1;
  expect_invalid(c, ARGUMENTS, ERR, invalid, "unknown offset type 1");
  c = small(CSR, I64, I32, 0);
  c.index_type = 4;
  expect_invalid(c, ARGUMENTS, ERR, invalid, "unknown index type 4");
  c = small(CSR, I64, I32, 0);
  c.base = 2;
  expect_invalid(c, ARGUMENTS, ERR, invalid, "unknown index base 2");
  c = small(CSR, I64, I32, 0);
  c.value_type = 3;
  expect_invalid(c, ARGUMENTS, ERR, invalid, "unknown value type 3");
  c = small(CSR, I64, I32, 0);
  expect_invalid(c, ARGUMENTS, 2, invalid, "unknown duplicates policy 2");
}

TEST(Validate, NegativeSizes) {
  const auto invalid = SPARSETC_STATUS_INVALID_VALUE;
  Case c = small(CSR, I64, I32, 0);
  RawSparse raw = c.raw();
  raw.rows = -1;
  expect_error([&] { validate_raw(raw, ARGUMENTS, ERR); }, invalid, "rows = -1 is negative");
  raw = c.raw();
  raw.cols = -2;
  expect_error([&] { validate_raw(raw, ARGUMENTS, ERR); }, invalid, "cols = -2 is negative");
  raw = c.raw();
  raw.nnz = -3;
  expect_error([&] { validate_raw(raw, ARGUMENTS, ERR); }, invalid, "nnz = -3 is negative");
}

TEST(Validate, CooTypesMustMatch) {
  Case c = small(COO, I64, I32, 0);
  c.offset_type = I64;
  expect_invalid(c, ARGUMENTS, ERR, SPARSETC_STATUS_TYPE_MISMATCH,
                 "COO row and column indices must have one type, but offset_type is int64 and index_type is int32");
  c.index_type = I64;
  expect_valid(c, VALUES);
}

TEST(Validate, SizeOverflow) {
  const auto overflow = SPARSETC_STATUS_SIZE_OVERFLOW;
  unsigned char dummy[16] = {};
  RawSparse raw;
  raw.offsets = raw.indices = raw.values = dummy;  // never read at ARGUMENTS level
  const int64_t big = int64_t(1) << 31;
  for (auto format : {CSR, CSC, COO}) {
    SCOPED_TRACE(format);
    raw.format = format;
    raw.offset_type = format == COO ? I32 : I64;
    raw.index_type = I32;
    raw.rows = big;
    raw.cols = 4;
    expect_error([&] { validate_raw(raw, ARGUMENTS, ERR); }, overflow,
                 "rows = 2147483648 does not fit int32 indices (at most 2147483647)");
    raw.rows = 4;
    raw.cols = big;
    expect_error([&] { validate_raw(raw, ARGUMENTS, ERR); }, overflow,
                 "cols = 2147483648 does not fit int32 indices (at most 2147483647)");
    raw.cols = big - 1;
    EXPECT_NO_THROW(validate_raw(raw, ARGUMENTS, ERR));
    raw.offset_type = raw.index_type = I64;  // 64-bit indices hold it
    raw.cols = big;
    raw.rows = big;
    EXPECT_NO_THROW(validate_raw(raw, ARGUMENTS, ERR));
    raw.rows = int64_t(1) << 61;
    expect_error([&] { validate_raw(raw, ARGUMENTS, ERR); }, overflow,
                 "rows = 2305843009213693952 is too large (at most 2^60)");
    raw.rows = 4;
    raw.nnz = std::numeric_limits<int64_t>::max();
    expect_error([&] { validate_raw(raw, ARGUMENTS, ERR); }, overflow,
                 "nnz = 9223372036854775807 is too large (at most 2^60)");
    raw.nnz = 0;
  }
  // nnz (the last offset, nnz + base) against int32 offsets.
  raw.format = CSR;
  raw.rows = raw.cols = 4;
  raw.offset_type = I32;
  raw.index_type = I64;
  raw.nnz = big;
  expect_error([&] { validate_raw(raw, ARGUMENTS, ERR); }, overflow,
               "nnz = 2147483648 does not fit int32 offsets (at most 2147483647 with base 0)");
  raw.nnz = big - 1;
  EXPECT_NO_THROW(validate_raw(raw, ARGUMENTS, ERR));
  raw.base = SPARSETC_BASE_ONE;
  expect_error([&] { validate_raw(raw, ARGUMENTS, ERR); }, overflow,
               "nnz = 2147483647 does not fit int32 offsets (at most 2147483646 with base 1)");
  raw.offset_type = I64;
  EXPECT_NO_THROW(validate_raw(raw, ARGUMENTS, ERR));
  // COO has no offsets: nnz is not limited by the index type.
  raw.format = COO;
  raw.offset_type = raw.index_type = I32;
  raw.nnz = big * 2;
  EXPECT_NO_THROW(validate_raw(raw, ARGUMENTS, ERR));
}

TEST(Validate, NullPointers) {
  const auto null = SPARSETC_STATUS_NULL_POINTER;
  for (auto format : {CSR, CSC, COO}) {
    SCOPED_TRACE(format);
    Case c = small(format, I64, I32, 0);
    RawSparse raw = c.raw();
    raw.nnz = 10;  // (the arrays are not read at ARGUMENTS level)
    raw.indices = nullptr;
    expect_error([&] { validate_raw(raw, ARGUMENTS, ERR); }, null,
                 std::string(format == CSC ? "row_indices" : "col_indices") + " is NULL but nnz = 10");
    raw = c.raw();
    raw.nnz = 10;
    raw.values = nullptr;
    expect_error([&] { validate_raw(raw, ARGUMENTS, ERR); }, null, "values is NULL but nnz = 10");
    raw = c.raw();
    raw.nnz = 10;
    raw.offsets = nullptr;
    const std::string offsets = format == CSR   ? "row_offsets is NULL (it holds rows + 1 = 6 offsets)"
                                : format == CSC ? "col_offsets is NULL (it holds cols + 1 = 6 offsets)"
                                                : "row_indices is NULL but nnz = 10";
    expect_error([&] { validate_raw(raw, ARGUMENTS, ERR); }, null, offsets);
    // nnz = 0: only CSR/CSC offsets are needed.
    raw = c.raw();
    raw.nnz = 0;
    raw.indices = raw.values = nullptr;
    if (format == COO) raw.offsets = nullptr;
    if (format != COO) {
      std::vector<int64_t> zeros(size_t((format == CSR ? raw.rows : raw.cols) + 1), 0);
      raw.offsets = zeros.data();
      EXPECT_NO_THROW(validate_raw(raw, VALUES, ERR));
      raw.offsets = nullptr;
      EXPECT_THROW(validate_raw(raw, ARGUMENTS, ERR), Error);
    } else {
      EXPECT_NO_THROW(validate_raw(raw, VALUES, ERR));
    }
  }
}

// ---------------------------------------------------------------- STRUCTURE: CSR and CSC

TEST(Validate, ValidInputsPassEveryLevel) {
  for (const Combo& k : combos()) {
    TRACE_COMBO(k);
    for (auto format : {CSR, CSC, COO})
      for (auto vt : {SPARSETC_VALUE_F32, SPARSETC_VALUE_F64, SPARSETC_VALUE_F16, SPARSETC_VALUE_BF16}) {
        Case c = small(format, k.ot, k.it, k.b);
        c.value_type = vt;
        expect_valid(c, VALUES, ERR);
        expect_valid(c, VALUES, SUM);
      }
  }
  // 0 x 0 and empty matrices.
  Case e;
  e.rows = 0;
  e.cols = 0;
  e.offsets = {0};
  expect_valid(e, VALUES);
  e.base = SPARSETC_BASE_ONE;
  e.offsets = {1};
  expect_valid(e, VALUES);
  e.rows = 3;
  e.cols = 2;
  e.offsets = {1, 1, 1, 1};
  expect_valid(e, VALUES);
}

TEST(Validate, OffsetsStart) {
  for (const Combo& k : combos()) {
    TRACE_COMBO(k);
    for (auto format : {CSR, CSC}) {
      Case c = small(format, k.ot, k.it, k.b);
      c.offsets[0] = k.b + 1;
      expect_invalid(c, STRUCTURE, ERR, SPARSETC_STATUS_INVALID_ROW_OFFSETS,
                     str("offsets[", k.b, "] = ", k.b + 1, " but the index base is ", k.b, k.one));
      c.offsets[0] = 1 - k.b;  // the other base
      expect_invalid(c, STRUCTURE, ERR, SPARSETC_STATUS_INVALID_ROW_OFFSETS,
                     str("offsets[", k.b, "] = ", 1 - k.b, " but the index base is ", k.b, k.one));
    }
  }
}

TEST(Validate, OffsetsMonotone) {
  for (const Combo& k : combos()) {
    TRACE_COMBO(k);
    for (auto format : {CSR, CSC}) {
      Case c = small(format, k.ot, k.it, k.b);
      c.offsets[3] = 1 + k.b;  // below offsets[2] = 2
      expect_invalid(c, STRUCTURE, ERR, SPARSETC_STATUS_INVALID_ROW_OFFSETS,
                     str(format == CSR ? "row" : "column", " offsets not monotone: offsets[", 3 + k.b, "] = ", 1 + k.b,
                         " < offsets[", 2 + k.b, "] = ", 2 + k.b, k.one));
    }
  }
}

TEST(Validate, OffsetsEnd) {
  for (const Combo& k : combos()) {
    TRACE_COMBO(k);
    for (auto format : {CSR, CSC}) {
      Case c = small(format, k.ot, k.it, k.b);
      const char* count = format == CSR ? "rows" : "cols";
      c.offsets[5] = 7 + k.b;
      expect_invalid(c, STRUCTURE, ERR, SPARSETC_STATUS_INVALID_ROW_OFFSETS,
                     k.b == 0 ? str("offsets[", count, "] = 7 but nnz = 8")
                              : str("offsets[", count, " + 1] = 8 but nnz + 1 = 9 (1-based)"));
      c.offsets[5] = 9 + k.b;
      expect_invalid(c, STRUCTURE, ERR, SPARSETC_STATUS_INVALID_ROW_OFFSETS,
                     k.b == 0 ? str("offsets[", count, "] = 9 but nnz = 8")
                              : str("offsets[", count, " + 1] = 10 but nnz + 1 = 9 (1-based)"));
    }
  }
}

TEST(Validate, IndexOutOfRange) {
  for (const Combo& k : combos()) {
    TRACE_COMBO(k);
    for (auto format : {CSR, CSC}) {
      const char* inner = format == CSR ? "column" : "row";
      const char* outer = format == CSR ? "row" : "column";
      Case c = small(format, k.ot, k.it, k.b);
      c.indices[4] = 8 + k.b;  // one past the end, last entry of list 2
      expect_invalid(c, STRUCTURE, ERR, SPARSETC_STATUS_INVALID_INDEX,
                     str(inner, " index ", 8 + k.b, " out of range [", k.b, ", ", 8 + k.b, ") at ", outer, " ",
                         2 + k.b, ", entry ", 4 + k.b, k.one));
      c = small(format, k.ot, k.it, k.b);
      c.indices[6] = k.b - 1;  // below the base, first entry of list 4
      expect_invalid(c, STRUCTURE, ERR, SPARSETC_STATUS_INVALID_INDEX,
                     str(inner, " index ", k.b - 1, " out of range [", k.b, ", ", 8 + k.b, ") at ", outer, " ",
                         4 + k.b, ", entry ", 6 + k.b, k.one));
      c = small(format, k.ot, k.it, k.b);
      c.indices[0] = 1048577;
      expect_invalid(c, STRUCTURE, ERR, SPARSETC_STATUS_INVALID_INDEX,
                     str(inner, " index 1048577 out of range [", k.b, ", ", 8 + k.b, ") at ", outer, " ", k.b,
                         ", entry ", k.b, k.one));
    }
  }
}

TEST(Validate, UnsortedAndDuplicate) {
  for (const Combo& k : combos()) {
    TRACE_COMBO(k);
    for (auto format : {CSR, CSC}) {
      const char* inner = format == CSR ? "column" : "row";
      const char* outer = format == CSR ? "row" : "column";
      Case c = small(format, k.ot, k.it, k.b);
      c.indices[3] = k.b;  // list 2: 1, 0, 7
      expect_invalid(c, STRUCTURE, ERR, SPARSETC_STATUS_UNSORTED_INDICES,
                     str(inner, "s not sorted in ", outer, " ", 2 + k.b, ": entry ", 3 + k.b, " (", inner, " ", k.b,
                         ") after ", inner, " ", 1 + k.b, k.one));
      c.indices[3] = 1 + k.b;  // list 2: 1, 1, 7
      expect_invalid(c, STRUCTURE, ERR, SPARSETC_STATUS_DUPLICATE_ENTRY,
                     str("duplicate ", inner, " ", 1 + k.b, " in ", outer, " ", 2 + k.b, " (entries ", 2 + k.b, " and ",
                         3 + k.b, ")", k.one));
      // The duplicate policy is about COO: CSR/CSC duplicates are errors either way.
      expect_invalid(c, STRUCTURE, SUM, SPARSETC_STATUS_DUPLICATE_ENTRY,
                     str("duplicate ", inner, " ", 1 + k.b, " in ", outer, " ", 2 + k.b, " (entries ", 2 + k.b, " and ",
                         3 + k.b, ")", k.one));
      // A decrease across a list boundary is fine (entry 5 starts list 3, entry 6 list 4).
      Case ok = small(format, k.ot, k.it, k.b);
      expect_valid(ok, STRUCTURE);
      // Two errors: the earlier entry is reported (duplicate at 3 before out of range at 6).
      c.indices[6] = 100;
      expect_invalid(c, STRUCTURE, ERR, SPARSETC_STATUS_DUPLICATE_ENTRY,
                     str("duplicate ", inner, " ", 1 + k.b, " in ", outer, " ", 2 + k.b, " (entries ", 2 + k.b, " and ",
                         3 + k.b, ")", k.one));
    }
  }
}

// ---------------------------------------------------------------- STRUCTURE: COO

TEST(Validate, CooRanges) {
  for (const Combo& k : combos()) {
    TRACE_COMBO(k);
    Case c = small(COO, k.it, k.it, k.b);
    c.offsets[2] = 5 + k.b;
    expect_invalid(c, STRUCTURE, ERR, SPARSETC_STATUS_INVALID_INDEX,
                   str("row index ", 5 + k.b, " out of range [", k.b, ", ", 5 + k.b, ") at entry ", 2 + k.b, k.one));
    c = small(COO, k.it, k.it, k.b);
    c.indices[7] = 8 + k.b;
    expect_invalid(c, STRUCTURE, ERR, SPARSETC_STATUS_INVALID_INDEX,
                   str("column index ", 8 + k.b, " out of range [", k.b, ", ", 8 + k.b, ") at entry ", 7 + k.b,
                       ", row ", 4 + k.b, k.one));
    c.offsets[5] = k.b - 1;  // an earlier row error wins
    expect_invalid(c, STRUCTURE, SUM, SPARSETC_STATUS_INVALID_INDEX,
                   str("row index ", k.b - 1, " out of range [", k.b, ", ", 5 + k.b, ") at entry ", 5 + k.b, k.one));
  }
}

TEST(Validate, CooDuplicates) {
  for (const Combo& k : combos()) {
    TRACE_COMBO(k);
    // Sorted input: entry 7 repeats entry 6.
    Case c = small(COO, k.it, k.it, k.b);
    c.indices[7] = c.indices[6];
    expect_invalid(c, STRUCTURE, ERR, SPARSETC_STATUS_DUPLICATE_ENTRY,
                   str("duplicate entry (row ", 4 + k.b, ", column ", k.b, ") at entries ", 6 + k.b, " and ", 7 + k.b,
                       k.one));
    expect_valid(c, VALUES, SUM);
    // Unsorted input: (3,5) repeats at entry 2, before (1,1) repeats at entry 3, though (1,1)
    // comes first in (row, column) order.
    Case u;
    u.format = COO;
    u.rows = 5;
    u.cols = 8;
    u.offset_type = u.index_type = k.it;
    u.base = sparsetc_index_base_t(k.b);
    u.offsets = {3 + k.b, 1 + k.b, 3 + k.b, 1 + k.b, k.b};
    u.indices = {5 + k.b, 1 + k.b, 5 + k.b, 1 + k.b, k.b};
    u.values = {1, 2, 3, 4, 5};
    expect_invalid(u, STRUCTURE, ERR, SPARSETC_STATUS_DUPLICATE_ENTRY,
                   str("duplicate entry (row ", 3 + k.b, ", column ", 5 + k.b, ") at entries ", k.b, " and ", 2 + k.b,
                       k.one));
    expect_valid(u, VALUES, SUM);
    // Unsorted without duplicates is fine.
    u.indices[2] = 6 + k.b;
    u.indices[3] = 2 + k.b;
    expect_valid(u, VALUES, ERR);
  }
}

// ---------------------------------------------------------------- VALUES

TEST(Validate, NonFiniteValues) {
  for (const Combo& k : combos()) {
    TRACE_COMBO(k);
    for (auto format : {CSR, CSC, COO})
      for (auto vt : {SPARSETC_VALUE_F32, SPARSETC_VALUE_F64, SPARSETC_VALUE_F16, SPARSETC_VALUE_BF16}) {
        SCOPED_TRACE(testing::Message() << "format " << format << " value type " << vt);
        Case c = small(format, k.ot, k.it, k.b);
        c.value_type = vt;
        // entry 5: CSR/COO (row 3, column 5); CSC (row 5, column 3).
        const int64_t row = format == CSC ? 5 : 3, col = format == CSC ? 3 : 5;
        for (double bad : {kNaN, kInf, -kInf}) {
          c.values[5] = bad;
          const std::string text = std::isnan(bad) ? "NaN" : bad > 0 ? "Inf" : "-Inf";
          expect_invalid(c, VALUES, ERR, SPARSETC_STATUS_NAN_OR_INF,
                         str("value ", text, " at entry ", 5 + k.b, " (row ", row + k.b, ", column ", col + k.b, ")",
                             k.one));
          expect_valid(c, STRUCTURE);
        }
        c.values[7] = kNaN;  // a later one does not change the report
        expect_invalid(c, VALUES, ERR, SPARSETC_STATUS_NAN_OR_INF,
                       str("value -Inf at entry ", 5 + k.b, " (row ", row + k.b, ", column ", col + k.b, ")", k.one));
      }
  }
}

// ---------------------------------------------------------------- large inputs: first offender

// A large CSR (zero-based or one-based), about 5 entries per row, sorted and unique.
Case large_csr(uint64_t seed, int64_t rows, int64_t cols, int64_t b, sparsetc_index_type_t ot,
               sparsetc_index_type_t it) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> col(0, cols - 1), len(0, 10);
  Case c;
  c.rows = rows;
  c.cols = cols;
  c.base = sparsetc_index_base_t(b);
  c.offset_type = ot;
  c.index_type = it;
  c.offsets.push_back(b);
  std::vector<int64_t> row;
  for (int64_t i = 0; i < rows; ++i) {
    row.clear();
    for (int64_t n = len(rng); n > 0; --n) row.push_back(col(rng));
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    for (int64_t j : row) c.indices.push_back(j + b);
    c.offsets.push_back(int64_t(c.indices.size()) + b);
  }
  c.values.assign(c.indices.size(), 1.0);
  return c;
}

int64_t row_of(const Case& c, int64_t k) {  // zero-based row of zero-based entry k
  return int64_t(std::upper_bound(c.offsets.begin(), c.offsets.end(), k + c.base) - c.offsets.begin()) - 1;
}

// An entry that is not the first of its row, near fraction f of the entries.
int64_t interior_entry(const Case& c, double f) {
  int64_t k = int64_t(double(c.indices.size()) * f);
  while (c.offsets[size_t(row_of(c, k))] - c.base == k) ++k;
  return k;
}

TEST(ValidateLarge, FirstOffenderInEntryOrder) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  for (const Combo& k : combos()) {
    TRACE_COMBO(k);
    const Case base_case = large_csr(rng(), 200000, 100000, k.b, k.ot, k.it);
    ASSERT_GT(base_case.indices.size(), size_t(800000));  // many parallel chunks
    std::uniform_real_distribution<double> early(0.05, 0.45), late(0.55, 0.95);
    // An unsorted entry early and an out-of-range one late; then the other way round.
    for (int order = 0; order < 2; ++order) {
      Case c = base_case;
      const int64_t e1 = interior_entry(c, early(rng)), e2 = interior_entry(c, late(rng));
      const int64_t unsorted = order == 0 ? e1 : e2, range = order == 0 ? e2 : e1;
      std::swap(c.indices[size_t(unsorted - 1)], c.indices[size_t(unsorted)]);
      c.indices[size_t(range)] = 100000 + k.b + 7;
      std::string want;
      sparsetc_status_t status;
      if (unsorted < range) {
        status = SPARSETC_STATUS_UNSORTED_INDICES;
        want = str("columns not sorted in row ", row_of(c, unsorted) + k.b, ": entry ", unsorted + k.b, " (column ",
                   c.indices[size_t(unsorted)], ") after column ", c.indices[size_t(unsorted - 1)], k.one);
      } else {
        status = SPARSETC_STATUS_INVALID_INDEX;
        want = str("column index ", 100000 + k.b + 7, " out of range [", k.b, ", ", 100000 + k.b, ") at row ",
                   row_of(c, range) + k.b, ", entry ", range + k.b, k.one);
      }
      const RawSparse raw = c.raw();
      for (int repeat = 0; repeat < 3; ++repeat)
        expect_error([&] { validate_raw(raw, STRUCTURE, ERR); }, status, want);
    }
    // Two non-monotone offsets: the first is reported.
    Case c = base_case;
    const int64_t r1 = 50000 + int64_t(rng() % 1000), r2 = 150000 + int64_t(rng() % 1000);
    c.offsets[size_t(r2)] = c.offsets[size_t(r2 - 1)] - 1;
    c.offsets[size_t(r1)] = c.offsets[size_t(r1 - 1)] - 1;
    const RawSparse raw = c.raw();
    for (int repeat = 0; repeat < 3; ++repeat)
      expect_error([&] { validate_raw(raw, STRUCTURE, ERR); }, SPARSETC_STATUS_INVALID_ROW_OFFSETS,
                   str("row offsets not monotone: offsets[", r1 + k.b, "] = ", c.offsets[size_t(r1)], " < offsets[",
                       r1 - 1 + k.b, "] = ", c.offsets[size_t(r1 - 1)], k.one));
    // Two NaNs: the first is reported.
    Case v = base_case;
    const int64_t n1 = interior_entry(v, early(rng)), n2 = interior_entry(v, late(rng));
    v.values[size_t(n2)] = kNaN;
    v.values[size_t(n1)] = -kInf;
    v.value_type = SPARSETC_VALUE_F32;
    const RawSparse vraw = v.raw();
    EXPECT_NO_THROW(validate_raw(vraw, STRUCTURE, ERR));
    for (int repeat = 0; repeat < 3; ++repeat)
      expect_error([&] { validate_raw(vraw, VALUES, ERR); }, SPARSETC_STATUS_NAN_OR_INF,
                   str("value -Inf at entry ", n1 + k.b, " (row ", row_of(v, n1) + k.b, ", column ",
                       v.indices[size_t(n1)], ")", k.one));
  }
}

TEST(ValidateLarge, CooFirstRepeatInInputOrder) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  for (int64_t b : {0, 1}) {
    for (auto it : {I32, I64}) {
      const Case csr = large_csr(rng(), 150000, 50000, b, I64, it);
      Case c;
      c.format = COO;
      c.rows = csr.rows;
      c.cols = csr.cols;
      c.base = sparsetc_index_base_t(b);
      c.offset_type = c.index_type = it;
      for (int64_t i = 0; i < csr.rows; ++i)
        for (int64_t p = csr.offsets[size_t(i)] - b; p < csr.offsets[size_t(i + 1)] - b; ++p) {
          c.offsets.push_back(i + b);
          c.indices.push_back(csr.indices[size_t(p)]);
        }
      c.values.assign(c.indices.size(), 2.0);
      const int64_t n = int64_t(c.indices.size());
      // Sorted input (the fast path) with two repeats: the earlier.
      {
        Case s = c;
        const int64_t a = n / 3, d = 2 * n / 3;
        s.indices[size_t(d)] = s.indices[size_t(d - 1)];
        s.offsets[size_t(d)] = s.offsets[size_t(d - 1)];
        s.indices[size_t(a)] = s.indices[size_t(a - 1)];
        s.offsets[size_t(a)] = s.offsets[size_t(a - 1)];
        const RawSparse raw = s.raw();
        expect_error([&] { validate_raw(raw, STRUCTURE, ERR); }, SPARSETC_STATUS_DUPLICATE_ENTRY,
                     str("duplicate entry (row ", s.offsets[size_t(a)], ", column ", s.indices[size_t(a)],
                         ") at entries ", a - 1 + b, " and ", a + b, b ? " (1-based)" : ""));
        EXPECT_NO_THROW(validate_raw(raw, VALUES, SUM));
      }
      // Shuffled input with two repeats: the one whose repeat comes first in the input wins,
      // even though the other pair comes first in (row, column) order.
      std::vector<size_t> perm(static_cast<size_t>(n));
      for (size_t i = 0; i < perm.size(); ++i) perm[i] = i;
      std::shuffle(perm.begin(), perm.end(), rng);
      Case s = c;
      for (size_t i = 0; i < perm.size(); ++i) {
        s.offsets[i] = c.offsets[perm[i]];
        s.indices[i] = c.indices[perm[i]];
      }
      auto key = [&](int64_t e) { return std::make_pair(s.offsets[size_t(e)], s.indices[size_t(e)]); };
      int64_t a = n / 10, x = n / 5;  // pair 1: a is repeated at position r1
      int64_t cpos = n / 2, y = 3 * n / 4;  // pair 2: cpos repeated at r2 > r1, with key(cpos) < key(a)
      if (key(cpos) > key(a)) {
        std::swap(s.offsets[size_t(cpos)], s.offsets[size_t(a)]);
        std::swap(s.indices[size_t(cpos)], s.indices[size_t(a)]);
      }
      ASSERT_LT(key(cpos), key(a));
      const int64_t r1 = x, r2 = y;
      s.offsets[size_t(r1)] = s.offsets[size_t(a)];
      s.indices[size_t(r1)] = s.indices[size_t(a)];
      s.offsets[size_t(r2)] = s.offsets[size_t(cpos)];
      s.indices[size_t(r2)] = s.indices[size_t(cpos)];
      const RawSparse raw = s.raw();
      for (int repeat = 0; repeat < 3; ++repeat)
        expect_error([&] { validate_raw(raw, STRUCTURE, ERR); }, SPARSETC_STATUS_DUPLICATE_ENTRY,
                     str("duplicate entry (row ", s.offsets[size_t(a)], ", column ", s.indices[size_t(a)],
                         ") at entries ", a + b, " and ", r1 + b, b ? " (1-based)" : ""));
      EXPECT_NO_THROW(validate_raw(raw, VALUES, SUM));
    }
  }
}

}  // namespace

// formats/raw: import_csr / export_csr for every format, offset type, index type, base and value
// type, against raw arrays built independently from Triplets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "core/half.hpp"
#include "core/types.hpp"
#include "formats/raw.hpp"
#include "test_support.hpp"

namespace {

using namespace sparsetc::detail;
using sparsetc_test::fresh_seed;
using sparsetc_test::random_triplets;
using sparsetc_test::Triplets;

constexpr auto CSR = SPARSETC_FORMAT_CSR;
constexpr auto CSC = SPARSETC_FORMAT_CSC;
constexpr auto COO = SPARSETC_FORMAT_COO;
constexpr auto I32 = SPARSETC_INDEX_32;
constexpr auto I64 = SPARSETC_INDEX_64;
const sparsetc_value_type_t kValueTypes[] = {SPARSETC_VALUE_F32, SPARSETC_VALUE_F64, SPARSETC_VALUE_F16,
                                             SPARSETC_VALUE_BF16};

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

std::vector<unsigned char> int_bytes(const std::vector<int64_t>& v, sparsetc_index_type_t type) {
  const size_t w = type == I32 ? 4 : 8;
  std::vector<unsigned char> out(v.size() * w);
  for (size_t i = 0; i < v.size(); ++i) {
    if (type == I32) {
      const int32_t x = int32_t(v[i]);
      std::memcpy(out.data() + i * w, &x, w);
    } else {
      std::memcpy(out.data() + i * w, &v[i], w);
    }
  }
  return out;
}

// Encodes v as `type` the obvious way (half.hpp is tested on its own).
std::vector<unsigned char> value_bytes(const std::vector<double>& v, sparsetc_value_type_t type) {
  std::vector<unsigned char> out;
  for (double x : v) {
    unsigned char b[8];
    size_t n = 0;
    switch (type) {
      case SPARSETC_VALUE_F64: std::memcpy(b, &x, n = 8); break;
      case SPARSETC_VALUE_F32: {
        const float f = float(x);
        std::memcpy(b, &f, n = 4);
        break;
      }
      case SPARSETC_VALUE_F16: {
        const uint16_t h = double_to_half(x);
        std::memcpy(b, &h, n = 2);
        break;
      }
      default: {
        const uint16_t h = double_to_bfloat16(x);
        std::memcpy(b, &h, n = 2);
      }
    }
    out.insert(out.end(), b, b + n);
  }
  return out;
}

// Raw arrays of a triplet set, built without the library: CSR rows, CSC columns, COO in (row,
// column) order.
struct Built {
  sparsetc_format_t format;
  int64_t rows, cols;
  sparsetc_index_type_t ot, it;
  int64_t base;
  sparsetc_value_type_t vt;
  std::vector<int64_t> offsets, indices;
  std::vector<double> values;
  std::vector<unsigned char> ob, ib, vb;
  RawSparse raw() const {
    RawSparse r;
    r.format = format;
    r.rows = rows;
    r.cols = cols;
    r.nnz = int64_t(indices.size());
    r.offsets = ob.empty() ? nullptr : ob.data();
    r.indices = ib.empty() ? nullptr : ib.data();
    r.values = vb.empty() ? nullptr : vb.data();
    r.offset_type = ot;
    r.index_type = it;
    r.base = sparsetc_index_base_t(base);
    r.value_type = vt;
    return r;
  }
  void encode() {
    ob = int_bytes(offsets, ot);
    ib = int_bytes(indices, it);
    vb = value_bytes(values, vt);
  }
};

Built build(const Triplets& t, sparsetc_format_t format, sparsetc_index_type_t ot, sparsetc_index_type_t it,
            int64_t base, sparsetc_value_type_t vt) {
  Built b{format, t.rows, t.cols, ot, it, base, vt, {}, {}, {}, {}, {}, {}};
  if (format == COO) {
    for (const auto& [rc, v] : t.entries) {
      b.offsets.push_back(rc.first + base);
      b.indices.push_back(rc.second + base);
      b.values.push_back(v);
    }
  } else {
    Triplets m = t;
    if (format == CSC) {  // CSC of t = CSR of its transpose
      m = Triplets{t.cols, t.rows, {}};
      for (const auto& [rc, v] : t.entries) m.entries[{rc.second, rc.first}] = v;
    }
    const auto a = sparsetc_test::to_csr<int64_t, int64_t>(m, int(base));
    b.offsets = a.row_ptr;
    b.indices = a.col;
    b.values = a.val;
  }
  b.encode();
  return b;
}

template <typename V>
CsrMatrix<V> expected_csr(const Triplets& t, sparsetc_value_type_t stored_as) {
  const auto a = sparsetc_test::to_csr<int64_t, int64_t>(t);
  CsrMatrix<V> m;
  m.rows = t.rows;
  m.cols = t.cols;
  m.row_ptr = a.row_ptr;
  m.col_idx = a.col;
  for (double v : a.val) {
    double s = v;  // what the stored value reads back as
    if (stored_as == SPARSETC_VALUE_F32) s = double(float(v));
    if (stored_as == SPARSETC_VALUE_F16) s = double(half_to_float(double_to_half(v)));
    if (stored_as == SPARSETC_VALUE_BF16) s = double(bfloat16_to_float(double_to_bfloat16(v)));
    m.values.push_back(V(s));
  }
  return m;
}

template <typename V>
void expect_same(const CsrMatrix<V>& got, const CsrMatrix<V>& want) {
  EXPECT_EQ(got.rows, want.rows);
  EXPECT_EQ(got.cols, want.cols);
  EXPECT_EQ(got.row_ptr, want.row_ptr);
  EXPECT_EQ(got.col_idx, want.col_idx);
  EXPECT_EQ(got.values, want.values);
}

// Values that every value type holds exactly (multiples of 1/8 up to 1.5 in magnitude).
Triplets exact_values(Triplets t) {
  for (auto& [rc, v] : t.entries) v = std::round(v * 8) / 8;
  return t;
}

std::vector<Triplets> shapes() {
  std::vector<Triplets> m;
  m.push_back(Triplets{0, 0, {}});
  m.push_back(Triplets{4, 3, {}});  // nnz = 0
  m.push_back(random_triplets(1, 40, 0.3, fresh_seed()));
  m.push_back(random_triplets(40, 1, 0.3, fresh_seed(), false));
  m.push_back(random_triplets(30, 50, 0.08, fresh_seed()));  // empty rows and columns
  m.push_back(random_triplets(120, 90, 0.1, fresh_seed()));
  for (auto& t : m) t = exact_values(t);
  return m;
}

template <typename V>
class RawImportExport : public testing::Test {};
using ValueTypes = testing::Types<float, double>;
TYPED_TEST_SUITE(RawImportExport, ValueTypes);

// Every offset type x index type x base x value type, for each format: validate, import to the
// canonical CSR, export back to the same arrays byte for byte, and to the other formats too.
TYPED_TEST(RawImportExport, RoundTripAllCombinations) {
  using V = TypeParam;
  const std::vector<Triplets> matrices = shapes();
  int combinations = 0;
  for (auto ot : {I32, I64})
    for (auto it : {I32, I64})
      for (int64_t base : {0, 1})
        for (auto vt : kValueTypes) {
          ++combinations;
          for (const Triplets& t : matrices) {
            SCOPED_TRACE(testing::Message() << t.rows << "x" << t.cols << " nnz " << t.entries.size() << ", offsets "
                                            << index_type_name(ot) << ", indices " << index_type_name(it)
                                            << ", base " << base << ", " << value_type_name(vt));
            const CsrMatrix<V> want = expected_csr<V>(t, vt);
            for (auto format : {CSR, CSC, COO}) {
              if (format == COO && ot != it) continue;  // COO has one index type
              SCOPED_TRACE(testing::Message() << "format " << format);
              const Built in = build(t, format, ot, it, base, vt);
              const RawSparse raw = in.raw();
              ASSERT_NO_THROW(validate_raw(raw, SPARSETC_VALIDATE_VALUES, SPARSETC_DUPLICATES_ERROR));
              const CsrMatrix<V> csr = import_csr<V>(raw, SPARSETC_DUPLICATES_ERROR);
              expect_same(csr, want);
              for (auto out_format : {CSR, CSC, COO}) {
                if (out_format == COO && ot != it) continue;
                const Built expect = build(t, out_format, ot, it, base, vt);
                const OwnedArrays out = export_csr(csr, out_format, ot, it, sparsetc_index_base_t(base), vt);
                EXPECT_EQ(out.offsets, expect.ob) << "format " << out_format;
                EXPECT_EQ(out.indices, expect.ib) << "format " << out_format;
                EXPECT_EQ(out.values, expect.vb) << "format " << out_format;
              }
            }
          }
        }
  EXPECT_EQ(combinations, 2 * 2 * 2 * 4);
}

// Values that need rounding: import widens exactly, export rounds to nearest even.
TYPED_TEST(RawImportExport, RoundingValues) {
  using V = TypeParam;
  const Triplets t = random_triplets(80, 60, 0.1, fresh_seed());  // values in +-[0.5, 1.5)
  const Built f64 = build(t, CSR, I64, I32, 0, SPARSETC_VALUE_F64);
  const CsrMatrix<V> csr = import_csr<V>(f64.raw(), SPARSETC_DUPLICATES_ERROR);
  expect_same(csr, expected_csr<V>(t, std::is_same_v<V, float> ? SPARSETC_VALUE_F32 : SPARSETC_VALUE_F64));
  for (auto vt : kValueTypes) {
    const OwnedArrays out = export_csr(csr, CSR, I64, I32, SPARSETC_BASE_ZERO, vt);
    std::vector<double> widened(csr.values.begin(), csr.values.end());
    std::vector<unsigned char> want = value_bytes(widened, vt);
    if (vt == SPARSETC_VALUE_BF16 && std::is_same_v<V, float>) {  // from float: one rounding
      want.clear();
      for (V v : csr.values) {
        const uint16_t b = float_to_bfloat16(float(v));
        want.insert(want.end(), reinterpret_cast<const unsigned char*>(&b),
                    reinterpret_cast<const unsigned char*>(&b) + 2);
      }
    }
    EXPECT_EQ(out.values, want) << value_type_name(vt);
  }
}

// Every binary16 and bfloat16 value but NaN survives raw -> canonical -> raw bit for bit.
TYPED_TEST(RawImportExport, AllHalfValuesRoundTrip) {
  using V = TypeParam;
  for (auto vt : {SPARSETC_VALUE_F16, SPARSETC_VALUE_BF16}) {
    SCOPED_TRACE(value_type_name(vt));
    const uint32_t exponent = vt == SPARSETC_VALUE_F16 ? 0x7c00 : 0x7f80;
    std::vector<uint16_t> patterns;
    for (uint32_t p = 0; p < 65536; ++p)
      if ((p & exponent) != exponent || (p & ~(exponent | 0x8000u)) == 0) patterns.push_back(uint16_t(p));
    const int64_t n = int64_t(patterns.size());
    std::vector<int64_t> offsets = {0, n}, cols(patterns.size());
    for (int64_t j = 0; j < n; ++j) cols[size_t(j)] = j;
    const std::vector<unsigned char> ob = int_bytes(offsets, I64), ib = int_bytes(cols, I32);
    RawSparse raw;
    raw.format = CSR;
    raw.rows = 1;
    raw.cols = n;
    raw.nnz = n;
    raw.offsets = ob.data();
    raw.indices = ib.data();
    raw.values = patterns.data();
    raw.offset_type = I64;
    raw.index_type = I32;
    raw.value_type = vt;
    const CsrMatrix<V> csr = import_csr<V>(raw, SPARSETC_DUPLICATES_ERROR);
    ASSERT_EQ(csr.nnz(), n);  // explicit zeros (both signs) kept
    const OwnedArrays out = export_csr(csr, CSR, I64, I32, SPARSETC_BASE_ZERO, vt);
    ASSERT_EQ(out.values.size(), patterns.size() * 2);
    EXPECT_EQ(std::memcmp(out.values.data(), patterns.data(), out.values.size()), 0);
  }
}

// COO in any order, with duplicates: sorted on import, summed in input order or refused.
TYPED_TEST(RawImportExport, CooShuffledWithDuplicates) {
  using V = TypeParam;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  const Triplets t = exact_values(random_triplets(60, 40, 0.15, rng()));
  for (int64_t base : {0, 1})
    for (auto it : {I32, I64}) {
      // Each entry split in two halves (exact), in a random order.
      std::vector<std::tuple<int64_t, int64_t, double>> e;
      for (const auto& [rc, v] : t.entries) {
        e.emplace_back(rc.first, rc.second, v / 2);
        e.emplace_back(rc.first, rc.second, v / 2);
      }
      std::shuffle(e.begin(), e.end(), rng);
      Built b{COO, t.rows, t.cols, it, it, base, SPARSETC_VALUE_F64, {}, {}, {}, {}, {}, {}};
      for (const auto& [r, c, v] : e) {
        b.offsets.push_back(r + base);
        b.indices.push_back(c + base);
        b.values.push_back(v);
      }
      b.encode();
      expect_same(import_csr<V>(b.raw(), SPARSETC_DUPLICATES_SUM), expected_csr<V>(t, SPARSETC_VALUE_F64));
      if (e.empty()) continue;
      // Refused, naming the first repeat in input order, in the caller's numbering.
      size_t first = 0, first_twin = 0;
      for (size_t k = 1; k < e.size() && first == 0; ++k)
        for (size_t j = 0; j < k; ++j)
          if (std::get<0>(e[j]) == std::get<0>(e[k]) && std::get<1>(e[j]) == std::get<1>(e[k])) {
            first = k;
            first_twin = j;
            break;
          }
      expect_error([&] { import_csr<V>(b.raw(), SPARSETC_DUPLICATES_ERROR); }, SPARSETC_STATUS_DUPLICATE_ENTRY,
                   str("duplicate entry (row ", std::get<0>(e[first]) + base, ", column ",
                       std::get<1>(e[first]) + base, ") at entries ", first_twin + base, " and ", first + base,
                       base ? " (1-based)" : ""));
    }
}

TEST(RawImport, EmptyAndNullArrays) {
  for (auto format : {CSR, CSC, COO}) {
    RawSparse raw;
    raw.format = format;
    raw.rows = 3;
    raw.cols = 2;
    raw.nnz = 0;
    const int64_t zeros[4] = {0, 0, 0, 0};
    raw.offsets = format == COO ? nullptr : zeros;
    raw.offset_type = format == COO ? I32 : I64;
    const CsrMatrix<double> csr = import_csr<double>(raw, SPARSETC_DUPLICATES_ERROR);
    EXPECT_EQ(csr.rows, 3);
    EXPECT_EQ(csr.cols, 2);
    EXPECT_EQ(csr.row_ptr, (std::vector<int64_t>{0, 0, 0, 0}));
    EXPECT_EQ(csr.nnz(), 0);
    const OwnedArrays out = export_csr(csr, format, raw.offset_type, I32, SPARSETC_BASE_ONE, SPARSETC_VALUE_F16);
    EXPECT_EQ(out.offsets.size(), format == CSR ? 4 * 8u : format == CSC ? 3 * 8u : 0u);
    EXPECT_TRUE(out.indices.empty());
    EXPECT_TRUE(out.values.empty());
  }
  EXPECT_THROW(import_csr<double>(RawSparse{7}, SPARSETC_DUPLICATES_ERROR), Error);
}

TEST(RawExport, ValueOutOfRange) {
  CsrMatrix<double> csr;
  csr.rows = 2;
  csr.cols = 3;
  csr.row_ptr = {0, 2, 4};
  csr.col_idx = {0, 2, 0, 1};
  csr.values = {1, 2, 3, 70000};
  expect_error([&] { export_csr(csr, CSR, I32, I32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F16); },
               SPARSETC_STATUS_VALUE_OUT_OF_RANGE, "value 70000 at entry 3 does not fit f16 (largest finite 65504)");
  EXPECT_NO_THROW(export_csr(csr, CSR, I32, I32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_BF16));
  csr.values[1] = 1e39;
  expect_error([&] { export_csr(csr, CSR, I32, I32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F32); },
               SPARSETC_STATUS_VALUE_OUT_OF_RANGE,
               "value 1e+39 at entry 1 does not fit f32 (largest finite 3.4028235e+38)");
  expect_error([&] { export_csr(csr, CSR, I32, I32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_BF16); },
               SPARSETC_STATUS_VALUE_OUT_OF_RANGE,
               "value 1e+39 at entry 1 does not fit bf16 (largest finite 3.3895314e+38)");
  csr.values[1] = std::numeric_limits<double>::infinity();  // not out of range: passed through
  const OwnedArrays out = export_csr(csr, CSR, I32, I32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_BF16);
  uint16_t b;
  std::memcpy(&b, out.values.data() + 2, 2);
  EXPECT_EQ(b, 0x7f80);
  csr.values[3] = 3;
  EXPECT_NO_THROW(export_csr(csr, CSR, I32, I32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F16));
}

TEST(RawExport, SizeOverflow) {
  const auto overflow = SPARSETC_STATUS_SIZE_OVERFLOW;
  const int64_t big = int64_t(1) << 31;
  CsrMatrix<float> wide;  // 1 x 2^31, empty
  wide.rows = 1;
  wide.cols = big;
  wide.row_ptr = {0, 0};
  for (auto format : {CSR, CSC, COO}) {
    if (format == CSC) continue;  // CSC would need 2^31 + 1 column offsets
    expect_error([&] { export_csr(wide, format, I32, I32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F32); }, overflow,
                 "cols = 2147483648 does not fit int32 indices (at most 2147483647)");
    EXPECT_NO_THROW(export_csr(wide, format, I64, I64, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F32));
  }
  wide.cols = big - 1;
  EXPECT_NO_THROW(export_csr(wide, CSR, I32, I32, SPARSETC_BASE_ONE, SPARSETC_VALUE_F32));
  // The last offset, nnz + base, must fit int32 offsets. (Only the offsets claim 2^31 - 1
  // entries: export reads them first, so the check is testable without 16 GiB of indices.)
  CsrMatrix<double> many;
  many.rows = 1;
  many.cols = 4;
  many.row_ptr = {0, big - 1};
  expect_error([&] { export_csr(many, CSR, I32, I64, SPARSETC_BASE_ONE, SPARSETC_VALUE_F64); }, overflow,
               "nnz = 2147483647 does not fit int32 offsets (at most 2147483646 with base 1)");
  const OwnedArrays fits = export_csr(many, CSR, I32, I64, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64);
  int32_t last;
  std::memcpy(&last, fits.offsets.data() + 4, 4);
  EXPECT_EQ(last, std::numeric_limits<int32_t>::max());
  EXPECT_NO_THROW(export_csr(many, CSR, I64, I64, SPARSETC_BASE_ONE, SPARSETC_VALUE_F64));
  many.row_ptr = {0, big};
  expect_error([&] { export_csr(many, CSR, I32, I32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64); }, overflow,
               "nnz = 2147483648 does not fit int32 offsets (at most 2147483647 with base 0)");
}

TEST(RawExport, BadArguments) {
  CsrMatrix<double> csr;
  csr.rows = 1;
  csr.cols = 1;
  csr.row_ptr = {0, 1};
  csr.col_idx = {0};
  csr.values = {1};
  expect_error([&] { export_csr(csr, COO, I64, I32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64); },
               SPARSETC_STATUS_TYPE_MISMATCH,
               "COO row and column indices must have one type, but offset_type is int64 and index_type is int32");
  expect_error([&] { export_csr(csr, 9, I64, I32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64); },
               SPARSETC_STATUS_INVALID_VALUE, "unknown format 9");
  expect_error([&] { export_csr(csr, CSR, 0, I32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64); },
               SPARSETC_STATUS_INVALID_VALUE, "unknown offset type 0");
  expect_error([&] { export_csr(csr, CSR, I64, 0, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64); },
               SPARSETC_STATUS_INVALID_VALUE, "unknown index type 0");
  expect_error([&] { export_csr(csr, CSR, I64, I32, 5, SPARSETC_VALUE_F64); }, SPARSETC_STATUS_INVALID_VALUE,
               "unknown index base 5");
  expect_error([&] { export_csr(csr, CSR, I64, I32, SPARSETC_BASE_ZERO, 4); }, SPARSETC_STATUS_INVALID_VALUE,
               "unknown value type 4");
}

}  // namespace

// Matrix Market reader and writer: every field, symmetry and format on hand-written files (plain
// and gzip), every error with its status and line number, exact round trips of random matrices,
// and the real matrices of the shared collection against their MANIFEST.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "io/matrix_market.hpp"
#include "engine_triplets.hpp"
#include "test_support.hpp"

namespace {

using sparsetc::detail::CooMatrix;
using sparsetc::detail::CsrMatrix;
using sparsetc::detail::Error;
using sparsetc::detail::MatrixMarketHeader;
using sparsetc::detail::read_matrix_market;
using sparsetc::detail::write_matrix_market;
namespace fs = std::filesystem;

// ---- helpers ---------------------------------------------------------------------------------

struct Entry {
  int64_t row, col;  // zero-based
  double value;
  bool operator==(const Entry& o) const { return row == o.row && col == o.col && value == o.value; }
};

std::ostream& operator<<(std::ostream& out, const Entry& e) {
  return out << "(" << e.row << ", " << e.col << ", " << e.value << ")";
}

std::vector<Entry> entries_of(const CooMatrix<double>& m) {
  EXPECT_EQ(m.row_idx.size(), m.col_idx.size());
  EXPECT_EQ(m.row_idx.size(), m.values.size());
  std::vector<Entry> out;
  for (size_t k = 0; k < m.row_idx.size(); ++k) out.push_back({m.row_idx[k], m.col_idx[k], m.values[k]});
  return out;
}

CooMatrix<double> read_text(const std::string& text, MatrixMarketHeader* header = nullptr) {
  std::istringstream in(text);
  return read_matrix_market(in, "test.mtx", header);
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A file name of its own for every test (and every process: ctest may run several at once).
std::string temp_path(const std::string& suffix) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "_" + info->name();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return ::testing::TempDir() + "sparsetc_mm_" + std::to_string(getpid()) + "_" + name + suffix;
}

// Writes text to path, gzip-compressed when the path ends in ".gz".
void write_file(const std::string& path, const std::string& text) {
  if (ends_with(path, ".gz")) {
    gzFile file = gzopen(path.c_str(), "wb");
    ASSERT_NE(file, nullptr) << path;
    ASSERT_EQ(gzwrite(file, text.data(), unsigned(text.size())), int(text.size()));
    ASSERT_EQ(gzclose(file), Z_OK);
  } else {
    std::ofstream out(path, std::ios::binary);
    out << text;
    ASSERT_TRUE(out.good()) << path;
  }
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs f, which must throw Error with this status and a message starting "<name>:<line>: " and
// containing `what`.
template <typename F>
void expect_error(F&& f, sparsetc_status_t status, const std::string& name, int64_t line, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << "no error; expected status " << status << " with '" << what << "'";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.status(), status) << message;
    const std::string prefix = name + ":" + std::to_string(line) + ": ";
    EXPECT_EQ(message.substr(0, prefix.size()), prefix) << message;
    EXPECT_NE(message.find(what), std::string::npos) << "'" << what << "' not in: " << message;
  }
}

using sparsetc_test::csr_of;

// The entries of a CSR matrix in row order: what the writer must produce and the reader return.
std::vector<Entry> entries_of(const CsrMatrix<double>& m) {
  std::vector<Entry> out;
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t k = m.row_ptr[size_t(i)]; k < m.row_ptr[size_t(i + 1)]; ++k)
      out.push_back({i, m.col_idx[size_t(k)], m.values[size_t(k)]});
  return out;
}

// Bitwise equality: tells -0.0 from 0.0 and keeps NaN comparable.
void expect_same_bits(const std::vector<Entry>& got, const std::vector<Entry>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(got[k].row, want[k].row) << k;
    EXPECT_EQ(got[k].col, want[k].col) << k;
    uint64_t a = 0, b = 0;
    std::memcpy(&a, &got[k].value, sizeof a);
    std::memcpy(&b, &want[k].value, sizeof b);
    if (std::isnan(want[k].value)) {
      EXPECT_TRUE(std::isnan(got[k].value)) << k;
    } else {
      EXPECT_EQ(a, b) << k << ": " << got[k].value << " != " << want[k].value;
    }
  }
}

// ---- hand-written files with literal expectations ---------------------------------------------

TEST(MatrixMarketRead, GeneralRealWithCommentsBlanksCrlfAndTabs) {
  const std::string text =
      "%%MATRIXMARKET Matrix COORDINATE Real GENERAL\r\n"
      "% a comment\r\n"
      "\r\n"
      "   % an indented comment\r\n"
      "  3 \t 4   5  \r\n"
      "1 1 1.5\r\n"
      "\r\n"
      "% between entries\r\n"
      "\t3  4\t-2.25e-3  \r\n"
      "2 2 0\r\n"
      "1 1 +7\r\n"  // duplicates are kept
      "3 1 -.5";    // no newline at the end
  MatrixMarketHeader h;
  const auto m = read_text(text, &h);
  EXPECT_EQ(m.rows, 3);
  EXPECT_EQ(m.cols, 4);
  EXPECT_EQ(h.object, "matrix");
  EXPECT_EQ(h.format, "coordinate");
  EXPECT_EQ(h.field, "real");
  EXPECT_EQ(h.symmetry, "general");
  EXPECT_EQ(h.rows, 3);
  EXPECT_EQ(h.cols, 4);
  EXPECT_EQ(h.entries, 5);
  const std::vector<Entry> want = {{0, 0, 1.5}, {2, 3, -2.25e-3}, {1, 1, 0.0}, {0, 0, 7.0}, {2, 0, -0.5}};
  EXPECT_EQ(entries_of(m), want);
}

TEST(MatrixMarketRead, SymmetricRealMirrorsOffDiagonal) {
  const auto m = read_text(
      "%%MatrixMarket matrix coordinate real symmetric\n"
      "3 3 4\n"
      "1 1 2.5\n"
      "3 1 -1\n"
      "2 2 4\n"
      "3 2 0.125\n");
  const std::vector<Entry> want = {{0, 0, 2.5}, {2, 0, -1}, {0, 2, -1}, {1, 1, 4}, {2, 1, 0.125}, {1, 2, 0.125}};
  EXPECT_EQ(m.rows, 3);
  EXPECT_EQ(m.cols, 3);
  EXPECT_EQ(entries_of(m), want);
}

TEST(MatrixMarketRead, SymmetricUpperTriangleEntryIsMirroredToo) {
  const auto m = read_text("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 3\n");
  const std::vector<Entry> want = {{0, 1, 3}, {1, 0, 3}};
  EXPECT_EQ(entries_of(m), want);
}

TEST(MatrixMarketRead, SkewSymmetricNegatesMirror) {
  const auto m = read_text(
      "%%MatrixMarket matrix coordinate real skew-symmetric\n"
      "3 3 2\n"
      "2 1 1.5\n"
      "3 2 -4\n");
  const std::vector<Entry> want = {{1, 0, 1.5}, {0, 1, -1.5}, {2, 1, -4}, {1, 2, 4}};
  EXPECT_EQ(entries_of(m), want);
}

TEST(MatrixMarketRead, RealHermitianIsSymmetric) {
  MatrixMarketHeader h;
  const auto m = read_text(
      "%%MatrixMarket matrix coordinate real hermitian\n"
      "2 2 2\n"
      "1 1 3\n"
      "2 1 -6\n",
      &h);
  EXPECT_EQ(h.symmetry, "hermitian");
  const std::vector<Entry> want = {{0, 0, 3}, {1, 0, -6}, {0, 1, -6}};
  EXPECT_EQ(entries_of(m), want);
}

TEST(MatrixMarketRead, PatternSymmetricGetsOnes) {
  MatrixMarketHeader h;
  const auto m = read_text(
      "%%MatrixMarket matrix coordinate pattern symmetric\n"
      "4 4 3\n"
      "2 1\n"
      "4 4\n"
      "4 1\n",
      &h);
  EXPECT_EQ(h.field, "pattern");
  EXPECT_EQ(h.entries, 3);
  const std::vector<Entry> want = {{1, 0, 1}, {0, 1, 1}, {3, 3, 1}, {3, 0, 1}, {0, 3, 1}};
  EXPECT_EQ(entries_of(m), want);
}

TEST(MatrixMarketRead, PatternGeneral) {
  const auto m = read_text("%%MatrixMarket matrix coordinate pattern general\n2 5 2\n1 5\n2 1\n");
  const std::vector<Entry> want = {{0, 4, 1}, {1, 0, 1}};
  EXPECT_EQ(entries_of(m), want);
}

TEST(MatrixMarketRead, IntegerAndDoubleFields) {
  MatrixMarketHeader h;
  const auto m = read_text("%%MatrixMarket matrix coordinate integer general\n2 2 3\n1 1 -7\n2 1 +12\n2 2 0\n", &h);
  EXPECT_EQ(h.field, "integer");
  const std::vector<Entry> want = {{0, 0, -7}, {1, 0, 12}, {1, 1, 0}};
  EXPECT_EQ(entries_of(m), want);

  const auto d = read_text("%%MatrixMarket matrix coordinate double general\n1 1 1\n1 1 0.1\n", &h);
  EXPECT_EQ(h.field, "double");
  const std::vector<Entry> want_d = {{0, 0, 0.1}};
  EXPECT_EQ(entries_of(d), want_d);
}

TEST(MatrixMarketRead, IntegerSymmetricAndSkew) {
  const auto s = read_text("%%MatrixMarket matrix coordinate integer symmetric\n2 2 2\n2 2 5\n2 1 -3\n");
  const std::vector<Entry> want_s = {{1, 1, 5}, {1, 0, -3}, {0, 1, -3}};
  EXPECT_EQ(entries_of(s), want_s);
  const auto k = read_text("%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 9\n");
  const std::vector<Entry> want_k = {{1, 0, 9}, {0, 1, -9}};
  EXPECT_EQ(entries_of(k), want_k);
}

TEST(MatrixMarketRead, ArrayGeneralIsColumnMajorAndKeepsZeros) {
  MatrixMarketHeader h;
  const auto m = read_text(
      "%%MatrixMarket matrix array real general\n"
      "% 2 x 3\n"
      "2 3\n"
      "1\n2\n"
      "0\n"
      "% a comment among the values\n"
      "4\n"
      "5.5\n-6\n",
      &h);
  EXPECT_EQ(h.format, "array");
  EXPECT_EQ(h.entries, 6);
  const std::vector<Entry> want = {{0, 0, 1}, {1, 0, 2}, {0, 1, 0}, {1, 1, 4}, {0, 2, 5.5}, {1, 2, -6}};
  EXPECT_EQ(entries_of(m), want);
}

TEST(MatrixMarketRead, ArraySymmetricStoresLowerTriangleColumns) {
  MatrixMarketHeader h;
  // Column 1: a11 a21 a31; column 2: a22 a32; column 3: a33.
  const auto m = read_text("%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n0\n6\n", &h);
  EXPECT_EQ(h.entries, 6);
  const std::vector<Entry> want = {{0, 0, 1}, {1, 0, 2}, {0, 1, 2}, {2, 0, 3}, {0, 2, 3},
                                   {1, 1, 4}, {2, 1, 0}, {1, 2, 0}, {2, 2, 6}};
  EXPECT_EQ(entries_of(m), want);
}

TEST(MatrixMarketRead, ArraySkewSymmetricOmitsDiagonal) {
  MatrixMarketHeader h;
  const auto m = read_text("%%MatrixMarket matrix array integer skew-symmetric\n3 3\n1\n2\n3\n", &h);
  EXPECT_EQ(h.entries, 3);
  const std::vector<Entry> want = {{1, 0, 1}, {0, 1, -1}, {2, 0, 2}, {0, 2, -2}, {2, 1, 3}, {1, 2, -3}};
  EXPECT_EQ(entries_of(m), want);
}

TEST(MatrixMarketRead, ArrayHermitianAndIntegerGeneral) {
  const auto h = read_text("%%MatrixMarket matrix array real hermitian\n2 2\n1\n-2\n3\n");
  const std::vector<Entry> want_h = {{0, 0, 1}, {1, 0, -2}, {0, 1, -2}, {1, 1, 3}};
  EXPECT_EQ(entries_of(h), want_h);
  const auto g = read_text("%%MatrixMarket matrix array integer general\n1 2\n7\n-8\n");
  const std::vector<Entry> want_g = {{0, 0, 7}, {0, 1, -8}};
  EXPECT_EQ(entries_of(g), want_g);
}

TEST(MatrixMarketRead, EmptyMatrices) {
  const auto a = read_text("%%MatrixMarket matrix coordinate real general\n0 0 0\n");
  EXPECT_EQ(a.rows, 0);
  EXPECT_EQ(a.nnz(), 0);
  const auto b = read_text("%%MatrixMarket matrix coordinate real general\n5 7 0\n% nothing\n");
  EXPECT_EQ(b.rows, 5);
  EXPECT_EQ(b.cols, 7);
  EXPECT_EQ(b.nnz(), 0);
  const auto c = read_text("%%MatrixMarket matrix array real general\n0 3\n");
  EXPECT_EQ(c.cols, 3);
  EXPECT_EQ(c.nnz(), 0);
}

TEST(MatrixMarketRead, NanInfAndOutOfRangeLiteralsAreValues) {
  const auto m = read_text(
      "%%MatrixMarket matrix coordinate real general\n"
      "1 8 8\n"
      "1 1 nan\n1 2 -Inf\n1 3 INFINITY\n1 4 NaN\n1 5 1e400\n1 6 -1e400\n1 7 1e-400\n1 8 4.9406564584124654e-324\n");
  ASSERT_EQ(m.nnz(), 8);
  EXPECT_TRUE(std::isnan(m.values[0]));
  EXPECT_EQ(m.values[1], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(m.values[2], std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(m.values[3]));
  EXPECT_EQ(m.values[4], std::numeric_limits<double>::infinity());
  EXPECT_EQ(m.values[5], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(m.values[6], 0.0);
  EXPECT_EQ(m.values[7], std::numeric_limits<double>::denorm_min());
}

TEST(MatrixMarketRead, BlankLinesBeforeBannerAndByteOrderMark) {
  const auto a = read_text("\n  \n%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2\n");
  EXPECT_EQ(entries_of(a), (std::vector<Entry>{{0, 0, 2}}));
  const auto b = read_text("\xEF\xBB\xBF%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 3\n");
  EXPECT_EQ(entries_of(b), (std::vector<Entry>{{0, 0, 3}}));
}

// Lines longer than the reader's 1 MiB buffer, and lines cut by its chunk boundaries.
TEST(MatrixMarketRead, LongLinesAndChunkBoundaries) {
  std::string text = "%%MatrixMarket matrix coordinate real general\n%" + std::string(3 << 20, 'x') + "\r\n";
  const int64_t n = 200000;  // about 3 MB of entries
  text += "1000 1000 " + std::to_string(n) + "\n";
  std::vector<Entry> want;
  for (int64_t k = 0; k < n; ++k) {
    const Entry e{k % 1000, (k * 7) % 1000, double(k) + 0.25};
    want.push_back(e);
    text += std::to_string(e.row + 1) + " " + std::to_string(e.col + 1) + " " + std::to_string(k) + ".25\n";
  }
  EXPECT_EQ(entries_of(read_text(text)), want);
  const std::string path = temp_path(".mtx.gz");
  write_file(path, text);
  EXPECT_EQ(entries_of(read_matrix_market(path)), want);
  fs::remove(path);
}

// ---- every field x symmetry x format, plain and gzip files ------------------------------------

struct Stored {
  int64_t row, col;  // one-based, lower triangle (strictly lower where skew)
  double real;
  int64_t integer;
};

const std::vector<Stored> kLower = {{1, 1, 0.75, 3}, {3, 1, -1.75, -7}, {4, 2, 3e-5, 12}, {4, 4, -2.5e10, 5},
                                    {3, 3, 0.0, 0},  {4, 3, 1e300, -1}};

using GridParam = std::tuple<std::string, std::string, std::string, bool>;  // format, field, symmetry, gz

class MatrixMarketGrid : public ::testing::TestWithParam<GridParam> {};

std::string value_text(const Stored& s, const std::string& field) {
  if (field == "integer") return std::to_string(s.integer);
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", s.real);
  return buffer;
}

TEST_P(MatrixMarketGrid, ReadsExpandedEntries) {
  const auto& [format, field, symmetry, gz] = GetParam();
  const bool skew = symmetry == "skew-symmetric";
  const bool general = symmetry == "general";
  const double value_sign = skew ? -1.0 : 1.0;

  // The stored entries: a 4 x 4 lower triangle (array: every position of it, in column order).
  std::vector<Stored> stored;
  if (format == "coordinate") {
    for (const Stored& s : kLower)
      if (!(skew && s.row == s.col)) stored.push_back(s);
  } else {
    for (int64_t j = 1; j <= 4; ++j)
      for (int64_t i = general ? 1 : skew ? j + 1 : j; i <= 4; ++i)
        stored.push_back({i, j, double(i * 10 + j) / 8, i * 10 - j});
  }
  std::string text = "%%MatrixMarket matrix " + format + " " + field + " " + symmetry + "\n% grid\n4 4";
  if (format == "coordinate") text += " " + std::to_string(stored.size());
  text += "\n";
  for (const Stored& s : stored) {
    if (format == "coordinate") text += std::to_string(s.row) + " " + std::to_string(s.col);
    if (field != "pattern") text += (format == "coordinate" ? " " : "") + value_text(s, field);
    text += "\n";
  }
  std::vector<Entry> want;
  for (const Stored& s : stored) {
    const double v = field == "pattern" ? 1.0 : field == "integer" ? double(s.integer) : s.real;
    want.push_back({s.row - 1, s.col - 1, v});
    if (!general && s.row != s.col) want.push_back({s.col - 1, s.row - 1, value_sign * v});
  }

  const std::string path = temp_path(gz ? ".mtx.gz" : ".mtx");
  write_file(path, text);
  MatrixMarketHeader h;
  const auto m = read_matrix_market(path, &h);
  fs::remove(path);
  EXPECT_EQ(m.rows, 4);
  EXPECT_EQ(m.cols, 4);
  EXPECT_EQ(h.format, format);
  EXPECT_EQ(h.field, field);
  EXPECT_EQ(h.symmetry, symmetry);
  EXPECT_EQ(h.entries, int64_t(stored.size()));
  EXPECT_EQ(entries_of(m), want);
}

std::string grid_name(const ::testing::TestParamInfo<GridParam>& info) {
  std::string name = std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" + std::get<2>(info.param) +
                     (std::get<3>(info.param) ? "_gz" : "_plain");
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Coordinate, MatrixMarketGrid,
                         ::testing::Combine(::testing::Values("coordinate"),
                                            ::testing::Values("real", "double", "integer", "pattern"),
                                            ::testing::Values("general", "symmetric", "skew-symmetric", "hermitian"),
                                            ::testing::Bool()),
                         grid_name);
INSTANTIATE_TEST_SUITE_P(Array, MatrixMarketGrid,
                         ::testing::Combine(::testing::Values("array"), ::testing::Values("real", "double", "integer"),
                                            ::testing::Values("general", "symmetric", "skew-symmetric", "hermitian"),
                                            ::testing::Bool()),
                         grid_name);

// ---- format errors: status, line number and what ----------------------------------------------

struct ErrorCase {
  const char* label;
  std::string text;
  sparsetc_status_t status;
  int64_t line;
  std::string what;
};

std::ostream& operator<<(std::ostream& out, const ErrorCase& c) { return out << c.label; }

class MatrixMarketError : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(MatrixMarketError, ReportsStatusLineAndCause) {
  const ErrorCase& c = GetParam();
  expect_error([&] { read_text(c.text); }, c.status, "test.mtx", c.line, c.what);
}

constexpr sparsetc_status_t kFormat = SPARSETC_STATUS_FILE_FORMAT_ERROR;
const std::string kReal = "%%MatrixMarket matrix coordinate real general\n";
const std::string kSym = "%%MatrixMarket matrix coordinate real symmetric\n";

const ErrorCase kErrorCases[] = {
    {"EmptyFile", "", kFormat, 1, "bad banner"},
    {"OnlyBlankLines", "\n\n", kFormat, 2, "bad banner"},
    {"BannerMissingKeyword", "%%MatrixMarket matrix coordinate real\n1 1 0\n", kFormat, 1, "found 3"},
    {"BannerExtraKeyword", "%%MatrixMarket matrix coordinate real general x\n", kFormat, 1, "found 5"},
    {"BannerSinglePercent", "%MatrixMarket matrix coordinate real general\n", kFormat, 1, "bad banner"},
    {"CommentBeforeBanner", "% hi\n%%MatrixMarket matrix coordinate real general\n", kFormat, 1, "bad banner"},
    {"NoBanner", "3 3 1\n1 1 1\n", kFormat, 1, "bad banner"},
    {"VectorObject", "%%MatrixMarket vector coordinate real general\n", kFormat, 1, "unsupported object 'vector'"},
    {"UnknownFormat", "%%MatrixMarket matrix sparse real general\n", kFormat, 1, "unsupported format 'sparse'"},
    {"UnknownField", "%%MatrixMarket matrix coordinate quaternion general\n", kFormat, 1,
     "unsupported field 'quaternion'"},
    {"UnknownSymmetry", "%%MatrixMarket matrix coordinate real upper\n", kFormat, 1, "unsupported symmetry 'upper'"},
    {"ArrayPattern", "%%MatrixMarket matrix array pattern general\n1 1\n", kFormat, 1, "pattern"},
    {"Complex", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 2\n", SPARSETC_STATUS_NOT_SUPPORTED,
     1, "complex matrices are not supported"},
    {"ComplexHermitianAfterBlanks", "\n\n%%MatrixMarket matrix array Complex hermitian\n",
     SPARSETC_STATUS_NOT_SUPPORTED, 3, "complex matrices are not supported"},
    {"MissingSizeLine", kReal + "% only comments\n\n", kFormat, 3, "missing size line"},
    {"SizeLineTooShort", kReal + "% c\n3 3\n", kFormat, 3, "bad size line"},
    {"SizeLineNotNumeric", kReal + "3 x 1\n", kFormat, 2, "'x' is not an integer"},
    {"SizeLineFraction", kReal + "3 3.0 1\n", kFormat, 2, "'3.0' is not an integer"},
    {"SizeLineNegative", kReal + "-3 3 1\n", kFormat, 2, "negative size -3"},
    {"SizeLineNegativeEntries", kReal + "3 3 -1\n", kFormat, 2, "negative size -1"},
    {"SizeLineExtraToken", kReal + "3 3 1 7\n1 1 1\n", kFormat, 2, "unexpected '7'"},
    {"SizeLineOverflow", kReal + "99999999999999999999 3 1\n", kFormat, 2, "is not an integer"},
    {"ArraySizeLineExtraToken", "%%MatrixMarket matrix array real general\n2 2 4\n", kFormat, 2, "unexpected '4'"},
    {"SymmetricNotSquare", kSym + "3 4 1\n", kFormat, 2, "must be square"},
    {"ArrayTooLarge", "%%MatrixMarket matrix array real general\n4294967296 4294967296\n", kFormat, 2,
     "too large"},
    {"RowOutOfRange", kReal + "3 4 2\n1 1 1.0\n4 1 2.0\n", kFormat, 4, "row index 4 out of range [1, 3]"},
    {"ColumnOutOfRange", kReal + "3 4 2\n1 1 1.0\n% c\n1 5 2.0\n", kFormat, 5, "column index 5 out of range [1, 4]"},
    {"ZeroIndex", kReal + "3 4 1\n0 1 1.0\n", kFormat, 3, "row index 0 out of range [1, 3]"},
    {"NegativeIndex", kReal + "3 4 1\n1 -2 1.0\n", kFormat, 3, "column index -2 out of range [1, 4]"},
    {"NonNumericIndex", kReal + "3 4 1\na 1 1.0\n", kFormat, 3, "bad row index 'a'"},
    {"FractionalIndex", kReal + "3 4 1\n1 1.5 1.0\n", kFormat, 3, "bad column index '1.5'"},
    {"HugeIndex", kReal + "3 4 1\n99999999999999999999 1 1.0\n", kFormat, 3, "bad row index"},
    {"MissingColumn", kReal + "3 4 1\n2\n", kFormat, 3, "missing column index"},
    {"MissingValue", kReal + "3 4 2\n1 1 1\n2 2\n", kFormat, 4, "missing value"},
    {"NonNumericValue", kReal + "3 4 1\n1 1 abc\n", kFormat, 3, "bad value 'abc'"},
    {"TrailingGarbageValue", kReal + "3 4 1\n1 1 1.5x\n", kFormat, 3, "bad value '1.5x'"},
    {"HexValue", kReal + "3 4 1\n1 1 0x10\n", kFormat, 3, "bad value '0x10'"},
    {"IntegerFieldFraction", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", kFormat, 3,
     "expected an integer"},
    {"ExtraToken", kReal + "3 4 1\n1 1 1.0 7\n", kFormat, 3, "unexpected '7'"},
    {"PatternWithValue", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1.0\n", kFormat, 3,
     "unexpected '1.0'"},
    {"TooFewEntries", kReal + "3 4 3\n1 1 1\n2 2 2\n% end\n\n", kFormat, 6, "expected 3, found 2"},
    {"TooFewNoNewline", kReal + "3 4 3\n1 1 1\n2 2 2", kFormat, 4, "expected 3, found 2"},
    {"TooFewCrlf", "%%MatrixMarket matrix coordinate real general\r\n3 4 2\r\n1 1 1\r\n", kFormat, 3,
     "expected 2, found 1"},
    {"TooManyEntries", kReal + "3 4 1\n1 1 1\n% c\n2 2 2\n3 3 3\n", kFormat, 5, "too many entries: expected 1"},
    {"SkewDiagonal", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 5\n", kFormat, 4,
     "diagonal entry (2, 2) in a skew-symmetric matrix"},
    {"ArrayTooFew", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", kFormat, 5, "expected 4, found 3"},
    {"ArraySymmetricTooFew", "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n", kFormat, 7,
     "expected 6, found 5"},
    {"ArrayTooMany", "%%MatrixMarket matrix array real general\n1 2\n1\n2\n3\n", kFormat, 5, "too many entries"},
    {"ArrayBadValue", "%%MatrixMarket matrix array real general\n1 2\n1\n% c\nfoo\n", kFormat, 5,
     "bad value 'foo'"},
    {"ArrayTwoValuesOnALine", "%%MatrixMarket matrix array real general\n1 2\n1 2\n", kFormat, 3, "unexpected '2'"},
    {"ErrorLineCountsCrlfAndComments", "%%MatrixMarket matrix coordinate real general\r\n%c\r\n\r\n2 2 2\r\n1 1 1\r\n"
                                       "%c\r\n2 3 1\r\n", kFormat, 7, "column index 3 out of range [1, 2]"},
};

INSTANTIATE_TEST_SUITE_P(Cases, MatrixMarketError, ::testing::ValuesIn(kErrorCases),
                         [](const ::testing::TestParamInfo<ErrorCase>& p) { return std::string(p.param.label); });

TEST(MatrixMarketFileError, FormatErrorNamesThePathAndLine) {
  const std::string path = temp_path(".mtx.gz");
  write_file(path, kReal + "% c\n2 2 1\n1 3 1\n");
  expect_error([&] { read_matrix_market(path); }, kFormat, path, 4, "column index 3 out of range [1, 2]");
  write_file(path, "%%MatrixMarket matrix coordinate complex hermitian\n");
  expect_error([&] { read_matrix_market(path); }, SPARSETC_STATUS_NOT_SUPPORTED, path, 1, "complex");
  fs::remove(path);
}

TEST(MatrixMarketFileError, MissingFileIsIoError) {
  const std::string path = temp_path("_does_not_exist.mtx.gz");
  try {
    read_matrix_market(path);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), SPARSETC_STATUS_IO_ERROR);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(MatrixMarketFileError, DirectoryIsIoError) {
  try {
    read_matrix_market(::testing::TempDir());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), SPARSETC_STATUS_IO_ERROR) << e.what();
  }
}

TEST(MatrixMarketFileError, FailedStreamIsIoError) {
  std::istringstream in("%%MatrixMarket matrix coordinate real general\n1 1 0\n");
  in.setstate(std::ios::failbit);
  try {
    read_matrix_market(in, "s");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), SPARSETC_STATUS_IO_ERROR) << e.what();
  }
}

// A valid gzip file of a few hundred kB, as bytes.
std::string gzip_bytes(const std::string& path) {
  std::string text = kReal + "100 100 50000\n";
  std::mt19937_64 rng(sparsetc_test::fresh_seed());
  for (int k = 0; k < 50000; ++k)
    text += std::to_string(rng() % 100 + 1) + " " + std::to_string(rng() % 100 + 1) + " " +
            std::to_string(double(rng() % 1000000) / 7) + "\n";
  write_file(path, text);
  EXPECT_EQ(read_matrix_market(path).nnz(), 50000);  // sound before it is damaged
  return read_bytes(path);
}

void expect_io_error(const std::string& path, const std::string& bytes) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  try {
    read_matrix_market(path);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), SPARSETC_STATUS_IO_ERROR) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(MatrixMarketFileError, CorruptGzipIsIoError) {
  const std::string path = temp_path(".mtx.gz");
  const std::string good = gzip_bytes(path);
  ASSERT_GT(good.size(), 1000u);

  std::string bad_block = good;
  bad_block[10] = char(bad_block[10] | 0x06);  // the first deflate block's type becomes 3: invalid
  expect_io_error(path, bad_block);

  std::string bad_crc = good;
  bad_crc[bad_crc.size() - 8] = char(~bad_crc[bad_crc.size() - 8]);  // data intact, checksum wrong
  expect_io_error(path, bad_crc);

  expect_io_error(path, good.substr(0, good.size() / 2));  // truncated mid-stream
  fs::remove(path);
}

// ---- writer ------------------------------------------------------------------------------------

TEST(MatrixMarketWrite, ExactText) {
  CsrMatrix<double> m;
  m.rows = 3;
  m.cols = 4;
  m.row_ptr = {0, 2, 2, 4};
  m.col_idx = {0, 3, 1, 2};
  m.values = {0.1, -2, 1e22, -0.0};
  std::ostringstream out;
  write_matrix_market(out, m);
  EXPECT_EQ(out.str(),
            "%%MatrixMarket matrix coordinate real general\n"
            "3 4 4\n"
            "1 1 0.10000000000000001\n"
            "1 4 -2\n"
            "3 2 1e+22\n"
            "3 3 -0\n");
}

// The writer's digits are printf's "%.17g", value for value.
TEST(MatrixMarketWrite, DigitsMatchPrintf17g) {
  std::mt19937_64 rng(sparsetc_test::fresh_seed());
  CsrMatrix<double> m;
  m.rows = 1;
  m.cols = 1;
  m.row_ptr = {0, 0};
  std::string want;
  for (int k = 0; k < 2000; ++k) {
    uint64_t bits = rng();
    double v = 0;
    std::memcpy(&v, &bits, sizeof v);
    if (!std::isfinite(v)) continue;
    m.col_idx.push_back(0);
    m.values.push_back(v);
    char line[64];
    std::snprintf(line, sizeof line, "1 1 %.17g\n", v);
    want += line;
  }
  m.row_ptr[1] = m.nnz();
  std::ostringstream out;
  write_matrix_market(out, m);
  const std::string header = "%%MatrixMarket matrix coordinate real general\n1 1 " + std::to_string(m.nnz()) + "\n";
  EXPECT_EQ(out.str(), header + want);
}

CsrMatrix<double> random_csr(uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int64_t rows = int64_t(rng() % 300) + 1, cols = int64_t(rng() % 300) + 1;
  const double density = 0.002 + double(rng() % 100) / 1000;
  CsrMatrix<double> m = csr_of(sparsetc_test::random_triplets(rows, cols, density, rng()));
  // Values that need all 17 digits, and the awkward ones.
  const double special[] = {1.0 / 3,
                            -0.0,
                            std::numeric_limits<double>::denorm_min(),
                            std::numeric_limits<double>::min(),
                            std::numeric_limits<double>::max(),
                            std::numeric_limits<double>::lowest(),
                            std::nextafter(1.0, 2.0),
                            3.141592653589793e-300,
                            123456789012345678.0};
  for (size_t k = 0; k < m.values.size(); ++k) {
    if (k % 5 == 0) {
      m.values[k] = special[(k / 5) % std::size(special)];
    } else {
      uint64_t bits = rng();
      std::memcpy(&m.values[k], &bits, sizeof bits);
      if (!std::isfinite(m.values[k])) m.values[k] = double(bits % 1000) / 7;
    }
  }
  return m;
}

TEST(MatrixMarketWrite, RandomRoundTripIsExact) {
  for (int trial = 0; trial < 20; ++trial) {
    const uint64_t seed = sparsetc_test::fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed));
    const CsrMatrix<double> m = random_csr(seed);
    const std::vector<Entry> want = entries_of(m);

    std::stringstream stream;
    write_matrix_market(stream, m);
    MatrixMarketHeader h;
    const auto from_stream = read_matrix_market(stream, "round trip", &h);
    EXPECT_EQ(h.field, "real");
    EXPECT_EQ(h.symmetry, "general");
    EXPECT_EQ(h.entries, m.nnz());
    EXPECT_EQ(from_stream.rows, m.rows);
    EXPECT_EQ(from_stream.cols, m.cols);
    expect_same_bits(entries_of(from_stream), want);

    for (const char* suffix : {".mtx", ".mtx.gz"}) {
      const std::string path = temp_path(suffix);
      write_matrix_market(path, m);
      const auto from_file = read_matrix_market(path);
      EXPECT_EQ(from_file.rows, m.rows);
      EXPECT_EQ(from_file.cols, m.cols);
      expect_same_bits(entries_of(from_file), want);
      fs::remove(path);
    }
  }
}

TEST(MatrixMarketWrite, GzPathIsCompressed) {
  const CsrMatrix<double> m = random_csr(sparsetc_test::fresh_seed());
  const std::string path = temp_path(".mtx.gz");
  write_matrix_market(path, m);
  const std::string bytes = read_bytes(path);
  ASSERT_GE(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b);
  fs::remove(path);
}

TEST(MatrixMarketWrite, NanAndInfRoundTrip) {
  CsrMatrix<double> m;
  m.rows = 2;
  m.cols = 2;
  m.row_ptr = {0, 2, 3};
  m.col_idx = {0, 1, 1};
  m.values = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
              -std::numeric_limits<double>::infinity()};
  std::stringstream stream;
  write_matrix_market(stream, m);
  const auto back = read_matrix_market(stream, "nan");
  ASSERT_EQ(back.nnz(), 3);
  EXPECT_TRUE(std::isnan(back.values[0]));
  EXPECT_EQ(back.values[1], std::numeric_limits<double>::infinity());
  EXPECT_EQ(back.values[2], -std::numeric_limits<double>::infinity());
}

TEST(MatrixMarketWrite, EmptyMatrix) {
  CsrMatrix<double> m;
  m.rows = 3;
  m.cols = 2;
  m.row_ptr = {0, 0, 0, 0};
  std::ostringstream out;
  write_matrix_market(out, m);
  EXPECT_EQ(out.str(), "%%MatrixMarket matrix coordinate real general\n3 2 0\n");
}

TEST(MatrixMarketWrite, UnwritablePathIsIoError) {
  CsrMatrix<double> m;
  m.rows = 1;
  m.cols = 1;
  m.row_ptr = {0, 1};
  m.col_idx = {0};
  m.values = {1};
  for (const char* suffix : {"/x.mtx", "/x.mtx.gz"}) {
    const std::string path = temp_path("_no_such_dir") + suffix;
    try {
      write_matrix_market(path, m);
      ADD_FAILURE() << "no error for " << path;
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), SPARSETC_STATUS_IO_ERROR) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
}

TEST(MatrixMarketWrite, FailedStreamIsIoError) {
  CsrMatrix<double> m;
  m.rows = 1;
  m.cols = 1;
  m.row_ptr = {0, 0};
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  try {
    write_matrix_market(out, m);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), SPARSETC_STATUS_IO_ERROR) << e.what();
  }
}

TEST(MatrixMarketWrite, MalformedCsrIsInvalidValueAndWritesNothing) {
  CsrMatrix<double> good;
  good.rows = 2;
  good.cols = 2;
  good.row_ptr = {0, 1, 2};
  good.col_idx = {0, 1};
  good.values = {1, 2};
  std::vector<CsrMatrix<double>> bad(5, good);
  bad[0].row_ptr = {0, 1};        // too short
  bad[1].row_ptr = {0, 2, 1};     // not monotone, wrong end
  bad[2].col_idx = {0, 2};        // column out of range
  bad[3].values = {1};            // lengths differ
  bad[4].row_ptr = {1, 1, 2};     // does not start at 0
  for (size_t k = 0; k < bad.size(); ++k) {
    std::ostringstream out;
    try {
      write_matrix_market(out, bad[k]);
      ADD_FAILURE() << "no error for case " << k;
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), SPARSETC_STATUS_INVALID_VALUE) << k << ": " << e.what();
    }
    EXPECT_TRUE(out.str().empty()) << k;
  }
}

// ---- the real matrices --------------------------------------------------------------------------

struct ManifestRow {
  int64_t rows = 0, cols = 0, nnz = 0;
  std::string field, symmetry;
};

// name -> row of MANIFEST.tsv (name rows cols nnz field symmetry ...); empty when absent.
std::map<std::string, ManifestRow> read_manifest() {
  std::map<std::string, ManifestRow> manifest;
  std::ifstream in(sparsetc_test::matrix_dir() + "/MANIFEST.tsv");
  std::string line;
  std::getline(in, line);  // column names
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name;
    ManifestRow row;
    if (fields >> name >> row.rows >> row.cols >> row.nnz >> row.field >> row.symmetry) manifest[name] = row;
  }
  return manifest;
}

const std::map<std::string, ManifestRow>& manifest() {
  static const std::map<std::string, ManifestRow> rows = read_manifest();
  return rows;
}

// Checks a read matrix against its MANIFEST row: sizes, stored entries, and the expansion of a
// symmetric file to 2 * stored - diagonal entries with every off-diagonal one mirrored.
void check_against_manifest(const std::string& name, const CooMatrix<double>& m, const MatrixMarketHeader& h) {
  const auto it = manifest().find(name);
  ASSERT_NE(it, manifest().end()) << name << " is not in MANIFEST.tsv";
  const ManifestRow& want = it->second;
  EXPECT_EQ(h.rows, want.rows) << name;
  EXPECT_EQ(h.cols, want.cols) << name;
  EXPECT_EQ(m.rows, want.rows) << name;
  EXPECT_EQ(m.cols, want.cols) << name;
  EXPECT_EQ(h.entries, want.nnz) << name;
  EXPECT_EQ(h.field, want.field) << name;
  EXPECT_EQ(h.symmetry, want.symmetry) << name;
  int64_t diagonal = 0, lower = 0, upper = 0;
  double lower_sum = 0, upper_sum = 0;
  for (int64_t k = 0; k < m.nnz(); ++k) {
    const int64_t i = m.row_idx[size_t(k)], j = m.col_idx[size_t(k)];
    ASSERT_TRUE(i >= 0 && i < m.rows && j >= 0 && j < m.cols) << name << " entry " << k;
    if (i == j) ++diagonal;
    (i > j ? lower : upper) += i != j;
    (i > j ? lower_sum : upper_sum) += i != j ? m.values[size_t(k)] : 0.0;
  }
  if (want.symmetry == "general") {
    EXPECT_EQ(m.nnz(), want.nnz) << name;
  } else {
    EXPECT_EQ(m.nnz(), 2 * want.nnz - diagonal) << name;
    EXPECT_EQ(lower, upper) << name;
    EXPECT_EQ(lower_sum, want.symmetry == "skew-symmetric" ? -upper_sum : upper_sum) << name;
  }
}

class RealMatrix : public ::testing::TestWithParam<const char*> {};

TEST_P(RealMatrix, MatchesManifest) {
  const std::string name = GetParam();
  const std::string path = sparsetc_test::matrix_path(name);
  if (path.empty() || manifest().empty()) GTEST_SKIP() << name << " or MANIFEST.tsv not in " << sparsetc_test::matrix_dir();
  MatrixMarketHeader h;
  const auto start = std::chrono::steady_clock::now();
  const auto m = read_matrix_market(path, &h);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "[ info     ] " << name << ": " << m.nnz() << " entries read in " << seconds << " s\n";
  RecordProperty("read_seconds", std::to_string(seconds));
  EXPECT_LT(seconds, 10.0) << "far slower than expected";  // ~0.1 s at -O2: a generous bound
  check_against_manifest(name, m, h);
}

INSTANTIATE_TEST_SUITE_P(Shared, RealMatrix,
                         ::testing::Values("1138_bus", "3elt", "west0479", "lp_afiro", "pds-100", "lp_osa_60"),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                           std::string name = p.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// First and last entries of a few files, as `zcat | grep -v %` shows them.
TEST(RealMatrixEntries, FirstAndLastEntries) {
  struct Expect {
    const char* name;
    std::vector<Entry> first;  // the leading entries, mirrors included
    Entry last;
  };
  const Expect cases[] = {
      {"1138_bus", {{0, 0, 1474.779}, {4, 0, -9.017133}, {0, 4, -9.017133}}, {1137, 1137, 117.647}},
      {"3elt", {{1, 0, 1}, {0, 1, 1}, {3, 0, 1}}, {4718, 4719, 1}},  // the mirror of "4720 4719"
      {"west0479", {{24, 0, 1}, {30, 0, -0.03764813}}, {380, 478, 0.07148988}},
      {"lp_afiro", {{2, 0, 1}, {3, 1, 1}}, {15, 50, 1}},
  };
  int checked = 0;
  for (const Expect& c : cases) {
    const std::string path = sparsetc_test::matrix_path(c.name);
    if (path.empty()) continue;
    const std::vector<Entry> got = entries_of(read_matrix_market(path));
    ASSERT_GE(got.size(), c.first.size()) << c.name;
    EXPECT_EQ(std::vector<Entry>(got.begin(), got.begin() + std::ptrdiff_t(c.first.size())), c.first) << c.name;
    EXPECT_EQ(got.back(), c.last) << c.name;
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no shared matrices in " << sparsetc_test::matrix_dir();
}

// Every file of the collection reads (complex ones are refused as NOT_SUPPORTED) and matches its
// MANIFEST row.
TEST(RealMatrixAll, EveryFileReads) {
  const fs::path dir = sparsetc_test::matrix_dir();
  std::error_code ec;
  if (!fs::is_directory(dir, ec) || manifest().empty()) GTEST_SKIP() << "no shared matrices in " << dir;
  const auto start = std::chrono::steady_clock::now();
  int read = 0, complex = 0;
  for (const auto& file : fs::directory_iterator(dir)) {
    const std::string path = file.path().string();
    if (!ends_with(path, ".mtx.gz")) continue;
    const std::string name = file.path().filename().string().substr(0, file.path().filename().string().size() - 7);
    SCOPED_TRACE(path);
    const auto it = manifest().find(name);
    const bool is_complex = it != manifest().end() && it->second.field == "complex";
    try {
      MatrixMarketHeader h;
      const auto m = read_matrix_market(path, &h);
      EXPECT_FALSE(is_complex) << "a complex matrix was read";
      check_against_manifest(name, m, h);
      ++read;
    } catch (const Error& e) {
      EXPECT_TRUE(is_complex) << e.what();
      EXPECT_EQ(e.status(), SPARSETC_STATUS_NOT_SUPPORTED) << e.what();
      EXPECT_NE(std::string(e.what()).find(path + ":"), std::string::npos) << e.what();
      ++complex;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "[ info     ] " << read << " matrices read, " << complex << " complex refused, in " << seconds
            << " s\n";
  EXPECT_GT(read, 0);
  int manifest_complex = 0;
  for (const auto& [name, row] : manifest()) manifest_complex += row.field == "complex";
  EXPECT_EQ(complex, manifest_complex);
}

}  // namespace

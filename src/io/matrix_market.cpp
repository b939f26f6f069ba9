#include "io/matrix_market.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "io/line_reader.hpp"
#include "io/number_parse.hpp"

namespace sparsetc::detail {

namespace {

enum class Format { kCoordinate, kArray };
enum class Field { kReal, kInteger, kPattern };
enum class Symmetry { kGeneral, kSymmetric, kSkew };  // a real hermitian matrix is symmetric

struct Layout {
  MatrixMarketHeader header;
  Format format = Format::kCoordinate;
  Field field = Field::kReal;
  Symmetry symmetry = Symmetry::kGeneral;
};

// Never reserve more than this up front: a corrupt size line must not allocate gigabytes.
constexpr int64_t kMaxReserve = int64_t(1) << 24;

// The lines of one input, and format errors that name the current line.
class Input {
 public:
  Input(std::unique_ptr<ByteSource> source, const std::string& name) : lines_(std::move(source)), name_(name) {}

  bool next(std::string_view& line) { return lines_.next(line); }

  // The next line that is neither blank nor a comment; false at the end of the input.
  bool next_data(std::string_view& line) {
    while (lines_.next(line))
      if (!is_blank_or_comment(line)) return true;
    return false;
  }

  int64_t line() const { return std::max<int64_t>(1, lines_.line_number()); }
  const std::string& name() const { return name_; }

  template <typename... Args>
  [[noreturn]] void error(Args&&... what) const {
    fail(SPARSETC_STATUS_FILE_FORMAT_ERROR, name_, ":", line(), ": ", std::forward<Args>(what)...);
  }

  static bool is_blank_or_comment(std::string_view line) {
    const size_t first = skip_space(line, 0);
    return first == line.size() || line[first] == '%';
  }

 private:
  LineReader lines_;
  const std::string& name_;
};

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> lowercase_tokens(std::string_view line) {
  std::vector<std::string> tokens;
  for (std::string_view token = next_token(line); !token.empty(); token = next_token(line))
    tokens.push_back(lowercase(token));
  return tokens;
}

Format parse_format(const Input& in, const std::string& word) {
  if (word == "coordinate") return Format::kCoordinate;
  if (word == "array") return Format::kArray;
  in.error("unsupported format '", word, "' (expected 'coordinate' or 'array')");
}

Field parse_field(const Input& in, const std::string& word) {
  if (word == "real" || word == "double") return Field::kReal;
  if (word == "integer") return Field::kInteger;
  if (word == "pattern") return Field::kPattern;
  if (word == "complex")
    fail(SPARSETC_STATUS_NOT_SUPPORTED, in.name(), ":", in.line(), ": complex matrices are not supported");
  in.error("unsupported field '", word, "' (expected 'real', 'double', 'integer' or 'pattern')");
}

Symmetry parse_symmetry(const Input& in, const std::string& word) {
  if (word == "general") return Symmetry::kGeneral;
  if (word == "symmetric" || word == "hermitian") return Symmetry::kSymmetric;
  if (word == "skew-symmetric") return Symmetry::kSkew;
  in.error("unsupported symmetry '", word, "' (expected 'general', 'symmetric', 'skew-symmetric' or 'hermitian')");
}

// "%%MatrixMarket matrix <format> <field> <symmetry>", in any letter case.
Layout parse_banner(Input& in) {
  std::string_view line;
  // Blank lines before the banner are tolerated; anything else must be the banner.
  do {
    if (!in.next(line)) in.error("bad banner: the file is empty");
  } while (skip_space(line, 0) == line.size());
  constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  if (line.substr(0, kByteOrderMark.size()) == kByteOrderMark) line.remove_prefix(kByteOrderMark.size());

  const std::vector<std::string> words = lowercase_tokens(line);
  if (words.empty() || words[0] != "%%matrixmarket")
    in.error("bad banner: expected '%%MatrixMarket matrix <format> <field> <symmetry>'");
  if (words.size() != 5)
    in.error("bad banner: expected 4 keywords after '%%MatrixMarket', found ", words.size() - 1);
  if (words[1] != "matrix") in.error("unsupported object '", words[1], "' (expected 'matrix')");

  Layout layout;
  layout.format = parse_format(in, words[2]);
  layout.field = parse_field(in, words[3]);
  layout.symmetry = parse_symmetry(in, words[4]);
  if (layout.format == Format::kArray && layout.field == Field::kPattern)
    in.error("bad banner: a pattern matrix must use the coordinate format");
  layout.header.object = words[1];
  layout.header.format = words[2];
  layout.header.field = words[3];
  layout.header.symmetry = words[4];
  return layout;
}

int64_t parse_size(const Input& in, std::string_view token, const char* expected) {
  if (token.empty()) in.error("bad size line: expected '", expected, "'");
  int64_t value = 0;
  if (!parse_int64(token, value)) in.error("bad size line: '", token, "' is not an integer");
  if (value < 0) in.error("bad size line: negative size ", value);
  return value;
}

// Values stored by an array file: the whole matrix, or one triangle of a square one.
int64_t array_entries(const Input& in, int64_t rows, int64_t cols, Symmetry symmetry) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  if (rows != 0 && cols > max / rows) in.error("bad size line: ", rows, " x ", cols, " is too large");
  if (symmetry == Symmetry::kGeneral) return rows * cols;
  // n (n +- 1) / 2, halving the even factor first so that nothing overflows.
  const int64_t other = symmetry == Symmetry::kSymmetric ? rows + 1 : rows - 1;
  return rows % 2 == 0 ? rows / 2 * other : other / 2 * rows;
}

// "rows cols entries" (coordinate) or "rows cols" (array).
void parse_size_line(Input& in, Layout& layout) {
  std::string_view line;
  if (!in.next_data(line)) in.error("missing size line");
  const bool coordinate = layout.format == Format::kCoordinate;
  const char* expected = coordinate ? "rows cols entries" : "rows cols";
  MatrixMarketHeader& h = layout.header;
  h.rows = parse_size(in, next_token(line), expected);
  h.cols = parse_size(in, next_token(line), expected);
  if (coordinate) h.entries = parse_size(in, next_token(line), expected);
  if (const std::string_view extra = next_token(line); !extra.empty())
    in.error("bad size line: unexpected '", extra, "' after '", expected, "'");
  if (layout.symmetry != Symmetry::kGeneral && h.rows != h.cols)
    in.error("bad size line: a ", h.symmetry, " matrix must be square, not ", h.rows, " x ", h.cols);
  if (!coordinate) h.entries = array_entries(in, h.rows, h.cols, layout.symmetry);
}

// A one-based index in [1, limit], returned zero-based.
int64_t parse_index(const Input& in, std::string_view token, int64_t limit, const char* which) {
  if (token.empty()) in.error("missing ", which, " index");
  int64_t index = 0;
  if (!parse_int64(token, index)) in.error("bad ", which, " index '", token, "'");
  if (index < 1 || index > limit) in.error(which, " index ", index, " out of range [1, ", limit, "]");
  return index - 1;
}

double parse_value(const Input& in, std::string_view token, Field field) {
  if (token.empty()) in.error("missing value");
  if (field == Field::kInteger) {
    int64_t value = 0;
    if (!parse_int64(token, value)) in.error("bad value '", token, "': expected an integer");
    return double(value);
  }
  double value = 0;
  if (!parse_double(token, value)) in.error("bad value '", token, "'");
  return value;
}

void expect_line_end(const Input& in, std::string_view rest) {
  if (const std::string_view extra = next_token(rest); !extra.empty())
    in.error("unexpected '", extra, "' after the entry");
}

// Appends (i, j, v) and, for a symmetric layout, its mirror image.
void add_entry(const Input& in, CooMatrix<double>& out, int64_t i, int64_t j, double v, Symmetry symmetry) {
  out.row_idx.push_back(i);
  out.col_idx.push_back(j);
  out.values.push_back(v);
  if (symmetry == Symmetry::kGeneral) return;
  if (i == j) {
    if (symmetry == Symmetry::kSkew)
      in.error("diagonal entry (", i + 1, ", ", j + 1, ") in a skew-symmetric matrix");
    return;
  }
  out.row_idx.push_back(j);
  out.col_idx.push_back(i);
  out.values.push_back(symmetry == Symmetry::kSkew ? -v : v);
}

void reserve(CooMatrix<double>& out, const Layout& layout) {
  int64_t expected = layout.header.entries;
  if (layout.symmetry != Symmetry::kGeneral) expected = expected > kMaxReserve ? kMaxReserve : 2 * expected;
  const size_t n = size_t(std::min(expected, kMaxReserve));
  out.row_idx.reserve(n);
  out.col_idx.reserve(n);
  out.values.reserve(n);
}

void fail_too_few(const Input& in, int64_t expected, int64_t found) {
  in.error("too few entries: expected ", expected, ", found ", found);
}

// Data after the last entry is an error; comments and blank lines are not.
void expect_input_end(Input& in, int64_t expected) {
  std::string_view line;
  if (in.next_data(line)) in.error("too many entries: expected ", expected);
}

// One "i j [value]" line per entry.
void read_coordinate(Input& in, const Layout& layout, CooMatrix<double>& out) {
  const MatrixMarketHeader& h = layout.header;
  std::string_view line;
  for (int64_t k = 0; k < h.entries; ++k) {
    if (!in.next_data(line)) fail_too_few(in, h.entries, k);
    const int64_t i = parse_index(in, next_token(line), h.rows, "row");
    const int64_t j = parse_index(in, next_token(line), h.cols, "column");
    const double v = layout.field == Field::kPattern ? 1.0 : parse_value(in, next_token(line), layout.field);
    expect_line_end(in, line);
    add_entry(in, out, i, j, v, layout.symmetry);
  }
  expect_input_end(in, h.entries);
}

// One value per line, column by column; a symmetric (skew) file stores the lower triangle with
// (without) the diagonal.
void read_array(Input& in, const Layout& layout, CooMatrix<double>& out) {
  const MatrixMarketHeader& h = layout.header;
  const int64_t skip = layout.symmetry == Symmetry::kGeneral ? -1 : layout.symmetry == Symmetry::kSymmetric ? 0 : 1;
  std::string_view line;
  int64_t found = 0;
  for (int64_t j = 0; j < h.cols; ++j) {
    for (int64_t i = skip < 0 ? 0 : j + skip; i < h.rows; ++i) {
      if (!in.next_data(line)) fail_too_few(in, h.entries, found);
      const double v = parse_value(in, next_token(line), layout.field);
      expect_line_end(in, line);
      add_entry(in, out, i, j, v, layout.symmetry);
      ++found;
    }
  }
  expect_input_end(in, h.entries);
}

CooMatrix<double> read_input(Input& in, MatrixMarketHeader* header) {
  Layout layout = parse_banner(in);
  parse_size_line(in, layout);
  CooMatrix<double> out;
  out.rows = layout.header.rows;
  out.cols = layout.header.cols;
  reserve(out, layout);
  if (layout.format == Format::kCoordinate)
    read_coordinate(in, layout, out);
  else
    read_array(in, layout, out);
  if (header != nullptr) *header = std::move(layout.header);
  return out;
}

}  // namespace

CooMatrix<double> read_matrix_market(const std::string& path, MatrixMarketHeader* header) {
  Input in(open_file_source(path), path);
  return read_input(in, header);
}

CooMatrix<double> read_matrix_market(std::istream& in, const std::string& name, MatrixMarketHeader* header) {
  Input input(stream_source(in, name), name);
  return read_input(input, header);
}

}  // namespace sparsetc::detail

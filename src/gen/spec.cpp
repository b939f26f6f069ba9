// The generator spec parser: "kind:field:field..." -> one of the generators of generators.hpp.
// Every problem (unknown kind, wrong number of fields, a field that is not a number, a value out of
// range, a matrix too large) is an Error(SPARSETC_STATUS_INVALID_VALUE) whose message begins with
// "generator spec '<spec>': ".
#include <charconv>
#include <cmath>
#include <string>
#include <system_error>
#include <vector>

#include "core/error.hpp"
#include "gen/generators.hpp"

namespace sparsetc::detail {

namespace {

struct Kind {
  const char* name;
  const char* usage;
  std::vector<const char*> fields;  // names of all fields, optional ones last
  std::vector<size_t> counts;       // accepted numbers of fields
};

const std::vector<Kind>& kinds() {
  static const std::vector<Kind> table = {
      {"band", "band:n:half_width", {"n", "half_width"}, {2}},
      {"poisson2d5", "poisson2d5:g", {"g"}, {1}},
      {"poisson3d7", "poisson3d7:g", {"g"}, {1}},
      {"poisson3d27", "poisson3d27:g", {"g"}, {1}},
      {"rmat", "rmat:scale:degree[:a:b:c]", {"scale", "degree", "a", "b", "c"}, {2, 5}},
      {"uniform", "uniform:n:per_row[:cols]", {"n", "per_row", "cols"}, {2, 3}},
      {"blocks", "blocks:n:delta:theta:rho", {"n", "delta", "theta", "rho"}, {4}},
  };
  return table;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts(1);
  for (const char ch : s) {
    if (ch == sep)
      parts.emplace_back();
    else
      parts.back().push_back(ch);
  }
  return parts;
}

class Fields {
 public:
  Fields(const Kind& kind, std::vector<std::string> text) : kind_(kind), text_(std::move(text)) {}
  size_t size() const { return text_.size(); }

  int64_t integer(size_t k) const {
    const std::string& s = text_[k];
    int64_t value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec == std::errc::result_out_of_range) fail_field(k, "is out of the 64-bit integer range");
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) fail_field(k, "is not an integer");
    return value;
  }
  double real(size_t k) const {
    const std::string& s = text_[k];
    double value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) fail_field(k, "is not a number");
    if (!std::isfinite(value)) fail_field(k, "is not a finite number");
    return value;
  }

 private:
  [[noreturn]] void fail_field(size_t k, const char* problem) const {
    fail(SPARSETC_STATUS_INVALID_VALUE, "field ", k + 1, " (", kind_.fields[k], ") ", problem, ": '", text_[k], "'");
  }
  const Kind& kind_;
  std::vector<std::string> text_;
};

CsrMatrix<double> generate_kind(const Kind& kind, const Fields& f, uint64_t seed) {
  const std::string name = kind.name;
  if (name == "band") return generate_band(f.integer(0), f.integer(1), seed);
  if (name == "poisson2d5") return generate_poisson2d5(f.integer(0), seed);
  if (name == "poisson3d7") return generate_poisson3d7(f.integer(0), seed);
  if (name == "poisson3d27") return generate_poisson3d27(f.integer(0), seed);
  if (name == "rmat") {
    const int64_t scale = f.integer(0);
    const int64_t degree = f.integer(1);
    const bool custom = f.size() == 5;
    const double a = custom ? f.real(2) : 0.57, b = custom ? f.real(3) : 0.19, c = custom ? f.real(4) : 0.19;
    require(scale >= 0 && scale <= 40, SPARSETC_STATUS_INVALID_VALUE, "rmat: scale must be in [0, 40], got ", scale);
    return generate_rmat(int(scale), degree, a, b, c, seed);
  }
  if (name == "uniform") {
    const int64_t n = f.integer(0), per_row = f.integer(1);
    return generate_uniform(n, f.size() == 3 ? f.integer(2) : n, per_row, seed);
  }
  if (name == "blocks") return generate_scrambled_blocks(f.integer(0), f.integer(1), f.real(2), f.real(3), seed);
  fail(SPARSETC_STATUS_INTERNAL_ERROR, "generator kind '", name, "' has no generator");
}

}  // namespace

CsrMatrix<double> generate(const std::string& spec, uint64_t seed) {
  const std::string where = "generator spec '" + spec + "': ";
  std::vector<std::string> parts = split(spec, ':');
  const std::string kind_name = parts.front();
  parts.erase(parts.begin());

  const Kind* kind = nullptr;
  for (const Kind& k : kinds())
    if (kind_name == k.name) kind = &k;
  if (!kind) {
    std::string known;
    for (const Kind& k : kinds()) known += str(known.empty() ? "" : ", ", k.usage);
    fail(SPARSETC_STATUS_INVALID_VALUE, where, "unknown kind '", kind_name, "'; known kinds: ", known);
  }
  bool count_ok = false;
  std::string counts;
  for (const size_t c : kind->counts) {
    count_ok |= parts.size() == c;
    counts += str(counts.empty() ? "" : " or ", c);
  }
  require(count_ok, SPARSETC_STATUS_INVALID_VALUE, where, kind->name, " takes ", counts, " field",
          kind->counts.back() == 1 ? "" : "s", " (", kind->usage, "), got ", parts.size());

  try {
    return generate_kind(*kind, Fields(*kind, std::move(parts)), seed);
  } catch (const Error& e) {
    if (e.status() != SPARSETC_STATUS_INVALID_VALUE) throw;
    throw Error(e.status(), where + e.what());
  }
}

}  // namespace sparsetc::detail

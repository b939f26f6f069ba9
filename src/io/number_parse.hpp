// Tokens and numbers of text files, locale-independent (std::from_chars) and without allocation:
// the Matrix Market reader calls these for every entry.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <system_error>

namespace sparsetc::detail {

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// Index of the first non-space character at or after `from` (text.size() if none).
inline size_t skip_space(std::string_view text, size_t from) {
  while (from < text.size() && is_space(text[from])) ++from;
  return from;
}

// Removes and returns the next whitespace-separated token of `rest`; empty when none is left.
inline std::string_view next_token(std::string_view& rest) {
  const size_t begin = skip_space(rest, 0);
  size_t end = begin;
  while (end < rest.size() && !is_space(rest[end])) ++end;
  const std::string_view token = rest.substr(begin, end - begin);
  rest.remove_prefix(end);
  return token;
}

// from_chars refuses a leading '+', which C's strtod and Fortran writers produce.
inline const char* skip_plus(const char* begin, const char* end) {
  return end - begin >= 2 && begin[0] == '+' && begin[1] != '-' && begin[1] != '+' ? begin + 1 : begin;
}

// The whole token as a decimal integer; false when it is not one or does not fit.
inline bool parse_int64(std::string_view token, int64_t& value) {
  const char* end = token.data() + token.size();
  const auto [stop, error] = std::from_chars(skip_plus(token.data(), end), end, value);
  return error == std::errc() && stop == end;
}

// A decimal number whose magnitude is beyond double's range: +-inf or +-0 (or a subnormal).
double parse_out_of_range_double(std::string_view token);

// The whole token as a double; "nan", "inf" and "infinity" are accepted (callers validate).
inline bool parse_double(std::string_view token, double& value) {
  const char* end = token.data() + token.size();
  const auto [stop, error] = std::from_chars(skip_plus(token.data(), end), end, value, std::chars_format::general);
  if (stop != end) return false;
  if (error == std::errc::result_out_of_range) value = parse_out_of_range_double(token);
  return error == std::errc() || error == std::errc::result_out_of_range;
}

}  // namespace sparsetc::detail

#include "io/number_parse.hpp"

#include <locale.h>

#include <cstdlib>
#include <string>

namespace sparsetc::detail {

// Rare (1e400, 1e-400): strtod rounds these as IEEE says, and the "C" locale keeps '.' the
// decimal point whatever the application's locale is.
double parse_out_of_range_double(std::string_view token) {
  const std::string text(token);
#if defined(__GLIBC__)
  static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", locale_t(0));
  if (c_locale != locale_t(0)) return strtod_l(text.c_str(), nullptr, c_locale);
#endif
  return std::strtod(text.c_str(), nullptr);
}

}  // namespace sparsetc::detail

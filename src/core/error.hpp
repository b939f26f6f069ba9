// Errors inside the engine: one exception type carrying a public status and a message. The C ABI
// layer (capi/) turns it into a status code and the handle's last-error text; nothing else
// crosses the boundary.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "sparsetc/sparsetc_types.h"

namespace sparsetc::detail {

class Error : public std::runtime_error {
 public:
  Error(sparsetc_status_t status, const std::string& message) : std::runtime_error(message), status_(status) {}
  sparsetc_status_t status() const noexcept { return status_; }

 private:
  sparsetc_status_t status_;
};

// Concatenates its arguments with operator<< (usable from .cu files, which do not see fmt).
template <typename... Args>
std::string str(Args&&... args) {
  std::ostringstream out;
  (out << ... << std::forward<Args>(args));
  return out.str();
}

template <typename... Args>
[[noreturn]] void fail(sparsetc_status_t status, Args&&... message) {
  throw Error(status, str(std::forward<Args>(message)...));
}

template <typename... Args>
void require(bool condition, sparsetc_status_t status, Args&&... message) {
  if (!condition) fail(status, std::forward<Args>(message)...);
}

}  // namespace sparsetc::detail

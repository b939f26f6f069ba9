// The real cuSPARSE behind the preload library: each function is looked up once, by its versioned
// name first (applications bind cusparseX@libcusparse.so.12), then unversioned, always in the
// objects loaded after this library (RTLD_NEXT), so never our own definition.
#pragma once

#include <cusparse.h>

namespace sparsetc::preload {

// The address of the real `name`, or NULL when no cuSPARSE is loaded.
void* resolve_real(const char* name) noexcept;

template <typename Fn>
Fn real_function(const char* name) noexcept {
  return reinterpret_cast<Fn>(resolve_real(name));
}

}  // namespace sparsetc::preload

// REAL(cusparseSpMM): the real function, resolved on first use (thread-safe static).
#define REAL(name)                                                                                   \
  ([]() noexcept {                                                                                   \
    static const auto function = ::sparsetc::preload::real_function<decltype(&::name)>(#name);      \
    return function;                                                                                 \
  }())

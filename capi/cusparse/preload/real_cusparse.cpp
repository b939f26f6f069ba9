#include "real_cusparse.hpp"

#include <dlfcn.h>

#include <cstdio>

namespace sparsetc::preload {

void* resolve_real(const char* name) noexcept {
  // CUDA 12 and 13 both ship libcusparse.so.12 with every symbol at that version node; later
  // majors are tried too, then the unversioned name (a library built without version nodes).
  for (const char* version : {"libcusparse.so.12", "libcusparse.so.13", "libcusparse.so.11"}) {
    if (void* f = dlvsym(RTLD_NEXT, name, version)) return f;
  }
  if (void* f = dlsym(RTLD_NEXT, name)) return f;
  std::fprintf(stderr, "sparsetc-cusparse: cannot find the real %s (is libcusparse loaded?)\n", name);
  return nullptr;
}

}  // namespace sparsetc::preload

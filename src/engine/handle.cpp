#include "engine/handle.hpp"

#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "core/logging.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cusparse_context.hpp"

namespace {

// SPARSETC_VALIDATE: a level's number (0-3) or name. Anything else keeps the default, with a
// warning, rather than silently lowering the checks.
sparsetc_validation_t validation_from_environment(sparsetc_validation_t fallback) {
  const char* env = std::getenv("SPARSETC_VALIDATE");
  if (!env || !*env) return fallback;
  const std::string text = env;
  static const char* names[] = {"none", "arguments", "structure", "values"};
  for (int level = 0; level < 4; ++level)
    if (text == names[level] || text == std::to_string(level)) return level;
  SPARSETC_LOG(warn, "SPARSETC_VALIDATE=", text, " is not 0-3 or none/arguments/structure/values; using ",
               names[fallback]);
  return fallback;
}

}  // namespace

sparsetc_handle_s::sparsetc_handle_s() { validation = validation_from_environment(validation); }

sparsetc_handle_s::~sparsetc_handle_s() = default;

void sparsetc_handle_s::activate() const {
  if (backend == SPARSETC_BACKEND_GPU) SPARSETC_CUDA_CHECK(cudaSetDevice(device));
}

sparsetc::detail::CusparseContext& sparsetc_handle_s::cusparse_context() {
  sparsetc::detail::require(backend == SPARSETC_BACKEND_GPU, SPARSETC_STATUS_NOT_SUPPORTED,
                            "cuSPARSE needs a handle on the GPU backend");
  activate();
  if (!cusparse) cusparse = std::make_unique<sparsetc::detail::CusparseContext>();
  return *cusparse;
}

#include "engine/handle.hpp"

#include <cstdlib>

#include "core/error.hpp"
#include "core/logging.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cusparse_context.hpp"

sparsetc_handle_s::sparsetc_handle_s() {
  if (const char* env = std::getenv("SPARSETC_VALIDATE")) {
    int level = std::atoi(env);
    if (level >= SPARSETC_VALIDATE_NONE && level <= SPARSETC_VALIDATE_VALUES) validation = level;
  }
}

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

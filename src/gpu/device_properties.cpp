#include "gpu/device_properties.hpp"

#include <cuda_runtime_api.h>

#include "gpu/cuda_check.hpp"

namespace sparsetc::detail {

int current_device_sm_count() {
  int device = 0, sms = 0;
  SPARSETC_CUDA_CHECK(cudaGetDevice(&device));
  SPARSETC_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

}  // namespace sparsetc::detail

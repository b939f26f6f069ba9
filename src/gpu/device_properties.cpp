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

int64_t current_device_l2_bytes() {
  int device = 0, bytes = 0;
  SPARSETC_CUDA_CHECK(cudaGetDevice(&device));
  SPARSETC_CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device));
  return bytes;
}

}  // namespace sparsetc::detail

// What the numbers were measured on: device, clocks, library versions, measured copy bandwidth.
#pragma once

#include <cstdio>
#include <string>

namespace bench {

struct DeviceInfo {
  int device = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0, sms = 0;
  size_t l2_bytes = 0, memory_bytes = 0;
  int sm_clock_mhz = 0, memory_clock_mhz = 0, bus_width_bits = 0;
  int runtime_version = 0, driver_version = 0;  // CUDA versions, e.g. 13000
  std::string driver;                           // the kernel driver's version line, when readable
  int cusparse_version = 0, cublas_version = 0;
  std::string sparsetc;  // sparsetc_get_build_info
  double copy_gbps = 0;  // device-to-device cudaMemcpy of 1 GB, bytes read + written per second
};

// Fills everything but copy_gbps. Returns false with a message when the device cannot be used.
bool query_device(int device, DeviceInfo& info, std::string& error);
void print_device_info(std::FILE* out, const DeviceInfo& info);

}  // namespace bench

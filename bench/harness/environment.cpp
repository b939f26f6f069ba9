#include "harness/environment.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>
#include <sparsetc/sparsetc.h>

#include <fstream>

namespace bench {

bool query_device(int device, DeviceInfo& info, std::string& error) {
  cudaDeviceProp prop = {};
  cudaError_t e = cudaGetDeviceProperties(&prop, device);
  if (e != cudaSuccess) {
    error = std::string("cudaGetDeviceProperties: ") + cudaGetErrorName(e);
    return false;
  }
  info.device = device;
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sms = prop.multiProcessorCount;
  info.l2_bytes = size_t(prop.l2CacheSize);
  info.memory_bytes = prop.totalGlobalMem;
  int value = 0;
  if (cudaDeviceGetAttribute(&value, cudaDevAttrClockRate, device) == cudaSuccess) info.sm_clock_mhz = value / 1000;
  if (cudaDeviceGetAttribute(&value, cudaDevAttrMemoryClockRate, device) == cudaSuccess)
    info.memory_clock_mhz = value / 1000;
  if (cudaDeviceGetAttribute(&value, cudaDevAttrGlobalMemoryBusWidth, device) == cudaSuccess)
    info.bus_width_bits = value;
  cudaGetLastError();  // an attribute this driver lacks is not an error here
  cudaRuntimeGetVersion(&info.runtime_version);
  cudaDriverGetVersion(&info.driver_version);
  std::ifstream version("/proc/driver/nvidia/version");
  std::getline(version, info.driver);
  while (!info.driver.empty() && (info.driver.back() == ' ' || info.driver.back() == '\t')) info.driver.pop_back();
  cusparseGetProperty(MAJOR_VERSION, &value);
  info.cusparse_version = value * 1000;
  cusparseGetProperty(MINOR_VERSION, &value);
  info.cusparse_version += value * 100;
  cusparseGetProperty(PATCH_LEVEL, &value);
  info.cusparse_version += value;
  cublasGetProperty(MAJOR_VERSION, &value);
  info.cublas_version = value * 10000;
  cublasGetProperty(MINOR_VERSION, &value);
  info.cublas_version += value * 100;
  cublasGetProperty(PATCH_LEVEL, &value);
  info.cublas_version += value;
  char build[512] = {0};
  sparsetc_get_build_info(build, sizeof build);
  info.sparsetc = build;
  return true;
}

void print_device_info(std::FILE* out, const DeviceInfo& d) {
  std::fprintf(out, "device %d: %s, sm_%d%d, %d SMs, L2 %.0f MB, memory %.1f GB\n", d.device, d.name.c_str(),
               d.cc_major, d.cc_minor, d.sms, double(d.l2_bytes) / 1e6, double(d.memory_bytes) / 1e9);
  std::fprintf(out, "clocks (maximum): SM %d MHz, memory %d MHz, bus %d bit\n", d.sm_clock_mhz, d.memory_clock_mhz,
               d.bus_width_bits);
  std::fprintf(out, "CUDA runtime %d.%d, driver API %d.%d%s%s\n", d.runtime_version / 1000,
               (d.runtime_version % 1000) / 10, d.driver_version / 1000, (d.driver_version % 1000) / 10,
               d.driver.empty() ? "" : "; ", d.driver.c_str());
  std::fprintf(out, "cuSPARSE %d.%d.%d, cuBLAS %d.%d.%d\n", d.cusparse_version / 1000, (d.cusparse_version % 1000) / 100,
               d.cusparse_version % 100, d.cublas_version / 10000, (d.cublas_version % 10000) / 100,
               d.cublas_version % 100);
  std::fprintf(out, "sparsetc: %s\n", d.sparsetc.c_str());
  if (d.copy_gbps > 0)
    std::fprintf(out, "measured device-to-device copy: %.0f GB/s (bytes read + written; the bandwidth ceiling)\n",
                 d.copy_gbps);
}

}  // namespace bench

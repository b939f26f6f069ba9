// Makes a device current for the length of a scope and restores the caller's device after, so a
// library call never leaves the calling thread on another device.
#pragma once

#include <cuda_runtime_api.h>

namespace sparsetc::detail {

class DeviceScope {
 public:
  // device < 0: do nothing (CPU backend).
  explicit DeviceScope(int device) {
    if (device < 0 || cudaGetDevice(&previous_) != cudaSuccess) {
      cudaGetLastError();
      previous_ = -1;
      return;
    }
    if (previous_ != device && cudaSetDevice(device) != cudaSuccess) cudaGetLastError();
    active_ = previous_ != device;
  }
  ~DeviceScope() {
    if (active_) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
  bool active_ = false;
};

}  // namespace sparsetc::detail

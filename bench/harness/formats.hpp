// Other storage formats of A for the vendor baselines: Blocked-ELL (built on the host from the
// CSR), BSR (cuSPARSE's own csr2bsr on the device, also timed by the conversion suite), and host
// BSR/CSC builds that the conversion checks compare against.
#pragma once

#include <cusparse.h>
#include <library_types.h>

#include <cstdint>
#include <vector>

#include "harness/device_memory.hpp"
#include "harness/inputs.hpp"

namespace bench {

// ---------------------------------------------------------------- Blocked-ELL (host build)

// Size of A in Blocked-ELL with square blocks of `block`: rows and columns padded to the block,
// every block row as wide as the widest one.
struct EllShape {
  int64_t block = 0, block_rows = 0, block_cols = 0, width = 0;  // width: blocks per block row
  size_t bytes = 0;                                             // column indices + values
  double blowup = 0;                                            // stored values / nnz
};
EllShape blocked_ell_shape(const HostCsr& a, int64_t block, size_t value_bytes);

struct HostBlockedEll {
  EllShape shape;
  std::vector<int32_t> col_ind;  // block_rows x width, -1 for padding
  std::vector<uint16_t> values;  // (block_rows * block) x (width * block), row-major, f16 or bf16 bits
};
// values: A's values already rounded to `type` (f16 or bf16).
HostBlockedEll build_blocked_ell(const HostCsr& a, const std::vector<double>& values, int64_t block,
                                 cudaDataType type);

// ---------------------------------------------------------------- BSR (cuSPARSE csr2bsr)

// The legacy cusparseXcsr2bsrNnz + cusparseScsr2bsr pair on an fp32 CSR, row-major blocks.
class Csr2Bsr {
 public:
  Csr2Bsr(cusparseHandle_t handle, const DeviceCsr& a, int64_t block);
  ~Csr2Bsr();
  Csr2Bsr(const Csr2Bsr&) = delete;
  Csr2Bsr& operator=(const Csr2Bsr&) = delete;

  int64_t block_rows() const { return mb_; }
  int64_t block_cols() const { return nb_; }
  // Fills bsr_row_ptr (block_rows + 1) and returns the number of blocks (synchronises).
  int64_t count(int* bsr_row_ptr);
  void fill(float* bsr_val, const int* bsr_row_ptr, int* bsr_col);

 private:
  cusparseHandle_t handle_;
  const DeviceCsr& a_;
  int64_t block_, mb_, nb_;
  cusparseMatDescr_t csr_descr_ = nullptr, bsr_descr_ = nullptr;
};

struct DeviceBsr {
  int64_t block = 0, block_rows = 0, block_cols = 0, blocks = 0;
  cudaDataType type = CUDA_R_32F;
  DeviceBuffer row_ptr, col, val;
};
// BSR of an fp32 device CSR with values converted to `type` (f32, f16 or bf16) on the device.
DeviceBsr make_device_bsr(cusparseHandle_t handle, const DeviceCsr& a_f32, int64_t block, cudaDataType type,
                          cudaStream_t stream);

// ---------------------------------------------------------------- host references of conversions

struct HostBsr {
  int64_t block = 0, block_rows = 0, blocks = 0;
  std::vector<int32_t> row_ptr, col;
  std::vector<float> val;  // blocks x block x block, row-major blocks
};
HostBsr host_bsr(const HostCsr& a, const std::vector<double>& values, int64_t block);

}  // namespace bench

// The VBR-cuBLAS multiply of the 1-SA paper (§4.4), planned once: A's stored (reordered) rows cut
// into row groups of variable height times column blocks of width Δ_W, every non-zero block kept
// dense (column-major, a group's blocks side by side), multiplied on tensor cores by grouped
// cuBLAS GEMMs whose pointer arrays are built at plan time.
//
// Schedules (VbrSchedule):
//  - gathered (default): per row group one GEMM, K = blocks * Δ_W. The rows of B its blocks need
//    are first gathered into a dense row-major panel (one kernel per call), so a group's product is
//    written once, never accumulated: every GEMM of a call writes different rows, no races, one
//    grouped cuBLAS call per chunk of groups (chunk_bytes bounds the panel; one chunk when it fits).
//  - waves: no gather; wave j multiplies the j-th block of every group straight from B (first wave
//    with beta = 0, later ones accumulate with beta = 1), one grouped call per wave. It re-reads and
//    re-writes the product rows once per block, and its GEMMs have K = Δ_W only.
// Measured on an H200 (scrambled blocks 8192, Δ = 64, θ = 0.1, ρ = 0.2, f16, N = 4096): gathered
// 1.03 ms, waves 1.63 ms; panels cut to 128 or 32 MiB chunks 1.34 / 1.57 ms (each call then has too
// few GEMMs to fill the GPU), so one chunk is the default; one cublasGemmBatchedEx per shape times
// the same as the grouped call.
// Both write a product W in the accumulation type (fp32, or fp64 for f64) over the stored rows in
// C's order, every group's rows starting 16-byte aligned (cuBLAS cannot check the pointers of a
// batched call); scatter_rows then applies alpha and beta into C in the original row order.
// Results are deterministic (cuBLAS with a fixed workspace, no atomics anywhere).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/convert/gpu_convert.hpp"
#include "gpu/device_memory.hpp"
#include "gpu/gpu_context.hpp"
#include "sparsetc/sparsetc_types.h"

namespace sparsetc::detail {

// Input storage and cuBLAS compute type: f16/bf16 with CUBLAS_COMPUTE_32F, f32 with
// CUBLAS_COMPUTE_32F (exact fp32 GEMM), tf32 = f32 inputs with CUBLAS_COMPUTE_32F_FAST_TF32,
// f64 with CUBLAS_COMPUTE_64F.
enum class VbrPrecision { f16, bf16, f32, tf32, f64 };
const char* vbr_precision_name(VbrPrecision precision);
int vbr_storage_bytes(VbrPrecision precision);

enum class VbrSchedule { gathered, waves };
const char* vbr_schedule_name(VbrSchedule schedule);

// A's stored rows as VBR blocks, values in the precision's storage type (host copies of the
// structure: the GEMM plan is built from them).
struct VbrOperand {
  VbrPrecision precision = VbrPrecision::f32;
  int64_t rows = 0, cols = 0, width = 0, nnz = 0;
  std::vector<int64_t> group_ptr;  // groups + 1, over stored rows
  std::vector<int64_t> block_ptr;  // groups + 1
  std::vector<int32_t> block_col;  // blocks
  DeviceBuffer device_block_col;   // int32, blocks (read by the gather)
  DeviceBuffer values;             // per group a column-major height x (blocks * width) matrix, groups in order
  int64_t groups() const { return int64_t(group_ptr.size()) - 1; }
  int64_t blocks() const { return int64_t(block_col.size()); }
  int64_t stored_area() const;  // sum over blocks of height * width (the padded area multiplied)
  double fill() const { return stored_area() > 0 ? double(nnz) / double(stored_area()) : 0.0; }
};

// Builds the operand from A's stored rows (canonical device CSR) and a partition of them into groups.
// One read-back of the structure (besides gpu_csr_to_vbr's one).
VbrOperand make_vbr_operand(const DeviceCsrView<float>& csr, const std::vector<int64_t>& group_ptr, int64_t width,
                            VbrPrecision precision, const GpuContext& context);
VbrOperand make_vbr_operand(const DeviceCsrView<double>& csr, const std::vector<int64_t>& group_ptr, int64_t width,
                            VbrPrecision precision, const GpuContext& context);

struct VbrMultiplyOptions {
  VbrSchedule schedule = VbrSchedule::gathered;
  size_t chunk_bytes = 0;     // gathered: most bytes of gathered B per call; 0: kDefaultChunkBytes
  bool grouped_api = true;    // cublasGemmGroupedBatchedEx (false: one cublasGemmBatchedEx per shape)
  static constexpr size_t kDefaultChunkBytes = size_t(1) << 30;
};

// What one multiply is given: B as the caller stores it, C's type (and order, planned).
struct VbrMultiplyArgs {
  const void* B = nullptr;
  double alpha = 1, beta = 0;
  void* C = nullptr;
  int64_t ldc = 0;
  sparsetc_value_type_t c_type = SPARSETC_VALUE_F32;
};

class VbrMultiply {
 public:
  // Plans C = alpha * A * B + beta * C for B of n columns (b_order, ldb) and C in c_order.
  // row_source[i]: the stored row holding original row i (A's rows in the caller's numbering), one
  // entry per row of C.
  VbrMultiply(VbrOperand operand, const std::vector<int64_t>& row_source, int64_t n, sparsetc_order_t b_order,
              int64_t ldb, sparsetc_order_t c_order, const VbrMultiplyOptions& options, const GpuContext& context);
  ~VbrMultiply();
  VbrMultiply(const VbrMultiply&) = delete;
  VbrMultiply& operator=(const VbrMultiply&) = delete;

  // Launches only (no host synchronisation), in order on `stream`.
  void run(const VbrMultiplyArgs& args, cublasHandle_t cublas, cudaStream_t stream);

  const VbrOperand& operand() const { return operand_; }
  int64_t cublas_calls() const;                                     // grouped calls per multiply
  int64_t gemms() const { return gemms_; }                          // GEMM problems per multiply
  int64_t shapes() const;                                           // distinct GEMM shapes over all calls
  size_t gather_bytes() const { return panel_.size(); }
  size_t product_bytes() const { return product_.size(); }
  std::string describe() const;

 private:
  struct Call;
  void plan_gathered(size_t chunk_bytes);
  void plan_waves();
  void upload(const GpuContext& context);
  void launch(const Call& call, cublasHandle_t cublas);
  void launch_each(const Call& call, const void* B, cublasHandle_t cublas);

  VbrOperand operand_;
  VbrMultiplyOptions options_;
  int64_t n_ = 0, ldb_ = 0;
  sparsetc_order_t b_order_ = SPARSETC_ORDER_ROW, c_order_ = SPARSETC_ORDER_ROW;
  int64_t gemms_ = 0, panel_blocks_ = 0;
  // W's rows: group g starts at padded_row0_[g] (16-byte aligned), ld ldw_.
  static constexpr int64_t kAlignBytes = 16;
  std::vector<int64_t> padded_row0_;
  int64_t padded_rows_ = 0, ldw_ = 0;
  std::vector<Call> calls_;
  // Per GEMM in call order, byte offsets: into A's values, into the B source (the gathered panel,
  // or the caller's B for waves) and into the product.
  std::vector<int64_t> a_offset_, b_offset_, c_offset_;
  DeviceBuffer values_ptrs_, source_ptrs_, product_ptrs_;  // device pointer arrays
  const DeviceBuffer* first_ptrs_ = nullptr;   // the first cuBLAS operand's array (one of the two above)
  const DeviceBuffer* second_ptrs_ = nullptr;
  DeviceBuffer b_offsets_;   // waves: b_offset_ on the device (pointers are refilled when B moves)
  DeviceBuffer product_;     // W: padded stored rows x n, accumulation type, C's order
  DeviceBuffer panel_;       // gathered rows of B (gathered schedule)
  DeviceBuffer row_source_;  // int64 per original row: its row of W, or -1 (group without blocks)
  const void* pointers_for_b_ = nullptr;  // waves: the B the device pointers were filled for
  bool grouped_unsupported_ = false;      // cuBLAS refused the grouped call: batched per shape
  cublasStatus_t grouped_refusal_ = CUBLAS_STATUS_SUCCESS;
};

}  // namespace sparsetc::detail

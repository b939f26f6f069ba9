// row_spmm and tiled_spmm: argument checks, then the instantiation of the precision.
#include "core/error.hpp"
#include "gpu/spmm/cuda_core/cuda_core_spmm.hpp"
#include "gpu/spmm/cuda_core/kernels.hpp"

namespace sparsetc::detail {
namespace {

void check_dense(const CoreDenseArgs& args, int64_t b_rows, int64_t c_rows, const char* kernel) {
  const int64_t b_min = args.b_order == SPARSETC_ORDER_ROW ? args.n : b_rows;
  const int64_t c_min = args.c_order == SPARSETC_ORDER_ROW ? args.n : c_rows;
  require(args.ldb >= 1 && args.ldb >= b_min, SPARSETC_STATUS_INVALID_VALUE, kernel, ": ldb = ", args.ldb,
          " is less than ", b_min);
  require(args.ldc >= 1 && args.ldc >= c_min, SPARSETC_STATUS_INVALID_VALUE, kernel, ": ldc = ", args.ldc,
          " is less than ", c_min);
}

// The B-stationary kernels add partial sums into C with atomics, so C has the accumulator's type.
void check_b_stationary(CorePrecision precision, const CoreColumnTiling& tiling, const CoreDenseArgs& args,
                        int64_t b_rows, int64_t c_rows, const char* kernel) {
  const sparsetc_value_type_t accumulator = precision == CorePrecision::f64 ? SPARSETC_VALUE_F64 : SPARSETC_VALUE_F32;
  require(args.c_type == accumulator, SPARSETC_STATUS_NOT_SUPPORTED, kernel,
          " adds partial sums into C with atomics, so C must have the accumulator's type (",
          accumulator == SPARSETC_VALUE_F64 ? "f64" : "f32",
          "); a half-precision C would be rounded at every partial sum: use the CSR or DCSR path");
  require(args.n == 0 || tiling.tiles == core_column_tiling(precision, args.n).tiles, SPARSETC_STATUS_INVALID_VALUE,
          kernel, ": the schedule was made for another N");
  check_dense(args, b_rows, c_rows, kernel);
}

}  // namespace

void row_spmm(const CoreRows& a, CorePrecision precision, RowSchedule& schedule, const CoreDenseArgs& args,
              void* workspace, cudaStream_t stream) {
  require(core_supports_output(precision, args.c_type), SPARSETC_STATUS_NOT_SUPPORTED,
          "CUDA-core SpMM: C of value type ", args.c_type, " is not written by this precision");
  require(args.n == 0 || schedule.tiling.tiles == core_column_tiling(precision, args.n, schedule.tiling.vec,
                                                                     1 << schedule.tiling.lanes_n_log)
                                                     .tiles,
          SPARSETC_STATUS_INVALID_VALUE, "CUDA-core SpMM: the schedule was made for another N");
  check_dense(args, a.cols, a.rows, "CUDA-core SpMM");
  switch (precision) {
    case CorePrecision::f32: return cudacore::run_row_spmm<CorePrecision::f32>(a, schedule, args, workspace, stream);
    case CorePrecision::f64: return cudacore::run_row_spmm<CorePrecision::f64>(a, schedule, args, workspace, stream);
    case CorePrecision::f16: return cudacore::run_row_spmm<CorePrecision::f16>(a, schedule, args, workspace, stream);
    case CorePrecision::bf16: return cudacore::run_row_spmm<CorePrecision::bf16>(a, schedule, args, workspace, stream);
  }
}

void tiled_spmm(const CoreTiled& a, CorePrecision precision, const TiledSchedule& schedule, const CoreDenseArgs& args,
                cudaStream_t stream) {
  check_b_stationary(precision, schedule.tiling, args, a.cols, a.rows, "tiled DCSR SpMM");
  switch (precision) {
    case CorePrecision::f32: return cudacore::run_tiled_spmm<CorePrecision::f32>(a, schedule, args, stream);
    case CorePrecision::f64: return cudacore::run_tiled_spmm<CorePrecision::f64>(a, schedule, args, stream);
    case CorePrecision::f16: return cudacore::run_tiled_spmm<CorePrecision::f16>(a, schedule, args, stream);
    case CorePrecision::bf16: return cudacore::run_tiled_spmm<CorePrecision::bf16>(a, schedule, args, stream);
  }
}

void csc_tiled_spmm(const CoreCsc& a, CorePrecision precision, const CscTiledSchedule& schedule,
                    const CoreDenseArgs& args, cudaStream_t stream) {
  check_b_stationary(precision, schedule.tiling, args, a.cols, a.rows, "CSC tiled SpMM");
  switch (precision) {
    case CorePrecision::f32: return cudacore::run_csc_tiled_spmm<CorePrecision::f32>(a, schedule, args, stream);
    case CorePrecision::f64: return cudacore::run_csc_tiled_spmm<CorePrecision::f64>(a, schedule, args, stream);
    case CorePrecision::f16: return cudacore::run_csc_tiled_spmm<CorePrecision::f16>(a, schedule, args, stream);
    case CorePrecision::bf16: return cudacore::run_csc_tiled_spmm<CorePrecision::bf16>(a, schedule, args, stream);
  }
}

}  // namespace sparsetc::detail

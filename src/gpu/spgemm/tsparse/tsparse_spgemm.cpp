// The tSparse pipeline put together (host side): culled pair count at construction; task list,
// counting and C's structure in symbolic(); the multiplication kernel of the operands' arithmetic
// and the compaction of cancelled zeros in multiply().
#include "gpu/spgemm/tsparse/tsparse_spgemm.hpp"

#include <cuda_runtime_api.h>

#include <type_traits>
#include <utility>

#include "core/error.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/spgemm/binned/binned_spgemm.hpp"

namespace sparsetc::detail {
namespace {

// Elapsed milliseconds of the stages, measured with events when asked (one sync per stage).
class StageTimer {
 public:
  StageTimer(bool enabled, cudaStream_t stream) : enabled_(enabled), stream_(stream) {
    if (!enabled_) return;
    SPARSETC_CUDA_CHECK(cudaEventCreate(&start_));
    SPARSETC_CUDA_CHECK(cudaEventCreate(&stop_));
    SPARSETC_CUDA_CHECK(cudaEventRecord(start_, stream_));
  }
  ~StageTimer() {
    if (!enabled_) return;
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;
  // Adds the time since the last lap to `ms`.
  void lap(double& ms) {
    if (!enabled_) return;
    SPARSETC_CUDA_CHECK(cudaEventRecord(stop_, stream_));
    SPARSETC_CUDA_CHECK(cudaEventSynchronize(stop_));
    float elapsed = 0;
    SPARSETC_CUDA_CHECK(cudaEventElapsedTime(&elapsed, start_, stop_));
    ms += double(elapsed);
    std::swap(start_, stop_);
  }

 private:
  bool enabled_;
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

}  // namespace

template <typename V>
void multiply_tiles(const TileOperand& a, const TileOperand& b, const TileTasks& tasks, const DeviceBuffer& bitmap,
                    const TileCsrStructure& structure, V* values, const GpuContext& context) {
  require(a.arithmetic == b.arithmetic, SPARSETC_STATUS_INTERNAL_ERROR, "tSparse: operands of different arithmetic");
  require(std::is_same_v<V, double> == (a.arithmetic == TileArithmetic::kF64), SPARSETC_STATUS_INTERNAL_ERROR,
          "tSparse: C is double exactly for the fp64 arithmetic");
  const uint64_t* bits = bitmap.as<const uint64_t>();
  const int64_t* row_pos = structure.row_pos.as<const int64_t>();
  if constexpr (std::is_same_v<V, double>) {
    tsparse::multiply_f64(a, b, tasks, bits, row_pos, values, context);
  } else if (a.arithmetic == TileArithmetic::kCudaCores) {
    tsparse::multiply_cuda_cores(a, b, tasks, bits, row_pos, values, context);
  } else {
    tsparse::multiply_half(a, b, tasks, bits, row_pos, values, context);
  }
}

template void multiply_tiles<float>(const TileOperand&, const TileOperand&, const TileTasks&, const DeviceBuffer&,
                                    const TileCsrStructure&, float*, const GpuContext&);
template void multiply_tiles<double>(const TileOperand&, const TileOperand&, const TileTasks&, const DeviceBuffer&,
                                     const TileCsrStructure&, double*, const GpuContext&);

template <typename V>
TsparseSpgemm<V>::TsparseSpgemm(const TileOperand& a, const TileOperand& b, const TsparseSpgemmOptions& options,
                                const GpuContext& context)
    : a_(&a), b_(&b), options_(options), context_(context) {
  require(a.arithmetic == b.arithmetic, SPARSETC_STATUS_INTERNAL_ERROR, "tSparse: operands of different arithmetic");
  StageTimer timer(options_.time_stages, context_.stream);
  count_ = count_tile_pairs(a, b, context_);
  stats_.pairs = count_.pairs;
  timer.lap(stats_.stage_ms[kTsparseTasks]);
}

template <typename V>
size_t TsparseSpgemm<V>::memory_estimate() const {
  // Pairs during the sort: key, number, B tile, sorted key and number, then pair_a / pair_b and the
  // head flags and scan; C's tile arrays are at most one per pair.
  // plus CUB's temporary storage, about one more key and value.
  const size_t pairs = size_t(count_.pairs);
  return pairs * (4 + 8 + 8 + 4 + 8 + 4 + 8) + size_t(a_->tiles + 1) * 8;
}

template <typename V>
int64_t TsparseSpgemm<V>::symbolic() {
  StageTimer timer(options_.time_stages, context_.stream);
  tasks_ = make_tile_tasks(*a_, *b_, count_, context_);
  stats_.c_tiles = tasks_.tiles;
  timer.lap(stats_.stage_ms[kTsparseTasks]);
  bitmap_ = count_tiles(*a_, *b_, tasks_, options_.count, context_);
  timer.lap(stats_.stage_ms[kTsparseCount]);
  structure_ = make_tile_csr_structure(tasks_, bitmap_, context_);
  stats_.structural_nnz = structure_.nnz;
  timer.lap(stats_.stage_ms[kTsparseStructure]);
  structured_ = true;
  return structure_.nnz;
}

template <typename V>
void TsparseSpgemm<V>::multiply_structural(V* values) {
  require(structured_, SPARSETC_STATUS_INVALID_STATE, "tSparse: symbolic() must run before the multiplication");
  multiply_tiles<V>(*a_, *b_, tasks_, bitmap_, structure_, values, context_);
}

template <typename V>
DeviceCsr<V> TsparseSpgemm<V>::multiply(double drop_tolerance) {
  require(structured_, SPARSETC_STATUS_INVALID_STATE, "tSparse: symbolic() must run before the multiplication");
  StageTimer timer(options_.time_stages, context_.stream);
  DeviceBuffer values(size_t(structure_.nnz) * sizeof(V), context_);
  multiply_structural(values.as<V>());
  timer.lap(stats_.stage_ms[kTsparseMultiply]);
  const DeviceCsrView<V> full{structure_.rows,
                              structure_.cols,
                              structure_.nnz,
                              structure_.row_ptr.template as<const int64_t>(),
                              structure_.col_idx.template as<const int32_t>(),
                              values.as<const V>()};
  // Entries that cancelled to exactly zero (and with them tiles left empty) go; NaN stays.
  DeviceCsr<V> c = binned::drop_small(full, drop_tolerance > 0 ? drop_tolerance : 0.0, context_);
  timer.lap(stats_.stage_ms[kTsparseCompact]);
  return c;
}

template class TsparseSpgemm<float>;
template class TsparseSpgemm<double>;

}  // namespace sparsetc::detail

// The executor of SPARSETC_SPMM_ALG_CSR, _DCSR and _TILED_DCSR (and of the internal tiles-from-CSC
// variant): this library's CUDA-core SpMM kernels (gpu/spmm/cuda_core/). At creation A is normalised on the device (float for the fp32 and
// half paths, double for fp64), transposed once for op(A) = A^T, built into the algorithm's format
// with its work schedule for the planned N, and its values rounded to f16/bf16 for the half paths.
// All of it is rebuilt when A's values change. Executions run on the handle's stream.
#include <memory>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "core/logging.hpp"
#include "core/types.hpp"
#include "engine/handle.hpp"
#include "engine/matrix.hpp"
#include "engine/spmm_plan.hpp"
#include "engine/spmm_row_order.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/device_memory.hpp"
#include "gpu/spmm/cuda_core/cuda_core_spmm.hpp"

namespace sparsetc::detail {
namespace {

const char* alg_name(sparsetc_spmm_alg_t alg) {
  return alg == SPARSETC_SPMM_ALG_CSR    ? "CSR"
         : alg == SPARSETC_SPMM_ALG_DCSR ? "DCSR"
         : alg == kSpmmAlgTiledFromCsc   ? "tiled DCSR from CSC"
                                         : "tiled DCSR";
}

// The B-stationary paths add partial sums into C with atomics.
bool b_stationary(sparsetc_spmm_alg_t alg) { return alg == SPARSETC_SPMM_ALG_TILED_DCSR || alg == kSpmmAlgTiledFromCsc; }

const char* precision_name(CorePrecision p) {
  switch (p) {
    case CorePrecision::f32: return "f32";
    case CorePrecision::f64: return "f64";
    case CorePrecision::f16: return "f16 (fp32 accumulation)";
    default: return "bf16 (fp32 accumulation)";
  }
}

// The kernels' precision from B's type and the compute type; C must be one the kernels write.
CorePrecision choose_precision(const SpmmProblem& p, sparsetc_spmm_alg_t alg) {
  const sparsetc_value_type_t b = p.B.value_type, c = p.C.value_type;
  CorePrecision precision = CorePrecision::f32;
  if (p.compute == SPARSETC_COMPUTE_64F) {
    require(b == SPARSETC_VALUE_F64, SPARSETC_STATUS_NOT_SUPPORTED, alg_name(alg),
            " SpMM with compute 64F needs B in f64 (B is ", value_type_name(b), ")");
    precision = CorePrecision::f64;
  } else {  // 32F, and TF32 (computed exactly in fp32, which TF32's reduced precision allows)
    switch (b) {
      case SPARSETC_VALUE_F32: precision = CorePrecision::f32; break;
      case SPARSETC_VALUE_F16: precision = CorePrecision::f16; break;
      case SPARSETC_VALUE_BF16: precision = CorePrecision::bf16; break;
      default:
        fail(SPARSETC_STATUS_NOT_SUPPORTED, alg_name(alg), " SpMM: B in f64 needs compute 64F");
    }
  }
  if (!core_supports_output(precision, c)) {
    const std::string written = precision == CorePrecision::f32   ? std::string("f32")
                                : precision == CorePrecision::f64 ? std::string("f64")
                                                                  : str("f32 or ", value_type_name(b));
    fail(SPARSETC_STATUS_NOT_SUPPORTED, alg_name(alg), " SpMM with B in ", value_type_name(b), " writes C in ",
         written, ", not ", value_type_name(c));
  }
  const bool half_c = c == SPARSETC_VALUE_F16 || c == SPARSETC_VALUE_BF16;
  require(!b_stationary(alg) || !half_c, SPARSETC_STATUS_NOT_SUPPORTED, alg_name(alg),
          " SpMM adds partial sums into C with atomics: C in ", value_type_name(c),
          " would be rounded at every partial sum (use C in f32, or SPARSETC_SPMM_ALG_CSR / _DCSR)");
  return precision;
}

class CudaCoreSpmm final : public SpmmExecutor {
 public:
  CudaCoreSpmm(sparsetc_handle_s& handle, const SpmmProblem& problem, sparsetc_spmm_alg_t alg)
      : handle_(handle), problem_(problem), alg_(alg) {
    require(alg == SPARSETC_SPMM_ALG_CSR || alg == SPARSETC_SPMM_ALG_DCSR || b_stationary(alg),
            SPARSETC_STATUS_INVALID_VALUE, "make_cuda_core_spmm: algorithm ", alg, " is not CSR, DCSR or TILED_DCSR");
    require(handle.backend == SPARSETC_BACKEND_GPU, SPARSETC_STATUS_NOT_SUPPORTED, alg_name(alg),
            " SpMM needs a handle on the GPU backend");
    require(problem.A->memory == SPARSETC_MEMORY_DEVICE && problem.B.memory == SPARSETC_MEMORY_DEVICE &&
                problem.C.memory == SPARSETC_MEMORY_DEVICE,
            SPARSETC_STATUS_NOT_SUPPORTED, alg_name(alg), " SpMM needs A, B and C in device memory");
    require(problem.A->row_permutation.empty(), SPARSETC_STATUS_NOT_SUPPORTED, alg_name(alg),
            " SpMM does not multiply a row-reordered matrix");
    precision_ = choose_precision(problem, alg);
    handle.activate();
    build();
    plan_copies();  // after the first build: the CSR path's row order is known
  }

  size_t workspace_size() const override { return schedule_bytes() + round_up_256(b_copy_bytes_) + c_copy_bytes_; }
  std::string note() const override {
    std::string note = order_note_;
    for (const std::string* part : {&tile_note_, &copies_note_})
      if (!part->empty()) note += (note.empty() ? "" : "; ") + *part;
    return note;
  }

  void execute(double alpha, const sparsetc_dense_s& B, double beta, const sparsetc_dense_s& C, void* workspace,
               size_t) override {
    handle_.activate();
    if (problem_.A->values_version != built_version_ || problem_.A->layout.values != built_values_) build();
    CoreDenseArgs args;
    args.n = C.cols;
    args.B = B.values;
    args.b_order = B.order;
    args.ldb = B.ld;
    args.C = C.values;
    args.c_type = C.value_type;
    args.c_order = C.order;
    args.ldc = C.ld;
    args.alpha = alpha;
    args.beta = beta;
    if (alg_ == SPARSETC_SPMM_ALG_TILED_DCSR) {
      tiled_spmm(tiled_, precision_, tiled_schedule_, args, handle_.stream);
      return;
    }
    if (alg_ == kSpmmAlgTiledFromCsc) {
      csc_tiled_spmm(csc_, precision_, csc_schedule_, args, handle_.stream);
      return;
    }
    bool copies = b_copy_bytes_ + c_copy_bytes_ > 0;
    if (!workspace && workspace_size() > 0) workspace = own_workspace(&copies);
    char* const b_copy = copies ? static_cast<char*>(workspace) + schedule_bytes() : nullptr;
    char* const c_copy = copies ? b_copy + round_up_256(b_copy_bytes_) : nullptr;
    const int b_element = int(value_size(B.value_type));
    if (copies && b_copy_bytes_ && (B.order == SPARSETC_ORDER_COL || !rows_aligned16(B))) {
      if (B.order == SPARSETC_ORDER_COL)
        copy_b_row_major(B.values, B.ld, B.rows, B.cols, b_element, b_copy, b_copy_ld_, handle_.stream);
      else
        copy_b_aligned(B.values, B.ld, B.rows, B.cols, b_element, b_copy, b_copy_ld_, handle_.stream);
      args.B = b_copy;
      args.b_order = SPARSETC_ORDER_ROW;
      args.ldb = b_copy_ld_;
    }
    const bool copy_c = copies && c_copy_bytes_ && (C.order == SPARSETC_ORDER_COL || !rows_aligned16(C));
    if (copy_c) {  // the kernel writes alpha * op(A) B in its sums' type, row-major
      args.C = c_copy;
      args.c_type = sums_type();
      args.c_order = SPARSETC_ORDER_ROW;
      args.ldc = c_copy_ld_;
      args.beta = 0;
    }
    row_spmm(rows_, precision_, row_schedule_, args, workspace, handle_.stream);
    if (copy_c)
      add_c(c_copy, c_copy_ld_, precision_ == CorePrecision::f64, C.rows, C.cols, beta, C.values, C.value_type,
            C.order, C.ld, handle_.stream);
  }

 private:
  // The row kernel's lanes read and write 16 bytes of a row at once; in column-major storage each
  // element lies in a sector of its own. So from kBCopyFromN columns on, a column-major B is copied
  // row-major into the workspace first, and from kCCopyFromN on, for a column-major C the kernel
  // writes its sums row-major there, added into C by a transposing pass (rows padded to 16 bytes;
  // one streaming pass over B or C per multiply). Measured on an H200 (22 real matrices, AUTO
  // against cuSPARSE's best column-major variant, f32 / f16; docs/performance.md): the copy of B
  // took N = 32 from 1.22x / 1.17x to 2.07x / 2.00x and N = 128 from 0.62x / 0.65x to 1.67x /
  // 1.66x, and cost more than it saved at N = 8; the copy of C then took N = 128 to 2.04x / 2.09x
  // and N = 512 from 1.22x / 1.32x to 2.26x / 2.53x, and cost a fifth at N = 16 and 32. At N = 64
  // it lost on most matrices (geomean 0.97x / 0.96x) but won 1.06-1.58x on every one whose rows the
  // kernel visits in reverse Cuthill-McKee order (their C rows, written in that order, scatter over
  // the whole column-major C): there it starts at kCCopyFromNPermuted.
  static constexpr int64_t kBCopyFromN = 16, kCCopyFromN = 128, kCCopyFromNPermuted = 64;
  // Row-major B and C whose rows do not start on 16-byte boundaries (a column slice of a wider
  // matrix, say) deny the lanes their vector loads and stores; the lanes read such rows element by
  // element at constant offsets. Measured on the H200 against that (docs/performance.md, "Row-major
  // B and C off 16-byte boundaries"): B is copied to aligned rows from N = 32 where A reads each
  // row of B at least kUnalignedBCopyFromReuse times on average (a copy read once costs more than
  // it saves: pds-50, 2 entries per column, 0.67x at N = 512 f32), and for f32 from N = 128 at
  // least kUnalignedF32CopyFromReuse times (vt2010, delaunay_n16 and rail582, 4.8-7.2 a row, ran
  // 0.77-0.84x with the copy at N = 128 and 512; the f16 copy moves half the bytes and won or tied
  // on them). C's sums go to aligned rows and are added in from N = 128 for half-precision inputs
  // into an f32 C (f32 inputs lost 9-22% at every N, and an f16/bf16 C was not measured).
  static constexpr int64_t kUnalignedBCopyFromN = 32, kUnalignedBCopyFromReuse = 4, kUnalignedCCopyFromN = 128;
  static constexpr int64_t kUnalignedF32CopyFromN = 128, kUnalignedF32CopyFromReuse = 8;
  bool copy_unaligned_b(const sparsetc_dense_s& b) const {
    if (b.order != SPARSETC_ORDER_ROW || problem_.b_rows_aligned || b.cols < kUnalignedBCopyFromN) return false;
    const bool f32_wide = b.value_type == SPARSETC_VALUE_F32 && b.cols >= kUnalignedF32CopyFromN;
    return rows_.nnz >= (f32_wide ? kUnalignedF32CopyFromReuse : kUnalignedBCopyFromReuse) * b.rows;
  }
  void plan_copies() {
    if (b_stationary(alg_)) return;
    const sparsetc_dense_s &b = problem_.B, &c = problem_.C;
    std::string what;
    const int64_t b_element = int64_t(value_size(b.value_type));
    const bool b_column_major = b.order == SPARSETC_ORDER_COL && b.cols >= kBCopyFromN;
    const bool b_unaligned = copy_unaligned_b(b);
    if ((b_column_major || b_unaligned) && b.rows > 0) {
      b_copy_ld_ = padded_to_16(b.cols, b_element);
      b_copy_bytes_ = size_t(b.rows) * size_t(b_copy_ld_) * size_t(b_element);
      what = b_column_major ? "column-major B copied row-major first" : "B copied to 16-byte aligned rows first";
    }
    const bool permuted_square = order_.size() > 0 && rows_.rows == rows_.cols;  // rows in RCM order
    const bool c_column_major =
        c.order == SPARSETC_ORDER_COL && c.cols >= (permuted_square ? kCCopyFromNPermuted : kCCopyFromN);
    const bool c_unaligned = c.order == SPARSETC_ORDER_ROW && !problem_.c_rows_aligned &&
                             c.cols >= kUnalignedCCopyFromN && c.value_type == SPARSETC_VALUE_F32 &&
                             (precision_ == CorePrecision::f16 || precision_ == CorePrecision::bf16);
    if ((c_column_major || c_unaligned) && c.rows > 0) {
      const int64_t element = int64_t(value_size(sums_type()));
      c_copy_ld_ = padded_to_16(c.cols, element);
      c_copy_bytes_ = size_t(c.rows) * size_t(c_copy_ld_) * size_t(element);
      what += str(what.empty() ? "" : ", ", c_column_major ? "column-major C" : "C", " written row-major",
                  c_column_major ? "" : " to 16-byte aligned rows", ", then added in");
    }
    if (!what.empty()) copies_note_ = str(what, " (", b_copy_bytes_ + c_copy_bytes_, " bytes of workspace)");
  }
  static int64_t padded_to_16(int64_t columns, int64_t element) {
    const int64_t per_16 = 16 / element;
    return (columns + per_16 - 1) / per_16 * per_16;
  }
  static size_t round_up_256(size_t bytes) { return (bytes + 255) / 256 * 256; }
  // The type of the kernel's sums (and of its row-major result for a column-major C).
  sparsetc_value_type_t sums_type() const {
    return precision_ == CorePrecision::f64 ? SPARSETC_VALUE_F64 : SPARSETC_VALUE_F32;
  }

  // The schedule's part of the workspace (the copies, where there are any, follow it).
  size_t schedule_bytes() const { return round_up_256(row_schedule_.workspace_bytes); }

  // The plan's own workspace when the caller passes none, kept for the next executions (from the
  // handle's pool or allocator). Where memory for the copies is refused, the kernel reads and
  // writes B and C as they are (*copies = false): the same sums in the same order, slower.
  void* own_workspace(bool* copies) {
    if (own_workspace_.size() >= workspace_size()) return own_workspace_.data();
    if (*copies && !copies_refused_) {
      try {
        own_workspace_ = DeviceBuffer(workspace_size(), handle_.gpu());
        return own_workspace_.data();
      } catch (const Error& e) {
        if (e.status() != SPARSETC_STATUS_ALLOC_FAILED) throw;
        SPARSETC_LOG(warn, "SpMM: no memory for the copies of B and C (", e.what(), "): used as they are");
        copies_refused_ = true;  // not asked again by this plan
      }
    }
    *copies = false;
    if (own_workspace_.size() < row_schedule_.workspace_bytes)
      own_workspace_ = DeviceBuffer(row_schedule_.workspace_bytes, handle_.gpu());
    return own_workspace_.data();
  }

  // A as multiplied: op(A), canonical, in V.
  template <typename V>
  DeviceCsr<V> multiplied_a(const GpuContext& context) {
    DeviceCsr<V> csr = gpu_normalize<V>(problem_.A->layout, problem_.A->duplicates, context);
    if ((precision_ == CorePrecision::f16 || precision_ == CorePrecision::bf16) &&
        (problem_.op != SPARSETC_OP_NON_TRANSPOSE || b_stationary(alg_))) {
      // The range check here, where entry numbers are still the caller's (CSR order).
      storage_values<V>(csr.values, csr.nnz, context);  // half paths: reads csr.values, leaves it
    }
    if (problem_.op == SPARSETC_OP_NON_TRANSPOSE) return csr;
    return as_transposed_csr(gpu_csr_to_csc(csr.view(), context));
  }

  // values (V, nnz) in the kernels' storage type: rounded to f16/bf16 for the half paths
  // (VALUE_OUT_OF_RANGE names the entry when a finite value does not fit), else taken as they are.
  template <typename V>
  DeviceBuffer storage_values(DeviceBuffer& values, int64_t nnz, const GpuContext& context) {
    if (precision_ != CorePrecision::f16 && precision_ != CorePrecision::bf16) return std::move(values);
    const sparsetc_value_type_t type = core_value_type(precision_);
    DeviceBuffer out(size_t(nnz > 0 ? nnz : 0) * 2, context);
    const V* src = values.as<const V>();
    const ValueConversion r = gpu_convert_values<V>(src, nnz, type, out.data(), context);
    if (r.out_of_range > 0) value_out_of_range_error<V>(src, r.first_out_of_range, type, context.stream);
    return out;
  }

  template <typename V>
  void build_from(DeviceCsr<V> csr, const GpuContext& context) {
    const int64_t n = problem_.C.cols;
    const int64_t nnz = csr.nnz;
    if (alg_ == SPARSETC_SPMM_ALG_TILED_DCSR) {
      DeviceTiledDcsr<V> t = gpu_csr_to_tiled_dcsr(csr.view(), tiled_strip_width(precision_, n), context);
      csr = DeviceCsr<V>();  // free the CSR before the values are converted
      strip_ptr_ = std::move(t.strip_ptr);
      row_idx_ = std::move(t.row_idx);
      row_ptr_ = std::move(t.row_ptr);
      col_idx_ = std::move(t.col_idx);
      values_ = storage_values<V>(t.values, nnz, context);
      tiled_ = CoreTiled{t.rows, t.cols, t.strip_width, t.strips(), t.row_segments, nnz, strip_ptr_.as<const int64_t>(),
                         row_idx_.as<const int32_t>(), row_ptr_.as<const int64_t>(), col_idx_.as<const int32_t>(),
                         values_.data()};
      tiled_schedule_ = make_tiled_schedule(tiled_, precision_, n, context);
      return;
    }
    if (alg_ == kSpmmAlgTiledFromCsc) {
      DeviceCsc<V> c = gpu_csr_to_csc(csr.view(), context);
      csr = DeviceCsr<V>();
      row_ptr_ = std::move(c.col_ptr);  // the CSC's column offsets
      row_idx_ = std::move(c.row_idx);
      values_ = storage_values<V>(c.values, nnz, context);
      csc_ = CoreCsc{c.rows, c.cols, nnz, row_ptr_.as<const int64_t>(), row_idx_.as<const int32_t>(), values_.data()};
      csc_schedule_ = make_csc_tiled_schedule(csc_, precision_, n, context);
      return;
    }
    if (alg_ == SPARSETC_SPMM_ALG_DCSR) {
      DeviceDcsr<V> d = gpu_csr_to_dcsr(csr.view(), context);
      row_idx_ = std::move(d.row_idx);
      row_ptr_ = std::move(d.row_ptr);
      col_idx_ = std::move(d.col_idx);
      values_ = storage_values<V>(d.values, nnz, context);
      rows_ = CoreRows{csr.rows, csr.cols, d.nonempty_rows, nnz, row_idx_.as<const int64_t>(),
                       row_ptr_.as<const int64_t>(), col_idx_.as<const int32_t>(), values_.data()};
      // The CSR's offsets list the empty rows, which the DCSR kernel writes with beta * C.
      schedule_rows(n, csr.row_ptr.template as<const int64_t>(), context);
      return;
    }
    if (alg_ == SPARSETC_SPMM_ALG_CSR) csr = in_visiting_order(std::move(csr), n, context);
    row_ptr_ = std::move(csr.row_ptr);
    col_idx_ = std::move(csr.col_idx);
    values_ = storage_values<V>(csr.values, nnz, context);
    // Rows in a visiting order are the kernel's units, row_idx their row numbers (every row a unit:
    // no empty row is left for the fill).
    rows_ = CoreRows{csr.rows, csr.cols, csr.rows, nnz, order_.size() == 0 ? nullptr : order_.as<const int64_t>(),
                     row_ptr_.as<const int64_t>(), col_idx_.as<const int32_t>(), values_.data()};
    schedule_rows(n, nullptr, context);
  }

  // The row schedule of rows_. The column tiles' width depends on A's pattern only: weighed once
  // per plan (a sort of the entries), then kept when new values rebuild the operand.
  void schedule_rows(int64_t n, const int64_t* csr_row_ptr, const GpuContext& context) {
    row_schedule_ = make_row_schedule(rows_, precision_, n, csr_row_ptr, context, row_options_);
    if (row_options_.tile_lanes == 0) {
      row_options_.tile_lanes = 1 << row_schedule_.tiling.lanes_n_log;
      tile_note_ = row_schedule_.note;
    }
  }

  // A's rows gathered into the order the kernel visits them (choose_spmm_row_order, decided once per
  // plan: the pattern stays when the values change); A itself where its own order is kept.
  template <typename V>
  DeviceCsr<V> in_visiting_order(DeviceCsr<V> csr, int64_t n, const GpuContext& context) {
    if (!order_decided_) {
      SpmmRowOrder choice =
          choose_spmm_row_order(csr.rows, csr.cols, csr.nnz, n, csr.row_ptr.template as<const int64_t>(),
                                csr.col_idx.template as<const int32_t>(), context);
      order_note_ = std::move(choice.note);
      if (!choice.order.empty()) {
        order_ = DeviceBuffer(choice.order.size() * sizeof(int64_t), context);
        // (from pageable memory: cudaMemcpyAsync returns once it has staged the source, which may then go)
        copy_host_to_device(order_.data(), choice.order.data(), choice.order.size() * sizeof(int64_t), context.stream);
      }
      order_decided_ = true;
    }
    if (order_.size() == 0) return csr;
    return gpu_permute_rows(csr.view(), order_.as<const int64_t>(), context);
  }

  void build() {
    const GpuContext context = handle_.gpu();
    built_version_ = problem_.A->values_version;
    built_values_ = problem_.A->layout.values;
    if (precision_ == CorePrecision::f64) build_from<double>(multiplied_a<double>(context), context);
    else build_from<float>(multiplied_a<float>(context), context);
    SPARSETC_LOG(info, alg_name(alg_), " SpMM (CUDA cores, ", precision_name(precision_), "): A ", problem_.A->layout.rows,
                 "x", problem_.A->layout.cols, " nnz ", problem_.A->layout.nnz, ", N ", problem_.C.cols,
                 alg_ == SPARSETC_SPMM_ALG_TILED_DCSR
                     ? str(", strips of ", tiled_.strip_width, ", ", tiled_schedule_.items, " CTAs per column tile")
                 : alg_ == kSpmmAlgTiledFromCsc
                     ? str(", strips of ", csc_schedule_.strip_width, ", ", csc_schedule_.windows,
                           " windows per column tile")
                     : str(", short rows ", row_schedule_.rows_per_stream > 0 ? "in streams of " : "in groups of ",
                           row_schedule_.rows_per_stream > 0 ? row_schedule_.rows_per_stream
                                                             : int64_t(1) << row_schedule_.lanes_k_log,
                           row_schedule_.rows_per_stream > 0 ? "" : " lanes", ", ", row_schedule_.medium_rows,
                           " rows for a warp, ", row_schedule_.long_rows,
                           " rows for CTAs, workspace ", row_schedule_.workspace_bytes, " bytes"));
  }

  sparsetc_handle_s& handle_;
  SpmmProblem problem_;
  sparsetc_spmm_alg_t alg_;
  CorePrecision precision_ = CorePrecision::f32;
  uint64_t built_version_ = 0;
  const void* built_values_ = nullptr;
  // A in the algorithm's format (device arrays) and the views the kernels read.
  DeviceBuffer strip_ptr_, row_idx_, row_ptr_, col_idx_, values_;
  // The CSR path's visiting order (int64 row numbers; empty: A's own order).
  bool order_decided_ = false;
  DeviceBuffer order_;
  std::string order_note_;
  RowScheduleOptions row_options_;  // tile_lanes fixed by the first schedule
  std::string tile_note_;           // why, where the width was weighed
  CoreRows rows_;
  RowSchedule row_schedule_;
  CoreTiled tiled_;
  TiledSchedule tiled_schedule_;
  CoreCsc csc_;
  CscTiledSchedule csc_schedule_;
  DeviceBuffer own_workspace_;
  // The row-major copies of a column-major B and C (plan_copies): leading dimensions and bytes, 0
  // without.
  int64_t b_copy_ld_ = 0, c_copy_ld_ = 0;
  size_t b_copy_bytes_ = 0, c_copy_bytes_ = 0;
  bool copies_refused_ = false;  // the plan's own allocation for them failed once
  std::string copies_note_;
};

}  // namespace

std::unique_ptr<SpmmExecutor> make_cuda_core_spmm(sparsetc_handle_s& handle, const SpmmProblem& problem,
                                                  sparsetc_spmm_alg_t alg) {
  return std::make_unique<CudaCoreSpmm>(handle, problem, alg);
}

}  // namespace sparsetc::detail

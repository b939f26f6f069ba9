#include "gpu/spmm/vbr_cublas/vbr_multiply.hpp"

#include <algorithm>
#include <climits>
#include <map>
#include <tuple>
#include <utility>

#include "core/error.hpp"
#include "gpu/spmm/vbr_cublas/cublas_context.hpp"
#include "gpu/spmm/vbr_cublas/vbr_kernels.hpp"

namespace sparsetc::detail {

const char* vbr_precision_name(VbrPrecision p) {
  switch (p) {
    case VbrPrecision::f16: return "f16";
    case VbrPrecision::bf16: return "bf16";
    case VbrPrecision::f32: return "f32";
    case VbrPrecision::tf32: return "tf32";
    default: return "f64";
  }
}

int vbr_storage_bytes(VbrPrecision p) {
  return p == VbrPrecision::f64 ? 8 : (p == VbrPrecision::f32 || p == VbrPrecision::tf32) ? 4 : 2;
}

const char* vbr_schedule_name(VbrSchedule s) { return s == VbrSchedule::gathered ? "gathered" : "waves"; }

int64_t VbrOperand::stored_area() const {
  int64_t area = 0;
  for (int64_t g = 0; g < groups(); ++g)
    area += (group_ptr[size_t(g + 1)] - group_ptr[size_t(g)]) * (block_ptr[size_t(g + 1)] - block_ptr[size_t(g)]);
  return area * width;
}

namespace {

cudaDataType_t storage_type(VbrPrecision p) {
  switch (p) {
    case VbrPrecision::f16: return CUDA_R_16F;
    case VbrPrecision::bf16: return CUDA_R_16BF;
    case VbrPrecision::f64: return CUDA_R_64F;
    default: return CUDA_R_32F;
  }
}

cublasComputeType_t compute_type(VbrPrecision p) {
  switch (p) {
    case VbrPrecision::tf32: return CUBLAS_COMPUTE_32F_FAST_TF32;
    case VbrPrecision::f64: return CUBLAS_COMPUTE_64F;
    default: return CUBLAS_COMPUTE_32F;
  }
}

bool accumulates_double(VbrPrecision p) { return p == VbrPrecision::f64; }

template <typename V>
VbrOperand build_operand(const DeviceCsrView<V>& csr, const std::vector<int64_t>& group_ptr, int64_t width,
                         VbrPrecision precision, const GpuContext& context) {
  DeviceVbr<V> vbr = gpu_csr_to_vbr<V>(csr, group_ptr, width, context);
  VbrOperand a;
  a.precision = precision;
  a.rows = csr.rows;
  a.cols = csr.cols;
  a.width = width;
  a.nnz = csr.nnz;
  a.group_ptr = group_ptr;
  a.block_ptr.resize(size_t(vbr.groups + 1));
  a.block_col.resize(size_t(vbr.blocks));
  copy_device_to_host(a.block_ptr.data(), vbr.block_ptr.data(), a.block_ptr.size() * sizeof(int64_t), context.stream);
  if (vbr.blocks > 0)
    copy_device_to_host(a.block_col.data(), vbr.block_col.data(), a.block_col.size() * sizeof(int32_t), context.stream);
  a.device_block_col = std::move(vbr.block_col);
  if (int(sizeof(V)) == vbr_storage_bytes(precision)) {
    a.values = std::move(vbr.values);
  } else {
    const sparsetc_value_type_t type = precision == VbrPrecision::f16 ? SPARSETC_VALUE_F16 : SPARSETC_VALUE_BF16;
    a.values = DeviceBuffer(size_t(vbr.value_count) * 2, context);
    const ValueConversion converted =
        gpu_convert_values<V>(vbr.values.template as<const V>(), vbr.value_count, type, a.values.data(), context);
    if (converted.out_of_range > 0)
      value_out_of_range_error<V>(vbr.values.template as<const V>(), converted.first_out_of_range, type,
                                  context.stream);
  }
  return a;
}

int as_int(int64_t v, const char* what) {
  require(v <= INT_MAX, SPARSETC_STATUS_SIZE_OVERFLOW, "VBR-cuBLAS SpMM: ", what, " ", v,
          " exceeds cuBLAS's 32-bit dimensions");
  return int(v);
}

}  // namespace

VbrOperand make_vbr_operand(const DeviceCsrView<float>& csr, const std::vector<int64_t>& group_ptr, int64_t width,
                            VbrPrecision precision, const GpuContext& context) {
  require(precision != VbrPrecision::f64, SPARSETC_STATUS_INTERNAL_ERROR, "make_vbr_operand: f64 from float values");
  return build_operand(csr, group_ptr, width, precision, context);
}

VbrOperand make_vbr_operand(const DeviceCsrView<double>& csr, const std::vector<int64_t>& group_ptr, int64_t width,
                            VbrPrecision precision, const GpuContext& context) {
  require(precision == VbrPrecision::f64, SPARSETC_STATUS_INTERNAL_ERROR, "make_vbr_operand: double values for ",
          vbr_precision_name(precision));
  return build_operand(csr, group_ptr, width, precision, context);
}

// One grouped cuBLAS call: problems [first, first + sum(size)) of the pointer arrays, one entry
// per shape; for the gathered schedule, the blocks whose B rows are gathered before it.
struct VbrMultiply::Call {
  int64_t first = 0;
  int64_t gather_first_block = 0, gather_blocks = 0;
  std::vector<cublasOperation_t> ta, tb;
  std::vector<int> m, n, k, lda, ldb, ldc, size;
  std::vector<float> alpha32, beta32;
  std::vector<double> alpha64, beta64;
};

namespace {

// One GEMM before its pointers exist: byte offsets from the values, the B source (panel or the
// caller's B) and the product.
struct Problem {
  cublasOperation_t ta, tb;
  int m, n, k, lda, ldb, ldc;
  double beta;
  int64_t a_offset, b_offset, c_offset;
  auto shape() const { return std::make_tuple(int(ta), int(tb), m, n, k, lda, ldb, ldc, beta); }
};

}  // namespace

VbrMultiply::VbrMultiply(VbrOperand operand, const std::vector<int64_t>& row_source, int64_t n,
                         sparsetc_order_t b_order, int64_t ldb, sparsetc_order_t c_order,
                         const VbrMultiplyOptions& options, const GpuContext& context)
    : operand_(std::move(operand)), options_(options), n_(n), ldb_(ldb), b_order_(b_order), c_order_(c_order) {
  const int64_t m = operand_.rows;
  require(int64_t(row_source.size()) == m, SPARSETC_STATUS_INTERNAL_ERROR, "VbrMultiply: ", row_source.size(),
          " row sources for ", m, " rows");
  const int64_t acc = accumulates_double(operand_.precision) ? 8 : 4;
  // cuBLAS cannot see the pointers of a batched call, and its kernels assume 16-byte alignment:
  // every group's rows of W start on a 16-byte boundary (rows padded to a multiple of align in W,
  // and, row-major, a leading dimension of a multiple of align).
  const int64_t align = kAlignBytes / acc, groups = operand_.groups();
  padded_row0_.assign(size_t(groups + 1), 0);
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t h = operand_.group_ptr[size_t(g + 1)] - operand_.group_ptr[size_t(g)];
    padded_row0_[size_t(g + 1)] = padded_row0_[size_t(g)] + (h + align - 1) / align * align;
  }
  padded_rows_ = padded_row0_.back();
  ldw_ = c_order_ == SPARSETC_ORDER_ROW ? (n + align - 1) / align * align : padded_rows_;
  // Each original row's row of W, or -1 when its group has no block (never written: the row takes
  // beta * C only).
  std::vector<int64_t> source(row_source);
  for (int64_t& s : source) {
    const int64_t g = int64_t(std::upper_bound(operand_.group_ptr.begin(), operand_.group_ptr.end(), s) -
                              operand_.group_ptr.begin()) - 1;
    s = operand_.block_ptr[size_t(g + 1)] == operand_.block_ptr[size_t(g)]
            ? -1
            : padded_row0_[size_t(g)] + (s - operand_.group_ptr[size_t(g)]);
  }
  row_source_ = DeviceBuffer(source.size() * sizeof(int64_t), context);
  if (!source.empty())
    copy_host_to_device(row_source_.data(), source.data(), source.size() * sizeof(int64_t), context.stream);
  if (m > 0 && n > 0 && operand_.blocks() > 0) {
    as_int(ldw_, "N");
    as_int(padded_rows_, "rows");
    product_ = DeviceBuffer(size_t(c_order_ == SPARSETC_ORDER_ROW ? padded_rows_ : n) * size_t(ldw_) * size_t(acc),
                            context);
    if (options_.schedule == VbrSchedule::gathered)
      plan_gathered(options_.chunk_bytes ? options_.chunk_bytes : VbrMultiplyOptions::kDefaultChunkBytes);
    else
      plan_waves();
    upload(context);
  }
}

VbrMultiply::~VbrMultiply() = default;

namespace {

// Appends the problems as one call, grouped by shape (std::map: a fixed order, so the same plan
// issues the same cuBLAS work every time).
template <typename CallT>
void add_call(std::vector<Problem>& problems, CallT& call, std::vector<int64_t>& a_off, std::vector<int64_t>& b_off,
              std::vector<int64_t>& c_off) {
  std::map<decltype(problems[0].shape()), std::vector<const Problem*>> shapes;
  for (const Problem& p : problems) shapes[p.shape()].push_back(&p);
  call.first = int64_t(a_off.size());
  for (const auto& [shape, list] : shapes) {
    const Problem& p = *list.front();
    call.ta.push_back(p.ta);
    call.tb.push_back(p.tb);
    call.m.push_back(p.m);
    call.n.push_back(p.n);
    call.k.push_back(p.k);
    call.lda.push_back(p.lda);
    call.ldb.push_back(p.ldb);
    call.ldc.push_back(p.ldc);
    call.size.push_back(int(list.size()));
    call.alpha32.push_back(1.0f);
    call.beta32.push_back(float(p.beta));
    call.alpha64.push_back(1.0);
    call.beta64.push_back(p.beta);
    for (const Problem* q : list) {
      a_off.push_back(q->a_offset);
      b_off.push_back(q->b_offset);
      c_off.push_back(q->c_offset);
    }
  }
  problems.clear();
}

}  // namespace

// Per group: W_g = A_g (h x kw) * P_g, P_g the group's gathered rows of B (kw x n, row-major).
// W column-major: m = h, n = n, A_g first as stored (N), P_g read as its column-major transpose (T).
// W row-major: W_g^T = P_g^T * A_g^T: m = n, n = h, P_g^T first as stored (N), A_g transposed (T).
void VbrMultiply::plan_gathered(size_t chunk_bytes) {
  const VbrOperand& a = operand_;
  const int64_t e = vbr_storage_bytes(a.precision), acc = accumulates_double(a.precision) ? 8 : 4;
  const int64_t w = a.width, row_bytes = n_ * e;
  const bool w_row_major = c_order_ == SPARSETC_ORDER_ROW;
  std::vector<Problem> problems;
  int64_t value_start = 0, g = 0;
  const int64_t groups = a.groups();
  while (g < groups) {
    Call call;
    call.gather_first_block = a.block_ptr[size_t(g)];
    for (; g < groups; ++g) {
      const int64_t row0 = padded_row0_[size_t(g)], h = a.group_ptr[size_t(g + 1)] - a.group_ptr[size_t(g)];
      const int64_t kg = a.block_ptr[size_t(g + 1)] - a.block_ptr[size_t(g)];
      if (call.gather_blocks > 0 && size_t((call.gather_blocks + kg) * w * row_bytes) > chunk_bytes) break;
      if (kg > 0) {
        const int kw = as_int(kg * w, "blocks x width of a row group");
        Problem p;
        p.beta = 0;
        p.a_offset = value_start * e;
        p.b_offset = call.gather_blocks * w * row_bytes;
        p.ta = CUBLAS_OP_N;
        p.tb = CUBLAS_OP_T;
        p.k = kw;
        if (w_row_major) {
          p.m = int(n_), p.n = int(h), p.lda = int(n_), p.ldb = int(h), p.ldc = int(ldw_);
          p.c_offset = row0 * ldw_ * acc;
        } else {
          p.m = int(h), p.n = int(n_), p.lda = int(h), p.ldb = int(n_), p.ldc = int(ldw_);
          p.c_offset = row0 * acc;
        }
        problems.push_back(p);
      }
      value_start += h * kg * w;
      call.gather_blocks += kg;
    }
    if (problems.empty()) continue;
    gemms_ += int64_t(problems.size());
    add_call(problems, call, a_offset_, b_offset_, c_offset_);
    panel_blocks_ = std::max(panel_blocks_, call.gather_blocks);
    calls_.push_back(std::move(call));
  }
}

// Wave t: the t-th block of every group that has one, straight from the caller's B (byte offsets
// from its first element). Its last column block may be narrower (kk < w) where K ends.
// W column-major: m = h, n = n, k = kk, A_gt first (N), B's rows (N if column-major, T if row-major).
// W row-major: m = n, n = h, B's rows first (N if row-major, T if column-major), A_gt (T).
void VbrMultiply::plan_waves() {
  const VbrOperand& a = operand_;
  const int64_t e = vbr_storage_bytes(a.precision), acc = accumulates_double(a.precision) ? 8 : 4;
  const int64_t w = a.width, groups = a.groups();
  const bool w_row_major = c_order_ == SPARSETC_ORDER_ROW, b_row_major = b_order_ == SPARSETC_ORDER_ROW;
  std::vector<int64_t> value_start(size_t(groups), 0);
  int64_t waves = 0;
  for (int64_t g = 0, at = 0; g < groups; ++g) {
    value_start[size_t(g)] = at;
    const int64_t kg = a.block_ptr[size_t(g + 1)] - a.block_ptr[size_t(g)];
    at += (a.group_ptr[size_t(g + 1)] - a.group_ptr[size_t(g)]) * kg * w;
    waves = std::max(waves, kg);
  }
  std::vector<Problem> problems;
  for (int64_t t = 0; t < waves; ++t) {
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t kg = a.block_ptr[size_t(g + 1)] - a.block_ptr[size_t(g)];
      if (kg <= t) continue;
      const int64_t row0 = padded_row0_[size_t(g)], h = a.group_ptr[size_t(g + 1)] - a.group_ptr[size_t(g)];
      const int64_t first_col = int64_t(a.block_col[size_t(a.block_ptr[size_t(g)] + t)]) * w;
      const int kk = int(std::min(w, a.cols - first_col));
      Problem p;
      p.beta = t == 0 ? 0.0 : 1.0;
      p.k = kk;
      p.a_offset = (value_start[size_t(g)] + t * h * w) * e;
      p.b_offset = (b_row_major ? first_col * ldb_ : first_col) * e;
      if (w_row_major) {
        p.ta = b_row_major ? CUBLAS_OP_N : CUBLAS_OP_T;
        p.tb = CUBLAS_OP_T;
        p.m = int(n_), p.n = int(h), p.lda = int(ldb_), p.ldb = int(h), p.ldc = int(ldw_);
        p.c_offset = row0 * ldw_ * acc;
      } else {
        p.ta = CUBLAS_OP_N;
        p.tb = b_row_major ? CUBLAS_OP_T : CUBLAS_OP_N;
        p.m = int(h), p.n = int(n_), p.lda = int(h), p.ldb = int(ldb_), p.ldc = int(ldw_);
        p.c_offset = row0 * acc;
      }
      problems.push_back(p);
    }
    Call call;
    gemms_ += int64_t(problems.size());
    add_call(problems, call, a_offset_, b_offset_, c_offset_);
    calls_.push_back(std::move(call));
  }
}

// Device pointer arrays: the first and second cuBLAS operands (A's values first when W is
// column-major, B's rows first when it is row-major) and the products.
void VbrMultiply::upload(const GpuContext& context) {
  const size_t count = a_offset_.size();
  const int64_t e = vbr_storage_bytes(operand_.precision);
  if (options_.schedule == VbrSchedule::gathered)
    panel_ = DeviceBuffer(size_t(panel_blocks_ * operand_.width * n_ * e), context);
  const bool values_first = c_order_ == SPARSETC_ORDER_COL;
  const bool gathered = options_.schedule == VbrSchedule::gathered;
  for (const DeviceBuffer* buffer : {&operand_.values, &panel_, &product_})
    require(reinterpret_cast<uintptr_t>(buffer->data()) % kAlignBytes == 0, SPARSETC_STATUS_INVALID_VALUE,
            "VBR-cuBLAS SpMM: the device allocator returned memory not aligned to ", kAlignBytes, " bytes");
  std::vector<const void*> values(count), panel(gathered ? count : 0);
  std::vector<void*> product(count);
  for (size_t i = 0; i < count; ++i) {
    values[i] = operand_.values.as<const char>() + a_offset_[i];
    if (gathered) panel[i] = panel_.as<const char>() + b_offset_[i];
    product[i] = product_.as<char>() + c_offset_[i];
  }
  // (Copies from pageable host memory are staged before cudaMemcpyAsync returns.)
  const size_t bytes = count * sizeof(void*);
  values_ptrs_ = DeviceBuffer(bytes, context);
  source_ptrs_ = DeviceBuffer(bytes, context);
  product_ptrs_ = DeviceBuffer(bytes, context);
  copy_host_to_device(values_ptrs_.data(), values.data(), bytes, context.stream);
  copy_host_to_device(product_ptrs_.data(), product.data(), bytes, context.stream);
  if (gathered) {
    copy_host_to_device(source_ptrs_.data(), panel.data(), bytes, context.stream);
  } else {
    b_offsets_ = DeviceBuffer(count * sizeof(int64_t), context);
    copy_host_to_device(b_offsets_.data(), b_offset_.data(), count * sizeof(int64_t), context.stream);
  }
  first_ptrs_ = values_first ? &values_ptrs_ : &source_ptrs_;
  second_ptrs_ = values_first ? &source_ptrs_ : &values_ptrs_;
}

void VbrMultiply::launch(const Call& call, cublasHandle_t cublas) {
  const cudaDataType_t in = storage_type(operand_.precision);
  const bool f64 = accumulates_double(operand_.precision);
  const cudaDataType_t out = f64 ? CUDA_R_64F : CUDA_R_32F;
  const cublasComputeType_t compute = compute_type(operand_.precision);
  const void* const* first = first_ptrs_->as<const void* const>() + call.first;
  const void* const* second = second_ptrs_->as<const void* const>() + call.first;
  void* const* product = product_ptrs_.as<void* const>() + call.first;
  const int shapes = int(call.m.size());
#if CUBLAS_VERSION >= 120500
  if (options_.grouped_api && !grouped_unsupported_) {
    const void* alpha = f64 ? static_cast<const void*>(call.alpha64.data()) : call.alpha32.data();
    const void* beta = f64 ? static_cast<const void*>(call.beta64.data()) : call.beta32.data();
    const cublasStatus_t status = cublasGemmGroupedBatchedEx(
        cublas, call.ta.data(), call.tb.data(), call.m.data(), call.n.data(), call.k.data(), alpha, first, in,
        call.lda.data(), second, in, call.ldb.data(), beta, product, out, call.ldc.data(), shapes, call.size.data(),
        compute);
    if (status == CUBLAS_STATUS_SUCCESS) return;
    // Refusals come from argument checks, before any work is queued: fall back to one batched call
    // per shape (which checks the same arguments again, so a real mistake still throws there).
    if (status != CUBLAS_STATUS_NOT_SUPPORTED && status != CUBLAS_STATUS_INVALID_VALUE)
      throw_cublas_error(status, "cublasGemmGroupedBatchedEx", __FILE__, __LINE__);
    grouped_unsupported_ = true;
    grouped_refusal_ = status;
  }
#endif
  int64_t at = 0;
  for (int s = 0; s < shapes; ++s) {
    const void* alpha = f64 ? static_cast<const void*>(&call.alpha64[size_t(s)]) : &call.alpha32[size_t(s)];
    const void* beta = f64 ? static_cast<const void*>(&call.beta64[size_t(s)]) : &call.beta32[size_t(s)];
    SPARSETC_CUBLAS_CHECK(cublasGemmBatchedEx(cublas, call.ta[size_t(s)], call.tb[size_t(s)], call.m[size_t(s)],
                                              call.n[size_t(s)], call.k[size_t(s)], alpha, first + at, in,
                                              call.lda[size_t(s)], second + at, in, call.ldb[size_t(s)], beta,
                                              product + at, out, call.ldc[size_t(s)], call.size[size_t(s)], compute,
                                              CUBLAS_GEMM_DEFAULT));
    at += call.size[size_t(s)];
  }
}

// Waves with a B not aligned to 16 bytes: its blocks' pointers are too, and a batched call cannot
// tell, so each GEMM goes alone through cublasGemmEx, which sees its pointers (correct, not fast:
// the gathered schedule copies B into an aligned panel instead).
void VbrMultiply::launch_each(const Call& call, const void* B, cublasHandle_t cublas) {
  const cudaDataType_t in = storage_type(operand_.precision);
  const bool f64 = accumulates_double(operand_.precision);
  const bool values_first = c_order_ == SPARSETC_ORDER_COL;
  int64_t i = call.first;
  for (size_t s = 0; s < call.m.size(); ++s) {
    const void* alpha = f64 ? static_cast<const void*>(&call.alpha64[s]) : &call.alpha32[s];
    const void* beta = f64 ? static_cast<const void*>(&call.beta64[s]) : &call.beta32[s];
    for (int j = 0; j < call.size[s]; ++j, ++i) {
      const void* values = operand_.values.as<const char>() + a_offset_[size_t(i)];
      const void* rows_of_b = static_cast<const char*>(B) + b_offset_[size_t(i)];
      SPARSETC_CUBLAS_CHECK(cublasGemmEx(cublas, call.ta[s], call.tb[s], call.m[s], call.n[s], call.k[s], alpha,
                                         values_first ? values : rows_of_b, in, call.lda[s],
                                         values_first ? rows_of_b : values, in, call.ldb[s], beta,
                                         product_.as<char>() + c_offset_[size_t(i)], f64 ? CUDA_R_64F : CUDA_R_32F,
                                         call.ldc[s], compute_type(operand_.precision), CUBLAS_GEMM_DEFAULT));
    }
  }
}

void VbrMultiply::run(const VbrMultiplyArgs& args, cublasHandle_t cublas, cudaStream_t stream) {
  const int64_t m = operand_.rows;
  if (m == 0 || n_ == 0) return;
  const int e = vbr_storage_bytes(operand_.precision);
  if (!calls_.empty()) {
    if (options_.schedule == VbrSchedule::waves && args.B != pointers_for_b_) {
      vbr::fill_pointers(args.B, b_offsets_.as<const int64_t>(), int64_t(b_offset_.size()),
                         source_ptrs_.as<const void*>(), stream);
      pointers_for_b_ = args.B;
    }
    const bool aligned_b = reinterpret_cast<uintptr_t>(args.B) % kAlignBytes == 0;
    for (const Call& call : calls_) {
      if (options_.schedule == VbrSchedule::waves && !aligned_b) {
        launch_each(call, args.B, cublas);
        continue;
      }
      if (options_.schedule == VbrSchedule::gathered)
        vbr::gather_block_rows(args.B, b_order_, ldb_, operand_.cols, n_, e,
                               operand_.device_block_col.as<const int32_t>() + call.gather_first_block,
                               call.gather_blocks, operand_.width, panel_.data(), stream);
      launch(call, cublas);
    }
  }
  vbr::ScatterArgs s;
  s.W = product_.data();
  s.w_double = accumulates_double(operand_.precision);
  s.ldw = ldw_;
  s.source = row_source_.as<const int64_t>();
  s.m = m;
  s.n = n_;
  s.alpha = args.alpha;
  s.beta = args.beta;
  s.C = args.C;
  s.c_type = args.c_type;
  s.order = c_order_;
  s.ldc = args.ldc;
  vbr::scatter_rows(s, stream);
}

int64_t VbrMultiply::cublas_calls() const { return int64_t(calls_.size()); }

int64_t VbrMultiply::shapes() const {
  int64_t total = 0;
  for (const Call& call : calls_) total += int64_t(call.m.size());
  return total;
}

std::string VbrMultiply::describe() const {
  return str(vbr_schedule_name(options_.schedule), " schedule, ", gemms_, " GEMMs in ", calls_.size(),
             " grouped cuBLAS call", calls_.size() == 1 ? "" : "s", " (", shapes(), " shapes)",
             options_.schedule == VbrSchedule::gathered ? str(", gathered B ", double(panel_.size()) / 1048576.0, " MiB")
                                                        : std::string(),
             grouped_unsupported_ ? str(", grouped GEMM refused (", cublasGetStatusName(grouped_refusal_),
                                        "): batched per shape")
                                  : std::string());
}

}  // namespace sparsetc::detail

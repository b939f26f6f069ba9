// The csr2bsr pair is cuSPARSE's legacy API, deprecated but the conversion the brief measures.
#define DISABLE_CUSPARSE_DEPRECATED 1

#include "harness/formats.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstring>

#include "harness/device_kernels.hpp"
#include "harness/checked_calls.hpp"

namespace bench {
namespace {

// Sorted distinct block columns of block row `br`.
void block_columns(const HostCsr& a, int64_t block, int64_t br, std::vector<int32_t>& out) {
  out.clear();
  const int64_t r_end = std::min(a.rows, (br + 1) * block);
  for (int64_t r = br * block; r < r_end; ++r)
    for (int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) out.push_back(int32_t(a.col[k] / block));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

uint16_t half_bits(double x, cudaDataType type) {
  uint16_t bits = 0;
  if (type == CUDA_R_16BF) {
    const __nv_bfloat16 v = __float2bfloat16_rn(float(x));
    std::memcpy(&bits, &v, sizeof bits);
  } else {
    const __half v = __float2half_rn(float(x));
    std::memcpy(&bits, &v, sizeof bits);
  }
  return bits;
}

}  // namespace

EllShape blocked_ell_shape(const HostCsr& a, int64_t block, size_t value_bytes) {
  EllShape s;
  s.block = block;
  s.block_rows = (a.rows + block - 1) / block;
  s.block_cols = (a.cols + block - 1) / block;
  std::vector<int64_t> widths(size_t(s.block_rows), 0);
  parallel_for(s.block_rows, [&](int64_t begin, int64_t end) {
    std::vector<int32_t> cols;
    for (int64_t br = begin; br < end; ++br) {
      block_columns(a, block, br, cols);
      widths[size_t(br)] = int64_t(cols.size());
    }
  });
  s.width = std::max<int64_t>(1, widths.empty() ? 1 : *std::max_element(widths.begin(), widths.end()));
  const double stored = double(s.block_rows) * block * double(s.width) * block;
  s.bytes = size_t(s.block_rows * s.width) * sizeof(int32_t) + size_t(stored) * value_bytes;
  s.blowup = a.nnz() ? stored / double(a.nnz()) : 0;
  return s;
}

HostBlockedEll build_blocked_ell(const HostCsr& a, const std::vector<double>& values, int64_t block,
                                 cudaDataType type) {
  HostBlockedEll e;
  e.shape = blocked_ell_shape(a, block, 2);
  const int64_t width = e.shape.width, ell_cols = width * block;
  e.col_ind.assign(size_t(e.shape.block_rows * width), -1);
  e.values.assign(size_t(e.shape.block_rows * block * ell_cols), 0);  // +0.0 in f16 and bf16
  parallel_for(e.shape.block_rows, [&](int64_t begin, int64_t end) {
    std::vector<int32_t> cols;
    for (int64_t br = begin; br < end; ++br) {
      block_columns(a, block, br, cols);
      std::copy(cols.begin(), cols.end(), e.col_ind.begin() + br * width);
      const int64_t r_end = std::min(a.rows, (br + 1) * block);
      for (int64_t r = br * block; r < r_end; ++r)
        for (int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
          const int32_t bc = int32_t(a.col[k] / block);
          const int64_t slot = std::lower_bound(cols.begin(), cols.end(), bc) - cols.begin();
          e.values[size_t(r * ell_cols + slot * block + a.col[k] % block)] = half_bits(values[size_t(k)], type);
        }
    }
  });
  return e;
}

Csr2Bsr::Csr2Bsr(cusparseHandle_t handle, const DeviceCsr& a, int64_t block)
    : handle_(handle), a_(a), block_(block), mb_((a.rows + block - 1) / block), nb_((a.cols + block - 1) / block) {
  if (a.type != CUDA_R_32F) throw VariantError(Status::failed, "Csr2Bsr needs an fp32 CSR");
  BENCH_CUSPARSE(cusparseCreateMatDescr(&csr_descr_));
  BENCH_CUSPARSE(cusparseCreateMatDescr(&bsr_descr_));
  BENCH_CUSPARSE(cusparseSetMatIndexBase(csr_descr_, CUSPARSE_INDEX_BASE_ZERO));
  BENCH_CUSPARSE(cusparseSetMatIndexBase(bsr_descr_, CUSPARSE_INDEX_BASE_ZERO));
}

Csr2Bsr::~Csr2Bsr() {
  if (csr_descr_) cusparseDestroyMatDescr(csr_descr_);
  if (bsr_descr_) cusparseDestroyMatDescr(bsr_descr_);
}

int64_t Csr2Bsr::count(int* bsr_row_ptr) {
  int blocks = 0;  // host pointer mode: the call returns after the count is known
  BENCH_CUSPARSE(cusparseXcsr2bsrNnz(handle_, CUSPARSE_DIRECTION_ROW, int(a_.rows), int(a_.cols), csr_descr_,
                                     a_.row_ptr.as<const int>(), a_.col.as<const int>(), int(block_), bsr_descr_,
                                     bsr_row_ptr, &blocks));
  return blocks;
}

void Csr2Bsr::fill(float* bsr_val, const int* bsr_row_ptr, int* bsr_col) {
  BENCH_CUSPARSE(cusparseScsr2bsr(handle_, CUSPARSE_DIRECTION_ROW, int(a_.rows), int(a_.cols), csr_descr_,
                                  a_.val.as<const float>(), a_.row_ptr.as<const int>(), a_.col.as<const int>(),
                                  int(block_), bsr_descr_, bsr_val, const_cast<int*>(bsr_row_ptr), bsr_col));
}

DeviceBsr make_device_bsr(cusparseHandle_t handle, const DeviceCsr& a_f32, int64_t block, cudaDataType type,
                          cudaStream_t stream) {
  Csr2Bsr convert(handle, a_f32, block);
  DeviceBsr b;
  b.block = block;
  b.block_rows = convert.block_rows();
  b.block_cols = convert.block_cols();
  b.type = type;
  b.row_ptr = DeviceBuffer(size_t(b.block_rows + 1) * sizeof(int));
  b.blocks = convert.count(b.row_ptr.as<int>());
  const size_t entries = size_t(b.blocks) * size_t(block * block);
  b.col = DeviceBuffer(size_t(b.blocks) * sizeof(int));
  DeviceBuffer f32(entries * sizeof(float));
  convert.fill(f32.as<float>(), b.row_ptr.as<const int>(), b.col.as<int>());
  if (type == CUDA_R_32F) {
    b.val = std::move(f32);
  } else {
    b.val = DeviceBuffer(entries * 2);
    BENCH_CUDA(launch_convert_values(f32.as<const float>(), entries, b.val.data(), type, stream));
    BENCH_CUDA(cudaStreamSynchronize(stream));
  }
  return b;
}

HostBsr host_bsr(const HostCsr& a, const std::vector<double>& values, int64_t block) {
  HostBsr b;
  b.block = block;
  b.block_rows = (a.rows + block - 1) / block;
  std::vector<std::vector<int32_t>> cols(size_t(b.block_rows));
  parallel_for(b.block_rows, [&](int64_t begin, int64_t end) {
    for (int64_t br = begin; br < end; ++br) block_columns(a, block, br, cols[size_t(br)]);
  });
  b.row_ptr.assign(size_t(b.block_rows + 1), 0);
  for (int64_t br = 0; br < b.block_rows; ++br) b.row_ptr[size_t(br + 1)] = b.row_ptr[size_t(br)] + int32_t(cols[size_t(br)].size());
  b.blocks = b.row_ptr.back();
  b.col.resize(size_t(b.blocks));
  b.val.assign(size_t(b.blocks * block * block), 0.0f);
  parallel_for(b.block_rows, [&](int64_t begin, int64_t end) {
    for (int64_t br = begin; br < end; ++br) {
      const auto& bc = cols[size_t(br)];
      std::copy(bc.begin(), bc.end(), b.col.begin() + b.row_ptr[size_t(br)]);
      const int64_t r_end = std::min(a.rows, (br + 1) * block);
      for (int64_t r = br * block; r < r_end; ++r)
        for (int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
          const int64_t slot = b.row_ptr[size_t(br)] + (std::lower_bound(bc.begin(), bc.end(), int32_t(a.col[k] / block)) - bc.begin());
          b.val[size_t((slot * block + (r - br * block)) * block + a.col[k] % block)] = float(values[size_t(k)]);
        }
    }
  });
  return b;
}

}  // namespace bench

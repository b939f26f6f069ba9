// More checks of the GPU conversions, exact against the host references:
//  - matrices of millions of entries (band, Poisson, R-MAT, uniform; odd sizes), large enough
//    that every CTA of the transpose's radix passes walks several tiles and many block rows give
//    several warp tasks: CSR <-> CSC, tiled DCSR, BCSR, bitmap tiles, row permutation;
//  - sparsetc_matrix_convert's direct CSR <-> CSC path on the device (convert_on_device), in every
//    offset width and base on both sides and every value type, against the general path it
//    replaces (normalise to int64/double, transpose, export), byte for byte; outputs are poisoned
//    first so that every element is shown written.
// Skips without a device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpu_engine_support.hpp"
#include "core/half.hpp"
#include "core/types.hpp"
#include "engine/handle.hpp"
#include "engine/matrix.hpp"
#include "formats/convert.hpp"
#include "formats/tiled.hpp"
#include "gen/generators.hpp"
#include "gpu/allocators.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/device_memory.hpp"
#include "engine_triplets.hpp"
#include "test_support.hpp"

namespace {

namespace sd = sparsetc::detail;
using sd::CsrMatrix;
using sd::DeviceBuffer;
using sd::GpuContext;
using sparsetc_test::Stream;

using sparsetc_test::same;

// ---- large matrices

template <typename V>
void check_large(const CsrMatrix<V>& A, bool blocks, const std::string& where, const GpuContext& ctx) {
  const sd::DeviceCsr<V> d = sd::csr_to_device(A, ctx);
  const sd::DeviceCsc<V> csc = sd::gpu_csr_to_csc(d.view(), ctx);
  const sd::CscMatrix<V> want_csc = sd::csr_to_csc(A);
  {
    const sd::CscMatrix<V> got = csc.to_host(ctx.stream), &want = want_csc;
    EXPECT_SAME(col_ptr);
    EXPECT_SAME(row_idx);
    EXPECT_SAME(values);
  }
  {
    const CsrMatrix<V> got = sd::csr_to_host(sd::gpu_csc_to_csr(csc.view(), ctx).view(), ctx.stream), &want = A;
    EXPECT_SAME(row_ptr);
    EXPECT_SAME(col_idx);
    EXPECT_SAME(values);
  }
  for (int64_t sw : {int64_t(61), int64_t(4096), int64_t(100003)}) {
    const sd::TiledDcsr<V> got = sd::gpu_csr_to_tiled_dcsr(d.view(), sw, ctx).to_host(ctx.stream);
    const sd::TiledDcsr<V> want = sd::csr_to_tiled_dcsr(A, sw);
    EXPECT_SAME(strip_ptr) << " strip " << sw;
    EXPECT_SAME(row_idx) << " strip " << sw;
    EXPECT_SAME(row_ptr) << " strip " << sw;
    EXPECT_SAME(col_idx) << " strip " << sw;
    EXPECT_SAME(values) << " strip " << sw;
  }
  {
    const sd::BitmapTiles<V> got = sd::gpu_csr_to_bitmap_tiles(d.view(), ctx).to_host(ctx.stream);
    const sd::BitmapTiles<V> want = sd::csr_to_bitmap_tiles(A);
    EXPECT_SAME(tile_row_ptr);
    EXPECT_SAME(tile_row);
    EXPECT_SAME(tile_col);
    EXPECT_SAME(bitmap);
    EXPECT_SAME(element_offset);
    EXPECT_SAME(values);
  }
  if (blocks) {
    for (auto [h, w] : {std::pair{16, 8}, std::pair{8, 8}, std::pair{32, 3}}) {
      const sd::BcsrMatrix<V> got = sd::gpu_csr_to_bcsr(d.view(), h, w, ctx).to_host(ctx.stream);
      const sd::BcsrMatrix<V> want = sd::csr_to_bcsr(A, h, w);
      EXPECT_SAME(block_row_ptr) << " " << h << "x" << w;
      EXPECT_SAME(block_col) << " " << h << "x" << w;
      EXPECT_SAME(values) << " " << h << "x" << w;
    }
  }
  std::vector<int64_t> perm(size_t(A.rows));
  std::iota(perm.begin(), perm.end(), int64_t(0));
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(sparsetc_test::fresh_seed()));
  const CsrMatrix<V> got = sd::csr_to_host(sd::gpu_permute_rows(d.view(), perm, ctx).view(), ctx.stream);
  const CsrMatrix<V> want = sd::permute_rows(A, perm);
  EXPECT_SAME(row_ptr);
  EXPECT_SAME(col_idx);
  EXPECT_SAME(values);
}

TEST(GpuConvertLarge, MillionsOfEntriesMatchTheHost) {
  SKIP_WITHOUT_DEVICE();
  Stream s;
  const uint64_t seed = sparsetc_test::fresh_seed();
  // (spec, BCSR too: padded blocks stay within a few tens of millions of values)
  for (auto [spec, blocks] : {std::pair{"band:300007:5", true}, std::pair{"poisson3d27:41", true},
                              std::pair{"rmat:17:12", false}, std::pair{"uniform:200003:9", false}}) {
    const CsrMatrix<double> A = sd::generate(spec, seed);
    check_large(A, blocks, std::string(spec) + " (double)", s.context());
    check_large(sd::cast_values<float>(A), false, std::string(spec) + " (float)", s.context());
  }
}

// ---- the direct CSR <-> CSC path of sparsetc_matrix_convert

std::vector<unsigned char> encode_values(const std::vector<double>& v, sparsetc_value_type_t type) {
  const size_t size = sd::value_size(type);
  std::vector<unsigned char> out(v.size() * size);
  for (size_t i = 0; i < v.size(); ++i) {
    unsigned char* at = out.data() + i * size;
    if (type == SPARSETC_VALUE_F64) {
      std::memcpy(at, &v[i], 8);
    } else if (type == SPARSETC_VALUE_F32) {
      const float f = float(v[i]);
      std::memcpy(at, &f, 4);
    } else {
      const uint16_t h = type == SPARSETC_VALUE_F16 ? sd::double_to_half(v[i]) : sd::double_to_bfloat16(v[i]);
      std::memcpy(at, &h, 2);
    }
  }
  return out;
}

std::vector<unsigned char> encode_indices(const std::vector<int64_t>& v, sparsetc_index_type_t type, int64_t base) {
  const size_t size = type == SPARSETC_INDEX_32 ? 4 : 8;
  std::vector<unsigned char> out(v.size() * size);
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t x = v[i] + base;
    const int32_t x32 = int32_t(x);
    std::memcpy(out.data() + i * size, size == 4 ? static_cast<const void*>(&x32) : &x, size);
  }
  return out;
}

DeviceBuffer upload(const std::vector<unsigned char>& bytes, const GpuContext& ctx) {
  DeviceBuffer d(std::max<size_t>(bytes.size(), 1), ctx);
  sd::copy_host_to_device(d.data(), bytes.data(), bytes.size(), ctx.stream);
  return d;
}

std::vector<unsigned char> download(const void* device, size_t bytes, cudaStream_t stream) {
  std::vector<unsigned char> out(bytes);
  if (bytes > 0) sd::copy_device_to_host(out.data(), device, bytes, stream);
  return out;
}

// A device handle as sparsetc_handle_create makes it (its own pool on device 0).
struct DeviceHandle {
  sparsetc_handle_s handle;
  explicit DeviceHandle(cudaStream_t stream) {
    handle.backend = SPARSETC_BACKEND_GPU;
    handle.device = 0;
    handle.stream = stream;
    handle.pool = std::make_unique<sd::PoolAllocator>(0);
    handle.memory.set_source(handle.pool.get());
  }
};

void check_direct(const CsrMatrix<double>& A, const std::string& name, cudaStream_t stream) {
  DeviceHandle h(stream);
  const GpuContext ctx = h.handle.gpu();
  const sd::CscMatrix<double> At = sd::csr_to_csc(A);
  for (sparsetc_format_t from : {SPARSETC_FORMAT_CSR, SPARSETC_FORMAT_CSC}) {
    const bool csr = from == SPARSETC_FORMAT_CSR;
    const std::vector<int64_t>& outer = csr ? A.row_ptr : At.col_ptr;
    const std::vector<int64_t>& inner = csr ? A.col_idx : At.row_idx;
    const std::vector<double>& vals = csr ? A.values : At.values;
    const sparsetc_format_t to = csr ? SPARSETC_FORMAT_CSC : SPARSETC_FORMAT_CSR;
    for (sparsetc_index_type_t in_offsets : {SPARSETC_INDEX_32, SPARSETC_INDEX_64})
      for (sparsetc_index_base_t in_base : {SPARSETC_BASE_ZERO, SPARSETC_BASE_ONE})
        for (sparsetc_value_type_t vt :
             {SPARSETC_VALUE_F64, SPARSETC_VALUE_F32, SPARSETC_VALUE_F16, SPARSETC_VALUE_BF16}) {
          const DeviceBuffer d_off = upload(encode_indices(outer, in_offsets, in_base), ctx);
          const DeviceBuffer d_idx = upload(encode_indices(inner, SPARSETC_INDEX_32, in_base), ctx);
          const DeviceBuffer d_val = upload(encode_values(vals, vt), ctx);
          sparsetc_matrix_s source;
          source.layout = sd::RawSparse{from,       A.rows,           A.cols,    A.nnz(),  d_off.data(), d_idx.data(),
                                        d_val.data(), in_offsets, SPARSETC_INDEX_32, in_base, vt};
          source.memory = SPARSETC_MEMORY_DEVICE;
          source.ownership = SPARSETC_BORROW;
          source.device = 0;
          for (sparsetc_index_type_t out_offsets : {SPARSETC_INDEX_32, SPARSETC_INDEX_64})
            for (sparsetc_index_base_t out_base : {SPARSETC_BASE_ZERO, SPARSETC_BASE_ONE}) {
              const std::string where = name + (csr ? " csr->csc" : " csc->csr") + " offsets " +
                                        std::to_string(int(in_offsets)) + "->" + std::to_string(int(out_offsets)) +
                                        " base " + std::to_string(int(in_base)) + "->" +
                                        std::to_string(int(out_base)) + " value " + std::to_string(int(vt));
              // The general path: canonical CSR (double), transposed, exported.
              const sd::DeviceCsr<double> canonical =
                  sd::gpu_normalize<double>(source.layout, SPARSETC_DUPLICATES_ERROR, ctx);
              sd::ExportedArrays want;
              int64_t want_outer = 0;
              if (csr) {
                const sd::DeviceCsc<double> t = sd::gpu_csr_to_csc(canonical.view(), ctx);
                want_outer = t.cols;
                want = sd::gpu_export_compressed<double>(t.cols, t.nnz, t.col_ptr.as<int64_t>(),
                                                         t.row_idx.as<int32_t>(), t.values.as<double>(), out_offsets,
                                                         SPARSETC_INDEX_32, out_base, vt, ctx);
              } else {
                want_outer = canonical.rows;
                want = sd::gpu_export_compressed<double>(
                    canonical.rows, canonical.nnz, canonical.row_ptr.as<int64_t>(), canonical.col_idx.as<int32_t>(),
                    canonical.values.as<double>(), out_offsets, SPARSETC_INDEX_32, out_base, vt, ctx);
              }
              std::unique_ptr<sparsetc_matrix_s> got =
                  sd::convert_on_device(h.handle, source, to, out_offsets, SPARSETC_INDEX_32, out_base, vt);
              const sd::RawSparse& r = got->layout;
              EXPECT_EQ(r.format, to) << where;
              EXPECT_EQ(r.rows, A.rows) << where;
              EXPECT_EQ(r.cols, A.cols) << where;
              EXPECT_EQ(r.nnz, A.nnz()) << where;
              EXPECT_EQ(r.offset_type, out_offsets) << where;
              EXPECT_EQ(r.base, out_base) << where;
              EXPECT_EQ(r.value_type, vt) << where;
              const size_t osize = out_offsets == SPARSETC_INDEX_32 ? 4 : 8, vsize = sd::value_size(vt);
              const size_t outer_bytes = size_t(want_outer + 1) * osize, nnz = size_t(A.nnz());
              const auto want_offsets = download(want.offsets.data(), outer_bytes, stream);
              EXPECT_TRUE(download(r.offsets, outer_bytes, stream) == want_offsets) << where << ": offsets";
              EXPECT_TRUE(download(r.indices, nnz * 4, stream) == download(want.indices.data(), nnz * 4, stream))
                  << where << ": indices";
              EXPECT_TRUE(download(r.values, nnz * vsize, stream) == download(want.values.data(), nnz * vsize, stream))
                  << where << ": values";
            }
        }
  }
}

TEST(GpuConvertDirect, CsrCscTransposeEqualsTheGeneralPath) {
  SKIP_WITHOUT_DEVICE();
  Stream s;
  const uint64_t seed = sparsetc_test::fresh_seed();
  std::vector<std::pair<std::string, CsrMatrix<double>>> cases;
  cases.push_back({"empty 5x3", [] {
                     CsrMatrix<double> m;
                     m.rows = 5;
                     m.cols = 3;
                     m.row_ptr.assign(6, 0);
                     return m;
                   }()});
  cases.push_back(
      {"random 97x1301", sparsetc_test::csr_of(sparsetc_test::random_triplets(97, 1301, 0.05, seed + 1))});
  cases.push_back({"rmat 12", sd::generate_rmat(12, 9, 0.57, 0.19, 0.19, seed + 2)});
  cases.push_back({"band 700001", sd::generate_band(700001, 1, seed + 3)});  // 2M entries, 20-bit indices
  for (const auto& [name, A] : cases) check_direct(A, name, s.stream);
}

// Poisoned outputs: a transpose writes every element of its three arrays.
TEST(GpuConvertDirect, TransposeWritesEveryElement) {
  SKIP_WITHOUT_DEVICE();
  Stream s;
  const GpuContext ctx = s.context();
  const CsrMatrix<double> A = sd::generate_rmat(13, 7, 0.57, 0.19, 0.19, sparsetc_test::fresh_seed());
  // Fill the stream-ordered pool's next blocks with NaN bytes, free them, then convert: the pool
  // hands the same memory back.
  {
    const size_t bytes = size_t(A.nnz()) * 16 + size_t(A.cols + 1) * 8 + (1 << 20);
    DeviceBuffer poison(bytes, ctx);
    ASSERT_EQ(cudaMemsetAsync(poison.data(), 0xff, bytes, s.stream), cudaSuccess);
  }
  const sd::DeviceCsr<double> d = sd::csr_to_device(A, ctx);
  const sd::CscMatrix<double> got = sd::gpu_csr_to_csc(d.view(), ctx).to_host(s.stream), want = sd::csr_to_csc(A);
  const std::string where = "rmat 13";
  EXPECT_SAME(col_ptr);
  EXPECT_SAME(row_idx);
  EXPECT_SAME(values);
}

}  // namespace

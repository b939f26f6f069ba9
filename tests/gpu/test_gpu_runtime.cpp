// The GPU backend's runtime through the C API: handles, device matrices, copies, validation.
#include <cmath>

#include "gpu_support.hpp"
#include "test_support.hpp"

using namespace sparsetc_test;

TEST(GpuRuntime, GpuBackendIsChosenWhenADeviceExists) {
  sparsetc_handle_t h = nullptr;
  ASSERT_EQ(sparsetc_create(&h), SPARSETC_STATUS_SUCCESS);
  sparsetc_backend_t backend = -1;
  ASSERT_EQ(sparsetc_get_backend(h, &backend), SPARSETC_STATUS_SUCCESS);
  EXPECT_EQ(backend, gpu_present() ? SPARSETC_BACKEND_GPU : SPARSETC_BACKEND_CPU);
  sparsetc_destroy(h);
  if (!gpu_present()) {
    sparsetc_handle_t g = nullptr;
    EXPECT_EQ(sparsetc_create_with_backend(&g, SPARSETC_BACKEND_GPU, 0), SPARSETC_STATUS_NO_DEVICE);
    EXPECT_EQ(g, nullptr);
  }
}

class DeviceMatrix : public GpuTest {};

TEST_F(DeviceMatrix, RoundTripThroughDeviceMemoryIsExact) {
  auto t = random_triplets(301, 177, 0.03, fresh_seed());
  auto a = to_csr<int64_t, int32_t>(t, 1);
  sparsetc_matrix_t host = nullptr, dev = nullptr, back = nullptr;
  ASSERT_OK(cpu_, sparsetc_matrix_create_csr(cpu_, &host, t.rows, t.cols, int64_t(a.col.size()), a.row_ptr.data(),
                                             a.col.data(), a.val.data(), SPARSETC_INDEX_64, SPARSETC_INDEX_32,
                                             SPARSETC_BASE_ONE, SPARSETC_VALUE_F64, SPARSETC_MEMORY_HOST,
                                             SPARSETC_COPY));
  ASSERT_OK(gpu_, sparsetc_matrix_copy_to(gpu_, host, SPARSETC_MEMORY_DEVICE, &dev));
  ASSERT_OK(gpu_, sparsetc_matrix_copy_to(gpu_, dev, SPARSETC_MEMORY_HOST, &back));
  sparsetc_matrix_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_OK(gpu_, sparsetc_matrix_get_info(dev, &info));
  EXPECT_EQ(info.memory, SPARSETC_MEMORY_DEVICE);
  void *p = nullptr, *c = nullptr, *v = nullptr;
  ASSERT_OK(gpu_, sparsetc_matrix_get_arrays(back, &p, &c, &v));
  EXPECT_EQ(std::vector<int64_t>(static_cast<int64_t*>(p), static_cast<int64_t*>(p) + t.rows + 1), a.row_ptr);
  EXPECT_EQ(std::vector<int32_t>(static_cast<int32_t*>(c), static_cast<int32_t*>(c) + a.col.size()), a.col);
  EXPECT_EQ(std::vector<double>(static_cast<double*>(v), static_cast<double*>(v) + a.val.size()), a.val);
  for (auto m : {host, dev, back}) sparsetc_matrix_destroy(m);
}

TEST_F(DeviceMatrix, StructureOfDeviceArraysIsValidated) {
  auto t = random_triplets(64, 64, 0.1, fresh_seed(), false);
  auto a = to_csr<int32_t, int32_t>(t);
  a.col[a.col.size() / 2] = 64;  // out of range
  DeviceArray<int32_t> p(a.row_ptr), c(a.col);
  DeviceArray<double> v(a.val);
  sparsetc_matrix_t m = nullptr;
  EXPECT_EQ(sparsetc_matrix_create_csr(gpu_, &m, 64, 64, int64_t(a.col.size()), p.get(), c.get(), v.get(),
                                       SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64,
                                       SPARSETC_MEMORY_DEVICE, SPARSETC_BORROW),
            SPARSETC_STATUS_INVALID_INDEX);
  EXPECT_EQ(m, nullptr);
  EXPECT_NE(last_error(gpu_).find("out of range"), std::string::npos) << last_error(gpu_);
}

TEST_F(DeviceMatrix, HostPointersAreRefusedForDeviceMatrices) {
  std::vector<int32_t> p{0, 1}, c{0};
  std::vector<double> v{1.0};
  sparsetc_matrix_t m = nullptr;
  EXPECT_EQ(sparsetc_matrix_create_csr(gpu_, &m, 1, 1, 1, p.data(), c.data(), v.data(), SPARSETC_INDEX_32,
                                       SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64,
                                       SPARSETC_MEMORY_DEVICE, SPARSETC_COPY),
            SPARSETC_STATUS_INVALID_VALUE);
}

namespace {

// Bytes of a matrix's three arrays, read back to the host.
struct ArrayBytes {
  std::vector<unsigned char> offsets, indices, values;
  bool operator==(const ArrayBytes& o) const {
    return offsets == o.offsets && indices == o.indices && values == o.values;
  }
};

ArrayBytes bytes_of(sparsetc_handle_t h, sparsetc_matrix_t m) {
  sparsetc_matrix_t host = nullptr;
  EXPECT_EQ(sparsetc_matrix_copy_to(h, m, SPARSETC_MEMORY_HOST, &host), SPARSETC_STATUS_SUCCESS) << last_error(h);
  sparsetc_matrix_info_t info{};
  info.struct_size = sizeof info;
  sparsetc_matrix_get_info(host, &info);
  void *p = nullptr, *c = nullptr, *v = nullptr;
  sparsetc_matrix_get_arrays(host, &p, &c, &v);
  const size_t isz = info.index_type == SPARSETC_INDEX_32 ? 4 : 8, osz = info.offset_type == SPARSETC_INDEX_32 ? 4 : 8;
  const size_t vsz = info.value_type == SPARSETC_VALUE_F64 ? 8 : info.value_type == SPARSETC_VALUE_F32 ? 4 : 2;
  const int64_t outer = info.format == SPARSETC_FORMAT_CSR ? info.rows + 1 : info.cols + 1;
  ArrayBytes b;
  b.offsets.assign(static_cast<unsigned char*>(p), static_cast<unsigned char*>(p) + size_t(outer) * osz);
  b.indices.assign(static_cast<unsigned char*>(c), static_cast<unsigned char*>(c) + size_t(info.nnz) * isz);
  b.values.assign(static_cast<unsigned char*>(v), static_cast<unsigned char*>(v) + size_t(info.nnz) * vsz);
  sparsetc_matrix_destroy(host);
  return b;
}

TEST_F(DeviceMatrix, ConvertOnTheDeviceEqualsTheHost) {
  for (const char* spec : {"uniform:1001:7:999", "rmat:10:6", "band:777:5", "poisson3d27:9"}) {
    SCOPED_TRACE(spec);
    sparsetc_matrix_t host = nullptr, dev = nullptr;
    ASSERT_OK(cpu_, sparsetc_matrix_generate(cpu_, spec, fresh_seed(), SPARSETC_VALUE_F64, &host));
    ASSERT_OK(gpu_, sparsetc_matrix_copy_to(gpu_, host, SPARSETC_MEMORY_DEVICE, &dev));
    for (sparsetc_format_t format : {SPARSETC_FORMAT_CSR, SPARSETC_FORMAT_CSC})
      for (sparsetc_index_type_t it : {SPARSETC_INDEX_32, SPARSETC_INDEX_64})
        for (sparsetc_index_base_t base : {SPARSETC_BASE_ZERO, SPARSETC_BASE_ONE})
          for (sparsetc_value_type_t vt : {SPARSETC_VALUE_F16, SPARSETC_VALUE_BF16, SPARSETC_VALUE_F32}) {
            sparsetc_matrix_t on_host = nullptr, on_device = nullptr;
            ASSERT_OK(cpu_, sparsetc_matrix_convert(cpu_, host, format, it, it, base, vt, &on_host));
            ASSERT_OK(gpu_, sparsetc_matrix_convert(gpu_, dev, format, it, it, base, vt, &on_device));
            sparsetc_matrix_info_t info{};
            info.struct_size = sizeof info;
            ASSERT_OK(gpu_, sparsetc_matrix_get_info(on_device, &info));
            EXPECT_EQ(info.memory, SPARSETC_MEMORY_DEVICE);
            EXPECT_TRUE(bytes_of(gpu_, on_device) == bytes_of(cpu_, on_host))
                << "format " << format << " index " << it << " base " << base << " value " << vt;
            sparsetc_matrix_destroy(on_host);
            sparsetc_matrix_destroy(on_device);
          }
    // Out of fp16 range: the same status and message as on the host.
    std::vector<double> big(size_t([&] {
      sparsetc_matrix_info_t info{};
      info.struct_size = sizeof info;
      sparsetc_matrix_get_info(host, &info);
      return info.nnz;
    }()), 1.0);
    big[big.size() / 2] = 1e6;
    DeviceArray<double> dbig(big);
    ASSERT_OK(gpu_, sparsetc_matrix_set_values(gpu_, dev, dbig.get()));
    ASSERT_OK(cpu_, sparsetc_matrix_set_values(cpu_, host, big.data()));
    sparsetc_matrix_t a = nullptr, b = nullptr;
    EXPECT_EQ(sparsetc_matrix_convert(gpu_, dev, SPARSETC_FORMAT_CSR, SPARSETC_INDEX_32, SPARSETC_INDEX_32,
                                      SPARSETC_BASE_ZERO, SPARSETC_VALUE_F16, &a),
              SPARSETC_STATUS_VALUE_OUT_OF_RANGE);
    EXPECT_EQ(sparsetc_matrix_convert(cpu_, host, SPARSETC_FORMAT_CSR, SPARSETC_INDEX_32, SPARSETC_INDEX_32,
                                      SPARSETC_BASE_ZERO, SPARSETC_VALUE_F16, &b),
              SPARSETC_STATUS_VALUE_OUT_OF_RANGE);
    EXPECT_EQ(a, nullptr);
    EXPECT_EQ(last_error(gpu_).substr(last_error(gpu_).find(':')), last_error(cpu_).substr(last_error(cpu_).find(':')));
    sparsetc_matrix_destroy(dev);
    sparsetc_matrix_destroy(host);
  }
}

}  // namespace

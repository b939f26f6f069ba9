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

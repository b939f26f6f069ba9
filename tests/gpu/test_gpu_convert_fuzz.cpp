// Randomised format conversions through the C API: each round draws a structure (fuzz_support.hpp),
// a device matrix in a drawn format (CSR, CSC, COO in any order), index widths, base and value type,
// and a target (format, index widths, base, value type); sparsetc_matrix_convert on the GPU handle
// must give the CPU backend's result on a host copy of the same matrix: the same status, and on
// success the same description and the same bytes in every array (structure bit for bit, values
// exactly). Some rounds put a value beyond fp16's range into a matrix converted to f16 (both must
// refuse with VALUE_OUT_OF_RANGE). SPARSETC_FUZZ_ROUNDS sets the rounds (default 40).
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_support.hpp"

using namespace sparsetc_test;

namespace {

size_t index_width(sparsetc_index_type_t t) { return t == SPARSETC_INDEX_64 ? 8 : 4; }

// A host matrix's description and arrays, as bytes.
struct HostArrays {
  sparsetc_matrix_info_t info{};
  std::vector<uint8_t> first, second, values;
};

HostArrays read_host(sparsetc_matrix_t m) {
  HostArrays h;
  h.info.struct_size = sizeof h.info;
  EXPECT_EQ(sparsetc_matrix_get_info(m, &h.info), SPARSETC_STATUS_SUCCESS);
  void *first = nullptr, *second = nullptr, *values = nullptr;
  EXPECT_EQ(sparsetc_matrix_get_arrays(m, &first, &second, &values), SPARSETC_STATUS_SUCCESS);
  const int64_t nnz = h.info.nnz;
  const int64_t lines = h.info.format == SPARSETC_FORMAT_CSR   ? h.info.rows + 1
                        : h.info.format == SPARSETC_FORMAT_CSC ? h.info.cols + 1
                                                               : nnz;
  auto take = [](const void* p, size_t bytes) {
    std::vector<uint8_t> out(bytes);
    if (bytes) std::memcpy(out.data(), p, bytes);
    return out;
  };
  h.first = take(first, size_t(lines) * index_width(h.info.offset_type));
  h.second = take(second, size_t(nnz) * index_width(h.info.index_type));
  h.values = take(values, size_t(nnz) * type_size(h.info.value_type));
  return h;
}

class GpuConvertFuzz : public GpuTest {};

TEST_F(GpuConvertFuzz, DeviceConversionsEqualTheHostsOnRandomCases) {
  const uint64_t seed = fresh_seed();
  const int rounds = fuzz_rounds(40);
  std::cout << "[ fuzz ] seed " << seed << " (SPARSETC_TEST_SEED replays the run), " << rounds << " rounds\n";
  Draw d(seed);
  int converted = 0, refused = 0;
  for (int round = 0; round < rounds; ++round) {
    auto size = [&] { return d.chance(0.05) ? d.between(0, 1) : d.between(2, 1500); };
    std::string structure;
    Triplets t = draw_structure(d, size(), size(), structure);
    const bool too_big = d.chance(0.1) && !t.entries.empty();
    const SparseLayout from = draw_layout(d);
    const sparsetc_value_type_t from_type =
        d.pick({SPARSETC_VALUE_F64, SPARSETC_VALUE_F32, SPARSETC_VALUE_F16, SPARSETC_VALUE_BF16});
    SparseLayout to = draw_layout(d);
    to.format = d.pick({SPARSETC_FORMAT_CSR, SPARSETC_FORMAT_CSC, SPARSETC_FORMAT_COO});
    if (to.format == SPARSETC_FORMAT_COO) to.offsets = to.indices;
    sparsetc_value_type_t to_type =
        d.pick({SPARSETC_VALUE_F64, SPARSETC_VALUE_F32, SPARSETC_VALUE_F16, SPARSETC_VALUE_BF16});
    if (too_big) to_type = SPARSETC_VALUE_F16;
    const std::string what = "round " + std::to_string(round) + ": " + std::to_string(t.rows) + "x" +
                             std::to_string(t.cols) + " (" + structure + ", " + std::to_string(t.entries.size()) +
                             " entries) " + describe(from) + " " + type_name(from_type) + " -> " + describe(to) +
                             " " + type_name(to_type) + (too_big ? ", a value beyond fp16's range" : "");
    SCOPED_TRACE(what);

    const bool failed_before = HasFailure();
    SparseOperand source(gpu_, t, from, from_type, SPARSETC_MEMORY_DEVICE, d);
    ASSERT_NE(source.get(), nullptr);
    std::unique_ptr<Buffer> big;  // the values with one beyond fp16's range (a borrowed matrix points at them)
    if (too_big && from_type != SPARSETC_VALUE_F16) {
      // One entry set to 1e6 (f64/f32 hold it, bf16 rounds it): fp16 cannot.
      std::vector<double> values(size_t(source.nnz()));
      for (size_t p = 0; p < values.size(); ++p) values[p] = source.value(p);
      values[values.size() / 2] = 1e6;
      big = std::make_unique<Buffer>(pack(values, from_type), SPARSETC_MEMORY_DEVICE);
      ASSERT_EQ(sparsetc_matrix_set_values(gpu_, source.get(), big->get()), SPARSETC_STATUS_SUCCESS)
          << last_error(gpu_);
    }
    sparsetc_matrix_t host_source = nullptr, on_device = nullptr, on_host = nullptr, device_result = nullptr;
    ASSERT_EQ(sparsetc_matrix_copy_to(gpu_, source.get(), SPARSETC_MEMORY_HOST, &host_source),
              SPARSETC_STATUS_SUCCESS)
        << last_error(gpu_);
    const sparsetc_status_t device_status = sparsetc_matrix_convert(
        gpu_, source.get(), to.format, to.offsets, to.indices, to.base, to_type, &on_device);
    const std::string device_error = last_error(gpu_);
    const sparsetc_status_t host_status = sparsetc_matrix_convert(cpu_, host_source, to.format, to.offsets,
                                                                  to.indices, to.base, to_type, &on_host);
    EXPECT_EQ(device_status, host_status) << "device: " << device_error << "; host: " << last_error(cpu_);
    if (too_big && from_type != SPARSETC_VALUE_F16) {
      EXPECT_EQ(device_status, SPARSETC_STATUS_VALUE_OUT_OF_RANGE) << device_error;
    }
    if (device_status == SPARSETC_STATUS_SUCCESS && host_status == SPARSETC_STATUS_SUCCESS) {
      ++converted;
      ASSERT_EQ(sparsetc_matrix_copy_to(gpu_, on_device, SPARSETC_MEMORY_HOST, &device_result),
                SPARSETC_STATUS_SUCCESS)
          << last_error(gpu_);
      const HostArrays got = read_host(device_result), want = read_host(on_host);
      EXPECT_EQ(got.info.rows, want.info.rows);
      EXPECT_EQ(got.info.cols, want.info.cols);
      EXPECT_EQ(got.info.nnz, want.info.nnz);
      EXPECT_EQ(got.info.format, want.info.format);
      EXPECT_EQ(got.info.offset_type, want.info.offset_type);
      EXPECT_EQ(got.info.index_type, want.info.index_type);
      EXPECT_EQ(got.info.base, want.info.base);
      EXPECT_EQ(got.info.value_type, want.info.value_type);
      EXPECT_TRUE(got.first == want.first) << "offsets (or COO rows) differ";
      EXPECT_TRUE(got.second == want.second) << "indices differ";
      EXPECT_TRUE(got.values == want.values) << "values differ";
    } else {
      ++refused;
      EXPECT_EQ(on_device, nullptr);
      EXPECT_FALSE(device_error.empty());
    }
    for (sparsetc_matrix_t m : {host_source, on_device, on_host, device_result}) sparsetc_matrix_destroy(m);
    if (!failed_before && HasFailure()) std::cout << "[ fuzz ] FAILED " << what << "\n";
  }
  std::cout << "[ fuzz ] converted " << converted << ", refused by both " << refused << "\n";
}

}  // namespace

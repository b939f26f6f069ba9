// gpu_convert_values: float/double -> f16/bf16/f32/f64 with the host's rounding (store_values).
//
// Kernel: each thread converts 8 consecutive values (16-byte loads and stores when the pointers are
// aligned, scalar at the tail), so the pass moves n * (sizeof(V) + sizeof(out)) bytes once. Values
// that round beyond the target's range are counted per warp; only warps that meet one touch the
// global counter (two atomics), so ordinary data costs no atomics at all.
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/half.hpp"
#include "core/types.hpp"
#include "formats/values.hpp"
#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/device_rounding.cuh"
#include "gpu/convert/gpu_convert.hpp"

namespace sparsetc::detail {
namespace gpuconv {
namespace {

using ull = unsigned long long;
constexpr int kPerThread = 8;

struct RangeCounter {
  ull count;  // out-of-range values
  ull first;  // smallest such index (all ones: none)
};

// dst type and rounding for each target.
template <typename V, sparsetc_value_type_t T>
struct Target;
template <typename V>
struct Target<V, SPARSETC_VALUE_F16> {
  using Out = uint16_t;
  static __device__ __forceinline__ Out convert(V v) {
    if constexpr (std::is_same_v<V, float>) return d_float_to_half(v);
    else return d_double_to_half(v);
  }
};
template <typename V>
struct Target<V, SPARSETC_VALUE_BF16> {
  using Out = uint16_t;
  static __device__ __forceinline__ Out convert(V v) {
    if constexpr (std::is_same_v<V, float>) return d_float_to_bfloat16(v);
    else return d_double_to_bfloat16(v);
  }
};
template <typename V>
struct Target<V, SPARSETC_VALUE_F32> {
  using Out = float;
  static __device__ __forceinline__ Out convert(V v) {
    if constexpr (std::is_same_v<V, float>) return v;
    else return d_double_to_float(v);
  }
};
template <typename V>
struct Target<V, SPARSETC_VALUE_F64> {
  using Out = double;
  static __device__ __forceinline__ Out convert(V v) {
    if constexpr (std::is_same_v<V, float>) return d_float_to_double(v);
    else return v;
  }
};

template <typename V, sparsetc_value_type_t T>
__global__ void __launch_bounds__(kThreads)
    convert_kernel(const V* __restrict__ src, int64_t n, typename Target<V, T>::Out* __restrict__ dst,
                   double overflow, bool vector_ok, RangeCounter* counter) {
  using Out = typename Target<V, T>::Out;
  const int64_t base = (int64_t(blockIdx.x) * kThreads + threadIdx.x) * kPerThread;
  V in[kPerThread];
  Out out[kPerThread];
  ull bad = 0, first = ~0ull;
  if (base < n) {
    const bool full = vector_ok && base + kPerThread <= n;
    if (full) {
      static_assert(sizeof(in) % 16 == 0 && sizeof(out) % 16 == 0, "16-byte vectors");
      const uint4* s = reinterpret_cast<const uint4*>(src + base);
      uint4 words[sizeof(in) / 16];
#pragma unroll
      for (int w = 0; w < int(sizeof(in) / 16); ++w) words[w] = __ldcs(s + w);
      memcpy(in, words, sizeof(in));
    } else {
#pragma unroll
      for (int e = 0; e < kPerThread; ++e) in[e] = base + e < n ? src[base + e] : V(0);
    }
#pragma unroll
    for (int e = 0; e < kPerThread; ++e) {
      const double a = fabs(double(in[e]));
      if (a >= overflow && !isinf(a) && base + e < n) {
        ++bad;
        if (first == ~0ull) first = ull(base + e);
      }
      out[e] = Target<V, T>::convert(in[e]);
    }
    if (full) {
      uint4 words[sizeof(out) / 16];
      memcpy(words, out, sizeof(out));
      uint4* d = reinterpret_cast<uint4*>(dst + base);
#pragma unroll
      for (int w = 0; w < int(sizeof(out) / 16); ++w) __stcs(d + w, words[w]);
    } else {
#pragma unroll
      for (int e = 0; e < kPerThread; ++e)
        if (base + e < n) dst[base + e] = out[e];
    }
  }
  // Out-of-range values are rare: only a warp that saw one goes to the global counter.
  if (__any_sync(kFullMask, bad != 0)) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
      bad += __shfl_down_sync(kFullMask, bad, offset);
      const ull other = __shfl_down_sync(kFullMask, first, offset);
      first = other < first ? other : first;
    }
    if ((threadIdx.x & 31) == 0) {
      atomicAdd(&counter->count, bad);
      atomicMin(&counter->first, first);
    }
  }
}

template <typename V, sparsetc_value_type_t T>
void launch_convert(const V* src, int64_t n, void* dst, double overflow, RangeCounter* counter,
                    const GpuContext& context) {
  using Out = typename Target<V, T>::Out;
  const bool vector_ok = reinterpret_cast<uintptr_t>(src) % 16 == 0 && reinterpret_cast<uintptr_t>(dst) % 16 == 0;
  convert_kernel<V, T><<<ctas_for(n, int64_t(kThreads) * kPerThread), kThreads, 0, context.stream>>>(
      src, n, static_cast<Out*>(dst), overflow, vector_ok, counter);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

std::string max_text(sparsetc_value_type_t type) {
  switch (type) {
    case SPARSETC_VALUE_F32: return format_number(std::numeric_limits<float>::max());
    case SPARSETC_VALUE_F64: return format_number(std::numeric_limits<double>::max());
    case SPARSETC_VALUE_F16: return format_number(kHalfMax);
    default: return format_number(float(kBfloat16Max));
  }
}

}  // namespace
}  // namespace gpuconv

template <typename V>
ValueConversion gpu_convert_values(const V* d_src, int64_t n, sparsetc_value_type_t type, void* d_dst,
                                   const GpuContext& context) {
  using namespace gpuconv;
  require(is_valid_value_type(type), SPARSETC_STATUS_INVALID_VALUE, "unknown value type ", type);
  require(n >= 0, SPARSETC_STATUS_INVALID_VALUE, "negative value count ", n);
  require((d_src != nullptr && d_dst != nullptr) || n == 0, SPARSETC_STATUS_NULL_POINTER,
          "a value array is NULL but n = ", n);
  ValueConversion result;
  if (n == 0) return result;
  double overflow = std::numeric_limits<double>::infinity();
  switch (type) {
    case SPARSETC_VALUE_F32: overflow = std::is_same_v<V, float> ? overflow : kFloatOverflow; break;
    case SPARSETC_VALUE_F16: overflow = kHalfOverflow; break;
    case SPARSETC_VALUE_BF16: overflow = kBfloat16Overflow; break;
    default: break;
  }
  DeviceBuffer counter(sizeof(RangeCounter), context);
  RangeCounter* c = counter.as<RangeCounter>();
  SPARSETC_CUDA_CHECK(cudaMemsetAsync(&c->count, 0, sizeof(ull), context.stream));
  SPARSETC_CUDA_CHECK(cudaMemsetAsync(&c->first, 0xff, sizeof(ull), context.stream));
  switch (type) {
    case SPARSETC_VALUE_F16: launch_convert<V, SPARSETC_VALUE_F16>(d_src, n, d_dst, overflow, c, context); break;
    case SPARSETC_VALUE_BF16: launch_convert<V, SPARSETC_VALUE_BF16>(d_src, n, d_dst, overflow, c, context); break;
    case SPARSETC_VALUE_F32: launch_convert<V, SPARSETC_VALUE_F32>(d_src, n, d_dst, overflow, c, context); break;
    default: launch_convert<V, SPARSETC_VALUE_F64>(d_src, n, d_dst, overflow, c, context); break;
  }
  const RangeCounter host = read_back(c, context.stream);
  result.out_of_range = int64_t(host.count);
  result.first_out_of_range = host.count ? int64_t(host.first) : -1;
  return result;
}

template <typename V>
void value_out_of_range_error(const V* d_src, int64_t index, sparsetc_value_type_t type, cudaStream_t stream) {
  V value{};
  copy_device_to_host(&value, d_src + index, sizeof(V), stream);
  fail(SPARSETC_STATUS_VALUE_OUT_OF_RANGE, "value ", format_number(value), " at entry ", index, " does not fit ",
       value_type_name(type), " (largest finite ", gpuconv::max_text(type), ")");
}

template ValueConversion gpu_convert_values<float>(const float*, int64_t, sparsetc_value_type_t, void*,
                                                   const GpuContext&);
template ValueConversion gpu_convert_values<double>(const double*, int64_t, sparsetc_value_type_t, void*,
                                                    const GpuContext&);
template void value_out_of_range_error<float>(const float*, int64_t, sparsetc_value_type_t, cudaStream_t);
template void value_out_of_range_error<double>(const double*, int64_t, sparsetc_value_type_t, cudaStream_t);

}  // namespace sparsetc::detail

#include "harness/timing.hpp"

#include <algorithm>
#include <cmath>

#include "harness/device_kernels.hpp"
#include "harness/checked_calls.hpp"

namespace bench {

Timer::Timer(cudaStream_t stream, size_t l2_bytes, const TimingConfig& config) : stream_(stream), config_(config) {
  if (config_.flush_l2) {
    flush_buffer_ = DeviceBuffer(std::max<size_t>(2 * l2_bytes, size_t(64) << 20));
    BENCH_CUDA(cudaMemset(flush_buffer_.data(), 0x5a, flush_buffer_.size()));
    sink_ = DeviceBuffer(sizeof(int));
  }
}

Timer::~Timer() {
  for (cudaEvent_t e : start_) cudaEventDestroy(e);
  for (cudaEvent_t e : stop_) cudaEventDestroy(e);
}

void Timer::ensure_events(size_t pairs) {
  while (start_.size() < pairs) {
    cudaEvent_t a = nullptr, b = nullptr;
    BENCH_CUDA(cudaEventCreate(&a));
    start_.push_back(a);
    BENCH_CUDA(cudaEventCreate(&b));
    stop_.push_back(b);
  }
}

void Timer::flush() {
  if (config_.flush_l2)
    BENCH_CUDA(launch_l2_flush(flush_buffer_.data(), flush_buffer_.size(), sink_.as<int>(), stream_));
}

TimingStats Timer::measure(const std::function<void()>& body) {
  ensure_events(size_t(std::max(config_.iters, 1)));
  // Warm-up; the last one is timed to size the measurement.
  float estimate_ms = 0;
  for (int w = 0; w < config_.warmup; ++w) {
    flush();
    const bool last = w + 1 == config_.warmup;
    if (last) BENCH_CUDA(cudaEventRecord(start_[0], stream_));
    body();
    if (last) BENCH_CUDA(cudaEventRecord(stop_[0], stream_));
  }
  BENCH_CUDA(cudaStreamSynchronize(stream_));
  if (config_.warmup > 0) BENCH_CUDA(cudaEventElapsedTime(&estimate_ms, start_[0], stop_[0]));

  int runs = config_.iters;
  if (config_.budget_s > 0 && estimate_ms > 0) {
    const double fit = config_.budget_s * 1e3 / double(estimate_ms);
    runs = int(std::clamp<double>(std::floor(fit), config_.min_iters, config_.iters));
  }
  for (int i = 0; i < runs; ++i) {
    flush();
    BENCH_CUDA(cudaEventRecord(start_[size_t(i)], stream_));
    body();
    BENCH_CUDA(cudaEventRecord(stop_[size_t(i)], stream_));
  }
  BENCH_CUDA(cudaStreamSynchronize(stream_));
  std::vector<double> times(static_cast<size_t>(runs));
  for (int i = 0; i < runs; ++i) {
    float ms = 0;
    BENCH_CUDA(cudaEventElapsedTime(&ms, start_[size_t(i)], stop_[size_t(i)]));
    times[size_t(i)] = ms;
  }
  std::sort(times.begin(), times.end());
  TimingStats s;
  s.runs = runs;
  s.min_ms = times.front();
  s.max_ms = times.back();
  const size_t mid = times.size() / 2;
  s.median_ms = times.size() % 2 ? times[mid] : 0.5 * (times[mid - 1] + times[mid]);
  return s;
}

double measure_copy_bandwidth(cudaStream_t stream, size_t bytes) {
  DeviceBuffer src(bytes), dst(bytes);
  BENCH_CUDA(cudaMemsetAsync(src.data(), 1, bytes, stream));
  cudaEvent_t a = nullptr, b = nullptr;
  BENCH_CUDA(cudaEventCreate(&a));
  BENCH_CUDA(cudaEventCreate(&b));
  std::vector<double> times;
  for (int i = 0; i < 7; ++i) {
    BENCH_CUDA(cudaEventRecord(a, stream));
    BENCH_CUDA(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, stream));
    BENCH_CUDA(cudaEventRecord(b, stream));
    BENCH_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    BENCH_CUDA(cudaEventElapsedTime(&ms, a, b));
    if (i >= 2) times.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(times.begin(), times.end());
  return 2.0 * double(bytes) / (times[times.size() / 2] * 1e-3) / 1e9;
}

}  // namespace bench

// Timing: CUDA events around each run on the harness's stream, the median of many runs after
// warm-up, and L2 evicted before every run (warm-up and timed alike) by reading a buffer twice the
// size of L2, so that no run finds its inputs in the cache left by the previous one.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "harness/device_memory.hpp"

namespace bench {

struct TimingConfig {
  int warmup = 3;
  int iters = 20;
  int min_iters = 5;
  double budget_s = 2.0;  // cap on iters x (estimated run time); 0: always `iters`
  bool flush_l2 = true;
};

struct TimingStats {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int runs = 0;
};

class Timer {
 public:
  Timer(cudaStream_t stream, size_t l2_bytes, const TimingConfig& config);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // Runs `body` (which enqueues its work on the stream; it may synchronise or allocate, as an
  // SpGEMM pipeline does) warmup + N times and returns statistics of the N timed runs. Each timed
  // run is bracketed by its own pair of events, recorded after the L2 eviction.
  TimingStats measure(const std::function<void()>& body);

  void flush();  // enqueues the L2 eviction
  size_t flush_bytes() const { return flush_buffer_.size(); }
  const TimingConfig& config() const { return config_; }

 private:
  void ensure_events(size_t pairs);

  cudaStream_t stream_;
  TimingConfig config_;
  DeviceBuffer flush_buffer_, sink_;
  std::vector<cudaEvent_t> start_, stop_;
};

// Device-to-device bandwidth of cudaMemcpyAsync on `bytes` (bytes read + bytes written per second,
// median of 5 copies after 2 warm-ups), in GB/s.
double measure_copy_bandwidth(cudaStream_t stream, size_t bytes);

}  // namespace bench

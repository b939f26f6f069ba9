// Host parallelism of the CPU engine: one OpenMP loop shape used everywhere, so thread counts and
// scheduling are decided in one place.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace sparsetc::detail {

// Threads to use for a request of `requested` (0 = all hardware threads).
inline int resolve_threads(int requested) {
#ifdef _OPENMP
  return requested > 0 ? requested : omp_get_max_threads();
#else
  (void)requested;
  return 1;
#endif
}

// Calls body(begin, end) on disjoint chunks covering [0, n). Chunks are handed out dynamically so
// skewed rows (power-law graphs) balance; bodies must not throw (collect errors instead).
template <typename Body>
void parallel_chunks(int64_t n, int threads, int64_t chunk, Body&& body) {
  if (n <= 0) return;
  if (chunk < 1) chunk = 1;
  const int64_t chunks = (n + chunk - 1) / chunk;
  const int t = resolve_threads(threads);
  if (t <= 1 || chunks == 1) {
    body(int64_t(0), n);
    return;
  }
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(t)
#endif
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * chunk;
    const int64_t end = begin + chunk < n ? begin + chunk : n;
    body(begin, end);
  }
}

// parallel_chunks whose bodies may throw: the first exception is rethrown after the loop (an
// exception must not leave an OpenMP region).
template <typename Body>
void guarded_chunks(int64_t n, int threads, int64_t chunk, Body&& body) {
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex mutex;
  parallel_chunks(n, threads, chunk, [&](int64_t begin, int64_t end) {
    if (failed.load(std::memory_order_relaxed)) return;
    try {
      body(begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!error) error = std::current_exception();
      failed.store(true, std::memory_order_relaxed);
    }
  });
  if (error) std::rethrow_exception(error);
}

// Elements per chunk of the element-wise loops: large enough to amortise scheduling.
inline constexpr int64_t kElementChunk = int64_t(1) << 16;

// Index of the first i in [0, n) with pred(i), or -1. Chunks are searched in parallel, and the
// earliest hit wins, so the answer (the first offender of a validation) never depends on threads.
template <typename Pred>
int64_t first_where(int64_t n, Pred pred) {
  if (n <= 0) return -1;
  std::vector<int64_t> first(size_t((n + kElementChunk - 1) / kElementChunk), -1);
  parallel_chunks(n, 0, kElementChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      if (pred(i)) {
        first[size_t(begin / kElementChunk)] = i;
        return;
      }
  });
  for (int64_t f : first)
    if (f >= 0) return f;
  return -1;
}

}  // namespace sparsetc::detail

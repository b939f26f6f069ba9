#include "harness/runner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <new>
#include <stdexcept>

#include "harness/device_memory.hpp"

namespace bench {
namespace {

size_t free_device_memory() {
  size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return free;
}

double since_ms(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void fill_metrics(Result& r, double copy_gbps) {
  if (!(r.median_ms > 0)) return;
  const double seconds = r.median_ms * 1e-3;
  if (r.flops > 0) r.gflops = r.flops / seconds / 1e9;
  if (r.floor_bytes > 0) {
    r.gbps = r.floor_bytes / seconds / 1e9;
    if (copy_gbps > 0) r.bw_fraction = r.gbps / copy_gbps;
  }
}

}  // namespace

void execute_variant(Context& ctx, Variant& v, Result& r) {
  r.status = Status::ok;
  const size_t mark = MemoryTracker::mark();
  const size_t free_before = free_device_memory();
  size_t free_low = free_before;
  v.mark_library_memory();
  try {
    const auto t0 = std::chrono::steady_clock::now();
    v.setup();
    BENCH_CUDA(cudaStreamSynchronize(ctx.stream));
    r.setup_ms = since_ms(t0);
    free_low = std::min(free_low, free_device_memory());

    v.poison();
    v.run();
    BENCH_CUDA(cudaStreamSynchronize(ctx.stream));
    free_low = std::min(free_low, free_device_memory());
    const CheckResult first = v.check();
    r.rel_err = first.rel_err;
    if (!first.ok) {
      r.status = Status::wrong;
      r.reason = first.message;
    } else {
      const TimingStats t = ctx.timer.measure([&] { v.run(); });
      const CheckResult again = v.check();
      if (!again.ok) {
        r.status = Status::wrong;
        r.reason = "after the timed runs: " + again.message;
      } else {
        r.median_ms = t.median_ms;
        r.min_ms = t.min_ms;
        r.max_ms = t.max_ms;
        r.runs = t.runs;
        fill_metrics(r, ctx.copy_gbps);
      }
    }
  } catch (const VariantError& e) {
    r.status = e.status();
    r.reason = e.what();
    ensure_device_usable();
  } catch (const std::bad_alloc&) {
    r.status = Status::failed;
    r.reason = "host out of memory";
    ensure_device_usable();
  } catch (const FatalError&) {
    throw;
  } catch (const std::exception& e) {  // a harness bug: recorded, not fatal
    r.status = Status::failed;
    r.reason = std::string("harness exception: ") + e.what();
    ensure_device_usable();
  }
  // Peak of the variant's own allocations; where a library allocates for itself (sparsetc,
  // cuSPARSE internals) the drop in free device memory at the sample points is a lower bound.
  if (r.note.empty()) r.note = v.note();
  const double tracked = double(MemoryTracker::peak_since(mark));
  const double observed = free_before > free_low ? double(free_before - free_low) : 0.0;
  const double library = v.library_memory_bytes();
  r.mem_bytes = std::max(tracked, observed);
  if (std::isfinite(library)) r.mem_bytes = std::max(r.mem_bytes, library);
  ctx.results.push_back(r);
}

int64_t sparsetc_memory_mark(sparsetc_handle_t h) {
  sparsetc_memory_stats_t stats = {};
  stats.struct_size = sizeof stats;
  if (sparsetc_reset_peak_memory(h) != SPARSETC_STATUS_SUCCESS ||
      sparsetc_get_memory_stats(h, &stats) != SPARSETC_STATUS_SUCCESS)
    return -1;
  return stats.current_bytes;
}

double sparsetc_memory_peak(sparsetc_handle_t h, int64_t mark) {
  sparsetc_memory_stats_t stats = {};
  stats.struct_size = sizeof stats;
  if (mark < 0 || sparsetc_get_memory_stats(h, &stats) != SPARSETC_STATUS_SUCCESS) return NAN;
  return double(std::max<int64_t>(0, stats.peak_bytes - mark));
}

void record_not_run(Context& ctx, Result r, Status status, const std::string& reason) {
  r.status = status;
  r.reason = reason;
  ctx.results.push_back(r);
}

void report_case(const std::vector<Result>& results, size_t first, const CaseClock& clock) {
  if (first >= results.size()) return;
  const Result& c = results[first];
  int ok = 0, wrong = 0, other = 0;
  const Result* best = nullptr;
  for (size_t i = first; i < results.size(); ++i) {
    const Result& r = results[i];
    if (r.status == Status::ok) {
      ++ok;
      if (!best || r.median_ms < best->median_ms) best = &r;
    } else if (r.status == Status::wrong) {
      ++wrong;
    } else {
      ++other;
    }
  }
  std::fprintf(stderr, "  %-28s %-9s N=%-4lld %3d ok %2d wrong %3d other  best %-24s %10.4f ms  (%.1f s)\n",
               c.matrix.c_str(), c.op.c_str(), (long long)c.n, ok, wrong, other, best ? best->variant.c_str() : "-",
               best ? best->median_ms : 0.0, clock.elapsed_s());
}

}  // namespace bench

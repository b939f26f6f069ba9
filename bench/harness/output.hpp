// Output: the per-case summary table on stdout, the list of what failed, and every variant's
// numbers as CSV and JSON.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "harness/environment.hpp"
#include "harness/options.hpp"
#include "harness/results.hpp"
#include "harness/timing.hpp"

namespace bench {

// Fills Result::speedup: per case (matrix, op, n), the best checked vendor median over each
// checked result's median.
void compute_speedups(std::vector<Result>& results);

// One line per case: the fastest checked vendor variant, sparsetc's fastest, and their ratio.
void print_summary(std::FILE* out, const std::vector<Result>& results);
// Wrong results one by one; failed, unsupported and skipped variants grouped by variant.
void print_problems(std::FILE* out, const std::vector<Result>& results);

bool write_csv(const std::string& path, const std::vector<Result>& results, double copy_gbps, std::string& error);
bool write_json(const std::string& path, const DeviceInfo& device, const Options& options,
                const TimingConfig& timing, size_t flush_bytes, const std::vector<Result>& results,
                std::string& error);

}  // namespace bench

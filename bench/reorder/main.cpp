// sparsetc_reorder_bench: timings of the fast 1-SA on the targets, the recovery experiment
// of the 1-SA paper (Sec. 4.3, Fig. 3 and 5), block-count reductions on real matrices, and the
// speed-up over the exhaustive scan. Links the engine directly (internal counters are printed).
//
//   sparsetc_reorder_bench [targets] [recovery] [real] [oracle] [--threads T] [--seed S]
//                          [--gen SPEC ...] [--tau X] [--width W]
// With no section named, all run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "formats/convert.hpp"
#include "gen/generators.hpp"
#include "io/matrix_market.hpp"
#include "reorder/reorder.hpp"

using namespace sparsetc::detail;
namespace ro = sparsetc::detail::reorder;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

ro::Pattern pattern_of(const CsrMatrix<double>& m) { return {m.rows, m.cols, m.row_ptr.data(), m.col_idx.data()}; }

struct Args {
  std::set<std::string> sections;
  int threads = 0;
  uint64_t seed = 12345;
  std::vector<std::string> specs;
  double tau = 0.5;
  int64_t width = 8;
  int repeat = 1;  // runs per measurement; the fastest is reported (the machine is shared)
  std::string matrix_dir = "../shared/matrices";
};

void time_one(const std::string& name, const CsrMatrix<double>& m, const Args& args) {
  ro::Options o;
  o.tau = args.tau;
  o.block_width = args.width;
  o.threads = args.threads;
  const ro::Pattern p = pattern_of(m);
  ro::Stats s;
  ro::Blocking b;
  double total = 1e300;
  for (int r = 0; r < std::max(1, args.repeat); ++r) {
    ro::Stats run;
    const auto t = Clock::now();
    b = ro::one_sa(p, o, &run);
    const double took = since(t);
    if (took < total) total = took, s = run;
  }
  const ro::Quality id = ro::measure(p, nullptr, {}, 16, args.width, args.threads);
  const ro::Quality re = ro::measure(p, b.permutation.data(), b.group_ptr, 16, args.width, args.threads);
  std::printf("%-22s rows %8lld nnz %9lld | 1-SA %.3f s (quotient %.3f, compress %.3f, index %.3f, scan %.3f) | "
              "classes %lld groups %lld mean height %.2f | candidates %lld list reads %lld | kept %lld/%lld in %lld "
              "batches | 16x%lld blocks %lld -> %lld (%.2fx), std %.1f -> %.1f\n",
              name.c_str(), (long long)m.rows, (long long)m.nnz(), total, s.seconds_quotient, s.seconds_compress,
              s.seconds_index, s.seconds_scan, (long long)s.classes, (long long)b.groups(),
              double(m.rows) / double(std::max<int64_t>(1, b.groups())), (long long)s.candidates,
              (long long)s.counter_updates, (long long)s.committed, (long long)s.speculated, (long long)s.batches,
              (long long)args.width, (long long)id.blocks, (long long)re.blocks,
              re.blocks ? double(id.blocks) / double(re.blocks) : 0.0, id.blocks_per_block_row_std,
              re.blocks_per_block_row_std);
  std::fflush(stdout);
}

void targets(const Args& args) {
  std::printf("== targets (tau %.2f, block width %lld, %d threads requested)\n", args.tau, (long long)args.width,
              args.threads);
  std::vector<std::string> specs = args.specs;
  if (specs.empty())
    specs = {"uniform:66000:150", "band:66000:75", "blocks:66000:64:0.02:0.12", "poisson2d5:1000", "rmat:20:8"};
  for (const std::string& spec : specs) {
    const auto t = Clock::now();
    const CsrMatrix<double> m = generate(spec, args.seed);
    std::printf("   (generated %s in %.2f s)\n", spec.c_str(), since(t));
    time_one(spec, m, args);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--threads") args.threads = std::atoi(value().c_str());
    else if (a == "--seed") args.seed = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "--gen") args.specs.push_back(value());
    else if (a == "--tau") args.tau = std::atof(value().c_str());
    else if (a == "--width") args.width = std::atoll(value().c_str());
    else if (a == "--matrix-dir") args.matrix_dir = value();
    else if (a == "--repeat") args.repeat = std::atoi(value().c_str());
    else args.sections.insert(a);
  }
  auto want = [&](const char* s) { return args.sections.empty() || args.sections.count(s); };
  if (want("targets")) targets(args);
  return 0;
}

// Method dispatch and the AUTO choice.
#include "core/error.hpp"
#include "core/logging.hpp"
#include "reorder/reorder.hpp"

namespace sparsetc::detail::reorder {

Blocking run(const Pattern& a, Method method, const Options& options, Stats* stats) {
  switch (method) {
    case Method::identity:
      check_options(options);
      return identity(a.rows, options.block_height);
    case Method::one_sa:
      return one_sa(a, options, stats);
    case Method::sa:
      return sa(a, options, stats);
  }
  fail(SPARSETC_STATUS_INVALID_VALUE, "unknown reordering method");
}

AutoChoice choose(const Pattern& a, const Options& options, double min_reduction, Stats* stats) {
  require(min_reduction >= 0 && min_reduction < 1, SPARSETC_STATUS_INVALID_VALUE,
          "auto_min_reduction must be in [0, 1), got ", min_reduction);
  check_options(options);
  AutoChoice choice;
  const int64_t h = options.block_height, w = options.block_width;
  choice.identity_quality = measure(a, nullptr, {}, h, w, options.threads);
  const Quality& id = choice.identity_quality;
  std::vector<Options> variants{options};
  if (options.max_group_height == 0 && !options.pad_groups && h > 1) {
    Options aligned = options;
    aligned.max_group_height = h;
    aligned.pad_groups = true;
    variants.push_back(aligned);
  }
  int best = -1;
  for (size_t k = 0; k < variants.size(); ++k) {
    Stats run;
    Blocking b = one_sa(a, variants[k], &run);
    if (stats) {
      if (k == 0) *stats = run;
      else stats->seconds_total += run.seconds_total;
    }
    const Quality q = measure(a, b.permutation.data(), b.group_ptr, h, w, options.threads);
    choice.candidate_quality.push_back(q);
    const bool fewer = double(q.blocks) < (1.0 - min_reduction) * double(id.blocks);
    const bool balanced = q.blocks_per_block_row_std <= (1.0 + kAutoStdTolerance) * id.blocks_per_block_row_std;
    if (fewer && balanced && (best < 0 || q.blocks < choice.candidate_quality[size_t(best)].blocks)) {
      best = int(k);
      choice.blocking = std::move(b);
    }
  }
  if (best >= 0) {
    choice.method = Method::one_sa;
    choice.aligned = best == 1;
  } else {
    choice.blocking = identity(a.rows, h);
  }
  for (size_t k = 0; k < variants.size(); ++k)
    SPARSETC_LOG(info, "reorder auto: ", k == 0 ? "1-SA" : "1-SA capped and padded to ", k == 0 ? "" : str(h), ": ", h,
                 "x", w, " blocks ", id.blocks, " -> ", choice.candidate_quality[k].blocks,
                 ", blocks per block row std ", id.blocks_per_block_row_std, " -> ",
                 choice.candidate_quality[k].blocks_per_block_row_std);
  SPARSETC_LOG(info, "reorder auto: keeping ",
               best < 0 ? "the identity" : choice.aligned ? "1-SA capped and padded" : "1-SA");
  return choice;
}

}  // namespace sparsetc::detail::reorder

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
  AutoChoice choice;
  Blocking reordered = one_sa(a, options, stats);
  choice.identity_quality = measure(a, nullptr, {}, options.block_height, options.block_width, options.threads);
  choice.one_sa_quality = measure(a, reordered.permutation.data(), reordered.group_ptr, options.block_height,
                                  options.block_width, options.threads);
  const Quality& id = choice.identity_quality;
  const Quality& re = choice.one_sa_quality;
  // Fewer blocks by more than min_reduction, and block rows no less balanced.
  const bool fewer = double(re.blocks) < (1.0 - min_reduction) * double(id.blocks);
  const bool balanced = re.blocks_per_block_row_std <= id.blocks_per_block_row_std;
  if (fewer && balanced) {
    choice.method = Method::one_sa;
    choice.blocking = std::move(reordered);
  } else {
    choice.method = Method::identity;
    choice.blocking = identity(a.rows, options.block_height);
  }
  SPARSETC_LOG(info, "reorder auto: ", options.block_height, "x", options.block_width, " blocks ", id.blocks, " -> ",
               re.blocks, ", blocks per block row std ", id.blocks_per_block_row_std, " -> ", re.blocks_per_block_row_std,
               ": keeping ", choice.method == Method::one_sa ? "1-SA" : "the identity");
  return choice;
}

}  // namespace sparsetc::detail::reorder

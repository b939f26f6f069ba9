#include "gpu/spmm/bcsr_tc/tc_loop_rule.hpp"

#include <algorithm>
#include <functional>
#include <queue>

namespace sparsetc::detail::tc {

double loop_spread_excess(const std::vector<int64_t>& item_entries, int64_t tiles, int64_t ctas) {
  if (item_entries.empty() || tiles <= 0 || ctas <= 0) return 1.0;
  std::vector<int64_t> fixed(static_cast<size_t>(ctas), 0);
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<int64_t>> greedy;
  for (int64_t c = 0; c < ctas; ++c) greedy.push(0);
  int64_t work = 0;
  for (const int64_t entries : item_entries)
    for (int64_t t = 0; t < tiles; ++t, ++work) {
      const int64_t cost = entries + kLoopItemOverhead;
      fixed[static_cast<size_t>(work % ctas)] += cost;
      const int64_t least = greedy.top();
      greedy.pop();
      greedy.push(least + cost);
    }
  int64_t greedy_max = 0;
  while (!greedy.empty()) {
    greedy_max = std::max(greedy_max, greedy.top());
    greedy.pop();
  }
  return double(*std::max_element(fixed.begin(), fixed.end())) / double(greedy_max);
}

bool loop_pays(const std::vector<int64_t>& item_entries, int64_t tiles, int64_t ctas) {
  const double works = double(item_entries.size()) * double(tiles);
  return ctas > 0 && works >= kLoopMinWaves * double(ctas) &&
         loop_spread_excess(item_entries, tiles, ctas) <= kLoopMaxExcess;
}

}  // namespace sparsetc::detail::tc

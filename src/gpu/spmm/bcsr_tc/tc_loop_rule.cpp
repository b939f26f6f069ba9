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
  if (ctas <= 0 || tiles <= 0 || works < kLoopMinWaves * double(ctas)) return false;
  // The greedy spread's busiest CTA lies between max(total / ctas, longest) and total / ctas +
  // longest (list scheduling); where the fixed spread's is clear of that range on either side, no
  // simulation is needed (it would take 0.1 s for a matrix of 78k panels at nine tile counts).
  // An item's works go to `tiles` consecutive CTAs (wrapping): a difference array takes each item in
  // constant time.
  std::vector<int64_t> step(static_cast<size_t>(ctas) + 1, 0);
  int64_t cta = 0, every = 0;  // cta: the next work's; every: what all CTAs got from full wraps
  int64_t longest = 0;
  double total = 0;
  for (const int64_t entries : item_entries) {
    const int64_t cost = entries + kLoopItemOverhead;
    longest = std::max(longest, cost);
    total += double(cost) * double(tiles);
    every += cost * (tiles / ctas);
    const int64_t end = cta + tiles % ctas;
    step[size_t(cta)] += cost;
    if (end <= ctas) {
      step[size_t(end)] -= cost;
    } else {
      step[size_t(ctas)] -= cost;
      step[0] += cost;
      step[size_t(end - ctas)] -= cost;
    }
    cta = end % ctas;
  }
  int64_t running = 0, busiest_work = 0;
  for (int64_t c = 0; c < ctas; ++c) busiest_work = std::max(busiest_work, running += step[size_t(c)]);
  const double busiest = double(busiest_work + every);
  const double mean = total / double(ctas);
  if (busiest <= kLoopMaxExcess * std::max(mean, double(longest))) return true;
  if (busiest > kLoopMaxExcess * (mean + double(longest))) return false;
  return loop_spread_excess(item_entries, tiles, ctas) <= kLoopMaxExcess;
}

}  // namespace sparsetc::detail::tc

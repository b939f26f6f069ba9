#include "gpu/spmm/bcsr_tc/tc_loop_rule.hpp"

#include <algorithm>
#include <functional>
#include <queue>

namespace sparsetc::detail::tc {
namespace {

// The fixed spread: work w (item w / tiles) on CTA w % ctas. An item's works go to `tiles`
// consecutive CTAs (wrapping), so a difference array takes each item in constant time.
struct FixedSpread {
  double busiest = 0, mean = 0;  // work of the busiest CTA, and of the mean one
  int64_t longest = 0;           // the costliest work
};

FixedSpread fixed_spread(const std::vector<int64_t>& item_entries, int64_t tiles, int64_t ctas) {
  std::vector<int64_t> step(static_cast<size_t>(ctas) + 1, 0);
  int64_t cta = 0, every = 0;  // cta: the next work's; every: what all CTAs got from full wraps
  FixedSpread f;
  double total = 0;
  for (const int64_t entries : item_entries) {
    const int64_t cost = entries + kLoopItemOverhead;
    f.longest = std::max(f.longest, cost);
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
  int64_t running = 0, busiest = 0;
  for (int64_t c = 0; c < ctas; ++c) busiest = std::max(busiest, running += step[size_t(c)]);
  f.busiest = double(busiest + every);
  f.mean = total / double(ctas);
  return f;
}

// The greedy spread's busiest CTA: each work, in order, to the CTA with the least so far.
double greedy_busiest(const std::vector<int64_t>& item_entries, int64_t tiles, int64_t ctas) {
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<int64_t>> greedy;
  for (int64_t c = 0; c < ctas; ++c) greedy.push(0);
  for (const int64_t entries : item_entries)
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t least = greedy.top();
      greedy.pop();
      greedy.push(least + entries + kLoopItemOverhead);
    }
  int64_t busiest = 0;
  for (; !greedy.empty(); greedy.pop()) busiest = std::max(busiest, greedy.top());
  return double(busiest);
}

}  // namespace

double loop_spread_excess(const std::vector<int64_t>& item_entries, int64_t tiles, int64_t ctas) {
  if (item_entries.empty() || tiles <= 0 || ctas <= 0) return 1.0;
  return fixed_spread(item_entries, tiles, ctas).busiest / greedy_busiest(item_entries, tiles, ctas);
}

bool loop_pays(const std::vector<int64_t>& item_entries, int64_t tiles, int64_t ctas) {
  const double works = double(item_entries.size()) * double(tiles);
  if (ctas <= 0 || tiles <= 0 || works < kLoopMinWaves * double(ctas)) return false;
  // The greedy spread's busiest CTA lies between max(mean, longest) and mean + longest (list
  // scheduling); where the fixed spread's is clear of that range on either side, no simulation is
  // needed (it would take 0.1 s for a matrix of 78k panels at nine tile counts).
  const FixedSpread f = fixed_spread(item_entries, tiles, ctas);
  if (f.busiest <= kLoopMaxExcess * std::max(f.mean, double(f.longest))) return true;
  if (f.busiest > kLoopMaxExcess * (f.mean + double(f.longest))) return false;
  return f.busiest <= kLoopMaxExcess * greedy_busiest(item_entries, tiles, ctas);
}

}  // namespace sparsetc::detail::tc

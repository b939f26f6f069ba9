// The binned SpGEMM pipeline: stage 1 and the panel plan at construction, then per panel the
// binning, the per-bin kernels, the merge rounds (checkpoint, grow, relaunch) and the arrangement;
// finally the pieces of all panels in one CSR.
#include "gpu/spgemm/binned/binned_spgemm.hpp"

#include <algorithm>
#include <utility>

#include "core/error.hpp"
#include "core/logging.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/side_stream.hpp"
#include "gpu/spgemm/binned/kernels.hpp"

namespace sparsetc::detail {
namespace {

using binned::kBins;
using binned::kFirstEscBin;
using binned::kMergeBin;

template <typename T>
DeviceBuffer buffer_of(int64_t n, const GpuContext& context) {
  return DeviceBuffer(size_t(n > 0 ? n : 0) * sizeof(T), context);
}

int64_t read_int64(const int64_t* device, cudaStream_t stream) {
  int64_t host = 0;
  copy_device_to_host(&host, device, sizeof host, stream);
  return host;
}

// The budget when the caller gives none: C~ up to half the bytes of all products (at least 512 MB),
// and never more than half of the device memory free now. C~ holds the upper bound of the short
// rows, so on products-heavy inputs (3D stencils) a second panel keeps the peak near the output's
// size instead of the products'.
size_t automatic_budget(int64_t products, size_t entry_bytes) {
  size_t free_bytes = 0, total_bytes = 0;
  SPARSETC_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const size_t half_products = size_t(products) / 2 * entry_bytes;
  return std::min(free_bytes / 2, std::max<size_t>(size_t(512) << 20, half_products));
}

// Without a budget from the caller, a C~ of at most this many bytes is one panel without asking the
// device for its free memory (cudaMemGetInfo: 5.7 us on an H200, a twentieth of a small
// product's time; panels would save little memory at this size).
constexpr int64_t kOnePanelBytes = int64_t(64) << 20;

// Events between the stages of a panel when the caller asks for stage times.
class StageClock {
 public:
  StageClock(bool on, cudaStream_t stream) : on_(on), stream_(stream) {
    if (!on_) return;
    for (cudaEvent_t& e : events_) SPARSETC_CUDA_CHECK(cudaEventCreate(&e));
  }
  ~StageClock() {
    if (on_)
      for (cudaEvent_t e : events_) cudaEventDestroy(e);
  }
  StageClock(const StageClock&) = delete;
  StageClock& operator=(const StageClock&) = delete;
  void mark(int point) {
    if (on_) SPARSETC_CUDA_CHECK(cudaEventRecord(events_[size_t(point)], stream_));
  }
  // Adds the panel's stage times (waits for the last event).
  void add_to(std::array<double, kStages>& ms) {
    if (!on_) return;
    SPARSETC_CUDA_CHECK(cudaEventSynchronize(events_[kStages]));
    for (int s = 0; s < kStages; ++s) {
      float t = 0;
      SPARSETC_CUDA_CHECK(cudaEventElapsedTime(&t, events_[size_t(s)], events_[size_t(s + 1)]));
      ms[size_t(s)] += double(t);
    }
  }

 private:
  bool on_;
  cudaStream_t stream_;
  std::array<cudaEvent_t, kStages + 1> events_{};
};

}  // namespace

template <typename V>
BinnedSpgemm<V>::BinnedSpgemm(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b,
                              const BinnedSpgemmOptions& options, const GpuContext& context,
                              const binned::PendingRowOrder* a_order, const binned::PendingRowOrder* b_order)
    : a_(a), b_(b), options_(options), context_(context) {
  require(a.cols == b.rows, SPARSETC_STATUS_DIMENSION_MISMATCH, "binned SpGEMM: A is ", a.rows, "x", a.cols,
          " but B is ", b.rows, "x", b.cols);
  require(a.rows <= 2147483647, SPARSETC_STATUS_SIZE_OVERFLOW, "binned SpGEMM: C has ", a.rows,
          " rows; at most 2^31 - 1 are supported");
  options_.merge_initial_capacity =
      std::clamp<int64_t>(options_.merge_initial_capacity, 1, binned::kMergeInitialCapacity);
  if (options_.block_dense && options_.b_rows_unique)
    dense_shape_ = binned::block_dense_shape<V>(b.cols, options_.block_dense_bytes, options_.block_dense_passes);
  dense_shape_.stream_min_entries = options_.block_dense_stream_min_entries;
  dense_shape_.stream_long_row_of_b = options_.block_dense_stream_long_row_of_b;
  stats_.block_dense_passes = dense_shape_.passes;
  const int64_t m = a.rows;
  bound_ = buffer_of<int64_t>(m, context);
  cap_scan_ = buffer_of<int64_t>(m + 1, context);
  bin_ = buffer_of<uint8_t>(m, context);
  count_ = buffer_of<int64_t>(m, context);
  // Stage 1, then stage 2 for all rows, whose read back brings stage 1's totals along: one
  // synchronisation for both. The bins are kept for multiply when one panel takes all rows (the
  // bounds never change), else each panel bins its rows again.
  const DeviceBuffer totals = binned::upper_bounds(a, b, options_.merge_initial_capacity, bound_.as<int64_t>(),
                                                   cap_scan_.as<int64_t>(), context);
  binned::ReadAlong along;
  along.at[0] = totals.as<const int64_t>();
  along.at[1] = cap_scan_.as<const int64_t>() + m;
  const binned::PendingRowOrder* pending[2] = {a_order, b_order};
  for (int o = 0; o < 2; ++o)
    if (pending[o] != nullptr && pending[o]->counters.size() > 0)
      for (int k = 0; k < binned::kRowOrderCounters; ++k)
        along.at[2 + o * binned::kRowOrderCounters + k] = pending[o]->counters.as<const int64_t>() + k;
  binned::BinnedRows all_rows =
      binned::bin_rows(bound_.as<const int64_t>(), a.row_ptr, 0, m, bin_.as<uint8_t>(), count_.as<int64_t>(), context, along);
  stats_.products = all_rows.read_along[0];
  stats_.temporary_entries = all_rows.read_along[1];
  for (int o = 0; o < 2; ++o) {
    if (pending[o] == nullptr || pending[o]->counters.size() == 0) continue;
    int64_t counters[binned::kRowOrderCounters];
    std::copy_n(all_rows.read_along.begin() + 2 + o * binned::kRowOrderCounters, binned::kRowOrderCounters, counters);
    orders_[size_t(o)] = binned::row_order_of(counters);
  }
  if (!usable()) return;  // the caller settles the operands and makes another

  // Panels: C~ of each at most the budget (one row's room over at worst, hence the margin).
  const int64_t entry_bytes = int64_t(sizeof(int32_t) + sizeof(V));
  int64_t panels = 1;
  if (options_.memory_budget > 0 || stats_.temporary_entries * entry_bytes > kOnePanelBytes) {
    const size_t budget =
        options_.memory_budget > 0 ? options_.memory_budget : automatic_budget(stats_.products, size_t(entry_bytes));
    const int64_t per_panel =
        std::max<int64_t>(int64_t(budget / size_t(entry_bytes)) - binned::kMaxRowCapacity, binned::kMaxRowCapacity);
    panels = std::max<int64_t>(
        1, std::min<int64_t>((stats_.temporary_entries + per_panel - 1) / per_panel, std::max<int64_t>(m, 1)));
  }
  if (panels == 1) {  // no search needed, no read back
    panel_rows_ = {0, m};
    panel_caps_ = {0, stats_.temporary_entries};
    all_rows_ = std::move(all_rows);
  } else {
    binned::PanelBounds bounds = binned::panel_bounds(cap_scan_.as<const int64_t>(), m, panels, context);
    panel_rows_ = std::move(bounds.rows);
    panel_caps_ = std::move(bounds.room_before);
  }
  SPARSETC_LOG(debug, "binned SpGEMM: ", m, " rows, ", stats_.products, " products, C~ ", stats_.temporary_entries,
               " entries in ", panels, " panel(s)");
}

template <typename V>
size_t BinnedSpgemm<V>::memory_estimate() const {
  int64_t largest = 0;
  for (size_t p = 0; p + 1 < panel_caps_.size(); ++p) largest = std::max(largest, panel_caps_[p + 1] - panel_caps_[p]);
  const size_t rows = size_t(a_.rows);
  return size_t(largest) * (sizeof(int32_t) + sizeof(V)) + rows * (2 * sizeof(int64_t) + 1 + 2 * sizeof(int32_t)) +
         bound_.size() + cap_scan_.size();
}

template <typename V>
DeviceCsr<V> BinnedSpgemm<V>::multiply() {
  require(usable(), SPARSETC_STATUS_INTERNAL_ERROR, "binned SpGEMM: multiply on operands whose order check failed");
  const GpuContext& ctx = context_;
  const int64_t m = a_.rows;
  DeviceBuffer& count = count_;
  DeviceBuffer& bin = bin_;
  stats_.panels = 0;
  stats_.bin_rows.fill(0);
  stats_.stage_ms.fill(0);
  stats_.esc_paths.fill(0);

  struct Piece {
    int64_t nnz = 0;
    DeviceBuffer cols, vals, row_ptr;
  };
  std::vector<Piece> pieces;
  for (size_t p = 0; p + 1 < panel_rows_.size(); ++p) {
    const int64_t r0 = panel_rows_[p], r1 = panel_rows_[p + 1];
    if (r1 == r0) continue;
    ++stats_.panels;
    const int64_t room = panel_caps_[p + 1] - panel_caps_[p];
    DeviceBuffer t_cols = buffer_of<int32_t>(room, ctx), t_vals = buffer_of<V>(room, ctx);
    const binned::Temporary t{r0, cap_scan_.as<const int64_t>(), bound_.as<const int64_t>(), t_cols.as<int32_t>(),
                              t_vals.data()};
    StageClock clock(options_.time_stages, ctx.stream);
    clock.mark(kStageBinning);

    // Stage 2 (done by the constructor when one panel takes all rows).
    binned::BinnedRows panel_rows;
    if (!all_rows_)
      panel_rows = binned::bin_rows(bound_.as<const int64_t>(), a_.row_ptr, r0, r1, bin.as<uint8_t>(),
                                    count.as<int64_t>(), ctx);
    const binned::BinnedRows& binned_rows = all_rows_ ? *all_rows_ : panel_rows;
    const int32_t* rows = binned_rows.rows.as<const int32_t>();
    auto rows_of = [&](int key) { return binned_rows.end(key) - binned_rows.begin(key); };
    auto rows_of_bin = [&](int bin) { return binned_rows.bin_end(bin) - binned_rows.bin_begin(bin); };
    for (int k : {0, 1, 33, 34, 35, 36, 37}) stats_.bin_rows[size_t(k)] += rows_of_bin(k);
    for (int c = 0; c < binned::kHeapClasses; ++c)
      for (int u = 2; u <= binned::kHeapMaxBound; ++u)
        stats_.bin_rows[size_t(u)] += rows_of(binned::kHeapKeyBase + c * 31 + (u - 2));

    // The merge rows (bin 37): their first round goes first, on a side stream, when it may overlap
    // the other bins (options.overlap_merge_rows): a few long rows keep a few SMs busy for the whole
    // stage while the other bins' kernels, one after the other, leave most of the GPU idle
    // (wiki-Vote: 80 merge rows on 80 SMs for 0.2 ms). Their buffers come from the main stream
    // before the fork, a growth round's arenas from the side stream, and the barrier (declared
    // after them all) orders both streams before any of them is freed. With stage times, in turn.
    const int64_t merge_rows = rows_of_bin(kMergeBin);
    const bool overlap = merge_rows > 0 && options_.overlap_merge_rows && !options_.time_stages;
    DeviceBuffer states = buffer_of<binned::MergeRow<V>>(merge_rows, ctx);
    DeviceBuffer list = buffer_of<int32_t>(merge_rows, ctx), overflow = buffer_of<int32_t>(merge_rows, ctx);
    DeviceBuffer overflow_count = buffer_of<int32_t>(merge_rows > 0 ? 1 : 0, ctx);
    binned::WindowScratch<V> windows;
    if (merge_rows > 0 && options_.global_windows && options_.b_rows_unique && !dense_shape_)
      windows = binned::make_window_scratch<V>(merge_rows, b_.cols, ctx);
    std::vector<binned::Arena> arenas;
    const SideStreamBarrier barrier(overlap ? &side_ : nullptr, ctx.stream);
    const GpuContext merge_ctx = overlap ? GpuContext{side_.stream(), ctx.allocator} : ctx;
    auto* state = states.as<binned::MergeRow<V>>();
    int64_t pending = merge_rows;
    auto merge_round = [&] {  // the pending rows, each until done or until its next batch does not fit
      SPARSETC_CUDA_CHECK(cudaMemsetAsync(overflow_count.data(), 0, sizeof(int32_t), merge_ctx.stream));
      if (dense_shape_)
        binned::block_dense_round(a_, b_, state, list.as<const int32_t>(), pending, overflow.as<int32_t>(),
                                  overflow_count.as<int32_t>(), count.as<int64_t>(), dense_shape_, merge_ctx);
      else
        binned::window_round(a_, b_, state, list.as<const int32_t>(), pending, overflow.as<int32_t>(),
                             overflow_count.as<int32_t>(), count.as<int64_t>(), windows, merge_ctx);
      binned::merge_round(a_, b_, state, list.as<const int32_t>(), pending, overflow.as<int32_t>(),
                          overflow_count.as<int32_t>(), count.as<int64_t>(), options_.b_rows_unique, merge_ctx);
    };
    auto start_merge = [&] {
      if (merge_rows == 0) return;
      binned::init_merge_rows(a_, bound_.as<const int64_t>(), rows, binned_rows.bin_begin(kMergeBin),
                              binned_rows.bin_end(kMergeBin), t, state, list.as<int32_t>(), merge_ctx);
      merge_round();
    };
    auto finish_merge = [&] {  // checkpoint, grow, relaunch until no row overflows
      if (merge_rows == 0) return;
      for (;;) {
        int32_t overflowed = 0;
        copy_device_to_host(&overflowed, overflow_count.data(), sizeof overflowed, merge_ctx.stream);
        if (overflowed == 0) break;
        ++stats_.grow_rounds;
        stats_.grown_rows += overflowed;
        arenas.push_back(binned::grow_merge_rows(state, overflow.as<const int32_t>(), overflowed, merge_ctx));
        std::swap(list, overflow);
        pending = overflowed;
        merge_round();
      }
    };
    if (overlap) {
      side_.fork(ctx.stream);
      start_merge();
    }

    // Stage 3: heap, ESC, merge. Rows of u <= 32 by heap class and u range (u <= 8, 16, 32): a
    // range that needs few warps as groups (8 or 16 lanes per row in registers, a warp per row
    // above 16), whose lanes issue a row's loads together; a range that fills the GPU many times
    // over in the register sort, a thread per row (fewer instructions per row), or in the paper's
    // heap where B is too wide for the sort's keys: options.
    clock.mark(kStageHeap);
    const bool sortable = b_.cols <= binned::kRegisterSortMaxColumns;  // B's columns fit the 32-bit keys
    for (int c = 0; c < binned::kHeapClasses; ++c) {
      const int first_key = binned::kHeapKeyBase + c * 31;  // + u - 2: rows ordered by u within a class
      for (const int lanes : {8, 16, 32}) {  // u in (lanes / 2, lanes], from u = 2
        const int u_first = lanes == 8 ? 2 : lanes / 2 + 1;
        const int64_t begin = binned_rows.begin(first_key + u_first - 2), end = binned_rows.end(first_key + lanes - 2);
        if (end == begin) continue;
        const bool sorted = options_.heap_rows_sorted && sortable;
        const bool groups = options_.short_rows_in_registers || options_.short_rows_in_warps ||
                            (!sorted && binned::heap_capacity(c) > options_.heap_largest_capacity) ||
                            (end - begin) * lanes <= options_.short_group_warps * 32;
        if (!groups && sorted) {
          binned::register_sort_rows(a_, b_, rows, begin, end, lanes, t, count.as<int64_t>(), ctx);
        } else if (!groups) {
          binned::heap_rows(a_, b_, rows, begin, end, binned::heap_capacity(c), options_.heap_queue_in_registers, t,
                            count.as<int64_t>(), ctx);
        } else if (options_.short_rows_in_warps || (lanes == 32 && !options_.short_rows_in_registers)) {
          binned::middle_rows(a_, b_, rows, begin, end, t, count.as<int64_t>(), ctx);
        } else {
          binned::short_rows(a_, b_, rows, begin, end, lanes, t, count.as<int64_t>(), ctx);
        }
      }
    }
    clock.mark(kStageEsc);
    // Bins 34..36: the accumulators first, the ESC sort for the rows they leave (a list of device
    // length: no read back). paths: per bin, rows dense / hashed / left.
    // (The accumulators need B without repeated columns in a row, as the dense windows do.)
    const binned::AccumulatorModes modes{options_.esc_dense_windows, options_.esc_hash_tables,
                                         options_.accumulator_min_row_of_b, options_.accumulator_min_compression};
    const int first_accumulator_bin = std::clamp(options_.accumulator_first_bin, kFirstEscBin, kMergeBin);
    const int accumulator_bins = kMergeBin - first_accumulator_bin;
    int64_t accumulated = 0;
    if ((modes.dense || modes.hash) && options_.b_rows_unique)
      for (int k = first_accumulator_bin; k < kMergeBin; ++k) accumulated = std::max(accumulated, rows_of_bin(k));
    DeviceBuffer rest = buffer_of<int32_t>(accumulated, ctx);
    DeviceBuffer paths = buffer_of<int32_t>(accumulated > 0 ? 3 * accumulator_bins : 0, ctx);
    DeviceBuffer tally = buffer_of<unsigned long long>(accumulated > 0 ? 2 * accumulator_bins : 0, ctx);
    if (accumulated > 0) {
      SPARSETC_CUDA_CHECK(cudaMemsetAsync(paths.data(), 0, paths.size(), ctx.stream));
      SPARSETC_CUDA_CHECK(cudaMemsetAsync(tally.data(), 0, tally.size(), ctx.stream));
    }
    // The rows the accumulators leave (or all, without them): the block dense accumulator from
    // block_dense_first_bin on when B fits it, else the ESC sort: bin 33 in one warp's registers
    // (of u <= 64 a thread's, where the bin has many rows), of bin 34 the rows of u <= 256 in one
    // warp's registers and the others in a block.
    auto sort_or_dense = [&](int k, const int32_t* list, int64_t begin, int64_t end, const int32_t* listed) {
      if (dense_shape_ && k >= options_.block_dense_first_bin) {
        binned::block_dense_rows(a_, b_, list, begin, end, t, count.as<int64_t>(), dense_shape_, ctx, listed);
      } else if (k == kFirstEscBin && options_.middle_rows_in_warps) {
        int64_t warps_from = begin;  // the bin's own rows: those of u <= kShortEscBound first
        const int64_t short_end = binned_rows.end(binned::kShortEscKey);
        if (listed == nullptr && options_.middle_rows_sorted && sortable &&
            short_end - begin > options_.middle_rows_sorted_from) {
          binned::register_sort_rows(a_, b_, list, begin, short_end, int(binned::kShortEscBound), t,
                                     count.as<int64_t>(), ctx);
          warps_from = short_end;
        }
        binned::middle_rows(a_, b_, list, warps_from, end, t, count.as<int64_t>(), ctx, listed);
      } else if (k == binned::kFirstAccumulatorBin && options_.wide_rows_in_warps) {
        binned::middle_rows(a_, b_, list, begin, end, t, count.as<int64_t>(), ctx, listed);
        binned::esc_rows(a_, b_, list, begin, end, k, t, count.as<int64_t>(), ctx, listed, binned::kWarpEscMaxBound);
      } else {
        binned::esc_rows(a_, b_, list, begin, end, k, t, count.as<int64_t>(), ctx, listed);
      }
    };
    for (int k = kFirstEscBin; k < kMergeBin; ++k) {
      if (accumulated == 0 || k < first_accumulator_bin) {
        sort_or_dense(k, rows, binned_rows.bin_begin(k), binned_rows.bin_end(k), nullptr);
        continue;
      }
      // Where the block dense accumulator takes the rest, the warps keep their dense windows (FEM
      // rows: bcsstk17 0.47 ms with them, 0.80 without) but not their hash tables, which lose to it
      // (H200, fp32, whole product with / without hashing: wiki-Vote 0.98 / 0.65 ms, ca-AstroPh
      // 1.28 / 1.12, EX5 0.50 / 0.48, memplus 0.90 / 0.83, rmat:16:16 15.2 / 13.9).
      binned::AccumulatorModes bin_modes = modes;
      if (dense_shape_ && k >= options_.block_dense_first_bin) bin_modes.hash = false;
      int32_t* bin_paths = paths.as<int32_t>() + 3 * (k - first_accumulator_bin);
      binned::accumulate_rows(a_, b_, rows, binned_rows.bin_begin(k), binned_rows.bin_end(k), t, count.as<int64_t>(),
                              bin_modes, rest.as<int32_t>(), bin_paths,
                              tally.as<unsigned long long>() + 2 * (k - first_accumulator_bin), ctx);
      sort_or_dense(k, rest.as<const int32_t>(), 0, rows_of_bin(k), bin_paths + 2);
    }
    clock.mark(kStageMerge);
    if (!overlap) start_merge();
    finish_merge();
    if (overlap) side_.join(ctx.stream);

    // Stage 4: this panel's piece.
    clock.mark(kStageArrange);
    DeviceBuffer piece_ptr = buffer_of<int64_t>(r1 - r0 + 1, ctx);
    binned::exclusive_scan_counts(count.as<const int64_t>() + r0, piece_ptr.as<int64_t>(), r1 - r0, ctx);
    Piece piece;
    piece.nnz = read_int64(piece_ptr.as<const int64_t>() + (r1 - r0), ctx.stream);
    piece.cols = buffer_of<int32_t>(piece.nnz, ctx);
    piece.vals = buffer_of<V>(piece.nnz, ctx);
    binned::arrange(a_, b_, bin.as<const uint8_t>(), t, r1, piece_ptr.as<const int64_t>(), piece.nnz,
                    states.as<const binned::MergeRow<V>>(), merge_rows, static_cast<int32_t*>(piece.cols.data()), static_cast<V*>(piece.vals.data()),
                    ctx);
    clock.mark(kStages);
    clock.add_to(stats_.stage_ms);
    if (options_.time_stages) {  // the clock has synchronised: the path counts are ready
      std::array<int32_t, 3 * (kMergeBin - kFirstEscBin)> counted{};
      if (accumulated > 0) copy_device_to_host(counted.data(), paths.data(), paths.size(), ctx.stream);
      for (int k = first_accumulator_bin; k < kMergeBin; ++k) {
        const int32_t* c = counted.data() + 3 * (k - first_accumulator_bin);
        stats_.esc_paths[0] += c[0];
        stats_.esc_paths[1] += c[1];
        stats_.esc_paths[2] += accumulated > 0 ? c[2] : rows_of_bin(k);
      }
    }
    piece.row_ptr = std::move(piece_ptr);  // C's row offsets when this panel is all of C
    pieces.push_back(std::move(piece));
  }

  DeviceCsr<V> c;
  c.rows = m;
  c.cols = b_.cols;
  for (const Piece& piece : pieces) c.nnz += piece.nnz;
  if (pieces.size() == 1 && panel_rows_.size() == 2) {  // one panel of all rows: its piece is C
    c.row_ptr = std::move(pieces[0].row_ptr);
    c.col_idx = std::move(pieces[0].cols);
    c.values = std::move(pieces[0].vals);
  } else {
    c.row_ptr = buffer_of<int64_t>(m + 1, ctx);
    binned::exclusive_scan_counts(count.as<const int64_t>(), static_cast<int64_t*>(c.row_ptr.data()), m, ctx);
    c.col_idx = buffer_of<int32_t>(c.nnz, ctx);
    c.values = buffer_of<V>(c.nnz, ctx);
    int64_t at = 0;
    for (const Piece& piece : pieces) {
      if (piece.nnz == 0) continue;
      copy_device_to_device(static_cast<int32_t*>(c.col_idx.data()) + at, piece.cols.data(), size_t(piece.nnz) * sizeof(int32_t),
                            ctx.stream);
      copy_device_to_device(static_cast<V*>(c.values.data()) + at, piece.vals.data(), size_t(piece.nnz) * sizeof(V), ctx.stream);
      at += piece.nnz;
    }
  }
  SPARSETC_LOG(debug, "binned SpGEMM: nnz(C) = ", c.nnz, ", ", stats_.panels, " panel(s), ", stats_.grow_rounds,
               " grow round(s)");
  return c;
}

template <typename V>
void binned_numeric(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const DeviceCsrView<V>& c, V* values,
                    const GpuContext& context, bool short_rows_in_threads) {
  require(a.cols == b.rows && c.rows == a.rows && c.cols == b.cols, SPARSETC_STATUS_DIMENSION_MISMATCH,
          "binned SpGEMM numeric: the pattern of C does not match A * B");
  binned::numeric_values(a, b, c.row_ptr, c.col_idx, c.nnz, values, context, short_rows_in_threads);
}

template class BinnedSpgemm<float>;
template class BinnedSpgemm<double>;
template void binned_numeric<float>(const DeviceCsrView<float>&, const DeviceCsrView<float>&,
                                    const DeviceCsrView<float>&, float*, const GpuContext&, bool);
template void binned_numeric<double>(const DeviceCsrView<double>&, const DeviceCsrView<double>&,
                                     const DeviceCsrView<double>&, double*, const GpuContext&, bool);

}  // namespace sparsetc::detail

// make_tc_bcsr: the BCSR operand of the tensor-core SpMM and its schedule, built on the device.
//
//  1. Range check of the values against the storage type (VALUE_OUT_OF_RANGE, host's message).
//  2. gpu_csr_to_bcsr in the compute type (blocks of the precision's MMA shape, zero padded).
//  3. Panels of G block rows: the blocks are sorted by (panel, block column, block row) with one
//     radix sort; each run of equal (panel, column) is an entry (its blocks consecutive, its mask
//     the block rows present). The values are gathered into that order and rounded to the storage
//     type in the same pass.
//  4. Work items: panels longer than the chunk length (twice the mean entries per panel, at least
//     kMinChunkEntries) are split into chunks of about equal entry counts; split items come first
//     (they are the longest: they start early, which shortens the tail). Where that leaves a grid
//     short of the device (fewer items than SMs x the kernels' resident CTAs: 2 for the narrow tiles,
//     1 for the wide ones), a spread list splits every panel into chunks as short as that many
//     items allow.
// Synchronisation points: the range check, the block count, the entry count, the item totals (one
// per list) and, where a spread list is built, the panel lengths.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/device_rounding.cuh"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/device_properties.hpp"
#include "gpu/spmm/bcsr_tc/bcsr_tc_spmm.hpp"
#include "gpu/spmm/bcsr_tc/tc_config.hpp"
#include "gpu/spmm/bcsr_tc/tc_loop_rule.hpp"
#include "gpu/spmm/bcsr_tc/tc_ptx.cuh"
#include "gpu/spmm/bcsr_tc/tc_schedule.hpp"

namespace sparsetc::detail {
namespace tc {
namespace {

namespace cubns = gpuconv::cubns;
using gpuconv::buffer_of;
using gpuconv::for_each_index;
using gpuconv::run_cub;

constexpr int64_t kMinChunkEntries = 32;
// Spread lists: chunks of at most this many entries are not made shorter, and a list with fewer than
// an eighth more items than the panels' own is not kept. A chunk has fixed costs (the pipeline fill,
// its partial tile, the counters' memset). Measured on H200 at N = 8 and 32: band hw64 split from 16
// entries per panel into 8 ran 1.25x slower; rgg_n_2_15_s0 in 259 items for 256 panels 1.07x slower.
// A floor of 32 entries helped stokes64 (1.15x) but cost bcsstk17/18/33, memplus and vt2010
// 1.05-1.14x and the 1-SA scrambled blocks 1.05x.
constexpr int64_t kMinSpreadChunkEntries = 16;
constexpr int64_t kMinSpreadGain = 8;  // at least panel items / kMinSpreadGain more items

constexpr int kPanelBits = 3;  // log2(kPanelBlockRows)
static_assert((1 << kPanelBits) == kPanelBlockRows, "panel height is a power of two");

// Storage rounding of one value, exactly as tests reproduce it on the host.
template <TcPrecision P, typename V>
__device__ __forceinline__ auto to_storage(V v) {
  if constexpr (P == TcPrecision::f16) {
    if constexpr (std::is_same_v<V, float>) return gpuconv::d_float_to_half(v);
    else return gpuconv::d_double_to_half(v);
  } else if constexpr (P == TcPrecision::bf16) {
    if constexpr (std::is_same_v<V, float>) return gpuconv::d_float_to_bfloat16(v);
    else return gpuconv::d_double_to_bfloat16(v);
  } else if constexpr (P == TcPrecision::tf32) {  // to float (nearest even), then tf32 (cvt.rna)
    float f;
    if constexpr (std::is_same_v<V, float>) f = v;
    else f = gpuconv::d_double_to_float(v);
    return __uint_as_float(to_tf32(__float_as_uint(f)));
  } else {
    return double(v);
  }
}

template <TcPrecision P, typename V>
struct GatherValues {  // dst block b = rounded source block order[b]
  using Out = decltype(to_storage<P>(V(0)));
  const V* src;
  const int64_t* order;
  int area;
  Out* dst;
  __device__ void operator()(int64_t i) const {
    const int64_t b = i / area, o = i % area;
    dst[i] = to_storage<P>(src[order[b] * area + o]);
  }
};

template <TcPrecision P, typename V>
void gather_values(const V* bcsr_values, const int64_t* order, int64_t blocks, int area, void* out,
                   const GpuContext& context) {
  using G = GatherValues<P, V>;
  for_each_index(blocks * area, context, G{bcsr_values, order, area, static_cast<typename G::Out*>(out)});
}

// Sort key of block b: (panel, block column, block row within the panel).
struct BlockKeys {
  const int64_t* block_ptr;
  const int32_t* block_col;
  int64_t block_rows;
  uint64_t* keys;
  int64_t* index;
  __device__ void operator()(int64_t b) const {
    const int64_t r = gpuconv::last_not_above(block_ptr, 0, block_rows, b);
    keys[b] = (uint64_t(r >> kPanelBits) << (32 + kPanelBits)) | (uint64_t(uint32_t(block_col[b])) << kPanelBits) |
              uint64_t(r & (kPanelBlockRows - 1));
    index[b] = b;
  }
};

struct EntryStart {  // first block of a run of equal (panel, column)
  const uint64_t* keys;
  __device__ bool operator()(int64_t i) const {
    return i == 0 || (keys[i] >> kPanelBits) != (keys[i - 1] >> kPanelBits);
  }
};

struct MakeEntries {
  const uint64_t* keys;
  const int64_t* starts;
  int64_t entries, blocks;
  TcEntry* out;
  int32_t* panel;
  __device__ void operator()(int64_t i) const {
    const int64_t first = starts[i], end = i + 1 < entries ? starts[i + 1] : blocks;
    uint32_t mask = 0;
    for (int64_t j = first; j < end; ++j) mask |= 1u << (keys[j] & (kPanelBlockRows - 1));
    out[i] = TcEntry{first, int32_t(uint32_t(keys[first] >> kPanelBits)), mask};
    panel[i] = int32_t(keys[first] >> (32 + kPanelBits));
  }
};

struct PanelStarts {
  const int32_t* entry_panel;
  int64_t entries;
  int64_t* panel_ptr;
  __device__ void operator()(int64_t p) const {
    panel_ptr[p] = gpuconv::lower_bound(entry_panel, 0, entries, int32_t(p));
  }
};

// Items of a panel of len entries: panels longer than `cap` split into chunks of at most cap entries;
// with spread > 0 every panel is also split into chunks of at most `spread` entries.
struct ChunkRule {
  int64_t cap = 0, spread = 0;
  __host__ __device__ int64_t chunks(int64_t len) const {
    const int64_t capped = len > cap ? (len + cap - 1) / cap : 1;
    const int64_t spread_chunks = spread > 0 ? (len + spread - 1) / spread : 0;
    return capped > spread_chunks ? capped : spread_chunks;
  }
};

// Per panel: [0, P) chunks if split else 0, [P, 2P) 1 if not split, [2P, 3P) 1 if split.
struct ChunkCounts {
  const int64_t* panel_ptr;
  int64_t panels;
  ChunkRule rule;
  int64_t* counts;
  __device__ void operator()(int64_t p) const {
    const int64_t chunks = rule.chunks(panel_ptr[p + 1] - panel_ptr[p]);
    counts[p] = chunks > 1 ? chunks : 0;
    counts[panels + p] = chunks > 1 ? 0 : 1;
    counts[2 * panels + p] = chunks > 1 ? 1 : 0;
  }
};

// totals[0..2] = the three scans' totals; with block_ptr, totals[3] = the longest block row.
struct Totals {
  const int64_t* scans;
  int64_t panels;
  const int64_t* block_ptr;
  int64_t* totals;
  __device__ void operator()(int64_t r) const {
    if (r == 0)
      for (int s = 0; s < 3; ++s) totals[s] = scans[s * (panels + 1) + panels];
    if (block_ptr)
      atomicMax(reinterpret_cast<unsigned long long*>(totals + 3),
                (unsigned long long)(block_ptr[r + 1] - block_ptr[r]));
  }
};

struct MakeItems {
  const int64_t* panel_ptr;
  const int64_t* split_ptr;    // exclusive scan of split chunks
  const int64_t* unsplit_ptr;  // exclusive scan of unsplit flags
  const int64_t* split_index;  // exclusive scan of split flags
  int64_t split_items;
  ChunkRule rule;
  TcWorkItem* items;
  __device__ void operator()(int64_t p) const {
    const int64_t begin = panel_ptr[p], len = panel_ptr[p + 1] - begin;
    const int64_t chunks = rule.chunks(len);
    if (chunks == 1) {
      items[split_items + unsplit_ptr[p]] = TcWorkItem{begin, begin + len, 0, int32_t(p), 0, 1, -1, 0};
      return;
    }
    for (int64_t c = 0; c < chunks; ++c)
      items[split_ptr[p] + c] = TcWorkItem{begin + len * c / chunks, begin + len * (c + 1) / chunks, split_ptr[p],
                                           int32_t(p), int32_t(c), int32_t(chunks), int32_t(split_index[p]), 0};
  }
};

// The work items of the panels under `rule` (one read-back: the item totals). With block_ptr, also
// the longest block row (returned through *max_blocks_per_row; same read-back).
TcWorkList build_work_list(const int64_t* panel_ptr, int64_t panels, ChunkRule rule, const int64_t* block_ptr,
                           int64_t block_rows, int64_t* max_blocks_per_row, const GpuContext& context) {
  TcWorkList list;
  if (panels == 0) return list;
  DeviceBuffer counts = buffer_of<int64_t>(3 * panels, context);
  DeviceBuffer scans = buffer_of<int64_t>(3 * (panels + 1), context);
  DeviceBuffer totals = buffer_of<int64_t>(4, context);
  for_each_index(panels, context, ChunkCounts{panel_ptr, panels, rule, counts.as<int64_t>()});
  for (int s = 0; s < 3; ++s)
    gpuconv::exclusive_scan_total(counts.as<const int64_t>() + s * panels, scans.as<int64_t>() + s * (panels + 1),
                                  panels, context);
  gpuconv::zero(totals.as<int64_t>(), 4, context.stream);
  for_each_index(block_ptr ? block_rows : 1, context,
                 Totals{scans.as<const int64_t>(), panels, block_ptr, totals.as<int64_t>()});
  int64_t host_totals[4] = {0, 0, 0, 0};
  copy_device_to_host(host_totals, totals.data(), sizeof host_totals, context.stream);
  list.split_items = host_totals[0];
  list.split_panels = host_totals[2];
  list.work_items = host_totals[0] + host_totals[1];
  if (max_blocks_per_row) *max_blocks_per_row = host_totals[3];
  list.items = buffer_of<TcWorkItem>(list.work_items, context);
  const int64_t* split_ptr = scans.as<const int64_t>();
  for_each_index(panels, context,
                 MakeItems{panel_ptr, split_ptr, split_ptr + (panels + 1), split_ptr + 2 * (panels + 1),
                           list.split_items, rule, list.items.as<TcWorkItem>()});
  return list;
}

template <typename V>
void check_range(const DeviceCsrView<V>& csr, TcPrecision precision, const GpuContext& context) {
  sparsetc_value_type_t type;
  if (precision == TcPrecision::f16) type = SPARSETC_VALUE_F16;
  else if (precision == TcPrecision::bf16) type = SPARSETC_VALUE_BF16;
  else if (precision == TcPrecision::tf32 && std::is_same_v<V, double>) type = SPARSETC_VALUE_F32;
  else return;
  if (csr.nnz == 0) return;
  DeviceBuffer scratch(size_t(csr.nnz) * (type == SPARSETC_VALUE_F32 ? 4 : 2), context);
  const ValueConversion r = gpu_convert_values(csr.values, csr.nnz, type, scratch.data(), context);
  if (r.out_of_range > 0) value_out_of_range_error(csr.values, r.first_out_of_range, type, context.stream);
}

template <typename V>
TcBcsrOperand make_operand(const DeviceCsrView<V>& csr, TcPrecision precision, const GpuContext& context) {
  if constexpr (std::is_same_v<V, float>)
    require(precision != TcPrecision::f64, SPARSETC_STATUS_NOT_SUPPORTED,
            "tensor-core SpMM: the f64 path needs double input (float values would only be widened)");
  const TcBlockShape shape = tc_block_shape(precision);
  check_range(csr, precision, context);
  DeviceBcsr<V> bcsr = gpu_csr_to_bcsr(csr, shape.height, shape.width, context);

  TcBcsrOperand op;
  op.precision = precision;
  op.rows = csr.rows;
  op.cols = csr.cols;
  op.nnz = csr.nnz;
  op.shape = shape;
  op.blocks = bcsr.blocks;
  op.block_rows = bcsr.block_rows();
  op.panel_block_rows = kPanelBlockRows;
  op.panels = (op.block_rows + kPanelBlockRows - 1) / kPanelBlockRows;
  require(op.panels < (int64_t(1) << 31), SPARSETC_STATUS_SIZE_OVERFLOW, "tensor-core SpMM: ", op.rows,
          " rows exceed the schedule's panel index");
  const int64_t blocks = op.blocks, block_rows = op.block_rows, panels = op.panels;
  const int64_t* block_ptr = bcsr.block_row_ptr.template as<const int64_t>();
  const int32_t* block_col = bcsr.block_col.template as<const int32_t>();
  const cudaStream_t stream = context.stream;

  // ---- 3. sort the blocks by (panel, column, block row)
  DeviceBuffer keys_in = buffer_of<uint64_t>(blocks, context), keys = buffer_of<uint64_t>(blocks, context);
  DeviceBuffer index_in = buffer_of<int64_t>(blocks, context), order = buffer_of<int64_t>(blocks, context);
  for_each_index(blocks, context,
                 BlockKeys{block_ptr, block_col, block_rows, keys_in.as<uint64_t>(), index_in.as<int64_t>()});
  if (blocks > 0) {
    const int end_bit = 32 + kPanelBits + gpuconv::bits_for(uint64_t(panels));
    run_cub("cub::DeviceRadixSort::SortPairs", context, [&](void* temp, size_t& bytes) {
      return cubns::DeviceRadixSort::SortPairs(temp, bytes, keys_in.as<const uint64_t>(), keys.as<uint64_t>(),
                                               index_in.as<const int64_t>(), order.as<int64_t>(), blocks, 0, end_bit,
                                               stream);
    });
  }
  const uint64_t* sorted = keys.as<const uint64_t>();

  // ---- entries: runs of equal (panel, column)
  DeviceBuffer starts = buffer_of<int64_t>(blocks, context);
  op.entries = gpuconv::select_positions(blocks, EntryStart{sorted}, starts.as<int64_t>(), context);
  const int64_t entries = op.entries;
  op.entry_list = buffer_of<TcEntry>(entries, context);
  DeviceBuffer entry_panel = buffer_of<int32_t>(entries, context);
  for_each_index(entries, context,
                 MakeEntries{sorted, starts.as<const int64_t>(), entries, blocks, op.entry_list.as<TcEntry>(),
                             entry_panel.as<int32_t>()});
  DeviceBuffer panel_ptr = buffer_of<int64_t>(panels + 1, context);
  for_each_index(panels + 1, context, PanelStarts{entry_panel.as<const int32_t>(), entries, panel_ptr.as<int64_t>()});

  // ---- 4. work items: the panels' own, then the spread lists where those leave a grid short
  const int64_t* pp = panel_ptr.as<const int64_t>();
  const int64_t mean = panels > 0 ? (entries + panels - 1) / panels : 0;
  const ChunkRule own{std::max(kMinChunkEntries, 2 * mean), 0};
  op.panel_items = build_work_list(pp, panels, own, block_ptr, block_rows, &op.max_blocks_per_row, context);
  op.sm_count = current_device_sm_count();
  // A list of at most `target` items whose longest chunk is as short as that allows (the tail of the
  // grid is its longest item: chunk counts rounded to nearest or down left some panels whole, with
  // up to twice the others' work, and band hw2048 ran 1.18x slower at N = 8), or none where the
  // panels' own items reach `target`. There are fewer panels than `target` then, so their lengths
  // are read back (a few KB) and the chunk length is found by bisection on the host.
  std::vector<int64_t> lengths;
  auto read_lengths = [&] {
    if (!lengths.empty()) return;
    std::vector<int64_t> starts_of(static_cast<size_t>(panels + 1));
    copy_device_to_host(starts_of.data(), pp, starts_of.size() * sizeof(int64_t), stream);
    for (int64_t p = 0; p < panels; ++p) lengths.push_back(starts_of[size_t(p + 1)] - starts_of[size_t(p)]);
  };
  auto spread_list = [&](int64_t target) {
    TcWorkList list;
    if (entries == 0 || op.panel_items.work_items >= target) return list;
    read_lengths();
    auto items_with = [&](int64_t spread) {
      ChunkRule rule = own;
      rule.spread = spread;
      int64_t items = 0;
      for (int64_t len : lengths) items += rule.chunks(len);
      return items;
    };
    const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
    int64_t lo = kMinSpreadChunkEntries, hi = std::max(lo, longest);  // items_with(hi) = the panels' own
    if (items_with(lo) > target) {
      while (hi - lo > 1) {  // items_with(lo) > target >= items_with(hi)
        const int64_t mid = lo + (hi - lo) / 2;
        (items_with(mid) > target ? lo : hi) = mid;
      }
      lo = hi;
    }
    if (items_with(lo) < op.panel_items.work_items + (op.panel_items.work_items + kMinSpreadGain - 1) / kMinSpreadGain)
      return list;
    ChunkRule rule = own;
    rule.spread = lo;
    return build_work_list(pp, panels, rule, nullptr, 0, nullptr, context);
  };
  op.narrow_items = spread_list(int64_t(op.sm_count) * tc_resident_ctas(TcConfigId::n8));
  op.wide_items = spread_list(int64_t(op.sm_count) * tc_resident_ctas(TcConfigId::wide));
  // Where the warp-specialized kernel's CTAs loop over the panels' own items (one item per panel
  // then, so the panels' lengths, read back here too, are the items' entries).
  const int64_t narrow_ctas = int64_t(op.sm_count) * tc_resident_ctas(TcConfigId::n32);
  const int64_t wide_ctas = int64_t(op.sm_count) * tc_resident_ctas(TcConfigId::wide);
  if (entries > 0 && op.panel_items.split_items == 0 && double(panels) * (TcBcsrOperand::kLoopTileBits - 1) >=
                                                           kLoopMinWaves * double(std::min(narrow_ctas, wide_ctas))) {
    read_lengths();
    for (int bit = 0; bit < TcBcsrOperand::kLoopTileBits; ++bit)
      if (loop_pays(lengths, bit == 0 ? 1 : bit, bit == 0 ? narrow_ctas : wide_ctas)) op.loop_tiles |= 1u << bit;
  }

  // ---- values in entry order, rounded to the storage type
  const int area = shape.height * shape.width;
  const V* bv = bcsr.values.template as<const V>();
  const int64_t* ord = order.as<const int64_t>();
  switch (precision) {
    case TcPrecision::f16:
      op.values = buffer_of<uint16_t>(blocks * area, context);
      gather_values<TcPrecision::f16>(bv, ord, blocks, area, op.values.data(), context);
      break;
    case TcPrecision::bf16:
      op.values = buffer_of<uint16_t>(blocks * area, context);
      gather_values<TcPrecision::bf16>(bv, ord, blocks, area, op.values.data(), context);
      break;
    case TcPrecision::tf32:
      op.values = buffer_of<float>(blocks * area, context);
      gather_values<TcPrecision::tf32>(bv, ord, blocks, area, op.values.data(), context);
      break;
    case TcPrecision::f64:
      if constexpr (std::is_same_v<V, double>) {
        op.values = buffer_of<double>(blocks * area, context);
        gather_values<TcPrecision::f64>(bv, ord, blocks, area, op.values.data(), context);
      }
      break;
  }
  op.block_row_ptr = std::move(bcsr.block_row_ptr);
  op.block_col = std::move(bcsr.block_col);
  return op;
}

}  // namespace
}  // namespace tc

TcBcsrOperand make_tc_bcsr(const DeviceCsrView<float>& csr, TcPrecision precision, const GpuContext& context) {
  return tc::make_operand(csr, precision, context);
}
TcBcsrOperand make_tc_bcsr(const DeviceCsrView<double>& csr, TcPrecision precision, const GpuContext& context) {
  return tc::make_operand(csr, precision, context);
}

}  // namespace sparsetc::detail

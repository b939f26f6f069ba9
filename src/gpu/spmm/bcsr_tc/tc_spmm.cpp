// Host side of the tensor-core SpMM: type and argument checks, the workspace, the launch.
#include <algorithm>
#include <cstdint>

#include "core/error.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/spmm/bcsr_tc/bcsr_tc_spmm.hpp"
#include "gpu/spmm/bcsr_tc/tc_config.hpp"
#include "gpu/spmm/bcsr_tc/tc_launch.hpp"

namespace sparsetc::detail {
namespace {

const char* precision_name(TcPrecision p) {
  switch (p) {
    case TcPrecision::f16: return "f16";
    case TcPrecision::bf16: return "bf16";
    case TcPrecision::tf32: return "tf32";
    default: return "f64";
  }
}

size_t value_bytes(sparsetc_value_type_t t) {
  return t == SPARSETC_VALUE_F64 ? 8 : t == SPARSETC_VALUE_F32 ? 4 : 2;
}

// Launches the wgmma kernel of f16 / bf16 wide tiles where it can run, else returns false (the
// caller then takes the warp-specialized mma.sync kernel). It is built for sm_90a
// (tc_wgmma_sm90a.cu), which runs on compute capability 9.0 exactly (H100, H200), and only where
// the toolkit can build it (SPARSETC_HAVE_WGMMA, src/CMakeLists.txt).
bool launch_wgmma(TcPrecision precision, const tc::TcKernelParams& p, int64_t work_items, cudaStream_t stream) {
#if SPARSETC_HAVE_WGMMA
  int device = 0, major = 0, minor = 0;
  SPARSETC_CUDA_CHECK(cudaGetDevice(&device));
  SPARSETC_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  SPARSETC_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major != 9 || minor != 0) return false;
  if (precision == TcPrecision::f16) tc::launch_tc_wgmma_f16(p, work_items, stream);
  else tc::launch_tc_wgmma_bf16(p, work_items, stream);
  return true;
#else
  (void)precision, (void)p, (void)work_items, (void)stream;
  return false;
#endif
}

constexpr size_t kAlign = 256;
size_t aligned(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// The workspace: the split items' partial tiles, then (unless the caller keeps them) the counters.
struct WorkspaceLayout {
  size_t partial_bytes = 0, counter_bytes = 0;
  int64_t n_tiles = 0;
  int64_t counters = 0;  // split panels x n_tiles
  size_t total() const { return partial_bytes + counter_bytes; }
};

WorkspaceLayout workspace_layout(const TcBcsrOperand& a, const TcWorkList& list, int64_t n, bool own_counters) {
  WorkspaceLayout w;
  const tc::TcTileShape tile = tc::tc_tile_shape(a.precision, n);
  w.n_tiles = n > 0 ? (n + tile.tn - 1) / tile.tn : 0;
  if (list.split_items == 0 || w.n_tiles == 0) return w;
  w.partial_bytes = aligned(size_t(list.split_items) * size_t(w.n_tiles) * size_t(tile.partial_elements) *
                            tile.accumulator_bytes);
  w.counters = list.split_panels * w.n_tiles;
  if (!own_counters) w.counter_bytes = aligned(size_t(w.counters) * sizeof(unsigned));
  return w;
}

}  // namespace

namespace tc {

TcTileShape tc_tile_shape(TcPrecision precision, int64_t n) {
  const bool f64 = precision == TcPrecision::f64;
  const int acc_per_tile = f64 ? 2 : 4;
  auto shape = [&](auto cfg) {
    using Cfg = decltype(cfg);
    return TcTileShape{Cfg::kTN, int64_t(Cfg::kWM) * Cfg::kWN * 32 * Cfg::kRB * Cfg::kNT * acc_per_tile,
                       f64 ? sizeof(double) : sizeof(float)};
  };
  switch (tc_config_for(n)) {
    case TcConfigId::n8: return shape(TcConfigN8{});
    case TcConfigId::n32: return shape(TcConfigN32{});
    default: return f64 ? shape(TcConfigF64N64{}) : shape(TcConfigN128{});
  }
}

}  // namespace tc

TcBlockShape tc_block_shape(TcPrecision precision) {
  switch (precision) {
    case TcPrecision::f16:
    case TcPrecision::bf16: return {16, 16};
    case TcPrecision::tf32: return {16, 8};
    default: return {8, 8};
  }
}

bool tc_supports(TcPrecision precision, sparsetc_value_type_t b_type, sparsetc_value_type_t c_type) {
  switch (precision) {
    case TcPrecision::f16:
      return b_type == SPARSETC_VALUE_F16 && (c_type == SPARSETC_VALUE_F32 || c_type == SPARSETC_VALUE_F16);
    case TcPrecision::bf16:
      return b_type == SPARSETC_VALUE_BF16 && (c_type == SPARSETC_VALUE_F32 || c_type == SPARSETC_VALUE_BF16);
    case TcPrecision::tf32: return b_type == SPARSETC_VALUE_F32 && c_type == SPARSETC_VALUE_F32;
    default: return b_type == SPARSETC_VALUE_F64 && c_type == SPARSETC_VALUE_F64;
  }
}

const TcWorkList& tc_work_list(const TcBcsrOperand& a, int64_t n, bool spread) {
  if (!spread || n <= 0) return a.panel_items;
  const bool narrow = tc::tc_config_for(n) != tc::TcConfigId::wide;
  const TcWorkList& spread_list = narrow ? a.narrow_items : a.wide_items;
  const bool one_tile = n <= tc::tc_tile_shape(a.precision, n).tn;
  return (narrow || one_tile) && spread_list.work_items > 0 ? spread_list : a.panel_items;
}

// Enough for the list of n and for the panels' own (TcSpmmArgs::spread = false).
size_t tc_spmm_workspace_bytes(const TcBcsrOperand& a, int64_t n, bool own_counters) {
  return std::max(workspace_layout(a, tc_work_list(a, n), n, own_counters).total(),
                  workspace_layout(a, a.panel_items, n, own_counters).total());
}

int64_t tc_spmm_counter_count(const TcBcsrOperand& a, int64_t n) {
  return std::max(workspace_layout(a, tc_work_list(a, n), n, true).counters,
                  workspace_layout(a, a.panel_items, n, true).counters);
}

void tc_spmm(const TcBcsrOperand& a, const TcSpmmArgs& args, void* workspace, size_t workspace_bytes,
             cudaStream_t stream) {
  require(tc_supports(a.precision, args.b_type, args.c_type), SPARSETC_STATUS_NOT_SUPPORTED,
          "tensor-core SpMM (", precision_name(a.precision), "): B of value type ", int(args.b_type),
          " and C of value type ", int(args.c_type), " are not supported");
  require(args.b_order == SPARSETC_ORDER_ROW || args.b_order == SPARSETC_ORDER_COL, SPARSETC_STATUS_INVALID_VALUE,
          "tensor-core SpMM: unknown order of B ", int(args.b_order));
  require(args.c_order == SPARSETC_ORDER_ROW || args.c_order == SPARSETC_ORDER_COL, SPARSETC_STATUS_INVALID_VALUE,
          "tensor-core SpMM: unknown order of C ", int(args.c_order));
  require(args.n >= 0, SPARSETC_STATUS_INVALID_VALUE, "tensor-core SpMM: negative column count ", args.n);
  require(a.panel_block_rows == tc::kPanelBlockRows, SPARSETC_STATUS_INTERNAL_ERROR,
          "tensor-core SpMM: operand built for panels of ", a.panel_block_rows, " block rows");
  const int64_t m = a.rows, k = a.cols, n = args.n;
  const bool b_row = args.b_order == SPARSETC_ORDER_ROW, c_row = args.c_order == SPARSETC_ORDER_ROW;
  const int64_t ldb_min = std::max<int64_t>(1, b_row ? n : k), ldc_min = std::max<int64_t>(1, c_row ? n : m);
  require(args.ldb >= ldb_min, SPARSETC_STATUS_INVALID_VALUE, "tensor-core SpMM: ldb = ", args.ldb, " < ", ldb_min,
          " (B is ", k, " x ", n, (b_row ? ", row-major)" : ", column-major)"));
  require(args.ldc >= ldc_min, SPARSETC_STATUS_INVALID_VALUE, "tensor-core SpMM: ldc = ", args.ldc, " < ", ldc_min,
          " (C is ", m, " x ", n, (c_row ? ", row-major)" : ", column-major)"));
  if (m == 0 || n == 0) return;
  require(args.C != nullptr, SPARSETC_STATUS_NULL_POINTER, "tensor-core SpMM: C is NULL");
  require(args.B != nullptr || k == 0, SPARSETC_STATUS_NULL_POINTER, "tensor-core SpMM: B is NULL");
  const TcWorkList& list = tc_work_list(a, n, args.spread);
  const bool own_counters = args.counters != nullptr;
  const WorkspaceLayout w = workspace_layout(a, list, n, own_counters);
  require(workspace_bytes >= w.total(), SPARSETC_STATUS_WORKSPACE_TOO_SMALL, "tensor-core SpMM: workspace of ",
          workspace_bytes, " bytes, ", w.total(), " needed for n = ", n);
  require(w.total() == 0 || workspace != nullptr, SPARSETC_STATUS_NULL_POINTER, "tensor-core SpMM: workspace is NULL");
  require(!own_counters || args.counter_count >= w.counters, SPARSETC_STATUS_INTERNAL_ERROR, "tensor-core SpMM: ",
          args.counter_count, " arrival counters, ", w.counters, " needed for n = ", n);

  tc::TcKernelParams p;
  p.items = list.items.as<const TcWorkItem>();
  p.entries = a.entry_list.as<const TcEntry>();
  p.values = a.values.data();
  p.m = m;
  p.k = k;
  p.n = n;
  p.n_tiles = w.n_tiles;
  p.work = list.work_items * w.n_tiles;
  if (list.split_items == 0) {  // split chunks meet at CTA barriers: one CTA each
    const bool narrow = tc::tc_config_for(n) != tc::TcConfigId::wide;
    if (args.loop_ctas > 0)
      p.loop_ctas = args.loop_ctas;
    else if (args.loop_ctas < 0 && &list == &a.panel_items && a.loops(narrow, w.n_tiles))
      p.loop_ctas = int64_t(a.sm_count) * tc::tc_resident_ctas(narrow ? tc::TcConfigId::n32 : tc::TcConfigId::wide);
  }
  p.b = args.B;
  p.ldb = args.ldb;
  p.b_col_major = !b_row;
  const size_t b_bytes = value_bytes(args.b_type);
  p.b_aligned = reinterpret_cast<uintptr_t>(args.B) % 16 == 0 && (size_t(args.ldb) * b_bytes) % 16 == 0;
  p.c = args.C;
  p.ldc = args.ldc;
  p.c_col_major = !c_row;
  const size_t c_bytes = value_bytes(args.c_type);
  p.c_pairs = c_row && args.ldc % 2 == 0 && reinterpret_cast<uintptr_t>(args.C) % (2 * c_bytes) == 0;
  p.c_type = args.c_type;
  p.alpha = args.alpha;
  p.beta = args.beta;
  p.row_map = args.row_map;
  p.kernel_variant = args.kernel_variant;
  p.dense_stages = args.dense_stages < 0 ? int(a.dense_stages()) : int(args.dense_stages != 0);
  if (w.total() > 0) p.partials = workspace;
  if (own_counters) {
    p.counters = args.counters;
  } else if (w.counter_bytes > 0) {
    p.counters = reinterpret_cast<unsigned*>(static_cast<unsigned char*>(workspace) + w.partial_bytes);
    SPARSETC_CUDA_CHECK(cudaMemsetAsync(p.counters, 0, w.counter_bytes, stream));
  }
  const bool half = a.precision == TcPrecision::f16 || a.precision == TcPrecision::bf16;
  if (half && tc::tc_config_for(n) == tc::TcConfigId::wide && b_row && args.kernel_variant == 3 &&
      launch_wgmma(a.precision, p, list.work_items, stream))
    return;
  switch (a.precision) {
    case TcPrecision::f16: tc::launch_tc_spmm_f16(p, list.work_items, stream); break;
    case TcPrecision::bf16: tc::launch_tc_spmm_bf16(p, list.work_items, stream); break;
    case TcPrecision::tf32: tc::launch_tc_spmm_tf32(p, list.work_items, stream); break;
    default: tc::launch_tc_spmm_f64(p, list.work_items, stream); break;
  }
}

}  // namespace sparsetc::detail

// Operands of the tSparse SpGEMM: the canonical device CSR as 8x8 bitmap tiles (the GPU conversion
// of gpu_convert.hpp, whose layout - tile CSR, bit = row * 8 + column, values in bit order - is the
// paper's), plus each tile's row and column masks for culling, and the values in the storage of
// the tile arithmetic. fp16/bf16 go through gpu_convert_values (round to nearest even, out-of-range
// values counted): an fp16 overflow is an error naming bf16, never a silent Inf.
#include <string>
#include <type_traits>

#include "core/error.hpp"
#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/device_rounding.cuh"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/spgemm/tsparse/tsparse_spgemm.hpp"

namespace sparsetc::detail {
namespace {

// Row mask (bytes that are not zero) and column mask (OR of the bytes) of each tile.
struct TileMasks {
  const uint64_t* bitmap;
  uint8_t* row_mask;
  uint8_t* col_mask;
  __device__ void operator()(int64_t t) const {
    const uint64_t bits = bitmap[t];
    uint32_t rows = 0;
#pragma unroll
    for (int r = 0; r < 8; ++r) rows |= ((bits >> (8 * r)) & 0xFFu) != 0 ? (1u << r) : 0u;
    uint64_t cols = bits | (bits >> 32);
    cols |= cols >> 16;
    cols |= cols >> 8;
    row_mask[t] = uint8_t(rows);
    col_mask[t] = uint8_t(cols & 0xFFu);
  }
};

// lo = round(x - hi) of a split value (x - hi is exact in float: hi is x rounded to fewer bits).
template <bool kBf16>
struct SplitRemainder {
  const float* x;
  const uint16_t* hi;
  uint16_t* lo;
  __device__ void operator()(int64_t i) const {
    const float value = x[i];
    if (!isfinite(value)) {  // NaN and Inf travel in hi alone
      lo[i] = 0;
      return;
    }
    const float rounded = kBf16 ? __bfloat162float(__ushort_as_bfloat16(hi[i])) : __half2float(__ushort_as_half(hi[i]));
    lo[i] = kBf16 ? gpuconv::d_float_to_bfloat16(value - rounded) : gpuconv::d_float_to_half(value - rounded);
  }
};

}  // namespace

template <typename V>
TileOperand make_tile_operand(const DeviceCsrView<V>& csr, TileArithmetic arithmetic, const char* what,
                              const GpuContext& context) {
  using namespace gpuconv;
  require(std::is_same_v<V, double> == (arithmetic == TileArithmetic::kF64), SPARSETC_STATUS_INTERNAL_ERROR,
          "tSparse operand: fp64 tiles come from double CSR, the others from float CSR");
  DeviceBitmapTiles<V> tiles = gpu_csr_to_bitmap_tiles(csr, context);
  TileOperand op;
  op.rows = tiles.rows;
  op.cols = tiles.cols;
  op.tiles = tiles.tiles;
  op.nnz = tiles.nnz;
  op.arithmetic = arithmetic;
  op.tile_row_ptr = std::move(tiles.tile_row_ptr);
  op.tile_col = std::move(tiles.tile_col);
  op.bitmap = std::move(tiles.bitmap);
  op.element_offset = std::move(tiles.element_offset);
  op.row_mask = buffer_of<uint8_t>(op.tiles, context);
  op.col_mask = buffer_of<uint8_t>(op.tiles, context);
  for_each_index(op.tiles, context,
                 TileMasks{op.bitmap.as<const uint64_t>(), op.row_mask.as<uint8_t>(), op.col_mask.as<uint8_t>()});
  if (!is_half_arithmetic(arithmetic)) {
    op.values = std::move(tiles.values);
    return op;
  }
  const bool bf16 = is_bf16_arithmetic(arithmetic);
  const sparsetc_value_type_t type = bf16 ? SPARSETC_VALUE_BF16 : SPARSETC_VALUE_F16;
  op.values = buffer_of<uint16_t>(op.nnz, context);
  const ValueConversion conversion =
      gpu_convert_values(tiles.values.template as<const V>(), op.nnz, type, op.values.data(), context);
  if (conversion.out_of_range > 0) {
    V value{};
    copy_device_to_host(&value, tiles.values.template as<const V>() + conversion.first_out_of_range, sizeof(V),
                        context.stream);
    if (!bf16)
      fail(SPARSETC_STATUS_VALUE_OUT_OF_RANGE, "tSparse SpGEMM: ", conversion.out_of_range, " value(s) of ", what,
           " (for example ", double(value),
           ") exceed the fp16 range (largest finite 65504) of the fp16 tensor-core path; choose "
           "SPARSETC_TC_PRECISION_BF16 or BF16_SPLIT (fp32 range) or SPARSETC_TC_PRECISION_F64 in sparsetc_spgemm_options_t.tc_precision");
    fail(SPARSETC_STATUS_VALUE_OUT_OF_RANGE, "tSparse SpGEMM: ", conversion.out_of_range, " value(s) of ", what,
         " (for example ", double(value), ") exceed the bf16 range; choose SPARSETC_TC_PRECISION_F64");
  }
  if (is_split_arithmetic(arithmetic)) {
    if constexpr (std::is_same_v<V, float>) {
      op.values_lo = buffer_of<uint16_t>(op.nnz, context);
      const float* x = tiles.values.template as<const float>();
      const uint16_t* hi = op.values.as<const uint16_t>();
      uint16_t* lo = op.values_lo.as<uint16_t>();
      if (bf16) for_each_index(op.nnz, context, SplitRemainder<true>{x, hi, lo});
      else for_each_index(op.nnz, context, SplitRemainder<false>{x, hi, lo});
    }
  }
  return op;
}

template TileOperand make_tile_operand<float>(const DeviceCsrView<float>&, TileArithmetic, const char*,
                                              const GpuContext&);
template TileOperand make_tile_operand<double>(const DeviceCsrView<double>&, TileArithmetic, const char*,
                                               const GpuContext&);

}  // namespace sparsetc::detail

// The work decomposition of the BCSR tensor-core SpMM, shared by the schedule builder (tc_operand.cu)
// and the kernels. Plain structs: included from host and device code alike.
//
// A panel is G consecutive block rows (G = TcBcsrOperand::panel_block_rows): its CTA keeps a
// (G * block height) x TN tile of C in registers. Its entries are the union of its block rows' block
// columns, sorted: each entry loads one B slab (block width x TN) into shared memory once and
// multiplies it with every block of that column in the panel (up to G), so B is read once per panel
// instead of once per block (G times less B traffic than one-block-row kernels on banded matrices).
// The blocks of an entry are stored consecutively in the operand's values, ordered by block row.
#pragma once

#include <cstdint>

namespace sparsetc::detail {

struct TcEntry {
  int64_t first_block;  // index (in the operand's values) of the entry's first block
  int32_t col_block;    // block column: B rows [col_block * width, (col_block + 1) * width)
  uint32_t mask;        // bit g: block row g of the panel has a block here (popcount = blocks)
};
static_assert(sizeof(TcEntry) == 16, "one 16-byte load per entry");

// One CTA's work (per N tile): entries [entry_begin, entry_end) of one panel. A panel of more entries
// than the chunk length is split into `chunks` items; each writes its partial tile to workspace slot
// first_slot + chunk, and the last to finish sums the partials in chunk order and writes C.
struct TcWorkItem {
  int64_t entry_begin, entry_end;
  int64_t first_slot;   // split items: workspace slot of chunk 0 of this panel
  int32_t panel;
  int32_t chunk, chunks;
  int32_t split_index;  // split items: index of the panel among split panels (its arrival counter); else -1
  int32_t pad_;
};
static_assert(sizeof(TcWorkItem) == 48, "aligned work items");

}  // namespace sparsetc::detail

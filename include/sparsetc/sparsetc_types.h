/* sparsetc: types, enumerations and option structures of the C ABI.
 *
 * Rules this header keeps (see docs/architecture.md, "ABI rules"):
 *  - plain C11: fixed-width integers, opaque handles, enumerations with explicit values;
 *  - every enumeration is carried across the ABI as int32_t, so a value added by a later
 *    version can never be undefined behaviour in a binding (Rust, Julia): new values may appear;
 *  - structures that may grow begin with `size_t struct_size`, which the caller sets to sizeof;
 *    the library only reads or writes the fields that fit in it (append-only growth). */
#ifndef SPARSETC_TYPES_H
#define SPARSETC_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- opaque handles: one distinct type per object, so mixing them is a compile error ---- */
typedef struct sparsetc_handle_s* sparsetc_handle_t;           /* library context: backend, device, stream */
typedef struct sparsetc_matrix_s* sparsetc_matrix_t;           /* sparse matrix (CSR, CSC or COO) */
typedef struct sparsetc_dense_s* sparsetc_dense_t;             /* dense matrix descriptor (borrows memory) */
typedef struct sparsetc_spmm_plan_s* sparsetc_spmm_plan_t;     /* C = alpha op(A) B + beta C */
typedef struct sparsetc_spgemm_plan_s* sparsetc_spgemm_plan_t; /* C = op(A) op(B) */

/* ---- status codes: 0..11 are numerically equal to cusparseStatus_t; our own start at 100 ---- */
typedef int32_t sparsetc_status_t;
enum sparsetc_status_e {
  SPARSETC_STATUS_SUCCESS = 0,
  SPARSETC_STATUS_NOT_INITIALIZED = 1,
  SPARSETC_STATUS_ALLOC_FAILED = 2, /* out of host or device memory; a distinct code so callers may retry */
  SPARSETC_STATUS_INVALID_VALUE = 3,
  SPARSETC_STATUS_ARCH_MISMATCH = 4,
  SPARSETC_STATUS_MAPPING_ERROR = 5,
  SPARSETC_STATUS_EXECUTION_FAILED = 6,
  SPARSETC_STATUS_INTERNAL_ERROR = 7,
  SPARSETC_STATUS_MATRIX_TYPE_NOT_SUPPORTED = 8,
  SPARSETC_STATUS_ZERO_PIVOT = 9, /* reserved: cuSPARSE's value, never returned */
  SPARSETC_STATUS_NOT_SUPPORTED = 10,
  SPARSETC_STATUS_INSUFFICIENT_RESOURCES = 11,

  SPARSETC_STATUS_NULL_POINTER = 100,
  SPARSETC_STATUS_DIMENSION_MISMATCH = 101,
  SPARSETC_STATUS_INVALID_INDEX = 102,       /* an index outside [base, base + extent) */
  SPARSETC_STATUS_UNSORTED_INDICES = 103,
  SPARSETC_STATUS_DUPLICATE_ENTRY = 104,
  SPARSETC_STATUS_INVALID_ROW_OFFSETS = 105, /* offsets not monotone, offsets[0] != base, offsets[m] != nnz + base */
  SPARSETC_STATUS_NAN_OR_INF = 106,
  SPARSETC_STATUS_VALUE_OUT_OF_RANGE = 107,  /* a finite value that the requested precision cannot hold */
  SPARSETC_STATUS_TYPE_MISMATCH = 108,
  SPARSETC_STATUS_INVALID_STATE = 109,       /* calls out of order, e.g. numeric before symbolic */
  SPARSETC_STATUS_WORKSPACE_TOO_SMALL = 110,
  SPARSETC_STATUS_CUDA_ERROR = 111,
  SPARSETC_STATUS_CUSPARSE_ERROR = 112,
  SPARSETC_STATUS_CUBLAS_ERROR = 113,
  SPARSETC_STATUS_IO_ERROR = 114,            /* a file cannot be opened, read or written */
  SPARSETC_STATUS_FILE_FORMAT_ERROR = 115,   /* a file's contents do not parse; the message names the line */
  SPARSETC_STATUS_NO_DEVICE = 116,           /* the operation needs a GPU and none is usable */
  SPARSETC_STATUS_SIZE_OVERFLOW = 117,       /* a size does not fit the index type asked for */
  SPARSETC_STATUS_UNKNOWN_EXCEPTION = 118,
  SPARSETC_STATUS_MAX_ = 0x7FFFFFFF
};

/* ---- value types: numerically equal to cudaDataType_t ---- */
typedef int32_t sparsetc_value_type_t;
enum sparsetc_value_type_e {
  SPARSETC_VALUE_F32 = 0,   /* CUDA_R_32F */
  SPARSETC_VALUE_F64 = 1,   /* CUDA_R_64F */
  SPARSETC_VALUE_F16 = 2,   /* CUDA_R_16F */
  SPARSETC_VALUE_BF16 = 14, /* CUDA_R_16BF */
  SPARSETC_VALUE_MAX_ = 0x7FFFFFFF
};

/* ---- index types: numerically equal to cusparseIndexType_t ---- */
typedef int32_t sparsetc_index_type_t;
enum sparsetc_index_type_e {
  SPARSETC_INDEX_32 = 2, /* int32_t */
  SPARSETC_INDEX_64 = 3, /* int64_t */
  SPARSETC_INDEX_MAX_ = 0x7FFFFFFF
};

/* ---- index base: numerically equal to cusparseIndexBase_t ---- */
typedef int32_t sparsetc_index_base_t;
enum sparsetc_index_base_e {
  SPARSETC_BASE_ZERO = 0,
  SPARSETC_BASE_ONE = 1, /* Fortran */
  SPARSETC_BASE_MAX_ = 0x7FFFFFFF
};

/* ---- dense layout: numerically equal to cusparseOrder_t ---- */
typedef int32_t sparsetc_order_t;
enum sparsetc_order_e {
  SPARSETC_ORDER_COL = 1, /* column-major (Fortran, cuBLAS) */
  SPARSETC_ORDER_ROW = 2, /* row-major (C, NumPy default) */
  SPARSETC_ORDER_MAX_ = 0x7FFFFFFF
};

/* ---- operation on a matrix: numerically equal to cusparseOperation_t ---- */
typedef int32_t sparsetc_operation_t;
enum sparsetc_operation_e {
  SPARSETC_OP_NON_TRANSPOSE = 0,
  SPARSETC_OP_TRANSPOSE = 1,
  SPARSETC_OP_MAX_ = 0x7FFFFFFF
};

/* ---- sparse storage formats: numerically equal to cusparseFormat_t where it has them ---- */
typedef int32_t sparsetc_format_t;
enum sparsetc_format_e {
  SPARSETC_FORMAT_CSR = 1,
  SPARSETC_FORMAT_CSC = 2,
  SPARSETC_FORMAT_COO = 3,
  SPARSETC_FORMAT_MAX_ = 0x7FFFFFFF
};

/* ---- where an array lives ---- */
typedef int32_t sparsetc_memory_t;
enum sparsetc_memory_e {
  SPARSETC_MEMORY_HOST = 0,
  SPARSETC_MEMORY_DEVICE = 1,
  SPARSETC_MEMORY_MAX_ = 0x7FFFFFFF
};

/* ---- whether a created matrix copies the caller's arrays or borrows them ---- */
typedef int32_t sparsetc_ownership_t;
enum sparsetc_ownership_e {
  SPARSETC_COPY = 0,   /* the library copies the arrays; the caller may free them at once */
  SPARSETC_BORROW = 1, /* the library keeps the caller's pointers; they must outlive the matrix */
  SPARSETC_OWNERSHIP_MAX_ = 0x7FFFFFFF
};

/* ---- execution backend of a handle ---- */
typedef int32_t sparsetc_backend_t;
enum sparsetc_backend_e {
  SPARSETC_BACKEND_AUTO = 0, /* the GPU when one is usable, the CPU otherwise */
  SPARSETC_BACKEND_CPU = 1,  /* multithreaded host engine: also the float64 reference */
  SPARSETC_BACKEND_GPU = 2,  /* CUDA device; creation fails with SPARSETC_STATUS_NO_DEVICE without one */
  SPARSETC_BACKEND_MAX_ = 0x7FFFFFFF
};

/* ---- how thoroughly inputs are checked when a matrix is created ---- */
typedef int32_t sparsetc_validation_t;
enum sparsetc_validation_e {
  SPARSETC_VALIDATE_NONE = 0,      /* trust the structure (argument checks are still made) */
  SPARSETC_VALIDATE_ARGUMENTS = 1, /* pointers, sizes, enumerations */
  SPARSETC_VALIDATE_STRUCTURE = 2, /* + offsets, index ranges, sorting, duplicates (default) */
  SPARSETC_VALIDATE_VALUES = 3,    /* + NaN and Inf in the values */
  SPARSETC_VALIDATE_MAX_ = 0x7FFFFFFF
};

/* ---- what to do with duplicate (row, column) pairs in COO input ---- */
typedef int32_t sparsetc_duplicates_t;
enum sparsetc_duplicates_e {
  SPARSETC_DUPLICATES_ERROR = 0, /* SPARSETC_STATUS_DUPLICATE_ENTRY (default) */
  SPARSETC_DUPLICATES_SUM = 1,   /* add them, as Matrix Market readers and SciPy do */
  SPARSETC_DUPLICATES_MAX_ = 0x7FFFFFFF
};

/* ---- arithmetic of a multiply ---- */
typedef int32_t sparsetc_compute_type_t;
enum sparsetc_compute_type_e {
  SPARSETC_COMPUTE_DEFAULT = 0, /* f64 if any operand is f64, f32 otherwise */
  SPARSETC_COMPUTE_32F = 1,     /* fp32 accumulation (fp16/bf16 inputs are widened) */
  SPARSETC_COMPUTE_64F = 2,
  SPARSETC_COMPUTE_TF32 = 3,    /* fp32 inputs rounded to tf32 on tensor cores: reduced precision */
  SPARSETC_COMPUTE_MAX_ = 0x7FFFFFFF
};

/* ---- SpMM algorithms. Values marked (planned) are reserved for paths under construction: they
 *      return SPARSETC_STATUS_NOT_SUPPORTED from plan creation in this version. ---- */
typedef int32_t sparsetc_spmm_alg_t;
enum sparsetc_spmm_alg_e {
  SPARSETC_SPMM_ALG_AUTO = 0,       /* the library chooses; the plan reports what and why */
  SPARSETC_SPMM_ALG_CPU = 1,        /* host engine (CPU backend or host operands) */
  SPARSETC_SPMM_ALG_CUSPARSE = 2,   /* the vendor library, for comparison and as a fallback, in its own precision
                                       (its default algorithm sums in C's type when C is f16/bf16); a COO A must
                                       be in row order (NOT_SUPPORTED otherwise) */
  SPARSETC_SPMM_ALG_BCSR_TC = 3,    /* BCSR on tensor cores (mma.sync), 1-SA reordering when it pays */
  SPARSETC_SPMM_ALG_CSR = 4,        /* CSR on CUDA cores: groups of lanes per row, warps or CTAs for long rows */
  SPARSETC_SPMM_ALG_DCSR = 5,       /* the same over the non-empty rows only (doubly compressed rows) */
  SPARSETC_SPMM_ALG_TILED_DCSR = 6, /* B-stationary tiled DCSR (atomics: not bitwise deterministic) */
  SPARSETC_SPMM_ALG_VBR_CUBLAS = 7, /* 1-SA variable blocks (VBR) through grouped cuBLAS GEMMs */
  SPARSETC_SPMM_ALG_MAX_ = 0x7FFFFFFF
};

/* ---- SpGEMM algorithms (same convention as SpMM) ---- */
typedef int32_t sparsetc_spgemm_alg_t;
enum sparsetc_spgemm_alg_e {
  SPARSETC_SPGEMM_ALG_AUTO = 0,
  SPARSETC_SPGEMM_ALG_BINNED_MERGE_PATH = 1, /* GPU: Liu & Vinter's 4-stage binned SpGEMM (heap, bitonic ESC,
                                                progressive merge path), deterministic, row panels under a
                                                memory budget; AUTO's choice for device operands */
  SPARSETC_SPGEMM_ALG_TSPARSE_TC = 2,        /* GPU: tSparse 8x8 bitmap-tile SpGEMM on tensor cores (task list, bitwise
                                                symbolic, mma.sync); precision from sparsetc_spgemm_options_t.tc_precision;
                                                entries that cancel to zero are removed */
  SPARSETC_SPGEMM_ALG_CUSPARSE = 3,
  SPARSETC_SPGEMM_ALG_CPU = 4,               /* host Gustavson with a sparse accumulator, sorted output */
  SPARSETC_SPGEMM_ALG_MAX_ = 0x7FFFFFFF
};

/* ---- tensor-core precision of the tSparse SpGEMM (sparsetc_spgemm_options_t.tc_precision) ---- */
typedef int32_t sparsetc_tc_precision_t;
enum sparsetc_tc_precision_e {
  SPARSETC_TC_PRECISION_DEFAULT = 0,    /* from the operands: f64 operands or compute 64F -> F64; bf16 -> BF16;
                                           f16 and f32 -> F16 (f32 values beyond the fp16 range: VALUE_OUT_OF_RANGE) */
  SPARSETC_TC_PRECISION_F16 = 1,        /* fp16 inputs, fp32 accumulation (mma m16n8k16); C in f32 */
  SPARSETC_TC_PRECISION_BF16 = 2,       /* bf16 inputs (fp32 range), fp32 accumulation; C in f32 */
  SPARSETC_TC_PRECISION_F64 = 3,        /* fp64 tensor cores (mma m8n8k4), full double precision; C in f64 */
  SPARSETC_TC_PRECISION_CUDA_CORES = 4, /* the paper's nonTCU variant: fp32 on CUDA cores; C in f32 */
  SPARSETC_TC_PRECISION_F16_SPLIT = 5,  /* each value as fp16 hi + lo (22-bit significand, fp16 range), three
                                           m16n8k16 per tile pair (hi*hi + hi*lo + lo*hi); C in f32 */
  SPARSETC_TC_PRECISION_BF16_SPLIT = 6, /* each value as bf16 hi + lo (16-bit significand, fp32 range), three
                                           m16n8k16 per tile pair; C in f32 */
  SPARSETC_TC_PRECISION_MAX_ = 0x7FFFFFFF
};

/* ---- options and reports ---- */

/* Description of a matrix, filled by sparsetc_matrix_get_info. */
typedef struct sparsetc_matrix_info_t {
  size_t struct_size; /* set to sizeof(sparsetc_matrix_info_t) */
  int64_t rows;
  int64_t cols;
  int64_t nnz;
  sparsetc_format_t format;
  sparsetc_index_type_t offset_type;
  sparsetc_index_type_t index_type;
  sparsetc_index_base_t base;
  sparsetc_value_type_t value_type;
  sparsetc_memory_t memory;
  sparsetc_ownership_t ownership;
} sparsetc_matrix_info_t;

/* Structure statistics, filled by sparsetc_analyze. */
typedef struct sparsetc_analysis_t {
  size_t struct_size; /* set to sizeof(sparsetc_analysis_t) */
  int64_t rows;
  int64_t cols;
  int64_t nnz;
  int64_t empty_rows;
  int64_t row_length_min;
  int64_t row_length_max;
  double row_length_mean;
  double row_length_std;
  double density;       /* nnz / (rows * cols) */
  int64_t products;     /* multiplications of A·B (A·A when B is NULL and A is square), else -1 */
  int64_t bandwidth;    /* max |i - j| over stored entries */
  /* BCSR at the tensor-core block shapes: non-zero blocks, and fill = nnz / (blocks * h * w) */
  int64_t blocks_16x8;
  int64_t blocks_16x16;
  int64_t blocks_8x8;   /* also the number of 8x8 bitmap tiles (tSparse) */
  double fill_16x8;
  double fill_16x16;
  double fill_8x8;
  /* 8x8 bitmap tiles: density (stored elements / 64) over the non-empty tiles (tSparse, Table 1) */
  double tile_density_median;
  double tile_density_mean;
  double tile_density_std;
  /* DCSR statistics (Fujiki et al., Eq. 1-2) over vertical strips of strip_width columns */
  int64_t strip_width;  /* in: strip width, 0 for the default (256); out: the width used */
  int64_t nonempty_rows;                /* n_nnzrow */
  double nonempty_rows_per_strip_mean;  /* mean over strips of n_nnzrow_strip */
  double h_norm;                        /* normalized entropy of the row segments within strips */
  double ssf;                           /* sparsity skewness function */
} sparsetc_analysis_t;

/* Options of an SpGEMM plan; NULL means defaults. */
typedef struct sparsetc_spgemm_options_t {
  size_t struct_size;     /* set to sizeof(sparsetc_spgemm_options_t) */
  double drop_tolerance;  /* entries with |c| <= drop_tolerance are removed; < 0 keeps every entry (default -1);
                             CPU, binned and tSparse algorithms (cuSPARSE refuses one: NOT_SUPPORTED) */
  size_t memory_budget;   /* bytes of temporary memory the binned algorithm's work may take; more work is split
                             into row panels; 0 = half of the device memory free at plan creation (default) */
  sparsetc_tc_precision_t tc_precision; /* arithmetic of SPARSETC_SPGEMM_ALG_TSPARSE_TC (default 0: from the
                                           operand types); under AUTO a value other than DEFAULT allows the
                                           tensor-core path for f32 operands */
} sparsetc_spgemm_options_t;

/* Device memory from the caller (PyTorch, CuPy, RMM pools...). allocate returns 0 on success and
 * memory usable in the order of `stream` (a cudaStream_t); deallocate gets the pointer, the size
 * and the stream of its last use. */
typedef struct sparsetc_allocator_t {
  size_t struct_size; /* set to sizeof(sparsetc_allocator_t) */
  void* user_data;
  int32_t (*allocate)(void* user_data, void** ptr, size_t bytes, void* stream);
  void (*deallocate)(void* user_data, void* ptr, size_t bytes, void* stream);
} sparsetc_allocator_t;

/* Device memory of a handle, filled by sparsetc_get_memory_stats. */
typedef struct sparsetc_memory_stats_t {
  size_t struct_size;          /* set to sizeof(sparsetc_memory_stats_t) */
  int64_t current_bytes;       /* held now by the handle's matrices, plans and calls in flight */
  int64_t peak_bytes;          /* highest current_bytes since creation or the last reset */
  int64_t allocations;         /* allocations made so far */
  int64_t live_allocations;    /* allocations not yet released */
  int64_t pool_reserved_bytes; /* held by the handle's pool from the device, in use or cached
                                  (0 with the caller's allocator) */
} sparsetc_memory_stats_t;

/* Logging callback: level follows spdlog (0 trace … 5 critical). */
typedef void (*sparsetc_log_callback_t)(void* user_data, int32_t level, const char* message);

/* ---- row reordering (docs/reordering.md) ---- */

/* Methods of sparsetc_matrix_reorder. */
typedef int32_t sparsetc_reorder_method_t;
enum sparsetc_reorder_method_e {
  SPARSETC_REORDER_IDENTITY = 0, /* no permutation; groups of block_height consecutive rows */
  SPARSETC_REORDER_ONE_SA = 1,   /* 1-SA (Sylos Labini et al.): Jaccard on column-block patterns, density rule */
  SPARSETC_REORDER_SA = 2,       /* Saad's SA: cosine on exact columns against a group's first row (baseline) */
  SPARSETC_REORDER_AUTO = 3,     /* 1-SA when it cuts the block count without worsening the balance, else identity */
  SPARSETC_REORDER_MAX_ = 0x7FFFFFFF
};

/* Options of sparsetc_matrix_reorder; NULL means defaults, and so does a zero in tau, block_width,
 * block_height and auto_min_reduction (a zero-initialised struct with struct_size set is the default). */
typedef struct sparsetc_reorder_options_t {
  size_t struct_size;         /* set to sizeof(sparsetc_reorder_options_t) */
  double tau;                 /* similarity threshold in (0, 1]; 0: default 0.5 */
  int64_t block_width;        /* Δ_W, width of the column partition; 0: default 8 (k of the 16x8 MMA block) */
  int64_t block_height;       /* h of the blocks measured and padded to; 0: default 16 */
  int64_t max_group_height;   /* rows per group at most; 0: unlimited (default) */
  int32_t pad_groups;         /* 1: top every group up to a multiple of block_height with the most similar
                                 remaining rows (the density guarantee then covers the unpadded part); 0: off */
  int32_t reserved;           /* set to 0 */
  double auto_min_reduction;  /* AUTO keeps 1-SA only if it removes more than this fraction of the
                                 block_height x block_width blocks, in [0, 1); 0: default 0.05 (the
                                 permuted output costs a little); any reduction: e.g. 1e-9 */
} sparsetc_reorder_options_t;

/* Blocking quality of a matrix, filled by sparsetc_matrix_get_reorder_quality. BCSR figures are for
 * fixed block_height x block_width blocks over the stored row order; VBR figures are for the
 * matrix's groups (those of its reordering, else block_height chunks) times column blocks. */
typedef struct sparsetc_reorder_quality_t {
  size_t struct_size;               /* set to sizeof(sparsetc_reorder_quality_t) */
  int64_t block_height;             /* the h x w measured */
  int64_t block_width;
  int64_t blocks;                   /* non-zero h x w blocks */
  double in_block_density;          /* nnz / (blocks * h * w) */
  int64_t block_rows;               /* ceil(rows / h) */
  double blocks_per_block_row_mean;
  double blocks_per_block_row_std;  /* population standard deviation: the load balance of a block-row kernel */
  int64_t blocks_per_block_row_max;
  int64_t groups;
  double mean_group_height;         /* rows / groups */
  int64_t vbr_blocks;               /* non-zero (group, column block) pairs */
  double vbr_in_block_density;      /* the 1-SA paper's rho': nnz over the area of those blocks */
  double vbr_mean_block_height;     /* the 1-SA paper's Δ'_H: mean height of those blocks */
} sparsetc_reorder_quality_t;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SPARSETC_TYPES_H */

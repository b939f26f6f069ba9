/* sparsetc: sparse matrix multiplication on NVIDIA tensor cores, with a stable C ABI.
 *
 * Every function returns a sparsetc_status_t except the static-string getters. On failure the
 * handle keeps a message naming the first offending argument, row or entry
 * (sparsetc_get_last_error); failures before a handle exists are kept per thread (pass NULL).
 * A handle, and the plans made from it, must not be used by two threads at once; matrices may be
 * shared read-only. All work on the GPU backend is ordered on the handle's stream. */
#ifndef SPARSETC_H
#define SPARSETC_H

#include "sparsetc/sparsetc_export.h"
#include "sparsetc/sparsetc_types.h"
#include "sparsetc/sparsetc_version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================= library information */

/* Library version of the loaded binary (not of the header it was compiled with). */
SPARSETC_API sparsetc_status_t sparsetc_get_version(int32_t* major, int32_t* minor, int32_t* patch);
/* ABI version: the number in the SONAME, libsparsetc.so.<abi>. */
SPARSETC_API sparsetc_status_t sparsetc_get_abi_version(int32_t* abi);
/* Build description (version, git revision, CUDA version, architectures) as a NUL-terminated
 * string, truncated to buffer_size. */
SPARSETC_API sparsetc_status_t sparsetc_get_build_info(char* buffer, size_t buffer_size);
/* Static strings: never NULL, never freed. Unknown values give "SPARSETC_STATUS_UNKNOWN" and
 * "unknown status". */
SPARSETC_API const char* sparsetc_get_status_name(sparsetc_status_t status);
SPARSETC_API const char* sparsetc_get_status_string(sparsetc_status_t status);
/* Number of usable CUDA devices (0 on a machine without a GPU or without a driver). */
SPARSETC_API sparsetc_status_t sparsetc_get_device_count(int32_t* count);

/* ======================================================================= handle */

/* Creates a handle on SPARSETC_BACKEND_AUTO: the current CUDA device when one is usable, the CPU
 * otherwise. */
SPARSETC_API sparsetc_status_t sparsetc_create(sparsetc_handle_t* handle);
/* Creates a handle on a chosen backend; device is the CUDA ordinal (ignored on the CPU). */
SPARSETC_API sparsetc_status_t sparsetc_create_with_backend(sparsetc_handle_t* handle,
                                                            sparsetc_backend_t backend, int32_t device);
/* Destroys a handle. Matrices and plans made from it must be destroyed first. NULL is a no-op. */
SPARSETC_API sparsetc_status_t sparsetc_destroy(sparsetc_handle_t handle);
SPARSETC_API sparsetc_status_t sparsetc_get_backend(sparsetc_handle_t handle, sparsetc_backend_t* backend);
/* The stream (a cudaStream_t) on which the handle orders its device work; NULL is the default
 * stream. Ignored by the CPU backend. */
SPARSETC_API sparsetc_status_t sparsetc_set_stream(sparsetc_handle_t handle, void* stream);
SPARSETC_API sparsetc_status_t sparsetc_get_stream(sparsetc_handle_t handle, void** stream);
/* Input checking applied when matrices are created (default SPARSETC_VALIDATE_STRUCTURE; the
 * environment variable SPARSETC_VALIDATE sets the default of new handles). */
SPARSETC_API sparsetc_status_t sparsetc_set_validation(sparsetc_handle_t handle, sparsetc_validation_t level);
SPARSETC_API sparsetc_status_t sparsetc_get_validation(sparsetc_handle_t handle, sparsetc_validation_t* level);
/* How COO creation treats repeated (row, column) pairs (default SPARSETC_DUPLICATES_ERROR). */
SPARSETC_API sparsetc_status_t sparsetc_set_duplicates(sparsetc_handle_t handle, sparsetc_duplicates_t policy);
/* Host threads of the CPU engine's multiplications; 0 (default) means OpenMP's default
 * (OMP_NUM_THREADS, else one per hardware thread). Validation and conversions use the default. */
SPARSETC_API sparsetc_status_t sparsetc_set_num_threads(sparsetc_handle_t handle, int32_t threads);
/* Device memory: by default each GPU handle allocates from a stream-ordered pool of its own, which
 * keeps freed memory cached for the next call. A caller's allocator replaces it (NULL restores the
 * pool); it can be changed only while the handle holds no device memory
 * (SPARSETC_STATUS_INVALID_STATE otherwise). NOT_SUPPORTED on the CPU backend. */
SPARSETC_API sparsetc_status_t sparsetc_set_allocator(sparsetc_handle_t handle, const sparsetc_allocator_t* allocator);
/* Device memory statistics of the handle (all zero on the CPU backend). */
SPARSETC_API sparsetc_status_t sparsetc_get_memory_stats(sparsetc_handle_t handle, sparsetc_memory_stats_t* stats);
SPARSETC_API sparsetc_status_t sparsetc_reset_peak_memory(sparsetc_handle_t handle);
/* Copies the message of the last failure on this handle (NULL: of this thread's last failure
 * without a handle) into buffer, truncated to buffer_size. Empty after a success. */
SPARSETC_API sparsetc_status_t sparsetc_get_last_error(sparsetc_handle_t handle, char* buffer,
                                                       size_t buffer_size);

/* ======================================================================= logging */

/* Log level: 0 trace, 1 debug, 2 info, 3 warn, 4 error, 5 critical, 6 off (default, or the
 * environment variable SPARSETC_LOG_LEVEL: a number or a name such as "debug"). Process-wide. */
SPARSETC_API sparsetc_status_t sparsetc_set_log_level(int32_t level);
/* Sends log lines to a callback instead of standard error; NULL restores standard error. */
SPARSETC_API sparsetc_status_t sparsetc_set_log_callback(sparsetc_log_callback_t callback, void* user_data);

/* ======================================================================= sparse matrices */

/* Creates a CSR matrix from arrays in host or device memory.
 *   row_offsets: rows + 1 entries of offset_type; col_indices, values: nnz entries.
 *   values may be NULL only when nnz == 0.
 * With SPARSETC_COPY the arrays are copied (and may be freed at once: a copy from device memory
 * waits on the handle's stream); with SPARSETC_BORROW they are kept and must outlive the matrix.
 * Checks follow the handle's validation level; argument checks (pointers, enumerations, sizes)
 * are made at every level. A matrix must outlive the plans made from it, and a device matrix the
 * stream it was created on. */
SPARSETC_API sparsetc_status_t sparsetc_matrix_create_csr(
    sparsetc_handle_t handle, sparsetc_matrix_t* matrix, int64_t rows, int64_t cols, int64_t nnz,
    const void* row_offsets, const void* col_indices, const void* values, sparsetc_index_type_t offset_type,
    sparsetc_index_type_t index_type, sparsetc_index_base_t base, sparsetc_value_type_t value_type,
    sparsetc_memory_t memory, sparsetc_ownership_t ownership);

/* Creates a CSC matrix: col_offsets has cols + 1 entries, row_indices nnz. */
SPARSETC_API sparsetc_status_t sparsetc_matrix_create_csc(
    sparsetc_handle_t handle, sparsetc_matrix_t* matrix, int64_t rows, int64_t cols, int64_t nnz,
    const void* col_offsets, const void* row_indices, const void* values, sparsetc_index_type_t offset_type,
    sparsetc_index_type_t index_type, sparsetc_index_base_t base, sparsetc_value_type_t value_type,
    sparsetc_memory_t memory, sparsetc_ownership_t ownership);

/* Creates a COO matrix: row_indices, col_indices and values have nnz entries, in any order.
 * Duplicates follow sparsetc_set_duplicates. */
SPARSETC_API sparsetc_status_t sparsetc_matrix_create_coo(
    sparsetc_handle_t handle, sparsetc_matrix_t* matrix, int64_t rows, int64_t cols, int64_t nnz,
    const void* row_indices, const void* col_indices, const void* values, sparsetc_index_type_t index_type,
    sparsetc_index_base_t base, sparsetc_value_type_t value_type, sparsetc_memory_t memory,
    sparsetc_ownership_t ownership);

/* Reads a Matrix Market file (.mtx, or gzip-compressed .mtx.gz) of any field (real, integer,
 * pattern; complex is refused) and symmetry (general, symmetric, skew-symmetric, hermitian:
 * expanded to both triangles). Pattern entries get the value 1. The result is a zero-based CSR
 * matrix in host memory with the given value type and index_type for both offsets and indices;
 * duplicates are summed. Dense "array" files are read too. Parse errors give
 * SPARSETC_STATUS_FILE_FORMAT_ERROR with the line number. */
SPARSETC_API sparsetc_status_t sparsetc_matrix_read_mtx(sparsetc_handle_t handle, const char* path,
                                                       sparsetc_value_type_t value_type,
                                                       sparsetc_index_type_t index_type, sparsetc_matrix_t* matrix);
/* Writes a matrix as "matrix coordinate real general" with 17 significant digits (exact for
 * doubles); a path ending in ".gz" is written gzip-compressed. */
SPARSETC_API sparsetc_status_t sparsetc_matrix_write_mtx(sparsetc_handle_t handle, sparsetc_matrix_t matrix,
                                                        const char* path);

/* Creates a generated matrix in host memory (CSR, zero-based, int64 offsets, int32 indices).
 * spec, with defaults in brackets:
 *   band:n:half_width            poisson2d5:g   poisson3d7:g   poisson3d27:g
 *   rmat:scale:degree[:a:b:c]    uniform:n:per_row[:cols]
 *   blocks:n:delta:theta:rho     (scrambled random blocks of the 1-SA paper)
 * Values are uniform in ±[0.5, 1.5] drawn from seed. */
SPARSETC_API sparsetc_status_t sparsetc_matrix_generate(sparsetc_handle_t handle, const char* spec, uint64_t seed,
                                                       sparsetc_value_type_t value_type, sparsetc_matrix_t* matrix);

/* Copies a matrix to another memory space, format-preserving (the result owns its arrays). */
SPARSETC_API sparsetc_status_t sparsetc_matrix_copy_to(sparsetc_handle_t handle, sparsetc_matrix_t source,
                                                      sparsetc_memory_t memory, sparsetc_matrix_t* copy);
/* Converts a matrix to CSR, CSC or COO with the given index types, base and value type, in the
 * same memory space (device matrices on a GPU handle convert to CSR/CSC on the device). Value
 * conversion to f16/bf16 fails with SPARSETC_STATUS_VALUE_OUT_OF_RANGE naming the first value that
 * does not fit. */
SPARSETC_API sparsetc_status_t sparsetc_matrix_convert(sparsetc_handle_t handle, sparsetc_matrix_t source,
                                                      sparsetc_format_t format, sparsetc_index_type_t offset_type,
                                                      sparsetc_index_type_t index_type, sparsetc_index_base_t base,
                                                      sparsetc_value_type_t value_type, sparsetc_matrix_t* result);

SPARSETC_API sparsetc_status_t sparsetc_matrix_get_info(sparsetc_matrix_t matrix, sparsetc_matrix_info_t* info);
/* The matrix's arrays in its own format and types (CSR: offsets, indices, values; CSC: column
 * offsets, row indices, values; COO: row indices, column indices, values). Any output may be NULL. */
SPARSETC_API sparsetc_status_t sparsetc_matrix_get_arrays(sparsetc_matrix_t matrix, void** offsets_or_rows,
                                                         void** indices, void** values);
/* Replaces the values, keeping the pattern (nnz entries of the matrix's value type, in its memory
 * space). Plans made from the matrix see the new values at their next execution. */
SPARSETC_API sparsetc_status_t sparsetc_matrix_set_values(sparsetc_handle_t handle, sparsetc_matrix_t matrix,
                                                         const void* values);
/* Checks a matrix at a validation level without changing it (first offender in the message). */
SPARSETC_API sparsetc_status_t sparsetc_matrix_check(sparsetc_handle_t handle, sparsetc_matrix_t matrix,
                                                    sparsetc_validation_t level);
/* NULL is a no-op. */
SPARSETC_API sparsetc_status_t sparsetc_matrix_destroy(sparsetc_matrix_t matrix);

/* ======================================================================= dense matrices */

/* Describes a dense matrix in the caller's memory (never copied). ld >= rows for column-major,
 * ld >= cols for row-major. values may be NULL until sparsetc_dense_set_values. */
SPARSETC_API sparsetc_status_t sparsetc_dense_create(sparsetc_handle_t handle, sparsetc_dense_t* dense,
                                                    int64_t rows, int64_t cols, int64_t ld, void* values,
                                                    sparsetc_value_type_t value_type, sparsetc_order_t order,
                                                    sparsetc_memory_t memory);
SPARSETC_API sparsetc_status_t sparsetc_dense_set_values(sparsetc_dense_t dense, void* values);
SPARSETC_API sparsetc_status_t sparsetc_dense_get(sparsetc_dense_t dense, int64_t* rows, int64_t* cols, int64_t* ld,
                                                 void** values, sparsetc_value_type_t* value_type,
                                                 sparsetc_order_t* order, sparsetc_memory_t* memory);
SPARSETC_API sparsetc_status_t sparsetc_dense_destroy(sparsetc_dense_t dense);

/* ======================================================================= analysis */

/* Structure statistics of A, and the products of A·B when B is given (B may be NULL). */
SPARSETC_API sparsetc_status_t sparsetc_analyze(sparsetc_handle_t handle, sparsetc_matrix_t A, sparsetc_matrix_t B,
                                               sparsetc_analysis_t* analysis);

/* ======================================================================= SpMM: C = alpha op(A) B + beta C */

/* Creates a plan for A and the shapes, types and layouts of B and C (their pointers are taken at
 * execution). Preprocessing (analysis, conversion, reordering) happens here, once. */
SPARSETC_API sparsetc_status_t sparsetc_spmm_plan_create(sparsetc_handle_t handle, sparsetc_spmm_plan_t* plan,
                                                        sparsetc_operation_t op_a, sparsetc_matrix_t A,
                                                        sparsetc_dense_t B, sparsetc_dense_t C,
                                                        sparsetc_compute_type_t compute_type,
                                                        sparsetc_spmm_alg_t alg);
/* Device workspace an execution needs; pass a buffer at least this large to execute, or NULL to
 * let the library allocate it on the handle's stream. */
SPARSETC_API sparsetc_status_t sparsetc_spmm_workspace_size(sparsetc_spmm_plan_t plan, size_t* bytes);
/* Executes the plan on B and C descriptors of the planned shapes, types and layouts. With
 * beta == 0, C is not read (NaN in C does not propagate). */
SPARSETC_API sparsetc_status_t sparsetc_spmm_execute(sparsetc_spmm_plan_t plan, double alpha, sparsetc_dense_t B,
                                                    double beta, sparsetc_dense_t C, void* workspace,
                                                    size_t workspace_bytes);
/* The algorithm the plan runs (the choice of AUTO) and a NUL-terminated reason. */
SPARSETC_API sparsetc_status_t sparsetc_spmm_plan_get_alg(sparsetc_spmm_plan_t plan, sparsetc_spmm_alg_t* alg,
                                                         char* reason, size_t reason_size);
SPARSETC_API sparsetc_status_t sparsetc_spmm_plan_destroy(sparsetc_spmm_plan_t plan);
/* One call: plan, execute, destroy. */
SPARSETC_API sparsetc_status_t sparsetc_spmm(sparsetc_handle_t handle, sparsetc_operation_t op_a, double alpha,
                                            sparsetc_matrix_t A, sparsetc_dense_t B, double beta, sparsetc_dense_t C,
                                            sparsetc_compute_type_t compute_type, sparsetc_spmm_alg_t alg);

/* ======================================================================= SpGEMM: C = op(A) op(B) */

/* Creates a plan: validates shapes and types, analyses the product (products count, memory
 * estimate). options may be NULL. */
SPARSETC_API sparsetc_status_t sparsetc_spgemm_plan_create(sparsetc_handle_t handle, sparsetc_spgemm_plan_t* plan,
                                                          sparsetc_operation_t op_a, sparsetc_matrix_t A,
                                                          sparsetc_operation_t op_b, sparsetc_matrix_t B,
                                                          sparsetc_compute_type_t compute_type,
                                                          sparsetc_spgemm_alg_t alg,
                                                          const sparsetc_spgemm_options_t* options);
/* Computes the pattern of C and returns nnz(C) (a synchronisation point on the GPU backend). With a
 * drop tolerance, C may end up with fewer entries than this count. The tSparse algorithm returns the
 * exact count for the operands' values at this call (it removes entries that cancel to zero); after
 * new values (sparsetc_matrix_set_values), numeric makes a new C whose count may differ. */
SPARSETC_API sparsetc_status_t sparsetc_spgemm_symbolic(sparsetc_spgemm_plan_t plan, int64_t* nnz_c);
/* Computes the values of C from the current values of A and B (repeatable: call again after
 * sparsetc_matrix_set_values on A or B to recompute with the same pattern).
 * *C == NULL: creates C (CSR with the compute type's values, in the operands' memory space; the
 *   caller destroys it). Host engine: zero-based, int64 offsets, int32 indices when they fit else
 *   int64. cuSPARSE path: int32 offsets and indices, in A's index base.
 * *C != NULL: a matrix made by an earlier call on this plan; its values are overwritten. */
SPARSETC_API sparsetc_status_t sparsetc_spgemm_numeric(sparsetc_spgemm_plan_t plan, sparsetc_matrix_t* C);
/* Products count of the plan (-1 where the algorithm does not count them, as cuSPARSE), and an
 * estimate of the bytes of working memory its execution takes. */
SPARSETC_API sparsetc_status_t sparsetc_spgemm_plan_get_estimate(sparsetc_spgemm_plan_t plan, int64_t* products,
                                                                size_t* memory_bytes);
SPARSETC_API sparsetc_status_t sparsetc_spgemm_plan_get_alg(sparsetc_spgemm_plan_t plan,
                                                           sparsetc_spgemm_alg_t* alg, char* reason,
                                                           size_t reason_size);
SPARSETC_API sparsetc_status_t sparsetc_spgemm_plan_destroy(sparsetc_spgemm_plan_t plan);
/* One call: plan, symbolic, numeric into a new matrix *C, destroy. */
SPARSETC_API sparsetc_status_t sparsetc_spgemm(sparsetc_handle_t handle, sparsetc_operation_t op_a,
                                              sparsetc_matrix_t A, sparsetc_operation_t op_b, sparsetc_matrix_t B,
                                              sparsetc_compute_type_t compute_type, sparsetc_spgemm_alg_t alg,
                                              sparsetc_matrix_t* C);

/* ======================================================================= reordering */

/* Reorders the rows of A for blocked multiplication (docs/reordering.md). The result is a new CSR
 * matrix in A's memory space, offset/index types, base and value type, whose row i is row
 * permutation[i] of A; it remembers the permutation and the groups of the blocking, and every
 * multiply on it returns its result in A's row order (so it can replace A). Reordering a
 * reordered matrix composes the permutations. options may be NULL. A device matrix is read
 * through the host (a synchronisation point); multiplying a reordered device matrix is not
 * supported in this version. */
SPARSETC_API sparsetc_status_t sparsetc_matrix_reorder(sparsetc_handle_t handle, sparsetc_matrix_t A,
                                                      sparsetc_reorder_method_t method,
                                                      const sparsetc_reorder_options_t* options,
                                                      sparsetc_matrix_t* reordered);
/* The permutation of a matrix (rows entries, stored row i = original row permutation[i]; the
 * identity for a matrix that was never reordered) and its groups: *groups gets their count (0 when
 * none is recorded), group_ptr the groups + 1 row offsets of the groups. Any output may be NULL:
 * call once with group_ptr NULL to learn the count. */
SPARSETC_API sparsetc_status_t sparsetc_matrix_get_permutation(sparsetc_matrix_t matrix, int64_t* permutation,
                                                              int64_t* groups, int64_t* group_ptr);
/* Applies a permutation (rows entries, each of 0 .. rows-1 once): result row i is row
 * permutation[i] of A. The result remembers it like a reordered matrix (no groups), so multiplies
 * still answer in A's row order. INVALID_VALUE names the first repeated or out-of-range entry. */
SPARSETC_API sparsetc_status_t sparsetc_matrix_permute_rows(sparsetc_handle_t handle, sparsetc_matrix_t A,
                                                           const int64_t* permutation, sparsetc_matrix_t* result);
/* Blocking quality of the matrix's stored row order at block_height x block_width (0: 16 and 8). */
SPARSETC_API sparsetc_status_t sparsetc_matrix_get_reorder_quality(sparsetc_handle_t handle,
                                                                  sparsetc_matrix_t matrix, int64_t block_height,
                                                                  int64_t block_width,
                                                                  sparsetc_reorder_quality_t* quality);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SPARSETC_H */

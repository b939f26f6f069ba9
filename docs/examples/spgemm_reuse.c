/* SpGEMM with plan reuse: C = A A, then A's values change (same pattern) and C is recomputed
 * from the same plan without redoing the symbolic phase. This is the AMG pattern: the
 * structure of a Galerkin product is fixed, its values change every setup.
 *
 *   cc -std=c11 spgemm_reuse.c $(pkg-config --cflags --libs sparsetc) -o spgemm_reuse
 *
 * Exits with status 1 if a result differs from the product worked out by hand. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <sparsetc/sparsetc.h>

#define CHECK(h, call)                                                                       \
  do {                                                                                       \
    sparsetc_status_t s_ = (call);                                                           \
    if (s_ != SPARSETC_STATUS_SUCCESS) {                                                     \
      char msg_[512];                                                                        \
      sparsetc_get_last_error((h), msg_, sizeof msg_);                                       \
      fprintf(stderr, "%s: %s (%d): %s\n", #call, sparsetc_get_status_name(s_), (int)s_, msg_); \
      exit(EXIT_FAILURE);                                                                    \
    }                                                                                        \
  } while (0)

/* Compares C (CSR, int64 offsets, int32 indices: what the host engine returns) with the
 * expected rows; returns the number of differences. */
static int compare(sparsetc_matrix_t C, const int64_t* offsets, const int32_t* cols, const double* vals) {
  sparsetc_matrix_info_t info = {0};
  info.struct_size = sizeof info;
  CHECK(NULL, sparsetc_matrix_get_info(C, &info));
  if (info.rows != 3 || info.cols != 3 || info.nnz != 5 || info.offset_type != SPARSETC_INDEX_64 ||
      info.index_type != SPARSETC_INDEX_32 || info.value_type != SPARSETC_VALUE_F64)
    return 1;
  void *p, *c, *v;
  CHECK(NULL, sparsetc_matrix_get_arrays(C, &p, &c, &v));
  int bad = 0;
  for (int i = 0; i <= 3; ++i) bad += ((const int64_t*)p)[i] != offsets[i];
  for (int e = 0; e < 5; ++e) {
    bad += ((const int32_t*)c)[e] != cols[e];
    bad += fabs(((const double*)v)[e] - vals[e]) > 1e-12;
  }
  return bad;
}

int main(void) {
  sparsetc_handle_t h = NULL;
  CHECK(NULL, sparsetc_create_with_backend(&h, SPARSETC_BACKEND_CPU, 0));

  /* A = [1 0 2]
   *     [0 0 0]
   *     [3 4 0] */
  const int32_t row_offsets[4] = {0, 2, 2, 4};
  const int32_t col_indices[4] = {0, 2, 0, 1};
  const double values[4] = {1, 2, 3, 4};
  sparsetc_matrix_t A = NULL;
  CHECK(h, sparsetc_matrix_create_csr(h, &A, 3, 3, 4, row_offsets, col_indices, values, SPARSETC_INDEX_32,
                                      SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64,
                                      SPARSETC_MEMORY_HOST, SPARSETC_COPY));

  sparsetc_spgemm_plan_t plan = NULL;
  CHECK(h, sparsetc_spgemm_plan_create(h, &plan, SPARSETC_OP_NON_TRANSPOSE, A, SPARSETC_OP_NON_TRANSPOSE, A,
                                       SPARSETC_COMPUTE_DEFAULT, SPARSETC_SPGEMM_ALG_AUTO, NULL));
  int64_t products = 0, nnz = 0;
  size_t memory = 0;
  CHECK(h, sparsetc_spgemm_plan_get_estimate(plan, &products, &memory));
  CHECK(h, sparsetc_spgemm_symbolic(plan, &nnz)); /* the pattern of C, once */
  printf("spgemm: %lld products, nnz(C) = %lld\n", (long long)products, (long long)nnz);

  /* A A = [7 8 2]
   *       [0 0 0]
   *       [3 0 6] */
  const int64_t want_offsets[4] = {0, 3, 3, 5};
  const int32_t want_cols[5] = {0, 1, 2, 0, 2};
  const double want_vals[5] = {7, 8, 2, 3, 6};
  sparsetc_matrix_t C = NULL;
  CHECK(h, sparsetc_spgemm_numeric(plan, &C)); /* C == NULL: creates C */
  int bad = compare(C, want_offsets, want_cols, want_vals);

  const double doubled[4] = {2, 4, 6, 8};
  CHECK(h, sparsetc_matrix_set_values(h, A, doubled)); /* same pattern, new values */
  CHECK(h, sparsetc_spgemm_numeric(plan, &C));         /* overwrites C's values: (2A)^2 = 4 A^2 */
  double want_vals4[5];
  for (int e = 0; e < 5; ++e) want_vals4[e] = 4 * want_vals[e];
  bad += compare(C, want_offsets, want_cols, want_vals4);

  CHECK(h, sparsetc_spgemm_plan_destroy(plan));
  CHECK(NULL, sparsetc_matrix_destroy(C));
  CHECK(NULL, sparsetc_matrix_destroy(A));
  CHECK(NULL, sparsetc_destroy(h));
  if (bad) {
    fprintf(stderr, "spgemm_reuse: %d differences\n", bad);
    return EXIT_FAILURE;
  }
  printf("spgemm_reuse: ok\n");
  return EXIT_SUCCESS;
}

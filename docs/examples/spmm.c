/* SpMM through a plan: C = A B with a CSR matrix A and column-major B and C, then the plan
 * executed again with new contents of B and C = 2 A B + C.
 *
 *   cc -std=c11 spmm.c $(pkg-config --cflags --libs sparsetc) -o spmm
 *
 * Runs on the host (the CPU engine). For device operands create A with SPARSETC_MEMORY_DEVICE
 * (or sparsetc_matrix_copy_to) and the descriptors over cudaMalloc'ed buffers: AUTO then picks
 * a GPU path. Exits with status 1 if a result differs from the product worked out by hand. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <sparsetc/sparsetc.h>

/* h: the handle the call used, or NULL for calls without one. */
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

enum { M = 3, K = 3, N = 2 };

int main(void) {
  sparsetc_handle_t h = NULL;
  CHECK(NULL, sparsetc_create(&h)); /* GPU backend when a device is usable, else CPU */

  /* A = [1 0 2]
   *     [0 0 0]
   *     [3 4 0]   3x3, 4 entries, zero-based CSR */
  const int32_t row_offsets[M + 1] = {0, 2, 2, 4};
  const int32_t col_indices[4] = {0, 2, 0, 1};
  const double values[4] = {1, 2, 3, 4};
  sparsetc_matrix_t A = NULL;
  CHECK(h, sparsetc_matrix_create_csr(h, &A, M, K, 4, row_offsets, col_indices, values, SPARSETC_INDEX_32,
                                      SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64,
                                      SPARSETC_MEMORY_HOST, SPARSETC_COPY));

  double B[K * N] = {1, 1, 1,  /* column 0 */
                     0, 1, 2}; /* column 1 */
  double C[M * N];
  sparsetc_dense_t b = NULL, c = NULL;
  CHECK(h, sparsetc_dense_create(h, &b, K, N, K, B, SPARSETC_VALUE_F64, SPARSETC_ORDER_COL, SPARSETC_MEMORY_HOST));
  CHECK(h, sparsetc_dense_create(h, &c, M, N, M, C, SPARSETC_VALUE_F64, SPARSETC_ORDER_COL, SPARSETC_MEMORY_HOST));

  /* The plan analyses A once; its executions take B's and C's pointers anew each time. */
  sparsetc_spmm_plan_t plan = NULL;
  CHECK(h, sparsetc_spmm_plan_create(h, &plan, SPARSETC_OP_NON_TRANSPOSE, A, b, c, SPARSETC_COMPUTE_DEFAULT,
                                     SPARSETC_SPMM_ALG_AUTO));
  sparsetc_spmm_alg_t alg;
  char reason[128];
  CHECK(h, sparsetc_spmm_plan_get_alg(plan, &alg, reason, sizeof reason));
  printf("spmm: algorithm %d (%s)\n", (int)alg, reason);

  CHECK(h, sparsetc_spmm_execute(plan, 1.0, b, 0.0, c, NULL, 0)); /* C = A B; beta 0: C is not read */
  const double want1[M * N] = {3, 0, 7, 4, 0, 4};
  int bad = 0;
  for (int i = 0; i < M * N; ++i) bad += fabs(C[i] - want1[i]) > 1e-12;

  B[0] = 2; /* new contents, same layout: execute again, now C = 2 A B + C */
  CHECK(h, sparsetc_spmm_execute(plan, 2.0, b, 1.0, c, NULL, 0));
  const double want2[M * N] = {3 + 2 * 4, 0, 7 + 2 * 10, 4 + 2 * 4, 0, 4 + 2 * 4};
  for (int i = 0; i < M * N; ++i) bad += fabs(C[i] - want2[i]) > 1e-12;
  printf("spmm: C = [%g %g; %g %g; %g %g]\n", C[0], C[3], C[1], C[4], C[2], C[5]);

  CHECK(h, sparsetc_spmm_plan_destroy(plan));
  CHECK(NULL, sparsetc_dense_destroy(b));
  CHECK(NULL, sparsetc_dense_destroy(c));
  CHECK(NULL, sparsetc_matrix_destroy(A));
  CHECK(NULL, sparsetc_destroy(h));
  if (bad) {
    fprintf(stderr, "spmm: %d wrong entries\n", bad);
    return EXIT_FAILURE;
  }
  printf("spmm: ok\n");
  return EXIT_SUCCESS;
}

/* Error handling: every call returns a status; the handle keeps a message naming the first
 * offending argument, row or entry, and failures without a handle are kept per thread.
 *
 *   cc -std=c11 error_handling.c $(pkg-config --cflags --libs sparsetc) -o error_handling
 *
 * Exits with status 1 if a failure is not reported as documented. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sparsetc/sparsetc.h>

static int failures = 0;

/* Reports a failed call the way an application would, and checks status and message. */
static void expect_failure(sparsetc_handle_t h, sparsetc_status_t got, sparsetc_status_t want,
                           const char* message_part) {
  char message[512];
  sparsetc_get_last_error(h, message, sizeof message);
  printf("%-36s %s\n", sparsetc_get_status_name(got), message);
  if (got != want || strstr(message, message_part) == NULL) {
    fprintf(stderr, "  expected %s with \"%s\"\n", sparsetc_get_status_name(want), message_part);
    ++failures;
  }
}

int main(void) {
  sparsetc_handle_t h = NULL;
  sparsetc_status_t s = sparsetc_create_with_backend(&h, SPARSETC_BACKEND_CPU, 0);
  if (s != SPARSETC_STATUS_SUCCESS) {
    char message[256];
    sparsetc_get_last_error(NULL, message, sizeof message); /* no handle: this thread's message */
    fprintf(stderr, "sparsetc_create_with_backend: %s: %s\n", sparsetc_get_status_name(s), message);
    return EXIT_FAILURE;
  }

  const int32_t row_offsets[4] = {0, 2, 2, 4};
  const int32_t bad_cols[4] = {0, 2, 0, 3}; /* 3 is out of range for 3 columns */
  const double values[4] = {1, 2, 3, 4};
  sparsetc_matrix_t A = NULL;

  /* A structural error: the message names the row and entry. */
  s = sparsetc_matrix_create_csr(h, &A, 3, 3, 4, row_offsets, bad_cols, values, SPARSETC_INDEX_32,
                                 SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64, SPARSETC_MEMORY_HOST,
                                 SPARSETC_COPY);
  expect_failure(h, s, SPARSETC_STATUS_INVALID_INDEX, "row 2");
  if (A != NULL) ++failures; /* outputs are NULL after a failure */

  /* The same matrix one-based: positions are given in the caller's numbering. */
  const int32_t one_based_offsets[4] = {1, 3, 3, 5};
  const int32_t one_based_cols[4] = {1, 3, 1, 4};
  s = sparsetc_matrix_create_csr(h, &A, 3, 3, 4, one_based_offsets, one_based_cols, values, SPARSETC_INDEX_32,
                                 SPARSETC_INDEX_32, SPARSETC_BASE_ONE, SPARSETC_VALUE_F64, SPARSETC_MEMORY_HOST,
                                 SPARSETC_COPY);
  expect_failure(h, s, SPARSETC_STATUS_INVALID_INDEX, "1-based");

  /* Shapes that do not fit: the message gives all three. */
  const int32_t good_cols[4] = {0, 2, 0, 1};
  s = sparsetc_matrix_create_csr(h, &A, 3, 3, 4, row_offsets, good_cols, values, SPARSETC_INDEX_32,
                                 SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64, SPARSETC_MEMORY_HOST,
                                 SPARSETC_COPY);
  if (s != SPARSETC_STATUS_SUCCESS) return EXIT_FAILURE;
  double B[4 * 2] = {0}, C[3 * 2];
  sparsetc_dense_t b = NULL, c = NULL;
  if (sparsetc_dense_create(h, &b, 4, 2, 4, B, SPARSETC_VALUE_F64, SPARSETC_ORDER_COL, SPARSETC_MEMORY_HOST) ||
      sparsetc_dense_create(h, &c, 3, 2, 3, C, SPARSETC_VALUE_F64, SPARSETC_ORDER_COL, SPARSETC_MEMORY_HOST))
    return EXIT_FAILURE;
  sparsetc_spmm_plan_t plan = NULL;
  s = sparsetc_spmm_plan_create(h, &plan, SPARSETC_OP_NON_TRANSPOSE, A, b, c, SPARSETC_COMPUTE_DEFAULT,
                                SPARSETC_SPMM_ALG_AUTO);
  expect_failure(h, s, SPARSETC_STATUS_DIMENSION_MISMATCH, "4x2");

  /* An algorithm that cannot take these operands: cuSPARSE needs them in device memory. */
  sparsetc_dense_t b3 = NULL;
  if (sparsetc_dense_create(h, &b3, 3, 2, 3, B, SPARSETC_VALUE_F64, SPARSETC_ORDER_COL, SPARSETC_MEMORY_HOST))
    return EXIT_FAILURE;
  s = sparsetc_spmm_plan_create(h, &plan, SPARSETC_OP_NON_TRANSPOSE, A, b3, c, SPARSETC_COMPUTE_DEFAULT,
                                SPARSETC_SPMM_ALG_CUSPARSE);
  expect_failure(h, s, SPARSETC_STATUS_NOT_SUPPORTED, "device");

  /* Failures without a handle are kept per thread: pass NULL. */
  s = sparsetc_create(NULL);
  expect_failure(NULL, s, SPARSETC_STATUS_NULL_POINTER, "handle");
  sparsetc_matrix_t from_file = NULL;
  s = sparsetc_matrix_read_mtx(h, "/nonexistent/matrix.mtx", SPARSETC_VALUE_F64, SPARSETC_INDEX_32, &from_file);
  expect_failure(h, s, SPARSETC_STATUS_IO_ERROR, "/nonexistent/matrix.mtx");

  /* Static descriptions of any status, known or not. */
  printf("%s: %s\n", sparsetc_get_status_name(SPARSETC_STATUS_NAN_OR_INF),
         sparsetc_get_status_string(SPARSETC_STATUS_NAN_OR_INF));
  if (strcmp(sparsetc_get_status_name(12345), "SPARSETC_STATUS_UNKNOWN") != 0) ++failures;

  sparsetc_dense_destroy(b);
  sparsetc_dense_destroy(b3);
  sparsetc_dense_destroy(c);
  sparsetc_matrix_destroy(A);
  sparsetc_destroy(h);
  if (failures) {
    fprintf(stderr, "error_handling: %d unexpected results\n", failures);
    return EXIT_FAILURE;
  }
  printf("error_handling: ok\n");
  return EXIT_SUCCESS;
}

/* A program in plain C11 that uses the whole C API: library information, handles, matrices from
 * arrays, files and generators, conversions, analysis, SpMM and SpGEMM through plans and one-shot
 * calls, error handling. It checks results against a computation of its own and exits non-zero
 * on any difference. Built with -std=c11 -pedantic -Werror, against the build tree and against
 * the installed tree. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sparsetc/sparsetc.h>

static int failures = 0;

#define EXPECT(cond)                                                  \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                     \
    }                                                                 \
  } while (0)

#define OK(handle, call)                                                                          \
  do {                                                                                            \
    sparsetc_status_t s_ = (call);                                                                \
    if (s_ != SPARSETC_STATUS_SUCCESS) {                                                          \
      char m_[512];                                                                               \
      sparsetc_get_last_error((handle), m_, sizeof m_);                                           \
      fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call, sparsetc_get_status_name(s_), m_); \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

/* A = [[1 0 2]
 *      [0 0 0]
 *      [3 4 0]
 *      [0 5 6]]  (4x3, one empty row) */
static const int32_t A_ptr[5] = {0, 2, 2, 4, 6};
static const int32_t A_col[6] = {0, 2, 0, 1, 1, 2};
static const double A_val[6] = {1, 2, 3, 4, 5, 6};

static double dense_a(int i, int j) {
  static const double d[4][3] = {{1, 0, 2}, {0, 0, 0}, {3, 4, 0}, {0, 5, 6}};
  return d[i][j];
}

static void library_information(void) {
  int32_t major = -1, minor = -1, patch = -1, abi = -1, devices = -1;
  char build[256];
  OK(NULL, sparsetc_get_version(&major, &minor, &patch));
  EXPECT(major == SPARSETC_VERSION_MAJOR && minor == SPARSETC_VERSION_MINOR && patch == SPARSETC_VERSION_PATCH);
  OK(NULL, sparsetc_get_abi_version(&abi));
  EXPECT(abi == SPARSETC_ABI_VERSION);
  OK(NULL, sparsetc_get_build_info(build, sizeof build));
  EXPECT(strncmp(build, "sparsetc ", 9) == 0);
  OK(NULL, sparsetc_get_device_count(&devices));
  EXPECT(devices >= 0);
  EXPECT(strcmp(sparsetc_get_status_name(SPARSETC_STATUS_NULL_POINTER), "SPARSETC_STATUS_NULL_POINTER") == 0);
  EXPECT(strlen(sparsetc_get_status_string(SPARSETC_STATUS_INVALID_INDEX)) > 0);
  EXPECT(strcmp(sparsetc_get_status_name(12345), "SPARSETC_STATUS_UNKNOWN") == 0);
}

static void errors(sparsetc_handle_t h) {
  sparsetc_matrix_t m = NULL;
  char message[512];
  int32_t bad_col[6] = {0, 2, 0, 1, 1, 3}; /* 3 is out of range for 3 columns */
  sparsetc_status_t s = sparsetc_matrix_create_csr(h, &m, 4, 3, 6, A_ptr, bad_col, A_val, SPARSETC_INDEX_32,
                                                   SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64,
                                                   SPARSETC_MEMORY_HOST, SPARSETC_COPY);
  EXPECT(s == SPARSETC_STATUS_INVALID_INDEX);
  EXPECT(m == NULL);
  OK(h, sparsetc_get_last_error(h, message, sizeof message));
  EXPECT(strstr(message, "row 3") != NULL);
  EXPECT(sparsetc_matrix_create_csr(h, &m, 4, 3, 6, NULL, A_col, A_val, SPARSETC_INDEX_32, SPARSETC_INDEX_32,
                                    SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64, SPARSETC_MEMORY_HOST,
                                    SPARSETC_COPY) == SPARSETC_STATUS_NULL_POINTER);
  EXPECT(sparsetc_create(NULL) == SPARSETC_STATUS_NULL_POINTER);
  OK(NULL, sparsetc_get_last_error(NULL, message, sizeof message));
  EXPECT(strstr(message, "handle") != NULL);
  EXPECT(sparsetc_matrix_read_mtx(h, "/nonexistent/file.mtx", SPARSETC_VALUE_F64, SPARSETC_INDEX_32, &m) ==
         SPARSETC_STATUS_IO_ERROR);
}

static void spmm(sparsetc_handle_t h, sparsetc_matrix_t A) {
  enum { N = 5 };
  double B[3 * N], C[4 * N];
  sparsetc_dense_t b = NULL, c = NULL;
  sparsetc_spmm_plan_t plan = NULL;
  size_t workspace = 1;
  sparsetc_spmm_alg_t alg = -1;
  char reason[128];
  int i, j, k;
  for (i = 0; i < 3 * N; ++i) B[i] = (double)(i % 7) - 2.5;
  for (i = 0; i < 4 * N; ++i) C[i] = 1.0;
  /* column-major B and C, alpha 2, beta -1 */
  OK(h, sparsetc_dense_create(h, &b, 3, N, 3, B, SPARSETC_VALUE_F64, SPARSETC_ORDER_COL, SPARSETC_MEMORY_HOST));
  OK(h, sparsetc_dense_create(h, &c, 4, N, 4, C, SPARSETC_VALUE_F64, SPARSETC_ORDER_COL, SPARSETC_MEMORY_HOST));
  OK(h, sparsetc_spmm_plan_create(h, &plan, SPARSETC_OP_NON_TRANSPOSE, A, b, c, SPARSETC_COMPUTE_DEFAULT,
                                  SPARSETC_SPMM_ALG_AUTO));
  OK(h, sparsetc_spmm_workspace_size(plan, &workspace));
  OK(h, sparsetc_spmm_plan_get_alg(plan, &alg, reason, sizeof reason));
  EXPECT(alg == SPARSETC_SPMM_ALG_CPU);
  OK(h, sparsetc_spmm_execute(plan, 2.0, b, -1.0, c, NULL, 0));
  for (i = 0; i < 4; ++i)
    for (j = 0; j < N; ++j) {
      double want = -1.0;
      for (k = 0; k < 3; ++k) want += 2.0 * dense_a(i, k) * B[k + j * 3];
      EXPECT(fabs(C[i + j * 4] - want) < 1e-12);
    }
  /* the one-shot call, beta 0 on a NaN-poisoned C */
  for (i = 0; i < 4 * N; ++i) C[i] = NAN;
  OK(h, sparsetc_spmm(h, SPARSETC_OP_NON_TRANSPOSE, 1.0, A, b, 0.0, c, SPARSETC_COMPUTE_64F, SPARSETC_SPMM_ALG_CPU));
  for (i = 0; i < 4; ++i)
    for (j = 0; j < N; ++j) {
      double want = 0.0;
      for (k = 0; k < 3; ++k) want += dense_a(i, k) * B[k + j * 3];
      EXPECT(fabs(C[i + j * 4] - want) < 1e-12);
    }
  OK(h, sparsetc_spmm_plan_destroy(plan));
  OK(h, sparsetc_dense_destroy(b));
  OK(h, sparsetc_dense_destroy(c));
}

static void spgemm(sparsetc_handle_t h, sparsetc_matrix_t A) {
  /* C = A^T A (3x3) through a plan, then again after new values (reuse). */
  sparsetc_spgemm_plan_t plan = NULL;
  sparsetc_matrix_t C = NULL;
  sparsetc_matrix_info_t info;
  int64_t nnz = -1, products = -1;
  size_t memory = 0;
  void *p = NULL, *c = NULL, *v = NULL;
  double scaled[6];
  int round, i, j, k;
  OK(h, sparsetc_spgemm_plan_create(h, &plan, SPARSETC_OP_TRANSPOSE, A, SPARSETC_OP_NON_TRANSPOSE, A,
                                    SPARSETC_COMPUTE_64F, SPARSETC_SPGEMM_ALG_AUTO, NULL));
  OK(h, sparsetc_spgemm_plan_get_estimate(plan, &products, &memory));
  EXPECT(products == 12); /* sum over rows of A of (row length)^2 = 4 + 0 + 4 + 4 */
  OK(h, sparsetc_spgemm_symbolic(plan, &nnz));
  EXPECT(nnz == 9); /* A^T A is dense 3x3 here */
  for (round = 0; round < 2; ++round) {
    double factor = round == 0 ? 1.0 : 3.0;
    OK(h, sparsetc_spgemm_numeric(plan, &C));
    info.struct_size = sizeof info;
    OK(h, sparsetc_matrix_get_info(C, &info));
    EXPECT(info.rows == 3 && info.cols == 3 && info.nnz == 9 && info.value_type == SPARSETC_VALUE_F64);
    EXPECT(info.offset_type == SPARSETC_INDEX_64 && info.index_type == SPARSETC_INDEX_32);
    OK(h, sparsetc_matrix_get_arrays(C, &p, &c, &v));
    for (i = 0; i < 3; ++i)
      for (j = 0; j < 3; ++j) {
        double want = 0;
        int64_t e = ((const int64_t*)p)[i] + j;
        for (k = 0; k < 4; ++k) want += factor * factor * dense_a(k, i) * dense_a(k, j);
        EXPECT(((const int32_t*)c)[e] == j);
        EXPECT(fabs(((const double*)v)[e] - want) < 1e-12);
      }
    for (i = 0; i < 6; ++i) scaled[i] = 3.0 * A_val[i];
    OK(h, sparsetc_matrix_set_values(h, A, scaled));
  }
  OK(h, sparsetc_matrix_set_values(h, A, A_val));
  OK(h, sparsetc_spgemm_plan_destroy(plan));
  OK(h, sparsetc_matrix_destroy(C));
}

static void files_and_generators(sparsetc_handle_t h, sparsetc_matrix_t A) {
  const char* path = "c11_program_roundtrip.mtx";
  sparsetc_matrix_t back = NULL, g = NULL, csc = NULL;
  sparsetc_matrix_info_t info;
  sparsetc_analysis_t analysis;
  void* v = NULL;
  int i;
  OK(h, sparsetc_matrix_write_mtx(h, A, path));
  OK(h, sparsetc_matrix_read_mtx(h, path, SPARSETC_VALUE_F32, SPARSETC_INDEX_64, &back));
  remove(path);
  info.struct_size = sizeof info;
  OK(h, sparsetc_matrix_get_info(back, &info));
  EXPECT(info.rows == 4 && info.cols == 3 && info.nnz == 6 && info.value_type == SPARSETC_VALUE_F32);
  OK(h, sparsetc_matrix_get_arrays(back, NULL, NULL, &v));
  for (i = 0; i < 6; ++i) EXPECT(((const float*)v)[i] == (float)A_val[i]);

  OK(h, sparsetc_matrix_generate(h, "poisson2d5:8", 7, SPARSETC_VALUE_F64, &g));
  memset(&analysis, 0, sizeof analysis); /* strip_width is an input: 0 asks for the default */
  analysis.struct_size = sizeof analysis;
  OK(h, sparsetc_analyze(h, g, NULL, &analysis));
  EXPECT(analysis.rows == 64 && analysis.nnz == 5 * 64 - 4 * 8 && analysis.row_length_max == 5);
  EXPECT(analysis.products > analysis.nnz);
  OK(h, sparsetc_matrix_convert(h, g, SPARSETC_FORMAT_CSC, SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ONE,
                                SPARSETC_VALUE_F32, &csc));
  OK(h, sparsetc_matrix_check(h, csc, SPARSETC_VALIDATE_VALUES));
  OK(h, sparsetc_matrix_destroy(csc));
  OK(h, sparsetc_matrix_destroy(g));
  OK(h, sparsetc_matrix_destroy(back));
}

int main(void) {
  sparsetc_handle_t h = NULL;
  sparsetc_matrix_t A = NULL;
  sparsetc_backend_t backend = -1;
  library_information();
  OK(NULL, sparsetc_create_with_backend(&h, SPARSETC_BACKEND_CPU, 0));
  OK(h, sparsetc_get_backend(h, &backend));
  EXPECT(backend == SPARSETC_BACKEND_CPU);
  OK(h, sparsetc_set_validation(h, SPARSETC_VALIDATE_VALUES));
  OK(h, sparsetc_set_num_threads(h, 2));
  errors(h);
  OK(h, sparsetc_matrix_create_csr(h, &A, 4, 3, 6, A_ptr, A_col, A_val, SPARSETC_INDEX_32, SPARSETC_INDEX_32,
                                   SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64, SPARSETC_MEMORY_HOST, SPARSETC_COPY));
  spmm(h, A);
  spgemm(h, A);
  files_and_generators(h, A);
  OK(h, sparsetc_matrix_destroy(A));
  OK(NULL, sparsetc_destroy(h));
  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("c11_program: all checks passed\n");
  return 0;
}

// The objects behind the cuSPARSE-shaped API (include/sparsetc/sparsetc_cusparse.h). Each
// descriptor records what the caller described, exactly as cuSPARSE does, and caches the sparsetc
// objects made from it: a borrowed device matrix and the last SpMM plan for a sparse descriptor,
// the SpGEMM plan and its product for an SpGEMM descriptor. Engine objects are held by shared
// pointers so that a plan never outlives its matrices, nor a matrix its handle, whatever order the
// caller destroys descriptors and handles in (cuSPARSE descriptors do not belong to a handle).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "sparsetc/sparsetc.h"
#include "sparsetc/sparsetc_cusparse.h"

namespace sparsetc::compat {

// A sparsetc GPU handle, destroyed when its last user lets go.
struct Engine {
  sparsetc_handle_t handle = nullptr;
  int device = 0;
  ~Engine() { sparsetc_destroy(handle); }
};
using EnginePtr = std::shared_ptr<Engine>;

// A sparsetc matrix borrowing a descriptor's device arrays.
struct EngineMatrix {
  EnginePtr engine;
  sparsetc_matrix_t matrix = nullptr;
  // The description it was made from: a change of any of these needs a new matrix (values: only
  // sparsetc_matrix_set_values).
  int64_t rows = 0, cols = 0, nnz = 0;
  const void* offsets = nullptr;
  const void* indices = nullptr;
  const void* values = nullptr;
  ~EngineMatrix() { sparsetc_matrix_destroy(matrix); }
};
using MatrixPtr = std::shared_ptr<EngineMatrix>;

// What makes two SpMM calls the same plan: the matrix object, op(A), and B/C's shapes and layouts.
struct SpmmKey {
  const EngineMatrix* matrix = nullptr;
  sparsetc_operation_t op = SPARSETC_OP_NON_TRANSPOSE;
  int64_t b_rows = 0, b_cols = 0, b_ld = 0, c_rows = 0, c_cols = 0, c_ld = 0;
  sparsetc_value_type_t b_type = 0, c_type = 0;
  sparsetc_order_t b_order = 0, c_order = 0;
  sparsetc_compute_type_t compute = 0;
  bool operator==(const SpmmKey& o) const {
    return matrix == o.matrix && op == o.op && b_rows == o.b_rows && b_cols == o.b_cols && b_ld == o.b_ld &&
           c_rows == o.c_rows && c_cols == o.c_cols && c_ld == o.c_ld && b_type == o.b_type && c_type == o.c_type &&
           b_order == o.b_order && c_order == o.c_order && compute == o.compute;
  }
};

struct SpmmPlan {
  MatrixPtr a;  // declared first: released after the plan
  SpmmKey key;
  sparsetc_spmm_plan_t plan = nullptr;
  bool fresh = true;     // built from the current values: the first execution need not re-read them
  bool copies_a = true;  // the path keeps a converted copy of A (all but cuSPARSE, which reads A in place)
  ~SpmmPlan() { sparsetc_spmm_plan_destroy(plan); }
};

// An SpGEMM plan, the operands it reads and the product it made (owned here until the descriptor
// is destroyed or a new product is planned).
struct SpgemmPlan {
  MatrixPtr a, b;
  sparsetc_spgemm_plan_t plan = nullptr;
  sparsetc_matrix_t product = nullptr;
  bool fresh = true;  // no product computed yet from this plan
  ~SpgemmPlan() {
    sparsetc_matrix_destroy(product);
    sparsetc_spgemm_plan_destroy(plan);
  }
};

}  // namespace sparsetc::compat

struct sparsetc_cusparseContext {
  sparsetc::compat::EnginePtr engine;
  cudaStream_t stream = nullptr;
  sparsetc_cusparsePointerMode_t pointer_mode = SPARSETC_CUSPARSE_POINTER_MODE_HOST;
  std::string last_error;
};

struct sparsetc_cusparseSpMatDescr {
  // As described by the caller (COO: offsets holds the row indices).
  sparsetc_cusparseFormat_t format = SPARSETC_CUSPARSE_FORMAT_CSR;
  int64_t rows = 0, cols = 0, nnz = 0;
  void* offsets = nullptr;
  void* indices = nullptr;
  void* values = nullptr;
  sparsetc_cusparseIndexType_t offset_type = SPARSETC_CUSPARSE_INDEX_32I;
  sparsetc_cusparseIndexType_t index_type = SPARSETC_CUSPARSE_INDEX_32I;
  sparsetc_cusparseIndexBase_t base = SPARSETC_CUSPARSE_INDEX_BASE_ZERO;
  cudaDataType value_type = CUDA_R_32F;
  // Caches (mutable: cuSPARSE passes operands as const descriptors).
  mutable sparsetc::compat::MatrixPtr matrix;  // over the arrays above, on the handle that used them last
  mutable bool values_changed = false;         // SpMatSetValues since the matrix was made
  mutable std::unique_ptr<sparsetc::compat::SpmmPlan> spmm;
};

struct sparsetc_cusparseDnMatDescr {
  int64_t rows = 0, cols = 0, ld = 0;
  void* values = nullptr;
  cudaDataType value_type = CUDA_R_32F;
  sparsetc_cusparseOrder_t order = SPARSETC_CUSPARSE_ORDER_COL;
};

struct sparsetc_cusparseSpGEMMDescr {
  enum class Stage { created, estimated, computed, copied };
  Stage stage = Stage::created;
  bool reuse = false;
  std::unique_ptr<sparsetc::compat::SpgemmPlan> plan;
  int64_t nnz = 0;  // of the product
};

// Scope guards for vendor and sparsetc objects, so that a variant aborted by an error leaks nothing.
#pragma once

#include <cusparse.h>
#include <sparsetc/sparsetc.h>

namespace bench {

struct SpMatDescr {
  cusparseSpMatDescr_t d = nullptr;
  SpMatDescr() = default;
  SpMatDescr(const SpMatDescr&) = delete;
  SpMatDescr& operator=(const SpMatDescr&) = delete;
  ~SpMatDescr() {
    if (d) cusparseDestroySpMat(d);
  }
};

struct DnMatDescr {
  cusparseDnMatDescr_t d = nullptr;
  DnMatDescr() = default;
  DnMatDescr(const DnMatDescr&) = delete;
  DnMatDescr& operator=(const DnMatDescr&) = delete;
  ~DnMatDescr() {
    if (d) cusparseDestroyDnMat(d);
  }
};

struct SpGemmDescr {
  cusparseSpGEMMDescr_t d = nullptr;
  SpGemmDescr() = default;
  SpGemmDescr(const SpGemmDescr&) = delete;
  SpGemmDescr& operator=(const SpGemmDescr&) = delete;
  ~SpGemmDescr() {
    if (d) cusparseSpGEMM_destroyDescr(d);
  }
};

struct StcMatrix {
  sparsetc_matrix_t m = nullptr;
  StcMatrix() = default;
  StcMatrix(const StcMatrix&) = delete;
  StcMatrix& operator=(const StcMatrix&) = delete;
  ~StcMatrix() { reset(); }
  void reset() {
    if (m) sparsetc_matrix_destroy(m);
    m = nullptr;
  }
};

struct StcDense {
  sparsetc_dense_t d = nullptr;
  StcDense() = default;
  StcDense(const StcDense&) = delete;
  StcDense& operator=(const StcDense&) = delete;
  ~StcDense() {
    if (d) sparsetc_dense_destroy(d);
  }
};

struct StcSpmmPlan {
  sparsetc_spmm_plan_t p = nullptr;
  StcSpmmPlan() = default;
  StcSpmmPlan(const StcSpmmPlan&) = delete;
  StcSpmmPlan& operator=(const StcSpmmPlan&) = delete;
  ~StcSpmmPlan() {
    if (p) sparsetc_spmm_plan_destroy(p);
  }
};

struct StcSpgemmPlan {
  sparsetc_spgemm_plan_t p = nullptr;
  StcSpgemmPlan() = default;
  StcSpgemmPlan(const StcSpgemmPlan&) = delete;
  StcSpgemmPlan& operator=(const StcSpgemmPlan&) = delete;
  ~StcSpgemmPlan() {
    if (p) sparsetc_spgemm_plan_destroy(p);
  }
};

}  // namespace bench

// Intercepted SpGEMM, plain and with structure reuse. Whether sparsetc serves a product is decided
// at its work estimation and kept in the side table for the SpGEMM descriptor: every later stage
// of the sequence goes the same way (a served sequence never touches cuSPARSE's descriptor, a
// forwarded one never touches sparsetc). After the stage that counts C's entries, C's nnz is
// overlaid for the size getters.
#include <string>

#include "preload_state.hpp"

using namespace sparsetc::preload;

#define PRELOAD_API extern "C" __attribute__((visibility("default")))

namespace {

// One stage of a sequence. `starts`: a work estimation, where the decision is (re)made; a size
// query (NULL buffer) begins a new sequence.
template <typename Ours, typename Forward>
cusparseStatus_t stage(const char* function, Group group, cusparseSpGEMMDescr_t descr, bool starts, bool query,
                       Ours&& ours, Forward&& forward) noexcept {
  if (inside_sparsetc() || !intercepts(group) || !descr) return forward();
  return serve_or_forward(function, [&]() -> cusparseStatus_t {
    SpgemmShadow& shadow = spgemm_shadow(descr);
    if (starts && (query || !shadow.decided)) {
      shadow.decided = true;
      shadow.served = true;
      try {
        return ours(shadow);
      } catch (const Unsupported&) {
        shadow.served = false;
        throw;  // logged and forwarded
      }
    }
    if (!shadow.decided || !shadow.served) return forward();
    try {
      return ours(shadow);
    } catch (const Unsupported& u) {  // mid-sequence: cuSPARSE never saw the earlier stages
      if (logging()) std::fprintf(stderr, "sparsetc-cusparse: %s failed in sparsetc: %s\n", function, u.what());
      return CUSPARSE_STATUS_NOT_SUPPORTED;
    }
  }, forward);
}

struct Operands {
  sparsetc_cusparseHandle_t handle;
  sparsetc_cusparseSpMatDescr_t A, B, C;
};

Operands operands(cusparseHandle_t handle, cusparseConstSpMatDescr_t matA, cusparseConstSpMatDescr_t matB,
                  cusparseSpMatDescr_t matC, SpgemmShadow& shadow) {
  Operands o{compat_handle(handle), compat_sparse(matA), compat_sparse(matB), compat_sparse(matC)};
  if (!shadow.compat) {
    InsideSparsetc inside;
    if (sparsetc_cusparseSpGEMM_createDescr(&shadow.compat) != SPARSETC_CUSPARSE_STATUS_SUCCESS)
      throw Unsupported("no sparsetc SpGEMM descriptor: " + last_error(nullptr));
  }
  return o;
}

// After sparsetc counted C's entries: cuSPARSE's size getters answer them.
void overlay_product_nnz(const Operands& o, cusparseSpMatDescr_t matC) {
  int64_t rows = 0, cols = 0, nnz = 0;
  {
    InsideSparsetc inside;
    sparsetc_cusparseSpMatGetSize(o.C, &rows, &cols, &nnz);
  }
  set_overlay_nnz(matC, nnz);
}

std::string describe_product(const Operands& o) { return "A " + describe(o.A) + ", B " + describe(o.B); }

#define OPS static_cast<sparsetc_cusparseOperation_t>(opA), static_cast<sparsetc_cusparseOperation_t>(opB)
#define ALG static_cast<sparsetc_cusparseSpGEMMAlg_t>(alg)

}  // namespace

PRELOAD_API cusparseStatus_t cusparseSpGEMM_workEstimation(
    cusparseHandle_t handle, cusparseOperation_t opA, cusparseOperation_t opB, const void* alpha,
    cusparseConstSpMatDescr_t matA, cusparseConstSpMatDescr_t matB, const void* beta, cusparseSpMatDescr_t matC,
    cudaDataType computeType, cusparseSpGEMMAlg_t alg, cusparseSpGEMMDescr_t spgemmDescr, size_t* bufferSize1,
    void* externalBuffer1) {
  auto forward = [&] {
    return REAL(cusparseSpGEMM_workEstimation)(handle, opA, opB, alpha, matA, matB, beta, matC, computeType, alg,
                                               spgemmDescr, bufferSize1, externalBuffer1);
  };
  return stage("cusparseSpGEMM_workEstimation", kSpgemm, spgemmDescr, true, externalBuffer1 == nullptr,
               [&](SpgemmShadow& shadow) {
                 const Operands o = operands(handle, matA, matB, matC, shadow);
                 InsideSparsetc inside;
                 const auto status = sparsetc_cusparseSpGEMM_workEstimation(o.handle, OPS, alpha, o.A, o.B, beta, o.C,
                                                                            computeType, ALG, shadow.compat,
                                                                            bufferSize1, externalBuffer1);
                 return finish("cusparseSpGEMM_workEstimation", o.handle, status, describe_product(o));
               },
               forward);
}

PRELOAD_API cusparseStatus_t cusparseSpGEMM_getNumProducts(cusparseSpGEMMDescr_t spgemmDescr, int64_t* num_prods) {
  auto forward = [&] { return REAL(cusparseSpGEMM_getNumProducts)(spgemmDescr, num_prods); };
  return stage("cusparseSpGEMM_getNumProducts", kSpgemm, spgemmDescr, false, false,
               [&](SpgemmShadow& shadow) {
                 InsideSparsetc inside;
                 return finish("cusparseSpGEMM_getNumProducts", nullptr,
                               sparsetc_cusparseSpGEMM_getNumProducts(shadow.compat, num_prods), "products counted");
               },
               forward);
}

PRELOAD_API cusparseStatus_t cusparseSpGEMM_compute(cusparseHandle_t handle, cusparseOperation_t opA,
                                                    cusparseOperation_t opB, const void* alpha,
                                                    cusparseConstSpMatDescr_t matA, cusparseConstSpMatDescr_t matB,
                                                    const void* beta, cusparseSpMatDescr_t matC,
                                                    cudaDataType computeType, cusparseSpGEMMAlg_t alg,
                                                    cusparseSpGEMMDescr_t spgemmDescr, size_t* bufferSize2,
                                                    void* externalBuffer2) {
  auto forward = [&] {
    return REAL(cusparseSpGEMM_compute)(handle, opA, opB, alpha, matA, matB, beta, matC, computeType, alg, spgemmDescr,
                                        bufferSize2, externalBuffer2);
  };
  return stage("cusparseSpGEMM_compute", kSpgemm, spgemmDescr, false, false,
               [&](SpgemmShadow& shadow) {
                 const Operands o = operands(handle, matA, matB, matC, shadow);
                 sparsetc_cusparseStatus_t status;
                 {
                   InsideSparsetc inside;
                   status = sparsetc_cusparseSpGEMM_compute(o.handle, OPS, alpha, o.A, o.B, beta, o.C, computeType,
                                                            ALG, shadow.compat, bufferSize2, externalBuffer2);
                 }
                 if (status == SPARSETC_CUSPARSE_STATUS_SUCCESS && externalBuffer2) overlay_product_nnz(o, matC);
                 return finish("cusparseSpGEMM_compute", o.handle, status, describe_product(o));
               },
               forward);
}

PRELOAD_API cusparseStatus_t cusparseSpGEMM_copy(cusparseHandle_t handle, cusparseOperation_t opA,
                                                 cusparseOperation_t opB, const void* alpha,
                                                 cusparseConstSpMatDescr_t matA, cusparseConstSpMatDescr_t matB,
                                                 const void* beta, cusparseSpMatDescr_t matC, cudaDataType computeType,
                                                 cusparseSpGEMMAlg_t alg, cusparseSpGEMMDescr_t spgemmDescr) {
  auto forward = [&] {
    return REAL(cusparseSpGEMM_copy)(handle, opA, opB, alpha, matA, matB, beta, matC, computeType, alg, spgemmDescr);
  };
  return stage("cusparseSpGEMM_copy", kSpgemm, spgemmDescr, false, false,
               [&](SpgemmShadow& shadow) {
                 const Operands o = operands(handle, matA, matB, matC, shadow);
                 InsideSparsetc inside;
                 const auto status = sparsetc_cusparseSpGEMM_copy(o.handle, OPS, alpha, o.A, o.B, beta, o.C,
                                                                  computeType, ALG, shadow.compat);
                 return finish("cusparseSpGEMM_copy", o.handle, status, "C " + describe(o.C));
               },
               forward);
}

PRELOAD_API cusparseStatus_t cusparseSpGEMMreuse_workEstimation(
    cusparseHandle_t handle, cusparseOperation_t opA, cusparseOperation_t opB, cusparseConstSpMatDescr_t matA,
    cusparseConstSpMatDescr_t matB, cusparseSpMatDescr_t matC, cusparseSpGEMMAlg_t alg,
    cusparseSpGEMMDescr_t spgemmDescr, size_t* bufferSize1, void* externalBuffer1) {
  auto forward = [&] {
    return REAL(cusparseSpGEMMreuse_workEstimation)(handle, opA, opB, matA, matB, matC, alg, spgemmDescr, bufferSize1,
                                                    externalBuffer1);
  };
  return stage("cusparseSpGEMMreuse_workEstimation", kSpgemmReuse, spgemmDescr, true, externalBuffer1 == nullptr,
               [&](SpgemmShadow& shadow) {
                 const Operands o = operands(handle, matA, matB, matC, shadow);
                 InsideSparsetc inside;
                 const auto status = sparsetc_cusparseSpGEMMreuse_workEstimation(
                     o.handle, OPS, o.A, o.B, o.C, ALG, shadow.compat, bufferSize1, externalBuffer1);
                 return finish("cusparseSpGEMMreuse_workEstimation", o.handle, status, describe_product(o));
               },
               forward);
}

PRELOAD_API cusparseStatus_t cusparseSpGEMMreuse_nnz(cusparseHandle_t handle, cusparseOperation_t opA,
                                                     cusparseOperation_t opB, cusparseConstSpMatDescr_t matA,
                                                     cusparseConstSpMatDescr_t matB, cusparseSpMatDescr_t matC,
                                                     cusparseSpGEMMAlg_t alg, cusparseSpGEMMDescr_t spgemmDescr,
                                                     size_t* bufferSize2, void* externalBuffer2, size_t* bufferSize3,
                                                     void* externalBuffer3, size_t* bufferSize4,
                                                     void* externalBuffer4) {
  auto forward = [&] {
    return REAL(cusparseSpGEMMreuse_nnz)(handle, opA, opB, matA, matB, matC, alg, spgemmDescr, bufferSize2,
                                         externalBuffer2, bufferSize3, externalBuffer3, bufferSize4, externalBuffer4);
  };
  return stage("cusparseSpGEMMreuse_nnz", kSpgemmReuse, spgemmDescr, false, false,
               [&](SpgemmShadow& shadow) {
                 const Operands o = operands(handle, matA, matB, matC, shadow);
                 sparsetc_cusparseStatus_t status;
                 {
                   InsideSparsetc inside;
                   status = sparsetc_cusparseSpGEMMreuse_nnz(o.handle, OPS, o.A, o.B, o.C, ALG, shadow.compat,
                                                             bufferSize2, externalBuffer2, bufferSize3,
                                                             externalBuffer3, bufferSize4, externalBuffer4);
                 }
                 if (status == SPARSETC_CUSPARSE_STATUS_SUCCESS && externalBuffer2 && externalBuffer3 &&
                     externalBuffer4)
                   overlay_product_nnz(o, matC);
                 return finish("cusparseSpGEMMreuse_nnz", o.handle, status, describe_product(o));
               },
               forward);
}

PRELOAD_API cusparseStatus_t cusparseSpGEMMreuse_copy(cusparseHandle_t handle, cusparseOperation_t opA,
                                                      cusparseOperation_t opB, cusparseConstSpMatDescr_t matA,
                                                      cusparseConstSpMatDescr_t matB, cusparseSpMatDescr_t matC,
                                                      cusparseSpGEMMAlg_t alg, cusparseSpGEMMDescr_t spgemmDescr,
                                                      size_t* bufferSize5, void* externalBuffer5) {
  auto forward = [&] {
    return REAL(cusparseSpGEMMreuse_copy)(handle, opA, opB, matA, matB, matC, alg, spgemmDescr, bufferSize5,
                                          externalBuffer5);
  };
  return stage("cusparseSpGEMMreuse_copy", kSpgemmReuse, spgemmDescr, false, false,
               [&](SpgemmShadow& shadow) {
                 const Operands o = operands(handle, matA, matB, matC, shadow);
                 InsideSparsetc inside;
                 const auto status = sparsetc_cusparseSpGEMMreuse_copy(o.handle, OPS, o.A, o.B, o.C, ALG,
                                                                       shadow.compat, bufferSize5, externalBuffer5);
                 return finish("cusparseSpGEMMreuse_copy", o.handle, status, "C " + describe(o.C));
               },
               forward);
}

PRELOAD_API cusparseStatus_t cusparseSpGEMMreuse_compute(cusparseHandle_t handle, cusparseOperation_t opA,
                                                         cusparseOperation_t opB, const void* alpha,
                                                         cusparseConstSpMatDescr_t matA,
                                                         cusparseConstSpMatDescr_t matB, const void* beta,
                                                         cusparseSpMatDescr_t matC, cudaDataType computeType,
                                                         cusparseSpGEMMAlg_t alg, cusparseSpGEMMDescr_t spgemmDescr) {
  auto forward = [&] {
    return REAL(cusparseSpGEMMreuse_compute)(handle, opA, opB, alpha, matA, matB, beta, matC, computeType, alg,
                                             spgemmDescr);
  };
  return stage("cusparseSpGEMMreuse_compute", kSpgemmReuse, spgemmDescr, false, false,
               [&](SpgemmShadow& shadow) {
                 const Operands o = operands(handle, matA, matB, matC, shadow);
                 InsideSparsetc inside;
                 const auto status = sparsetc_cusparseSpGEMMreuse_compute(o.handle, OPS, alpha, o.A, o.B, beta, o.C,
                                                                          computeType, ALG, shadow.compat);
                 return finish("cusparseSpGEMMreuse_compute", o.handle, status, describe_product(o));
               },
               forward);
}

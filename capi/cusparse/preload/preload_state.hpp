// State of the preload library: what it intercepts (SPARSETC_CUSPARSE_INTERCEPT), its log
// (SPARSETC_CUSPARSE_LOG), the guard against re-entry (sparsetc itself calls cuSPARSE, and those
// calls must reach the real library), and the side table that pairs cuSPARSE's own handles and
// descriptors, left intact, with the sparsetc_cusparse objects made from their contents (read
// through the real getters at every call, so changes the caller makes are seen).
#pragma once

#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>

#include "real_cusparse.hpp"
#include "sparsetc/sparsetc_cusparse.h"

namespace sparsetc::preload {

enum Group : unsigned { kSpmm = 1, kSpgemm = 2, kSpgemmReuse = 4 };
bool intercepts(Group group);

bool logging();
void log_served(const char* function, const std::string& what);
void log_forwarded(const char* function, const std::string& why);

// A case sparsetc does not take: the call goes to the real cuSPARSE, for the reason given.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// True while this thread is inside sparsetc: its own cuSPARSE calls then go straight to the real one.
bool inside_sparsetc();
class InsideSparsetc {
 public:
  InsideSparsetc();
  ~InsideSparsetc();
  InsideSparsetc(const InsideSparsetc&) = delete;
  InsideSparsetc& operator=(const InsideSparsetc&) = delete;
};

// Served calls hold this lock: the sparsetc objects cached in the side table are not shared by
// two calls at once.
std::recursive_mutex& serve_mutex();

// The sparsetc_cusparse handle paired with a cuSPARSE handle, with its stream and pointer mode.
sparsetc_cusparseHandle_t compat_handle(cusparseHandle_t handle);
// The sparsetc_cusparse descriptor paired with a cuSPARSE sparse descriptor (nnz overlaid for the
// products sparsetc made); Unsupported for formats, index types or batches sparsetc does not take.
sparsetc_cusparseSpMatDescr_t compat_sparse(cusparseConstSpMatDescr_t descr);
// nnz(C) of an SpGEMM product made by sparsetc: cuSPARSE's descriptor still says 0, so the size
// getters answer this (-1: none).
void set_overlay_nnz(cusparseConstSpMatDescr_t descr, int64_t nnz);
int64_t overlay_nnz(cusparseConstSpMatDescr_t descr);

// A sparsetc_cusparse dense descriptor for one call.
class CompatDense {
 public:
  explicit CompatDense(cusparseConstDnMatDescr_t descr);
  ~CompatDense();
  CompatDense(const CompatDense&) = delete;
  CompatDense& operator=(const CompatDense&) = delete;
  sparsetc_cusparseDnMatDescr_t get() const { return dense_; }

 private:
  sparsetc_cusparseDnMatDescr_t dense_ = nullptr;
};

// What was decided for an SpGEMM descriptor at its work estimation: served (with sparsetc's
// descriptor) or forwarded, for the whole sequence.
struct SpgemmShadow {
  bool decided = false;
  bool served = false;
  sparsetc_cusparseSpGEMMDescr_t compat = nullptr;
};
SpgemmShadow& spgemm_shadow(cusparseSpGEMMDescr_t descr);

// Purged when cuSPARSE destroys the object (addresses are reused).
void forget_handle(cusparseHandle_t handle);
void forget_sparse(cusparseConstSpMatDescr_t descr);
void forget_spgemm(cusparseSpGEMMDescr_t descr);
// SpMatSetValues: the pointer and the caller's word that the values changed.
void sparse_values_set(cusparseSpMatDescr_t descr, void* values);

// Message of the last failure on a sparsetc_cusparse handle.
std::string last_error(sparsetc_cusparseHandle_t handle);
// "CSR 1000x1000 nnz 4000 CUDA_R_32F" for the log.
std::string describe(sparsetc_cusparseConstSpMatDescr_t descr);

}  // namespace sparsetc::preload

namespace sparsetc::preload {

// Runs `serve` under the serve lock; an Unsupported case is logged and goes to `forward`.
template <typename Serve, typename Forward>
cusparseStatus_t serve_or_forward(const char* function, Serve&& serve, Forward&& forward) noexcept {
  std::lock_guard<std::recursive_mutex> lock(serve_mutex());
  try {
    try {
      return serve();
    } catch (const Unsupported& u) {
      log_forwarded(function, u.what());
      return forward();
    }
  } catch (const std::bad_alloc&) {
    return CUSPARSE_STATUS_ALLOC_FAILED;
  } catch (...) {
    return CUSPARSE_STATUS_INTERNAL_ERROR;
  }
}

// The outcome of a sparsetc_cusparse call made for `function`: NOT_SUPPORTED (nothing was done)
// throws Unsupported; success is logged as served; another failure is logged and returned.
cusparseStatus_t finish(const char* function, sparsetc_cusparseHandle_t handle, sparsetc_cusparseStatus_t status,
                        const std::string& what);

// A sparse operand for a forwarded call: cuSPARSE's own descriptor, or, for a product sparsetc
// made (whose descriptor still counts 0 entries), a temporary one with the true nnz.
class ForwardedSparse {
 public:
  explicit ForwardedSparse(cusparseConstSpMatDescr_t descr);
  ~ForwardedSparse();
  ForwardedSparse(const ForwardedSparse&) = delete;
  ForwardedSparse& operator=(const ForwardedSparse&) = delete;
  cusparseConstSpMatDescr_t get() const { return temporary_ ? temporary_ : descr_; }

 private:
  cusparseConstSpMatDescr_t descr_;
  cusparseConstSpMatDescr_t temporary_ = nullptr;
};

}  // namespace sparsetc::preload

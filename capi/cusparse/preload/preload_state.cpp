#include "preload_state.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <unordered_map>

namespace sparsetc::preload {
namespace {

unsigned parse_groups() {
  const char* env = std::getenv("SPARSETC_CUSPARSE_INTERCEPT");
  if (!env || !*env) return kSpmm | kSpgemm | kSpgemmReuse;
  unsigned groups = 0;
  std::stringstream list(env);
  std::string item;
  while (std::getline(list, item, ',')) {
    if (item == "all") groups |= kSpmm | kSpgemm | kSpgemmReuse;
    else if (item == "spmm") groups |= kSpmm;
    else if (item == "spgemm") groups |= kSpgemm;
    else if (item == "spgemm_reuse") groups |= kSpgemmReuse;
    else if (item != "none" && !item.empty())
      std::fprintf(stderr, "sparsetc-cusparse: SPARSETC_CUSPARSE_INTERCEPT: unknown group '%s' (spmm, spgemm, "
                   "spgemm_reuse, all, none)\n", item.c_str());
  }
  return groups;
}

// A sparse descriptor as cuSPARSE describes it, and the sparsetc_cusparse one made from it.
struct SparseEntry {
  sparsetc_cusparseSpMatDescr_t compat = nullptr;
  cusparseFormat_t format = CUSPARSE_FORMAT_CSR;
  int64_t rows = 0, cols = 0, nnz = 0;
  const void* offsets = nullptr;
  const void* indices = nullptr;
  const void* values = nullptr;
  cusparseIndexType_t offset_type = CUSPARSE_INDEX_32I, index_type = CUSPARSE_INDEX_32I;
  cusparseIndexBase_t base = CUSPARSE_INDEX_BASE_ZERO;
  cudaDataType value_type = CUDA_R_32F;
  int64_t overlay_nnz = -1;

  bool same_pattern(const SparseEntry& o) const {
    return format == o.format && rows == o.rows && cols == o.cols && nnz == o.nnz && offsets == o.offsets &&
           indices == o.indices && offset_type == o.offset_type && index_type == o.index_type && base == o.base &&
           value_type == o.value_type;
  }
};

// Never destroyed: sparsetc objects are not released during static destruction, when the CUDA
// runtime may already be gone.
struct Table {
  std::mutex mutex;
  std::unordered_map<const void*, sparsetc_cusparseHandle_t> handles;
  std::unordered_map<const void*, SparseEntry> sparse;
  std::unordered_map<const void*, SpgemmShadow> spgemm;
};
Table& table() {
  static Table* t = new Table();
  return *t;
}

thread_local int inside_depth = 0;

void check_compat(sparsetc_cusparseStatus_t status, sparsetc_cusparseHandle_t handle, const char* what) {
  if (status == SPARSETC_CUSPARSE_STATUS_SUCCESS) return;
  throw Unsupported(std::string(what) + ": " + last_error(handle));
}

const char* format_name(int format) {
  switch (format) {
    case CUSPARSE_FORMAT_CSR: return "CSR";
    case CUSPARSE_FORMAT_CSC: return "CSC";
    case CUSPARSE_FORMAT_COO: return "COO";
    case CUSPARSE_FORMAT_BLOCKED_ELL: return "Blocked-ELL";
    case CUSPARSE_FORMAT_BSR: return "BSR";
    case CUSPARSE_FORMAT_SLICED_ELLPACK: return "Sliced-ELL";
    default: return "unknown format";
  }
}

}  // namespace

bool intercepts(Group group) {
  static const unsigned groups = parse_groups();
  return (groups & group) != 0;
}

bool logging() {
  static const bool on = [] {
    const char* env = std::getenv("SPARSETC_CUSPARSE_LOG");
    return env && *env && std::strcmp(env, "0") != 0;
  }();
  return on;
}

void log_served(const char* function, const std::string& what) {
  if (logging()) std::fprintf(stderr, "sparsetc-cusparse: served %s (%s)\n", function, what.c_str());
}

void log_forwarded(const char* function, const std::string& why) {
  if (logging()) std::fprintf(stderr, "sparsetc-cusparse: forwarded %s because %s\n", function, why.c_str());
}

bool inside_sparsetc() { return inside_depth > 0; }
InsideSparsetc::InsideSparsetc() { ++inside_depth; }
InsideSparsetc::~InsideSparsetc() { --inside_depth; }

std::recursive_mutex& serve_mutex() {
  static std::recursive_mutex* m = new std::recursive_mutex();
  return *m;
}

std::string last_error(sparsetc_cusparseHandle_t handle) {
  char message[1024] = {0};
  sparsetc_cusparse_get_last_error(handle, message, sizeof message);
  return message[0] ? message : "unknown reason";
}

std::string describe(sparsetc_cusparseConstSpMatDescr_t descr) {
  int64_t rows = 0, cols = 0, nnz = 0;
  sparsetc_cusparseFormat_t format = SPARSETC_CUSPARSE_FORMAT_CSR;
  InsideSparsetc inside;
  sparsetc_cusparseSpMatGetSize(descr, &rows, &cols, &nnz);
  sparsetc_cusparseSpMatGetFormat(descr, &format);
  std::ostringstream out;
  out << format_name(format) << " " << rows << "x" << cols << " nnz " << nnz;
  return out.str();
}

sparsetc_cusparseHandle_t compat_handle(cusparseHandle_t handle) {
  cudaStream_t stream = nullptr;
  cusparsePointerMode_t mode = CUSPARSE_POINTER_MODE_HOST;
  if (REAL(cusparseGetStream)(handle, &stream) != CUSPARSE_STATUS_SUCCESS ||
      REAL(cusparseGetPointerMode)(handle, &mode) != CUSPARSE_STATUS_SUCCESS)
    throw Unsupported("the handle's stream or pointer mode cannot be read");
  sparsetc_cusparseHandle_t compat = nullptr;
  {
    std::lock_guard<std::mutex> lock(table().mutex);
    compat = table().handles[handle];
  }
  InsideSparsetc inside;
  if (!compat) {
    if (sparsetc_cusparseCreate(&compat) != SPARSETC_CUSPARSE_STATUS_SUCCESS)
      throw Unsupported("no sparsetc handle: " + last_error(nullptr));
    std::lock_guard<std::mutex> lock(table().mutex);
    table().handles[handle] = compat;
  }
  sparsetc_cusparseSetStream(compat, stream);
  sparsetc_cusparseSetPointerMode(compat, static_cast<sparsetc_cusparsePointerMode_t>(mode));
  return compat;
}

sparsetc_cusparseSpMatDescr_t compat_sparse(cusparseConstSpMatDescr_t descr) {
  if (!descr) throw Unsupported("a NULL sparse descriptor");
  SparseEntry now;
  if (REAL(cusparseSpMatGetFormat)(descr, &now.format) != CUSPARSE_STATUS_SUCCESS)
    throw Unsupported("the sparse descriptor cannot be read");
  int batch = 1;
  if (REAL(cusparseSpMatGetStridedBatch)(descr, &batch) == CUSPARSE_STATUS_SUCCESS && batch > 1)
    throw Unsupported("a strided batch of " + std::to_string(batch) + " sparse matrices");
  cusparseStatus_t status;
  switch (now.format) {
    case CUSPARSE_FORMAT_CSR:
      status = REAL(cusparseConstCsrGet)(descr, &now.rows, &now.cols, &now.nnz, &now.offsets, &now.indices,
                                         &now.values, &now.offset_type, &now.index_type, &now.base, &now.value_type);
      break;
    case CUSPARSE_FORMAT_CSC:
      status = REAL(cusparseConstCscGet)(descr, &now.rows, &now.cols, &now.nnz, &now.offsets, &now.indices,
                                         &now.values, &now.offset_type, &now.index_type, &now.base, &now.value_type);
      break;
    case CUSPARSE_FORMAT_COO:
      status = REAL(cusparseConstCooGet)(descr, &now.rows, &now.cols, &now.nnz, &now.offsets, &now.indices,
                                         &now.values, &now.index_type, &now.base, &now.value_type);
      now.offset_type = now.index_type;
      break;
    default:
      throw Unsupported(std::string("the sparse format is ") + format_name(now.format));
  }
  if (status != CUSPARSE_STATUS_SUCCESS) throw Unsupported("the sparse descriptor cannot be read");
  if (now.offset_type == CUSPARSE_INDEX_16U || now.index_type == CUSPARSE_INDEX_16U)
    throw Unsupported("16-bit unsigned indices");

  SparseEntry* entry;
  {
    std::lock_guard<std::mutex> lock(table().mutex);
    entry = &table().sparse[descr];
  }
  if (now.nnz == 0 && entry->overlay_nnz >= 0) now.nnz = entry->overlay_nnz;  // a product made by sparsetc
  now.overlay_nnz = entry->overlay_nnz;
  InsideSparsetc inside;
  if (entry->compat && entry->same_pattern(now)) {
    if (entry->values != now.values)
      check_compat(sparsetc_cusparseSpMatSetValues(entry->compat, const_cast<void*>(now.values)), nullptr,
                   "new values");
    entry->values = now.values;
    return entry->compat;
  }
  if (entry->compat) sparsetc_cusparseDestroySpMat(entry->compat);
  entry->compat = nullptr;
  sparsetc_cusparseSpMatDescr_t made = nullptr;
  void* p0 = const_cast<void*>(now.offsets);
  void* p1 = const_cast<void*>(now.indices);
  void* p2 = const_cast<void*>(now.values);
  const auto t0 = static_cast<sparsetc_cusparseIndexType_t>(now.offset_type);
  const auto t1 = static_cast<sparsetc_cusparseIndexType_t>(now.index_type);
  const auto base = static_cast<sparsetc_cusparseIndexBase_t>(now.base);
  if (now.format == CUSPARSE_FORMAT_CSR)
    check_compat(sparsetc_cusparseCreateCsr(&made, now.rows, now.cols, now.nnz, p0, p1, p2, t0, t1, base,
                                            now.value_type),
                 nullptr, "describing the CSR matrix");
  else if (now.format == CUSPARSE_FORMAT_CSC)
    check_compat(sparsetc_cusparseCreateCsc(&made, now.rows, now.cols, now.nnz, p0, p1, p2, t0, t1, base,
                                            now.value_type),
                 nullptr, "describing the CSC matrix");
  else
    check_compat(sparsetc_cusparseCreateCoo(&made, now.rows, now.cols, now.nnz, p0, p1, p2, t1, base, now.value_type),
                 nullptr, "describing the COO matrix");
  now.compat = made;
  std::lock_guard<std::mutex> lock(table().mutex);  // the size getters read the entry
  *entry = now;
  return made;
}

void set_overlay_nnz(cusparseConstSpMatDescr_t descr, int64_t nnz) {
  std::lock_guard<std::mutex> lock(table().mutex);
  table().sparse[descr].overlay_nnz = nnz;
}

int64_t overlay_nnz(cusparseConstSpMatDescr_t descr) {
  std::lock_guard<std::mutex> lock(table().mutex);
  const auto it = table().sparse.find(descr);
  return it == table().sparse.end() ? -1 : it->second.overlay_nnz;
}

CompatDense::CompatDense(cusparseConstDnMatDescr_t descr) {
  if (!descr) throw Unsupported("a NULL dense descriptor");
  int64_t rows = 0, cols = 0, ld = 0;
  const void* values = nullptr;
  cudaDataType type = CUDA_R_32F;
  cusparseOrder_t order = CUSPARSE_ORDER_COL;
  if (REAL(cusparseConstDnMatGet)(descr, &rows, &cols, &ld, &values, &type, &order) != CUSPARSE_STATUS_SUCCESS)
    throw Unsupported("the dense descriptor cannot be read");
  int batch = 1;
  int64_t stride = 0;
  if (REAL(cusparseDnMatGetStridedBatch)(descr, &batch, &stride) == CUSPARSE_STATUS_SUCCESS && batch > 1)
    throw Unsupported("a strided batch of " + std::to_string(batch) + " dense matrices");
  InsideSparsetc inside;
  check_compat(sparsetc_cusparseCreateDnMat(&dense_, rows, cols, ld, const_cast<void*>(values), type,
                                            static_cast<sparsetc_cusparseOrder_t>(order)),
               nullptr, "describing the dense matrix");
}

CompatDense::~CompatDense() {
  InsideSparsetc inside;
  sparsetc_cusparseDestroyDnMat(dense_);
}

SpgemmShadow& spgemm_shadow(cusparseSpGEMMDescr_t descr) {
  std::lock_guard<std::mutex> lock(table().mutex);
  return table().spgemm[descr];
}

void forget_handle(cusparseHandle_t handle) {
  sparsetc_cusparseHandle_t compat = nullptr;
  {
    std::lock_guard<std::mutex> lock(table().mutex);
    const auto it = table().handles.find(handle);
    if (it == table().handles.end()) return;
    compat = it->second;
    table().handles.erase(it);
  }
  InsideSparsetc inside;
  sparsetc_cusparseDestroy(compat);
}

void forget_sparse(cusparseConstSpMatDescr_t descr) {
  sparsetc_cusparseSpMatDescr_t compat = nullptr;
  {
    std::lock_guard<std::mutex> lock(table().mutex);
    const auto it = table().sparse.find(descr);
    if (it == table().sparse.end()) return;
    compat = it->second.compat;
    table().sparse.erase(it);
  }
  InsideSparsetc inside;
  sparsetc_cusparseDestroySpMat(compat);
}

void forget_spgemm(cusparseSpGEMMDescr_t descr) {
  sparsetc_cusparseSpGEMMDescr_t compat = nullptr;
  {
    std::lock_guard<std::mutex> lock(table().mutex);
    const auto it = table().spgemm.find(descr);
    if (it == table().spgemm.end()) return;
    compat = it->second.compat;
    table().spgemm.erase(it);
  }
  InsideSparsetc inside;
  sparsetc_cusparseSpGEMM_destroyDescr(compat);
}

void sparse_values_set(cusparseSpMatDescr_t descr, void* values) {
  sparsetc_cusparseSpMatDescr_t compat = nullptr;
  {
    std::lock_guard<std::mutex> lock(table().mutex);
    const auto it = table().sparse.find(descr);
    if (it == table().sparse.end() || !it->second.compat) return;
    compat = it->second.compat;
    it->second.values = values;
  }
  InsideSparsetc inside;
  sparsetc_cusparseSpMatSetValues(compat, values);
}

}  // namespace sparsetc::preload

namespace sparsetc::preload {

cusparseStatus_t finish(const char* function, sparsetc_cusparseHandle_t handle, sparsetc_cusparseStatus_t status,
                        const std::string& what) {
  if (status == SPARSETC_CUSPARSE_STATUS_NOT_SUPPORTED) throw Unsupported(last_error(handle));
  if (status == SPARSETC_CUSPARSE_STATUS_SUCCESS) log_served(function, what);
  else if (logging())
    std::fprintf(stderr, "sparsetc-cusparse: %s failed in sparsetc (status %d): %s\n", function, int(status),
                 last_error(handle).c_str());
  return static_cast<cusparseStatus_t>(status);
}

ForwardedSparse::ForwardedSparse(cusparseConstSpMatDescr_t descr) : descr_(descr) {
  const int64_t nnz = descr ? overlay_nnz(descr) : -1;
  if (nnz < 0) return;
  int64_t rows = 0, cols = 0, real_nnz = 0;
  const void *offsets = nullptr, *indices = nullptr, *values = nullptr;
  cusparseIndexType_t offset_type, index_type;
  cusparseIndexBase_t base;
  cudaDataType type;
  if (REAL(cusparseConstCsrGet)(descr, &rows, &cols, &real_nnz, &offsets, &indices, &values, &offset_type,
                                &index_type, &base, &type) != CUSPARSE_STATUS_SUCCESS || real_nnz != 0)
    return;
  if (REAL(cusparseCreateConstCsr)(&temporary_, rows, cols, nnz, offsets, indices, values, offset_type, index_type,
                                   base, type) != CUSPARSE_STATUS_SUCCESS)
    temporary_ = nullptr;
}

ForwardedSparse::~ForwardedSparse() {
  if (temporary_) REAL(cusparseDestroySpMat)(temporary_);
}

}  // namespace sparsetc::preload

#include "gpu/side_stream.hpp"

#include <utility>

#include "gpu/cuda_check.hpp"

namespace sparsetc::detail {

SideStream::~SideStream() {
  if (to_side_ != nullptr) cudaEventDestroy(to_side_);
  if (to_main_ != nullptr) cudaEventDestroy(to_main_);
  if (side_ != nullptr) cudaStreamDestroy(side_);  // returns at once; pending work still completes
}

void SideStream::swap(SideStream& other) noexcept {
  std::swap(side_, other.side_);
  std::swap(to_side_, other.to_side_);
  std::swap(to_main_, other.to_main_);
}

void SideStream::make() {
  if (side_ != nullptr) return;
  SideStream made;  // released by its destructor if a later call fails
  SPARSETC_CUDA_CHECK(cudaStreamCreateWithFlags(&made.side_, cudaStreamNonBlocking));
  SPARSETC_CUDA_CHECK(cudaEventCreateWithFlags(&made.to_side_, cudaEventDisableTiming));
  SPARSETC_CUDA_CHECK(cudaEventCreateWithFlags(&made.to_main_, cudaEventDisableTiming));
  swap(made);
}

cudaStream_t SideStream::stream() {
  make();
  return side_;
}

void SideStream::fork(cudaStream_t main) {
  make();
  SPARSETC_CUDA_CHECK(cudaEventRecord(to_side_, main));
  SPARSETC_CUDA_CHECK(cudaStreamWaitEvent(side_, to_side_, 0));
}

void SideStream::join(cudaStream_t main) {
  make();
  SPARSETC_CUDA_CHECK(cudaEventRecord(to_main_, side_));
  SPARSETC_CUDA_CHECK(cudaStreamWaitEvent(main, to_main_, 0));
}

SideStreamBarrier::~SideStreamBarrier() {
  if (side_ == nullptr || side_->made() == nullptr) return;
  try {
    side_->join(main_);
    side_->fork(main_);
  } catch (...) {  // a failing runtime: wait for both rather than free under running work
    cudaStreamSynchronize(side_->made());
    cudaStreamSynchronize(main_);
  }
}

}  // namespace sparsetc::detail

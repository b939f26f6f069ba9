// A second stream on the current device for work that may overlap the caller's stream (the merge
// rows of a binned SpGEMM panel run beside its other bins), with the events that order the two.
// Everything the caller sees stays ordered on the caller's stream: the side stream starts from a
// point of it (fork) and the caller's stream waits for the side's work before using it (join).
#pragma once

#include <cuda_runtime_api.h>

namespace sparsetc::detail {

class SideStream {
 public:
  SideStream() = default;
  ~SideStream();
  SideStream(SideStream&& other) noexcept { swap(other); }
  SideStream& operator=(SideStream&& other) noexcept {
    SideStream(static_cast<SideStream&&>(other)).swap(*this);
    return *this;
  }
  SideStream(const SideStream&) = delete;
  SideStream& operator=(const SideStream&) = delete;

  // The side stream (made on first use, non-blocking, on the current device).
  cudaStream_t stream();
  // The side stream if made, else nullptr (never makes it).
  cudaStream_t made() const { return side_; }
  // The side stream waits for `main`'s work so far.
  void fork(cudaStream_t main);
  // `main` waits for the side stream's work so far.
  void join(cudaStream_t main);

 private:
  void swap(SideStream& other) noexcept;
  void make();
  cudaStream_t side_ = nullptr;
  cudaEvent_t to_side_ = nullptr, to_main_ = nullptr;
};

// Orders a side stream and `main` both ways when it goes out of scope, also while an exception
// unwinds (errors there are not reported: nothing may throw from a destructor): declared after
// the buffers both streams use, it runs before they are freed, so no free on either stream comes
// before the other stream's last use.
class SideStreamBarrier {
 public:
  SideStreamBarrier(SideStream* side, cudaStream_t main) : side_(side), main_(main) {}
  ~SideStreamBarrier();
  SideStreamBarrier(const SideStreamBarrier&) = delete;
  SideStreamBarrier& operator=(const SideStreamBarrier&) = delete;

 private:
  SideStream* side_;
  cudaStream_t main_;
};

}  // namespace sparsetc::detail

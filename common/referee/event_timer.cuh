// A pair of CUDA events around work on one stream. Events time what the GPU
// did, not how long the host waited, and cost no extra synchronisation.
#pragma once

#include "lab/cuda_check.cuh"

namespace memlabs {

class EventTimer {
 public:
  EventTimer() {
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  EventTimer(EventTimer&& other) noexcept : start_(other.start_), stop_(other.stop_) {
    other.start_ = other.stop_ = nullptr;
  }

  void start(cudaStream_t stream) { CUDA_CHECK(cudaEventRecord(start_, stream)); }
  void stop(cudaStream_t stream) { CUDA_CHECK(cudaEventRecord(stop_, stream)); }
  // Waits for the stop event, then returns the elapsed GPU time.
  float elapsed_ms() const {
    CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

}  // namespace memlabs

// Evicts the L2 cache before a timed launch by writing a buffer twice its size,
// so every timed launch starts cold: a kernel cannot look fast because the
// previous launch left its inputs in L2.
#pragma once

#include "lab/cuda_check.cuh"
#include "lab/device_buffer.cuh"

namespace memlabs {

class L2Flush {
 public:
  L2Flush() {
    int device = 0, l2_bytes = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    l2_bytes_ = static_cast<std::size_t>(l2_bytes);
    buffer_ = DeviceBuffer<unsigned char>(l2_bytes_ > 0 ? 2 * l2_bytes_ : 1);
  }
  void flush(cudaStream_t stream) {
    // Lines a program marked persisting (an access-policy window, evict_last
    // hints) survive ordinary writes; they are made normal first so the memset
    // evicts them too. A GPU without persisting L2 (before sm_80) says it is not
    // supported, which changes nothing here.
    if (cudaCtxResetPersistingL2Cache() != cudaSuccess) cudaGetLastError();
    // A changing byte value keeps the writes from being elided as no-ops.
    CUDA_CHECK(cudaMemsetAsync(buffer_.data(), ++value_ & 0xff, buffer_.bytes(), stream));
  }
  std::size_t l2_bytes() const { return l2_bytes_; }

 private:
  std::size_t l2_bytes_ = 0;
  DeviceBuffer<unsigned char> buffer_;
  int value_ = 0;
};

}  // namespace memlabs

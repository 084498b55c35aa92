// RAII device memory. Move-only: a buffer has exactly one owner, so it is
// freed exactly once even when a CudaError unwinds the stack. The memory comes
// from shared_memory.cuh, so the same buffer is plain cudaMalloc in a
// standalone run, exported by the referee, and mapped by the submission's process.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "cuda_check.cuh"
#include "shared_memory.cuh"

namespace memlabs {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) data_ = static_cast<T*>(device_allocate(count_ * sizeof(T)));
  }
  ~DeviceBuffer() {
    device_release(data_);  // never throws from a destructor
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    DeviceBuffer(std::move(other)).swap(*this);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

  void copy_from_host(const std::vector<T>& host) {
    if (host.size() != count_) throw std::invalid_argument("copy_from_host: size mismatch");
    CUDA_CHECK(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  std::vector<T> copy_to_host() const {
    std::vector<T> host(count_);
    if (count_ > 0) CUDA_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  void swap(DeviceBuffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
  }
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace memlabs

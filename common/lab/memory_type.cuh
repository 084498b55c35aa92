// What CUDA knows of a pointer, for the drivers whose facts say what memory a
// student's allocation is (lab03's managed table, lab10's pinned arrays).
#pragma once

#include <cuda_runtime.h>

namespace memlabs {

// The memory type cudaPointerGetAttributes reports (cudaMemoryTypeHost, Device or
// Managed), or -1 where CUDA does not know the address: ordinary host memory, or
// an allocation already freed. The error is cleared so that it cannot surface at
// the next check.
inline int memory_type(const void* p) {
  if (p == nullptr) return -1;
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return static_cast<int>(a.type);
}

}  // namespace memlabs

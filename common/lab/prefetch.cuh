// Managed-memory prefetch and advice in one spelling for CUDA 12 and CUDA 13.
//
// CUDA 13 removed cudaMemPrefetchAsync(ptr, bytes, int device, stream) and
// cudaMemAdvise(ptr, bytes, advice, int device). Their replacements take a
// cudaMemLocation (a type and an id) instead of a device number, and the
// prefetch also takes a flags word (0). CUDA 12.2 to 12.x has the new forms too, as
// cudaMemPrefetchAsync_v2 and cudaMemAdvise_v2, but the old names still mean the
// old forms there, so the choice is made once, here, on CUDART_VERSION.
//
// Like the runtime calls they wrap, these return a cudaError_t:
//   CUDA_CHECK(memlabs::prefetch_to_device(p, bytes, device, stream));
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace memlabs {

#if CUDART_VERSION >= 13000
// cudaCpuDeviceId means host memory, any other value a GPU, as in CUDA 12.
inline cudaMemLocation memory_location(int device) {
  cudaMemLocation location{};
  if (device == cudaCpuDeviceId) {
    location.type = cudaMemLocationTypeHost;
    location.id = 0;  // ignored for the host
  } else {
    location.type = cudaMemLocationTypeDevice;
    location.id = device;
  }
  return location;
}
#endif

// Migrates the managed range [ptr, ptr + bytes) to `device` (a GPU ordinal, or
// cudaCpuDeviceId for host memory), in order on `stream`.
inline cudaError_t prefetch(const void* ptr, std::size_t bytes, int device, cudaStream_t stream) {
#if CUDART_VERSION >= 13000
  return cudaMemPrefetchAsync(ptr, bytes, memory_location(device), 0, stream);
#else
  return cudaMemPrefetchAsync(ptr, bytes, device, stream);
#endif
}

// Before a kernel on `device` reads the range: one bulk migration instead of
// one GPU page fault after another.
inline cudaError_t prefetch_to_device(const void* ptr, std::size_t bytes, int device, cudaStream_t stream) {
  return prefetch(ptr, bytes, device, stream);
}

// Before the host reads the range: the same, in the other direction.
inline cudaError_t prefetch_to_host(const void* ptr, std::size_t bytes, cudaStream_t stream) {
  return prefetch(ptr, bytes, cudaCpuDeviceId, stream);
}

// cudaMemAdvise with a device number (cudaCpuDeviceId for the host). The
// location is ignored by cudaMemAdviseSetReadMostly and its Unset.
inline cudaError_t advise(const void* ptr, std::size_t bytes, cudaMemoryAdvise advice, int device) {
#if CUDART_VERSION >= 13000
  return cudaMemAdvise(ptr, bytes, advice, memory_location(device));
#else
  return cudaMemAdvise(ptr, bytes, advice, device);
#endif
}

}  // namespace memlabs

// fault: the tail loop reads src from its start (src[i]) instead of past the float4 groups: right whenever n % 4 == 0 or n < 4
// expect: step 2 fails: correct (edge_mismatch)
// message: case 7: 3 of 7 elements of `dst` differ from the expected result
// message: right at 4096
// lab00: know your GPU. This is the file you edit.
#include "lab.cuh"

// The runtime knows the answer to every question in DeviceFacts; this asks it.
void query_device_facts(int device, DeviceFacts* facts) {
  // One attribute per call: each is a cheap lookup, where cudaGetDeviceProperties
  // fills all of cudaDeviceProp, including fields that are slow to query.
  auto attribute = [device](cudaDeviceAttr what) {
    int value = 0;
    if (cudaDeviceGetAttribute(&value, what, device) != cudaSuccess) return -1;
    return value;
  };
  facts->sm_count = attribute(cudaDevAttrMultiProcessorCount);
  facts->warp_size = attribute(cudaDevAttrWarpSize);
  facts->l2_bytes = attribute(cudaDevAttrL2CacheSize);
  facts->shared_per_block = attribute(cudaDevAttrMaxSharedMemoryPerBlock);
  facts->shared_per_sm = attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor);
  facts->registers_per_sm = attribute(cudaDevAttrMaxRegistersPerMultiprocessor);
  facts->max_threads_per_sm = attribute(cudaDevAttrMaxThreadsPerMultiProcessor);
  facts->memory_bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth);
  facts->constant_bytes = attribute(cudaDevAttrTotalConstantMemory);
  facts->managed_memory = attribute(cudaDevAttrManagedMemory) == 1;
}

// A grid-stride loop: each thread starts at its global index and steps by the
// number of threads in the grid, so a grid of any size covers any n.
__global__ void copy_kernel(float* __restrict__ dst, const float* __restrict__ src, size_t n) {
  const size_t first = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  // 16 bytes per load and store: four times the bytes in flight per instruction.
  // Legal only because both pointers are 16-byte aligned (see lab.cuh).
  const size_t groups = n / 4;
  const float4* src4 = reinterpret_cast<const float4*>(src);
  float4* dst4 = reinterpret_cast<float4*>(dst);
  for (size_t i = first; i < groups; i += stride) dst4[i] = src4[i];
  // The last n % 4 elements do not fill a float4: at most three, one thread each.
  for (size_t i = first; i < n % 4; i += stride) dst[4 * groups + i] = src[i];
}

void launch_copy(float* dst, const float* src, size_t n, cudaStream_t stream) {
  constexpr int kThreads = 256;
  // Every SM full of resident threads keeps the most loads in flight; the
  // grid-stride loop covers whatever one pass of the grid does not.
  int device = 0, sms = 0, threads_per_sm = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device);
  const int blocks = sms * (threads_per_sm / kThreads);
  copy_kernel<<<blocks, kThreads, 0, stream>>>(dst, src, n);
}

// lab00 interface: shared by kernel.cu (yours), the solution and driver.cu.
#pragma once

#include <cstddef>

#include <cuda_runtime.h>

// What the runtime reports about one GPU: the numbers the later labs reason with.
// The types are those of the matching cudaDeviceProp fields, so the struct can be
// filled from either cudaGetDeviceProperties or cudaDeviceGetAttribute without casts.
struct DeviceFacts {
  int sm_count = 0;            // streaming multiprocessors
  int warp_size = 0;           // threads per warp
  int l2_bytes = 0;            // L2 cache, bytes
  size_t shared_per_block = 0; // shared memory a block gets without opting in, bytes
  size_t shared_per_sm = 0;    // shared memory of one SM, bytes
  int registers_per_sm = 0;    // 32-bit registers of one SM
  int max_threads_per_sm = 0;  // threads one SM can hold resident at once
  int memory_bus_bits = 0;     // width of the device-memory bus, bits
  size_t constant_bytes = 0;   // __constant__ memory, bytes
  bool managed_memory = false; // cudaMallocManaged works on this device
};

// Fills `facts` for `device`. The driver passes the current device and a zeroed struct.
void query_device_facts(int device, DeviceFacts* facts);

// dst[i] = src[i] for every i in [0, n). Any n >= 1; both pointers come from
// cudaMalloc (plus a multiple of 16 bytes), so both are 16-byte aligned.
void launch_copy(float* dst, const float* src, size_t n, cudaStream_t stream);

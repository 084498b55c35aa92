// Which compute-sanitizer tool sees a read past the end of an input, kept or thrown away: the
// measurement behind docs/security.md's "Reads past an input that memcheck cannot see"
// (log: ../logs/h100-read-past-the-end.log).
// One float4 load of bytes 16..31 of `src`, whose first 28 bytes hold data; only .x, .y and .z
// (bytes 16..27) are used, so the output is right whatever bytes 28..31 hold. Variants (argv[1]):
//   exact     cudaMalloc(28): bytes 28..31 lie outside the allocation
//   rounded   cudaMalloc(256), 28 bytes written: bytes 28..31 inside it, never written
//   pool      rounded, plus an NVTX pool whose one region is the 28 bytes (as common/lab/shared_memory.cpp)
//   written   cudaMalloc(256), all 256 bytes written: the control, a read of written bytes
//   row       cudaMalloc(256), 256 bytes written; a scalar load at byte 256: wholly past the end
// scripts/run-probes runs each variant under each tool named here:
// probe-sanitizer-tools: memcheck initcheck
// probe-args: exact rounded pool written row
// probe-nvcc-flags: -arch=sm_90
#include <cstdio>
#include <cstring>
#include <nvtx3/nvToolsExtMem.h>

__global__ void tail(const float* src, float* dst) {
  const float4 v = reinterpret_cast<const float4*>(src)[1];
  dst[0] = v.x + v.y + v.z;
}

__global__ void past_row(const float* src, float* dst) { dst[0] = src[64]; }

void register_pool(void* p, size_t whole_bytes, size_t used) {
  const nvtxDomainHandle_t d = nvtxDomainCreateA("probe");
  nvtxMemVirtualRangeDesc_t whole{};
  whole.ptr = p;
  whole.size = whole_bytes;
  nvtxMemHeapDesc_t h{};
  h.extCompatID = NVTX_EXT_COMPATID_MEM;
  h.structSize = sizeof(h);
  h.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
  h.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  h.typeSpecificDescSize = sizeof(whole);
  h.typeSpecificDesc = &whole;
  const nvtxMemHeapHandle_t heap = nvtxMemHeapRegister(d, &h);
  nvtxMemVirtualRangeDesc_t r{};
  r.ptr = p;
  r.size = used;
  nvtxMemRegionsRegisterBatch_t b{};
  b.extCompatID = NVTX_EXT_COMPATID_MEM;
  b.structSize = sizeof(b);
  b.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  b.heap = heap;
  b.regionCount = 1;
  b.regionDescElementSize = sizeof(r);
  b.regionDescElements = &r;
  nvtxMemRegionsRegister(d, &b);
}

int main(int argc, char** argv) {
  const char* v = argc > 1 ? argv[1] : "exact";
  const bool exact = !strcmp(v, "exact"), whole = !strcmp(v, "written") || !strcmp(v, "row");
  float host[64];
  for (int i = 0; i < 64; ++i) host[i] = 1.0f + i;
  float *src = nullptr, *dst = nullptr;
  cudaMalloc(&src, exact ? 28 : 256);
  cudaMalloc(&dst, 4);
  cudaMemcpy(src, host, whole ? 256 : 28, cudaMemcpyHostToDevice);
  if (!strcmp(v, "pool")) register_pool(src, 256, 28);
  if (!strcmp(v, "row"))
    past_row<<<1, 1>>>(src, dst);
  else
    tail<<<1, 1>>>(src, dst);
  const cudaError_t e = cudaDeviceSynchronize();
  float out = 0;
  cudaMemcpy(&out, dst, 4, cudaMemcpyDeviceToHost);
  printf("%s: %s, dst %.1f\n", v, cudaGetErrorString(e), out);
  return 0;
}

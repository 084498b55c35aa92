#include "shared_memory.cuh"

#include <cuda.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExtMem.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_check.cuh"

namespace memlabs {
namespace {

// The driver API's virtual-memory calls, looked up through the runtime so that
// nothing links libcuda directly (a machine without a driver still builds).
struct Vmm {
  decltype(&cuMemCreate) create = nullptr;
  decltype(&cuMemRelease) release = nullptr;
  decltype(&cuMemExportToShareableHandle) export_fd = nullptr;
  decltype(&cuMemImportFromShareableHandle) import_fd = nullptr;
  decltype(&cuMemAddressReserve) reserve = nullptr;
  decltype(&cuMemAddressFree) unreserve = nullptr;
  decltype(&cuMemMap) map = nullptr;
  decltype(&cuMemUnmap) unmap = nullptr;
  decltype(&cuMemSetAccess) set_access = nullptr;
  decltype(&cuMemGetAllocationGranularity) granularity = nullptr;
};

template <class F>
void look_up(const char* name, F& f) {
  cudaDriverEntryPointQueryResult q{};
  CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, reinterpret_cast<void**>(&f), 12000, cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess || !f) throw std::runtime_error(std::string("the driver has no ") + name);
}

const Vmm& vmm() {
  static const Vmm v = [] {
    Vmm x;
    CUDA_CHECK(cudaFree(nullptr));  // the primary context, so the calls below have one
    look_up("cuMemCreate", x.create);
    look_up("cuMemRelease", x.release);
    look_up("cuMemExportToShareableHandle", x.export_fd);
    look_up("cuMemImportFromShareableHandle", x.import_fd);
    look_up("cuMemAddressReserve", x.reserve);
    look_up("cuMemAddressFree", x.unreserve);
    look_up("cuMemMap", x.map);
    look_up("cuMemUnmap", x.unmap);
    look_up("cuMemSetAccess", x.set_access);
    look_up("cuMemGetAllocationGranularity", x.granularity);
    return x;
  }();
  return v;
}

void check(CUresult r, const char* call) {
  if (r == CUDA_SUCCESS) return;
  // The runtime's error of the same number says the same thing in the same words.
  throw CudaError(static_cast<cudaError_t>(r), call, __FILE__, __LINE__);
}

int current_device() {
  int d = 0;
  CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

CUmemAllocationProp allocation_prop() {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = current_device();
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return p;
}

std::size_t rounded(std::size_t bytes) {
  const CUmemAllocationProp p = allocation_prop();
  std::size_t g = 0;
  check(vmm().granularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM), "cuMemGetAllocationGranularity");
  if (g == 0) g = 2u << 20;
  return (std::max<std::size_t>(bytes, 1) + g - 1) / g * g;
}

// Reserves an address range, maps the allocation there and grants this device access.
void* map_here(CUmemGenericAllocationHandle h, std::size_t size) {
  CUdeviceptr ptr = 0;
  check(vmm().reserve(&ptr, size, 0, 0, 0), "cuMemAddressReserve");
  if (const CUresult r = vmm().map(ptr, size, 0, h, 0); r != CUDA_SUCCESS) {
    vmm().unreserve(ptr, size);
    check(r, "cuMemMap");
  }
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = current_device();
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (const CUresult r = vmm().set_access(ptr, size, &access, 1); r != CUDA_SUCCESS) {
    vmm().unmap(ptr, size);
    vmm().unreserve(ptr, size);
    check(r, "cuMemSetAccess");
  }
  return reinterpret_cast<void*>(ptr);
}

// memcheck watches the standalone run (`worker run`), whose buffers are
// cudaMalloc'd here rounded up to 256 bytes. Told through NVTX that each is a
// pool holding one region of exactly the bytes the problem asked for, memcheck
// reports an access that starts between the buffer's end and that boundary.
// (It judges an access by its first byte: a vector load that starts inside the
// buffer and runs past its end is not reported.) Without a tool attached these
// calls do nothing.
nvtxDomainHandle_t nvtx_domain() {
  static const nvtxDomainHandle_t d = nvtxDomainCreateA("memlabs");
  return d;
}

nvtxMemHeapHandle_t register_pool(void* p, std::size_t mapped, std::size_t used) {
  nvtxMemVirtualRangeDesc_t whole{};
  whole.ptr = p;
  whole.size = mapped;
  nvtxMemHeapDesc_t heap{};
  heap.extCompatID = NVTX_EXT_COMPATID_MEM;
  heap.structSize = sizeof(heap);
  heap.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
  heap.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  heap.typeSpecificDescSize = sizeof(whole);
  heap.typeSpecificDesc = &whole;
  const nvtxMemHeapHandle_t h = nvtxMemHeapRegister(nvtx_domain(), &heap);
  nvtxMemVirtualRangeDesc_t region{};
  region.ptr = p;
  region.size = used;
  nvtxMemRegionsRegisterBatch_t batch{};
  batch.extCompatID = NVTX_EXT_COMPATID_MEM;
  batch.structSize = sizeof(batch);
  batch.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  batch.heap = h;
  batch.regionCount = 1;
  batch.regionDescElementSize = sizeof(region);
  batch.regionDescElements = &region;
  nvtxMemRegionsRegister(nvtx_domain(), &batch);
  return h;
}

// Every shared buffer lies between two guard zones of at least this many bytes,
// filled with 0xFF by the referee when it makes the buffer: a NaN in every float
// and double, -1 in every signed integer. A kernel that reads past the start or
// end of an input and uses what it read gets a NaN (or a wild value) into its
// output, whatever memcheck sees; one that writes there breaks the zone, which
// the referee checks after each run (guard_zones_intact). 64 KiB keeps the data
// as aligned as the mapping's start is for every access a kernel can make.
constexpr std::size_t kGuardZoneBytes = 64 * 1024;
constexpr unsigned char kGuardZoneByte = 0xFF;

struct Mapping {
  CUmemGenericAllocationHandle handle = 0;
  std::size_t size = 0;           // the whole mapping, guard zones included
  unsigned char* base = nullptr;  // where the mapping starts: the data is kGuardZoneBytes in
  std::size_t used = 0;           // the bytes the problem asked for
};

// The size of the mapping for a buffer of `bytes`, guard zones included.
std::size_t mapped_size(std::size_t bytes) { return rounded(bytes + 2 * kGuardZoneBytes); }

struct State {
  std::mutex mutex;
  MemoryRole role = MemoryRole::local;
  std::map<void*, Mapping> mappings;                 // exported or imported, not cudaMalloc'd
  std::map<void*, nvtxMemHeapHandle_t> local_pools;  // cudaMalloc'd, rounded up to 256 bytes
  std::vector<SharedAllocation> exported;            // since the ExportScope began
  std::deque<SharedAllocation> imports;              // still to be used by the ImportScope
};

State& state() {
  static State s;
  return s;
}

}  // namespace

MemoryRole memory_role() {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().role;
}

ExportScope::ExportScope() {
  std::lock_guard<std::mutex> lock(state().mutex);
  previous_ = state().role;
  state().role = MemoryRole::exporting;
  state().exported.clear();
}

ExportScope::~ExportScope() {
  std::lock_guard<std::mutex> lock(state().mutex);
  for (const auto& a : state().exported) ::close(a.fd);
  state().exported.clear();
  state().role = previous_;
}

std::vector<SharedAllocation> ExportScope::take() {
  std::lock_guard<std::mutex> lock(state().mutex);
  std::vector<SharedAllocation> out;
  out.swap(state().exported);
  return out;
}

ImportScope::ImportScope(std::vector<SharedAllocation> allocations) {
  std::lock_guard<std::mutex> lock(state().mutex);
  previous_ = state().role;
  state().role = MemoryRole::importing;
  state().imports.assign(allocations.begin(), allocations.end());
}

ImportScope::~ImportScope() {
  std::lock_guard<std::mutex> lock(state().mutex);
  for (const auto& a : state().imports) ::close(a.fd);
  state().imports.clear();
  state().role = previous_;
}

bool ImportScope::done() const {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().imports.empty();
}

namespace {

// The three ways a buffer comes to be, by the process's role (all under the
// state's lock). Here only: cudaMalloc, rounded to its 256-byte alignment.
void* allocate_local(State& s, std::size_t bytes) {
  // cudaMalloc's own alignment is 256 bytes; the pool makes the bytes between
  // the buffer's end and that boundary off limits to memcheck.
  const std::size_t used = std::max<std::size_t>(bytes, 1), whole = (used + 255) / 256 * 256;
  void* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, whole));
  s.local_pools[p] = register_pool(p, whole, used);
  return p;
}

// For another process too: a mapping with guard zones, its descriptor kept to hand over.
void* allocate_exported(State& s, std::size_t bytes) {
  const Vmm& v = vmm();
  const std::size_t size = mapped_size(bytes);
  const CUmemAllocationProp prop = allocation_prop();
  CUmemGenericAllocationHandle h = 0;
  check(v.create(&h, size, &prop, 0), "cuMemCreate");
  int fd = -1;
  if (const CUresult r = v.export_fd(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0); r != CUDA_SUCCESS) {
    v.release(h);
    check(r, "cuMemExportToShareableHandle");
  }
  unsigned char* base = nullptr;
  try {
    base = static_cast<unsigned char*>(map_here(h, size));
  } catch (...) {
    ::close(fd);
    v.release(h);
    throw;
  }
  void* p = base + kGuardZoneBytes;
  s.mappings[p] = {h, size, base, bytes};
  s.exported.push_back({fd, size});
  // The data is written later (Problem::fill); the zones keep these bytes.
  CUDA_CHECK(cudaMemset(base, kGuardZoneByte, size));
  CUDA_CHECK(cudaDeviceSynchronize());
  return p;
}

// From another process: the next buffer it shared, which must be the size asked for.
void* allocate_imported(State& s, std::size_t bytes) {
  const Vmm& v = vmm();
  if (s.imports.empty()) throw SharedMemoryMismatch("the problem allocates more buffers than were shared with it");
  const SharedAllocation a = s.imports.front();
  s.imports.pop_front();
  const std::size_t want = mapped_size(bytes);
  if (want != a.bytes) {
    ::close(a.fd);
    throw SharedMemoryMismatch("a shared buffer has another size than the problem asks for");
  }
  CUmemGenericAllocationHandle h = 0;
  const CUresult r = v.import_fd(&h, reinterpret_cast<void*>(static_cast<std::uintptr_t>(a.fd)),
                                 CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  ::close(a.fd);
  check(r, "cuMemImportFromShareableHandle");
  unsigned char* base = nullptr;
  try {
    base = static_cast<unsigned char*>(map_here(h, a.bytes));
  } catch (...) {
    v.release(h);
    throw;
  }
  void* p = base + kGuardZoneBytes;
  s.mappings[p] = {h, a.bytes, base, bytes};
  return p;
}

}  // namespace

void* device_allocate(std::size_t bytes) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.role == MemoryRole::local) return allocate_local(s, bytes);
  if (s.role == MemoryRole::exporting) return allocate_exported(s, bytes);
  return allocate_imported(s, bytes);
}

void device_release(void* p) noexcept {
  if (!p) return;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  const auto it = s.mappings.find(p);
  if (it == s.mappings.end()) {
    if (const auto pool = s.local_pools.find(p); pool != s.local_pools.end()) {
      nvtxMemHeapUnregister(nvtx_domain(), pool->second);
      s.local_pools.erase(pool);
    }
    cudaFree(p);
    return;
  }
  // Unmapping must wait for work that may still use the memory.
  cudaDeviceSynchronize();
  const Vmm& v = vmm();
  const auto base = reinterpret_cast<CUdeviceptr>(it->second.base);
  v.unmap(base, it->second.size);
  v.unreserve(base, it->second.size);
  v.release(it->second.handle);
  s.mappings.erase(it);
}

bool guard_zones_intact(const void* data) {
  Mapping m;
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    const auto it = s.mappings.find(const_cast<void*>(data));
    if (it == s.mappings.end()) return true;  // cudaMalloc'd: memcheck's to watch
    m = it->second;
  }
  std::vector<unsigned char> zone(kGuardZoneBytes);
  CUDA_CHECK(cudaMemcpy(zone.data(), m.base, zone.size(), cudaMemcpyDeviceToHost));
  const auto intact = [&] {
    return std::all_of(zone.begin(), zone.end(), [](unsigned char b) { return b == kGuardZoneByte; });
  };
  if (!intact()) return false;
  zone.resize(m.size - kGuardZoneBytes - m.used);
  CUDA_CHECK(cudaMemcpy(zone.data(), m.base + kGuardZoneBytes + m.used, zone.size(), cudaMemcpyDeviceToHost));
  return intact();
}

}  // namespace memlabs

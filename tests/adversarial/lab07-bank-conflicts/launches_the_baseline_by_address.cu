// attack: transpose_kernel is a decoy that touches shared memory and stores zeros over all of `out`; then the
// lab's own naive transpose (the baseline, compiled into this program from driver.cu, in an anonymous namespace)
// is found by name in the program's symbol table and launched by address to write the right answer
// expect: step 1 fails: ncu (not_your_kernel)
// message: not in your kernel.cu
// lab07: bank conflicts. This is the file you edit.
#include <elf.h>
#include <link.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "lab.cuh"

namespace {

int first_object(dl_phdr_info* info, size_t, void* base) {
  *static_cast<ElfW(Addr)*>(base) = info->dlpi_addr;  // the first object is the program itself
  return 1;
}

// The address of the host-side handle of the driver's transpose_naive, read from /proc/self/exe's .symtab.
const void* baseline_kernel() {
  std::FILE* f = std::fopen("/proc/self/exe", "rb");
  if (!f) throw std::runtime_error("cannot read the program");
  std::vector<char> bytes;
  char chunk[1 << 16];
  for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;) bytes.insert(bytes.end(), chunk, chunk + n);
  std::fclose(f);
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(bytes.data());
  const auto* sh = reinterpret_cast<const Elf64_Shdr*>(bytes.data() + eh->e_shoff);
  for (int i = 0; i < eh->e_shnum; ++i) {
    if (sh[i].sh_type != SHT_SYMTAB) continue;
    const auto* syms = reinterpret_cast<const Elf64_Sym*>(bytes.data() + sh[i].sh_offset);
    const char* names = bytes.data() + sh[sh[i].sh_link].sh_offset;
    for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); ++k) {
      const char* name = names + syms[k].st_name;
      if (ELF64_ST_TYPE(syms[k].st_info) == STT_FUNC && std::strstr(name, "15transpose_naiveEPfPKfii") &&
          !std::strstr(name, "device_stub") && !std::strchr(name, '.')) {
        ElfW(Addr) base = 0;
        dl_iterate_phdr(first_object, &base);
        return reinterpret_cast<const void*>(base + syms[k].st_value);
      }
    }
  }
  throw std::runtime_error("transpose_naive is not in the symbol table");
}

}  // namespace

// Decoy: one shared load and a zero store per element.
__global__ void transpose_kernel(float* out, const float* in, int rows, int cols) {
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];
  tile[threadIdx.y][threadIdx.x] = 0.0f;
  __syncthreads();
  const float zero = tile[threadIdx.y][threadIdx.x];
  const int col = blockIdx.y * TILE_DIM + threadIdx.x, row = blockIdx.x * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (row + j < cols && col < rows) out[static_cast<size_t>(row + j) * rows + col] = zero;
}

void launch_transpose(float* out, const float* in, int rows, int cols, cudaStream_t stream) {
  const dim3 block(TILE_DIM, BLOCK_ROWS);
  const dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  transpose_kernel<<<grid, block, 0, stream>>>(out, in, rows, cols);
  // The baseline's own launch shape (driver.cu): 32 x 8 threads, one thread per column, looping over rows.
  static const void* naive = baseline_kernel();
  void* args[] = {&out, &in, &rows, &cols};
  if (cudaLaunchKernel(naive, grid, block, args, 0, stream) != cudaSuccess) throw std::runtime_error("launch failed");
}

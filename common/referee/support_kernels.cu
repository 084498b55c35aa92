// The small kernels common/'s host code launches: seeded inputs (random.cuh),
// an output's poison and canaries (output_buffer.cuh), the empty kernel of
// the server's nop request (serve.cuh) and the standalone run's marker
// (candidate_marker.hpp). They live in this one unit so that the
// headers hold no device code and common/'s .cpp units compile with the host
// compiler alone (no cudafe++ or cicc pass over their JSON and STL).
#include <algorithm>
#include <cstdint>

#include "lab/output_buffer.cuh"
#include "lab/random.cuh"
#include "serve.cuh"

namespace memlabs {
namespace {

unsigned blocks_for(std::size_t n) { return static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 65535)); }

template <class Word>
__global__ void fill_words_kernel(Word* p, std::size_t n, Word value) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = value;
}

__global__ void empty_kernel() {}

__global__ void fill_uniform_kernel(float* out, std::size_t n, std::uint64_t seed, float lo, float hi) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = uniform_at(seed, i, lo, hi);
}

template <class Word>
void launch_fill_words(Word* p, std::size_t n, Word value, cudaStream_t stream) {
  if (n == 0) return;
  fill_words_kernel<<<blocks_for(n), 256, 0, stream>>>(p, n, value);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

// Its name is kCandidateMarkerKernel (candidate_marker.hpp); extern "C" keeps it unmangled.
extern "C" __global__ void memlabs_candidate_begins() {}

namespace detail {
void fill_words(std::uint32_t* p, std::size_t n, std::uint32_t value, cudaStream_t stream) {
  launch_fill_words(p, n, value, stream);
}
void fill_words(std::uint64_t* p, std::size_t n, std::uint64_t value, cudaStream_t stream) {
  launch_fill_words(p, n, value, stream);
}
}  // namespace detail

void fill_uniform(float* device_out, std::size_t n, std::uint64_t seed, float lo, float hi, cudaStream_t stream) {
  if (n == 0) return;
  fill_uniform_kernel<<<blocks_for(n), 256, 0, stream>>>(device_out, n, seed, lo, hi);
  CUDA_CHECK_LAUNCH();
}

void launch_candidate_marker(cudaStream_t stream) {
  memlabs_candidate_begins<<<1, 1, 0, stream>>>();
  CUDA_CHECK_LAUNCH();
}

void launch_empty_kernel(cudaStream_t stream) {
  empty_kernel<<<1, 1, 0, stream>>>();
  CUDA_CHECK_LAUNCH();
}

}  // namespace memlabs

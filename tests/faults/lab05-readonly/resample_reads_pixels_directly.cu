// fault: the resample copies the pixel from global memory when the sizes match (a "fast path"), so the kernel still loads from global memory
// expect: step 3 fails: ptx
// message: resample_kernel PTX: still has ld.global
// lab05: the read-only data path and textures. This is the file you edit.
#include "lab.cuh"

// ---- Part 1: the no-alias promise ----

// One thread per output. The loop accumulates straight into out[i], the way
// code ported from the CPU often does. Whether that costs anything depends on
// what the compiler may assume about the three pointers.
// __restrict__: no two of these overlap, so a store to out[i] cannot change
// in[] or w[]; with const, the inputs are read-only for the whole kernel.
__global__ void accumulate_kernel(float* __restrict__ out, const float* __restrict__ in,
                                  const float* __restrict__ w, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = 0.0f;
  for (int k = 0; k < TAPS; ++k) out[i] += w[k] * in[i + k];
}

void launch_accumulate(float* out, const float* in, const float* w, int n, cudaStream_t stream) {
  const int threads = 256;
  accumulate_kernel<<<(n + threads - 1) / threads, threads, 0, stream>>>(out, in, w, n);
}

// ---- Part 2: hardware bilinear filtering ----

// One thread per output pixel, x along a row, so a warp writes 32 neighbouring floats.
__global__ void resample_kernel(float* out, int out_width, int out_height, cudaTextureObject_t image,
                                const float* pixels, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= out_width || y >= out_height) return;
  // Same size: every output pixel is an input pixel, nothing to filter.
  if (out_width == width && out_height == height) {
    out[static_cast<size_t>(y) * out_width + x] = pixels[static_cast<size_t>(y) * width + x];
    return;
  }
  // The output pixel's centre in input pixels (lab.cuh), and nothing more: with
  // linear filtering the texture unit itself moves the point by half a texel,
  // picks the four neighbours, clamps at the edges and blends them.
  const float u = (x + 0.5f) * (static_cast<float>(width) / out_width);
  const float v = (y + 0.5f) * (static_cast<float>(height) / out_height);
  out[static_cast<size_t>(y) * out_width + x] = tex2D<float>(image, u, v);
}

void create_resample_source(ResampleSource& src) {
  // A texture reads a cudaArray, which the driver lays out for 2D locality: copy
  // the image into one, once, rather than at every launch.
  const cudaChannelFormatDesc format = cudaCreateChannelDesc<float>();
  CUDA_CHECK(cudaMallocArray(&src.array, &format, src.width, src.height));
  const size_t row_bytes = static_cast<size_t>(src.width) * sizeof(float);
  CUDA_CHECK(cudaMemcpy2DToArray(src.array, 0, 0, src.pixels, row_bytes, row_bytes, src.height,
                                 cudaMemcpyDeviceToDevice));
  cudaResourceDesc resource{};
  resource.resType = cudaResourceTypeArray;
  resource.res.array.array = src.array;
  cudaTextureDesc sampling{};
  sampling.addressMode[0] = cudaAddressModeClamp;  // beyond the edge, the edge pixel repeats
  sampling.addressMode[1] = cudaAddressModeClamp;
  sampling.filterMode = cudaFilterModeLinear;      // bilinear, with 8-bit fractional weights
  sampling.readMode = cudaReadModeElementType;     // float texels come back as they are
  sampling.normalizedCoords = 0;                   // in texels: pixel i spans [i, i + 1)
  CUDA_CHECK(cudaCreateTextureObject(&src.texture, &resource, &sampling, nullptr));
}

void destroy_resample_source(ResampleSource& src) {
  CUDA_CHECK(cudaDestroyTextureObject(src.texture));
  CUDA_CHECK(cudaFreeArray(src.array));
  src.texture = 0;
  src.array = nullptr;
}

void launch_resample(float* out, int out_width, int out_height, const ResampleSource& src,
                     cudaStream_t stream) {
  const dim3 block(32, 8);
  const dim3 grid((out_width + block.x - 1) / block.x, (out_height + block.y - 1) / block.y);
  resample_kernel<<<grid, block, 0, stream>>>(out, out_width, out_height, src.texture, src.pixels, src.width,
                                              src.height);
}

// lab09: stencils with a halo. This is the file you edit.
#include <stdexcept>

#include "lab.cuh"

// The weights of the stencil about to run. Every thread of a warp reads the
// same weight at the same moment: a broadcast from the constant cache (lab04).
__constant__ float c_weights[MAX_WEIGHTS];

void set_weights(const float* weights, int count) {
  CUDA_CHECK(cudaMemcpyToSymbol(c_weights, weights, static_cast<size_t>(count) * sizeof(float)));
}

// ---- Step 1: a 1D stencil, neighbours straight from global memory ----

// One thread per output. R, the radius, is a compile-time constant: the
// launcher picks the instance, so loops over the taps can be unrolled.
template <int R>
__global__ void stencil_1d(float* __restrict__ out, const float* __restrict__ in, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float sum = 0.0f;
  if (i >= R && i + R < n) {  // all of the window inside: no tests (every warp but the two edge ones)
#pragma unroll
    for (int k = -R; k <= R; ++k) sum += c_weights[k + R] * in[i + k];
  } else {
#pragma unroll
    for (int k = -R; k <= R; ++k)
      if (i + k >= 0 && i + k < n) sum += c_weights[k + R] * in[i + k];
  }
  out[i] = sum;
}

void launch_stencil_1d(float* out, const float* in, int n, int radius, cudaStream_t stream) {
  const int threads = 256, blocks = (n + threads - 1) / threads;
  switch (radius) {
    case 1: stencil_1d<1><<<blocks, threads, 0, stream>>>(out, in, n); break;
    case 3: stencil_1d<3><<<blocks, threads, 0, stream>>>(out, in, n); break;
    case 8: stencil_1d<8><<<blocks, threads, 0, stream>>>(out, in, n); break;
    default: throw std::invalid_argument("launch_stencil_1d: radius must be 1, 3 or 8");
  }
}

// ---- Step 2: the 17 x 17 box filter ----

// Threads per block, and outputs per thread: each thread of box_2d computes
// BOX_ROWS outputs of one column, one above the other, so a block computes
// BOX_BLOCK_X x (BOX_BLOCK_Y * BOX_ROWS) outputs.
constexpr int BOX_BLOCK_X = 32, BOX_BLOCK_Y = 8, BOX_ROWS = 4;

// One thread per output, every one of the 289 taps its own load from global
// memory. L1 serves most of them, but each is still a load instruction.
__global__ void box_2d(float* __restrict__ out, const float* __restrict__ in, int width, int height) {
  // Each thread computes BOX_ROWS outputs of one column, one above the other.
  // The block's 32 x 32 outputs need a 48 x 48 tile: the outputs and a
  // BOX_RADIUS halo on every side, zeros where the tile leaves the image.
  constexpr int OUT_W = BOX_BLOCK_X, OUT_H = BOX_BLOCK_Y * BOX_ROWS;
  constexpr int TILE_W = OUT_W + 2 * BOX_RADIUS, TILE_H = OUT_H + 2 * BOX_RADIUS;
  __shared__ float tile[TILE_H][TILE_W];
  const int x0 = blockIdx.x * OUT_W - BOX_RADIUS, y0 = blockIdx.y * OUT_H - BOX_RADIUS;
  const int t = threadIdx.y * BOX_BLOCK_X + threadIdx.x;
  for (int e = t; e < TILE_W * TILE_H; e += BOX_BLOCK_X * BOX_BLOCK_Y) {
    const int ty = e / TILE_W, tx = e % TILE_W;
    const int gx = x0 + tx, gy = y0 + ty;
    tile[ty][tx] = (gx >= 0 && gx < width && gy >= 0 && gy < height) ? in[static_cast<size_t>(gy) * width + gx] : 0.0f;
  }
  __syncthreads();
  // Tile row j feeds the thread's output r through weight row j - r: one
  // shared load serves up to BOX_ROWS multiply-adds, kept in registers.
  float acc[BOX_ROWS] = {};
  const int row0 = threadIdx.y * BOX_ROWS;
#pragma unroll
  for (int j = 0; j < BOX_ROWS + 2 * BOX_RADIUS; ++j) {
#pragma unroll
    for (int dx = 0; dx < BOX_TAPS; ++dx) {
      const float v = tile[row0 + j][threadIdx.x + dx];
#pragma unroll
      for (int r = 0; r < BOX_ROWS; ++r)
        if (j - r >= 0 && j - r < BOX_TAPS) acc[r] += c_weights[(j - r) * BOX_TAPS + dx] * v;
    }
  }
  const int x = blockIdx.x * OUT_W + threadIdx.x;
#pragma unroll
  for (int r = 0; r < BOX_ROWS; ++r) {
    const int y = blockIdx.y * OUT_H + row0 + r;
    if (x < width && y < height) out[static_cast<size_t>(y) * width + x] = acc[r];
  }
}

void launch_box_2d(float* out, const float* in, int width, int height, cudaStream_t stream) {
  const dim3 block(BOX_BLOCK_X, BOX_BLOCK_Y);
  const int rows_per_block = BOX_BLOCK_Y * BOX_ROWS;  // the outputs a block computes, not its threads
  const dim3 grid((width + BOX_BLOCK_X - 1) / BOX_BLOCK_X, (height + rows_per_block - 1) / rows_per_block);
  box_2d<<<grid, block, 0, stream>>>(out, in, width, height);
}

// ---- Step 3: the star, radius 3 ----

constexpr int STAR_BLOCK_X = 32, STAR_BLOCK_Y = 8;

// The textbook version: the block's pixels and a halo go to a shared tile
// first, and the 13 taps come from there. Is that faster here?
__global__ void star_2d(float* __restrict__ out, const float* __restrict__ in, int width, int height) {
  // Measured (grader bench lab09, and the probe's star rows): plain loads beat
  // the tile here. An output needs only 13 values: the row taps lie in the
  // warp's own 128-byte lines, and the rows above and below are read by the
  // block's other warps and the blocks next to it, so L1 and L2 serve them.
  // The tile saved none of the DRAM traffic and added a second pass through
  // shared memory and a barrier that every warp of the block waits at.
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  const float* row = in + static_cast<size_t>(y) * width;
  float sum = 0.0f;
#pragma unroll
  for (int k = -STAR_RADIUS; k <= STAR_RADIUS; ++k) {
    if (x + k >= 0 && x + k < width) sum += c_weights[k + STAR_RADIUS] * row[x + k];
    if (y + k >= 0 && y + k < height)
      sum += c_weights[STAR_TAPS + k + STAR_RADIUS] * in[static_cast<size_t>(y + k) * width + x];
  }
  out[static_cast<size_t>(y) * width + x] = sum;
}

void launch_star_2d(float* out, const float* in, int width, int height, cudaStream_t stream) {
  const dim3 block(STAR_BLOCK_X, STAR_BLOCK_Y);
  const dim3 grid((width + STAR_BLOCK_X - 1) / STAR_BLOCK_X, (height + STAR_BLOCK_Y - 1) / STAR_BLOCK_Y);
  star_2d<<<grid, block, 0, stream>>>(out, in, width, height);
}

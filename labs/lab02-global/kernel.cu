// lab02: global memory. This is the file you edit.
#include "lab.cuh"

// ---- Part A: one vector add, two kinds of global memory ----

// One thread per element; the guard covers an n that is not a multiple of the block.
__global__ void vector_add_kernel(float* c, const float* a, const float* b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

// a, b and c are host pointers: the GPU cannot use them, so the data has to travel.
void vector_add_dynamic(float* c, const float* a, const float* b, int n) {
  // TODO(step 1): cudaMalloc d_a, d_b and d_c, copy a and b in, launch vector_add_kernel, copy d_c back into c, cudaFree all three (~14 lines)
}

// TODO(step 2): declare three module-scope __device__ float arrays of STATIC_CAPACITY elements: static_a, static_b, static_c (~3 lines)

// The static path's kernel takes no pointers: it names the __device__ arrays directly.
__global__ void vector_add_static_kernel(int n) {
  // TODO(step 2): for i < n, store static_a[i] + static_b[i] into static_c[i] (~2 lines)
}

void vector_add_static(float* c, const float* a, const float* b, int n) {
  // TODO(step 2): cudaMemcpyToSymbol a and b into static_a and static_b, launch vector_add_static_kernel, cudaMemcpyFromSymbol static_c into c (~6 lines)
}

// ---- Part B: which thread gets which element ----

// Element (row, col) of a row-major matrix lives at row * cols + col, so neighbours in a
// row are neighbours in memory and neighbours in a column are `cols` floats apart.
__global__ void scale_shift_kernel(float* out, const float* in, const float* row_scale,
                                   const float* col_shift, int rows, int cols) {
  // TODO(step 3): map threadIdx.x to col and threadIdx.y to row, so a warp covers 32 neighbouring floats of one row (~2 lines)
  // threadIdx.x walks down a column: lane k + 1 touches the float `cols` after lane k's.
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const int col = blockIdx.y * blockDim.y + threadIdx.y;

  if (row < rows && col < cols) {
    const size_t idx = static_cast<size_t>(row) * cols + col;
    out[idx] = in[idx] * row_scale[row] + col_shift[col];
  }
}

void launch_scale_shift(float* out, const float* in, const float* row_scale, const float* col_shift,
                        int rows, int cols, cudaStream_t stream) {
  const dim3 block(32, 8);
  // TODO(step 3): size the grid for the new mapping: x counts blocks along the columns, y along the rows (~1 line)
  const dim3 grid((rows + block.x - 1) / block.x, (cols + block.y - 1) / block.y);

  scale_shift_kernel<<<grid, block, 0, stream>>>(out, in, row_scale, col_shift, rows, cols);
}

// ---- Part C: which layout a warp reads ----

// The drift reads two of a particle's eight fields. Over the structure of arrays, a
// warp's 32 loads of x are 32 neighbouring floats of one array.
__global__ void drift_kernel(float* out, Particles p, int n, float dt) {
  // TODO(step 4): for i < n, store p.x[i] + p.vx[i] * dt into out[i], with i the thread's global index (~2 lines)
}

void launch_drift(float* out, Particles p, int n, float dt, cudaStream_t stream) {
  const int block = 256;
  drift_kernel<<<(n + block - 1) / block, block, 0, stream>>>(out, p, n, dt);
}
